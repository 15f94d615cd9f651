package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindReshape, execReshape, nil)
	kernels.Set(ir.KindPermute, (*Backend).permute, nil)
	kernels.Set(ir.KindExpand, execExpand, nil)
	kernels.Set(ir.KindSlice, (*Backend).slice, nil)
	kernels.Set(ir.KindFlip, (*Backend).flip, nil)
}

// execReshape is the kernel of KindReshape: op.In[0] viewed as op.Shape.
func execReshape(b *Backend, op ir.Op) ir.Outputs {
	return ir.One(b.reshape(tensorOf(op.In[0]), op.Shape))
}

// reshape returns t with shape (equal element count, kept by the result):
// a view sharing t's buffer when t is contiguous or its strides allow
// (PyTorch's view rules), else a view of Contiguous(t).
func (b *Backend) reshape(t *Tensor, shape []int) *Tensor {
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

// permute is the kernel of KindPermute: the view of op.In[0] whose axis i
// is the input's axis op.Ints[i] (op.Shape).
func (b *Backend) permute(op ir.Op) ir.Outputs {
	return ir.One(b.permuteView(tensorOf(op.In[0]), op.Ints, op.Shape))
}

// permuteView returns the view of t whose axis i is t's axis axes[i];
// shape is that view's shape (shape[i] = t's size on axis axes[i]), kept
// by the result.
func (b *Backend) permuteView(t *Tensor, axes, shape []int) *Tensor {
	strides := make([]int, len(axes))
	for i, a := range axes {
		strides[i] = t.strides[a]
	}
	return t.view(shape, strides, t.offset)
}

// execExpand is the kernel of KindExpand: op.In[0] broadcast to op.Shape.
func execExpand(b *Backend, op ir.Op) ir.Outputs {
	return ir.One(b.expand(tensorOf(op.In[0]), op.Shape))
}

// expand returns the view of t broadcast to shape (kept by the result): new
// leading axes and expanded size-1 axes get stride 0.
func (b *Backend) expand(t *Tensor, shape []int) *Tensor {
	strides := make([]int, len(shape))
	lead := len(shape) - len(t.shape)
	for i := range t.shape {
		if t.shape[i] == shape[lead+i] {
			strides[lead+i] = t.strides[i]
		}
	}
	return t.view(shape, strides, t.offset)
}

// slice is the kernel of KindSlice: the view of op.In[0] selecting
// op.Attrs.Ranges[i] along axis i (clamped, Step >= 1), of shape op.Shape.
func (b *Backend) slice(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	strides := make([]int, len(t.shape))
	off := t.offset
	for i, r := range op.Attrs.Ranges {
		strides[i] = t.strides[i] * r.Step
		if op.Shape[i] > 0 {
			off += r.Start * t.strides[i]
		}
	}
	return ir.One(t.view(op.Shape, strides, off))
}

// flip is the kernel of KindFlip: the view of op.In[0] with the axes
// op.Ints reversed (negative strides).
func (b *Backend) flip(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	strides := append([]int(nil), t.strides...)
	off := t.offset
	for _, a := range op.Ints {
		if t.shape[a] > 0 {
			off += (t.shape[a] - 1) * t.strides[a]
		}
		strides[a] = -strides[a]
	}
	return ir.One(t.view(op.Shape, strides, off))
}
