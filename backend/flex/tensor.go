package flex

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// Tensor is the flex backend's tensor: typed storage plus a strided layout
// (a host tensor as backend/internal/host describes it). Element
// i0,i1,... of the tensor lives at storage index
// offset + i0*strides[0] + i1*strides[1] + ... Strides may be zero
// (expanded axes) or negative (flipped axes). The storage is shared between
// views and never modified after creation.
type Tensor struct {
	dtype   backend.DType
	shape   []int
	strides []int
	offset  int
	data    storage
	// own holds the strides of tensors of rank up to inlineRank, so that
	// such a tensor is one allocation.
	own [inlineRank]int
}

// inlineRank is the largest rank whose strides live inside the Tensor.
const inlineRank = 4

// Shape is the logical shape (row-major; nil or empty for rank 0). Callers must not
// modify it.
func (t *Tensor) Shape() []int { return t.shape }

// DType is the element type.
func (t *Tensor) DType() backend.DType { return t.dtype }

// String describes the tensor's dtype, shape and layout, for debugging.
func (t *Tensor) String() string {
	return fmt.Sprintf("flex.Tensor(%v %v strides=%v offset=%d)", t.dtype, t.shape, t.strides, t.offset)
}

// asTensor converts a backend.Tensor made by this package; anything else is
// a programming error of the caller.
func asTensor(x ir.Tensor) *Tensor {
	t, ok := x.(*Tensor)
	if !ok {
		panic(fmt.Errorf("flex: tensor of type %T was not made by the flex backend: %w", x, backend.ErrInvalidDevice))
	}
	return t
}

// newView returns a tensor of dtype dt and shape over data starting at
// offset, with strides of len(shape) for the caller to fill in. The tensor
// keeps shape, which must not be modified afterwards.
func newView(dt backend.DType, shape []int, data storage, offset int) *Tensor {
	t := &Tensor{dtype: dt, shape: shape, offset: offset, data: data}
	if r := len(shape); r <= inlineRank {
		t.strides = t.own[:r:r]
	} else {
		t.strides = make([]int, r)
	}
	return t
}

// newTensor wraps contiguous storage of exactly prod(shape) elements. The
// tensor keeps shape (an op's output shape, or a slice nobody modifies).
func newTensor(dt backend.DType, shape []int, data storage) *Tensor {
	t := newView(dt, shape, data, 0)
	rowMajor(t.strides, shape)
	return t
}

// tensorWith is a tensor allocated together with the slice its storage
// handle points to.
type tensorWith[S any] struct {
	t   Tensor
	hdr S
}

// newTensorOf wraps a contiguous slice (an fvec, ivec or bvec) of exactly
// prod(shape) elements like newTensor, in one allocation for the tensor
// and its storage handle.
func newTensorOf[S any, P interface {
	*S
	storage
}](dt backend.DType, shape []int, s S) *Tensor {
	a := &tensorWith[S]{hdr: s}
	a.t.initContiguous(dt, shape, P(&a.hdr))
	return &a.t
}

// initContiguous sets t to the contiguous row-major layout of shape over
// data (strides inside t up to inlineRank).
func (t *Tensor) initContiguous(dt backend.DType, shape []int, data storage) {
	t.dtype, t.shape, t.data = dt, shape, data
	if r := len(shape); r <= inlineRank {
		t.strides = t.own[:r:r]
	} else {
		t.strides = make([]int, r)
	}
	rowMajor(t.strides, shape)
}

// rowMajor fills st with the contiguous row-major strides of shape.
func rowMajor(st, shape []int) {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
}

// numel is the number of elements of a shape (1 for rank 0).
func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// isContiguous reports whether the tensor's elements are data[offset :
// offset+numel] in row-major order (axes of size 1 may have any stride).
func (t *Tensor) isContiguous() bool { return layout.IsRowMajor(t.shape, t.strides) }

// dense returns the tensor's elements as contiguous row-major storage of
// exactly numel elements: the storage itself (or a sub-slice) when the
// layout allows, else a copy.
func (t *Tensor) dense() storage {
	n := numel(t.shape)
	if n == 0 {
		return t.data.alloc(0)
	}
	if t.isContiguous() {
		if t.offset == 0 && t.data.length() == n {
			return t.data
		}
		return t.data.sub(t.offset, t.offset+n)
	}
	out := t.data.alloc(n)
	out.copyFrom(t.data, t.shape, layout.RowMajorStrides(t.shape), 0, t.strides, t.offset)
	return out
}

// contiguous returns t itself when contiguous with zero offset, else a
// contiguous copy of the same dtype.
func (t *Tensor) contiguous() *Tensor {
	if t.isContiguous() && t.offset == 0 && t.data.length() == numel(t.shape) {
		return t
	}
	return newTensor(t.dtype, t.shape, t.dense())
}

// broadcastStrides returns strides that view a tensor of shape/strides as
// the larger shape out (stride 0 on new and expanded axes).
func broadcastStrides(shape, strides, out []int) []int {
	st := make([]int, len(out))
	lead := len(out) - len(shape)
	for i := range shape {
		if shape[i] == out[lead+i] {
			st[lead+i] = strides[i]
		}
	}
	return st
}
