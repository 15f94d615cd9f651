package cuda

import (
	"github.com/emberml/ember/backend"
)

// Tensor is a CUDA tensor: a view (shape, strides and offset in elements)
// of a device Buffer. Views made by Reshape, Permute, Expand, Slice and Flip
// share the buffer; strides may be 0 (expanded axes) or negative (flipped
// axes). Tensors are immutable once an op returns them.
type Tensor struct {
	buf     *Buffer
	shape   []int
	strides []int
	offset  int
	dtype   backend.DType
}

// Shape returns the logical shape (do not modify).
func (t *Tensor) Shape() []int { return t.shape }

// DType returns the element type.
func (t *Tensor) DType() backend.DType { return t.dtype }

// Strides returns the strides in elements (do not modify).
func (t *Tensor) Strides() []int { return t.strides }

// Offset returns the offset of the first element in the buffer, in elements.
func (t *Tensor) Offset() int { return t.offset }

// Buffer returns the device buffer the tensor views.
func (t *Tensor) Buffer() *Buffer { return t.buf }

// NumElements is the product of the shape (1 for rank 0).
func (t *Tensor) NumElements() int { return backend.NumElements(t.shape) }

// Ptr returns the device address of the element at the tensor's offset
// (element [0, 0, ...]); 0 for a tensor without storage (no elements).
// The address stays valid while t (or another view of its buffer) is
// reachable: pass the *Tensor itself to Launch, which keeps it alive until
// the launch is queued.
func (t *Tensor) Ptr() uint64 {
	if t.buf == nil || t.buf.blk == nil || t.buf.blk.ptr == 0 {
		return 0
	}
	return t.buf.blk.ptr + uint64(int64(t.offset)*int64(t.dtype.Size()))
}

// IsContiguous reports whether the tensor's elements are laid out
// row-major without gaps from Ptr() (axes of size 1 may have any stride).
func (t *Tensor) IsContiguous() bool {
	want := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] == 1 {
			continue
		}
		if t.strides[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}

// view returns a tensor sharing t's buffer with a new layout.
func (t *Tensor) view(shape, strides []int, offset int) *Tensor {
	return &Tensor{buf: t.buf, shape: shape, strides: strides, offset: offset, dtype: t.dtype}
}

// tensorOf asserts x is a CUDA tensor.
func tensorOf(x backend.Tensor) *Tensor { return x.(*Tensor) }
