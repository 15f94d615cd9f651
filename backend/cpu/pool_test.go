package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// refMaxPool is the direct float64 loop of max pooling over x [N, C, H, W]
// (row-major): taps in kernel order, padding -Inf, the first NaN kept,
// ties keeping the first tap.
func refMaxPool(x []float64, s [4]int, o backend.PoolOptions) []float64 {
	out := backend.PoolOutputSize(s[2], s[3], o)
	y := make([]float64, s[0]*s[1]*out[0]*out[1])
	k := 0
	for p := range s[0] * s[1] {
		for oy := range out[0] {
			for ox := range out[1] {
				best, first := 0.0, true
				for ky := range o.Kernel[0] {
					for kx := range o.Kernel[1] {
						iy := oy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
						ix := ox*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
						v := math.Inf(-1)
						if iy >= 0 && iy < s[2] && ix >= 0 && ix < s[3] {
							v = x[(p*s[2]+iy)*s[3]+ix]
						}
						switch {
						case first:
							best, first = v, false
						case math.IsNaN(best):
						case math.IsNaN(v) || v > best:
							best = v
						}
					}
				}
				y[k] = best
				k++
			}
		}
	}
	return y
}

// composedMaxPool is the composition the forward kernel replaces: the
// padded input's kH·kW strided views stacked on a new last axis and
// reduced with ReduceMax.
func composedMaxPool(b ir.Executor, x backend.Tensor, o backend.PoolOptions) backend.Tensor {
	s := x.Shape()
	out := backend.PoolOutputSize(s[2], s[3], o)
	p := x
	if o.Padding != [2]int{} {
		p = ir.Pad(b, x, []int{0, 0, 0, 0, o.Padding[0], o.Padding[0], o.Padding[1], o.Padding[1]}, math.Inf(-1))
	}
	ps := p.Shape()
	var views []backend.Tensor
	for i := range o.Kernel[0] {
		for j := range o.Kernel[1] {
			h0, w0 := i*o.Dilation[0], j*o.Dilation[1]
			v := ir.Slice(b, p, []backend.Range{{Start: 0, End: ps[0], Step: 1}, {Start: 0, End: ps[1], Step: 1},
				{Start: h0, End: h0 + o.Stride[0]*(out[0]-1) + 1, Step: o.Stride[0]},
				{Start: w0, End: w0 + o.Stride[1]*(out[1]-1) + 1, Step: o.Stride[1]}})
			views = append(views, ir.Reshape(b, v, []int{s[0], s[1], out[0], out[1], 1}))
		}
	}
	return ir.Reduce(b, backend.ReduceMax, ir.Cat(b, views, 4), 4, false)
}

// bitsMatch reports the first index where got and want (read as float64)
// differ in bits, NaN matching any NaN, or -1.
func bitsMatch(got, want []float64) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			return i
		}
	}
	return -1
}

// TestMaxPool2dMatchesComposition checks MaxPool2d against the float64
// loop and the composition (Pad, Slice, Reshape, Cat, Reduce) on flex, and
// MaxPool2dGrad against the decomposition of ir.KindMaxPool2dGrad on flex
// (the gradient of that composition: extremum gradients over the stacked
// windows, scattered back and summed), bit for bit, for F32, Flex32 and
// F64; inputs are integer-valued (many ties, and ±0) with a NaN and a -Inf,
// laid out as a permuted (non-contiguous) view; the output gradient is
// random or a broadcast (stride-0) view; the options cover overlapping
// windows, padding (with windows of padding only), dilation, stride other
// than the kernel, and a size split over the workers. F16 (which this
// backend lowers with the decomposition) must match flex too.
func TestMaxPool2dMatchesComposition(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	opt := func(k0, k1, s0, s1, p0, p1, d0, d1 int) backend.PoolOptions {
		return backend.PoolOptions{Kernel: [2]int{k0, k1}, Stride: [2]int{s0, s1}, Padding: [2]int{p0, p1}, Dilation: [2]int{d0, d1}}
	}
	cases := []struct {
		shape [4]int
		o     backend.PoolOptions
		bcast bool // the output gradient is expanded from one plane
	}{
		{[4]int{2, 3, 8, 10}, opt(2, 2, 2, 2, 0, 0, 1, 1), false},
		{[4]int{2, 2, 7, 9}, opt(3, 3, 1, 1, 1, 1, 1, 1), false},
		{[4]int{1, 3, 9, 8}, opt(3, 2, 2, 1, 1, 0, 2, 1), true},
		{[4]int{2, 2, 2, 3}, opt(2, 2, 1, 1, 2, 2, 3, 3), false},
		{[4]int{1, 2, 6, 7}, opt(1, 3, 2, 2, 0, 1, 1, 1), false},
		{[4]int{8, 16, 24, 24}, opt(2, 2, 2, 2, 0, 0, 1, 1), false},
	}
	for ci, c := range cases {
		n := numel(c.shape[:])
		v := randVals(n, uint64(ci))
		for i := range v {
			v[i] = math.Round(v[i] * 1.5)
			if v[i] == 0 && i%3 == 0 {
				v[i] = math.Copysign(0, -1)
			}
		}
		v[n/3], v[n/2] = math.NaN(), math.Inf(-1)
		// Store x as [N, C, W, H] and view it as [N, C, H, W].
		s := c.shape
		stored := make([]float64, n)
		for p := range s[0] * s[1] {
			for h := range s[2] {
				for w := range s[3] {
					stored[(p*s[3]+w)*s[2]+h] = v[(p*s[2]+h)*s[3]+w]
				}
			}
		}
		out := backend.PoolOutputSize(s[2], s[3], c.o)
		yshape := []int{s[0], s[1], out[0], out[1]}
		gshape := yshape
		if c.bcast {
			gshape = []int{1, 1, out[0], out[1]}
		}
		gv := randVals(numel(gshape), uint64(ci+50))
		wantY := refMaxPool(v, s, c.o)
		for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16} {
			name := fmt.Sprintf("case %d %v", ci, dt)
			view := func(b backend.Backend) backend.Tensor {
				return ir.Permute(b, tensorOf(b, stored, []int{s[0], s[1], s[3], s[2]}, dt), []int{0, 1, 3, 2})
			}
			grad := func(b backend.Backend) backend.Tensor {
				g := tensorOf(b, gv, gshape, dt)
				if c.bcast {
					g = ir.Expand(b, g, yshape)
				}
				return g
			}
			x := view(be)
			y := maxPool2d(be, x, c.o)
			if i := bitsMatch(values(t, be, y), wantY); i >= 0 {
				t.Fatalf("%s: output [%d] = %v, want %v", name, i, values(t, be, y)[i], wantY[i])
			}
			fx := view(fl)
			sameAsFlex(t, name+" forward", be, fl, y, composedMaxPool(fl, fx, c.o))
			gx := maxPool2dGrad(be, x, y, grad(be), c.o)
			want := maxPool2dGrad(fl, fx, maxPool2d(fl, fx, c.o), grad(fl), c.o)
			got, exp := values(t, be, gx), values(t, fl, want)
			if i := bitsMatch(got, exp); i >= 0 {
				t.Fatalf("%s: gradient [%d] = %v, decomposed %v", name, i, got[i], exp[i])
			}
		}
	}
	for _, k := range []ir.Kind{ir.KindMaxPool2d, ir.KindMaxPool2dGrad} {
		if be.Supports(k, backend.F16) || be.Supports(k, backend.BF16) || !be.Supports(k, backend.F64) ||
			!be.Supports(k, backend.F32) || !be.Supports(k, backend.Flex32) {
			t.Errorf("Supports(%v): want F32, Flex32 and F64 only", k)
		}
	}
}

// BenchmarkMaxPool2d times the forward and backward kernels on the first
// pooling of the MNIST CNN (F32 [64, 32, 24, 24], 2×2 windows).
func BenchmarkMaxPool2d(b *testing.B) {
	be := newTestBackend()
	shape := []int{64, 32, 24, 24}
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	x := tensorOf(be, randVals(numel(shape), 1), shape, backend.F32)
	y := maxPool2d(be, x, o)
	g := tensorOf(be, randVals(numel(y.Shape()), 2), y.Shape(), backend.F32)
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			maxPool2d(be, x, o)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for b.Loop() {
			maxPool2dGrad(be, x, y, g, o)
		}
	})
}

// The tiled gradient (windows that tile the input) equals the general one
// bit for bit, and BenchmarkMaxPoolBwd compares their speed on the MNIST
// CNN's first pooling.
func TestMaxPoolBwdTiledMatchesGeneral(t *testing.T) {
	for _, s := range [][4]int{{2, 3, 8, 10}, {3, 2, 9, 7}, {1, 4, 24, 24}} {
		for _, k := range [][2]int{{2, 2}, {3, 2}, {1, 3}} {
			o := backend.PoolOptions{Kernel: k, Stride: k, Dilation: [2]int{1, 1}}
			x, y, gr, g, n := maxPoolBwdCase(s, o, uint64(s[2]*10+k[0]))
			got, want := make([]float32, n), make([]float32, n)
			maxPoolBwdTiled(got, x, y, gr, g)
			maxPoolBwdGeneral(want, x, y, gr, g)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%v kernel %v: element %d: tiled %v, general %v", s, k, i, got[i], want[i])
				}
			}
		}
	}
}

// maxPoolBwdCase makes x (with ties, NaNs, −∞ and −0), its pooling y and
// a gradient with −0s for shape s under o.
func maxPoolBwdCase(s [4]int, o backend.PoolOptions, seed uint64) (x, y, gr view4[float32], g *poolGeom, n int) {
	n = numel(s[:])
	v := randVals(n, seed)
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(math.Round(v[i] * 1.5))
		switch i % 37 {
		case 3:
			xs[i] = float32(math.NaN())
		case 5:
			xs[i] = float32(math.Inf(-1))
		case 7:
			xs[i] = float32(math.Copysign(0, -1))
		}
	}
	out := backend.PoolOutputSize(s[2], s[3], o)
	g = newPoolGeom(s[:], out, o)
	ys := make([]float32, s[0]*s[1]*out[0]*out[1])
	ref := refMaxPool(func() []float64 {
		f := make([]float64, n)
		for i, x := range xs {
			f[i] = float64(x)
		}
		return f
	}(), s, o)
	for i, r := range ref {
		ys[i] = float32(r)
	}
	gs := make([]float32, len(ys))
	for i, r := range randVals(len(ys), seed+1) {
		gs[i] = float32(r)
		if i%11 == 0 {
			gs[i] = float32(math.Copysign(0, -1))
		}
	}
	st := func(h, w int) [4]int { return [4]int{s[1] * h * w, h * w, w, 1} }
	x = view4[float32]{xs, 0, st(s[2], s[3])}
	y = view4[float32]{ys, 0, st(out[0], out[1])}
	gr = view4[float32]{gs, 0, st(out[0], out[1])}
	return x, y, gr, g, n
}

func BenchmarkMaxPoolBwd(bb *testing.B) {
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	x, y, gr, g, n := maxPoolBwdCase([4]int{64, 32, 24, 24}, o, 9)
	out := make([]float32, n)
	bb.Run("tiled", func(bb *testing.B) {
		for bb.Loop() {
			maxPoolBwdTiled(out, x, y, gr, g)
		}
	})
	bb.Run("general", func(bb *testing.B) {
		for bb.Loop() {
			maxPoolBwdGeneral(out, x, y, gr, g)
		}
	})
}
