package flex

import (
	"fmt"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
)

// Tensor is the flex backend's tensor: typed storage plus a strided layout.
// Element i0,i1,... of the tensor lives at storage index
// offset + i0*strides[0] + i1*strides[1] + ... Strides may be zero
// (expanded axes) or negative (flipped axes). The storage is shared between
// views and never modified after creation.
type Tensor struct {
	dtype   backend.DType
	shape   []int
	strides []int
	offset  int
	data    storage
}

// Shape is the logical shape (row-major; empty for rank 0). Callers must not
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
func asTensor(x backend.Tensor) *Tensor {
	t, ok := x.(*Tensor)
	if !ok {
		panic(fmt.Errorf("flex: tensor of type %T was not made by the flex backend: %w", x, backend.ErrInvalidDevice))
	}
	return t
}

// newTensor wraps contiguous storage of exactly prod(shape) elements.
func newTensor(dt backend.DType, shape []int, data storage) *Tensor {
	shape = append([]int{}, shape...)
	return &Tensor{dtype: dt, shape: shape, strides: layout.RowMajorStrides(shape), data: data}
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
func (t *Tensor) isContiguous() bool {
	s := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] == 1 {
			continue
		}
		if t.strides[i] != s {
			return false
		}
		s *= t.shape[i]
	}
	return true
}

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
