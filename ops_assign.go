package ember

import (
	"encoding/binary"
	"slices"
)

// Functional assignment, index accumulation, index finding and sliding
// windows, composed from existing kinds.

// placeAt returns zeros of shape with v at the positions the resolved
// ranges select (the adjoint of Slice), built from Unsqueeze, Pad,
// Reshape and Narrow so that autodiff differentiates it: a stepped axis
// interleaves v with step−1 zeros, then the axis is padded to its extent.
func placeAt(v *Tensor, shape []int, ranges []Range) *Tensor {
	for a, r := range ranges {
		k := r.Len()
		n := shape[a]
		if k > 1 {
			v = dilateZeros(v, a, r.Step)
		}
		span := v.shape()[a]
		pads := make([]int, 2*len(shape))
		pads[2*(len(shape)-1-a)] = r.Start
		pads[2*(len(shape)-1-a)+1] = n - r.Start - span
		v = v.Pad(pads, 0)
	}
	return v
}

// SliceAssign returns a copy of x with the region the ranges select (as
// Slice selects it: Python bounds, steps >= 1, axes past len(ranges)
// whole) replaced by value, broadcast to the region's shape and cast to
// x's dtype — Burn's slice_assign, PyTorch's x[ranges] = value without
// mutating x. It is differentiable in both: x's gradient is zero inside
// the region, value's is the region of the output gradient (summed over
// broadcast axes). It panics with an *Error when value does not broadcast
// to the region or the tensors are on different devices.
func (x *Tensor) SliceAssign(value *Tensor, ranges ...Range) *Tensor {
	x.need("slice_assign", "x")
	value.need("slice_assign", "value")
	if !x.dev.Equal(value.dev) {
		fail("slice_assign", []string{describe("x", x), describe("value", value)}, "operands on different devices")
	}
	full, _ := x.sliceRanges("slice_assign", ranges)
	region := make([]int, len(full))
	for i, r := range full {
		region[i] = r.Len()
		if region[i] == 0 {
			return x
		}
	}
	vs := value.shape()
	if _, ok := broadcastTo(vs, region); !ok {
		fail("slice_assign", []string{describe("x", x), describe("value", value)}, "value does not broadcast to the region's shape %v", region)
	}
	v := value.castTo(x.DType())
	if !slices.Equal(vs, region) {
		v = v.Expand(region...)
	}
	shape := x.shape()
	placed := placeAt(v, shape, full)
	inner := x.dev.Inner()
	mask := placeAt(FullDType(region, 1, U8, inner), shape, full).GtScalar(0)
	return Where(mask, placed, x)
}

// broadcastTo reports whether shape s broadcasts to t (NumPy rules, t
// fixed): s is no longer than t and each of its sizes is 1 or t's.
func broadcastTo(s, t []int) ([]int, bool) {
	if len(s) > len(t) {
		return nil, false
	}
	off := len(t) - len(s)
	for i, n := range s {
		if n != 1 && n != t[off+i] {
			return nil, false
		}
	}
	return t, true
}

// IndexAdd returns a copy of x with the slices of source added along axis
// at the positions index names: out[..., index[i], ...] += source[..., i,
// ...] (PyTorch's index_add with alpha 1). index is a rank-1 integer
// tensor; source has x's shape except along axis, where it has
// len(index) entries; repeated indices accumulate. It is differentiable in
// x and source. Out-of-range indices panic with an *Error (or, on devices
// that check indices themselves, fail the next Sync or read). It panics
// with an *Error for mismatched shapes or dtypes.
func (x *Tensor) IndexAdd(axis int, index, source *Tensor) *Tensor {
	x.need("index_add", "x")
	index.need("index_add", "index")
	source.need("index_add", "source")
	a := x.axis("index_add", axis)
	ops := []string{describe("x", x), describe("index", index), describe("source", source)}
	if index.Rank() != 1 || !index.DType().IsInt() {
		fail("index_add", ops, "index must be a rank-1 integer tensor")
	}
	want := slices.Clone(x.shape())
	want[a] = index.Dim(0)
	if !slices.Equal(source.shape(), want) {
		fail("index_add", ops, "source must have shape %v", want)
	}
	if source.DType() != x.DType() {
		fail("index_add", ops, "source must have x's dtype %v", x.DType())
	}
	bshape := make([]int, x.Rank())
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[a] = index.Dim(0)
	idx := index.Reshape(bshape...).Expand(want...)
	return x.ScatterAdd(a, idx, source)
}

// Argwhere returns the indices of x's non-zero elements (true for Bool;
// NaN counts as non-zero) as an integer tensor [n, rank] in the device's
// int dtype, in row-major order (PyTorch's argwhere and nonzero, Burn's
// argwhere). Its size depends on the values, so it reads x to the host;
// on a device whose data cannot be read (capture) it panics with that
// error as an *Error. The result is not differentiable.
func (x *Tensor) Argwhere() *Tensor {
	x.need("argwhere", "x")
	b := x.nonZero("argwhere")
	d, err := b.Inner().ToData()
	if err != nil {
		panic(&Error{Op: "argwhere", Operands: []string{describe("x", x)}, Msg: "cannot read the tensor", Err: err})
	}
	shape := x.shape()
	rank := len(shape)
	idx := make([]int, rank)
	var out []int64
	n := 0
	for i := range numElementsOf(shape) {
		if boolAt(d, i) {
			unravelIndex(i, shape, idx)
			for _, v := range idx {
				out = append(out, int64(v))
			}
			n++
		}
	}
	return FromInts(out, []int{n, rank}, x.dev.Inner())
}

// Nonzero is Argwhere (PyTorch's torch.nonzero with as_tuple=False).
func (x *Tensor) Nonzero() *Tensor { return x.Argwhere() }

// numElementsOf is the product of shape's sizes.
func numElementsOf(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// unravelIndex writes the row-major multi-index of flat index i into idx.
func unravelIndex(i int, shape, idx []int) {
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = i % shape[k]
		i /= shape[k]
	}
}

// boolAt reads element i of Bool host data in any of its stores.
func boolAt(d *TensorData, i int) bool {
	switch len(d.Bytes) / max(numElementsOf(d.Shape), 1) {
	case 4:
		return binary.LittleEndian.Uint32(d.Bytes[4*i:]) != 0
	default:
		return d.Bytes[i] != 0
	}
}

// Unfold returns the windows of size elements along axis (negative counts
// from the end), taken every step elements, as a new last axis (PyTorch's
// Tensor.unfold): axis's size n becomes (n − size)/step + 1 windows and a
// trailing axis of size size holds each window. It is a gather (one
// IndexSelect), differentiable in x: overlapping windows accumulate their
// gradients. It panics with an *Error when size exceeds the axis, size is
// negative or step is not positive.
func (x *Tensor) Unfold(axis, size, step int) *Tensor {
	x.need("unfold", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		if size < 0 || size > 1 || step <= 0 {
			fail("unfold", []string{describe("x", x)}, "size %d and step %d must satisfy 0 <= size <= 1 and step > 0", size, step)
		}
		return x.Reshape(1).Unfold(0, size, step).Reshape(size)
	}
	a := x.axis("unfold", axis)
	shape := x.shape()
	n := shape[a]
	if size < 0 || size > n || step <= 0 {
		fail("unfold", []string{describe("x", x)}, "size %d and step %d must satisfy 0 <= size <= %d and step > 0", size, step, n)
	}
	count := (n-size)/step + 1
	idx := make([]int64, 0, count*size)
	for w := range count {
		for j := range size {
			idx = append(idx, int64(w*step+j))
		}
	}
	inner := x.dev.Inner()
	sel := FromInts(idx, []int{count * size}, inner)
	if x.dev.autodiff {
		sel = sel.ToDevice(x.dev)
	}
	g := x.IndexSelect(a, sel) // axis a now holds count·size entries
	split := slices.Clone(shape)
	split[a] = count
	split = slices.Insert(split, a+1, size)
	g = g.Reshape(split...)
	perm := make([]int, 0, len(split))
	for i := range split {
		if i != a+1 {
			perm = append(perm, i)
		}
	}
	perm = append(perm, a+1)
	return g.Permute(perm...)
}

// MaskedScatter returns a copy of x with the positions where mask (Bool,
// broadcast to x) is true filled, in row-major order, by consecutive
// elements of source (any shape, x's dtype, read flattened) — PyTorch's
// masked_scatter. It is differentiable in x and source. The number of
// true positions is read to the host to check that source holds enough
// elements; it panics with an *Error when it does not, or for mismatched
// dtypes, devices or shapes.
func (x *Tensor) MaskedScatter(mask, source *Tensor) *Tensor {
	const op = "masked_scatter"
	x.need(op, "x")
	mask.need(op, "mask")
	source.need(op, "source")
	args := []string{describe("x", x), describe("mask", mask), describe("source", source)}
	if mask.DType() != Bool {
		fail(op, args, "mask must be a Bool tensor")
	}
	if source.DType() != x.DType() {
		fail(op, args, "source must have x's dtype %v", x.DType())
	}
	if _, ok := broadcastTo(mask.shape(), x.shape()); !ok {
		fail(op, args, "mask does not broadcast to x's shape %v", x.shape())
	}
	m := mask.Inner().Expand(x.shape()...).Reshape(-1)
	n := m.NumElements()
	if n == 0 {
		return x
	}
	pos := m.CumSum(0) // 1-based rank of each true position
	count := int(pos.Narrow(0, n-1, 1).Int64s()[0])
	if count > source.NumElements() {
		fail(op, args, "mask has %d true positions but source only %d elements", count, source.NumElements())
	}
	if count == 0 {
		return x
	}
	idx := pos.AddScalar(-1).ClampMin(0).castTo(I64)
	if x.dev.autodiff {
		idx, m = idx.ToDevice(x.dev), m.ToDevice(x.dev)
	}
	picked := source.Reshape(-1).Narrow(0, 0, count).Gather(0, idx)
	return Where(m, picked, x.Reshape(-1)).Reshape(x.shape()...)
}
