package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
)

// numeric is storage that can do arithmetic: fvec, ivec and bvec. F16 and
// BF16 never reach these methods as bits; they are widened to fvec[float32]
// first.
type numeric interface {
	storage
	// castTo converts dense storage to dt (see castTensor).
	castTo(dt backend.DType) storage
	// unary applies op to the strided view, returning dense storage of the
	// same element type.
	unary(op backend.UnaryOp, shape, strides []int, off int) storage
	// binary applies op to the receiver's and b's strided views (same
	// element type), both already broadcast to shape; comparisons return
	// bvec.
	binary(op backend.BinaryOp, b storage, shape, as []int, ao int, bs []int, bo int) storage
	// reduce reduces dense [outer, r, inner] data along r, giving dense
	// [outer, inner] data (ivec[int64] for ArgMax and ArgMin).
	reduce(op backend.ReduceOp, outer, r, inner int) storage
	// scatterAdd adds src[i] to element pos[i] of the receiver, in place.
	scatterAdd(pos []int, src storage)
}

// unaryLoop maps f over a strided view into dense storage.
func unaryLoop[T, O any](a []T, shape, st []int, off int, f func(T) O) []O {
	out := make([]O, numel(shape))
	if layout.IsRowMajor(shape, st) {
		if len(out) < parallelMin { // one chunk: no closure to allocate
			for j, v := range a[off : off+len(out)] {
				out[j] = f(v)
			}
			return out
		}
		parallelFor(len(out), func(lo, hi int) {
			for j, v := range a[off+lo : off+hi] {
				out[lo+j] = f(v)
			}
		})
		return out
	}
	it := newIter(shape, []int{0, off}, layout.RowMajorStrides(shape), st)
	sa := it.step(1)
	it.rows(func(o []int, n int) {
		dst, ia := out[o[0]:o[0]+n], o[1]
		if sa == 1 {
			for j, v := range a[ia : ia+n] {
				dst[j] = f(v)
			}
			return
		}
		for j := range dst {
			dst[j] = f(a[ia])
			ia += sa
		}
	})
	return out
}

// binaryLoop maps f over two strided views broadcast to shape into dense
// storage. fast, when not nil, handles rows where both inputs are
// contiguous.
func binaryLoop[T, O any](a, b []T, shape, as []int, ao int, bs []int, bo int, f func(T, T) O, fast func(o []O, a, b []T)) []O {
	out := make([]O, numel(shape))
	if fast != nil && layout.IsRowMajor(shape, as) && layout.IsRowMajor(shape, bs) {
		if n := len(out); n < parallelMin { // one chunk: no closure to allocate
			fast(out, a[ao:ao+n], b[bo:bo+n])
			return out
		}
		parallelFor(len(out), func(lo, hi int) {
			fast(out[lo:hi], a[ao+lo:ao+hi], b[bo+lo:bo+hi])
		})
		return out
	}
	it := newIter(shape, []int{0, ao, bo}, layout.RowMajorStrides(shape), as, bs)
	sa, sb := it.step(1), it.step(2)
	it.rows(func(off []int, n int) {
		dst, ia, ib := out[off[0]:off[0]+n], off[1], off[2]
		if sa == 1 && sb == 1 && fast != nil {
			fast(dst, a[ia:ia+n], b[ib:ib+n])
			return
		}
		if sa == 1 && sb == 0 {
			bv, src := b[ib], a[ia:ia+n]
			for j := range dst {
				dst[j] = f(src[j], bv)
			}
			return
		}
		for j := range dst {
			dst[j] = f(a[ia], b[ib])
			ia += sa
			ib += sb
		}
	})
	return out
}

func (p *fvec[T]) unary(op backend.UnaryOp, shape, st []int, off int) storage {
	s := *p
	return fst(unaryLoop(s, shape, st, off, floatUnary[T](op)))
}

func (p *ivec[T]) unary(op backend.UnaryOp, shape, st []int, off int) storage {
	s := *p
	return ist(unaryLoop(s, shape, st, off, intUnary[T](op)))
}

func (p *bvec) unary(op backend.UnaryOp, shape, st []int, off int) storage {
	s := *p
	return bst(unaryLoop(s, shape, st, off, boolUnary(op)))
}

func (p *fvec[T]) binary(op backend.BinaryOp, b storage, shape, as []int, ao int, bs []int, bo int) storage {
	s := *p
	if op.IsComparison() {
		return bst(binaryLoop(s, floats[T](b), shape, as, ao, bs, bo, compare[T](op), nil))
	}
	return fst(binaryLoop(s, floats[T](b), shape, as, ao, bs, bo, floatBinary[T](op), fastBinary[T](op)))
}

func (p *ivec[T]) binary(op backend.BinaryOp, b storage, shape, as []int, ao int, bs []int, bo int) storage {
	s := *p
	if op.IsComparison() {
		return bst(binaryLoop(s, ints[T](b), shape, as, ao, bs, bo, compare[T](op), nil))
	}
	var fast func(o, a, b []T)
	if op == backend.OpAdd || op == backend.OpSub || op == backend.OpMul || op == backend.OpMax || op == backend.OpMin {
		fast = fastBinary[T](op)
	}
	return ist(binaryLoop(s, ints[T](b), shape, as, ao, bs, bo, intBinary[T](op), fast))
}

func (p *bvec) binary(op backend.BinaryOp, b storage, shape, as []int, ao int, bs []int, bo int) storage {
	s := *p
	return bst(binaryLoop(s, bools(b), shape, as, ao, bs, bo, boolBinary(op), nil))
}

func (p *fvec[T]) scatterAdd(pos []int, src storage) {
	s := *p
	for i, v := range floats[T](src) {
		s[pos[i]] += v
	}
}

func (p *ivec[T]) scatterAdd(pos []int, src storage) {
	s := *p
	for i, v := range ints[T](src) {
		s[pos[i]] += v
	}
}

func (p *bvec) scatterAdd(pos []int, src storage) {
	s := *p
	for i, v := range bools(src) {
		s[pos[i]] = s[pos[i]] || v
	}
}
