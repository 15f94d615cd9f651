package ndarray

import (
	"gonum.org/v1/gonum/floats"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// reduce reduces In[0] along op.Axis with the reduction op.Sub (PyTorch's
// sum, prod, amax, amin, argmax and argmin with dim and keepdim; op.Shape
// has the axis removed or kept as 1). Sum, Prod, Max and Min keep x's
// dtype, ArgMax and ArgMin return I64. F64 sums add pairwise (pairwiseSum);
// the other float sums and all float products accumulate in float64 and
// round once; integer sums and products wrap. Max, Min, ArgMax and ArgMin
// propagate NaN (the first NaN wins) and ties pick the lowest index. On
// Bool, Max is "any" and Min "all". An empty axis gives Sum 0 and Prod 1.
func (be *Backend) reduce(op ir.Op) *Tensor {
	x := asTensor(op.In[0])
	r := ir.ReduceOp(op.Sub)
	outer, n, inner := ir.NumElements(x.shape[:op.Axis]), x.shape[op.Axis], ir.NumElements(x.shape[op.Axis+1:])
	out := &Tensor{dtype: op.DType, shape: op.Shape}
	arg := r == ir.ReduceArgMax || r == ir.ReduceArgMin
	isMax := r == ir.ReduceMax || r == ir.ReduceArgMax
	switch classOf(x.dtype) {
	case floatClass:
		switch {
		case r == ir.ReduceSum && x.dtype == backend.F64:
			out.f = lanes(x.f, outer, n, inner, pairwiseSum)
		case r == ir.ReduceSum:
			out.f = lanes(x.f, outer, n, inner, sum[float64])
		case r == ir.ReduceProd:
			out.f = lanes(x.f, outer, n, inner, prod[float64])
		case arg:
			out.i = lanes(x.f, outer, n, inner, argExtreme[float64](isMax))
		default:
			out.f = lanes(x.f, outer, n, inner, extreme[float64](isMax))
		}
	case intClass:
		v, idx := reduceInts(x.i, r, outer, n, inner)
		out.i = v
		if arg {
			out.i = idx
		}
	case uintClass:
		out.u, out.i = reduceInts(x.u, r, outer, n, inner)
	default: // Bool: Max, Min and the Arg ops, on 0/1
		v, idx := reduceInts(mapOf(x.b, b2u), r, outer, n, inner)
		out.i = idx
		if !arg {
			out.b = mapOf(v, func(u uint64) bool { return u != 0 })
		}
	}
	return out.normalize()
}

// reduceInts reduces integer data (int64 or uint64 storage), returning the
// values in the same storage (Sum, Prod, Max, Min) or the I64 indices
// (ArgMax, ArgMin); the other result is nil.
func reduceInts[T integer](x []T, r ir.ReduceOp, outer, n, inner int) ([]T, []int64) {
	isMax := r == ir.ReduceMax || r == ir.ReduceArgMax
	switch r {
	case ir.ReduceSum:
		return lanes(x, outer, n, inner, sum[T]), nil
	case ir.ReduceProd:
		return lanes(x, outer, n, inner, prod[T]), nil
	case ir.ReduceArgMax, ir.ReduceArgMin:
		return nil, lanes(x, outer, n, inner, argExtreme[T](isMax))
	}
	return lanes(x, outer, n, inner, extreme[T](isMax)), nil
}

// lanes applies f to every lane of x viewed as [outer, n, inner] (the n
// elements x[o·n·inner + j·inner + i], j = 0 ... n-1, copied to one
// buffer), giving [outer, inner] results.
func lanes[E, O any](x []E, outer, n, inner int, f func(lane []E) O) []O {
	out := make([]O, outer*inner)
	lane := make([]E, n)
	for o := range outer {
		for i := range inner {
			for j := range lane {
				lane[j] = x[(o*n+j)*inner+i]
			}
			out[o*inner+i] = f(lane)
		}
	}
	return out
}

// pairBlock is the length up to which pairwiseSum adds sequentially.
const pairBlock = 128

// pairwiseSum sums x by pairwise (cascade) summation, as NumPy and flex
// do: halves recursively down to blocks of at most pairBlock elements,
// which floats.Sum adds. The rounding error grows with log2(len(x)).
func pairwiseSum(x []float64) float64 {
	if len(x) > pairBlock {
		h := len(x) / 2
		return pairwiseSum(x[:h]) + pairwiseSum(x[h:])
	}
	return floats.Sum(x)
}

// sum adds the lane from zero.
func sum[T ordered](lane []T) T {
	var s T
	for _, v := range lane {
		s += v
	}
	return s
}

// prod multiplies the lane from one.
func prod[T ordered](lane []T) T {
	var p T = 1
	for _, v := range lane {
		p *= v
	}
	return p
}

// argExtreme returns the function giving the index of a lane's largest
// (isMax) or smallest element: the first NaN if there is one, else the
// lowest index among ties.
func argExtreme[T ordered](isMax bool) func(lane []T) int64 {
	return func(lane []T) int64 {
		at := 0
		for j, v := range lane {
			best := lane[at]
			if best != best {
				break // a NaN found: it stays
			}
			if v != v || (isMax && v > best) || (!isMax && v < best) {
				at = j
			}
		}
		return int64(at)
	}
}

// extreme returns the function giving a lane's largest (isMax) or
// smallest element, NaN if the lane holds one.
func extreme[T ordered](isMax bool) func(lane []T) T {
	arg := argExtreme[T](isMax)
	return func(lane []T) T { return lane[arg(lane)] }
}
