package cuda

// prelude is the CUDA C++ source every generated kernel starts with. It
// includes no header (NVRTC then needs no include path): the fixed-width
// integer names, the 16-bit float conversions, the float-to-integer casts
// and the scalar op tables are defined here.
//
// Storage: F16 and BF16 are held as unsigned short bits and computed in
// float; Bool is an unsigned char holding 0 or 1.
//
// Semantics follow backend/flex (the reference backend):
//   - F16: cvt.rn (round to nearest even); BF16: the float32 bits rounded
//     to nearest even by integer arithmetic (PyTorch's
//     round_to_nearest_even), NaN kept quiet with its sign.
//   - double to F16/BF16 rounds once: first to float with round-to-odd,
//     then to nearest even (Boldo and Melquiond 2008), as backend.F16FromFloat64.
//   - float to integer truncates toward zero and saturates; NaN gives 0.
//   - integer arithmetic wraps (two's complement) without undefined
//     behaviour: it is done in an unsigned type at least as wide as int.
const prelude = `
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define EMBER_INF __int_as_float(0x7f800000)
#define EMBER_DINF __longlong_as_double(0x7ff0000000000000LL)

// ---- 16-bit floats ----
__device__ __forceinline__ float f16_to_f32(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ u16 f32_to_f16(float f) {
	u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
__device__ __forceinline__ float bf16_to_f32(u16 h) { return __uint_as_float(((u32)h) << 16); }
__device__ __forceinline__ u16 f32_to_bf16(float f) {
	u32 b = __float_as_uint(f);
	if (f != f) return (u16)((b >> 16) | 0x40u);
	return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
// f64_to_f32_odd rounds d to float with round-to-odd (exact values kept;
// inexact ones truncated toward zero with the last bit set).
__device__ __forceinline__ float f64_to_f32_odd(double d) {
	float r = __double2float_rz(d);
	if ((double)r == d || d != d) return r;
	return __uint_as_float(__float_as_uint(r) | 1u);
}
__device__ __forceinline__ u16 f64_to_f16(double d) { return f32_to_f16(f64_to_f32_odd(d)); }
__device__ __forceinline__ u16 f64_to_bf16(double d) { return f32_to_bf16(f64_to_f32_odd(d)); }

// ---- integer limits and saturating casts ----
template <typename T> struct lim;
template <> struct lim<i8>  { static constexpr i8  lo = -128, hi = 127; static constexpr bool sgn = true; };
template <> struct lim<u8>  { static constexpr u8  lo = 0, hi = 255; static constexpr bool sgn = false; };
template <> struct lim<i16> { static constexpr i16 lo = -32768, hi = 32767; static constexpr bool sgn = true; };
template <> struct lim<u16> { static constexpr u16 lo = 0, hi = 65535; static constexpr bool sgn = false; };
template <> struct lim<i32> { static constexpr i32 lo = (-2147483647 - 1), hi = 2147483647; static constexpr bool sgn = true; };
template <> struct lim<u32> { static constexpr u32 lo = 0, hi = 4294967295u; static constexpr bool sgn = false; };
template <> struct lim<i64> { static constexpr i64 lo = (-9223372036854775807LL - 1), hi = 9223372036854775807LL; static constexpr bool sgn = true; };
template <> struct lim<u64> { static constexpr u64 lo = 0, hi = 18446744073709551615ULL; static constexpr bool sgn = false; };

// wu<T>::t is the unsigned type integer arithmetic on T wraps in.
template <typename T> struct wu { typedef u32 t; };
template <> struct wu<i64> { typedef u64 t; };
template <> struct wu<u64> { typedef u64 t; };

// sat_cast truncates x toward zero into T's range; NaN gives 0.
template <typename T> __device__ __forceinline__ T sat_cast(double x) {
	x = trunc(x);
	if (x != x) return (T)0;
	if (x <= (double)lim<T>::lo) return lim<T>::lo;
	if (x >= (double)lim<T>::hi) return lim<T>::hi;
	return (T)x;
}

// ---- unary ops (op codes are backend.UnaryOp) ----
template <typename C> __device__ __forceinline__ C sigmoid_(C x) {
	if (x >= (C)0) return (C)1 / ((C)1 + exp(-x));
	C e = exp(x);
	return e / ((C)1 + e);
}
template <typename C> __device__ __forceinline__ C un_float(int op, C x) {
	switch (op) {
	case 1: return -x;
	case 2: return fabs(x);
	case 3: return x > (C)0 ? (C)1 : (x < (C)0 ? (C)-1 : (C)0);
	case 4: return exp(x);
	case 5: return log(x);
	case 6: return log1p(x);
	case 7: return expm1(x);
	case 8: return sqrt(x);
	case 9: return (C)1 / sqrt(x);
	case 10: return (C)1 / x;
	case 11: return sin(x);
	case 12: return cos(x);
	case 13: return tanh(x);
	case 14: return sigmoid_(x);
	case 15: return erf(x);
	case 16: return floor(x);
	case 17: return ceil(x);
	case 18: return rint(x);
	case 19: return x == (C)0 ? (C)1 : (C)0;
	}
	return x;
}
template <typename T> __device__ __forceinline__ T un_int(int op, T x) {
	typedef typename wu<T>::t W;
	switch (op) {
	case 1: return (T)((W)0 - (W)x);
	case 2: return x < (T)0 ? (T)((W)0 - (W)x) : x;
	case 3: return x > (T)0 ? (T)1 : (x < (T)0 ? (T)((W)0 - (W)1) : (T)0);
	case 16: case 17: case 18: return x;
	case 19: return (T)~x;
	}
	return sat_cast<T>(un_float<double>(op, (double)x));
}
__device__ __forceinline__ u8 un_bool(int op, u8 x) {
	switch (op) {
	case 19: return x ? 0 : 1;
	case 1: case 2: case 3: case 16: case 17: case 18: return x;
	}
	return un_float<double>(op, (double)x) != 0.0 ? 1 : 0;
}

// ---- binary ops (op codes are backend.BinaryOp) ----
// PyTorch's div_floor_floating, as flex's floorDiv.
__device__ __forceinline__ double floordiv_f(double a, double b) {
	if (b == 0.0) return a / b;
	double mod = fmod(a, b);
	double div = (a - mod) / b;
	if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
	if (div == 0.0) return copysign(0.0, a / b);
	double fl = floor(div);
	if (div - fl > 0.5) fl += 1.0;
	return fl;
}
__device__ __forceinline__ double pymod_f(double a, double b) {
	double r = fmod(a, b);
	if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
	return r;
}
template <typename C> __device__ __forceinline__ C max_nan(C a, C b) {
	if (a != a) return a;
	if (b != b) return b;
	return a > b ? a : (b > a ? b : (a == (C)0 ? (((C)1 / a) < (C)0 ? b : a) : a));
}
template <typename C> __device__ __forceinline__ C min_nan(C a, C b) {
	if (a != a) return a;
	if (b != b) return b;
	return a < b ? a : (b < a ? b : (a == (C)0 ? (((C)1 / a) < (C)0 ? a : b) : a));
}
// bin_float computes in C (float or double); FloorDiv, Rem, Mod, Pow and
// Atan2 go through double as flex does.
template <typename C> __device__ __forceinline__ C bin_float(int op, C a, C b) {
	switch (op) {
	case 1: return a + b;
	case 2: return a - b;
	case 3: return a * b;
	case 4: return a / b;
	case 5: return (C)floordiv_f((double)a, (double)b);
	case 6: return (C)fmod((double)a, (double)b);
	case 7: return (C)pymod_f((double)a, (double)b);
	case 8: return (C)pow((double)a, (double)b);
	case 9: return max_nan(a, b);
	case 10: return min_nan(a, b);
	case 11: return (C)atan2((double)a, (double)b);
	case 18: return (a != (C)0 && b != (C)0) ? (C)1 : (C)0;
	case 19: return (a != (C)0 || b != (C)0) ? (C)1 : (C)0;
	case 20: return ((a != (C)0) != (b != (C)0)) ? (C)1 : (C)0;
	}
	return a;
}
template <typename T> __device__ __forceinline__ T ipow(T a, T b) {
	typedef typename wu<T>::t W;
	if (lim<T>::sgn && b < (T)0) {
		if (a == (T)1) return (T)1;
		if (a == (T)((W)0 - (W)1)) return ((u64)(i64)b & 1) ? a : (T)1;
		return (T)0;
	}
	W r = 1, x = (W)a;
	u64 e = (u64)b;
	while (e > 0) {
		if (e & 1) r = r * x;
		x = x * x;
		e >>= 1;
	}
	return (T)r;
}
// bin_int wraps like Go; Div truncates, FloorDiv floors, Rem takes the
// dividend's sign, Mod the divisor's. MIN / -1 wraps to MIN (Go's rule).
template <typename T> __device__ __forceinline__ T bin_int(int op, T a, T b) {
	typedef typename wu<T>::t W;
	bool m1 = lim<T>::sgn && b == (T)((W)0 - (W)1);
	switch (op) {
	case 1: return (T)((W)a + (W)b);
	case 2: return (T)((W)a - (W)b);
	case 3: return (T)((W)a * (W)b);
	case 4: return m1 ? (T)((W)0 - (W)a) : (T)(a / b);
	case 5: {
		if (m1) return (T)((W)0 - (W)a);
		T q = (T)(a / b);
		if ((T)(a % b) != (T)0 && ((a < (T)0) != (b < (T)0))) q = (T)((W)q - (W)1);
		return q;
	}
	case 6: return m1 ? (T)0 : (T)(a % b);
	case 7: {
		if (m1) return (T)0;
		T r = (T)(a % b);
		if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)((W)r + (W)b);
		return r;
	}
	case 8: return ipow(a, b);
	case 9: return a > b ? a : b;
	case 10: return a < b ? a : b;
	case 11: return sat_cast<T>(atan2((double)a, (double)b));
	case 18: return (T)(a & b);
	case 19: return (T)(a | b);
	case 20: return (T)(a ^ b);
	case 21: // Shl: amounts outside [0, bits) give 0
		if ((lim<T>::sgn && b < (T)0) || b >= (T)(8 * sizeof(T))) return (T)0;
		return (T)((W)a << (int)b);
	case 22: // Shr, arithmetic: amounts outside [0, bits) give the sign fill
		if ((lim<T>::sgn && b < (T)0) || b >= (T)(8 * sizeof(T))) return (lim<T>::sgn && a < (T)0) ? (T)((W)0 - (W)1) : (T)0;
		return (T)(a >> (int)b);
	}
	return a;
}
__device__ __forceinline__ u8 bin_bool(int op, u8 a, u8 b) {
	switch (op) {
	case 1: case 9: case 19: return a | b;
	case 3: case 10: case 18: return a & b;
	case 2: case 20: case 13: return a ^ b;
	case 12: return a == b;
	case 14: return !a && b;
	case 15: return !a || b;
	case 16: return a && !b;
	case 17: return a || !b;
	case 4: case 5: case 11: return a;
	case 6: case 7: return 0;
	case 8: return a || !b;
	}
	return a;
}
// compare: NaN compares unequal to everything (IEEE 754).
template <typename C> __device__ __forceinline__ u8 cmp(int op, C a, C b) {
	switch (op) {
	case 12: return a == b;
	case 13: return a != b;
	case 14: return a < b;
	case 15: return a <= b;
	case 16: return a > b;
	case 17: return a >= b;
	}
	return 0;
}

// ---- status word (ops_status.go) ----
// status[0]: 0, or the code of the first failing op. An index out of
// range (report_index): the indexing op's code, status[1..2] the index
// (low, high word), status[3] the axis size. A zero integer divisor
// (report_div): 0x100 | the division's op code, status[1] the dtype.
__device__ __forceinline__ void report_index(u32* status, u32 code, i64 idx, i64 size) {
	if (atomicCAS(status, 0u, code) == 0u) {
		status[1] = (u32)((u64)idx);
		status[2] = (u32)((u64)idx >> 32);
		status[3] = (u32)size;
		__threadfence();
	}
}
__device__ __forceinline__ void report_div(u32* status, int op, u32 dt) {
	if (atomicCAS(status, 0u, 0x100u | (u32)op) == 0u) {
		status[1] = dt;
		status[2] = 0u;
		status[3] = 0u;
		__threadfence();
	}
}
// div_chk is bin_int for the integer divisions (Div, FloorDiv, Rem, Mod)
// with the divisor checked: a zero divisor gives 0 and is reported.
template <typename T> __device__ __forceinline__ T div_chk(int op, T a, T b, u32* status, u32 dt) {
	if (b == (T)0) {
		report_div(status, op, dt);
		return (T)0;
	}
	return bin_int<T>(op, a, b);
}
`
