package ember

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/ir"
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
		checkEq(t, "cumsum rank 0", mk(dev, ref{nil, []float64{-2.5}}, F32).CumSum(-1), ref{nil, []float64{-2.5}}, F32)
	})
}

// seqCumSum is the sequential prefix sum of r (values representable in dt)
// along axis a as the kernels compute it: floats accumulate in float64
// (F16 and BF16 in float32) and each partial sum is rounded to dt once;
// ints accumulate in int64 and wrap to dt.
func seqCumSum(r ref, a int, dt DType) ref {
	out := ref{slices.Clone(r.shape), make([]float64, len(r.v))}
	st := stridesOf(r.shape)
	idx := make([]int, len(r.shape))
	acc64 := make([]float64, len(r.v))
	acc32 := make([]float32, len(r.v))
	acci := make([]int64, len(r.v))
	for i, v := range r.v {
		unravelInto(i, r.shape, idx)
		acc64[i], acc32[i], acci[i] = v, float32(v), int64(v)
		if idx[a] > 0 {
			acc64[i] += acc64[i-st[a]]
			acc32[i] += acc32[i-st[a]]
			acci[i] += acci[i-st[a]]
		}
		switch {
		case dt == F16 || dt == BF16:
			out.v[i] = quantize(float64(acc32[i]), dt)
		case dt.IsFloat():
			out.v[i] = quantize(acc64[i], dt)
		case dt == I32:
			out.v[i] = float64(int32(acci[i]))
		default:
			out.v[i] = float64(acci[i])
		}
	}
	return out
}

// TestCumSumKernelsAreSequential checks, on every device whose backend has
// a CumSum kernel, that the kernel is the sequential sum bit for bit
// (float64 accumulators for F32 and F64, float32 for F16 and BF16, each
// partial sum rounded once): on hand-worked lanes where a float32 (or an
// F16) running sum would stay at 1, and on random data in every layout,
// including lanes long enough to run in parallel. Where a device runs the
// Hillis–Steele decomposition instead, integer results must still be
// exact; the decomposition is also checked directly against the kernel.
func TestCumSumKernelsAreSequential(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		kernel := func(dt DType) bool { return dev.Backend().Supports(ir.KindCumSum, dt) }
		if kernel(F32) {
			tiny := ref{[]int{5}, []float64{1, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}}
			check(t, "f32 accumulates in float64", mk(dev, tiny, F32).CumSum(0), ref{[]int{5}, []float64{1, 1, 1 + 0x1p-23, 1 + 0x1p-22, 1 + 0x1p-22}}, F32, 0, nil)
		}
		if kernel(F16) {
			half := ref{[]int{4}, []float64{1, 0x1p-12, 0x1p-12, 0x1p-12}}
			check(t, "f16 accumulates in float32", mk(dev, half, F16).CumSum(0), ref{[]int{4}, []float64{1, 1, 1, 1 + 0x1p-10}}, F16, 0, nil)
		}
		rng := newRNG(31)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			for _, shape := range [][]int{{3, 37, 2}, {300, 250}} {
				x := randRef(shape, dt, ints(rng, -100, 100))
				if dt.IsFloat() {
					x = mapRef(randRef(shape, dt, nonZero(rng, 0.01, 3)), func(v float64) float64 { return quantize(v, dt) })
				}
				for _, l := range layoutsFor(len(shape))[:2] {
					xt := l.view(dev, x, dt)
					for a := range shape {
						name := "sequential cumsum " + dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(a)
						if kernel(dt) || dt.IsInt() {
							check(t, name, xt.CumSum(a), seqCumSum(x, a, dt), dt, 0, nil)
						}
						if dt.IsInt() && len(shape) == 3 {
							op := ir.Op{Kind: ir.KindCumSum, Axis: a, In: [3]ir.Tensor{xt.t}}
							if err := op.Infer(); err != nil {
								t.Fatal(err)
							}
							dec := wrap(dev, ir.SpecOf(ir.KindCumSum).Decompose(op, dev.Backend())[0])
							check(t, "decomposed "+name, dec, seqCumSum(x, a, dt), dt, 0, nil)
						}
					}
				}
			}
		}
	})
}

// CumSum is differentiable: the gradient of sum(w·cumsum(x)) is the
// reverse cumulative sum of w.
func ExampleTensor_CumSum() {
	dev := CPU().Autodiff()
	x := FromFloats([]float32{1, -2, 3, 5}, []int{4}, dev).RequireGrad()
	y := x.CumSum(0)
	w := FromFloats([]float32{1, 10, 100, 1000}, []int{4}, dev)
	g := y.Mul(w).Sum().Backward().Of(x)
	fmt.Println(y.Float32s(), g.Float32s())
	// Output: [1 -1 2 7] [1111 1110 1100 1000]
}
