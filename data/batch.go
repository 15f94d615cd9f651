package data

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/emberml/ember"
)

// Batch is a mini-batch of examples assembled by a Loader: the examples'
// features and targets stacked along a new leading axis, as host arrays
// and, when the Loader has a device, as tensors on it. Every Batch has
// freshly allocated memory the caller may keep.
type Batch struct {
	// Features holds the examples' features, shape [Size,
	// Schema().Features.Shape...], e.g. [64 1 28 28] f32 for MNIST.
	Features *ember.TensorData
	// Targets holds the examples' targets, shape [Size,
	// Schema().Targets.Shape...], e.g. [64] i64 for class indices.
	Targets *ember.TensorData
	// X and Y are Features and Targets as tensors on
	// LoaderOptions.Device, of the same shapes and dtypes, made by the
	// Loader's background goroutine while the previous batch is
	// consumed; both are nil when the Loader has no device.
	X, Y *ember.Tensor
	// Images holds Features' values as float32 when Features is F32
	// (nil otherwise): Size*ExampleSize values, example k at
	// Images[k*ExampleSize:(k+1)*ExampleSize]. On little-endian
	// machines it shares memory with Features.Bytes.
	Images []float32
	// Labels holds Targets' values when Targets is I64 (nil otherwise),
	// e.g. the Size class labels; on little-endian machines it shares
	// memory with Targets.Bytes.
	Labels []int64
	// Size is the number of examples, 1..batch size.
	Size int
	// Indices holds the dataset index of each example.
	Indices []int
}

// littleEndian reports whether this machine stores numbers little-endian,
// the byte order of ember.TensorData.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// hostArray returns zeroed memory for n elements of dt: its bytes and, on
// a little-endian machine, the same memory as []float32 (dt F32) or
// []int64 (dt I64).
func hostArray(dt ember.DType, n int) (b []byte, f32 []float32, i64 []int64) {
	switch {
	case littleEndian && dt == ember.F32:
		f32 = make([]float32, n)
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f32))), 4*n), f32, nil
	case littleEndian && dt == ember.I64:
		i64 = make([]int64, n)
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(i64))), 8*n), nil, i64
	}
	return make([]byte, n*dt.Size()), nil, nil
}

// float32View returns b's memory as float32 values when this machine is
// little-endian and b is 4-byte aligned, else false.
func float32View(b []byte) ([]float32, bool) {
	if !littleEndian || len(b)%4 != 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), true
}

// decodeFloat32s returns little-endian F32 bytes as float32 values.
func decodeFloat32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// decodeInt64s returns little-endian I64 bytes as int64 values.
func decodeInt64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}
