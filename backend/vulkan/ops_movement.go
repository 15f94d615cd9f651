//go:build linux && (amd64 || arm64)

package vulkan

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindReshape, (*Backend).reshapeOp, nil)
	kernels.Set(ir.KindPermute, (*Backend).permute, nil)
	kernels.Set(ir.KindExpand, (*Backend).expand, nil)
	kernels.Set(ir.KindSlice, (*Backend).slice, nil)
	kernels.Set(ir.KindFlip, (*Backend).flip, nil)
	kernels.Set(ir.KindPad, (*Backend).pad, nil)
	kernels.Set(ir.KindCat, (*Backend).cat, nil)
}

// reshapeOp is the kernel of KindReshape: op.In[0] viewed as op.Shape
// where its strides allow (PyTorch's view rules), else a contiguous copy
// viewed so.
func (b *Backend) reshapeOp(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	if st, ok := reshapeStrides(t.shape, t.strides, op.Shape); ok {
		return ir.One(t.view(op.Shape, st, t.offset))
	}
	c := b.contiguous(t)
	return ir.One(c.view(op.Shape, layout.RowMajorStrides(op.Shape), c.offset))
}

// reshapeStrides computes strides for viewing (shape, strides) as newShape
// without copying, as PyTorch's computeStride (and backend/cuda).
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
	for ; viewD >= 0; viewD-- {
		if newShape[viewD] != 1 {
			return nil, false
		}
		out[viewD] = 1
	}
	return out, true
}

// permute is the kernel of KindPermute: the view whose axis i is the
// input's axis op.Ints[i].
func (b *Backend) permute(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	strides := make([]int, len(op.Ints))
	for i, a := range op.Ints {
		strides[i] = t.strides[a]
	}
	return ir.One(t.view(op.Shape, strides, t.offset))
}

// expand is the kernel of KindExpand: the view broadcast to op.Shape (new
// and expanded axes get stride 0).
func (b *Backend) expand(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	o := operandOf(t, op.Shape)
	return ir.One(t.view(op.Shape, o.strides, t.offset))
}

// slice is the kernel of KindSlice: the view selecting op.Attrs.Ranges[i]
// along axis i.
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

// flip is the kernel of KindFlip: the view with the axes op.Ints
// reversed (negative strides).
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

// pad is the kernel of KindPad: a tensor of op.Shape filled with
// op.Scalars[0] converted to the dtype as Full does, with op.In[0] copied
// into its interior.
func (b *Backend) pad(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	out := b.empty("pad", op.Shape, op.DType)
	if out.NumElements() == 0 {
		return ir.One(out)
	}
	b.fill(out.buf, 0, out.strides, out.shape, out.dtype, scalarBits(op.Scalars[0], out.dtype))
	off := 0
	for i := range t.shape {
		before, _ := op.Pad(i)
		off += before * out.strides[i]
	}
	b.copyInto(out.buf, off, out.strides, t)
	return ir.One(out)
}

// cat is the kernel of KindCat: op.Xs joined along op.Axis.
func (b *Backend) cat(op ir.Op) ir.Outputs {
	first := tensorOf(op.Xs[0])
	out := b.empty("cat", op.Shape, first.dtype)
	off := 0
	for _, x := range op.Xs {
		t := tensorOf(x)
		b.copyInto(out.buf, off, out.strides, t)
		off += t.shape[op.Axis] * out.strides[op.Axis]
	}
	return ir.One(out)
}

// scalarBits returns the storage bits of v converted to dt as Cast
// converts a float64 (ir's conversions: nearest even for floats,
// truncation and saturation for integers, v != 0 for Bool).
func scalarBits(v float64, dt backend.DType) uint64 {
	switch dt {
	case backend.F64:
		return math.Float64bits(v)
	case backend.F32, backend.Flex32:
		return uint64(math.Float32bits(float32(v)))
	case backend.F16:
		return uint64(backend.F16FromFloat64(v))
	case backend.BF16:
		return uint64(backend.BF16FromFloat64(v))
	case backend.Bool:
		if v != 0 {
			return 1
		}
		return 0
	case backend.U64:
		return satU64(v)
	}
	lo, hi := ir.IntRange(dt)
	x := math.Trunc(v)
	switch {
	case x != x:
		return 0
	case x <= float64(lo):
		return uint64(lo)
	case x >= float64(hi):
		return uint64(hi)
	}
	return uint64(int64(x))
}

func satU64(v float64) uint64 {
	x := math.Trunc(v)
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 18446744073709551615:
		return math.MaxUint64
	}
	return uint64(x)
}
