package flex

import (
	"math"

	"github.com/emberml/ember/backend"
)

// Reduce reduces x along axis (PyTorch's sum/prod/amax/amin/argmax/argmin
// with dim and keepdim). Sum, Prod, Max and Min keep x's dtype; float32
// (and F16, BF16, Flex32) sums and products accumulate in float64; integer
// sums wrap. Max, Min, ArgMax and ArgMin propagate NaN (ArgMax/ArgMin give
// the first NaN's index) and ties pick the lowest index; the Arg ops return
// I64. On Bool, Sum and Max are "any", Prod and Min "all". An empty axis
// gives Sum 0, Prod 1, Max -Inf (the smallest integer, false), Min +Inf
// (the largest integer, true) and index 0.
func (be *Backend) Reduce(op backend.ReduceOp, x backend.Tensor, axis int, keepDim bool) backend.Tensor {
	t := asTensor(x)
	outer := numel(t.shape[:axis])
	r := t.shape[axis]
	inner := numel(t.shape[axis+1:])
	var s storage
	if isHalf(t.dtype) {
		s = decodeHalf(t.dtype, t.dense().(ivec[uint16]))
	} else {
		s = t.dense()
	}
	out := s.(numeric).reduce(op, outer, r, inner)
	shape := append([]int{}, t.shape[:axis]...)
	if keepDim {
		shape = append(shape, 1)
	}
	shape = append(shape, t.shape[axis+1:]...)
	if op == backend.ReduceArgMax || op == backend.ReduceArgMin {
		return newTensor(backend.I64, shape, out)
	}
	return fromCompute(t.dtype, shape, out)
}

// reduceTasks runs fn(o, lo, hi) over every outer index o and a split of
// [0, inner) into column blocks, in parallel when the data is large.
func reduceTasks(outer, r, inner int, fn func(o, lo, hi int)) {
	w := workers(outer * r * inner)
	nb := 1
	if outer < w && inner >= 2*w {
		nb = w
	}
	tasks := outer * nb
	parallelChunks(tasks, min(w, tasks), func(a, b int) {
		for t := a; t < b; t++ {
			o, c := t/nb, t%nb
			fn(o, inner*c/nb, inner*(c+1)/nb)
		}
	})
}

// sumT sums (or multiplies, when prod) along r, accumulating in A.
func sumT[T number, A number](x []T, outer, r, inner int, prod bool) []T {
	out := make([]T, outer*inner)
	var init A
	if prod {
		init = 1
	}
	reduceTasks(outer, r, inner, func(o, lo, hi int) {
		base := o * r * inner
		if inner == 1 {
			acc := init
			for _, v := range x[base : base+r] {
				if prod {
					acc *= A(v)
				} else {
					acc += A(v)
				}
			}
			out[o] = T(acc)
			return
		}
		acc := make([]A, hi-lo)
		for i := range acc {
			acc[i] = init
		}
		for j := 0; j < r; j++ {
			row := x[base+j*inner+lo : base+j*inner+hi]
			if prod {
				for i, v := range row {
					acc[i] *= A(v)
				}
			} else {
				for i, v := range row {
					acc[i] += A(v)
				}
			}
		}
		for i, v := range acc {
			out[o*inner+lo+i] = T(v)
		}
	})
	return out
}

// extremeT finds the max (or min, when !isMax) along r and its index. NaN
// wins over every number and the first one found stays; ties keep the
// lowest index. empty is the value of an empty axis.
func extremeT[T number](x []T, outer, r, inner int, isMax bool, empty T) ([]T, []int64) {
	vals := make([]T, outer*inner)
	idx := make([]int64, outer*inner)
	reduceTasks(outer, r, inner, func(o, lo, hi int) {
		base := o * r * inner
		for i := lo; i < hi; i++ {
			best, at := empty, 0
			p := base + i
			for j := 0; j < r; j++ {
				v := x[p]
				p += inner
				if j == 0 {
					best = v
					continue
				}
				if best != best {
					break // NaN found: it stays
				}
				if v != v || (isMax && v > best) || (!isMax && v < best) {
					best, at = v, j
				}
			}
			vals[o*inner+i], idx[o*inner+i] = best, int64(at)
		}
	})
	return vals, idx
}

func (s fvec[T]) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	switch op {
	case backend.ReduceSum:
		return fvec[T](sumT[T, float64](s, outer, r, inner, false))
	case backend.ReduceProd:
		return fvec[T](sumT[T, float64](s, outer, r, inner, true))
	}
	isMax := op == backend.ReduceMax || op == backend.ReduceArgMax
	empty := T(math.Inf(1))
	if isMax {
		empty = T(math.Inf(-1))
	}
	vals, idx := extremeT(s, outer, r, inner, isMax, empty)
	if op == backend.ReduceMax || op == backend.ReduceMin {
		return fvec[T](vals)
	}
	return ivec[int64](idx)
}

func (s ivec[T]) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	switch op {
	case backend.ReduceSum:
		return ivec[T](sumT[T, T](s, outer, r, inner, false))
	case backend.ReduceProd:
		return ivec[T](sumT[T, T](s, outer, r, inner, true))
	}
	isMax := op == backend.ReduceMax || op == backend.ReduceArgMax
	lo, hi := intLimits[T]()
	empty := hi
	if isMax {
		empty = lo
	}
	vals, idx := extremeT(s, outer, r, inner, isMax, empty)
	if op == backend.ReduceMax || op == backend.ReduceMin {
		return ivec[T](vals)
	}
	return ivec[int64](idx)
}

func (s bvec) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	u := castStorage(s, backend.Bool, backend.U8).(ivec[uint8])
	switch op {
	case backend.ReduceSum:
		op = backend.ReduceMax
	case backend.ReduceProd:
		op = backend.ReduceMin
	}
	out := u.reduce(op, outer, r, inner)
	if op == backend.ReduceMax || op == backend.ReduceMin {
		return castStorage(out, backend.U8, backend.Bool)
	}
	return out
}
