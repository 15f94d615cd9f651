package flex

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindReduce, (*Backend).reduce, nil) }

// reduce reduces In[0] along op.Axis with the reduction op.Sub (PyTorch's
// sum/prod/amax/amin/argmax/argmin with dim and keepdim; op.Shape has the
// axis removed or kept as 1). Sum, Prod, Max and Min keep x's dtype;
// float32 (and F16, BF16, Flex32) sums and products accumulate in float64;
// F64 sums add pairwise (see sumPairwise); integer sums wrap. Max, Min, ArgMax and ArgMin propagate NaN
// (ArgMax/ArgMin give the first NaN's index) and ties pick the lowest
// index; the Arg ops return I64. On Bool, Sum and Max are "any", Prod and
// Min "all". An empty axis gives Sum 0, Prod 1, Max -Inf (the smallest
// integer, false), Min +Inf (the largest integer, true) and index 0.
func (be *Backend) reduce(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	r := ir.ReduceOp(op.Sub)
	outer, n, inner := lanes(t.shape, op.Axis)
	out := computeDense(t).(numeric).reduce(r, outer, n, inner)
	if r == backend.ReduceArgMax || r == backend.ReduceArgMin {
		return ir.One(newTensor(backend.I64, op.Shape, out))
	}
	return ir.One(fromCompute(t.dtype, op.Shape, out))
}

// lanes views shape as [outer, n, inner] around axis.
func lanes(shape []int, axis int) (outer, n, inner int) {
	return numel(shape[:axis]), shape[axis], numel(shape[axis+1:])
}

// computeDense returns t's elements as dense storage arithmetic reads:
// t's own dtype, or float32 for F16 and BF16.
func computeDense(t *Tensor) storage {
	if isHalf(t.dtype) {
		return decodeHalf(t.dtype, ints[uint16](t.dense()))
	}
	return t.dense()
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

// pairBlock is the length up to which pairwise summation adds
// sequentially.
const pairBlock = 128

// sumPairwise sums float64 x along r by pairwise (cascade) summation, as
// NumPy does: each lane's elements are split in halves recursively down to
// blocks of at most pairBlock, which add sequentially. The rounding error
// grows with log2(r) rather than r, and the order of the additions depends
// only on r, so results are the same for any number of workers.
func sumPairwise(x []float64, outer, r, inner int) []float64 {
	out := make([]float64, outer*inner)
	if r == 0 {
		return out
	}
	reduceTasks(outer, r, inner, func(o, lo, hi int) {
		base := o * r * inner
		if inner == 1 {
			out[o] = pairwiseRow(x[base : base+r])
			return
		}
		var bufs [][]float64 // one scratch row per recursion depth
		pairwiseRows(x[base:], inner, lo, hi, 0, r, out[o*inner+lo:o*inner+hi], &bufs, 0)
	})
	return out
}

// pairwiseRow is the pairwise sum of contiguous x: blocks of up to
// pairBlock elements add in eight interleaved partial sums.
func pairwiseRow(x []float64) float64 {
	if len(x) > pairBlock {
		h := len(x) / 2
		return pairwiseRow(x[:h]) + pairwiseRow(x[h:])
	}
	var s [8]float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s[0] += v[0]
		s[1] += v[1]
		s[2] += v[2]
		s[3] += v[3]
		s[4] += v[4]
		s[5] += v[5]
		s[6] += v[6]
		s[7] += v[7]
	}
	for ; i < len(x); i++ {
		s[0] += x[i]
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// pairwiseRows writes to dst the pairwise sums over rows [j0, j1) of the
// columns [lo, hi) of x, whose rows are inner elements apart: ranges of up
// to pairBlock rows add sequentially, longer ones split in halves whose
// sums are added. bufs holds a scratch row per depth.
func pairwiseRows(x []float64, inner, lo, hi, j0, j1 int, dst []float64, bufs *[][]float64, depth int) {
	if j1-j0 <= pairBlock {
		clear(dst) // from +0, as the other sums (a lane of -0 sums to +0)
		for j := j0; j < j1; j++ {
			for i, v := range x[j*inner+lo : j*inner+hi] {
				dst[i] += v
			}
		}
		return
	}
	mid := j0 + (j1-j0)/2
	pairwiseRows(x, inner, lo, hi, j0, mid, dst, bufs, depth+1)
	for len(*bufs) <= depth {
		*bufs = append(*bufs, nil)
	}
	if (*bufs)[depth] == nil {
		(*bufs)[depth] = make([]float64, hi-lo)
	}
	tmp := (*bufs)[depth]
	pairwiseRows(x, inner, lo, hi, mid, j1, tmp, bufs, depth+1)
	for i, v := range tmp {
		dst[i] += v
	}
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

func (p *fvec[T]) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	s := *p
	switch op {
	case backend.ReduceSum:
		if f, ok := any([]T(s)).([]float64); ok {
			return fst(sumPairwise(f, outer, r, inner))
		}
		return fst(sumT[T, float64](s, outer, r, inner, false))
	case backend.ReduceProd:
		return fst(sumT[T, float64](s, outer, r, inner, true))
	}
	isMax := op == backend.ReduceMax || op == backend.ReduceArgMax
	empty := T(math.Inf(1))
	if isMax {
		empty = T(math.Inf(-1))
	}
	vals, idx := extremeT(s, outer, r, inner, isMax, empty)
	if op == backend.ReduceMax || op == backend.ReduceMin {
		return fst(vals)
	}
	return ist(idx)
}

func (p *ivec[T]) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	s := *p
	switch op {
	case backend.ReduceSum:
		return ist(sumT[T, T](s, outer, r, inner, false))
	case backend.ReduceProd:
		return ist(sumT[T, T](s, outer, r, inner, true))
	}
	isMax := op == backend.ReduceMax || op == backend.ReduceArgMax
	lo, hi := intLimits[T]()
	empty := hi
	if isMax {
		empty = lo
	}
	vals, idx := extremeT(s, outer, r, inner, isMax, empty)
	if op == backend.ReduceMax || op == backend.ReduceMin {
		return ist(vals)
	}
	return ist(idx)
}

func (p *bvec) reduce(op backend.ReduceOp, outer, r, inner int) storage {
	u := castStorage(p, backend.Bool, backend.U8).(*ivec[uint8])
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
