package ember

import (
	"math"
	"slices"
	"testing"
)

// scanRef is the inclusive prefix sum of r along axis a in float64, and the
// prefix sums of |r| (the scale float errors are relative to).
func scanRef(r ref, a int) (sum, abs ref) {
	sum = ref{slices.Clone(r.shape), make([]float64, len(r.v))}
	abs = ref{slices.Clone(r.shape), make([]float64, len(r.v))}
	st := stridesOf(r.shape)
	idx := make([]int, len(r.shape))
	for i := range r.v {
		unravelInto(i, r.shape, idx)
		sum.v[i], abs.v[i] = r.v[i], math.Abs(r.v[i])
		if idx[a] > 0 {
			sum.v[i] += sum.v[i-st[a]]
			abs.v[i] += abs.v[i-st[a]]
		}
	}
	return sum, abs
}

// TestTableCumSum checks CumSum on every device, float and int dtype,
// layout and axis (negative too) against prefix sums computed in float64
// on the host, within the dtype's tolerance relative to the prefix sum of
// |x| (halves: twice that, as each partial sum rounds); ints exactly. Bool
// sums as the device's int dtype; a size-0 axis gives an empty result.
func TestTableCumSum(t *testing.T) {
	shapes := [][]int{{7}, {1, 1}, {3, 5}, {2, 3, 4}, {2, 0, 3}, {1, 33}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(29)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			for _, shape := range shapes {
				x := randRef(shape, dt, ints(rng, -9, 9))
				if dt.IsFloat() {
					x = randRef(shape, dt, nonZero(rng, 0.25, 2))
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						name := "cumsum " + dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(pa)
						want, scale := scanRef(x, pa)
						loosen := 1.0
						if dt == F16 || dt == BF16 {
							loosen = 2
						}
						check(t, name, xt.CumSum(a), want, dt, loosen, scale.v)
					}
				}
			}
		}
		b := randRef([]int{3, 4}, Bool, ints(rng, 0, 1))
		want, _ := scanRef(b, 1)
		checkEq(t, "cumsum bool", mk(dev, b, Bool).CumSum(1), want, DType(dev.Settings().IntDType))
		// Ints wrap like Go's.
		big := ref{[]int{2}, []float64{math.MaxInt32, 1}}
		checkEq(t, "cumsum i32 wraps", mk(dev, big, I32).CumSum(0), ref{[]int{2}, []float64{math.MaxInt32, math.MinInt32}}, I32)
		expectPanic(t, "cumsum axis out of range", func() { mk(dev, b, Bool).CumSum(2) }, "cumsum", "axis 2", "rank 2")
	})
}
