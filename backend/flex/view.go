package flex

import "github.com/emberml/ember/ir"

func init() {
	kernels.Set(ir.KindReshape, (*Backend).reshape, nil)
	kernels.Set(ir.KindPermute, (*Backend).permute, nil)
	kernels.Set(ir.KindExpand, (*Backend).expand, nil)
	kernels.Set(ir.KindSlice, (*Backend).slice, nil)
	kernels.Set(ir.KindFlip, (*Backend).flip, nil)
}

// reshape gives In[0] the shape op.Shape (equal element count): a view
// when x's strides allow it (as PyTorch's view), else a contiguous copy.
func (be *Backend) reshape(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	v := newView(t.dtype, op.Shape, t.data, t.offset)
	if viewStrides(t.shape, t.strides, op.Shape, v.strides) {
		return ir.One(v)
	}
	return ir.One(newTensor(t.dtype, op.Shape, t.dense()))
}

// viewStrides fills out (of len(newShape)) with strides that give the new
// shape the same elements as (shape, strides) in row-major order, or
// reports false when no strides can (the algorithm of PyTorch's
// computeStride).
func viewStrides(shape, strides, newShape, out []int) bool {
	n := numel(shape)
	if n == 0 || len(shape) == 0 {
		rowMajor(out, newShape)
		return true
	}
	viewD := len(newShape) - 1
	chunk := strides[len(shape)-1]
	tensorNumel, viewNumel := 1, 1
	for d := len(shape) - 1; d >= 0; d-- {
		tensorNumel *= shape[d]
		if d == 0 || (shape[d-1] != 1 && strides[d-1] != tensorNumel*chunk) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				out[viewD] = viewNumel * chunk
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return false
			}
			if d > 0 {
				chunk = strides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	return viewD == -1
}

// permute reorders axes (result axis i is x's axis op.Ints[i]); a view.
func (be *Backend) permute(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	v := newView(t.dtype, op.Shape, t.data, t.offset)
	for i, a := range op.Ints {
		v.strides[i] = t.strides[a]
	}
	return ir.One(v)
}

// expand broadcasts size-1 axes and new leading axes to op.Shape; a view
// with stride 0 on those axes.
func (be *Backend) expand(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	v := newView(t.dtype, op.Shape, t.data, t.offset)
	lead := len(op.Shape) - len(t.shape)
	for i := range v.strides {
		v.strides[i] = 0
	}
	for i, s := range t.shape {
		if s == op.Shape[lead+i] {
			v.strides[lead+i] = t.strides[i]
		}
	}
	return ir.One(v)
}

// slice takes op.Attrs.Ranges[i] (clamped, Step >= 1) along each axis i; a
// view.
func (be *Backend) slice(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	off := t.offset
	for i, r := range op.Attrs.Ranges {
		if op.Shape[i] > 0 {
			off += r.Start * t.strides[i]
		}
	}
	v := newView(t.dtype, op.Shape, t.data, off)
	for i, r := range op.Attrs.Ranges {
		v.strides[i] = t.strides[i] * r.Step
	}
	return ir.One(v)
}

// flip reverses the axes op.Ints; a view with negated strides.
func (be *Backend) flip(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	off := t.offset
	for _, a := range op.Ints {
		if t.shape[a] > 0 {
			off += (t.shape[a] - 1) * t.strides[a]
		}
	}
	v := newView(t.dtype, op.Shape, t.data, off)
	copy(v.strides, t.strides)
	for _, a := range op.Ints {
		v.strides[a] = -t.strides[a]
	}
	return ir.One(v)
}
