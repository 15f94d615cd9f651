package ember

import (
	"fmt"
	"math"
	"testing"
)

// oldComposition are softmax, log-softmax, logsumexp, layer norm, RMS
// norm and the normalization of group norm written as ops of this
// package, as they were composed before they had ir kinds: the kinds'
// decompositions must compute these values bit for bit on a device
// without kernels for them.
var oldComposition = map[string]func(x *Tensor, w, b *Tensor) *Tensor{
	"softmax": func(x, _, _ *Tensor) *Tensor {
		e := x.Sub(x.MaxAxis(1, true).Detach()).Exp()
		return e.Div(e.SumAxis(1, true))
	},
	"log_softmax": func(x, _, _ *Tensor) *Tensor {
		s := x.Sub(x.MaxAxis(1, true).Detach())
		return s.Sub(s.Exp().SumAxis(1, true).Log())
	},
	"logsumexp": func(x, _, _ *Tensor) *Tensor {
		m := x.MaxAxis(1, true).Detach()
		m = Where(m.Abs().EqScalar(math.Inf(1)), m.scalar("logsumexp", 0), m)
		return x.Sub(m).Exp().SumAxis(1, true).Log().Add(m).Squeeze(1)
	},
	"layer_norm": func(x, w, b *Tensor) *Tensor {
		n := float64(x.Dim(-1))
		diff := x.Sub(x.SumAxis(-1, true).DivScalar(n))
		variance := diff.Mul(diff).SumAxis(-1, true).DivScalar(n)
		return diff.Mul(variance.AddScalar(1e-5).Rsqrt()).Mul(w).Add(b)
	},
	"rms_norm": func(x, w, _ *Tensor) *Tensor {
		ms := x.Mul(x).SumAxis(-1, true).DivScalar(float64(x.Dim(-1)))
		return x.Mul(ms.AddScalar(1e-5).Rsqrt()).Mul(w)
	},
	"group_norm": func(x, _, _ *Tensor) *Tensor {
		n := float64(x.Dim(-1))
		diff := x.Sub(x.SumAxis(-1, true).DivScalar(n))
		variance := diff.Mul(diff).SumAxis(-1, true).DivScalar(n)
		return diff.Mul(variance.AddScalar(1e-5).Rsqrt())
	},
}

// viaKinds are the same functions through the kinds.
var viaKinds = map[string]func(x *Tensor, w, b *Tensor) *Tensor{
	"softmax":     func(x, _, _ *Tensor) *Tensor { return x.Softmax(1) },
	"log_softmax": func(x, _, _ *Tensor) *Tensor { return x.LogSoftmax(1) },
	"logsumexp":   func(x, _, _ *Tensor) *Tensor { return x.LogSumExp(1, false) },
	"layer_norm": func(x, w, b *Tensor) *Tensor {
		return x.LayerNorm([]int{x.Dim(-1)}, NormParams{Weight: w, Bias: b}, 1e-5)
	},
	"rms_norm":   func(x, w, _ *Tensor) *Tensor { return x.RMSNorm([]int{x.Dim(-1)}, NormParams{Weight: w}, 1e-5) },
	"group_norm": func(x, _, _ *Tensor) *Tensor { return x.LayerNorm([]int{x.Dim(-1)}, NormParams{}, 1e-5) },
}

// TestNormKindsMatchOldComposition runs each function both ways on Flex
// (no kernels: the kinds run as their decompositions) in every float
// dtype, on random lanes and lanes holding NaN, ±Inf and only -Inf, and
// requires the same bits; on CPU (kernels for F32 and F64) it requires
// agreement within 4e-6 relative to max(|value|, 1) (F64: 1e-13) and NaN
// in the same places.
func TestNormKindsMatchOldComposition(t *testing.T) {
	rng := newRNG(77)
	for _, dev := range []Device{Flex(), CPU(), unfusedCPU()} {
		for _, dt := range floatDTypes {
			x := randRef([]int{6, 40}, dt, nonZero(rng, 0.1, 4))
			inf := math.Inf(1)
			x.v[3], x.v[40+7], x.v[80+1] = math.NaN(), inf, -inf
			for k := range 40 {
				x.v[120+k] = -inf
			}
			w := randRef([]int{40}, dt, nonZero(rng, 0.5, 1.5))
			b := randRef([]int{40}, dt, nonZero(rng, 0.1, 1))
			xt, wt, bt := mk(dev, x, dt), mk(dev, w, dt), mk(dev, b, dt)
			for name, old := range oldComposition {
				what := fmt.Sprintf("%s %v %v", name, dev, dt)
				want := old(xt, wt, bt).Float64s()
				got := viaKinds[name](xt, wt, bt).Float64s()
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
				}
				exact := dev.String() == "flex" || (dt != F32 && dt != F64)
				tol := 4e-6
				if dt == F64 {
					tol = 1e-13
				}
				bad := 0
				for i := range want {
					ok := math.Float64bits(got[i]) == math.Float64bits(want[i]) || (math.IsNaN(got[i]) && math.IsNaN(want[i]))
					if !exact && !ok {
						ok = closeTo(got[i], want[i], tol, 1)
					}
					if !ok {
						if bad++; bad <= 3 {
							t.Errorf("%s [%d]: %v, composition %v", what, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// normRef is the float64 layer norm (rms: RMS norm) of r over its last
// k axes with weight w and bias b (zero refs: absent).
func normRef(r ref, k int, w, b ref, eps float64, rms bool) ref {
	n := numel(r.shape[len(r.shape)-k:])
	out := ref{r.shape, make([]float64, len(r.v))}
	for row := 0; row < len(r.v)/n; row++ {
		xs := r.v[row*n : (row+1)*n]
		mean := 0.0
		if !rms {
			for _, v := range xs {
				mean += v
			}
			mean /= float64(n)
		}
		q := 0.0
		for _, v := range xs {
			q += (v - mean) * (v - mean)
		}
		rstd := 1 / math.Sqrt(q/float64(n)+eps)
		for i, v := range xs {
			y := (v - mean) * rstd
			if w.v != nil {
				y *= w.v[i]
			}
			if b.v != nil {
				y += b.v[i]
			}
			out.v[row*n+i] = y
		}
	}
	return out
}

// TestTableLayerNorm checks LayerNorm and RMSNorm on every device, in
// every float dtype and layout, over one and two trailing axes, with and
// without weight and bias, against the float64 normalization (the
// dtype's tolerance, loosened 4x: the result divides by the standard
// deviation), and their errors.
func TestTableLayerNorm(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(78)
		for _, dt := range floatDTypes {
			for _, c := range []struct {
				shape []int
				k     int
			}{{[]int{7}, 1}, {[]int{3, 4}, 1}, {[]int{2, 3, 5}, 2}, {[]int{4, 33}, 1}} {
				x := randRef(c.shape, dt, nonZero(rng, 0.1, 3))
				ns := c.shape[len(c.shape)-c.k:]
				w := randRef(ns, dt, nonZero(rng, 0.5, 1.5))
				b := randRef(ns, dt, nonZero(rng, 0.1, 1))
				for _, l := range layoutsFor(len(c.shape)) {
					xt := l.view(dev, x, dt)
					for _, affine := range []bool{false, true} {
						name := fmt.Sprintf("%v %v %s affine=%v", dt, c.shape, l.name, affine)
						p, pr := NormParams{}, NormParams{}
						wr, br := ref{}, ref{}
						if affine {
							p = NormParams{Weight: mk(dev, w, dt), Bias: mk(dev, b, dt)}
							pr = NormParams{Weight: p.Weight}
							wr, br = w, b
						}
						check(t, "layer_norm "+name, xt.LayerNorm(ns, p, 1e-5), normRef(x, c.k, wr, br, 1e-5, false), dt, 4, nil)
						check(t, "rms_norm "+name, xt.RMSNorm(ns, pr, 1e-5), normRef(x, c.k, wr, ref{}, 1e-5, true), dt, 4, nil)
					}
				}
			}
		}
		x := Ones([]int{2, 3}, dev)
		expectPanic(t, "layer_norm shape", func() { x.LayerNorm([]int{2}, NormParams{}, 1e-5) }, "layer_norm", "normalized shape [2]")
		expectPanic(t, "layer_norm empty", func() { x.LayerNorm(nil, NormParams{}, 1e-5) }, "layer_norm", "at least one")
		expectPanic(t, "layer_norm weight", func() { x.LayerNorm([]int{3}, NormParams{Weight: Ones([]int{2}, dev)}, 1e-5) },
			"layer_norm", "weight [2]")
		expectPanic(t, "rms_norm bias", func() { x.RMSNorm([]int{3}, NormParams{Bias: Ones([]int{3}, dev)}, 1e-5) }, "rms_norm", "no bias")
	})
}

// TestGradNorm checks the gradients of LayerNorm and RMSNorm (x, weight
// and bias) against central differences on Flex (see grad_test.go), and
// of them and the softmaxes on CPU, whose kernels compute the forward
// and the gradient kinds.
func TestGradNorm(t *testing.T) {
	rng := newRNG(79)
	x := randRef([]int{3, 5}, F64, nonZero(rng, 0.1, 2))
	x3 := randRef([]int{2, 3, 4}, F64, nonZero(rng, 0.1, 2))
	w := randRef([]int{5}, F64, nonZero(rng, 0.5, 1.5))
	b := randRef([]int{5}, F64, nonZero(rng, 0.1, 1))
	w2 := randRef([]int{3, 4}, F64, nonZero(rng, 0.5, 1.5))
	cases := []gradCase{
		{name: "layer_norm", ins: []ref{x, w, b}, f: func(xs []*Tensor) *Tensor {
			return xs[0].LayerNorm([]int{5}, NormParams{Weight: xs[1], Bias: xs[2]}, 1e-3)
		}},
		{name: "layer_norm plain", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.LayerNorm([]int{5}, NormParams{}, 1e-3) })},
		{name: "layer_norm two axes", ins: []ref{x3, w2}, f: on2(func(x, w *Tensor) *Tensor {
			return x.Exp().LayerNorm([]int{3, 4}, NormParams{Weight: w}, 1e-3)
		})},
		{name: "rms_norm", ins: []ref{x, w}, f: on2(func(x, w *Tensor) *Tensor { return x.RMSNorm([]int{5}, NormParams{Weight: w}, 1e-3) })},
		{name: "rms_norm plain", ins: []ref{x3}, f: on1(func(x *Tensor) *Tensor { return x.RMSNorm([]int{4}, NormParams{}, 1e-3) })},
		{name: "softmax middle axis", ins: []ref{x3}, f: on1(func(x *Tensor) *Tensor { return x.Softmax(1) })},
		{name: "log_softmax", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.LogSoftmax(-1) })},
		{name: "logsumexp", ins: []ref{x3}, f: on1(func(x *Tensor) *Tensor { return x.LogSumExp(1, false) })},
	}
	runGradCases(t, cases)
	for i, c := range cases {
		for _, dev := range []Device{CPU(), unfusedCPU()} {
			t.Run("cpu/"+c.name, func(t *testing.T) {
				y0 := c.f(mkF64(dev, c.ins))
				wr := randRef(y0.Shape(), F64, nonZero(newRNG(uint64(2000+i)), 0.5, 1.5))
				wt := mk(dev, wr, F64)
				num := numericGrads(c.ins, fdStep, func(rs []ref) float64 { return c.f(mkF64(dev, rs)).Mul(wt).Sum().Item() })
				got := autodiffGrads(t, c, dev.Autodiff(), wr, y0.Float64s())
				for k := range got {
					for j, n := range num[k] {
						if a := got[k][j]; !(math.Abs(a-n) <= fdTol*max(1, math.Abs(n))) {
							t.Errorf("%s on %v: d loss / d input %d [%d]: autodiff %v, finite differences %v", c.name, dev, k, j, a, n)
						}
					}
				}
			})
		}
	}
}
