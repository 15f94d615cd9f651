package ember

import "math/bits"

// Sorting and selection. The permutation is found by a bitonic sorting
// network (Batcher, "Sorting networks and their applications", 1968) run
// on untracked values with existing kinds — Gather of each element's
// partner, comparisons and Where — so it runs on every backend; the
// values are then x gathered at the permutation, which routes the
// gradient to the selected elements. Each comparison breaks ties by the
// original index, so the order is stable, as PyTorch's sort with
// stable=True.

// moveLast permutes axis a of x to the end, returning the permutation's
// inverse too.
func moveLast(x *Tensor, a int) (*Tensor, []int) {
	r := x.Rank()
	perm := make([]int, 0, r)
	for i := range r {
		if i != a {
			perm = append(perm, i)
		}
	}
	perm = append(perm, a)
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	return x.Permute(perm...), inv
}

// argsortLast returns the stable sorting permutation of v along its last
// axis as I64 indices of v's shape (v untracked, not Bool). NaN sorts
// after every number ascending and before every number descending, as
// PyTorch's sort; -0 and +0 are equal.
func argsortLast(v *Tensor, descending bool) *Tensor {
	shape := v.shape()
	r := len(shape)
	n := shape[r-1]
	dev := v.dev
	if n <= 1 {
		return ZerosLike(v).castTo(I64)
	}
	p := 1 << bits.Len(uint(n-1)) // the next power of two
	if p > n {
		pads := make([]int, 2*r)
		pads[1] = p - n // after, on the last axis
		v = v.Pad(pads, 0)
	}
	full := append(append([]int{}, shape[:r-1]...), p)
	idx := Arange(0, p, dev).castTo(I64).Expand(full...)
	isFloat := v.DType().IsFloat()
	less := func(a, ia, b, ib *Tensor) *Tensor {
		padA, padB := ia.GeScalar(float64(n)), ib.GeScalar(float64(n))
		byIndex := ia.Lt(ib)
		var byValue, eq *Tensor
		if descending {
			byValue = a.Gt(b)
		} else {
			byValue = a.Lt(b)
		}
		eq = a.Eq(b)
		res := Where(eq, byIndex, byValue)
		if isFloat {
			aN, bN := a.IsNaN(), b.IsNaN()
			nanFirst := aN // descending: NaN before numbers
			if !descending {
				nanFirst = aN.Not()
			}
			res = Where(aN.Xor(bN), nanFirst, Where(aN.And(bN), byIndex, res))
		}
		return Where(padA.Xor(padB), padA.Not(), res)
	}
	partner := make([]int64, p)
	wantMin := make([]bool, p)
	for k := 2; k <= p; k <<= 1 {
		for j := k >> 1; j > 0; j >>= 1 {
			for i := range p {
				q := i ^ j
				partner[i] = int64(q)
				wantMin[i] = (i&k == 0) == (i < q)
			}
			pt := FromInts(partner, []int{p}, dev).castTo(I64).Expand(full...)
			wm := FromBools(wantMin, []int{p}, dev).Expand(full...)
			vp, ip := v.Gather(-1, pt), idx.Gather(-1, pt)
			// Keys are unique (ties break by index), so the partner is
			// smaller exactly when this element is not.
			takeP := wm.Xor(less(vp, ip, v, idx)).Not()
			v, idx = Where(takeP, vp, v), Where(takeP, ip, idx)
		}
	}
	if p > n {
		idx = idx.Narrow(-1, 0, n)
	}
	return idx
}

// sortIndices returns the stable sorting permutation of x along axis a as
// I64 indices of x's shape on x's device (untracked).
func (x *Tensor) sortIndices(op string, a int, descending bool) *Tensor {
	v := x.Inner()
	if v.DType() == Bool {
		v = v.castTo(U8)
	}
	moved, inv := moveLast(v, a)
	idx := argsortLast(moved, descending).Permute(inv...)
	if x.dev.autodiff {
		idx = idx.ToDevice(x.dev)
	}
	return idx
}

// Sort sorts x along axis (negative counts from the end), ascending or
// descending, and returns the sorted values and, as I64, the index along
// axis each came from (PyTorch's torch.sort with stable=True): equal
// elements keep their order, NaN sorts after every number ascending and
// before every number descending, -0 equals +0. The values' gradient flows
// to the elements they came from. A rank-0 tensor is its own sort, with
// index 0. It panics with an *Error when the axis is out of range.
func (x *Tensor) Sort(axis int, descending bool) (values, indices *Tensor) {
	x.need("sort", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		v, i := x.Reshape(1).Sort(0, descending)
		return v.Reshape(), i.Reshape()
	}
	a := x.axis("sort", axis)
	indices = x.sortIndices("sort", a, descending)
	return x.Gather(a, indices), indices
}

// Argsort returns the I64 indices that sort x along axis (Sort's second
// result; PyTorch's argsort with stable=True).
func (x *Tensor) Argsort(axis int, descending bool) *Tensor {
	_, i := x.Sort(axis, descending)
	return i
}

// TopK returns the k largest (largest) or smallest elements of x along
// axis and their I64 indices, in sorted order (largest first for largest)
// — PyTorch's torch.topk with sorted=True. NaN counts as larger than every
// number, as in PyTorch; among equal elements the earlier index comes
// first. The values' gradient flows to the selected elements. It panics
// with an *Error when k is negative or exceeds the axis, or the axis is out
// of range.
func (x *Tensor) TopK(k, axis int, largest bool) (values, indices *Tensor) {
	x.need("topk", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		v, i := x.Reshape(1).TopK(k, 0, largest)
		if k == 1 {
			return v.Reshape(), i.Reshape()
		}
		return v, i
	}
	a := x.axis("topk", axis)
	n := x.shape()[a]
	if k < 0 || k > n {
		fail("topk", []string{describe("x", x)}, "k %d must be in [0, %d]", k, n)
	}
	idx := x.sortIndices("topk", a, largest).Narrow(a, 0, k)
	return x.Gather(a, idx), idx
}

// MaxWithIndices returns the maximum of x along axis and its I64 index
// (PyTorch's torch.max(x, dim, keepdim)): the first maximal element, or
// the first NaN, whose value propagates. The values' gradient flows, whole,
// to that element. It panics with an *Error for an empty axis or an axis
// out of range.
func (x *Tensor) MaxWithIndices(axis int, keepDim bool) (values, indices *Tensor) {
	return x.extremeWithIndices("max", axis, keepDim, (*Tensor).Argmax)
}

// MinWithIndices is MaxWithIndices for the minimum (torch.min(x, dim)).
func (x *Tensor) MinWithIndices(axis int, keepDim bool) (values, indices *Tensor) {
	return x.extremeWithIndices("min", axis, keepDim, (*Tensor).Argmin)
}

func (x *Tensor) extremeWithIndices(op string, axis int, keepDim bool, arg func(*Tensor, int, bool) *Tensor) (values, indices *Tensor) {
	x.need(op, "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		return x, ZerosLike(x).castTo(I64)
	}
	a := x.axis(op, axis)
	if x.shape()[a] == 0 {
		fail(op, []string{describe("x", x)}, "axis %d is empty", a)
	}
	idx := arg(x.Inner(), a, true)
	if x.dev.autodiff {
		idx = idx.ToDevice(x.dev)
	}
	values = x.Gather(a, idx)
	if !keepDim {
		values, idx = values.Squeeze(a), idx.Squeeze(a)
	}
	return values, idx
}

// Kthvalue returns the k-th smallest element of x along axis (k from 1)
// and its I64 index (PyTorch's torch.kthvalue), NaN counting as larger
// than every number; the axis is removed unless keepDim. The gradient
// flows to the selected element. It panics with an *Error when k is not in
// [1, size] or the axis is out of range.
func (x *Tensor) Kthvalue(k, axis int, keepDim bool) (values, indices *Tensor) {
	x.need("kthvalue", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		if k != 1 {
			fail("kthvalue", []string{describe("x", x)}, "k %d must be 1 for a rank-0 tensor", k)
		}
		return x, ZerosLike(x).castTo(I64)
	}
	a := x.axis("kthvalue", axis)
	n := x.shape()[a]
	if k < 1 || k > n {
		fail("kthvalue", []string{describe("x", x)}, "k %d must be in [1, %d]", k, n)
	}
	idx := x.sortIndices("kthvalue", a, false).Narrow(a, k-1, 1)
	values = x.Gather(a, idx)
	if !keepDim {
		values, idx = values.Squeeze(a), idx.Squeeze(a)
	}
	return values, idx
}

// Median returns the lower median of x along axis — the ⌊(n−1)/2⌋-th
// smallest of n elements — and its I64 index (PyTorch's torch.median with
// dim); where the axis holds a NaN the result is NaN with the index of its
// first NaN, as PyTorch. The axis is removed unless keepDim. The gradient
// flows to the selected element. It panics with an *Error for an empty
// axis or an axis out of range.
func (x *Tensor) Median(axis int, keepDim bool) (values, indices *Tensor) {
	x.need("median", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		return x, ZerosLike(x).castTo(I64)
	}
	a := x.axis("median", axis)
	n := x.shape()[a]
	if n == 0 {
		fail("median", []string{describe("x", x)}, "axis %d is empty", a)
	}
	order := x.sortIndices("median", a, false) // NaN last, in their order
	one := append([]int{}, x.shape()...)
	one[a] = 1
	pos := FullDType(one, float64((n-1)/2), I64, x.dev.Inner())
	if x.DType().IsFloat() {
		count := x.Inner().IsNaN().SumAxis(a, true).castTo(I64) // NaNs per row
		pos = Where(count.GtScalar(0), count.Neg().AddScalar(float64(n)), pos)
	}
	if x.dev.autodiff {
		pos = pos.ToDevice(x.dev)
	}
	idx := order.Gather(a, pos)
	values = x.Gather(a, idx)
	if !keepDim {
		values, idx = values.Squeeze(a), idx.Squeeze(a)
	}
	return values, idx
}
