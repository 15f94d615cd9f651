package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
)

// Reshape returns x with shape (equal element count): a view sharing x's
// buffer when x is contiguous or its strides allow (PyTorch's view rules),
// else a view of Contiguous(x).
func (b *Backend) Reshape(x backend.Tensor, shape []int) backend.Tensor {
	t := x.(*Tensor)
	shape = append([]int(nil), shape...)
	if st, ok := reshapeStrides(t.shape, t.strides, shape); ok {
		return t.view(shape, st, t.offset)
	}
	c := b.Contiguous(t)
	return c.view(shape, layout.RowMajorStrides(shape), c.offset)
}

// reshapeStrides computes strides for viewing (shape, strides) as newShape
// without copying, as PyTorch's computeStride: each run of old axes that is
// contiguous among itself maps onto the new axes of the same element count.
func reshapeStrides(shape, strides, newShape []int) ([]int, bool) {
	out := make([]int, len(newShape))
	n := backend.NumElements(shape)
	if n == 0 {
		return layout.RowMajorStrides(newShape), true
	}
	viewD := len(newShape) - 1
	chunkBase := 1
	if len(strides) > 0 {
		chunkBase = strides[len(strides)-1]
	}
	tensorNumel, viewNumel := 1, 1
	for d := len(shape) - 1; d >= 0; d-- {
		tensorNumel *= shape[d]
		if d == 0 || (shape[d-1] != 1 && strides[d-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				out[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if d > 0 {
				chunkBase = strides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		// Leading size-1 axes of the new shape.
		for ; viewD >= 0; viewD-- {
			if newShape[viewD] != 1 {
				return nil, false
			}
			out[viewD] = 1
		}
	}
	return out, true
}

// Permute returns the view whose axis i is x's axis axes[i].
func (b *Backend) Permute(x backend.Tensor, axes []int) backend.Tensor {
	t := x.(*Tensor)
	shape := make([]int, len(axes))
	strides := make([]int, len(axes))
	for i, a := range axes {
		shape[i], strides[i] = t.shape[a], t.strides[a]
	}
	return t.view(shape, strides, t.offset)
}

// Expand returns the view of x broadcast to shape: new leading axes and
// expanded size-1 axes get stride 0.
func (b *Backend) Expand(x backend.Tensor, shape []int) backend.Tensor {
	t := x.(*Tensor)
	shape = append([]int(nil), shape...)
	strides := make([]int, len(shape))
	lead := len(shape) - len(t.shape)
	for i := range t.shape {
		if t.shape[i] == shape[lead+i] {
			strides[lead+i] = t.strides[i]
		}
	}
	return t.view(shape, strides, t.offset)
}

// Slice returns the view selecting ranges[i] along axis i (Start/End
// clamped, Step >= 1).
func (b *Backend) Slice(x backend.Tensor, ranges []backend.Range) backend.Tensor {
	t := x.(*Tensor)
	shape := make([]int, len(t.shape))
	strides := make([]int, len(t.shape))
	off := t.offset
	for i, r := range ranges {
		shape[i] = r.Len()
		strides[i] = t.strides[i] * r.Step
		if shape[i] > 0 {
			off += r.Start * t.strides[i]
		}
	}
	return t.view(shape, strides, off)
}

// Flip returns the view with the listed axes reversed (negative strides).
func (b *Backend) Flip(x backend.Tensor, axes []int) backend.Tensor {
	t := x.(*Tensor)
	strides := append([]int(nil), t.strides...)
	off := t.offset
	for _, a := range axes {
		if t.shape[a] > 0 {
			off += (t.shape[a] - 1) * t.strides[a]
		}
		strides[a] = -strides[a]
	}
	return t.view(append([]int(nil), t.shape...), strides, off)
}
