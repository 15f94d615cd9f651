package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// poolCases are max-pool geometries: the MNIST CNN's (2×2, stride 2),
// overlapping windows, padding, dilation, a 1×1 kernel, uneven sizes.
var poolCases = []struct {
	shape []int
	o     ir.PoolOptions
}{
	{[]int{4, 3, 24, 24}, ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}},
	{[]int{2, 3, 9, 11}, ir.PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}}},
	{[]int{2, 2, 10, 9}, ir.PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Dilation: [2]int{1, 2}}},
	{[]int{1, 4, 7, 7}, ir.PoolOptions{Kernel: [2]int{2, 3}, Stride: [2]int{3, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{2, 1}}},
	{[]int{3, 2, 5, 6}, ir.PoolOptions{Kernel: [2]int{1, 1}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}},
	{[]int{2, 2, 7, 5}, ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}},
}

// poolData returns x with many ties (values on a coarse grid), some NaNs,
// infinities and signed zeros, and a gradient g of y's shape with some −0.
func poolData(rng *rand.Rand, xs, ys []int, dt backend.DType) (x, g *backend.TensorData) {
	x = fromF64(xs, dt, func() float64 {
		switch r := rng.IntN(100); {
		case r < 2:
			return math.NaN()
		case r < 4:
			return math.Inf(-1)
		case r < 5:
			return math.Inf(1)
		case r < 8:
			return math.Copysign(0, -1)
		}
		return float64(rng.IntN(7)-3) / 2
	})
	g = fromF64(ys, dt, func() float64 {
		if rng.IntN(10) == 0 {
			return math.Copysign(0, -1)
		}
		return rng.NormFloat64()
	})
	return x, g
}

// samePoolBits compares got with want element by element: NaN matches NaN,
// and with signedZero false −0 matches +0; otherwise the bits must agree.
func samePoolBits(t *testing.T, what string, got, want *backend.TensorData, signedZero bool) {
	t.Helper()
	g, w := values(got), values(want)
	if len(g) != len(w) {
		t.Fatalf("%s: %d elements, want %d", what, len(g), len(w))
	}
	bad := 0
	for i := range w {
		a, b := g[i], w[i]
		ok := math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b)) || (!signedZero && a == 0 && b == 0)
		if !ok {
			if bad == 0 {
				t.Errorf("%s: element %d: got %v (%#x), want %v (%#x)", what, i, a, math.Float64bits(a), b, math.Float64bits(b))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(w))
	}
}

// The max-pool kernels give the decompositions' values: the forward
// maximum (NaN where a tap is NaN, −∞ padding) and, bit for bit, the
// gradient routed to the first tap equal to the maximum, on inputs full of
// ties, NaNs, infinities and signed zeros, for F32 and F64.
func TestGPUMaxPoolKernels(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, dt := range []backend.DType{backend.F32, backend.F64} {
		for _, c := range poolCases {
			what := fmt.Sprintf("%v %v %+v", dt, c.shape, c.o)
			out := ir.PoolOutputSize(c.shape[2], c.shape[3], c.o)
			ys := []int{c.shape[0], c.shape[1], out[0], out[1]}
			xd, gd := poolData(rng, c.shape, ys, dt)

			fwd := ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: c.o}}
			fwd.In[0] = b.FromData(xd)
			if err := fwd.Infer(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			got := b.Exec(fwd)[0]
			ref := fwd
			ref.In[0] = flexRef.FromData(xd)
			want := ir.SpecOf(ir.KindMaxPool2d).Decompose(ref, flexRef)[0]
			wantY := read(t, flexRef, want)
			samePoolBits(t, what+" forward", read(t, b, got), wantY, false)

			// The gradient, from the reference's y (the tie and NaN
			// routing depends on y's exact values).
			grad := ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: &ir.Attrs{Pool: c.o}}
			grad.In = [3]ir.Tensor{b.FromData(xd), b.FromData(wantY), b.FromData(gd)}
			if err := grad.Infer(); err != nil {
				t.Fatalf("%s: gradient: %v", what, err)
			}
			gotDX := b.Exec(grad)[0]
			refGrad := grad
			refGrad.In = [3]ir.Tensor{flexRef.FromData(xd), want, flexRef.FromData(gd)}
			wantDX := ir.SpecOf(ir.KindMaxPool2dGrad).Decompose(refGrad, flexRef)[0]
			samePoolBits(t, what+" gradient", read(t, b, gotDX), read(t, flexRef, wantDX), true)
		}
	}
	if !b.Supports(ir.KindMaxPool2d, backend.F32) || b.Supports(ir.KindMaxPool2d, backend.F16) {
		t.Error("the max-pool kernels should cover F32 and F64 only (F16 is lowered)")
	}
}

// BenchmarkMaxPool times the MNIST CNN's first max-pool (forward and
// gradient of [64, 32, 24, 24], 2×2 stride 2) as kernels and as the
// decompositions on the device.
func BenchmarkMaxPool(bb *testing.B) {
	b := gpu(bb)
	rng := rand.New(rand.NewPCG(5, 6))
	o := ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	xs, ys := []int{64, 32, 24, 24}, []int{64, 32, 12, 12}
	xd, gd := poolData(rng, xs, ys, backend.F32)
	x, g := b.FromData(xd), b.FromData(gd)
	fwd := ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}}
	if err := fwd.Infer(); err != nil {
		bb.Fatal(err)
	}
	y := b.Exec(fwd)[0]
	grad := ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x, y, g}}
	if err := grad.Infer(); err != nil {
		bb.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"forward/kernel", func() { b.Exec(fwd) }},
		{"forward/decomposition", func() { ir.SpecOf(ir.KindMaxPool2d).Decompose(fwd, b) }},
		{"gradient/kernel", func() { b.Exec(grad) }},
		{"gradient/decomposition", func() { ir.SpecOf(ir.KindMaxPool2dGrad).Decompose(grad, b) }},
	} {
		bb.Run(c.name, func(bb *testing.B) {
			for bb.Loop() {
				c.f()
			}
			if err := b.Sync(); err != nil {
				bb.Fatal(err)
			}
		})
	}
}
