//go:build linux && (amd64 || arm64)

package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Reductions give flex's values on every axis, for short axes (one pass)
// and long ones (partial results reduced in further passes), NaN and
// ties included.
func TestReduceMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range dtypesOf(b, backend.F32, backend.F64, backend.F16, backend.BF16, backend.I64, backend.I32, backend.U8, backend.Bool) {
		for _, shape := range [][]int{{4, 5, 6}, {3, 5000}, {70000}, {2, 3000, 3}} {
			for r := ir.ReduceSum; r <= ir.ReduceArgMin; r++ {
				if dt == backend.Bool && (r == ir.ReduceSum || r == ir.ReduceProd) {
					continue
				}
				for axis := range shape {
					x, fx := randomPair(b, rng, shape, dt, layouts[0])
					if r == ir.ReduceProd && dt.IsFloat() {
						// products of thousands of values in ±[0.5, 4) overflow
						x, fx = pair(b, fromF64(shape, dt, func() float64 { return 1 + (rng.Float64()-0.5)/1000 }), layouts[0], shape)
					}
					sameTol(t, b, reduceOn(b, r, x, axis, axis == 0), reduceOn(flexRef, r, fx, axis, axis == 0), name(r, " ", dt, " ", shape, " axis ", axis), 1e-4)
				}
			}
		}
	}
	// NaN and ties over a long axis: the first NaN's index, the lowest
	// tied index.
	n := 9000
	d := fromF64([]int{n}, backend.F32, func() float64 { return 1 })
	for i, v := range map[int]float64{100: 5, 4000: 5, 7000: math.NaN(), 8000: math.NaN()} {
		putU32(d.Bytes[4*i:], math.Float32bits(float32(v)))
	}
	x, fx := pair(b, d, layouts[0], []int{n})
	for r := ir.ReduceMax; r <= ir.ReduceArgMin; r++ {
		same(t, b, reduceOn(b, r, x, 0, false), reduceOn(flexRef, r, fx, 0, false), name(r, " NaN and ties"))
	}
}

// Matmul gives flex's values on the tiled kernel and, for F32 products of
// 64 rows and columns or more, the register-blocked one: sizes that are
// not multiples of the blocks, transposed operands (read through their
// strides), broadcast batches, and misaligned views.
func TestMatmulMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(23, 24))
	type mm struct{ a, b []int }
	cases := []mm{{[]int{3, 4}, []int{4, 5}}, {[]int{1, 7}, []int{7, 1}}, {[]int{2, 17, 33}, []int{2, 33, 9}},
		{[]int{130, 70}, []int{70, 129}}, {[]int{64, 64}, []int{64, 64}}, {[]int{3, 1, 200, 24}, []int{2, 24, 65}},
		{[]int{256, 256}, []int{256, 256}}, {[]int{100, 1}, []int{1, 100}}}
	for _, dt := range dtypesOf(b, backend.F32, backend.F64, backend.F16, backend.BF16, backend.I64, backend.I32, backend.I8) {
		for _, c := range cases {
			if dt != backend.F32 && c.a[len(c.a)-1] > 70 {
				continue
			}
			for _, l := range layouts {
				x, fx := randomPair(b, rng, c.a, dt, l)
				y, fy := randomPair(b, rng, c.b, dt, layouts[(len(c.a))%len(layouts)])
				got, want := ir.Matmul(b, x, y), ir.Matmul(flexRef, fx, fy)
				sameNorm(t, b, got, want, name("matmul ", dt, " ", c.a, "x", c.b, " ", l.name))
			}
			// Transposed operands: x^T and y^T as permuted views.
			if len(c.a) == 2 && len(c.b) == 2 {
				xt, fxt := randomPair(b, rng, []int{c.a[1], c.a[0]}, dt, layouts[0])
				yt, fyt := randomPair(b, rng, []int{c.b[1], c.b[0]}, dt, layouts[0])
				got := ir.Matmul(b, ir.Transpose(b, xt), ir.Transpose(b, yt))
				want := ir.Matmul(flexRef, ir.Transpose(flexRef, fxt), ir.Transpose(flexRef, fyt))
				sameNorm(t, b, got, want, name("matmul transposed ", dt, " ", c.a, "x", c.b))
			}
		}
	}
	// A view starting one element in: the 16-byte loads must not be used.
	x, fx := randomPair(b, rng, []int{129 * 66}, backend.F32, layouts[0])
	y, fy := randomPair(b, rng, []int{66, 67}, backend.F32, layouts[0])
	rs := []backend.Range{{Start: 1, End: 1 + 128*66, Step: 1}}
	xs, fxs := ir.Reshape(b, ir.Slice(b, x, rs), []int{128, 66}), ir.Reshape(flexRef, ir.Slice(flexRef, fx, rs), []int{128, 66})
	sameNorm(t, b, ir.Matmul(b, xs, y), ir.Matmul(flexRef, fxs, fy), "matmul misaligned view")
}

// Convolutions and transposed convolutions give flex's values with
// strides, padding, dilation, groups and output padding.
func TestConvMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(25, 26))
	opts := []backend.ConvOptions{
		{}, {Stride: [2]int{2, 1}, Padding: [2]int{1, 2}}, {Dilation: [2]int{2, 2}, Padding: [2]int{2, 1}},
		{Groups: 2, Stride: [2]int{2, 2}}, {Stride: [2]int{2, 3}, OutputPadding: [2]int{1, 2}, Padding: [2]int{1, 0}},
	}
	for _, dt := range dtypesOf(b, backend.F32, backend.F64, backend.F16, backend.BF16) {
		for i, o := range opts {
			o = o.WithDefaults()
			x, fx := randomPair(b, rng, []int{2, 4, 9, 8}, dt, layouts[i%len(layouts)])
			w, fw := randomPair(b, rng, []int{6, 4 / o.Groups, 3, 2}, dt, layouts[0])
			if o.OutputPadding == [2]int{} {
				sameNorm(t, b, convOn(b, false, x, w, o), convOn(flexRef, false, fx, fw, o), name("conv2d ", dt, " ", o))
			}
			wt, fwt := randomPair(b, rng, []int{4, 6 / o.Groups, 3, 2}, dt, layouts[0])
			sameNorm(t, b, convOn(b, true, x, wt, o), convOn(flexRef, true, fx, fwt, o), name("conv_transpose2d ", dt, " ", o))
		}
	}
}

// F32 convolutions run as matrix products over chunks of the batch when
// the patch matrix of the whole batch is too large: every chunk size
// gives flex's values.
func TestConvChunks(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(33, 34))
	old := colBytes
	defer func() { colBytes = old }()
	o := backend.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 1}, Groups: 2}.WithDefaults()
	x, fx := randomPair(b, rng, []int{5, 4, 7, 6}, backend.F32, layouts[0])
	w, fw := randomPair(b, rng, []int{6, 2, 3, 3}, backend.F32, layouts[0])
	wt, fwt := randomPair(b, rng, []int{4, 3, 3, 3}, backend.F32, layouts[0])
	for _, limit := range []int{1, 3000, 1 << 30} {
		colBytes = limit
		sameNorm(t, b, convOn(b, false, x, w, o), convOn(flexRef, false, fx, fw, o), name("conv2d, patch limit ", limit))
		sameNorm(t, b, convOn(b, true, x, wt, o), convOn(flexRef, true, fx, fwt, o), name("conv_transpose2d, patch limit ", limit))
	}
}

// Gather, index-select and scatter-add give flex's values; scatter-add's
// sums with repeated indices are deterministic.
func TestIndexingMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(27, 28))
	for _, dt := range dtypesOf(b, backend.F32, backend.F64, backend.F16, backend.I64, backend.I8, backend.Bool) {
		x, fx := randomPair(b, rng, []int{4, 7, 5}, dt, layouts[1])
		for axis := range 3 {
			ishape := []int{3, 6, 4}
			ishape[axis] = 9
			d := fromF64(ishape, backend.I64, func() float64 { return float64(rng.IntN([]int{4, 7, 5}[axis])) })
			ix, fix := pair(b, d, layouts[0], ishape)
			same(t, b, ir.Gather(b, x, axis, ix), ir.Gather(flexRef, fx, axis, fix), name("gather ", dt, " axis ", axis))
			src, fsrc := randomPair(b, rng, ishape, dt, layouts[0])
			same(t, b, ir.ScatterAdd(b, x, axis, ix, src), ir.ScatterAdd(flexRef, fx, axis, fix, fsrc), name("scatter_add ", dt, " axis ", axis))
			sel := fromF64([]int{11}, backend.I64, func() float64 { return float64(rng.IntN([]int{4, 7, 5}[axis])) })
			s, fs := pair(b, sel, layouts[0], []int{11})
			same(t, b, ir.IndexSelect(b, x, axis, s), ir.IndexSelect(flexRef, fx, axis, fs), name("index_select ", dt, " axis ", axis))
		}
	}
}

// Pad, Cat and the views (reshape of a non-contiguous tensor, expand,
// flip, slice) give flex's values.
func TestMovementMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(29, 30))
	for _, dt := range dtypesOf(b, backend.F32, backend.F16, backend.I64, backend.U8, backend.Bool) {
		for _, l := range layouts {
			x, fx := randomPair(b, rng, []int{3, 4, 5}, dt, l)
			pads := []int{1, 0, 2, 3, 0, 1}
			same(t, b, ir.Pad(b, x, pads, 1), ir.Pad(flexRef, fx, pads, 1), name("pad ", dt, " ", l.name))
			y, fy := randomPair(b, rng, []int{3, 2, 5}, dt, layouts[0])
			same(t, b, ir.Cat(b, []backend.Tensor{x, y, x}, 1), ir.Cat(flexRef, []backend.Tensor{fx, fy, fx}, 1), name("cat ", dt, " ", l.name))
			same(t, b, ir.Reshape(b, x, []int{5, 12}), ir.Reshape(flexRef, fx, []int{5, 12}), name("reshape ", dt, " ", l.name))
		}
	}
}

// Full, Arange and Random: values converted as Cast does, the exact
// integer form of Arange, and reproducible, in-range random streams.
func TestCreation(t *testing.T) {
	b := testBackend(t)
	for _, dt := range dtypesOf(b, backend.AllDTypes...) {
		for _, v := range []float64{0, 1, -2.5, 300.7} {
			if ir.ScalarFits(v, dt) != nil {
				continue
			}
			same(t, b, ir.Full(b, []int{3, 5}, dt, v), ir.Full(flexRef, []int{3, 5}, dt, v), name("full ", dt, " ", v))
		}
		if dt != backend.Bool {
			same(t, b, arangeOn(b, 0.5, 1.25, 77, dt), arangeOn(flexRef, 0.5, 1.25, 77, dt), name("arange ", dt))
		}
	}
	exact := ir.Op{Kind: ir.KindArange, Shape: []int{50}, DType: backend.I64, Ints: []int{math.MaxInt64 - 49*1000, 1000}}
	same(t, b, ir.Apply(b, exact), ir.Apply(flexRef, exact), "arange exact int64")
	for _, dt := range dtypesOf(b, backend.F32, backend.F64, backend.F16, backend.I32, backend.Bool) {
		b.Seed(7)
		u1 := toData(t, b, randomOn(b, []int{4000}, dt, backend.Distribution{Kind: backend.DistUniform, A: -2, B: 3}))
		b.Seed(7)
		u2 := toData(t, b, randomOn(b, []int{4000}, dt, backend.Distribution{Kind: backend.DistUniform, A: -2, B: 3}))
		if err := u1.ApproxEqual(u2, 0, 0); err != nil {
			t.Errorf("random %v: the same seed gave different values: %v", dt, err)
		}
		var sum float64
		for i := range 4000 {
			v := u1.Value(i)
			if dt != backend.Bool && (v < -2 || v >= 3) {
				t.Fatalf("uniform %v [-2, 3) gave %v", dt, v)
			}
			sum += v
		}
		mean, want := sum/4000, 0.5
		if dt.IsInt() {
			want = 0 // floors of [-2, 3): -2 .. 2
		}
		if dt == backend.Bool {
			want = 0.5
		}
		if math.Abs(mean-want) > 0.15 {
			t.Errorf("uniform %v: mean %v, want about %v", dt, mean, want)
		}
	}
	nrm := toData(t, b, randomOn(b, []int{20000}, backend.F32, backend.Distribution{Kind: backend.DistNormal, A: 1, B: 2}))
	var s, s2 float64
	for i := range 20000 {
		v := nrm.Value(i)
		s += v
		s2 += v * v
	}
	mean := s / 20000
	sd := math.Sqrt(s2/20000 - mean*mean)
	if math.Abs(mean-1) > 0.08 || math.Abs(sd-2) > 0.08 {
		t.Errorf("normal(1, 2): mean %v, standard deviation %v", mean, sd)
	}
}
