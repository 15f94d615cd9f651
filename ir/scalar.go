package ir

import "math"

// ScalarFits returns an error when v, converted to dtype dt as Full, Pad
// and Cast convert it (floats round to nearest, integers truncate toward
// zero, Bool is v != 0), is not a value of dt: NaN, an infinity, or a
// value outside an integer dtype's range. Every value fits a float dtype
// and Bool.
func ScalarFits(v float64, dt DType) error {
	if !dt.IsInt() {
		return nil
	}
	var ok bool
	switch dt {
	case I64:
		ok = v >= -0x1p63 && v < 0x1p63
	case U64:
		ok = v > -1 && v < 0x1p64
	default:
		lo, hi := IntRange(dt) // at most 32 bits: exact in float64
		ok = v > float64(lo)-1 && v < float64(hi)+1
	}
	if !ok {
		return errorf("value %v is not representable in %v", v, dt)
	}
	return nil
}

// IntRange returns the smallest and largest value of integer dtype dt,
// exactly (lo as an int64, hi as a uint64: U64's is MaxUint64); it
// returns 0, 0 for other dtypes.
func IntRange(dt DType) (lo int64, hi uint64) {
	switch dt {
	case I64:
		return math.MinInt64, math.MaxInt64
	case I32:
		return math.MinInt32, math.MaxInt32
	case I16:
		return math.MinInt16, math.MaxInt16
	case I8:
		return math.MinInt8, math.MaxInt8
	case U64:
		return 0, math.MaxUint64
	case U32:
		return 0, math.MaxUint32
	case U16:
		return 0, math.MaxUint16
	case U8:
		return 0, math.MaxUint8
	}
	return 0, 0
}
