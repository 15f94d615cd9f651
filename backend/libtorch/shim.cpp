//go:build libtorch && cgo

// The C ABI of shim.h over ATen. Every entry point runs its body inside
// guarded(), which catches every C++ exception and turns it into an
// lt_status, so that no exception unwinds into Go. Where ATen's semantics
// differ from Ember's (package ir's docs), the entry points compose ATen
// ops so that results are Ember's: F16 and BF16 arithmetic runs in float32
// and rounds once; float-to-integer casts truncate and saturate (NaN gives
// 0); F64 to F16/BF16 rounds once; integer division guards INT_MIN / -1;
// shifts outside [0, bits) give 0 or the sign fill; Max and Min order
// signed zeros as Go's max and min. Float32 products run on oneDNN's
// sgemm and Adam updates in one pass; ATen's CPU allocations go through
// the caching allocator of shim_alloc.cpp.

#include "shim.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <dlfcn.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

struct lt_tensor {
	at::Tensor t;
};

struct lt_gen {
	at::Generator gen;
	std::mutex mu; // serializes whole random ops (resampling included)
};

namespace {

using at::Tensor;
using c10::ScalarType;

lt_status ok() { return lt_status{LT_OK, nullptr}; }

lt_status fail(int code, const char *msg) {
	size_t n = std::strlen(msg);
	char *m = static_cast<char *>(std::malloc(n + 1));
	if (m != nullptr) {
		std::memcpy(m, msg, n + 1);
	}
	return lt_status{code, m};
}

bool looks_oom(const char *w) {
	std::string s(w);
	return s.find("can't allocate memory") != std::string::npos ||
	       s.find("not enough memory") != std::string::npos ||
	       s.find("out of memory") != std::string::npos;
}

// guarded runs f in inference mode (no autograd bookkeeping) and turns any
// exception into a status.
template <class F>
lt_status guarded(F &&f) {
	try {
		c10::InferenceMode mode;
		f();
		return ok();
	} catch (const c10::OutOfMemoryError &e) {
		return fail(LT_OOM, e.what_without_backtrace());
	} catch (const c10::Error &e) {
		const char *w = e.what_without_backtrace();
		return fail(looks_oom(w) ? LT_OOM : LT_ERROR, w);
	} catch (const std::bad_alloc &) {
		return fail(LT_OOM, "host allocation failed (std::bad_alloc)");
	} catch (const std::exception &e) {
		return fail(LT_ERROR, e.what());
	} catch (...) {
		return fail(LT_ERROR, "unknown C++ exception");
	}
}

[[noreturn]] void bad(const std::string &msg) { throw std::invalid_argument(msg); }

const Tensor &get(const lt_tensor *h) {
	if (h == nullptr) {
		bad("nil tensor handle");
	}
	return h->t;
}

ScalarType scalar_of(int dt) {
	switch (dt) {
	case LT_F64:
		return at::kDouble;
	case LT_F32:
	case LT_FLEX32:
		return at::kFloat;
	case LT_F16:
		return at::kHalf;
	case LT_BF16:
		return at::kBFloat16;
	case LT_I64:
		return at::kLong;
	case LT_I32:
		return at::kInt;
	case LT_I16:
		return at::kShort;
	case LT_I8:
		return at::kChar;
	case LT_U8:
		return at::kByte;
	case LT_BOOL:
		return at::kBool;
	}
	bad("dtype " + std::to_string(dt) + " has no ATen scalar type in libtorch " TORCH_VERSION);
}

int code_of(ScalarType s) {
	switch (s) {
	case at::kDouble:
		return LT_F64;
	case at::kFloat:
		return LT_F32;
	case at::kHalf:
		return LT_F16;
	case at::kBFloat16:
		return LT_BF16;
	case at::kLong:
		return LT_I64;
	case at::kInt:
		return LT_I32;
	case at::kShort:
		return LT_I16;
	case at::kChar:
		return LT_I8;
	case at::kByte:
		return LT_U8;
	case at::kBool:
		return LT_BOOL;
	default:
		return 0;
	}
}

c10::Device device_of(lt_device d) {
	switch (d.type) {
	case LT_CPU:
		return c10::Device(c10::kCPU);
	case LT_CUDA:
		return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(d.index));
	case LT_MPS:
		return c10::Device(c10::kMPS, static_cast<c10::DeviceIndex>(d.index));
	case LT_VULKAN:
		return c10::Device(c10::kVulkan, static_cast<c10::DeviceIndex>(d.index));
	}
	bad("unknown device type " + std::to_string(d.type));
}

at::TensorOptions opts(lt_device d, ScalarType s) { return at::TensorOptions().dtype(s).device(device_of(d)); }

std::vector<int64_t> dims(const int64_t *p, int n) {
	if (n < 0) {
		bad("negative rank");
	}
	return std::vector<int64_t>(p, p + n);
}

// put hands r to Go with the bytes of storage it does not share with ins.
void put(lt_out *out, Tensor r, std::initializer_list<const Tensor *> ins) {
	int64_t bytes = 0;
	if (r.defined() && r.has_storage()) {
		bool alias = false;
		for (const Tensor *t : ins) {
			if (t->defined() && t->has_storage() && t->is_alias_of(r)) {
				alias = true;
			}
		}
		if (!alias) {
			bytes = static_cast<int64_t>(r.storage().nbytes());
		}
	}
	out->t = new lt_tensor{std::move(r)};
	out->bytes = bytes;
}

bool is_half(ScalarType s) { return s == at::kHalf || s == at::kBFloat16; }
bool is_floating(ScalarType s) { return s == at::kDouble || s == at::kFloat || is_half(s); }
bool is_integer(ScalarType s) { return c10::isIntegralType(s, /*includeBool=*/false); }

// widen returns F16/BF16 tensors as float32 (exact), others unchanged.
Tensor widen(const Tensor &x) { return is_half(x.scalar_type()) ? x.to(at::kFloat) : x; }

// narrow rounds a float32 result back to st when st is F16/BF16 (nearest
// even, once).
Tensor narrow(const Tensor &r, ScalarType st) {
	return is_half(st) && r.scalar_type() == at::kFloat ? r.to(st) : r;
}

Tensor scalar_like(const Tensor &x, double v) { return at::full({}, v, x.options()); }

// round_odd rounds d to float32 with round-to-odd: exact values stay, an
// inexact one is truncated toward zero and its last bit set. Rounding the
// result to F16 or BF16 (nearest even) then rounds d correctly, once.
inline float round_odd(double d) {
	float f = static_cast<float>(d);
	if (static_cast<double>(f) == d || d != d) {
		return f;
	}
	uint32_t u;
	std::memcpy(&u, &f, 4);
	if (std::fabs(static_cast<double>(f)) > std::fabs(d)) {
		u--; // one step toward zero (Inf becomes the largest float)
	}
	u |= 1;
	std::memcpy(&f, &u, 4);
	return f;
}

// double_to_half converts a float64 tensor to F16/BF16, rounding once.
Tensor double_to_half(const Tensor &x, ScalarType to) {
	Tensor c = x.to(at::kCPU).contiguous();
	Tensor f = at::empty(c.sizes(), c.options().dtype(at::kFloat));
	const double *s = c.data_ptr<double>();
	float *d = f.data_ptr<float>();
	at::parallel_for(0, c.numel(), 1 << 15, [&](int64_t b, int64_t e) {
		for (int64_t i = b; i < e; i++) {
			d[i] = round_odd(s[i]);
		}
	});
	return f.to(to).to(x.device());
}

// int_limits returns the smallest and largest value of integer type s as
// float64 (the largest int64 as 2^63, which comparisons treat as the
// first value above the range).
void int_limits(ScalarType s, double &lo, double &hi) {
	switch (s) {
	case at::kLong:
		lo = -9223372036854775808.0;
		hi = 9223372036854775808.0;
		return;
	case at::kInt:
		lo = std::numeric_limits<int32_t>::min();
		hi = std::numeric_limits<int32_t>::max();
		return;
	case at::kShort:
		lo = std::numeric_limits<int16_t>::min();
		hi = std::numeric_limits<int16_t>::max();
		return;
	case at::kChar:
		lo = std::numeric_limits<int8_t>::min();
		hi = std::numeric_limits<int8_t>::max();
		return;
	case at::kByte:
		lo = 0;
		hi = 255;
		return;
	default:
		bad("not an integer type");
	}
}

// float_to_int truncates toward zero and saturates at the range of to;
// NaN gives 0 (ATen's static_cast leaves these undefined).
Tensor float_to_int(const Tensor &x, ScalarType to) {
	double lo, hi;
	int_limits(to, lo, hi);
	Tensor d = at::trunc(x.to(at::kDouble));
	Tensor over = d.ge(hi);
	Tensor under = d.le(lo);
	Tensor out = at::logical_or(at::logical_or(over, under), at::isnan(d));
	Tensor r = at::where(out, scalar_like(d, 0), d).to(to);
	Tensor maxv, minv;
	if (to == at::kLong) {
		maxv = at::full({}, std::numeric_limits<int64_t>::max(), r.options());
		minv = at::full({}, std::numeric_limits<int64_t>::min(), r.options());
	} else {
		maxv = at::full({}, static_cast<int64_t>(hi), r.options());
		minv = at::full({}, static_cast<int64_t>(lo), r.options());
	}
	return at::where(over, maxv, at::where(under, minv, r));
}

// cast converts x to to as Ember's Cast does.
Tensor cast(const Tensor &x0, ScalarType to) {
	Tensor x = x0;
	ScalarType from = x.scalar_type();
	if (from == to) {
		return x;
	}
	if (is_half(from)) {
		x = x.to(at::kFloat);
		from = at::kFloat;
		if (to == at::kFloat) {
			return x;
		}
	}
	if (is_half(to)) {
		if (from == at::kFloat) {
			return x.to(to);
		}
		return double_to_half(x.to(at::kDouble), to);
	}
	if (is_integer(to) && is_floating(from)) {
		return float_to_int(x, to);
	}
	return x.to(to);
}

Tensor unary(int op, const Tensor &x0) {
	ScalarType st = x0.scalar_type();
	if (st == at::kBool) {
		if (op == LT_NOT) {
			return at::logical_not(x0);
		}
		bad("unary op " + std::to_string(op) + " is not defined on Bool");
	}
	if (is_integer(st)) {
		switch (op) {
		case LT_NEG:
			return at::neg(x0);
		case LT_ABS:
			return at::abs(x0);
		case LT_SIGN:
			return at::sign(x0);
		case LT_FLOOR:
		case LT_CEIL:
		case LT_ROUND:
			return x0;
		case LT_NOT:
			return at::bitwise_not(x0);
		}
		bad("unary op " + std::to_string(op) + " needs a float tensor");
	}
	Tensor x = widen(x0);
	Tensor r;
	switch (op) {
	case LT_NEG:
		r = at::neg(x);
		break;
	case LT_ABS:
		r = at::abs(x);
		break;
	case LT_SIGN:
		r = at::sign(x);
		break;
	case LT_EXP:
		r = at::exp(x);
		break;
	case LT_LOG:
		r = at::log(x);
		break;
	case LT_LOG1P:
		r = at::log1p(x);
		break;
	case LT_EXPM1:
		r = at::expm1(x);
		break;
	case LT_SQRT:
		r = at::sqrt(x);
		break;
	case LT_RSQRT:
		r = at::rsqrt(x);
		break;
	case LT_RECIP:
		r = at::reciprocal(x);
		break;
	case LT_SIN:
		r = at::sin(x);
		break;
	case LT_COS:
		r = at::cos(x);
		break;
	case LT_TANH:
		r = at::tanh(x);
		break;
	case LT_SIGMOID:
		r = at::sigmoid(x);
		break;
	case LT_ERF:
		r = at::erf(x);
		break;
	case LT_FLOOR:
		r = at::floor(x);
		break;
	case LT_CEIL:
		r = at::ceil(x);
		break;
	case LT_ROUND:
		r = at::round(x); // nearbyint: half to even
		break;
	default:
		bad("unary op " + std::to_string(op) + " is not defined on floats");
	}
	return narrow(r, st);
}

// int_div is integer Div (truncating), FloorDiv, Rem (dividend's sign) or
// Mod (divisor's sign). x86's idiv traps on INT_MIN / -1, which ATen
// computes as it is: for 32- and 64-bit operands a divisor of -1 is
// replaced by 1 and the result fixed up (the quotient is -a, wrapping;
// the remainder 0), as Go defines them.
Tensor int_div(int op, const Tensor &a, const Tensor &b) {
	if (b.eq(0).any().item<bool>()) {
		throw std::domain_error("integer division by zero");
	}
	ScalarType st = a.scalar_type();
	Tensor m;
	bool fix = false;
	Tensor d = b;
	if (st == at::kInt || st == at::kLong) {
		m = b.eq(-1);
		fix = m.any().item<bool>();
		if (fix) {
			d = at::where(m, at::ones({}, b.options()), b);
		}
	}
	Tensor r;
	switch (op) {
	case LT_DIV:
		r = at::div(a, d, "trunc");
		break;
	case LT_FLOORDIV:
		r = at::div(a, d, "floor");
		break;
	case LT_REM:
		r = at::fmod(a, d);
		break;
	default:
		r = at::remainder(a, d);
		break;
	}
	if (fix) {
		if (op == LT_DIV || op == LT_FLOORDIV) {
			r = at::where(m, at::neg(a), r);
		} else {
			r = at::where(m, at::zeros({}, r.options()), r);
		}
	}
	return r;
}

// shift is Shl or Shr with Ember's out-of-range amounts: outside
// [0, bits) Shl gives 0 and Shr the sign fill (C++ leaves them undefined).
Tensor shift(int op, const Tensor &a, const Tensor &b) {
	ScalarType st = a.scalar_type();
	int64_t bits = static_cast<int64_t>(c10::elementSize(st)) * 8;
	Tensor valid = at::logical_and(b.ge(0), b.lt(bits));
	Tensor zero = at::zeros({}, b.options());
	Tensor s = at::where(valid, b, zero);
	if (op == LT_SHL) {
		return at::where(valid, at::bitwise_left_shift(a, s), zero);
	}
	Tensor r = at::bitwise_right_shift(a, s);
	Tensor fill = zero;
	if (st != at::kByte) {
		fill = at::where(a.lt(0), at::full({}, -1, a.options()), zero);
	}
	return at::where(valid, r, fill);
}

// go_extremum is Go's max (or min) of floats: NaN propagates and -0 is
// below +0. ATen's maximum and minimum return either operand for equal
// values, so a pair of zeros is fixed up: a + b is Go's max of two zeros,
// -((-a) - b) Go's min. Against a +0 scalar (ReLU's max(x, 0)) the fix is
// one add of +0, which turns -0 into +0 and changes nothing else.
Tensor go_extremum(bool is_max, const Tensor &a, const Tensor &b) {
	Tensor r = is_max ? at::maximum(a, b) : at::minimum(a, b);
	if (is_max && b.numel() == 1 && b.dim() <= a.dim() && b.is_cpu()) {
		double v = b.item<double>();
		if (v == 0 && !std::signbit(v)) {
			return r.add_(0); // r is new
		}
	}
	Tensor zeros = at::logical_and(a.eq(0), b.eq(0));
	Tensor fix = is_max ? at::add(a, b) : at::neg(at::sub(at::neg(a), b));
	return at::where(zeros, fix, r);
}

Tensor binary(int op, const Tensor &a0, const Tensor &b0) {
	ScalarType st = a0.scalar_type();
	if (b0.scalar_type() != st) {
		bad("operand dtypes differ");
	}
	if (is_half(st)) {
		return narrow(binary(op, a0.to(at::kFloat), b0.to(at::kFloat)), st);
	}
	const Tensor &a = a0, &b = b0;
	bool integral = is_integer(st);
	bool floating = is_floating(st);
	switch (op) {
	case LT_ADD:
		return at::add(a, b);
	case LT_SUB:
		return at::sub(a, b);
	case LT_MUL:
		return at::mul(a, b);
	case LT_DIV:
		return integral ? int_div(op, a, b) : at::div(a, b);
	case LT_FLOORDIV:
		return integral ? int_div(op, a, b) : at::div(a, b, "floor");
	case LT_REM:
		return integral ? int_div(op, a, b) : at::fmod(a, b);
	case LT_MOD:
		return integral ? int_div(op, a, b) : at::remainder(a, b);
	case LT_POW:
		return at::pow(a, b);
	case LT_MAX:
	case LT_MIN:
		return floating ? go_extremum(op == LT_MAX, a, b) : (op == LT_MAX ? at::maximum(a, b) : at::minimum(a, b));
	case LT_ATAN2:
		return at::atan2(a, b);
	case LT_EQ:
		return at::eq(a, b);
	case LT_NE:
		return at::ne(a, b);
	case LT_LT:
		return at::lt(a, b);
	case LT_LE:
		return at::le(a, b);
	case LT_GT:
		return at::gt(a, b);
	case LT_GE:
		return at::ge(a, b);
	case LT_AND:
		return at::bitwise_and(a, b);
	case LT_OR:
		return at::bitwise_or(a, b);
	case LT_XOR:
		return at::bitwise_xor(a, b);
	case LT_SHL:
	case LT_SHR:
		if (!integral) {
			bad("shifts need integer operands");
		}
		return shift(op, a, b);
	}
	bad("unknown binary op " + std::to_string(op));
}

Tensor reduce(int op, const Tensor &x0, int64_t axis, bool keep) {
	ScalarType st = x0.scalar_type();
	switch (op) {
	case LT_SUM:
	case LT_PROD: {
		if (st == at::kBool) {
			bad("cannot sum or multiply Bool");
		}
		if (is_floating(st) && st != at::kDouble) {
			// Float32 (and widened F16/BF16) accumulate in float64.
			Tensor x = widen(x0);
			Tensor r = op == LT_SUM ? at::sum(x, {axis}, keep, at::kDouble) : at::prod(x, axis, keep, at::kDouble);
			return narrow(r.to(at::kFloat), st);
		}
		return op == LT_SUM ? at::sum(x0, {axis}, keep, st) : at::prod(x0, axis, keep, st);
	}
	case LT_RMAX:
		return narrow(at::amax(widen(x0), {axis}, keep), st);
	case LT_RMIN:
		return narrow(at::amin(widen(x0), {axis}, keep), st);
	case LT_ARGMAX:
	case LT_ARGMIN: {
		Tensor x = st == at::kBool ? x0.to(at::kByte) : widen(x0);
		return op == LT_ARGMAX ? at::argmax(x, axis, keep) : at::argmin(x, axis, keep);
	}
	}
	bad("unknown reduction " + std::to_string(op));
}

// ---- matmul ----

typedef int (*sgemm_fn)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
			int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

// oneDNN's row-major sgemm, which libtorch_cpu loads (far faster than the
// generic BLAS some libtorch builds link), found at run time.
sgemm_fn find_sgemm() {
	static sgemm_fn fn = reinterpret_cast<sgemm_fn>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
	return fn;
}

// gemm_layout reports whether the last two axes of x ([rows, cols]) form a
// matrix sgemm reads in place: 'N' (row-major, leading dimension ld) or
// 'T' (column-major); 0 when neither.
char gemm_layout(const Tensor &x, int64_t &ld) {
	int64_t r = x.dim();
	int64_t rows = x.size(r - 2), cols = x.size(r - 1);
	int64_t s0 = x.stride(r - 2), s1 = x.stride(r - 1);
	if (cols <= 1) {
		s1 = 1;
	}
	if (rows <= 1) {
		s0 = std::max<int64_t>(cols, 1);
	}
	if (s1 == 1 && s0 >= std::max<int64_t>(cols, 1)) {
		ld = s0;
		return 'N';
	}
	s0 = x.stride(r - 2);
	s1 = x.stride(r - 1);
	if (rows <= 1) {
		s0 = 1;
	}
	if (cols <= 1) {
		s1 = std::max<int64_t>(rows, 1);
	}
	if (s0 == 1 && s1 >= std::max<int64_t>(rows, 1)) {
		ld = s1;
		return 'T';
	}
	return 0;
}

// matmul_f32 multiplies float32 CPU tensors [..., m, k] × [..., k, n]
// (batch axes broadcast) with one sgemm per matrix of the batch.
Tensor matmul_f32(const Tensor &a0, const Tensor &b0) {
	sgemm_fn sgemm = find_sgemm();
	if (sgemm == nullptr || !a0.is_cpu() || !b0.is_cpu()) {
		return at::matmul(a0, b0);
	}
	Tensor a = a0, b = b0;
	int64_t lda = 0, ldb = 0;
	char ta = gemm_layout(a, lda);
	if (ta == 0) {
		a = a.contiguous();
		ta = gemm_layout(a, lda);
	}
	char tb = gemm_layout(b, ldb);
	if (tb == 0) {
		b = b.contiguous();
		tb = gemm_layout(b, ldb);
	}
	int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
	std::vector<int64_t> batch = at::infer_size(a.sizes().slice(0, a.dim() - 2), b.sizes().slice(0, b.dim() - 2));
	std::vector<int64_t> as(batch), bs(batch), cs(batch);
	as.push_back(m);
	as.push_back(k);
	bs.push_back(k);
	bs.push_back(n);
	cs.push_back(m);
	cs.push_back(n);
	Tensor A = a.expand(as), B = b.expand(bs);
	Tensor C = at::empty(cs, a.options());
	int64_t count = 1;
	for (int64_t s : batch) {
		count *= s;
	}
	if (C.numel() == 0) {
		return C;
	}
	if (k == 0) {
		return C.zero_();
	}
	const float *pa = A.data_ptr<float>();
	const float *pb = B.data_ptr<float>();
	float *pc = C.data_ptr<float>();
	int64_t nb = static_cast<int64_t>(batch.size());
	std::vector<int64_t> idx(nb, 0);
	for (int64_t i = 0; i < count; i++) {
		int64_t oa = 0, ob = 0;
		for (int64_t d = 0; d < nb; d++) {
			oa += idx[d] * A.stride(d);
			ob += idx[d] * B.stride(d);
		}
		int st = sgemm(ta, tb, m, n, k, 1.0f, pa + oa, lda, pb + ob, ldb, 0.0f, pc + i * m * n, n);
		if (st != 0) {
			throw std::runtime_error("dnnl_sgemm failed with status " + std::to_string(st));
		}
		for (int64_t d = nb - 1; d >= 0; d--) {
			if (++idx[d] < batch[d]) {
				break;
			}
			idx[d] = 0;
		}
	}
	return C;
}

Tensor ember_matmul(const Tensor &a, const Tensor &b) {
	ScalarType st = a.scalar_type();
	if (st == at::kFloat || is_half(st)) {
		return narrow(matmul_f32(widen(a), widen(b)), st);
	}
	return at::matmul(a, b);
}

at::IntArrayRef pair(const int64_t *p) { return at::IntArrayRef(p, 2); }

at::Scalar value_for(ScalarType st, double fval, int64_t ival) {
	if (st == at::kBool) {
		return at::Scalar(fval != 0);
	}
	if (is_integer(st)) {
		return at::Scalar(ival);
	}
	return at::Scalar(fval);
}

// random_values draws a tensor of shape and st from a distribution with
// g, on the host, in float64, converted as Cast converts.
Tensor random_values(lt_gen *g, const std::vector<int64_t> &shape, ScalarType st, int dist, double a, double b) {
	at::Tensor u = at::empty(shape, at::TensorOptions().dtype(at::kDouble));
	switch (dist) {
	case LT_DIST_NORMAL:
		u.normal_(a, b, g->gen);
		return cast(u, st);
	case LT_DIST_BERNOULLI:
		u.bernoulli_(a, g->gen);
		return cast(u, st);
	case LT_DIST_DEFAULT:
	case LT_DIST_UNIFORM:
		break;
	default:
		bad("unknown distribution " + std::to_string(dist));
	}
	if (st == at::kBool) {
		u.bernoulli_(0.5, g->gen);
		return cast(u, st);
	}
	double lo = 0, hi = 1;
	if (dist == LT_DIST_UNIFORM) {
		lo = a;
		hi = b;
	}
	bool integral = is_integer(st);
	u.uniform_(lo, hi, g->gen);
	if (integral) {
		u = at::floor(u); // integer samples are floors, integers in [lo, hi)
	}
	if (hi > lo) {
		// Resample the draws that reach hi once rounded to the dtype.
		for (int tries = 0; tries < 64; tries++) {
			Tensor high = cast(u, st).to(at::kDouble).ge(hi);
			if (!high.any().item<bool>()) {
				break;
			}
			Tensor v = at::empty(shape, u.options());
			v.uniform_(lo, hi, g->gen);
			if (integral) {
				v = at::floor(v);
			}
			u = at::where(high, v, u);
		}
	}
	return cast(u, st);
}

// adam_lanes is one Adam update in a single pass over contiguous arrays,
// with the decomposition's operations in its order, each rounded to T:
// contraction into fused multiply-adds is off for it.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
template <typename T, int F>
void adam_lanes(const T *th0, const T *g0, const T *m0, const T *v0, T *th, T *m, T *v, int64_t lo, int64_t hi,
		const T *k) {
	const T c0 = k[0], b1 = k[1], ob1 = k[2], b2 = k[3], ob2 = k[4], sbc2 = k[5], eps = k[6], lr = k[7];
	for (int64_t i = lo; i < hi; i++) {
		T t = th0[i], g = g0[i];
		if (F == 1) {
			t = t * c0;
		} else if (F == 2) {
			g = g + t * c0;
		}
		T mi = m0[i] * b1 + g * ob1;
		T vi = v0[i] * b2 + (g * g) * ob2;
		T d = std::sqrt(vi) / sbc2 + eps;
		th[i] = t - (mi / d) * lr;
		m[i] = mi;
		v[i] = vi;
	}
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#if defined(__SSE2__)
// adam_lanes_f32 is adam_lanes for float32 four lanes at a time: the SSE
// operations round as the scalar ones do (IEEE 754, no fused
// multiply-adds), so the results are the same bits.
template <int F>
void adam_lanes_f32(const float *th0, const float *g0, const float *m0, const float *v0, float *th, float *m,
		    float *v, int64_t lo, int64_t hi, const float *k) {
	const __m128 c0 = _mm_set1_ps(k[0]), b1 = _mm_set1_ps(k[1]), ob1 = _mm_set1_ps(k[2]), b2 = _mm_set1_ps(k[3]),
		     ob2 = _mm_set1_ps(k[4]), sbc2 = _mm_set1_ps(k[5]), eps = _mm_set1_ps(k[6]), lr = _mm_set1_ps(k[7]);
	int64_t i = lo;
	for (; i + 4 <= hi; i += 4) {
		__m128 t = _mm_loadu_ps(th0 + i), g = _mm_loadu_ps(g0 + i);
		if (F == 1) {
			t = _mm_mul_ps(t, c0);
		} else if (F == 2) {
			g = _mm_add_ps(g, _mm_mul_ps(t, c0));
		}
		__m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m0 + i), b1), _mm_mul_ps(g, ob1));
		__m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v0 + i), b2), _mm_mul_ps(_mm_mul_ps(g, g), ob2));
		__m128 d = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), sbc2), eps);
		_mm_storeu_ps(th + i, _mm_sub_ps(t, _mm_mul_ps(_mm_div_ps(mi, d), lr)));
		_mm_storeu_ps(m + i, mi);
		_mm_storeu_ps(v + i, vi);
	}
	adam_lanes<float, F>(th0, g0, m0, v0, th, m, v, i, hi, k);
}
#endif

// adam_block runs the update on lanes [lo, hi) with flags' variant.
template <typename T, int F>
void adam_block(const T *th0, const T *g0, const T *m0, const T *v0, T *th, T *m, T *v, int64_t lo, int64_t hi,
		const T *k) {
#if defined(__SSE2__)
	if constexpr (std::is_same_v<T, float>) {
		adam_lanes_f32<F>(th0, g0, m0, v0, th, m, v, lo, hi, k);
		return;
	}
#endif
	adam_lanes<T, F>(th0, g0, m0, v0, th, m, v, lo, hi, k);
}

template <typename T>
void adam_loop(const T *th0, const T *g0, const T *m0, const T *v0, T *th, T *m, T *v, int64_t n, const double *h,
	       int flags) {
	T k[8];
	for (int i = 0; i < 8; i++) {
		k[i] = T(h[i]);
	}
	at::parallel_for(0, n, 1 << 15, [&](int64_t lo, int64_t hi) {
		switch (flags & 3) {
		case 1:
			adam_block<T, 1>(th0, g0, m0, v0, th, m, v, lo, hi, k);
			break;
		case 2:
			adam_block<T, 2>(th0, g0, m0, v0, th, m, v, lo, hi, k);
			break;
		default:
			adam_block<T, 0>(th0, g0, m0, v0, th, m, v, lo, hi, k);
		}
	});
}

} // namespace

extern "C" {

void lt_free_msg(char *msg) { std::free(msg); }

void lt_free(lt_tensor *t) { delete t; }

const char *lt_version(void) { return TORCH_VERSION; }

int lt_has_cuda(void) {
	try {
		return at::hasCUDA() ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

int lt_cuda_count(void) {
	try {
		return at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0;
	} catch (...) {
		return 0;
	}
}

int lt_has_mps(void) {
	try {
		return at::hasMPS() ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

int lt_has_vulkan(void) {
	try {
		return at::is_vulkan_available() ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

int lt_has_sgemm(void) { return find_sgemm() != nullptr ? 1 : 0; }

int lt_num_threads(void) {
	try {
		return at::get_num_threads();
	} catch (...) {
		return 1;
	}
}

void lt_set_num_threads(int n) {
	try {
		at::set_num_threads(n);
	} catch (...) {
	}
}

lt_status lt_info(lt_tensor *t, int *dtype, int *rank, int64_t *sizes, int max) {
	return guarded([&] {
		const Tensor &x = get(t);
		*dtype = code_of(x.scalar_type());
		*rank = static_cast<int>(x.dim());
		for (int i = 0; i < *rank && i < max; i++) {
			sizes[i] = x.size(i);
		}
	});
}

lt_status lt_alias(lt_tensor *t, lt_out *out) {
	return guarded([&] {
		const Tensor &x = get(t);
		put(out, x, {&x});
	});
}

lt_status lt_from_data(lt_device dev, int dtype, const int64_t *shape, int rank, const void *bytes, size_t nbytes,
		       lt_out *out) {
	return guarded([&] {
		ScalarType st = scalar_of(dtype);
		ScalarType read = st == at::kBool ? at::kByte : st;
		Tensor t = at::empty(dims(shape, rank), at::TensorOptions().dtype(read));
		if (t.nbytes() != nbytes) {
			bad("data holds " + std::to_string(nbytes) + " bytes, the shape needs " + std::to_string(t.nbytes()));
		}
		if (nbytes > 0) {
			std::memcpy(t.data_ptr(), bytes, nbytes);
		}
		if (st == at::kBool) {
			t = t.ne(0);
		}
		if (dev.type != LT_CPU) {
			t = t.to(device_of(dev));
		}
		put(out, t, {});
	});
}

lt_status lt_to_data(lt_tensor *t, void *dst, size_t nbytes) {
	return guarded([&] {
		Tensor c = get(t).to(at::kCPU).contiguous();
		if (c.nbytes() != nbytes) {
			bad("tensor holds " + std::to_string(c.nbytes()) + " bytes, the buffer " + std::to_string(nbytes));
		}
		if (nbytes > 0) {
			std::memcpy(dst, c.data_ptr(), nbytes);
		}
	});
}

lt_status lt_gen_new(uint64_t seed, lt_gen **out) {
	return guarded([&] { *out = new lt_gen{at::make_generator<at::CPUGeneratorImpl>(seed), {}}; });
}

void lt_gen_seed(lt_gen *g, uint64_t seed) {
	std::lock_guard<std::mutex> l(g->mu);
	std::lock_guard<std::mutex> gl(g->gen.mutex());
	g->gen.set_current_seed(seed);
}

void lt_gen_free(lt_gen *g) { delete g; }

lt_status lt_full(lt_device dev, int dtype, const int64_t *shape, int rank, double fval, int64_t ival, lt_out *out) {
	return guarded([&] {
		ScalarType st = scalar_of(dtype);
		put(out, at::full(dims(shape, rank), value_for(st, fval, ival), opts(dev, st)), {});
	});
}

lt_status lt_arange_int(lt_device dev, int dtype, int64_t n, int64_t start, int64_t step, lt_out *out) {
	return guarded([&] {
		Tensor i = at::arange(n, at::TensorOptions().dtype(at::kLong));
		Tensor v = at::add(at::mul(i, step), start); // wraps like the exact int64 values
		put(out, cast(v, scalar_of(dtype)).to(device_of(dev)), {});
	});
}

lt_status lt_arange_float(lt_device dev, int dtype, int64_t n, double start, double step, lt_out *out) {
	return guarded([&] {
		Tensor i = at::arange(n, at::TensorOptions().dtype(at::kDouble));
		Tensor v = at::add(at::mul(i, step), start); // start + i*step in float64
		put(out, cast(v, scalar_of(dtype)).to(device_of(dev)), {});
	});
}

lt_status lt_random(lt_gen *g, lt_device dev, int dtype, const int64_t *shape, int rank, int dist, double a, double b,
		    lt_out *out) {
	return guarded([&] {
		if (g == nullptr) {
			bad("nil generator");
		}
		ScalarType st = scalar_of(dtype);
		std::lock_guard<std::mutex> l(g->mu);
		Tensor r = random_values(g, dims(shape, rank), st, dist, a, b);
		put(out, r.to(device_of(dev)), {});
	});
}

lt_status lt_unary(int op, lt_tensor *x, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, unary(op, t), {&t});
	});
}

lt_status lt_binary(int op, lt_tensor *a, lt_tensor *b, lt_out *out) {
	return guarded([&] {
		const Tensor &x = get(a), &y = get(b);
		put(out, binary(op, x, y), {&x, &y});
	});
}

lt_status lt_where(lt_tensor *c, lt_tensor *a, lt_tensor *b, lt_out *out) {
	return guarded([&] {
		const Tensor &m = get(c), &x = get(a), &y = get(b);
		put(out, at::where(m, x, y), {&m, &x, &y});
	});
}

lt_status lt_cast(lt_tensor *x, int dtype, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, cast(t, scalar_of(dtype)), {&t});
	});
}

lt_status lt_reduce(int op, lt_tensor *x, int64_t axis, int keepdim, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, reduce(op, t, axis, keepdim != 0), {&t});
	});
}

lt_status lt_cumsum(lt_tensor *x, int64_t axis, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		ScalarType st = t.scalar_type();
		Tensor r;
		if (is_half(st)) {
			r = narrow(at::cumsum(widen(t), axis, at::kFloat), st);
		} else {
			r = at::cumsum(t, axis, st); // float32 accumulates in float64
		}
		put(out, r, {&t});
	});
}

lt_status lt_reshape(lt_tensor *x, const int64_t *shape, int rank, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, at::reshape(t, dims(shape, rank)), {&t});
	});
}

lt_status lt_permute(lt_tensor *x, const int64_t *p, int rank, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, t.permute(dims(p, rank)), {&t});
	});
}

lt_status lt_expand(lt_tensor *x, const int64_t *shape, int rank, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, t.expand(dims(shape, rank)), {&t});
	});
}

lt_status lt_slice(lt_tensor *x, const int64_t *r, int rank, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		if (rank != t.dim()) {
			bad("ranges do not match the rank");
		}
		Tensor v = t;
		for (int i = 0; i < rank; i++) {
			int64_t start = r[3 * i], end = r[3 * i + 1], step = r[3 * i + 2];
			if (start == 0 && end == t.size(i) && step == 1) {
				continue;
			}
			v = v.slice(i, start, end, step);
		}
		put(out, v, {&t});
	});
}

lt_status lt_pad(lt_tensor *x, const int64_t *pads, int rank, double fval, int64_t ival, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		if (rank != t.dim()) {
			bad("pads do not match the rank");
		}
		at::Scalar value = value_for(t.scalar_type(), fval, ival);
		std::vector<int64_t> p, shape;
		p.reserve(2 * rank);
		bool empty = false;
		for (int i = rank - 1; i >= 0; i--) { // ATen lists the last axis first
			p.push_back(pads[2 * i]);
			p.push_back(pads[2 * i + 1]);
		}
		for (int i = 0; i < rank; i++) {
			shape.push_back(t.size(i) + pads[2 * i] + pads[2 * i + 1]);
			empty = empty || t.size(i) == 0;
		}
		if (empty) {
			// constant_pad_nd rejects empty axes: the result is all padding.
			put(out, at::full(shape, value, t.options()), {&t});
			return;
		}
		put(out, at::constant_pad_nd(t, p, value), {&t});
	});
}

lt_status lt_flip(lt_tensor *x, const int64_t *d, int n, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		put(out, n == 0 ? t : at::flip(t, dims(d, n)), {&t});
	});
}

lt_status lt_cat(lt_tensor *const *xs, int n, int64_t axis, lt_out *out) {
	return guarded([&] {
		std::vector<Tensor> ts;
		ts.reserve(n);
		for (int i = 0; i < n; i++) {
			ts.push_back(get(xs[i]));
		}
		if (n == 1) {
			put(out, ts[0], {&ts[0]});
			return;
		}
		put(out, at::cat(ts, axis), {});
	});
}

lt_status lt_slice_scatter(lt_tensor *src, const int64_t *shape, int rank, const int64_t *r, lt_out *out) {
	return guarded([&] {
		const Tensor &s = get(src);
		Tensor z = at::zeros(dims(shape, rank), s.options());
		Tensor v = z;
		for (int i = 0; i < rank; i++) {
			v = v.slice(i, r[3 * i], r[3 * i + 1], r[3 * i + 2]);
		}
		v.copy_(s);
		put(out, z, {&s});
	});
}

lt_status lt_gather(lt_tensor *x, int64_t axis, lt_tensor *index, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x), &i = get(index);
		put(out, at::gather(t, axis, i), {&t, &i});
	});
}

lt_status lt_scatter_add(lt_tensor *x, int64_t axis, lt_tensor *index, lt_tensor *src, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x), &i = get(index), &s = get(src);
		ScalarType st = t.scalar_type();
		// F16 and BF16 accumulate in float32 and round once.
		put(out, narrow(at::scatter_add(widen(t), axis, i, widen(s)), st), {&t, &i, &s});
	});
}

lt_status lt_index_select(lt_tensor *x, int64_t axis, lt_tensor *index, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x), &i = get(index);
		put(out, at::index_select(t, axis, i), {&t, &i});
	});
}

lt_status lt_matmul(lt_tensor *a, lt_tensor *b, lt_out *out) {
	return guarded([&] {
		const Tensor &x = get(a), &y = get(b);
		put(out, ember_matmul(x, y), {&x, &y});
	});
}

lt_status lt_conv2d(lt_tensor *x, lt_tensor *w, const int64_t *c, int transpose, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x), &k = get(w);
		ScalarType st = t.scalar_type();
		Tensor r;
		if (transpose) {
			r = at::conv_transpose2d(widen(t), widen(k), {}, pair(c), pair(c + 2), pair(c + 6), c[8], pair(c + 4));
		} else {
			r = at::conv2d(widen(t), widen(k), {}, pair(c), pair(c + 2), pair(c + 4), c[8]);
		}
		put(out, narrow(r, st), {&t, &k});
	});
}

lt_status lt_conv2d_weight_grad(lt_tensor *x, lt_tensor *grad, const int64_t *wshape, const int64_t *c, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x), &g = get(grad);
		ScalarType st = t.scalar_type();
		Tensor xi = widen(t), gi = widen(g);
		Tensor w = at::zeros(dims(wshape, 4), xi.options()); // only its shape is read
		int64_t outpad[2] = {0, 0};
		auto r = at::convolution_backward(gi, xi, w, c10::nullopt, pair(c), pair(c + 2), pair(c + 4), false,
						  at::IntArrayRef(outpad, 2), c[8], {false, true, false});
		put(out, narrow(std::get<1>(r), st), {&t, &g});
	});
}

lt_status lt_max_pool2d(lt_tensor *x, const int64_t *p, lt_out *out) {
	return guarded([&] {
		const Tensor &t = get(x);
		ScalarType st = t.scalar_type();
		Tensor r = at::max_pool2d(widen(t), pair(p), pair(p + 2), pair(p + 4), pair(p + 6), false);
		put(out, narrow(r, st), {&t});
	});
}

lt_status lt_adam_step(lt_tensor *p, lt_tensor *g, lt_tensor *m, lt_tensor *v, const double *h, int flags,
		       lt_out *outs) {
	return guarded([&] {
		const Tensor &theta0 = get(p), &g0 = get(g), &m0 = get(m), &v0 = get(v);
		ScalarType st = theta0.scalar_type();
		if (st != at::kFloat && st != at::kDouble) {
			bad("adam_step runs float32 and float64 only");
		}
		Tensor t1, m1, v1;
		if (theta0.is_cpu()) {
			Tensor p0 = theta0.contiguous(), q0 = g0.contiguous(), a0 = m0.contiguous(), b0 = v0.contiguous();
			t1 = at::empty_like(p0, at::MemoryFormat::Contiguous);
			m1 = at::empty_like(p0, at::MemoryFormat::Contiguous);
			v1 = at::empty_like(p0, at::MemoryFormat::Contiguous);
			if (st == at::kFloat) {
				adam_loop<float>(p0.data_ptr<float>(), q0.data_ptr<float>(), a0.data_ptr<float>(), b0.data_ptr<float>(),
						 t1.data_ptr<float>(), m1.data_ptr<float>(), v1.data_ptr<float>(), p0.numel(), h, flags);
			} else {
				adam_loop<double>(p0.data_ptr<double>(), q0.data_ptr<double>(), a0.data_ptr<double>(),
						  b0.data_ptr<double>(), t1.data_ptr<double>(), m1.data_ptr<double>(),
						  v1.data_ptr<double>(), p0.numel(), h, flags);
			}
		} else {
			// Op by op: each hyperparameter converted to the dtype, as the
			// decomposition's scalar tensors are.
			auto s = [&](double x) {
				return st == at::kFloat ? at::Scalar(static_cast<double>(static_cast<float>(x))) : at::Scalar(x);
			};
			Tensor theta = theta0, grad = g0;
			if (flags & 1) {
				theta = at::mul(theta, s(h[0]));
			} else if (flags & 2) {
				grad = at::add(grad, at::mul(theta, s(h[0])));
			}
			m1 = at::add(at::mul(m0, s(h[1])), at::mul(grad, s(h[2])));
			v1 = at::add(at::mul(v0, s(h[3])), at::mul(at::mul(grad, grad), s(h[4])));
			Tensor denom = at::add(at::div(at::sqrt(v1), s(h[5])), s(h[6]));
			t1 = at::sub(theta, at::mul(at::div(m1, denom), s(h[7])));
		}
		lt_out o[3] = {};
		try {
			put(&o[0], t1, {});
			put(&o[1], m1, {});
			put(&o[2], v1, {});
		} catch (...) {
			for (lt_out &x : o) {
				delete x.t;
			}
			throw;
		}
		for (int i = 0; i < 3; i++) {
			outs[i] = o[i];
		}
	});
}

lt_status lt_sync(lt_device dev) {
	return guarded([&] {
		if (dev.type != LT_CPU) {
			at::zeros({1}, at::TensorOptions().device(device_of(dev))).cpu();
		}
	});
}

} // extern "C"
