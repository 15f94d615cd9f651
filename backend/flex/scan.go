package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindCumSum, (*Backend).cumsum, func(dt backend.DType) bool { return dt != backend.Bool })
}

// cumsum is the inclusive prefix sum of In[0] along op.Axis (PyTorch's
// cumsum), computed sequentially along each lane: out[..., i, ...] =
// x[..., 0, ...] + ... + x[..., i, ...], rounded to x's dtype element by
// element. Float32 (and Flex32) sums accumulate in float64, as PyTorch's
// CPU kernel does, F16 and BF16 in float32; integer sums wrap.
func (be *Backend) cumsum(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	outer, n, inner := lanes(t.shape, op.Axis)
	out := computeDense(t).(scanner).cumsum(outer, n, inner, isHalf(t.dtype))
	return ir.One(fromCompute(t.dtype, op.Shape, out))
}

// scanner is numeric storage with prefix sums: fvec and ivec (Bool never
// reaches cumsum: ir rejects it and Supports declines it).
type scanner interface {
	// cumsum returns the inclusive prefix sums of dense [outer, n, inner]
	// data along n; narrow float32 data accumulates in float32 (the
	// widened F16 and BF16), other floats in float64.
	cumsum(outer, n, inner int, narrow bool) storage
}

// cumsumT is the prefix sum of dense [outer, n, inner] data along n,
// accumulating in A and converting each partial sum to T.
func cumsumT[T, A number](x []T, outer, n, inner int) []T {
	out := make([]T, len(x))
	reduceTasks(outer, n, inner, func(o, lo, hi int) {
		base := o * n * inner
		if inner == 1 {
			var acc A
			for j, v := range x[base : base+n] {
				acc += A(v)
				out[base+j] = T(acc)
			}
			return
		}
		acc := make([]A, hi-lo)
		for j := range n {
			row := base + j*inner
			src, dst := x[row+lo:row+hi], out[row+lo:row+hi]
			for i, v := range src {
				acc[i] += A(v)
				dst[i] = T(acc[i])
			}
		}
	})
	return out
}

// cumsum accumulates float32 in float64 unless narrow (the float32
// widening of F16 and BF16), and float64 in float64.
func (p *fvec[T]) cumsum(outer, n, inner int, narrow bool) storage {
	s := *p
	if narrow {
		return fst(cumsumT[T, T](s, outer, n, inner))
	}
	return fst(cumsumT[T, float64](s, outer, n, inner))
}

func (p *ivec[T]) cumsum(outer, n, inner int, _ bool) storage {
	s := *p
	return ist(cumsumT[T, T](s, outer, n, inner))
}
