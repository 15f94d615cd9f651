package ember

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Tensor is an n-dimensional array on one Device. Tensors are immutable:
// every op returns a new tensor (which may share storage with its input as
// a view). Ops validate their arguments and panic with an *Error on misuse
// (shape, dtype, device, axis); use Try at a boundary to get an error. A
// nil *Tensor (or a zero Tensor) given to any function or method as an
// operand or receiver is such misuse too: the *Error names the op and the
// operand.
//
// Shapes are row-major []int; axes may be negative (counted from the end).
// A rank-0 tensor has shape [] and one element.
type Tensor struct {
	dev Device
	t   backend.Tensor
}

func wrap(dev Device, t backend.Tensor) *Tensor { return &Tensor{dev: dev, t: t} }

// Device returns the device the tensor lives on. Like every accessor, it
// panics with an *Error for a nil *Tensor.
func (x *Tensor) Device() Device {
	x.need("device", "x")
	return x.dev
}

// Shape returns a copy of the tensor's shape.
func (x *Tensor) Shape() []int {
	if x == nil || x.t == nil {
		panic(errNilShape)
	}
	return append([]int{}, x.t.Shape()...)
}

// shape returns the shape without copying (do not modify).
func (x *Tensor) shape() []int {
	if x == nil || x.t == nil {
		panic(errNilShape)
	}
	return x.t.Shape()
}

// DType returns the element type.
func (x *Tensor) DType() DType {
	if x == nil || x.t == nil {
		panic(errNilDType)
	}
	return x.t.DType()
}

// Rank returns the number of axes.
func (x *Tensor) Rank() int { return len(x.shape()) }

// NumElements returns the product of the shape's sizes (1 for rank 0).
func (x *Tensor) NumElements() int { return backend.NumElements(x.shape()) }

// Dim returns the size of axis (negative counts from the end). It panics
// with an *Error when the axis is out of range.
func (x *Tensor) Dim(axis int) int { return x.shape()[x.axis("dim", axis)] }

// Primitive returns the backend's tensor (for backend authors).
func (x *Tensor) Primitive() backend.Tensor { return x.prim("primitive") }

// FromPrimitive wraps a backend tensor made by dev's backend (for backend
// authors). It panics with an *Error when t is nil.
func FromPrimitive(t backend.Tensor, dev Device) *Tensor {
	if t == nil {
		fail("from_primitive", []string{"t <nil>"}, "needs a backend tensor")
	}
	return wrap(dev, t)
}

// summaryData reads the elements a print with edge e (ir.SummaryEdge)
// shows: all of x for e == 0, else along each axis longer than 2e its
// first and last e entries, narrowed and joined on the device without
// autodiff tracking.
func (x *Tensor) summaryData(e int) (*TensorData, error) {
	if e == 0 {
		return x.ToData()
	}
	v := x
	if x.dev.autodiff {
		v = wrap(x.dev.Inner(), x.dev.ad().Primal(x.t))
	}
	if err := Try(func() { v = summaryOf(v, 0, e) }); err != nil {
		return nil, err
	}
	return v.ToData()
}

// summaryOf returns x with each axis from axis on longer than 2e cut to
// its first and last e entries. Inner axes are cut before the halves are
// joined, so no intermediate is larger than the result.
func summaryOf(x *Tensor, axis, e int) *Tensor {
	for ; axis < x.Rank(); axis++ {
		if n := x.shape()[axis]; n > 2*e {
			head := summaryOf(x.Narrow(axis, 0, e), axis+1, e)
			tail := summaryOf(x.Narrow(axis, n-e, e), axis+1, e)
			return Cat([]*Tensor{head, tail}, axis)
		}
	}
	return x
}

// ToData copies the tensor's value to the host. It returns an error (an
// *ExecutionError, or one wrapping ErrOutOfMemory) when the device failed,
// and an *Error for a nil *Tensor.
func (x *Tensor) ToData() (*TensorData, error) {
	if x == nil || x.t == nil {
		return nil, nilError("to_data", []string{"x"}, []*Tensor{x}, 0)
	}
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
	x.need("item", "x")
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
	if data == nil || !data.DType.Valid() {
		fail("from_data", []string{dev.String()}, "needs tensor data of a valid dtype")
	}
	n, err := ir.NumBytes(data.Shape, data.DType)
	if err != nil {
		fail("from_data", []string{dev.String()}, "%v", err)
	}
	if len(data.Bytes) != n {
		fail("from_data", []string{dev.String()}, "inconsistent tensor data: shape %v of %v needs %d bytes, got %d", data.Shape, data.DType, n, len(data.Bytes))
	}
	b := dev.backend()
	if !dev.SupportsDType(data.DType) {
		fail("from_data", []string{dev.String()}, "dtype %v is not supported on this device", data.DType)
	}
	return wrap(dev, b.FromData(data))
}

// littleEndianHost reports whether this machine stores numbers
// little-endian, the byte order of TensorData.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// FromFloats makes a float tensor of the device's float dtype (F32 unless
// configured) from row-major values. It panics with an *Error when
// len(values) != product(shape).
func FromFloats[T ~float32 | ~float64](values []T, shape []int, dev Device) *Tensor {
	shape = checkShape("from_floats", shape)
	checkLen("from_floats", len(values), shape)
	var d *TensorData
	var zero T
	if _, ok := any(zero).(float32); ok {
		d = &TensorData{Shape: shape, DType: F32, Bytes: make([]byte, 4*len(values))}
		if littleEndianHost {
			// The values' memory is the data's bytes.
			copy(d.Bytes, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(values))), 4*len(values)))
		} else {
			for i, v := range values {
				binary.LittleEndian.PutUint32(d.Bytes[4*i:], math.Float32bits(float32(v)))
			}
		}
	} else {
		d = &TensorData{Shape: shape, DType: F64, Bytes: make([]byte, 8*len(values))}
		for i, v := range values {
			binary.LittleEndian.PutUint64(d.Bytes[8*i:], math.Float64bits(float64(v)))
		}
	}
	return FromData(d, dev).castTo(DType(dev.opSettings().FloatDType))
}

// FromInts makes an int tensor of the device's int dtype (I64 unless
// configured) from row-major values, each exactly. It panics with an
// *Error when len(values) != product(shape) or a value is outside the
// dtype's range (math.MaxUint64 on an I64 device, -1 on a U64 one).
func FromInts[T ~int | ~int64 | ~int32 | ~int16 | ~int8 | ~uint | ~uint64 | ~uint32 | ~uint16 | ~uint8](values []T, shape []int, dev Device) *Tensor {
	shape = checkShape("from_ints", shape)
	checkLen("from_ints", len(values), shape)
	dt := DType(dev.opSettings().IntDType)
	src := I64 // the host data's dtype, which holds every value of dt
	if dt == U64 {
		src = U64
	}
	lo, hi := ir.IntRange(dt)
	signed := ^T(0) < 0
	d := &TensorData{Shape: shape, DType: src, Bytes: make([]byte, 8*len(values))}
	for i, v := range values {
		if signed && (int64(v) < lo || int64(v) >= 0 && uint64(v) > hi) || !signed && uint64(v) > hi {
			fail("from_ints", []string{dev.String()}, "value %d at flat position %d is not representable in %v (range [%d, %d])", v, i, dt, lo, hi)
		}
		binary.LittleEndian.PutUint64(d.Bytes[8*i:], uint64(v)) // two's complement: I64 and U64 alike
	}
	return FromData(d, dev).castTo(dt)
}

// FromBools makes a Bool tensor from row-major values. It panics with an
// *Error when len(values) != product(shape).
func FromBools(values []bool, shape []int, dev Device) *Tensor {
	shape = checkShape("from_bools", shape)
	checkLen("from_bools", len(values), shape)
	d := &TensorData{Shape: shape, DType: Bool, Bytes: make([]byte, len(values))}
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
	return FullDType(shape, value, DType(dev.opSettings().FloatDType), dev)
}

// FullDType makes a tensor of the shape and dtype filled with value
// (converted: floats round to nearest even, ints truncate, bool is value != 0).
// It panics with an *Error when value is not representable in an integer
// dtype (NaN, an infinity, or outside its range; see ir.ScalarFits).
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
func ZerosLike(x *Tensor) *Tensor { return fullLike("zeros_like", x, 0) }

// OnesLike makes ones with x's shape, dtype and device.
func OnesLike(x *Tensor) *Tensor { return fullLike("ones_like", x, 1) }

// FullLike makes value with x's shape, dtype and device.
func FullLike(x *Tensor, value float64) *Tensor { return fullLike("full_like", x, value) }

// fullLike is FullLike for op, checking x.
func fullLike(op string, x *Tensor, value float64) *Tensor {
	x.need(op, "x")
	return FullDType(x.shape(), value, x.DType(), x.dev)
}

// Arange makes the rank-1 int tensor [start, start+1, ..., end-1] in the
// device's int dtype (empty when end == start). It panics with an *Error
// when end < start (see ArangeStep).
func Arange(start, end int, dev Device) *Tensor { return ArangeStep(start, end, 1, dev) }

// ArangeStep makes [start, start+step, ...] up to but excluding end, in the
// device's int dtype, every element computed exactly in integers (empty
// when end == start). It panics with an *Error naming the arguments when
// step is 0, when the step's sign leads away from end (PyTorch's arange
// rejects it too), when the count overflows an int, when a value does not
// fit the int dtype, or (wrapping ErrOutOfMemory) when the result could
// never fit in the device's memory.
func ArangeStep(start, end, step int, dev Device) *Tensor {
	dt := DType(dev.opSettings().IntDType)
	n, err := ir.ArangeLen(start, end, step)
	if err != nil {
		fail("arange", arangeArgs(start, end, step, dt, dev), "%v", err)
	}
	op := &ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: dt, Ints: []int{start, step}}
	if err := op.Infer(); err != nil {
		fail("arange", arangeArgs(start, end, step, dt, dev), "%v", err)
	}
	return dev.run(op)
}

// arangeArgs describes ArangeStep's arguments for its *Error.
func arangeArgs(start, end, step int, dt DType, dev Device) []string {
	return []string{fmt.Sprintf("start %d", start), fmt.Sprintf("end %d", end), fmt.Sprintf("step %d", step), fmt.Sprintf("dtype %v on %v", dt, dev)}
}

// Linspace makes n evenly spaced floats from start to end inclusive, in the
// device's float dtype. It panics with an *Error when n is negative or the
// bounds are not finite (or so far apart that end - start overflows).
func Linspace(start, end float64, n int, dev Device) *Tensor {
	if n < 0 {
		fail("linspace", nil, "negative count %d", n)
	}
	if d := end - start; math.IsNaN(d) || math.IsInf(d, 0) { // also NaN or infinite bounds
		fail("linspace", nil, "bounds [%v, %v] must be finite, with a finite difference", start, end)
	}
	step := 0.0
	if n > 1 {
		step = (end - start) / float64(n-1)
	}
	return dev.run(&ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: DType(dev.opSettings().FloatDType), Scalars: [2]float64{start, step}})
}

// Random samples a tensor of the device's float dtype from dist, using the
// device's generator (see Device.Seed). It panics with an *Error for
// parameters that define no distribution: NaN or infinite ones, a uniform
// range whose width overflows or whose low is above its high, a negative
// standard deviation, a probability outside [0, 1].
func Random(shape []int, dist Distribution, dev Device) *Tensor {
	return RandomDType(shape, dist, DType(dev.opSettings().FloatDType), dev)
}

// RandomDType samples a tensor of dtype dt from dist; it panics as Random
// does, and for an integer dt also when a uniform range holds integers
// outside dt's range.
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
