package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cudnn"
	"github.com/emberml/ember/ir"
)

// The cuDNN tests run each convolution direction on cuDNN (the dnn*
// functions, which must take every case here), on the backend's own
// kernels (cuDNN turned off) and as a float64 host reference computed
// from the same element values, on random non-zero inputs presented
// through contiguous and non-contiguous views, and check both GPU results
// against the reference elementwise: |got − ref| ≤ tol · max(Σ|terms|, 1)
// with tol F32/Flex32 1e-5, F64 1e-12, F16/BF16 1e-2 (the sum of the
// products' magnitudes bounds a float sum's rounding error). They need a
// GPU and cuDNN and skip without either.

// dnnGPU returns the shared GPU backend with its cuDNN handle made, or
// skips the test.
func dnnGPU(t testing.TB) *Backend {
	t.Helper()
	b := gpu(t)
	if _, err := b.CuDNNVersion(); err != nil {
		t.Skipf("no cuDNN: %v", err)
	}
	return b
}

// withoutCuDNN runs f with b's convolutions on its own kernels.
func withoutCuDNN(b *Backend, f func()) {
	b.dnn.off.Store(true)
	defer b.dnn.off.Store(false)
	f()
}

// dnnDeclined is why cuDNN last declined a problem.
func dnnDeclined(b *Backend) error {
	b.dnn.mu.Lock()
	defer b.dnn.mu.Unlock()
	return b.dnn.declined
}

// dnnTol is the elementwise tolerance relative to Σ|terms|.
func dnnTol(dt backend.DType) float64 {
	switch dt {
	case backend.F64:
		return 1e-12
	case backend.F16, backend.BF16:
		return 1e-2
	}
	return 1e-5
}

// conv4 is a rank-4 index helper: the flat row-major offset of (a, b, c, d) in shape s.
func conv4(s []int, a, b, c, d int) int { return ((a*s[1]+b)*s[2]+c)*s[3] + d }

// refConv2d is conv2d in float64: x [N, C, H, W], w [K, C/G, R, S], y
// shape ys; it returns y and Σ|terms| per element.
func refConv2d(x []float64, xs []int, w []float64, ws []int, o backend.ConvOptions, ys []int) (y, mag []float64) {
	y, mag = make([]float64, backend.NumElements(ys)), make([]float64, backend.NumElements(ys))
	g := o.Groups
	cg, kg := xs[1]/g, ys[1]/g
	for n := range ys[0] {
		for k := range ys[1] {
			for p := range ys[2] {
				for q := range ys[3] {
					var s, m float64
					for c := range cg {
						for r := range ws[2] {
							iy := p*o.Stride[0] - o.Padding[0] + r*o.Dilation[0]
							if iy < 0 || iy >= xs[2] {
								continue
							}
							for sx := range ws[3] {
								ix := q*o.Stride[1] - o.Padding[1] + sx*o.Dilation[1]
								if ix < 0 || ix >= xs[3] {
									continue
								}
								v := x[conv4(xs, n, k/kg*cg+c, iy, ix)] * w[conv4(ws, k, c, r, sx)]
								s += v
								m += math.Abs(v)
							}
						}
					}
					i := conv4(ys, n, k, p, q)
					y[i], mag[i] = s, m
				}
			}
		}
	}
	return y, mag
}

// refConvTranspose2d is conv_transpose2d in float64: x [N, Cin, H, W], w
// [Cin, Cout/G, R, S], y shape ys, in scatter form.
func refConvTranspose2d(x []float64, xs []int, w []float64, ws []int, o backend.ConvOptions, ys []int) (y, mag []float64) {
	y, mag = make([]float64, backend.NumElements(ys)), make([]float64, backend.NumElements(ys))
	g := o.Groups
	cig, cog := xs[1]/g, ws[1]
	for n := range xs[0] {
		for ci := range xs[1] {
			for iy := range xs[2] {
				for ix := range xs[3] {
					xv := x[conv4(xs, n, ci, iy, ix)]
					for co := range cog {
						for r := range ws[2] {
							oy := iy*o.Stride[0] - o.Padding[0] + r*o.Dilation[0]
							if oy < 0 || oy >= ys[2] {
								continue
							}
							for s := range ws[3] {
								ox := ix*o.Stride[1] - o.Padding[1] + s*o.Dilation[1]
								if ox < 0 || ox >= ys[3] {
									continue
								}
								v := xv * w[conv4(ws, ci, co, r, s)]
								i := conv4(ys, n, ci/cig*cog+co, oy, ox)
								y[i] += v
								mag[i] += math.Abs(v)
							}
						}
					}
				}
			}
		}
	}
	return y, mag
}

// refWeightGrad is conv2d's weight gradient in float64: x [N, C, H, W],
// dy [N, K, P, Q], dw shape ws [K, C/G, R, S].
func refWeightGrad(x []float64, xs []int, dy []float64, ys []int, o backend.ConvOptions, ws []int) (dw, mag []float64) {
	dw, mag = make([]float64, backend.NumElements(ws)), make([]float64, backend.NumElements(ws))
	g := o.Groups
	cg, kg := xs[1]/g, ys[1]/g
	for k := range ws[0] {
		for c := range ws[1] {
			for r := range ws[2] {
				for sx := range ws[3] {
					var s, m float64
					for n := range xs[0] {
						for p := range ys[2] {
							iy := p*o.Stride[0] - o.Padding[0] + r*o.Dilation[0]
							if iy < 0 || iy >= xs[2] {
								continue
							}
							for q := range ys[3] {
								ix := q*o.Stride[1] - o.Padding[1] + sx*o.Dilation[1]
								if ix < 0 || ix >= xs[3] {
									continue
								}
								v := dy[conv4(ys, n, k, p, q)] * x[conv4(xs, n, k/kg*cg+c, iy, ix)]
								s += v
								m += math.Abs(v)
							}
						}
					}
					i := conv4(ws, k, c, r, sx)
					dw[i], mag[i] = s, m
				}
			}
		}
	}
	return dw, mag
}

// checkRef compares a GPU result with the reference within dnnTol(dt)
// relative to max(mag, 1), reporting the first few mismatches.
func checkRef(t *testing.T, b *Backend, what string, got backend.Tensor, ref, mag []float64, shape []int) {
	t.Helper()
	d, err := b.ToData(got)
	if err != nil {
		t.Fatalf("%s: ToData: %v", what, err)
	}
	if !slices.Equal(d.Shape, shape) {
		t.Fatalf("%s: shape %v, want %v", what, d.Shape, shape)
	}
	tol := dnnTol(d.DType)
	bad := 0
	for i, want := range ref {
		if g := d.Value(i); !(math.Abs(g-want) <= tol*max(mag[i], 1)) {
			if bad < 3 {
				t.Errorf("%s: at %v got %v, want %v (Σ|terms| %g, tol %g)", what, unravel(i, shape), g, want, mag[i], tol)
			}
			bad++
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(ref))
	}
}

// dnnInput uploads random non-zero data of the logical shape in layout l
// and returns the tensor and its element values in row-major order.
func dnnInput(t *testing.T, b *Backend, rng *rand.Rand, shape []int, dt backend.DType, l viewLayout) (*Tensor, []float64) {
	t.Helper()
	x := l.view(b, b.FromData(nonZero(rng, l.base(shape), dt)), shape).(*Tensor)
	d, err := b.ToData(x)
	if err != nil {
		t.Fatalf("reading an input back: %v", err)
	}
	return x, values(d)
}

// dnnCase is one convolution: conv2d of x by w under opts (the
// transposed convolution takes x [N, w[0], H, W] and w as its weight).
type dnnCase struct {
	x, w []int
	opts backend.ConvOptions
}

func convOpts(stride, pad, dil [2]int, groups int) backend.ConvOptions {
	return backend.ConvOptions{Stride: stride, Padding: pad, Dilation: dil, Groups: groups}
}

var dnnCases = []dnnCase{
	{[]int{2, 6, 10, 9}, []int{8, 6, 3, 3}, convOpts([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)},
	{[]int{2, 8, 11, 10}, []int{6, 4, 3, 2}, convOpts([2]int{2, 1}, [2]int{1, 2}, [2]int{2, 1}, 2)},
	{[]int{2, 6, 9, 9}, []int{6, 1, 3, 3}, convOpts([2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, 6)},
	{[]int{3, 5, 6, 7}, []int{4, 5, 1, 1}, convOpts([2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1)},
	{[]int{4, 32, 16, 16}, []int{32, 32, 3, 3}, convOpts([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)},
	{[]int{1, 4, 13, 12}, []int{8, 2, 5, 5}, convOpts([2]int{3, 2}, [2]int{2, 0}, [2]int{1, 2}, 2)},
}

var dnnDTypes = []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16, backend.BF16}

func TestCuDNNConv2d(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(41, 7))
	for _, dt := range dnnDTypes {
		for ci, c := range dnnCases {
			what := fmt.Sprintf("conv2d %v case %d (x %v, w %v, %+v)", dt, ci, c.x, c.w, c.opts)
			x, xv := dnnInput(t, b, rng, c.x, dt, layouts[ci%len(layouts)])
			w, wv := dnnInput(t, b, rng, c.w, dt, layouts[(ci/2)%2])
			sp := ir.ConvOutputSize([2]int{c.x[2], c.x[3]}, [2]int{c.w[2], c.w[3]}, c.opts, false)
			ys := []int{c.x[0], c.w[0], sp[0], sp[1]}
			ref, mag := refConv2d(xv, c.x, wv, c.w, c.opts, ys)
			got := b.dnnConv2d(x, w, c.opts, slices.Clone(ys))
			if got == nil {
				t.Fatalf("%s: cuDNN declined: %v", what, dnnDeclined(b))
			}
			checkRef(t, b, what+" cuDNN", got, ref, mag, ys)
			var own backend.Tensor
			withoutCuDNN(b, func() { own = ir.Conv2d(b, x, w, c.opts) })
			checkRef(t, b, what+" own kernels", own, ref, mag, ys)
		}
	}
}

func TestCuDNNConvTranspose2d(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(43, 9))
	for _, dt := range dnnDTypes {
		for ci, c := range dnnCases {
			o := c.opts
			// An output padding below the stride wherever the stride allows one.
			o.OutputPadding = [2]int{o.Stride[0] - 1, o.Stride[1] - 1}
			what := fmt.Sprintf("conv_transpose2d %v case %d (w %v, %+v)", dt, ci, c.w, o)
			xs := []int{c.x[0], c.w[0], c.x[2], c.x[3]}
			x, xv := dnnInput(t, b, rng, xs, dt, layouts[ci%len(layouts)])
			w, wv := dnnInput(t, b, rng, c.w, dt, layouts[(ci/2)%2])
			sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{c.w[2], c.w[3]}, o, true)
			ys := []int{xs[0], c.w[1] * o.Groups, sp[0], sp[1]}
			ref, mag := refConvTranspose2d(xv, xs, wv, c.w, o, ys)
			got := b.dnnConvTranspose2d(x, w, o, slices.Clone(ys))
			if got == nil {
				t.Fatalf("%s: cuDNN declined: %v", what, dnnDeclined(b))
			}
			checkRef(t, b, what+" cuDNN", got, ref, mag, ys)
			var own backend.Tensor
			withoutCuDNN(b, func() { own = ir.ConvTranspose2d(b, x, w, o) })
			checkRef(t, b, what+" own kernels", own, ref, mag, ys)
		}
	}
}

// TestCuDNNConvTransposeUnmapped: an output padding of at least the
// stride (allowed below the dilation) has no backward-data equivalent;
// cuDNN must decline it and the kernel must give the reference through
// the backend's own path.
func TestCuDNNConvTransposeUnmapped(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(47, 1))
	o := backend.ConvOptions{Stride: [2]int{1, 2}, Dilation: [2]int{3, 1}, Padding: [2]int{1, 0}, OutputPadding: [2]int{2, 1}, Groups: 1}
	xs, ws := []int{2, 3, 5, 6}, []int{3, 4, 3, 3}
	x, xv := dnnInput(t, b, rng, xs, backend.F32, layouts[0])
	w, wv := dnnInput(t, b, rng, ws, backend.F32, layouts[0])
	sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, true)
	ys := []int{xs[0], ws[1], sp[0], sp[1]}
	if got := b.dnnConvTranspose2d(x, w, o, slices.Clone(ys)); got != nil {
		t.Fatalf("cuDNN took an output padding %v with stride %v", o.OutputPadding, o.Stride)
	}
	ref, mag := refConvTranspose2d(xv, xs, wv, ws, o, ys)
	checkRef(t, b, "conv_transpose2d with output padding >= stride", ir.ConvTranspose2d(b, x, w, o), ref, mag, ys)
}

// weightGradOn is Conv2dWeightGrad(x, g) with weight shape ws through e.
func weightGradOn(e ir.Executor, x, g backend.Tensor, o backend.ConvOptions, ws []int) backend.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: slices.Clone(ws), Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{x, g}})
}

func TestCuDNNWeightGrad(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(53, 5))
	for _, dt := range dnnDTypes {
		for ci, c := range dnnCases {
			what := fmt.Sprintf("conv2d_weight_grad %v case %d (x %v, w %v, %+v)", dt, ci, c.x, c.w, c.opts)
			sp := ir.ConvOutputSize([2]int{c.x[2], c.x[3]}, [2]int{c.w[2], c.w[3]}, c.opts, false)
			ys := []int{c.x[0], c.w[0], sp[0], sp[1]}
			x, xv := dnnInput(t, b, rng, c.x, dt, layouts[ci%len(layouts)])
			g, gv := dnnInput(t, b, rng, ys, dt, layouts[(ci+1)%len(layouts)])
			ref, mag := refWeightGrad(xv, c.x, gv, ys, c.opts, c.w)
			got := b.dnnWeightGrad(x, g, c.opts, slices.Clone(c.w))
			if got == nil {
				t.Fatalf("%s: cuDNN declined: %v", what, dnnDeclined(b))
			}
			checkRef(t, b, what+" cuDNN", got, ref, mag, c.w)
			var own backend.Tensor
			withoutCuDNN(b, func() { own = weightGradOn(b, x, g, c.opts, c.w) })
			checkRef(t, b, what+" decomposition", own, ref, mag, c.w)
		}
	}
}

// TestCuDNNThroughExec checks that the kernels of the three kinds reach
// cuDNN (one cuDNN call each) and give its bits.
func TestCuDNNThroughExec(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(59, 3))
	c := dnnCases[1]
	x, _ := dnnInput(t, b, rng, c.x, backend.F32, layouts[0])
	w, _ := dnnInput(t, b, rng, c.w, backend.F32, layouts[0])
	sp := ir.ConvOutputSize([2]int{c.x[2], c.x[3]}, [2]int{c.w[2], c.w[3]}, c.opts, false)
	ys := []int{c.x[0], c.w[0], sp[0], sp[1]}
	g, _ := dnnInput(t, b, rng, ys, backend.F32, layouts[0])
	tx, _ := dnnInput(t, b, rng, []int{c.x[0], c.w[0], 4, 5}, backend.F32, layouts[0])
	cases := []struct {
		name       string
		exec, want func() backend.Tensor
	}{
		{"conv2d", func() backend.Tensor { return ir.Conv2d(b, x, w, c.opts) },
			func() backend.Tensor { return b.dnnConv2d(x, w, c.opts, ys) }},
		{"conv2d_weight_grad", func() backend.Tensor { return weightGradOn(b, x, g, c.opts, c.w) },
			func() backend.Tensor { return b.dnnWeightGrad(x, g, c.opts, slices.Clone(c.w)) }},
		{"conv_transpose2d", func() backend.Tensor { return ir.ConvTranspose2d(b, tx, w, c.opts) },
			func() backend.Tensor {
				sp := ir.ConvOutputSize([2]int{4, 5}, [2]int{c.w[2], c.w[3]}, c.opts, true)
				return b.dnnConvTranspose2d(tx, w, c.opts, []int{c.x[0], c.w[1] * c.opts.Groups, sp[0], sp[1]})
			}},
	}
	for _, k := range cases {
		before := b.dnn.calls.Load()
		got := k.exec()
		if n := b.dnn.calls.Load() - before; n != 1 {
			t.Errorf("%s through Exec: %d cuDNN calls, want 1", k.name, n)
		}
		want := k.want()
		if want == nil {
			t.Fatalf("%s: cuDNN declined: %v", k.name, dnnDeclined(b))
		}
		sameBits(t, k.name+" through Exec", readNamed(t, b, got, k.name), readNamed(t, b, want, k.name))
	}
}

// TestCuDNNBenchmarkMode plans with cudnnFind*AlgorithmEx (one
// problem per direction) and checks the results against the reference.
func TestCuDNNBenchmarkMode(t *testing.T) {
	b := dnnGPU(t)
	b.SetCuDNNBenchmark(true)
	defer b.SetCuDNNBenchmark(false)
	rng := rand.New(rand.NewPCG(61, 2))
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		c := dnnCases[4]
		x, xv := dnnInput(t, b, rng, c.x, dt, layouts[0])
		w, wv := dnnInput(t, b, rng, c.w, dt, layouts[0])
		ys := []int{c.x[0], c.w[0], c.x[2], c.x[3]}
		g, gv := dnnInput(t, b, rng, ys, dt, layouts[0])
		ref, mag := refConv2d(xv, c.x, wv, c.w, c.opts, ys)
		if got := b.dnnConv2d(x, w, c.opts, slices.Clone(ys)); got == nil {
			t.Errorf("%v forward: cuDNN declined: %v", dt, dnnDeclined(b))
		} else {
			checkRef(t, b, fmt.Sprintf("%v forward, searched", dt), got, ref, mag, ys)
		}
		ref, mag = refConvTranspose2d(gv, ys, wv, c.w, c.opts, c.x)
		if got := b.dnnConvTranspose2d(g, w, c.opts, slices.Clone(c.x)); got == nil {
			t.Errorf("%v backward data: cuDNN declined: %v", dt, dnnDeclined(b))
		} else {
			checkRef(t, b, fmt.Sprintf("%v backward data, searched", dt), got, ref, mag, c.x)
		}
		ref, mag = refWeightGrad(xv, c.x, gv, ys, c.opts, c.w)
		if got := b.dnnWeightGrad(x, g, c.opts, slices.Clone(c.w)); got == nil {
			t.Errorf("%v backward filter: cuDNN declined: %v", dt, dnnDeclined(b))
		} else {
			checkRef(t, b, fmt.Sprintf("%v backward filter, searched", dt), got, ref, mag, c.w)
		}
	}
}

// dnnGraphStep is the work TestCuDNNGraph records: the three convolution
// directions and an elementwise op on the forward result.
func dnnGraphStep(b *Backend, x, w, g, tx, tw backend.Tensor, o, to backend.ConvOptions) []backend.Tensor {
	y := ir.Conv2d(b, x, w, o)
	return []backend.Tensor{y, ir.Unary(b, ir.OpTanh, y), weightGradOn(b, x, g, o, w.Shape()), ir.ConvTranspose2d(b, tx, tw, to)}
}

// TestCuDNNGraph records cuDNN convolutions planned before the recording
// and checks that every launch gives the eager results bit for bit on new
// inputs; a problem first seen while recording runs on the backend's own
// kernels in the graph and matches the reference.
func TestCuDNNGraph(t *testing.T) {
	b := dnnGPU(t)
	rng := rand.New(rand.NewPCG(67, 4))
	f32 := backend.F32
	o := convOpts([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 2)
	to := convOpts([2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, 2)
	to.OutputPadding = [2]int{1, 1}
	xs, ws, gs, txs, tws := []int{2, 8, 12, 12}, []int{16, 4, 3, 3}, []int{2, 16, 12, 12}, []int{2, 16, 6, 6}, []int{16, 4, 3, 3}
	shapes := [][]int{xs, ws, gs, txs, tws}
	fresh := func() []backend.Tensor {
		ts := make([]backend.Tensor, len(shapes))
		for i, s := range shapes {
			ts[i] = b.FromData(nonZero(rng, s, f32))
		}
		return ts
	}
	warm := fresh()
	eager := dnnGraphStep(b, warm[0], warm[1], warm[2], warm[3], warm[4], o, to)
	in := make([]backend.Tensor, len(shapes))
	for i, s := range shapes {
		in[i] = b.NewStatic(s, f32)
	}
	outs := make([]backend.Tensor, len(eager))
	for i, e := range eager {
		outs[i] = b.NewStatic(e.Shape(), f32)
	}
	// A problem no eager call planned: x [1, 3, 7, 7] by w [5, 3, 2, 2].
	nx, nw := b.NewStatic([]int{1, 3, 7, 7}, f32), b.NewStatic([]int{5, 3, 2, 2}, f32)
	nOut := b.NewStatic([]int{1, 5, 6, 6}, f32)
	no := convOpts([2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1)

	before := b.dnn.calls.Load()
	beginGraph(t, b)
	rec := dnnGraphStep(b, in[0], in[1], in[2], in[3], in[4], o, to)
	for i, r := range rec {
		if err := b.CopyInto(outs[i], r); err != nil {
			t.Fatalf("recording CopyInto of result %d: %v", i, err)
		}
	}
	if err := b.CopyInto(nOut, ir.Conv2d(b, nx, nw, no)); err != nil {
		t.Fatalf("recording CopyInto of the unplanned convolution: %v", err)
	}
	g := endGraph(t, b)
	if n := b.dnn.calls.Load() - before; n != 3 {
		t.Errorf("the recording made %d cuDNN calls, want 3 (the planned problems only)", n)
	}
	names := []string{"conv2d", "tanh(conv2d)", "conv2d_weight_grad", "conv_transpose2d"}
	for it := range 3 {
		vals := fresh()
		for i := range in {
			feed(t, b, in[i], vals[i], fmt.Sprint("input ", i))
		}
		nxd, nwd := nonZero(rng, nx.Shape(), f32), nonZero(rng, nw.Shape(), f32)
		feed(t, b, nx, b.FromData(nxd), "unplanned x")
		feed(t, b, nw, b.FromData(nwd), "unplanned w")
		if err := g.Launch(); err != nil {
			t.Fatalf("launch %d: %v", it, err)
		}
		want := dnnGraphStep(b, vals[0], vals[1], vals[2], vals[3], vals[4], o, to)
		for i := range outs {
			what := fmt.Sprintf("launch %d: %s", it, names[i])
			sameBits(t, what, readNamed(t, b, outs[i], what), readNamed(t, b, want[i], what))
		}
		ref, mag := refConv2d(values(nxd), nx.Shape(), values(nwd), nw.Shape(), no, nOut.Shape())
		checkRef(t, b, fmt.Sprintf("launch %d: unplanned conv2d", it), nOut, ref, mag, nOut.Shape())
	}
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync after the launches: %v", err)
	}
}

// TestDNNKeyConsistent checks on the host which transposed convolutions
// map to cuDNN's backward data: those whose output padding is below the
// stride.
func TestDNNKeyConsistent(t *testing.T) {
	for _, c := range []struct {
		stride, dil, outPad [2]int
		want                bool
	}{
		{[2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, true},
		{[2]int{3, 1}, [2]int{1, 1}, [2]int{2, 0}, true},
		{[2]int{1, 1}, [2]int{2, 1}, [2]int{1, 0}, false},
		{[2]int{2, 1}, [2]int{3, 2}, [2]int{2, 0}, false},
	} {
		o := backend.ConvOptions{Stride: c.stride, Dilation: c.dil, OutputPadding: c.outPad, Padding: [2]int{1, 0}, Groups: 2}
		xs, ws := []int{2, 4, 5, 6}, []int{4, 3, 3, 2}
		sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, true)
		k := dnnKeyOf(cudnn.BackwardData, o, xs, ws, []int{2, 6, sp[0], sp[1]})
		if got := k.consistent(); got != c.want {
			t.Errorf("stride %v dilation %v output padding %v: consistent %v, want %v", c.stride, c.dil, c.outPad, got, c.want)
		}
	}
	o := convOpts([2]int{2, 1}, [2]int{1, 2}, [2]int{2, 1}, 2)
	k := dnnKeyOf(cudnn.Forward, o, []int{2, 8, 11, 10}, []int{6, 4, 3, 2}, []int{2, 6, 5, 13})
	if !k.consistent() {
		t.Errorf("forward key %+v is not consistent", k)
	}
	k.y[1] = 5
	if k.consistent() {
		t.Error("a forward key with 5 output channels for a 6-filter weight is consistent")
	}
}

// BenchmarkConvCuDNN times the 3×3 convolution of a [64, 64, 56, 56]
// batch by 64 filters (padding 1) in its three directions, on cuDNN with
// algorithms from the heuristics ("cudnn") and from a timed search
// ("cudnn-find"), and on the backend's own kernels ("own": im2col and
// cuBLAS, col2im, and the weight gradient's decomposition), for F32
// (no TF32) and BF16. TFLOP/s counts 2·N·K·C·R·S·P·Q for each direction;
// times are device-event medians.
func BenchmarkConvCuDNN(bb *testing.B) {
	b := dnnGPU(bb)
	const n, c, hw, k = 64, 64, 56, 3
	o := convOpts([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
	xs, ws := []int{n, c, hw, hw}, []int{c, c, k, k}
	flops := 2.0 * n * c * c * k * k * hw * hw
	dist := backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		x, w, dy := b.random(xs, dt, dist), b.random(ws, dt, dist), b.random(xs, dt, dist)
		dirs := []struct {
			name     string
			dnn, own func() *Tensor
		}{
			{"fwd", func() *Tensor { return b.dnnConv2d(x, w, o, xs) }, func() *Tensor { return b.conv2d(x, w, o, xs) }},
			{"bwd-data", func() *Tensor { return b.dnnConvTranspose2d(dy, w, o, xs) }, func() *Tensor { return b.convTranspose2d(dy, w, o, xs) }},
			{"bwd-filter", func() *Tensor { return b.dnnWeightGrad(x, dy, o, ws) }, func() *Tensor {
				return tensorOf(weightGradOn(b, x, dy, o, ws))
			}},
		}
		for _, d := range dirs {
			for _, mode := range []string{"cudnn", "cudnn-find", "own"} {
				bb.Run(fmt.Sprintf("%v/%s/%s", dt, d.name, mode), func(bb *testing.B) {
					run := d.dnn
					switch mode {
					case "cudnn-find":
						b.SetCuDNNBenchmark(true)
						defer b.SetCuDNNBenchmark(false)
					case "own":
						run = d.own
						b.dnn.off.Store(true)
						defer b.dnn.off.Store(false)
					}
					if t := run(); t == nil {
						bb.Fatalf("cuDNN declined: %v", dnnDeclined(b))
					} else {
						b.Release(t)
					}
					ms := kernelMillis(bb, b, func() { b.Release(run()) })
					bb.ReportMetric(flops/(ms*1e-3)/1e12, "TFLOP/s")
					bb.ReportMetric(ms, "ms")
				})
			}
		}
	}
}
