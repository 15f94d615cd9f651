package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
)

// Reshape returns x with a new shape of equal element count: a view when
// x's strides allow it (as PyTorch's view), else a contiguous copy.
func (be *Backend) Reshape(x backend.Tensor, shape []int) backend.Tensor {
	t := asTensor(x)
	shape = append([]int{}, shape...)
	if st := viewStrides(t.shape, t.strides, shape); st != nil {
		return &Tensor{dtype: t.dtype, shape: shape, strides: st, offset: t.offset, data: t.data}
	}
	return newTensor(t.dtype, shape, t.dense())
}

// viewStrides returns strides that give the new shape the same elements as
// (shape, strides) in row-major order, or nil when no strides can (the
// algorithm of PyTorch's computeStride).
func viewStrides(shape, strides, newShape []int) []int {
	out := make([]int, len(newShape))
	n := numel(shape)
	if n == 0 || len(shape) == 0 {
		copy(out, layout.RowMajorStrides(newShape))
		return out
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
				return nil
			}
			if d > 0 {
				chunk = strides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil
	}
	return out
}

// Permute reorders axes (result axis i is x's axis axes[i]); a view.
func (be *Backend) Permute(x backend.Tensor, axes []int) backend.Tensor {
	t := asTensor(x)
	shape := make([]int, len(axes))
	st := make([]int, len(axes))
	for i, a := range axes {
		shape[i], st[i] = t.shape[a], t.strides[a]
	}
	return &Tensor{dtype: t.dtype, shape: shape, strides: st, offset: t.offset, data: t.data}
}

// Expand broadcasts size-1 axes and new leading axes to shape; a view with
// stride 0 on those axes.
func (be *Backend) Expand(x backend.Tensor, shape []int) backend.Tensor {
	t := asTensor(x)
	shape = append([]int{}, shape...)
	return &Tensor{dtype: t.dtype, shape: shape, strides: broadcastStrides(t.shape, t.strides, shape), offset: t.offset, data: t.data}
}

// Slice takes ranges[i] (Start, End clamped to [0, size], Step >= 1) along
// each axis i; a view.
func (be *Backend) Slice(x backend.Tensor, ranges []backend.Range) backend.Tensor {
	t := asTensor(x)
	shape := append([]int{}, t.shape...)
	st := append([]int{}, t.strides...)
	off := t.offset
	for i, r := range ranges {
		shape[i] = r.Len()
		if shape[i] > 0 {
			off += r.Start * t.strides[i]
		}
		st[i] = t.strides[i] * r.Step
	}
	return &Tensor{dtype: t.dtype, shape: shape, strides: st, offset: off, data: t.data}
}

// Flip reverses the listed axes; a view with negated strides.
func (be *Backend) Flip(x backend.Tensor, axes []int) backend.Tensor {
	t := asTensor(x)
	st := append([]int{}, t.strides...)
	off := t.offset
	for _, a := range axes {
		if t.shape[a] > 0 {
			off += (t.shape[a] - 1) * st[a]
		}
		st[a] = -st[a]
	}
	return &Tensor{dtype: t.dtype, shape: append([]int{}, t.shape...), strides: st, offset: off, data: t.data}
}
