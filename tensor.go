package ember

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Tensor is an n-dimensional array on one Device. Tensors are immutable:
// every op returns a new tensor (which may share storage with its input as
// a view). Ops validate their arguments and panic with an *Error on misuse
// (shape, dtype, device, axis); use Try at a boundary to get an error.
//
// Shapes are row-major []int; axes may be negative (counted from the end).
// A rank-0 tensor has shape [] and one element.
type Tensor struct {
	dev Device
	t   backend.Tensor
}

func wrap(dev Device, t backend.Tensor) *Tensor { return &Tensor{dev: dev, t: t} }

// Device returns the device the tensor lives on.
func (x *Tensor) Device() Device { return x.dev }

// Shape returns a copy of the tensor's shape.
func (x *Tensor) Shape() []int { return append([]int{}, x.t.Shape()...) }

// shape returns the shape without copying (do not modify).
func (x *Tensor) shape() []int { return x.t.Shape() }

// DType returns the element type.
func (x *Tensor) DType() DType { return x.t.DType() }

// Rank returns the number of axes.
func (x *Tensor) Rank() int { return len(x.t.Shape()) }

// NumElements returns the product of the shape's sizes (1 for rank 0).
func (x *Tensor) NumElements() int { return backend.NumElements(x.t.Shape()) }

// Dim returns the size of axis (negative counts from the end). It panics
// with an *Error when the axis is out of range.
func (x *Tensor) Dim(axis int) int { return x.shape()[x.axis("dim", axis)] }

// Primitive returns the backend's tensor (for backend authors).
func (x *Tensor) Primitive() backend.Tensor { return x.t }

// FromPrimitive wraps a backend tensor made by dev's backend (for backend authors).
func FromPrimitive(t backend.Tensor, dev Device) *Tensor { return wrap(dev, t) }

// String prints the shape, dtype, device and values (truncated for large tensors).
func (x *Tensor) String() string {
	d, err := x.ToData()
	if err != nil {
		return fmt.Sprintf("Tensor(%v %v on %v: %v)", x.shape(), x.DType(), x.dev, err)
	}
	return fmt.Sprintf("Tensor(%v on %v)", d, x.dev)
}

// ToData copies the tensor's value to the host. It returns an error (an
// *ExecutionError, or one wrapping ErrOutOfMemory) when the device failed.
func (x *Tensor) ToData() (*TensorData, error) {
	b := x.dev.backend()
	d, err := b.ToData(x.t)
	if err != nil {
		return nil, &ExecutionError{Device: x.dev.Inner().String(), Err: err}
	}
	return d, nil
}

// IntoData is ToData for a tensor the caller no longer needs (a backend may
// then avoid a copy). Do not use x afterwards.
func (x *Tensor) IntoData() (*TensorData, error) { return x.ToData() }

// Data is ToData that panics on error (for tests and examples).
func (x *Tensor) Data() *TensorData {
	d, err := x.ToData()
	if err != nil {
		panic(err)
	}
	return d
}

// Float32s returns the values converted to float32 (row-major); it panics on a device error.
func (x *Tensor) Float32s() []float32 { return ir.As[float32](x.Data()) }

// Float64s returns the values converted to float64 (row-major); it panics on a device error.
func (x *Tensor) Float64s() []float64 { return ir.As[float64](x.Data()) }

// Int64s returns the values converted to int64 (floats truncate toward zero).
func (x *Tensor) Int64s() []int64 { return ir.As[int64](x.Data()) }

// Bools returns the values converted to bool (non-zero is true).
func (x *Tensor) Bools() []bool { return ir.As[bool](x.Data()) }

// Item returns the single value of a one-element tensor as float64. It
// panics with an *Error when the tensor has more than one element.
func (x *Tensor) Item() float64 {
	if x.NumElements() != 1 {
		fail("item", []string{describe("x", x)}, "needs exactly one element")
	}
	return x.Float64s()[0]
}

// ---- creation ----

// checkShape panics with an *Error for op when shape has a negative size
// or too many elements (ir.CheckShape), and returns a copy of it.
func checkShape(op string, shape []int) []int {
	if err := ir.CheckShape(shape); err != nil {
		fail(op, nil, "%v", err)
	}
	return append([]int{}, shape...)
}

// FromData moves host data onto dev, keeping its dtype. It panics with an
// *Error when the data is inconsistent (byte length vs shape and dtype) or
// the device does not support the dtype.
func FromData(data *TensorData, dev Device) *Tensor {
	if data == nil || !data.DType.Valid() || len(data.Bytes) != backend.NumElements(data.Shape)*data.DType.Size() {
		fail("from_data", []string{dev.String()}, "inconsistent tensor data (need len(Bytes) = product(Shape) × dtype size)")
	}
	checkShape("from_data", data.Shape)
	b := dev.backend()
	if !dev.SupportsDType(data.DType) {
		fail("from_data", []string{dev.String()}, "dtype %v is not supported on this device", data.DType)
	}
	return wrap(dev, b.FromData(data))
}

// FromFloats makes a float tensor of the device's float dtype (F32 unless
// configured) from row-major values. It panics with an *Error when
// len(values) != product(shape).
func FromFloats[T ~float32 | ~float64](values []T, shape []int, dev Device) *Tensor {
	checkLen("from_floats", len(values), shape)
	d := &TensorData{Shape: checkShape("from_floats", shape), DType: F64, Bytes: make([]byte, 8*len(values))}
	for i, v := range values {
		binary.LittleEndian.PutUint64(d.Bytes[8*i:], math.Float64bits(float64(v)))
	}
	if _, ok := any(values).([]float32); ok {
		d = &TensorData{Shape: d.Shape, DType: F32, Bytes: make([]byte, 4*len(values))}
		for i, v := range values {
			binary.LittleEndian.PutUint32(d.Bytes[4*i:], math.Float32bits(float32(v)))
		}
	}
	return FromData(d, dev).castTo(DType(dev.Settings().FloatDType))
}

// FromInts makes an int tensor of the device's int dtype (I64 unless
// configured) from row-major values. It panics with an *Error when
// len(values) != product(shape).
func FromInts[T ~int | ~int64 | ~int32 | ~int16 | ~int8 | ~uint | ~uint64 | ~uint32 | ~uint16 | ~uint8](values []T, shape []int, dev Device) *Tensor {
	checkLen("from_ints", len(values), shape)
	d := &TensorData{Shape: checkShape("from_ints", shape), DType: I64, Bytes: make([]byte, 8*len(values))}
	for i, v := range values {
		binary.LittleEndian.PutUint64(d.Bytes[8*i:], uint64(int64(v)))
	}
	return FromData(d, dev).castTo(DType(dev.Settings().IntDType))
}

// FromBools makes a Bool tensor from row-major values. It panics with an
// *Error when len(values) != product(shape).
func FromBools(values []bool, shape []int, dev Device) *Tensor {
	checkLen("from_bools", len(values), shape)
	d := &TensorData{Shape: checkShape("from_bools", shape), DType: Bool, Bytes: make([]byte, len(values))}
	for i, v := range values {
		if v {
			d.Bytes[i] = 1
		}
	}
	return FromData(d, dev)
}

func checkLen(op string, n int, shape []int) {
	if n != backend.NumElements(shape) {
		fail(op, nil, "%d values do not fill shape %v (%d elements)", n, shape, backend.NumElements(shape))
	}
}

// Full makes a tensor of the shape filled with value, in the device's float dtype.
func Full(shape []int, value float64, dev Device) *Tensor {
	return FullDType(shape, value, DType(dev.Settings().FloatDType), dev)
}

// FullDType makes a tensor of the shape and dtype filled with value
// (converted: floats round to nearest even, ints truncate, bool is value != 0).
func FullDType(shape []int, value float64, dt DType, dev Device) *Tensor {
	shape = checkShape("full", shape)
	if !dt.Valid() {
		fail("full", nil, "invalid dtype %v", dt)
	}
	return dev.run(&ir.Op{Kind: ir.KindFull, Shape: shape, DType: dt, Scalars: [2]float64{value}})
}

// Zeros makes a tensor of zeros in the device's float dtype.
func Zeros(shape []int, dev Device) *Tensor { return Full(shape, 0, dev) }

// Ones makes a tensor of ones in the device's float dtype.
func Ones(shape []int, dev Device) *Tensor { return Full(shape, 1, dev) }

// ZerosLike makes zeros with x's shape, dtype and device.
func ZerosLike(x *Tensor) *Tensor { return FullDType(x.shape(), 0, x.DType(), x.dev) }

// OnesLike makes ones with x's shape, dtype and device.
func OnesLike(x *Tensor) *Tensor { return FullDType(x.shape(), 1, x.DType(), x.dev) }

// FullLike makes value with x's shape, dtype and device.
func FullLike(x *Tensor, value float64) *Tensor { return FullDType(x.shape(), value, x.DType(), x.dev) }

// Arange makes the rank-1 int tensor [start, start+1, ..., end-1] in the
// device's int dtype (empty when end <= start).
func Arange(start, end int, dev Device) *Tensor { return ArangeStep(start, end, 1, dev) }

// ArangeStep makes [start, start+step, ...] up to but excluding end, in the
// device's int dtype. It panics with an *Error when step is 0.
func ArangeStep(start, end, step int, dev Device) *Tensor {
	if step == 0 {
		fail("arange", nil, "step must be non-zero")
	}
	n := 0
	if step > 0 && end > start {
		n = (end - start + step - 1) / step
	} else if step < 0 && end < start {
		n = (start - end - step - 1) / -step
	}
	return dev.run(&ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: DType(dev.Settings().IntDType), Scalars: [2]float64{float64(start), float64(step)}})
}

// Linspace makes n evenly spaced floats from start to end inclusive, in the
// device's float dtype.
func Linspace(start, end float64, n int, dev Device) *Tensor {
	if n < 0 {
		fail("linspace", nil, "negative count %d", n)
	}
	step := 0.0
	if n > 1 {
		step = (end - start) / float64(n-1)
	}
	return dev.run(&ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: DType(dev.Settings().FloatDType), Scalars: [2]float64{start, step}})
}

// Random samples a tensor of the device's float dtype from dist, using the
// device's generator (see Device.Seed).
func Random(shape []int, dist Distribution, dev Device) *Tensor {
	return RandomDType(shape, dist, DType(dev.Settings().FloatDType), dev)
}

// RandomDType samples a tensor of dtype dt from dist.
func RandomDType(shape []int, dist Distribution, dt DType, dev Device) *Tensor {
	shape = checkShape("random", shape)
	if !dt.Valid() {
		fail("random", nil, "invalid dtype %v", dt)
	}
	return dev.run(&ir.Op{Kind: ir.KindRandom, Sub: uint8(dist.Kind), Shape: shape, DType: dt, Scalars: [2]float64{dist.A, dist.B}})
}

// Randn samples standard normal values (mean 0, std 1) in the device's float dtype.
func Randn(shape []int, dev Device) *Tensor { return Random(shape, Normal(0, 1), dev) }

// Rand samples uniform values on [0, 1) in the device's float dtype.
func Rand(shape []int, dev Device) *Tensor { return Random(shape, DefaultDistribution(), dev) }
