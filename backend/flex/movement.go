package flex

import (
	"fmt"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
)

// Pad pads axis i of x with pads[i][0] elements before and pads[i][1] after,
// all equal to value converted to x's dtype as Full does (PyTorch's
// constant pad, one pair per axis in axis order).
func (be *Backend) Pad(x backend.Tensor, pads [][2]int, value float64) backend.Tensor {
	t := asTensor(x)
	shape := make([]int, len(t.shape))
	for i, s := range t.shape {
		shape[i] = s + pads[i][0] + pads[i][1]
	}
	out := fullStorage(t.dtype, numel(shape), value)
	st := layout.RowMajorStrides(shape)
	off := 0
	for i, p := range pads {
		off += p[0] * st[i]
	}
	out.copyFrom(t.data, t.shape, st, off, t.strides, t.offset)
	return newTensor(t.dtype, shape, out)
}

// Cat concatenates tensors of equal dtype along axis (PyTorch's cat); the
// other axes agree.
func (be *Backend) Cat(xs []backend.Tensor, axis int) backend.Tensor {
	first := asTensor(xs[0])
	shape := append([]int{}, first.shape...)
	shape[axis] = 0
	for _, x := range xs {
		shape[axis] += asTensor(x).shape[axis]
	}
	out := allocStorage(first.dtype, numel(shape))
	st := layout.RowMajorStrides(shape)
	off := 0
	for _, x := range xs {
		t := asTensor(x)
		out.copyFrom(t.data, t.shape, st, off, t.strides, t.offset)
		off += t.shape[axis] * st[axis]
	}
	return newTensor(first.dtype, shape, out)
}

// indexOffsets reads an I64 index tensor, checks each value against size
// (panicking with an error naming op, the value and the size when one is
// out of [0, size)), and returns value*stride for each element in
// row-major order.
func indexOffsets(op string, index *Tensor, size, stride int) []int {
	idx := index.dense().(ivec[int64])
	offs := make([]int, len(idx))
	for i, v := range idx {
		if v < 0 || v >= int64(size) {
			panic(fmt.Errorf("flex: %s: index %d is out of range for an axis of size %d", op, v, size))
		}
		offs[i] = int(v) * stride
	}
	return offs
}

// positions returns, for every element of shape in row-major order, the
// storage offset base + Σ_{d≠axis} i_d·strides[d] + add[j], where j walks
// add with addStrides.
func positions(shape, strides []int, base, axis int, add []int, addStrides []int) []int {
	st := append([]int{}, strides...)
	st[axis] = 0
	pos := make([]int, numel(shape))
	it := newIter(shape, []int{0, base, 0}, layout.RowMajorStrides(shape), st, addStrides)
	sx, sa := it.step(1), it.step(2)
	it.rows(func(o []int, n int) {
		ix, ia := o[1], o[2]
		for j := o[0]; j < o[0]+n; j++ {
			pos[j] = ix + add[ia]
			ix += sx
			ia += sa
		}
	})
	return pos
}

// Gather returns out with index's shape, out[i][j][k] = x[i][index[i][j][k]][k]
// for axis 1 and likewise for other axes (PyTorch's gather). index is I64
// of x's rank; an index outside [0, x.shape[axis]) panics with an error
// naming the value and the size.
func (be *Backend) Gather(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	t, ix := asTensor(x), asTensor(index)
	add := indexOffsets("gather", ix, t.shape[axis], t.strides[axis])
	pos := positions(ix.shape, t.strides, t.offset, axis, add, layout.RowMajorStrides(ix.shape))
	return newTensor(t.dtype, ix.shape, t.data.take(pos))
}

// ScatterAdd returns a copy of x with src[i][j][k] added at
// [i][index[i][j][k]][k] for axis 1 and likewise for other axes
// (PyTorch's scatter_add); index (I64) and src have equal shapes. F16 and
// BF16 accumulate in float32 and round once; integers wrap; Bool ors. An
// index outside [0, x.shape[axis]) panics with an error naming the value
// and the size.
func (be *Backend) ScatterAdd(x backend.Tensor, axis int, index, src backend.Tensor) backend.Tensor {
	t, ix, sr := asTensor(x), asTensor(index), asTensor(src)
	var out, vals storage
	if isHalf(t.dtype) {
		out = decodeHalf(t.dtype, t.dense().(ivec[uint16]))
		vals = decodeHalf(sr.dtype, sr.dense().(ivec[uint16]))
	} else {
		d := t.dense()
		out = d.alloc(d.length())
		out.copyFrom(d, []int{d.length()}, []int{1}, 0, []int{1}, 0)
		vals = sr.dense()
	}
	st := layout.RowMajorStrides(t.shape)
	add := indexOffsets("scatter_add", ix, t.shape[axis], st[axis])
	pos := positions(ix.shape, st, 0, axis, add, layout.RowMajorStrides(ix.shape))
	out.(numeric).scatterAdd(pos, vals)
	return fromCompute(t.dtype, t.shape, out)
}

// IndexSelect picks the entries of x along axis named by index (rank-1
// I64), PyTorch's index_select: the result has x's shape with
// shape[axis] = len(index). An index outside [0, x.shape[axis]) panics with
// an error naming the value and the size.
func (be *Backend) IndexSelect(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	t, ix := asTensor(x), asTensor(index)
	add := indexOffsets("index_select", ix, t.shape[axis], t.strides[axis])
	shape := append([]int{}, t.shape...)
	shape[axis] = len(add)
	addSt := make([]int, len(shape))
	addSt[axis] = 1
	pos := positions(shape, t.strides, t.offset, axis, add, addSt)
	return newTensor(t.dtype, shape, t.data.take(pos))
}
