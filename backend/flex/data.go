package flex

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// raw returns the storage as a plain Go slice ([]float32, []int64, []bool,
// ...), the form encoding/binary handles without reflection.
func raw(s storage) any {
	switch v := s.(type) {
	case *fvec[float64]:
		return []float64(*v)
	case *fvec[float32]:
		return []float32(*v)
	case *ivec[int64]:
		return []int64(*v)
	case *ivec[int32]:
		return []int32(*v)
	case *ivec[int16]:
		return []int16(*v)
	case *ivec[int8]:
		return []int8(*v)
	case *ivec[uint64]:
		return []uint64(*v)
	case *ivec[uint32]:
		return []uint32(*v)
	case *ivec[uint16]:
		return []uint16(*v)
	case *ivec[uint8]:
		return []uint8(*v)
	case *bvec:
		return []bool(*v)
	}
	panic(fmt.Sprintf("flex: unknown storage %T", s))
}

// littleEndianHost reports whether this machine stores numbers
// little-endian, the byte order of TensorData.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// nativeBytes returns the memory of a float or 32/64-bit integer slice as
// bytes on a little-endian host (where they are TensorData's bytes), or
// false (big-endian hosts, Bool and the other dtypes, which are decoded).
func nativeBytes(v any) ([]byte, bool) {
	if !littleEndianHost {
		return nil, false
	}
	switch x := v.(type) {
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x)), true
	case []float64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 8*len(x)), true
	case []int64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 8*len(x)), true
	case []int32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x)), true
	}
	return nil, false
}

// FromData copies host data (little-endian, row-major; Bool bytes != 0 are
// true) into a new contiguous tensor.
func (be *Backend) FromData(data *backend.TensorData) backend.Tensor {
	n := numel(data.Shape)
	s := allocStorage(data.DType, n)
	if b, ok := nativeBytes(raw(s)); ok && len(data.Bytes) == len(b) {
		copy(b, data.Bytes) // a little-endian host: the bytes are the values
		return newTensor(data.DType, data.Shape, s)
	}
	if _, err := binary.Decode(data.Bytes, binary.LittleEndian, raw(s)); err != nil && n > 0 {
		panic(fmt.Errorf("flex: from data: shape %v of %v with %d bytes: %w", data.Shape, data.DType, len(data.Bytes), err))
	}
	return newTensor(data.DType, data.Shape, s)
}

// ToData copies x to the host as contiguous row-major little-endian bytes
// (Bool as 0/1 bytes); views are materialized. The error is always nil.
func (be *Backend) ToData(x backend.Tensor) (*backend.TensorData, error) {
	t := asTensor(x)
	n := numel(t.shape)
	buf := make([]byte, n*t.dtype.Size())
	if n > 0 {
		if b, ok := nativeBytes(raw(t.dense())); ok && len(b) == len(buf) {
			copy(buf, b)
		} else if _, err := binary.Encode(buf, binary.LittleEndian, raw(t.dense())); err != nil {
			return nil, fmt.Errorf("flex: to data: %w", err)
		}
	}
	return &backend.TensorData{Shape: append([]int{}, t.shape...), DType: t.dtype, Bytes: buf}, nil
}
