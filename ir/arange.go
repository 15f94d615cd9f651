package ir

import (
	"math"
	"math/bits"
)

// ArangeLen returns the number of elements of the integer range start,
// start+step, ... up to but excluding end, computed exactly (without
// overflow for any bounds). It returns an error when step is 0, when the
// step's sign leads away from end (equal bounds give 0 for either sign),
// or when the count exceeds what an int can count.
func ArangeLen(start, end, step int) (int, error) {
	switch {
	case step == 0:
		return 0, errorf("step must be non-zero")
	case start == end:
		return 0, nil
	case step > 0 && end < start, step < 0 && end > start:
		return 0, errorf("step %d leads away from end %d (start %d): its sign must be that of end - start", step, end, start)
	}
	// |end - start| and |step| in uint64, exact for every int (wrapping
	// subtraction of two's complement values gives the true distance).
	var dist, mag uint64
	if step > 0 {
		dist, mag = uint64(end)-uint64(start), uint64(step)
	} else {
		dist, mag = uint64(start)-uint64(end), -uint64(step)
	}
	n := (dist-1)/mag + 1
	if n > math.MaxInt {
		return 0, errorf("[%d, %d) in steps of %d has %d elements, more than an int can count", start, end, step, n)
	}
	return int(n), nil
}

// ArangeInts reports whether op, of KindArange, is in its exact integer
// form (Ints holds start and step) and returns them.
func ArangeInts(op *Op) (start, step int64, ok bool) {
	if len(op.Ints) != 2 {
		return 0, 0, false
	}
	return int64(op.Ints[0]), int64(op.Ints[1]), true
}

// checkArangeInts validates the exact integer form of an Arange op of n
// elements of integer dtype dt from start in steps of step: every element
// start + i·step (i < n) must be an int64 value within dt's range.
func checkArangeInts(dt DType, n int, start, step int64) error {
	if !dt.IsInt() {
		return errorf("integer start and step need an integer dtype, got %v", dt)
	}
	if step == 0 {
		return errorf("step must be non-zero")
	}
	if n == 0 {
		return nil
	}
	mag := uint64(step)
	room := uint64(math.MaxInt64) - uint64(start) // how far start may rise
	if step < 0 {
		mag = -uint64(step)
		room = uint64(start) + 1<<63 // how far it may fall: start - MinInt64
	}
	hi, span := bits.Mul64(uint64(n-1), mag)
	if hi != 0 || span > room {
		return errorf("%d elements from %d in steps of %d overflow int64", n, start, step)
	}
	last := int64(uint64(start) + uint64(n-1)*uint64(step)) // exact: checked above
	lo, hi := IntRange(dt)
	top := int64(min(hi, math.MaxInt64))
	if min(start, last) < lo || max(start, last) > top {
		return errorf("values from %d to %d do not fit %v (range [%d, %d])", start, last, dt, lo, top)
	}
	return nil
}
