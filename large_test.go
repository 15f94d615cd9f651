package ember

import (
	"math"
	"testing"
)

// TestLargeOutputs makes f32 tensors just above 2^28 elements (1 GiB, the
// old size-class limit of the cpu allocator) and runs an elementwise op,
// a unary op and a reduction on them, checking values at both ends and in
// the middle against their closed forms; flex too where the race detector
// does not slow its loops beyond reason. Skipped with -short or on hosts
// with less than 8 GiB of memory.
func TestLargeOutputs(t *testing.T) {
	if testing.Short() || hostMemory() < 8<<30 {
		t.Skip("needs 8 GiB of memory and a long run")
	}
	devs := []Device{CPU()}
	if !raceEnabled {
		devs = append(devs, Flex())
	}
	const n = 1<<28 + 1
	for _, dev := range devs {
		x := Ones([]int{n}, dev)
		y := x.AddScalar(1)
		for _, i := range []int{0, n / 2, n - 1} {
			if v := y.Narrow(0, i, 1).Float32s()[0]; v != 2 {
				t.Fatalf("%v: (1+1)[%d] = %v, want 2", dev, i, v)
			}
		}
		e := y.Exp()
		if v, want := e.Narrow(0, n-1, 1).Float32s()[0], float32(math.Exp(2)); v != want {
			t.Errorf("%v: exp(2) at the end = %v, want %v", dev, v, want)
		}
		// The sum of n twos accumulates in float64, exact, then rounds
		// once to f32.
		if s, want := y.Sum().Item(), float64(float32(2*float64(n))); s != want {
			t.Errorf("%v: sum of %d twos = %v, want %v", dev, n, s, want)
		}
	}
}
