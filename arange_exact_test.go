package ember

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
)

// intSettingsDriver opens, under a fresh test-only type name, the backend
// of a real driver (flex, cpu, cuda), so a test device can be configured
// with any int dtype while its ops run on that backend's kernels. It lists
// no devices.
type intSettingsDriver struct{ base backend.DeviceID }

func (d intSettingsDriver) Open(backend.DeviceID) (backend.Backend, error) {
	drv, _ := backend.Lookup(d.base.Type)
	return drv.Open(d.base)
}
func (intSettingsDriver) Devices() []backend.DeviceID { return nil }
func (intSettingsDriver) Priority() int               { return 0 }

var intSettingsCount atomic.Int64

// deviceWithIntDType returns a fresh device on base's backend whose int
// dtype is dt.
func deviceWithIntDType(t *testing.T, base backend.DeviceID, dt DType) Device {
	t.Helper()
	name := fmt.Sprintf("arangetest-%s-%d", base.Type, intSettingsCount.Add(1))
	backend.Register(name, intSettingsDriver{base: base})
	dev := DeviceFromID(backend.DeviceID{Type: name})
	if err := dev.Configure(DeviceConfig{}.WithIntDType(IntDType(dt))); err != nil {
		t.Fatalf("configure %v for %v: %v", name, dt, err)
	}
	return dev
}

// arangeBases are the devices of the backends the Arange tests run on,
// one per backend type.
func arangeBases(t *testing.T) []backend.DeviceID {
	var bases []backend.DeviceID
	var types []string
	for _, d := range testDevices(t) {
		if id := d.ID(); !slices.Contains(types, id.Type) {
			bases, types = append(bases, id), append(types, id.Type)
		}
	}
	return bases
}

// refArange is [start, start+step, ...) below (or, for a negative step,
// above) end, by big.Int arithmetic.
func refArange(start, end, step int) []*big.Int {
	var out []*big.Int
	s, e, d := big.NewInt(int64(start)), big.NewInt(int64(end)), big.NewInt(int64(step))
	for v := s; (step > 0 && v.Cmp(e) < 0) || (step < 0 && v.Cmp(e) > 0); v = new(big.Int).Add(v, d) {
		out = append(out, v)
	}
	return out
}

// checkArange compares ArangeStep on dev with the big.Int reference,
// element by element through the exact int64 values.
func checkArange(t *testing.T, dev Device, start, end, step int) {
	t.Helper()
	what := fmt.Sprintf("ArangeStep(%d, %d, %d) on %v", start, end, step, dev)
	x := ArangeStep(start, end, step, dev)
	if dt := DType(dev.Settings().IntDType); x.DType() != dt {
		t.Fatalf("%s: dtype %v, want %v", what, x.DType(), dt)
	}
	want := refArange(start, end, step)
	got := x.Int64s()
	if len(got) != len(want) || !slices.Equal(x.Shape(), []int{len(want)}) {
		t.Fatalf("%s: shape %v, want [%d]", what, x.Shape(), len(want))
	}
	for i, w := range want {
		if got[i] != w.Int64() {
			t.Fatalf("%s: element %d is %d, want %v", what, i, got[i], w)
		}
	}
}

// Integer Arange is exact in every int dtype on every backend: far above
// 2^53, at the extremes of int64 and of each dtype, for steps of both
// signs; values agree with big.Int arithmetic.
func TestArangeExactIntegers(t *testing.T) {
	rng := newRNG(41)
	for _, base := range arangeBases(t) {
		i64 := deviceWithIntDType(t, base, I64)
		for _, c := range [][3]int{
			{1 << 53, 1<<53 + 9, 1},                 // float64 steps by 2 here
			{1<<60 + 1, 1<<60 - 20, -3},             // descending, off the float grid
			{math.MaxInt - 6, math.MaxInt, 1},       // up to MaxInt - 1
			{math.MinInt, math.MinInt + 5, 1},       // from MinInt
			{math.MaxInt, math.MaxInt - 7, -2},      // down from MaxInt
			{math.MinInt, math.MaxInt, 1 << 62},     // the whole int range, 4 elements
			{math.MinInt, math.MaxInt, math.MaxInt}, // MinInt, -1, MaxInt-1
			{math.MaxInt, math.MinInt, math.MinInt}, // MaxInt, -1
			{math.MaxInt, math.MinInt, -(1 << 61)},  // 8 elements down
			{-(1 << 55) - 7, 1<<55 + 7, 1<<52 + 3},  // odd step across zero
			{3, -3, -1}, {0, 1, 5}, {-4, -1, 2},     // small ones
			{7, 7, 1}, {7, 7, -1}, {math.MinInt, math.MinInt, 3}, // equal bounds: empty
		} {
			checkArange(t, i64, c[0], c[1], c[2])
		}
		for range 200 { // random bounds beyond 2^53 with random non-zero steps
			start := int(rng.Int64()) >> rng.IntN(12)
			step := int(rng.Int64N(1<<50)) + 1
			count := rng.IntN(20) + 1
			if rng.IntN(2) == 0 {
				step = -step
			}
			end := start + count*step
			if (step > 0 && end < start) || (step < 0 && end > start) {
				continue // overflowed: not a range an int can bound
			}
			checkArange(t, i64, start, end, step)
		}
		for _, dt := range []DType{I32, I16, I8, U64, U32, U16, U8} {
			if !DeviceFromID(base).SupportsDType(dt) {
				continue // libtorch has no U16, U32, U64
			}
			dev := deviceWithIntDType(t, base, dt)
			lo, hi := intRangeOf(dt)
			checkArange(t, dev, hi-4, hi+1, 1)    // up to the largest value
			checkArange(t, dev, lo+4, lo-1, -1)   // down to the smallest
			checkArange(t, dev, lo, hi+1, hi/2+1) // the whole range in a few long steps
			checkArange(t, dev, hi, hi, -5)
		}
	}
}

// intRangeOf is the range of int dtype dt as ints (U64: up to MaxInt).
func intRangeOf(dt DType) (lo, hi int) {
	switch dt {
	case I32:
		return math.MinInt32, math.MaxInt32
	case I16:
		return math.MinInt16, math.MaxInt16
	case I8:
		return math.MinInt8, math.MaxInt8
	case U64:
		return 0, math.MaxInt - 1 // hi+1 must fit an int
	case U32:
		return 0, math.MaxUint32
	case U16:
		return 0, math.MaxUint16
	case U8:
		return 0, math.MaxUint8
	}
	return math.MinInt + 1, math.MaxInt - 1
}

// Arange arguments that cannot give the exact range are an *Error naming
// the op and the arguments: a step whose sign leads away from end, a zero
// step, a count past MaxInt, values outside the int dtype, and (wrapping
// ErrOutOfMemory) a range no memory could hold. None is an empty tensor, a
// wrong shape or a runtime panic.
func TestArangeBadArgumentsAreErrors(t *testing.T) {
	for _, base := range arangeBases(t) {
		i64 := deviceWithIntDType(t, base, I64)
		type badCase struct {
			name       string
			dev        Device
			start, end int
			step       int
			want       []string
			oom        bool
		}
		cases := []badCase{
			{"step away from end", i64, 0, 10, -1, []string{"leads away from end", "start 0", "end 10", "step -1", "i64"}, false},
			{"negative range", i64, 5, 3, 1, []string{"leads away from end", "start 5", "end 3", "step 1"}, false},
			{"extreme step away", i64, math.MinInt, math.MaxInt, math.MinInt, []string{"leads away from end"}, false},
			{"zero step", i64, 0, 10, 0, []string{"non-zero", "step 0"}, false},
			{"zero step equal bounds", i64, 3, 3, 0, []string{"non-zero"}, false},
			{"whole int range", i64, math.MinInt, math.MaxInt, 1, []string{"more than an int can count", "start -9223372036854775808"}, false},
			{"whole int range down", i64, math.MaxInt, math.MinInt, -1, []string{"more than an int can count"}, false},
			{"MaxInt elements", i64, 0, math.MaxInt, 1, []string{"arange", "[9223372036854775807]"}, true},
			{"bytes overflow uint64", i64, 0, 1<<62 + 1, 1, []string{"arange", "[4611686018427387905]"}, true},
			{"i8 above range", deviceWithIntDType(t, base, I8), 100, 200, 1, []string{"do not fit i8", "start 100", "end 200"}, false},
			{"u8 below zero", deviceWithIntDType(t, base, U8), -3, 2, 1, []string{"do not fit u8"}, false},
			{"i32 past 2^31", deviceWithIntDType(t, base, I32), 1<<31 - 2, 1<<31 + 2, 1, []string{"do not fit i32"}, false},
		}
		if DeviceFromID(base).SupportsDType(U64) {
			cases = append(cases, badCase{"u64 negative", deviceWithIntDType(t, base, U64), -1, 1, 1, []string{"do not fit u64"}, false})
		}
		for _, c := range cases {
			what := base.String() + " " + c.name
			var got *Tensor
			err := Try(func() { got = ArangeStep(c.start, c.end, c.step, c.dev) })
			var e *Error
			if !errors.As(err, &e) || e.Op != "arange" {
				t.Errorf("%s: got %v (shape %v), want an *Error of arange", what, err, shapeOf(got))
				continue
			}
			for _, fr := range c.want {
				if !strings.Contains(err.Error(), fr) {
					t.Errorf("%s: message %q lacks %q", what, err.Error(), fr)
				}
			}
			if c.oom && !errors.Is(err, ErrOutOfMemory) {
				t.Errorf("%s: %v does not wrap ErrOutOfMemory", what, err)
			}
		}
	}
}

func shapeOf(x *Tensor) []int {
	if x == nil {
		return nil
	}
	return x.Shape()
}
