package ember

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/ir"
)

// sameFloats reports whether a and b hold the same bits, any NaN matching
// any NaN (payloads are not part of the semantics), and where they first
// differ.
func sameFloats(a, b []float64) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return i, false
		}
	}
	return 0, true
}

// poolRun is one max-pooling forward and backward on dev: the leaf holds
// stored (laid out through l, then doubled by an exact memory-bound op so
// that checkpointing has something to recompute), the loss is
// sum(y·w). It returns y's values and the leaf's gradient (nil when w is
// empty: then only the forward runs).
func poolRun(t *testing.T, dev Device, stored ref, l layout, dt DType, o PoolOptions, unbatched bool, w ref) (y, g []float64) {
	t.Helper()
	leaf := mk(dev, stored, dt).RequireGrad()
	x := leaf
	for _, s := range l.steps {
		x = s.fwd(x)
	}
	if unbatched {
		x = x.Squeeze(0)
	}
	out := x.MulScalar(2).MaxPool2d(o)
	if w.v == nil {
		return out.Float64s(), nil
	}
	gr := out.Mul(mk(dev, ref{out.Shape(), w.v}, dt)).Sum().Backward().Of(leaf)
	if gr == nil {
		t.Fatalf("%v: no gradient", dev)
	}
	return out.Float64s(), gr.Float64s()
}

// TestMaxPoolFastPathMatchesComposition checks the CPU backend's max-pool
// kernels (its kernels of ir.KindMaxPool2d and KindMaxPool2dGrad, reached
// through the autodiff decorator)
// against the composed pooling on Flex().Autodiff(): outputs and input
// gradients bit for bit (NaNs matching NaNs), with and without
// checkpointing, in F32 and F64, on integer-valued inputs (many tied
// maxima), with NaN, -Inf and -0 elements (tied with +0: the first tap wins), padding (including windows of
// padding only), stride different from the kernel, dilation, non-contiguous
// layouts and unbatched input; the upstream gradient is random.
func TestMaxPoolFastPathMatchesComposition(t *testing.T) {
	cases := []struct {
		shape []int // the batched shape; unbatched cases drop the leading 1
		o     PoolOptions
		unb   bool
	}{
		{[]int{2, 3, 8, 10}, PoolOptions{Kernel: [2]int{2, 2}}, false},
		{[]int{2, 2, 7, 9}, PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}}, false},
		{[]int{1, 3, 9, 8}, PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Dilation: [2]int{2, 1}}, false},
		{[]int{2, 2, 2, 3}, PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Padding: [2]int{2, 2}, Dilation: [2]int{3, 3}}, false},
		{[]int{1, 2, 6, 7}, PoolOptions{Kernel: [2]int{1, 3}, Stride: [2]int{2, 2}, Padding: [2]int{0, 1}}, true},
		{[]int{1, 3, 7, 7}, PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}, true},
	}
	rng := newRNG(71)
	for ci, c := range cases {
		for _, dt := range []DType{F32, F64} {
			x := randRef(c.shape, dt, ints(rng, -2, 2))
			x.v[rng.IntN(len(x.v))] = math.NaN()
			x.v[rng.IntN(len(x.v))] = math.Inf(-1)
			for range len(x.v) / 8 {
				x.v[rng.IntN(len(x.v))] = math.Copysign(0, -1) // ties of -0 with +0
			}
			ls := layoutsFor(4)
			if c.unb {
				ls = ls[:1] // the unbatched view squeezes a contiguous leaf
			}
			for _, l := range ls {
				stored := x
				for i := len(l.steps) - 1; i >= 0; i-- {
					stored = l.steps[i].inv(stored)
				}
				name := fmt.Sprintf("case %d %v %s", ci, dt, l.name)
				wy, _ := poolRun(t, Flex().Autodiff(), stored, l, dt, c.o, c.unb, ref{})
				w := randRef([]int{len(wy)}, dt, nonZero(rng, 0.3, 1.7))
				wy, wg := poolRun(t, Flex().Autodiff(), stored, l, dt, c.o, c.unb, w)
				for _, dev := range []Device{CPU().Autodiff(), CPU().Autodiff().GradientCheckpointing()} {
					gy, gg := poolRun(t, dev, stored, l, dt, c.o, c.unb, w)
					if i, ok := sameFloats(gy, wy); !ok {
						t.Errorf("%s on %v: output [%d] %v, composed %v", name, dev, i, gy[max(i, 0)], wy[max(i, 0)])
					}
					if i, ok := sameFloats(gg, wg); !ok {
						t.Errorf("%s on %v: gradient [%d] %v, composed %v", name, dev, i, gg[max(i, 0)], wg[max(i, 0)])
					}
				}
				// The plain (non-autodiff) devices agree too.
				xp := l.view(CPU(), x, dt)
				if c.unb {
					xp = xp.Squeeze(0)
				}
				if _, ok := sameFloats(xp.MulScalar(2).MaxPool2d(c.o).Float64s(), wy); !ok {
					t.Errorf("%s: plain CPU output differs from the composed one", name)
				}
			}
		}
	}
}

// TestMaxPoolFastPathSelection checks when MaxPool2d takes the backend
// kernel: on the CPU device, plain or autodiff, for F32 and F64 windows of
// two or more taps; never on Flex, for F16, or for a one-tap window.
func TestMaxPoolFastPathSelection(t *testing.T) {
	two := PoolOptions{Kernel: [2]int{2, 1}, Stride: [2]int{2, 1}, Dilation: [2]int{1, 1}}
	one := PoolOptions{Kernel: [2]int{1, 1}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	for _, c := range []struct {
		dev  Device
		dt   DType
		o    PoolOptions
		want bool
	}{
		{CPU(), F32, two, true}, {CPU(), F64, two, true}, {CPU().Autodiff(), F32, two, true},
		{CPU().Autodiff().GradientCheckpointing(), F64, two, true},
		{CPU(), F16, two, false}, {CPU(), F32, one, false}, {Flex(), F32, two, false}, {Flex().Autodiff(), F64, two, false},
	} {
		x := FullDType([]int{1, 1, 2, 2}, 0, c.dt, c.dev)
		// The kernel is the hardware backend's (autodiff records max
		// pooling whole on every backend and lowers it below itself).
		got := c.o.Kernel[0]*c.o.Kernel[1] >= 2 && x.Device().Inner().Backend().Supports(ir.KindMaxPool2d, x.DType())
		if got != c.want {
			t.Errorf("%v %v kernel %v: fast path %v, want %v", c.dev, c.dt, c.o.Kernel, got, c.want)
		}
	}
}

// TestMaxPoolFastPathTiesAndFiniteDifferences checks the CPU kernels'
// gradient against hand-worked ties (each window sends its gradient to its
// first maximum in kernel order, as PyTorch's max_pool2d) and, in F64
// away from ties, against central finite differences of sum(y·w)
// (tolerance 1e-6 relative).
func TestMaxPoolFastPathTiesAndFiniteDifferences(t *testing.T) {
	dev := CPU().Autodiff()
	x := FromFloats([]float64{3, 3, 1, 3, 3, 1}, []int{1, 1, 2, 3}, dev).RequireGrad()
	// Kernel 2×2, stride 1: windows {3,3,3,3} (positions 0, 1, 3, 4) and
	// {3,1,3,1} (positions 1, 2, 4, 5) select their first taps, 0 and 1.
	g := x.MaxPool2d(PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}}).Sum().Backward().Of(x).Float64s()
	if want := []float64{1, 1, 0, 0, 0, 0}; !slices.Equal(g, want) {
		t.Errorf("tied gradient %v, want %v", g, want)
	}

	rng := newRNG(5)
	shape := []int{2, 2, 5, 6}
	in := ref{shape: shape, v: make([]float64, numel(shape))}
	for i, p := range rng.Perm(len(in.v)) {
		in.v[i] = float64(p)*0.05 - 3 // distinct values 0.05 apart
	}
	o := PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}}
	plain := CPU()
	y0 := mk(plain, in, F64).MaxPool2d(o)
	w := randRef(y0.Shape(), F64, nonZero(rng, 0.5, 1.5))
	wt := mk(plain, w, F64)
	num := numericGrads([]ref{in}, fdStep, func(rs []ref) float64 { return mk(plain, rs[0], F64).MaxPool2d(o).Mul(wt).Sum().Item() })[0]
	leaf := mk(dev, in, F64).RequireGrad()
	got := leaf.MaxPool2d(o).Mul(mk(dev, w, F64)).Sum().Backward().Of(leaf).Float64s()
	for i := range got {
		if math.Abs(got[i]-num[i]) > fdTol*max(1, math.Abs(num[i])) {
			t.Errorf("d loss/d x[%d] = %v, finite differences %v", i, got[i], num[i])
		}
	}
}
