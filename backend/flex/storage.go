package flex

import "github.com/emberml/ember/backend/internal/layout"

// storage is a tensor's typed element buffer, held through a pointer to
// its slice: *fvec[T] (float64, float32), *ivec[T] (integers, and the raw
// bits of F16 and BF16) and *bvec (Bool). A handle is a single pointer, so
// storing it in a Tensor allocates nothing more, and a tensor made from a
// slice can hold the slice header itself (newTensorOf). The methods here
// move elements without looking at them, so every dtype shares them;
// arithmetic lives in numeric.
type storage interface {
	// length is the number of elements.
	length() int
	// alloc makes a zeroed storage of the same element type.
	alloc(n int) storage
	// sub returns elements [lo, hi) without copying.
	sub(lo, hi int) storage
	// copyFrom copies the strided view (shape, srcStrides, srcOff) of src,
	// which has the receiver's element type, into the receiver's strided
	// view (shape, dstStrides, dstOff).
	copyFrom(src storage, shape, dstStrides []int, dstOff int, srcStrides []int, srcOff int)
	// take returns out with out[i] = s[idx[i]].
	take(idx []int) storage
	// where returns the contiguous broadcast of cond ? s : b over shape;
	// strides and offsets are in the order cond, s, b.
	where(cond bvec, b storage, shape []int, strides [3][]int, offs [3]int) storage
}

// float is the constraint of float storage.
type float interface{ ~float32 | ~float64 }

// integer is the constraint of integer storage.
type integer interface {
	~int64 | ~int32 | ~int16 | ~int8 | ~uint64 | ~uint32 | ~uint16 | ~uint8
}

// number is float or integer.
type number interface{ float | integer }

// The element slices; storage handles point to them.
type (
	fvec[T float]   []T
	ivec[T integer] []T
	bvec            []bool
)

// fst, ist and bst return a new storage handle of a slice.
func fst[T float](s []T) *fvec[T]   { v := fvec[T](s); return &v }
func ist[T integer](s []T) *ivec[T] { v := ivec[T](s); return &v }
func bst(s []bool) *bvec            { v := bvec(s); return &v }

// floats, ints and bools return the slice of a storage handle of that
// element type (they panic for another).
func floats[T float](s storage) fvec[T] { return *s.(*fvec[T]) }
func ints[T integer](s storage) ivec[T] { return *s.(*ivec[T]) }
func bools(s storage) bvec              { return *s.(*bvec) }

func (s *fvec[T]) length() int            { return len(*s) }
func (s *fvec[T]) alloc(n int) storage    { return fst(make([]T, n)) }
func (s *fvec[T]) sub(lo, hi int) storage { return fst((*s)[lo:hi:hi]) }
func (s *fvec[T]) take(idx []int) storage { return fst(takeT(*s, idx)) }
func (s *fvec[T]) copyFrom(src storage, shape, ds []int, do int, ss []int, so int) {
	copyStrided(*s, floats[T](src), shape, ds, do, ss, so)
}
func (s *fvec[T]) where(c bvec, b storage, shape []int, st [3][]int, o [3]int) storage {
	return fst(whereT(c, *s, floats[T](b), shape, st, o))
}

func (s *ivec[T]) length() int            { return len(*s) }
func (s *ivec[T]) alloc(n int) storage    { return ist(make([]T, n)) }
func (s *ivec[T]) sub(lo, hi int) storage { return ist((*s)[lo:hi:hi]) }
func (s *ivec[T]) take(idx []int) storage { return ist(takeT(*s, idx)) }
func (s *ivec[T]) copyFrom(src storage, shape, ds []int, do int, ss []int, so int) {
	copyStrided(*s, ints[T](src), shape, ds, do, ss, so)
}
func (s *ivec[T]) where(c bvec, b storage, shape []int, st [3][]int, o [3]int) storage {
	return ist(whereT(c, *s, ints[T](b), shape, st, o))
}

func (s *bvec) length() int            { return len(*s) }
func (s *bvec) alloc(n int) storage    { return bst(make([]bool, n)) }
func (s *bvec) sub(lo, hi int) storage { return bst((*s)[lo:hi:hi]) }
func (s *bvec) take(idx []int) storage { return bst(takeT(*s, idx)) }
func (s *bvec) copyFrom(src storage, shape, ds []int, do int, ss []int, so int) {
	copyStrided(*s, bools(src), shape, ds, do, ss, so)
}
func (s *bvec) where(c bvec, b storage, shape []int, st [3][]int, o [3]int) storage {
	return bst(whereT(c, *s, bools(b), shape, st, o))
}

// copyStrided copies the strided view of src into the strided view of dst.
func copyStrided[T any](dst, src []T, shape, ds []int, do int, ss []int, so int) {
	it := newIter(shape, []int{do, so}, ds, ss)
	sd, s1 := it.step(0), it.step(1)
	it.rows(func(o []int, n int) {
		d, s := o[0], o[1]
		if sd == 1 && s1 == 1 {
			copy(dst[d:d+n], src[s:s+n])
			return
		}
		for j := 0; j < n; j++ {
			dst[d] = src[s]
			d += sd
			s += s1
		}
	})
}

// takeT gathers src at the indices idx.
func takeT[T any](src []T, idx []int) []T {
	out := make([]T, len(idx))
	parallelFor(len(idx), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = src[idx[i]]
		}
	})
	return out
}

// whereT selects a where cond holds, else b, over the broadcast shape.
func whereT[T any](cond []bool, a, b []T, shape []int, st [3][]int, o [3]int) []T {
	out := make([]T, numel(shape))
	it := newIter(shape, []int{0, o[0], o[1], o[2]}, layout.RowMajorStrides(shape), st[0], st[1], st[2])
	sc, sa, sb := it.step(1), it.step(2), it.step(3)
	it.rows(func(off []int, n int) {
		io, ic, ia, ib := off[0], off[1], off[2], off[3]
		for j := 0; j < n; j++ {
			if cond[ic] {
				out[io+j] = a[ia]
			} else {
				out[io+j] = b[ib]
			}
			ic += sc
			ia += sa
			ib += sb
		}
	})
	return out
}
