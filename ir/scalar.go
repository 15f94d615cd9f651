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
		lo, hi := intRange(dt)
		ok = v > lo-1 && v < hi+1
	}
	if !ok {
		return errorf("value %v is not representable in %v", v, dt)
	}
	return nil
}

// intRange returns the smallest and largest value of an integer dtype of
// at most 32 bits, exactly, as float64.
func intRange(dt DType) (lo, hi float64) {
	switch dt {
	case I32:
		return math.MinInt32, math.MaxInt32
	case I16:
		return math.MinInt16, math.MaxInt16
	case I8:
		return math.MinInt8, math.MaxInt8
	case U32:
		return 0, math.MaxUint32
	case U16:
		return 0, math.MaxUint16
	}
	return 0, math.MaxUint8
}
