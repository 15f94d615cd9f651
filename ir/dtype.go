package ir

import "fmt"

// DType is the element type of a tensor's storage.
//
// Float dtypes: F64, F32, Flex32 (stored and computed as F32 on the CPU; a
// backend may use lower precision internally on GPUs, as Burn's flex32), F16
// (IEEE 754 binary16) and BF16 (bfloat16). Int dtypes: I64, I32, I16, I8, U64,
// U32, U16, U8. Bool: one byte per element in TensorData (0 or 1).
type DType uint8

// The dtypes. The zero value is invalid.
const (
	F64 DType = iota + 1
	F32
	Flex32
	F16
	BF16
	I64
	I32
	I16
	I8
	U64
	U32
	U16
	U8
	Bool
)

// AllDTypes lists every valid dtype in declaration order.
var AllDTypes = []DType{F64, F32, Flex32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool}

var dtypeNames = [...]string{"invalid", "f64", "f32", "flex32", "f16", "bf16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "bool"}

// String returns the lower-case name: "f32", "bf16", "i64", "bool", ...
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames[1:] {
		if n == s {
			return DType(i + 1), nil
		}
	}
	return 0, fmt.Errorf("ember: unknown dtype %q", s)
}

// Valid reports whether d is one of the declared dtypes.
func (d DType) Valid() bool { return d >= F64 && d <= Bool }

// Size is the number of bytes one element occupies in TensorData (Bool: 1).
func (d DType) Size() int {
	switch d {
	case F64, I64, U64:
		return 8
	case F32, Flex32, I32, U32:
		return 4
	case F16, BF16, I16, U16:
		return 2
	case I8, U8, Bool:
		return 1
	}
	return 0
}

// IsFloat reports whether d is F64, F32, Flex32, F16 or BF16.
func (d DType) IsFloat() bool { return d >= F64 && d <= BF16 }

// IsInt reports whether d is a signed or unsigned integer dtype.
func (d DType) IsInt() bool { return d >= I64 && d <= U8 }

// IsSigned reports whether d is a float or a signed integer dtype.
func (d DType) IsSigned() bool { return d.IsFloat() || (d >= I64 && d <= I8) }

// IsBool reports whether d is Bool.
func (d DType) IsBool() bool { return d == Bool }

// FloatDType is the subset of dtypes a float tensor may use (F64, F32,
// Flex32, F16, BF16). Convert with DType(f).
type FloatDType DType

// The float dtypes as FloatDType values.
const (
	FloatF64    = FloatDType(F64)
	FloatF32    = FloatDType(F32)
	FloatFlex32 = FloatDType(Flex32)
	FloatF16    = FloatDType(F16)
	FloatBF16   = FloatDType(BF16)
)

// String returns the name of the underlying dtype.
func (f FloatDType) String() string { return DType(f).String() }

// IntDType is the subset of dtypes an int tensor may use (I64 ... U8).
type IntDType DType

// The int dtypes as IntDType values.
const (
	IntI64 = IntDType(I64)
	IntI32 = IntDType(I32)
	IntI16 = IntDType(I16)
	IntI8  = IntDType(I8)
	IntU64 = IntDType(U64)
	IntU32 = IntDType(U32)
	IntU16 = IntDType(U16)
	IntU8  = IntDType(U8)
)

// String returns the name of the underlying dtype.
func (i IntDType) String() string { return DType(i).String() }

// BoolDType says how a backend stores Bool tensors: Native (the backend's own
// bool type), as U8, or as U32 (as Burn's BoolStore). TensorData always holds
// one byte per element whatever the store.
type BoolDType uint8

// The bool stores.
const (
	BoolNative BoolDType = iota + 1
	BoolU8
	BoolU32
)

// String returns "native", "u8" or "u32".
func (b BoolDType) String() string {
	switch b {
	case BoolNative:
		return "native"
	case BoolU8:
		return "u8"
	case BoolU32:
		return "u32"
	}
	return fmt.Sprintf("booldtype(%d)", uint8(b))
}

// Promote returns the dtype two operands of a binary op are converted to
// before the op runs. The rules, stated once for all of Ember, follow
// PyTorch's type promotion for tensors of equal category:
//
//   - equal dtypes: that dtype;
//   - a float and a non-float: the float;
//   - two floats: the wider (F64 > F32 = Flex32 > F16, BF16); F16 with BF16
//     gives F32; F32 with Flex32 gives F32;
//   - an int and a bool: the int;
//   - two signed or two unsigned ints: the wider;
//   - a signed and an unsigned int: the signed type wide enough to hold both
//     (I64 when the unsigned is U64, following NumPy's result_type but capped at I64
//     as PyTorch does).
//
// Scalars given to tensor methods (x.AddScalar(2)) take the tensor's dtype.
func Promote(a, b DType) DType {
	if a == b {
		return a
	}
	switch {
	case a.IsFloat() && !b.IsFloat():
		return a
	case b.IsFloat() && !a.IsFloat():
		return b
	case a.IsFloat() && b.IsFloat():
		ra, rb := floatRank(a), floatRank(b)
		switch {
		case ra > rb:
			return a
		case rb > ra:
			return b
		}
		if ra == 1 { // F16 with BF16
			return F32
		}
		return F32 // F32 with Flex32
	case a.IsBool():
		return b
	case b.IsBool():
		return a
	}
	// two ints
	sa, sb := a.IsSigned(), b.IsSigned()
	if sa == sb {
		if a.Size() >= b.Size() {
			return a
		}
		return b
	}
	s, u := a, b
	if !sa {
		s, u = b, a
	}
	need := u.Size() * 2
	if s.Size() >= need {
		return s
	}
	switch {
	case need <= 2:
		return I16
	case need <= 4:
		return I32
	}
	return I64
}

func floatRank(d DType) int {
	switch d {
	case F64:
		return 3
	case F32, Flex32:
		return 2
	}
	return 1
}
