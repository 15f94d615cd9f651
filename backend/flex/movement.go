package flex

import (
	"fmt"

	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindPad, (*Backend).pad, nil)
	kernels.Set(ir.KindCat, (*Backend).cat, nil)
	kernels.Set(ir.KindGather, (*Backend).gather, nil)
	kernels.Set(ir.KindScatterAdd, (*Backend).scatterAdd, nil)
	kernels.Set(ir.KindIndexSelect, (*Backend).indexSelect, nil)
}

// pad pads axis i of In[0] with op.Pad(i) elements before and after, all
// equal to op.Scalars[0] converted to x's dtype as Full does (PyTorch's
// constant pad, one pair per axis in axis order).
func (be *Backend) pad(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	out := fullStorage(t.dtype, numel(op.Shape), op.Scalars[0])
	res := newTensor(t.dtype, op.Shape, out)
	off := 0
	for i := range t.shape {
		before, _ := op.Pad(i)
		off += before * res.strides[i]
	}
	out.copyFrom(t.data, t.shape, res.strides, off, t.strides, t.offset)
	return ir.One(res)
}

// cat concatenates op.Xs (one dtype) along op.Axis (PyTorch's cat); the
// other axes agree.
func (be *Backend) cat(op ir.Op) ir.Outputs {
	first := asTensor(op.Xs[0])
	out := allocStorage(first.dtype, numel(op.Shape))
	res := newTensor(first.dtype, op.Shape, out)
	off := 0
	for _, x := range op.Xs {
		t := asTensor(x)
		out.copyFrom(t.data, t.shape, res.strides, off, t.strides, t.offset)
		off += t.shape[op.Axis] * res.strides[op.Axis]
	}
	return ir.One(res)
}

// indexOffsets reads an I64 index tensor, checks each value against size
// (panicking with an error naming op, the value and the size when one is
// out of [0, size)), and returns value*stride for each element in
// row-major order.
func indexOffsets(op string, index *Tensor, size, stride int) []int {
	idx := ints[int64](index.dense())
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

// gather returns out with index's shape, out[i][j][k] = x[i][index[i][j][k]][k]
// for axis 1 and likewise for other axes (PyTorch's gather); In[0] is x,
// In[1] the I64 index of x's rank. An index outside [0, x.shape[axis])
// panics with an error naming the value and the size.
func (be *Backend) gather(op ir.Op) ir.Outputs {
	t, ix := asTensor(op.In[0]), asTensor(op.In[1])
	axis := op.Axis
	add := indexOffsets("gather", ix, t.shape[axis], t.strides[axis])
	pos := positions(ix.shape, t.strides, t.offset, axis, add, layout.RowMajorStrides(ix.shape))
	return ir.One(newTensor(t.dtype, op.Shape, t.data.take(pos)))
}

// scatterAdd returns a copy of In[0] (x) with In[2] (src) [i][j][k] added
// at [i][index[i][j][k]][k] for axis 1 and likewise for other axes
// (PyTorch's scatter_add); In[1] (index, I64) and src have equal shapes.
// F16 and BF16 accumulate in float32 and round once; integers wrap; Bool
// ors. An index outside [0, x.shape[axis]) panics with an error naming the
// value and the size.
func (be *Backend) scatterAdd(op ir.Op) ir.Outputs {
	t, ix, sr := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	axis := op.Axis
	var out, vals storage
	if isHalf(t.dtype) {
		out = decodeHalf(t.dtype, ints[uint16](t.dense()))
		vals = decodeHalf(sr.dtype, ints[uint16](sr.dense()))
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
	return ir.One(fromCompute(t.dtype, op.Shape, out))
}

// indexSelect picks the entries of In[0] along op.Axis named by In[1]
// (rank-1 I64), PyTorch's index_select: op.Shape is x's shape with
// shape[axis] = len(index). An index outside [0, x.shape[axis]) panics
// with an error naming the value and the size.
func (be *Backend) indexSelect(op ir.Op) ir.Outputs {
	t, ix := asTensor(op.In[0]), asTensor(op.In[1])
	axis := op.Axis
	add := indexOffsets("index_select", ix, t.shape[axis], t.strides[axis])
	addSt := make([]int, len(op.Shape))
	addSt[axis] = 1
	pos := positions(op.Shape, t.strides, t.offset, axis, add, addSt)
	return ir.One(newTensor(t.dtype, op.Shape, t.data.take(pos)))
}
