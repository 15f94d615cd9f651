package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"unsafe"
)

// Float16 is one IEEE 754 binary16 value held as its bits; it is the Go
// element type of F16 tensor data (FromSlice, As).
type Float16 uint16

// NewFloat16 returns the binary16 value nearest to f, ties to even
// (F16FromFloat64: correctly rounded, overflow to ±Inf, NaN stays NaN).
func NewFloat16(f float64) Float16 { return Float16(F16FromFloat64(f)) }

// Float32 returns h's value exactly (F16ToFloat32).
func (h Float16) Float32() float32 { return F16ToFloat32(uint16(h)) }

// Float64 returns h's value exactly.
func (h Float16) Float64() float64 { return float64(F16ToFloat32(uint16(h))) }

// BFloat16 is one bfloat16 value held as its bits; it is the Go element type
// of BF16 tensor data (FromSlice, As).
type BFloat16 uint16

// NewBFloat16 returns the bfloat16 value nearest to f, ties to even
// (BF16FromFloat64: correctly rounded, overflow to ±Inf, NaN stays NaN).
func NewBFloat16(f float64) BFloat16 { return BFloat16(BF16FromFloat64(f)) }

// Float32 returns b's value exactly (BF16ToFloat32).
func (b BFloat16) Float32() float32 { return BF16ToFloat32(uint16(b)) }

// Float64 returns b's value exactly.
func (b BFloat16) Float64() float64 { return float64(BF16ToFloat32(uint16(b))) }

// Element is the set of Go types that hold one tensor element. Each maps to
// a dtype: float64 F64, float32 F32, Float16 F16, BFloat16 BF16, int64 I64,
// int32 I32, int16 I16, int8 I8, uint64 U64, uint32 U32, uint16 U16, uint8
// U8, bool Bool; named types with those underlying types map likewise,
// except that uint16's entry is exact (a type whose underlying type is
// uint16 is either uint16, Float16 or BFloat16, which Go requires to be
// disjoint terms).
type Element interface {
	~float64 | ~float32 | ~int64 | ~int32 | ~int16 | ~int8 |
		~uint64 | ~uint32 | uint16 | ~uint8 | ~bool | Float16 | BFloat16
}

// DTypeOf returns the dtype whose elements T holds (see Element).
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case Float16:
		return F16
	case BFloat16:
		return BF16
	}
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Float64:
		return F64
	case reflect.Float32:
		return F32
	case reflect.Int64:
		return I64
	case reflect.Int32:
		return I32
	case reflect.Int16:
		return I16
	case reflect.Int8:
		return I8
	case reflect.Uint64:
		return U64
	case reflect.Uint32:
		return U32
	case reflect.Uint16:
		return U16
	case reflect.Uint8:
		return U8
	case reflect.Bool:
		return Bool
	}
	panic("unreachable: Element type " + reflect.TypeFor[T]().String())
}

// FromSlice returns tensor data of the given shape holding a copy of
// values in row-major order; its dtype is DTypeOf[T] (float32 gives F32,
// Float16 F16, BFloat16 BF16, bool Bool). It panics if shape is invalid
// (CheckShape) or len(values) != product(shape) (1 for an empty shape, a
// scalar).
func FromSlice[T Element](values []T, shape []int) *TensorData {
	if err := CheckShape(shape); err != nil {
		panic(fmt.Sprintf("ember: FromSlice: %v", err))
	}
	if n := NumElements(shape); len(values) != n {
		panic(fmt.Sprintf("ember: FromSlice: %d values for shape %v, which holds %d", len(values), shape, n))
	}
	dt := DTypeOf[T]()
	sz := dt.Size()
	b := make([]byte, len(values)*sz)
	p := unsafe.Pointer(unsafe.SliceData(values))
	le := binary.LittleEndian
	for i := range values {
		q := unsafe.Add(p, i*sz) // T's underlying type has dt's size and layout
		switch sz {
		case 8:
			le.PutUint64(b[8*i:], *(*uint64)(q))
		case 4:
			le.PutUint32(b[4*i:], *(*uint32)(q))
		case 2:
			le.PutUint16(b[2*i:], *(*uint16)(q))
		default:
			b[i] = *(*uint8)(q) // bool is one byte, 0 or 1
		}
	}
	return &TensorData{Shape: append([]int{}, shape...), DType: dt, Bytes: b}
}

// As returns d's elements in row-major order converted to T, following the
// Cast semantics of Convert (float->int truncates toward zero and
// saturates, NaN becomes 0; int->int wraps; to Bool is x != 0; to F16/BF16
// rounds to nearest even). The result never aliases d.Bytes.
func As[T Element](d *TensorData) []T {
	return decodeAs[T](d.Convert(DTypeOf[T]()))
}

// TryAs is As that fails instead of losing information: it returns an error
// naming both dtypes and the first element (flat and multi-index) whose
// value does not survive the conversion exactly (see TryConvert).
func TryAs[T Element](d *TensorData) ([]T, error) {
	c, err := d.TryConvert(DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return decodeAs[T](c), nil
}

// decodeAs reads data whose dtype is DTypeOf[T] into a new []T.
func decodeAs[T Element](d *TensorData) []T {
	n := d.NumElements()
	out := make([]T, n)
	sz := d.DType.Size()
	p := unsafe.Pointer(unsafe.SliceData(out))
	le := binary.LittleEndian
	b := d.Bytes
	for i := range n {
		q := unsafe.Add(p, i*sz)
		switch sz {
		case 8:
			*(*uint64)(q) = le.Uint64(b[8*i:])
		case 4:
			*(*uint32)(q) = le.Uint32(b[4*i:])
		case 2:
			*(*uint16)(q) = le.Uint16(b[2*i:])
		default:
			v := b[i]
			if d.DType == Bool && v > 1 {
				v = 1 // a Go bool must be 0 or 1
			}
			*(*uint8)(q) = v
		}
	}
	return out
}

// Float32s returns the elements converted to float32 (As[float32]).
func (d *TensorData) Float32s() []float32 { return As[float32](d) }

// Float64s returns the elements converted to float64 (As[float64]).
func (d *TensorData) Float64s() []float64 { return As[float64](d) }

// Int64s returns the elements converted to int64 (As[int64]: floats
// truncate toward zero and saturate, NaN gives 0).
func (d *TensorData) Int64s() []int64 { return As[int64](d) }

// Bools returns the elements converted to bool (As[bool]: x != 0, so NaN is
// true).
func (d *TensorData) Bools() []bool { return As[bool](d) }

// Value returns element i (row-major flat index) as a float64: floats
// exactly, ints rounded to nearest even beyond 2^53 in magnitude, Bool as 0
// or 1. It panics if i is outside [0, NumElements()).
func (d *TensorData) Value(i int) float64 {
	if n := d.NumElements(); i < 0 || i >= n {
		panic(fmt.Sprintf("ember: TensorData.Value: index %d out of range for %d elements", i, n))
	}
	return loadNum(d.DType, d.Bytes, i).float64()
}

// Scalar returns the only element of a one-element tensor (any shape, rank
// 0 included) as a float64, as PyTorch's Tensor.item. It panics if d does
// not hold exactly one element.
func (d *TensorData) Scalar() float64 {
	if n := d.NumElements(); n != 1 {
		panic(fmt.Sprintf("ember: TensorData.Scalar: shape %v holds %d elements, want 1", d.Shape, n))
	}
	return d.Value(0)
}

// Convert returns a copy of d converted to dtype to, with the Cast
// semantics of the Backend interface (PyTorch's Tensor.to for in-range
// values; Rust's `as`, which Burn uses, where PyTorch leaves the result
// undefined):
//
//   - float -> float: rounds to nearest, ties to even (F16/BF16 correctly
//     rounded from the float64 value); overflow gives ±Inf, NaN stays NaN.
//   - int -> float: rounds to nearest, ties to even, correctly rounded.
//   - float -> int: truncates toward zero; values beyond the target range
//     saturate to its minimum or maximum; NaN gives 0.
//   - int -> int: two's-complement wrap-around, as Go, PyTorch and Rust.
//   - x -> Bool: x != 0 (NaN is true); Bool -> x: 0 or 1.
//
// Converting to the same dtype (or between F32 and Flex32, which share a
// layout) copies the bytes.
func (d *TensorData) Convert(to DType) *TensorData {
	c, _ := d.convert(to, false)
	return c
}

// TryConvert is Convert that returns an error instead of a result when some
// element changes value: a non-integral, NaN, infinite or out-of-range float
// converted to an int or Bool, an int out of the target's range, a float or
// int that is not exactly representable in the target float dtype (NaN
// converts to NaN without error), or a value other than 0 or 1 converted to
// Bool. The error names the dtypes and the first such element's flat index,
// multi-index and value.
func (d *TensorData) TryConvert(to DType) (*TensorData, error) {
	return d.convert(to, true)
}

func (d *TensorData) convert(to DType, strict bool) (*TensorData, error) {
	n := d.NumElements()
	shape := append([]int{}, d.Shape...)
	if d.DType == to || (d.DType == F32 || d.DType == Flex32) && (to == F32 || to == Flex32) {
		return &TensorData{Shape: shape, DType: to, Bytes: append([]byte{}, d.Bytes[:n*to.Size()]...)}, nil
	}
	out := make([]byte, n*to.Size())
	for i := range n {
		v := loadNum(d.DType, d.Bytes, i)
		if !storeNum(to, out, i, v) && strict {
			return nil, fmt.Errorf("ember: cannot convert %v to %v exactly: element %d (index %v) is %s",
				d.DType, to, i, unravel(i, d.Shape), formatElem(d.DType, d.Bytes, i))
		}
	}
	return &TensorData{Shape: shape, DType: to, Bytes: out}, nil
}

// numKind tells which field of a num holds its value.
type numKind uint8

const (
	kindFloat numKind = iota
	kindInt
	kindUint
)

// num is one element's exact value: a float (every float dtype fits a
// float64 exactly), a signed int or an unsigned int (Bool is 0 or 1).
type num struct {
	kind numKind
	f    float64
	i    int64
	u    uint64
}

func (v num) float64() float64 {
	switch v.kind {
	case kindInt:
		return float64(v.i)
	case kindUint:
		return float64(v.u)
	}
	return v.f
}

// loadNum reads element i of little-endian data of dtype dt.
func loadNum(dt DType, b []byte, i int) num {
	le := binary.LittleEndian
	switch dt {
	case F64:
		return num{kind: kindFloat, f: math.Float64frombits(le.Uint64(b[8*i:]))}
	case F32, Flex32:
		return num{kind: kindFloat, f: float64(math.Float32frombits(le.Uint32(b[4*i:])))}
	case F16:
		return num{kind: kindFloat, f: float64(F16ToFloat32(le.Uint16(b[2*i:])))}
	case BF16:
		return num{kind: kindFloat, f: float64(BF16ToFloat32(le.Uint16(b[2*i:])))}
	case I64:
		return num{kind: kindInt, i: int64(le.Uint64(b[8*i:]))}
	case I32:
		return num{kind: kindInt, i: int64(int32(le.Uint32(b[4*i:])))}
	case I16:
		return num{kind: kindInt, i: int64(int16(le.Uint16(b[2*i:])))}
	case I8:
		return num{kind: kindInt, i: int64(int8(b[i]))}
	case U64:
		return num{kind: kindUint, u: le.Uint64(b[8*i:])}
	case U32:
		return num{kind: kindUint, u: uint64(le.Uint32(b[4*i:]))}
	case U16:
		return num{kind: kindUint, u: uint64(le.Uint16(b[2*i:]))}
	case U8:
		return num{kind: kindUint, u: uint64(b[i])}
	case Bool:
		if b[i] != 0 {
			return num{kind: kindUint, u: 1}
		}
		return num{kind: kindUint}
	}
	panic(fmt.Sprintf("ember: invalid dtype %v", dt))
}

// storeNum writes v converted to dtype dt as element i of b (Convert's
// semantics) and reports whether the stored value equals v.
func storeNum(dt DType, b []byte, i int, v num) bool {
	le := binary.LittleEndian
	switch dt {
	case F64:
		var f float64
		switch v.kind {
		case kindFloat:
			f = v.f
		case kindInt:
			f = float64(v.i)
		default:
			f = float64(v.u)
		}
		le.PutUint64(b[8*i:], math.Float64bits(f))
		return sameValue(f, v)
	case F32, Flex32:
		f := float32(oddFloat64(v)) // round-to-odd then nearest-even: one correct rounding
		le.PutUint32(b[4*i:], math.Float32bits(f))
		return sameValue(float64(f), v)
	case F16:
		h := F16FromFloat64(oddFloat64(v))
		le.PutUint16(b[2*i:], h)
		return sameValue(float64(F16ToFloat32(h)), v)
	case BF16:
		h := BF16FromFloat64(oddFloat64(v))
		le.PutUint16(b[2*i:], h)
		return sameValue(float64(BF16ToFloat32(h)), v)
	case Bool:
		var nz, exact bool
		switch v.kind {
		case kindFloat:
			nz, exact = v.f != 0, v.f == 0 || v.f == 1
		case kindInt:
			nz, exact = v.i != 0, v.i == 0 || v.i == 1
		default:
			nz, exact = v.u != 0, v.u <= 1
		}
		b[i] = 0
		if nz {
			b[i] = 1
		}
		return exact
	}
	raw, exact := toIntBits(dt, v)
	switch dt.Size() {
	case 8:
		le.PutUint64(b[8*i:], raw)
	case 4:
		le.PutUint32(b[4*i:], uint32(raw))
	case 2:
		le.PutUint16(b[2*i:], uint16(raw))
	default:
		b[i] = uint8(raw)
	}
	return exact
}

// toIntBits converts v to the int dtype dt and returns its two's-complement
// bits (to be truncated to dt's size) and whether the value is unchanged.
func toIntBits(dt DType, v num) (uint64, bool) {
	nb := uint(dt.Size() * 8)
	if dt.IsSigned() {
		lo, hi := int64(-1)<<(nb-1), int64(uint64(1)<<(nb-1)-1)
		switch v.kind {
		case kindFloat:
			t := math.Trunc(v.f)
			switch {
			case v.f != v.f:
				return 0, false
			case t < float64(lo):
				return uint64(lo), false
			case t >= -float64(lo):
				return uint64(hi), false
			}
			return uint64(int64(t)), t == v.f
		case kindInt:
			return uint64(v.i), v.i >= lo && v.i <= hi
		}
		return v.u, v.u <= uint64(hi)
	}
	hi := uint64(math.MaxUint64) >> (64 - nb)
	switch v.kind {
	case kindFloat:
		t := math.Trunc(v.f)
		switch {
		case v.f != v.f:
			return 0, false
		case t < 0:
			return 0, false
		case t >= math.Ldexp(1, int(nb)):
			return hi, false
		}
		return uint64(t), t == v.f
	case kindInt:
		return uint64(v.i), v.i >= 0 && uint64(v.i) <= hi
	}
	return v.u, v.u <= hi
}

// oddFloat64 returns v as a float64: floats as they are, ints rounded with
// round-to-odd (truncate to 53 significant bits, then set the last kept bit
// if any dropped bit was set), so that a later round-to-nearest-even to a
// format of at most 51 bits of precision is one correct rounding.
func oddFloat64(v num) float64 {
	var mag uint64
	neg := false
	switch v.kind {
	case kindFloat:
		return v.f
	case kindInt:
		mag, neg = uint64(v.i), v.i < 0
		if neg {
			mag = -mag // two's complement; MinInt64 gives 2^63
		}
	default:
		mag = v.u
	}
	if l := bits.Len64(mag); l > 53 {
		sh := uint(l - 53)
		t := mag >> sh << sh
		if t != mag {
			t |= 1 << sh
		}
		mag = t
	}
	f := float64(mag) // exact: at most 53 significant bits
	if neg {
		f = -f
	}
	return f
}

// sameValue reports whether float f equals v exactly (NaN equals NaN).
func sameValue(f float64, v num) bool {
	switch v.kind {
	case kindFloat:
		return f == v.f || (f != f && v.f != v.f)
	case kindInt:
		return f >= -0x1p63 && f < 0x1p63 && int64(f) == v.i
	}
	return f >= 0 && f < 0x1p64 && uint64(f) == v.u
}

// unravel returns the row-major multi-index of flat index i in shape.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}
