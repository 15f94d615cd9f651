package ndarray

import (
	"fmt"

	"github.com/emberml/ember/ir"
)

// The movement and indexing kinds. Permute, Expand, Slice and Flip
// return strided views of their input (Tensor.view); Reshape shares a
// contiguous input's slice. Pad, Cat and the indexing kinds build the
// index map of their result (element j reads input element idx[j], or is
// written at position pos[j]), the same code for every dtype.

// reshape gives In[0] the shape op.Shape (same element count, row-major
// order kept), sharing its slice (a strided view is made dense first).
func (be *Backend) reshape(op ir.Op) *Tensor {
	x := asTensor(op.In[0])
	return x.view(op.Shape, nil, 0)
}

// permute reorders In[0]'s axes: result axis k is input axis op.Ints[k].
func (be *Backend) permute(op ir.Op) *Tensor {
	x := asView(op.In[0])
	st, off := x.layout()
	pst := make([]int, len(op.Ints))
	for k, a := range op.Ints {
		pst[k] = st[a]
	}
	return x.view(op.Shape, pst, off)
}

// expand broadcasts In[0] to op.Shape (NumPy rules; stride 0 on the new
// and expanded axes).
func (be *Backend) expand(op ir.Op) *Tensor {
	x := asView(op.In[0])
	st, off := x.layout()
	return x.view(op.Shape, expandStrides(x.shape, st, op.Shape), off)
}

// slice selects op.Attrs.Ranges[k] (Start, Start+Step, ... < End, clamped)
// along every axis k of In[0].
func (be *Backend) slice(op ir.Op) *Tensor {
	x := asView(op.In[0])
	st, off := x.layout()
	for k, r := range op.Attrs.Ranges {
		if op.Shape[k] > 0 {
			off += r.Start * st[k]
		}
		st[k] *= r.Step
	}
	return x.view(op.Shape, st, off)
}

// flip reverses In[0] along the axes op.Ints (negative strides).
func (be *Backend) flip(op ir.Op) *Tensor {
	x := asView(op.In[0])
	st, off := x.layout()
	for _, a := range op.Ints {
		if x.shape[a] > 0 {
			off += (x.shape[a] - 1) * st[a]
		}
		st[a] = -st[a]
	}
	return x.view(op.Shape, st, off)
}

// place returns out with the tensors xs written into it, x k's elements at
// the positions pos[k] (each a strided window of out).
func place(out *Tensor, xs []*Tensor, pos [][]int) *Tensor {
	for k, x := range xs {
		put(out.f, pos[k], x.f)
		put(out.i, pos[k], x.i)
		put(out.u, pos[k], x.u)
		put(out.b, pos[k], x.b)
	}
	return out
}

// window returns the positions, in a contiguous tensor of shape outer, of
// the elements of a box of shape inner whose first corner is at the
// multi-index start.
func window(outer, inner, start []int) []int {
	st, off := rowMajor(outer), 0
	for k, s := range start {
		off += s * st[k]
	}
	return strided(inner, st, off)
}

// pad surrounds In[0] with op.Pad(k) elements before and after on every
// axis k, all equal to op.Scalars[0] converted to x's dtype as Full
// converts it (PyTorch's constant pad).
func (be *Backend) pad(op ir.Op) *Tensor {
	x := asTensor(op.In[0])
	start := make([]int, len(x.shape))
	for k := range start {
		start[k], _ = op.Pad(k)
	}
	return place(filled(op.Shape, x.dtype, op.Scalars[0]), []*Tensor{x}, [][]int{window(op.Shape, x.shape, start)})
}

// cat concatenates op.Xs (one dtype, equal sizes off the axis) along
// op.Axis.
func (be *Backend) cat(op ir.Op) *Tensor {
	xs := make([]*Tensor, len(op.Xs))
	pos := make([][]int, len(op.Xs))
	start := make([]int, len(op.Shape))
	for k, t := range op.Xs {
		xs[k] = asTensor(t)
		pos[k] = window(op.Shape, xs[k].shape, start)
		start[op.Axis] += xs[k].shape[op.Axis]
	}
	return place(filled(op.Shape, xs[0].dtype, 0), xs, pos)
}

// indexed returns, for every element of a tensor of shape in row-major
// order, the position in a contiguous tensor of shape xs of the element
// with the same multi-index except on axis, where it is index[sel[j]]
// (sel nil: the identity). An index outside [0, xs[axis]) panics with an
// error naming the op, the value and the size; the root package checks
// indices before the op reaches the backend.
func indexed(name string, xs, shape []int, axis int, index []int64, sel []int) []int {
	st := rowMajor(xs)
	ast := st[axis]
	st[axis] = 0
	pos := strided(shape, st, 0)
	for j := range pos {
		v := index[at(sel, j)]
		if v < 0 || v >= int64(xs[axis]) {
			panic(fmt.Errorf("ndarray: %s: index %d is out of range for an axis of size %d", name, v, xs[axis]))
		}
		pos[j] += int(v) * ast
	}
	return pos
}

// gather returns out of index's shape with, for axis 1,
// out[i][j][k] = x[i][index[i][j][k]][k] (PyTorch's gather); In[0] is x,
// In[1] the I64 index of x's rank.
func (be *Backend) gather(op ir.Op) *Tensor {
	x, ix := asTensor(op.In[0]), asTensor(op.In[1])
	return x.remap(op.Shape, indexed("gather", x.shape, ix.shape, op.Axis, ix.i, nil))
}

// indexSelect picks the entries of In[0] along op.Axis named by In[1]
// (rank-1 I64), PyTorch's index_select.
func (be *Backend) indexSelect(op ir.Op) *Tensor {
	x, ix := asTensor(op.In[0]), asTensor(op.In[1])
	unit := make([]int, len(op.Shape))
	unit[op.Axis] = 1
	return x.remap(op.Shape, indexed("index_select", x.shape, op.Shape, op.Axis, ix.i, strided(op.Shape, unit, 0)))
}

// scatterAdd returns a copy of In[0] (x) with In[2] (src) [i][j][k] added
// at [i][index[i][j][k]][k] for axis 1, likewise for other axes (PyTorch's
// scatter_add); In[1] (I64) and src have equal shapes. Elements add in
// row-major order of src: F64 in float64, the other float dtypes in
// float32 (as flex), rounded to the dtype at the end; integers wrap; Bool
// ors.
func (be *Backend) scatterAdd(op ir.Op) *Tensor {
	x, ix, src := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	pos := indexed("scatter_add", x.shape, ix.shape, op.Axis, ix.i, nil)
	out := x.remap(op.Shape, strided(x.shape, rowMajor(x.shape), 0)) // a copy
	wide := x.dtype == ir.F64
	for j, p := range pos {
		switch classOf(x.dtype) {
		case floatClass:
			if out.f[p] += src.f[j]; !wide {
				out.f[p] = float64(float32(out.f[p]))
			}
		case intClass:
			out.i[p] += src.i[j]
		case uintClass:
			out.u[p] += src.u[j]
		default:
			out.b[p] = out.b[p] || src.b[j]
		}
	}
	return out.normalize()
}
