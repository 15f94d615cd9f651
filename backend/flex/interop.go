package flex

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// This file lets other backends built on flex (backend/cpu) read flex
// tensors' float and bool storage without copying and wrap buffers they
// computed as flex tensors, so that every op they do not accelerate can
// still run on the flex kernels.

// Float32Strided returns the float32 storage t views (the whole buffer,
// shared with other views; F32 and Flex32 only), t's strides and storage
// offset, with ok false for other dtypes. Element (i0, i1, ...) is
// data[offset + Σ ik·strides[k]]. Callers must not modify data or strides.
func (t *Tensor) Float32Strided() (data []float32, strides []int, offset int, ok bool) {
	s, ok := t.data.(fvec[float32])
	return s, t.strides, t.offset, ok
}

// Float64Strided is Float32Strided for F64 tensors.
func (t *Tensor) Float64Strided() (data []float64, strides []int, offset int, ok bool) {
	s, ok := t.data.(fvec[float64])
	return s, t.strides, t.offset, ok
}

// BoolStrided is Float32Strided for Bool tensors.
func (t *Tensor) BoolStrided() (data []bool, strides []int, offset int, ok bool) {
	s, ok := t.data.(bvec)
	return s, t.strides, t.offset, ok
}

// ContiguousFloat32 returns t's elements in row-major order without
// copying (a sub-slice of exactly numel elements, which callers must not
// modify), or false when t is not F32/Flex32 or its layout is not
// contiguous.
func (t *Tensor) ContiguousFloat32() ([]float32, bool) {
	s, ok := t.data.(fvec[float32])
	if !ok || !t.isContiguous() {
		return nil, false
	}
	n := numel(t.shape)
	return s[t.offset : t.offset+n : t.offset+n], true
}

// ContiguousFloat64 is ContiguousFloat32 for F64 tensors.
func (t *Tensor) ContiguousFloat64() ([]float64, bool) {
	s, ok := t.data.(fvec[float64])
	if !ok || !t.isContiguous() {
		return nil, false
	}
	n := numel(t.shape)
	return s[t.offset : t.offset+n : t.offset+n], true
}

// ContiguousBool is ContiguousFloat32 for Bool tensors.
func (t *Tensor) ContiguousBool() ([]bool, bool) {
	s, ok := t.data.(bvec)
	if !ok || !t.isContiguous() {
		return nil, false
	}
	n := numel(t.shape)
	return s[t.offset : t.offset+n : t.offset+n], true
}

// NewFloat32 wraps data (row-major, len(data) == product of shape) as a
// contiguous tensor of dtype dt, which must be F32 or Flex32. The tensor
// takes ownership: data must not be modified afterwards. It panics on a
// length mismatch or another dtype.
func NewFloat32(dt backend.DType, shape []int, data []float32) *Tensor {
	if dt != backend.F32 && dt != backend.Flex32 {
		panic(fmt.Sprintf("flex: NewFloat32 with dtype %v", dt))
	}
	checkLen(shape, len(data))
	return newTensor(dt, shape, fvec[float32](data))
}

// NewFloat64 wraps data as a contiguous F64 tensor (see NewFloat32).
func NewFloat64(shape []int, data []float64) *Tensor {
	checkLen(shape, len(data))
	return newTensor(backend.F64, shape, fvec[float64](data))
}

// NewBool wraps data as a contiguous Bool tensor (see NewFloat32).
func NewBool(shape []int, data []bool) *Tensor {
	checkLen(shape, len(data))
	return newTensor(backend.Bool, shape, bvec(data))
}

func checkLen(shape []int, n int) {
	if numel(shape) != n {
		panic(fmt.Sprintf("flex: %d elements for shape %v", n, shape))
	}
}

// AsTensor returns x as a flex tensor, panicking with an error wrapping
// backend.ErrInvalidDevice when another backend made it.
func AsTensor(x backend.Tensor) *Tensor { return asTensor(x) }
