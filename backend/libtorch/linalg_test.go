//go:build libtorch && cgo

package libtorch

import (
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// matmulRef multiplies [b?, m, k] × [k, n] (a's batch broadcast over b) in
// float64.
func matmulRef(a, b []float64, batch, m, k, n int, bBatched bool) []float64 {
	out := make([]float64, batch*m*n)
	for z := range batch {
		for i := range m {
			for j := range n {
				s := 0.0
				for l := range k {
					bo := 0
					if bBatched {
						bo = z * k * n
					}
					s += a[z*m*k+i*k+l] * b[bo+l*n+j]
				}
				out[z*m*n+i*n+j] = s
			}
		}
	}
	return out
}

func matmulOp(a, b ir.Tensor) ir.Op { return ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{a, b}} }

// Matmul in every float dtype: plain, batched with a broadcast rhs, with
// transposed (permuted) operands, and with k = 0.
func TestMatmulFloat(t *testing.T) {
	rng := newRNG(14)
	for _, dt := range floatDTypes {
		const batch, m, k, n = 3, 5, 7, 4
		a := randVals(rng, batch*m*k, 0.1, 1, dt)
		b := randVals(rng, k*n, 0.1, 1, dt)
		want := matmulRef(a, b, batch, m, k, n, false)
		for i := range want {
			want[i] = quantize(want[i], dt)
		}
		got := run1(t, matmulOp(lt(a, []int{batch, m, k}, dt), lt(b, []int{k, n}, dt)))
		expect(t, "matmul "+dt.String(), got, want, dt)

		// The same product from transposed storage: aᵀ stored [batch, k, m]
		// and bᵀ stored [n, k], permuted back into views.
		at := make([]float64, len(a))
		for z := range batch {
			for i := range m {
				for l := range k {
					at[z*k*m+l*m+i] = a[z*m*k+i*k+l]
				}
			}
		}
		bt := make([]float64, len(b))
		for l := range k {
			for j := range n {
				bt[j*k+l] = b[l*n+j]
			}
		}
		av := exec(t, ir.Op{Kind: ir.KindPermute, Ints: []int{0, 2, 1}, In: [3]ir.Tensor{lt(at, []int{batch, k, m}, dt)}})[0]
		bv := exec(t, ir.Op{Kind: ir.KindPermute, Ints: []int{1, 0}, In: [3]ir.Tensor{lt(bt, []int{n, k}, dt)}})[0]
		expect(t, "matmul of transposed views "+dt.String(), run1(t, matmulOp(av, bv)), want, dt)
		// An expanded (stride 0) operand.
		row := lt(b[:n], []int{1, n}, dt)
		be := exec(t, ir.Op{Kind: ir.KindExpand, Shape: []int{k, n}, In: [3]ir.Tensor{row}})[0]
		bb := make([]float64, k*n)
		for l := range k {
			copy(bb[l*n:], b[:n])
		}
		we := matmulRef(a, bb, batch, m, k, n, false)
		for i := range we {
			we[i] = quantize(we[i], dt)
		}
		expect(t, "matmul of an expanded rhs "+dt.String(), run1(t, matmulOp(lt(a, []int{batch, m, k}, dt), be)), we, dt)

		z := run1(t, matmulOp(lt(nil, []int{2, 0}, dt), lt(nil, []int{0, 3}, dt)))
		expect(t, "matmul k=0 "+dt.String(), z, make([]float64, 6), dt)
	}
}

// Integer matmul is exact and wraps.
func TestMatmulInt(t *testing.T) {
	rng := newRNG(15)
	for _, dt := range intDTypes {
		const m, k, n = 3, 6, 2
		a := make([]int64, m*k)
		b := make([]int64, k*n)
		for i := range a {
			a[i] = wrapInt(rng.Int64N(400)-200, dt)
		}
		for i := range b {
			b[i] = wrapInt(rng.Int64N(400)-200, dt)
		}
		want := make([]int64, m*n)
		for i := range m {
			for j := range n {
				var s int64
				for l := range k {
					s = wrapInt(s+wrapInt(a[i*k+l]*b[l*n+j], dt), dt)
				}
				want[i*n+j] = s
			}
		}
		got := intsOf(t, exec(t, matmulOp(intTensor(a, []int{m, k}, dt), intTensor(b, []int{k, n}, dt)))[0])
		expectInts(t, "matmul "+dt.String(), got, want)
	}
}

// convRef is a direct float64 conv2d (transpose false) or conv_transpose2d
// of x [N, C, H, W] with w under o.
func convRef(x []float64, xs []int, w []float64, ws []int, o ir.ConvOptions, transpose bool) ([]float64, []int) {
	o = o.WithDefaults()
	g := o.Groups
	sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, transpose)
	var cout int
	if transpose {
		cout = ws[1] * g
	} else {
		cout = ws[0]
	}
	os := []int{xs[0], cout, sp[0], sp[1]}
	out := make([]float64, ir.NumElements(os))
	cin := xs[1]
	for nb := range xs[0] {
		for ci := range cin {
			for ih := range xs[2] {
				for iw := range xs[3] {
					if transpose {
						xv := x[flat(xs, []int{nb, ci, ih, iw})]
						grp := ci / (cin / g)
						for co := range ws[1] {
							for kh := range ws[2] {
								for kw := range ws[3] {
									oh := ih*o.Stride[0] - o.Padding[0] + kh*o.Dilation[0]
									ow := iw*o.Stride[1] - o.Padding[1] + kw*o.Dilation[1]
									if oh < 0 || ow < 0 || oh >= sp[0] || ow >= sp[1] {
										continue
									}
									out[flat(os, []int{nb, grp*ws[1] + co, oh, ow})] += xv * w[flat(ws, []int{ci, co, kh, kw})]
								}
							}
						}
					}
				}
			}
		}
		if transpose {
			continue
		}
		for co := range cout {
			grp := co / (cout / g)
			for oh := range sp[0] {
				for ow := range sp[1] {
					s := 0.0
					for cl := range ws[1] {
						ci := grp*ws[1] + cl
						for kh := range ws[2] {
							for kw := range ws[3] {
								ih := oh*o.Stride[0] - o.Padding[0] + kh*o.Dilation[0]
								iw := ow*o.Stride[1] - o.Padding[1] + kw*o.Dilation[1]
								if ih < 0 || iw < 0 || ih >= xs[2] || iw >= xs[3] {
									continue
								}
								s += x[flat(xs, []int{nb, ci, ih, iw})] * w[flat(ws, []int{co, cl, kh, kw})]
							}
						}
					}
					out[flat(os, []int{nb, co, oh, ow})] = s
				}
			}
		}
	}
	return out, os
}

// Conv2d and ConvTranspose2d with stride, padding, dilation and groups in
// every float dtype against the direct sums.
func TestConv(t *testing.T) {
	rng := newRNG(16)
	o := ir.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}, Groups: 2}
	ot := o
	ot.OutputPadding = [2]int{1, 0}
	for _, dt := range floatDTypes {
		xs, ws := []int{2, 4, 6, 7}, []int{6, 2, 3, 2}
		x := randVals(rng, ir.NumElements(xs), 0.1, 1, dt)
		w := randVals(rng, ir.NumElements(ws), 0.1, 1, dt)
		want, os := convRef(x, xs, w, ws, o, false)
		for i := range want {
			want[i] = quantize(want[i], dt)
		}
		op := ir.Op{Kind: ir.KindConv2d, Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{lt(x, xs, dt), lt(w, ws, dt)}}
		out := exec(t, op)[0]
		if !slices.Equal(out.Shape(), os) {
			t.Fatalf("conv2d shape %v, want %v", out.Shape(), os)
		}
		expect(t, "conv2d "+dt.String(), values(t, tb, out), want, dt)

		wts := []int{4, 3, 3, 2} // [Cin, Cout/groups, kH, kW]
		wt := randVals(rng, ir.NumElements(wts), 0.1, 1, dt)
		want, os = convRef(x, xs, wt, wts, ot, true)
		for i := range want {
			want[i] = quantize(want[i], dt)
		}
		op = ir.Op{Kind: ir.KindConvTranspose2d, Attrs: &ir.Attrs{Conv: ot}, In: [3]ir.Tensor{lt(x, xs, dt), lt(wt, wts, dt)}}
		out = exec(t, op)[0]
		if !slices.Equal(out.Shape(), os) {
			t.Fatalf("conv_transpose2d shape %v, want %v", out.Shape(), os)
		}
		expect(t, "conv_transpose2d "+dt.String(), values(t, tb, out), want, dt)
	}
}

// Conv2dWeightGrad agrees with the direct gradient sum and with its
// decomposition on this backend (to float rounding).
func TestConv2dWeightGrad(t *testing.T) {
	rng := newRNG(17)
	o := ir.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Dilation: [2]int{1, 2}, Groups: 2}.WithDefaults()
	xs, ws := []int{2, 4, 7, 6}, []int{6, 2, 3, 2}
	sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, false)
	gs := []int{2, 6, sp[0], sp[1]}
	for _, dt := range floatDTypes {
		x := randVals(rng, ir.NumElements(xs), 0.1, 1, dt)
		g := randVals(rng, ir.NumElements(gs), 0.1, 1, dt)
		want := make([]float64, ir.NumElements(ws))
		for nb := range xs[0] {
			for co := range ws[0] {
				grp := co / (ws[0] / o.Groups)
				for oh := range sp[0] {
					for ow := range sp[1] {
						gv := g[flat(gs, []int{nb, co, oh, ow})]
						for cl := range ws[1] {
							for kh := range ws[2] {
								for kw := range ws[3] {
									ih := oh*o.Stride[0] - o.Padding[0] + kh*o.Dilation[0]
									iw := ow*o.Stride[1] - o.Padding[1] + kw*o.Dilation[1]
									if ih < 0 || iw < 0 || ih >= xs[2] || iw >= xs[3] {
										continue
									}
									want[flat(ws, []int{co, cl, kh, kw})] += gv * x[flat(xs, []int{nb, grp*ws[1] + cl, ih, iw})]
								}
							}
						}
					}
				}
			}
		}
		for i := range want {
			want[i] = quantize(want[i], dt)
		}
		op := ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: ws, Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{lt(x, xs, dt), lt(g, gs, dt)}}
		got := run1(t, op)
		expect(t, "conv2d_weight_grad "+dt.String(), got, want, dt)
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		expect(t, "conv2d_weight_grad vs decomposition "+dt.String(), got, values(t, tb, ir.SpecOf(op.Kind).Decompose(op, decomposer{})[0]), dt)
	}
}

// sameBits reports whether two value lists are identical, NaN payloads
// aside, with signed zeros told apart.
func sameBits(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.IsNaN(a[i]) && math.IsNaN(b[i]) {
			continue
		}
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// MaxPool2d equals its decomposition bit for bit (NaN, -Inf and ties of
// -0 with +0 included), also where ATen's padding limit sends it to the
// decomposition.
func TestMaxPool2d(t *testing.T) {
	rng := newRNG(18)
	cases := []ir.PoolOptions{
		{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}},
		{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}},
		{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Padding: [2]int{0, 1}, Dilation: [2]int{2, 1}},
		{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Padding: [2]int{2, 2}, Dilation: [2]int{3, 3}}, // padding above ATen's limit
	}
	for ci, o := range cases {
		for _, dt := range floatDTypes {
			xs := []int{2, 3, 7, 8}
			x := randVals(rng, ir.NumElements(xs), 0, 2, dt)
			for i := range x {
				x[i] = math.Round(x[i]) // ties
				if rng.IntN(6) == 0 {
					x[i] = math.Copysign(0, -1)
				}
			}
			x[rng.IntN(len(x))] = math.NaN()
			x[rng.IntN(len(x))] = math.Inf(-1)
			op := ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{lt(x, xs, dt)}}
			got := run1(t, op)
			if err := op.Infer(); err != nil {
				t.Fatal(err)
			}
			want := values(t, tb, ir.SpecOf(op.Kind).Decompose(op, decomposer{})[0])
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("max_pool2d case %d %v: [%d] = %v, decomposition %v", ci, dt, i, got[max(i, 0)], want[max(i, 0)])
			}
		}
	}
}

// AdamStep (and AdamW) equals its decomposition bit for bit in F32 and
// F64; other dtypes are left to the decomposition.
func TestAdamStep(t *testing.T) {
	rng := newRNG(19)
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64} {
		for _, u := range []ir.OptimUpdate{
			{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1},
			{LR: 3e-2, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1, Step: 7},
			{LR: 3e-2, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1, Step: 3, Decoupled: true},
		} {
			n := 257
			p, g := randVals(rng, n, 0.1, 2, dt), randVals(rng, n, 0.01, 1, dt)
			m := randVals(rng, n, 0.01, 0.5, dt)
			v := randVals(rng, n, 0.01, 0.5, dt)
			for i := range v {
				v[i] = math.Abs(v[i])
			}
			xs := []ir.Tensor{lt(p, []int{n}, dt), lt(g, []int{n}, dt), lt(m, []int{n}, dt), lt(v, []int{n}, dt)}
			op := ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: u}, Xs: xs}
			if !tb.Supports(op.Kind, dt) {
				t.Fatalf("adam_step %v not supported", dt)
			}
			outs := exec(t, op)
			want := ir.SpecOf(op.Kind).Decompose(op, decomposer{})
			for k := range 3 {
				a, b := values(t, tb, outs[k]), values(t, tb, want[k])
				if i := sameBits(a, b); i >= 0 {
					t.Fatalf("adam_step %v %+v output %d: [%d] = %v, decomposition %v", dt, u, k, i, a[i], b[i])
				}
			}
		}
	}
	if tb.Supports(ir.KindAdamStep, backend.F16) {
		t.Error("adam_step claims F16, whose ATen scalars are not rounded to F16")
	}
}
