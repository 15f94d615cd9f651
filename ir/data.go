package ir

import "fmt"

// TensorData is a tensor's value on the host: its shape, its dtype and its
// elements as little-endian bytes in row-major order (Bool: one byte per
// element, 0 or 1; F16 as IEEE binary16 bits; BF16 as bfloat16 bits).
// len(Bytes) == product(Shape) * DType.Size().
type TensorData struct {
	Shape []int
	DType DType
	Bytes []byte
}

// NumElements is the product of the shape's sizes (1 for rank 0).
func NumElements(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// NewTensorData wraps bytes as TensorData after checking that their length
// matches the shape and dtype.
func NewTensorData(shape []int, dt DType, b []byte) (*TensorData, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("ember: tensor data: invalid dtype %v", dt)
	}
	want, err := NumBytes(shape, dt)
	if err != nil {
		return nil, fmt.Errorf("ember: tensor data: %v", err)
	}
	if len(b) != want {
		return nil, fmt.Errorf("ember: tensor data: shape %v of %v needs %d bytes, got %d", shape, dt, want, len(b))
	}
	return &TensorData{Shape: append([]int(nil), shape...), DType: dt, Bytes: b}, nil
}

// NumElements is the number of elements of the data.
func (d *TensorData) NumElements() int { return NumElements(d.Shape) }
