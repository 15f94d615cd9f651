package cuda

import (
	"encoding/binary"
	"math"
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindAdamStep, (*Backend).adamStep, adamDType) }

// adamSource is the fused Adam update for one float type T (float or
// double). Every operation rounds to T with an explicit round-to-nearest
// intrinsic, so that no multiply-add is contracted: the result is bit for
// bit the composed sequence of elementwise kernels of ir's decomposition
// of KindAdamStep. mode 1 adds the L2 penalty to the gradient, mode 2
// applies the decoupled decay first.
const adamSource = `
typedef long long i64;
typedef unsigned long long u64;
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float dv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float sq(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double dv(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double sq(double a) { return __dsqrt_rn(a); }

template <typename T>
__device__ __forceinline__ void adam(i64 n, const T* p, const T* g, const T* m, const T* v, T* op, T* om, T* ov,
		const double* s, int mode) {
	const T decay = (T)s[0], wd = (T)s[1], b1 = (T)s[2], omb1 = (T)s[3], b2 = (T)s[4], omb2 = (T)s[5],
		sbc2 = (T)s[6], eps = (T)s[7], step = (T)s[8];
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
		T th = p[i], gr = g[i];
		if (mode == 2) th = mul(th, decay);
		if (mode == 1) gr = add(gr, mul(th, wd));
		const T mi = add(mul(m[i], b1), mul(gr, omb1));
		const T vi = add(mul(v[i], b2), mul(mul(gr, gr), omb2));
		const T den = add(dv(sq(vi), sbc2), eps);
		op[i] = sub(th, mul(dv(mi, den), step));
		om[i] = mi;
		ov[i] = vi;
	}
}

struct __align__(8) AdamScalars { double s[9]; };

extern "C" __global__ void ember_adam_f32(i64 n, u64 p, u64 g, u64 m, u64 v, u64 op, u64 om, u64 ov, AdamScalars s, int mode) {
	adam<float>(n, (const float*)p, (const float*)g, (const float*)m, (const float*)v, (float*)op, (float*)om, (float*)ov, s.s, mode);
}
extern "C" __global__ void ember_adam_f64(i64 n, u64 p, u64 g, u64 m, u64 v, u64 op, u64 om, u64 ov, AdamScalars s, int mode) {
	adam<double>(n, (const double*)p, (const double*)g, (const double*)m, (const double*)v, (double*)op, (double*)om, (double*)ov, s.s, mode);
}
`

// adamDType reports the dtypes the fused Adam kernel runs: F32, Flex32
// and F64. Others (F16, BF16) are lowered by the caller with ir's
// decomposition.
func adamDType(dt backend.DType) bool {
	return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64
}

// adamStep is the kernel of KindAdamStep: one Adam/AdamW update of the
// parameter op.Xs[0] with gradient op.Xs[1] and moments op.Xs[2], op.Xs[3]
// under op.Attrs.Optim, in one kernel, returning Outputs{param, m, v}: the
// same values, bit for bit, as ir's decomposition into elementwise ops
// (for F32, Flex32 and F64). Non-contiguous operands are copied first. An
// op of another dtype is lowered with that decomposition.
func (b *Backend) adamStep(op ir.Op) ir.Outputs {
	p, g, mt, vt := tensorOf(op.Xs[0]), tensorOf(op.Xs[1]), tensorOf(op.Xs[2]), tensorOf(op.Xs[3])
	var name string
	switch p.dtype {
	case backend.F32, backend.Flex32:
		name = "ember_adam_f32"
	case backend.F64:
		name = "ember_adam_f64"
	default:
		return ir.SpecOf(op.Kind).Decompose(op, b)
	}
	u := &op.Attrs.Optim
	p, g, mt, vt = b.Contiguous(p), b.Contiguous(g), b.Contiguous(mt), b.Contiguous(vt)
	op0, om, ov := b.emptyOf(op.Shape, p.dtype), b.emptyOf(op.Shape, p.dtype), b.emptyOf(op.Shape, p.dtype)
	n := op0.NumElements()
	if n == 0 {
		return ir.Outputs{op0, om, ov}
	}
	mode := int32(0)
	switch {
	case u.Decoupled:
		mode = 2
	case u.WeightDecay != 0:
		mode = 1
	}
	t := float64(u.Step)
	sc := [9]float64{
		1 - u.LR*u.WeightDecay, u.WeightDecay,
		u.Beta1, 1 - u.Beta1, u.Beta2, 1 - u.Beta2,
		math.Sqrt(1 - math.Pow(u.Beta2, t)), u.Eps, u.LR / (1 - math.Pow(u.Beta1, t)),
	}
	// The scalars are rounded to the dtype on the device ((T)s[i]), as
	// the composed ops' Full does (round to nearest even).
	var blob [72]byte
	for i, s := range sc {
		putF64(blob[8*i:], s)
	}
	k := b.kernel(name, func() string { return adamSource })
	var a argPack
	a.i64(int64(n))
	a.u64(p.Ptr())
	a.u64(g.Ptr())
	a.u64(mt.Ptr())
	a.u64(vt.Ptr())
	a.u64(op0.Ptr())
	a.u64(om.Ptr())
	a.u64(ov.Ptr())
	a.blob(blob[:])
	a.i32(mode)
	b.launchPacked(k, grid1(n, blockSize), block1, 0, a.bytes())
	runtime.KeepAlive(p)
	runtime.KeepAlive(g)
	runtime.KeepAlive(mt)
	runtime.KeepAlive(vt)
	return ir.Outputs{op0, om, ov}
}

func putF64(dst []byte, v float64) { binary.LittleEndian.PutUint64(dst, math.Float64bits(v)) }
