package ember

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// The gradient tests check every differentiable op through the public API
// on Flex().Autodiff() in F64 against central differences (step 1e-6,
// |autodiff − numeric| <= 1e-6·max(1, |numeric|)), with and without
// gradient checkpointing (whose gradients must be bit-identical). Inputs are
// random, non-zero and away from kinks and ties; see grad_helpers_test.go.

// TestGradElementwise covers the binary ops (with broadcasting), their
// scalar variants, every float unary op, Where, MaskFill and Cast.
func TestGradElementwise(t *testing.T) {
	rng := newRNG(11)
	a := randRef([]int{2, 3, 4}, F64, nonZero(rng, 0.2, 2))
	b := randRef([]int{3, 1}, F64, nonZero(rng, 0.5, 2))
	pos := randRef([]int{2, 3, 4}, F64, uniform(rng, 0.3, 2))
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.1, 2))
	xp := randRef([]int{3, 4}, F64, uniform(rng, 0.2, 2))
	row := randRef([]int{4}, F64, nonZero(rng, 0.1, 2))
	bin := func(name string, l, r ref, f func(a, b *Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{l, r}, f: on2(f)}
	}
	un := func(name string, in ref, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{in}, f: on1(f)}
	}
	cases := []gradCase{
		bin("add", a, b, (*Tensor).Add),
		bin("sub", b, a, (*Tensor).Sub),
		bin("mul", a, b, (*Tensor).Mul),
		bin("div", a, b, (*Tensor).Div),
		bin("div rank-0 rhs", a, ref{nil, []float64{-1.3}}, (*Tensor).Div),
		bin("pow", pos, b, (*Tensor).Pow),
		bin("maximum", a, b, (*Tensor).Maximum),
		bin("minimum", b, a, (*Tensor).Minimum),
		bin("atan2", a, b, (*Tensor).Atan2),
		bin("rem", a, b, (*Tensor).Rem),
		bin("mod", a, b, (*Tensor).Mod),
		bin("floor_div", a, b, (*Tensor).FloorDiv),
		bin("same operand twice", x, x, func(a, b *Tensor) *Tensor { return a.Mul(b).Add(a) }),
		un("add_scalar", x, func(x *Tensor) *Tensor { return x.AddScalar(0.7) }),
		un("sub_scalar", x, func(x *Tensor) *Tensor { return x.SubScalar(-1.25) }),
		un("mul_scalar", x, func(x *Tensor) *Tensor { return x.MulScalar(-2.5) }),
		un("div_scalar", x, func(x *Tensor) *Tensor { return x.DivScalar(0.3) }),
		un("pow_scalar 2", x, func(x *Tensor) *Tensor { return x.PowScalar(2) }),
		un("pow_scalar 3", x, func(x *Tensor) *Tensor { return x.PowScalar(3) }),
		un("pow_scalar -1.5", xp, func(x *Tensor) *Tensor { return x.PowScalar(-1.5) }),
		un("pow_scalar 0.5", xp, func(x *Tensor) *Tensor { return x.PowScalar(0.5) }),
		un("maximum_scalar", x, func(x *Tensor) *Tensor { return x.MaximumScalar(0.3) }),
		un("minimum_scalar", x, func(x *Tensor) *Tensor { return x.MinimumScalar(-0.2) }),
		un("neg", x, (*Tensor).Neg),
		un("abs", x, (*Tensor).Abs),
		un("sign", x, (*Tensor).Sign),
		un("exp", x, (*Tensor).Exp),
		un("log", xp, (*Tensor).Log),
		un("log1p", xp, (*Tensor).Log1p),
		un("expm1", x, (*Tensor).Expm1),
		un("sqrt", xp, (*Tensor).Sqrt),
		un("rsqrt", xp, (*Tensor).Rsqrt),
		un("recip", x, (*Tensor).Recip),
		un("sin", x, (*Tensor).Sin),
		un("cos", x, (*Tensor).Cos),
		un("tanh", x, (*Tensor).Tanh),
		un("sigmoid", x, (*Tensor).Sigmoid),
		un("erf", x, (*Tensor).Erf),
		un("floor", x, (*Tensor).Floor),
		un("ceil", x, (*Tensor).Ceil),
		un("round", x, (*Tensor).Round),
		{name: "where", ins: []ref{a, row}, f: on2(func(p, q *Tensor) *Tensor {
			cond := boolsOn(p, []bool{true, false, true}, []int{3, 1})
			return Where(cond, p, q)
		})},
		{name: "where on a comparison", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor {
			return Where(x.GtScalar(0), x.Exp(), x.Sin().MulScalar(3))
		})},
		un("mask_fill", x, func(x *Tensor) *Tensor {
			return x.MaskFill(boolsOn(x, []bool{false, true, true, false}, []int{4}), -4.5)
		}),
		// The round trip through F32 quantizes the values, so the
		// differences use a coarse step and a loosened tolerance.
		{name: "cast f64->f32->f64", ins: []ref{x}, step: 1e-3, tol: 1e-3, f: on1(func(x *Tensor) *Tensor {
			return x.Cast(F32).Exp().Cast(F64)
		})},
	}
	runGradCases(t, cases)
}

// TestGradCastExact checks the gradient through an F64 -> F32 -> F64 round
// trip against its closed form: d sum(cast(cast(x))·w) / dx = float32(w).
func TestGradCastExact(t *testing.T) {
	rng := newRNG(12)
	x := randRef([]int{3, 5}, F64, nonZero(rng, 0.1, 2))
	w := randRef([]int{3, 5}, F64, nonZero(rng, 0.5, 1.5))
	for _, dev := range []Device{Flex().Autodiff(), Flex().Autodiff().GradientCheckpointing()} {
		xt := mk(dev, x, F64).RequireGrad()
		y := xt.Cast(F32)
		if y.DType() != F32 || !y.IsTracked() {
			t.Fatalf("%v: cast to F32 gave %v, tracked %v", dev, y.DType(), y.IsTracked())
		}
		g := y.Cast(F64).Mul(mk(dev, w, F64)).Sum().Backward().Of(xt)
		check(t, dev.String()+" cast round trip gradient", g, mapRef(w, func(v float64) float64 { return float64(float32(v)) }), F64, 0, nil)
	}
}

// TestGradReduce covers Sum, SumAxis, Prod, ProdAxis, Max, MaxAxis, Min,
// MinAxis (distinct random values, so no ties) and CumSum.
func TestGradReduce(t *testing.T) {
	rng := newRNG(13)
	x := randRef([]int{3, 4, 5}, F64, nonZero(rng, 0.5, 1.5))
	// Products over exact zeros (one and two per row) are smooth, so
	// differences check the gradient there too (PyTorch's prod_backward).
	zeros := randRef([]int{3, 4}, F64, nonZero(rng, 0.5, 1.5))
	zeros.v[1], zeros.v[4], zeros.v[6] = 0, 0, 0
	one := ref{[]int{2, 3}, []float64{1.5, 0, -0.75, 1.25, 2, -0.5}}
	un := func(name string, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{x}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		{name: "prod_axis with zeros", ins: []ref{zeros}, f: on1(func(x *Tensor) *Tensor { return x.ProdAxis(1, false) })},
		{name: "prod with one zero", ins: []ref{one}, f: on1((*Tensor).Prod)},
		un("sum", (*Tensor).Sum),
		un("cumsum axis 1", func(x *Tensor) *Tensor { return x.CumSum(1) }),
		un("cumsum axis -1", func(x *Tensor) *Tensor { return x.CumSum(-1) }),
		un("cumsum then product", func(x *Tensor) *Tensor { return x.CumSum(0).Mul(x) }),
		un("sum_axis keep", func(x *Tensor) *Tensor { return x.SumAxis(1, true) }),
		un("sum_axis -1", func(x *Tensor) *Tensor { return x.SumAxis(-1, false) }),
		un("prod", (*Tensor).Prod),
		un("prod_axis", func(x *Tensor) *Tensor { return x.ProdAxis(0, false) }),
		un("prod_axis keep", func(x *Tensor) *Tensor { return x.ProdAxis(2, true) }),
		un("max", (*Tensor).Max),
		un("max_axis keep", func(x *Tensor) *Tensor { return x.MaxAxis(2, true) }),
		un("max_axis", func(x *Tensor) *Tensor { return x.MaxAxis(0, false) }),
		un("min", (*Tensor).Min),
		un("min_axis", func(x *Tensor) *Tensor { return x.MinAxis(1, false) }),
		un("min_axis keep", func(x *Tensor) *Tensor { return x.MinAxis(-1, true) }),
	})
}

// TestGradMovement covers the view and indexing ops.
func TestGradMovement(t *testing.T) {
	rng := newRNG(14)
	g := nonZero(rng, 0.1, 2)
	x := randRef([]int{2, 3, 4}, F64, g)
	x5 := randRef([]int{5, 7, 3}, F64, g)
	col := randRef([]int{3, 1, 4}, F64, g)
	m := randRef([]int{3, 4}, F64, g)
	un := func(name string, in ref, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{in}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		un("reshape", x, func(x *Tensor) *Tensor { return x.Reshape(4, -1) }),
		un("permute", x, func(x *Tensor) *Tensor { return x.Permute(2, 0, 1) }),
		un("swap_axes", x, func(x *Tensor) *Tensor { return x.SwapAxes(0, 2) }),
		un("transpose", x, (*Tensor).Transpose),
		un("expand", col, func(x *Tensor) *Tensor { return x.Expand(2, 3, 5, 4) }),
		un("broadcast_to -1", col, func(x *Tensor) *Tensor { return x.BroadcastTo(3, 6, -1) }),
		un("slice steps", x5, func(x *Tensor) *Tensor {
			return x.Slice(Range{Start: 1, End: 5, Step: 2}, Range{Start: 0, End: 7, Step: 3}, R(-2, 3))
		}),
		un("narrow", x, func(x *Tensor) *Tensor { return x.Narrow(1, 1, 2) }),
		un("pad", x, func(x *Tensor) *Tensor { return x.Pad([]int{1, 2, 0, 1}, 0.5) }),
		un("flip", x, func(x *Tensor) *Tensor { return x.Flip(0, 2) }),
		{name: "cat", ins: []ref{x, randRef([]int{2, 1, 4}, F64, g), randRef([]int{2, 2, 4}, F64, g)},
			f: func(xs []*Tensor) *Tensor { return Cat(xs, 1) }},
		{name: "cat last axis", ins: []ref{m, randRef([]int{3, 2}, F64, g)},
			f: func(xs []*Tensor) *Tensor { return Cat(xs, -1) }},
		{name: "stack", ins: []ref{m, randRef([]int{3, 4}, F64, g)},
			f: func(xs []*Tensor) *Tensor { return Stack(xs, 1) }},
		un("gather", x5, func(x *Tensor) *Tensor {
			idx := []int{0, 6, 6, 2, 1, 0, 3, 3, 5, 4, 4, 4, 6, 0, 1, 2, 2, 2,
				5, 5, 1, 0, 6, 3, 1, 1, 1, 2, 3, 4, 6, 5, 4, 0, 0, 0, 3, 2, 1, 6, 6, 6, 5, 4, 3}
			return x.Gather(1, intsOn(x, idx, []int{5, 3, 3}))
		}),
		{name: "scatter_add", ins: []ref{m, randRef([]int{2, 4}, F64, g)}, f: on2(func(x, src *Tensor) *Tensor {
			return x.ScatterAdd(0, intsOn(x, []int{2, 0, 2, 1, 2, 2, 0, 1}, []int{2, 4}), src)
		})},
		un("index_select", m, func(x *Tensor) *Tensor { return x.IndexSelect(1, intsOn(x, []int{3, 0, 3, 1, 3}, []int{5})) }),
		un("squeeze", col, func(x *Tensor) *Tensor { return x.Squeeze(1) }),
		un("squeeze_all", col, (*Tensor).SqueezeAll),
		un("unsqueeze", m, func(x *Tensor) *Tensor { return x.Unsqueeze(-1).Unsqueeze(0) }),
		un("flatten", x, func(x *Tensor) *Tensor { return x.Flatten(1, 2) }),
		// A chain of views whose result feeds an elementwise op that uses
		// the value (so a checkpointed backward recomputes the chain).
		un("view chain", x5, func(x *Tensor) *Tensor {
			v := x.Permute(1, 0, 2).Slice(Range{Start: 1, End: 7, Step: 2}).Flip(-1).Reshape(3, -1)
			return v.Mul(v.Sin())
		}),
	})
}

// TestGradLinalg covers Matmul (batched, broadcast batch axes, rank 1),
// Conv2d and ConvTranspose2d with bias and every option.
func TestGradLinalg(t *testing.T) {
	rng := newRNG(15)
	g := nonZero(rng, 0.1, 1.5)
	r := func(shape ...int) ref { return randRef(shape, F64, g) }
	mm := func(name string, a, b ref) gradCase {
		return gradCase{name: name, ins: []ref{a, b}, f: on2((*Tensor).Matmul)}
	}
	conv := func(name string, x, w, b ref, o ConvOptions, transpose bool) gradCase {
		return gradCase{name: name, ins: []ref{x, w, b}, f: func(xs []*Tensor) *Tensor {
			if transpose {
				return xs[0].ConvTranspose2d(xs[1], xs[2], o)
			}
			return xs[0].Conv2d(xs[1], xs[2], o)
		}}
	}
	runGradCases(t, []gradCase{
		mm("matmul batched", r(2, 3, 4), r(4, 5)),
		mm("matmul broadcast batch", r(2, 1, 3, 4), r(3, 4, 2)),
		mm("matmul vector-matrix", r(4), r(4, 5)),
		mm("matmul matrix-vector", r(2, 3, 4), r(4)),
		mm("matmul dot", r(6), r(6)),
		conv("conv2d", r(2, 4, 6, 7), r(6, 2, 3, 2), r(6),
			ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}, Groups: 2}, false),
		conv("conv2d defaults", r(1, 2, 4, 5), r(3, 2, 2, 3), r(3), ConvOptions{}, false),
		{name: "conv2d no bias", ins: []ref{r(1, 3, 5, 5), r(2, 3, 3, 3)}, f: on2(func(x, w *Tensor) *Tensor {
			return x.Conv2d(w, nil, ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}})
		})},
		conv("conv_transpose2d", r(2, 4, 3, 4), r(4, 3, 3, 2), r(6),
			ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 0}, Dilation: [2]int{1, 2}, OutputPadding: [2]int{1, 1}, Groups: 2}, true),
		conv("conv_transpose2d defaults", r(1, 2, 3, 3), r(2, 3, 2, 2), r(3), ConvOptions{}, true),
		// A small network: compute-bound ops separated by memory-bound
		// ones, with shared subexpressions (checkpointing recomputes them).
		{name: "mlp", ins: []ref{r(4, 3), r(3, 5), r(5), r(5, 2)}, f: func(xs []*Tensor) *Tensor {
			h := xs[0].Matmul(xs[1]).Add(xs[2])
			a := h.Tanh().Mul(h.Sigmoid()).Add(xs[0].Sum())
			return a.Matmul(xs[3]).LogSoftmax(-1)
		}},
	})
}

// TestGradComposed covers the ops composed from primitives.
func TestGradComposed(t *testing.T) {
	rng := newRNG(16)
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.1, 2))
	x3 := randRef([]int{2, 3, 4}, F64, nonZero(rng, 0.1, 2))
	img := randRef([]int{2, 2, 5, 6}, F64, nonZero(rng, 0.1, 2))
	un := func(name string, in ref, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{in}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		un("relu", x, (*Tensor).Relu),
		un("gelu", x, (*Tensor).Gelu),
		un("silu", x, (*Tensor).Silu),
		un("leaky_relu", x, func(x *Tensor) *Tensor { return x.LeakyRelu(0.01) }),
		un("softmax", x3, func(x *Tensor) *Tensor { return x.Softmax(1) }),
		un("log_softmax", x3, func(x *Tensor) *Tensor { return x.LogSoftmax(-1) }),
		un("logsumexp", x3, func(x *Tensor) *Tensor { return x.LogSumExp(0, false) }),
		un("logsumexp keep", x3, func(x *Tensor) *Tensor { return x.LogSumExp(2, true) }),
		un("mean", x3, (*Tensor).Mean),
		un("mean_axis", x3, func(x *Tensor) *Tensor { return x.MeanAxis(1, false) }),
		un("mean_axis keep", x3, func(x *Tensor) *Tensor { return x.MeanAxis(-1, true) }),
		un("var unbiased", x3, func(x *Tensor) *Tensor { return x.Var(2, 1, false) }),
		un("var population", x3, func(x *Tensor) *Tensor { return x.Var(0, 0, true) }),
		un("std", x3, func(x *Tensor) *Tensor { return x.Std(1, 1, true) }),
		un("square", x, (*Tensor).Square),
		un("clamp", x, func(x *Tensor) *Tensor { return x.Clamp(-0.8, 1.1) }),
		un("clamp_min", x, func(x *Tensor) *Tensor { return x.ClampMin(0.25) }),
		un("clamp_max", x, func(x *Tensor) *Tensor { return x.ClampMax(-0.3) }),
		un("max_pool2d", img, func(x *Tensor) *Tensor {
			return x.MaxPool2d(PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}})
		}),
		un("max_pool2d dilated unbatched", img, func(x *Tensor) *Tensor {
			return x.Narrow(0, 1, 1).Squeeze(0).MaxPool2d(PoolOptions{Kernel: [2]int{2, 2}, Dilation: [2]int{2, 1}, Stride: [2]int{1, 2}})
		}),
		un("avg_pool2d", img, func(x *Tensor) *Tensor {
			return x.AvgPool2d(PoolOptions{Kernel: [2]int{2, 3}, Padding: [2]int{1, 1}}, false)
		}),
		un("avg_pool2d include pad", img, func(x *Tensor) *Tensor {
			return x.AvgPool2d(PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}, true)
		}),
	})
}

// TestGradMixedDevices checks that a tensor on Flex() combined with a
// tracked tensor on Flex().Autodiff() acts as a constant: the result is
// tracked on the autodiff device, the gradients are right, and the plain
// tensor gets none.
func TestGradMixedDevices(t *testing.T) {
	rng := newRNG(17)
	g := nonZero(rng, 0.3, 2)
	plain := Flex()
	c := mk(plain, randRef([]int{3, 4}, F64, g), F64)
	c2 := mk(plain, randRef([]int{2, 3}, F64, g), F64)
	cond := FromBools([]bool{true, false, false, true}, []int{4}, plain)
	x := randRef([]int{3, 4}, F64, g)
	un := func(name string, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{x}, f: on1(f)}
	}
	// On the plain device these are ordinary ops; on an autodiff device
	// the captured plain tensors join a tracked one.
	runGradCases(t, []gradCase{
		un("plain lhs mul", func(x *Tensor) *Tensor { return c.Mul(x) }),
		un("plain rhs div", func(x *Tensor) *Tensor { return x.Div(c) }),
		un("plain where", func(x *Tensor) *Tensor { return Where(cond, x.Exp(), c) }),
		un("plain matmul", func(x *Tensor) *Tensor { return c2.Matmul(x) }),
		un("plain cat", func(x *Tensor) *Tensor { return Cat([]*Tensor{c, x.Sin()}, 0) }),
		un("plain scatter src", func(x *Tensor) *Tensor {
			return x.ScatterAdd(1, FromInts([]int{3, 0, 1, 1, 2, 2, 0, 3, 3, 3, 1, 0}, []int{3, 4}, plain), c)
		}),
	})

	// Closed forms: d sum(c·x) / dx = c; d sum(c2 @ x) / dx[k][j] = sum_i c2[i][k].
	cv, c2v := c.Float64s(), c2.Float64s()
	colSums := make([]float64, 12)
	for k := range 3 {
		for j := range 4 {
			colSums[4*k+j] = c2v[k] + c2v[3+k]
		}
	}
	for _, dev := range []Device{Flex().Autodiff(), Flex().Autodiff().GradientCheckpointing()} {
		xt := mk(dev, x, F64).RequireGrad()
		y := c.Mul(xt)
		if !y.Device().IsAutodiff() || !y.IsTracked() {
			t.Errorf("%v: plain × tracked gave a result on %v, tracked %v", dev, y.Device(), y.IsTracked())
		}
		loss := y.Sum().Add(c2.Matmul(xt).Sum())
		grads := loss.Backward()
		sum := make([]float64, 12)
		for i := range sum {
			sum[i] = cv[i] + colSums[i]
		}
		checkEq(t, dev.String()+" mixed gradient", grads.Of(xt), ref{[]int{3, 4}, sum}, F64)
		if grads.Of(c) != nil {
			t.Errorf("%v: the plain operand received a gradient", dev)
		}
		if c.IsTracked() || c.Device().IsAutodiff() {
			t.Errorf("%v: the plain operand changed: tracked %v on %v", dev, c.IsTracked(), c.Device())
		}
	}
}

// TestAutodiffDeviceSemantics checks tracking across ToDevice, Detach and
// NoGrad, Backward's panic on untracked tensors, and the device methods'
// autodiff rules (package documentation, section Devices).
func TestAutodiffDeviceSemantics(t *testing.T) {
	plain := Flex()
	ad := plain.Autodiff()
	ck := ad.GradientCheckpointing()

	// A plain tensor moved to the autodiff device keeps its values and is untracked.
	p := FromFloats([]float64{1, 2, 3, 4}, []int{2, 2}, plain)
	m := p.ToDevice(ad)
	checkEq(t, "to autodiff device", m, ref{[]int{2, 2}, []float64{1, 2, 3, 4}}, p.DType())
	if m.IsTracked() || !m.Device().IsAutodiff() {
		t.Errorf("plain tensor moved to %v: tracked %v on %v, want untracked on the autodiff device", ad, m.IsTracked(), m.Device())
	}
	if back := m.ToDevice(plain); back.Device().IsAutodiff() || !slices.Equal(back.Float64s(), []float64{1, 2, 3, 4}) {
		t.Errorf("back to the plain device: %v on %v", back.Float64s(), back.Device())
	}

	// A gradient moved onto the autodiff device stays untracked.
	x := FromData(encode(ref{[]int{2, 2}, []float64{1, -2, 3, 0.5}}, F64), ad).RequireGrad()
	unused := FromData(encode(ref{[]int{2}, []float64{1, 1}}, F64), ad).RequireGrad()
	if !x.IsTracked() || !unused.IsTracked() {
		t.Fatalf("RequireGrad: leaves are not tracked")
	}
	y := x.Mul(x)
	grads := y.Sum().Backward()
	gx := grads.Of(x)
	checkEq(t, "d sum(x²)/dx", gx, ref{[]int{2, 2}, []float64{2, -4, 6, 1}}, F64)
	if gx.Device().IsAutodiff() || gx.IsTracked() {
		t.Errorf("gradient is on %v, tracked %v; want the inner device, untracked", gx.Device(), gx.IsTracked())
	}
	for _, dev := range []Device{ad, ck} {
		if moved := gx.ToDevice(dev); moved.IsTracked() || !moved.Device().IsAutodiff() {
			t.Errorf("gradient moved to %v: tracked %v on %v", dev, moved.IsTracked(), moved.Device())
		}
	}
	if grads.Of(unused) != nil {
		t.Errorf("Of: a leaf the loss does not depend on has a gradient")
	}
	if grads.Of(p) != nil {
		t.Errorf("Of: a plain tensor has a gradient")
	}
	if r := grads.Remove(x); r == nil || grads.Of(x) != nil {
		t.Errorf("Remove: got %v, then Of gave %v; want the gradient, then nil", r, grads.Of(x))
	}
	// A tracked tensor moved to the checkpointing variant of its device
	// keeps its history (ToDevice is differentiable).
	if moved := y.ToDevice(ck); !moved.IsTracked() {
		t.Errorf("tracked tensor moved to %v lost its history", ck)
	}
	if same := y.ToDevice(ad); same != y {
		t.Errorf("ToDevice onto its own device did not return the tensor itself")
	}
	if in := y.Inner(); in.IsTracked() || in.Device().IsAutodiff() || !slices.Equal(in.Float64s(), y.Float64s()) {
		t.Errorf("Inner: tracked %v on %v", in.IsTracked(), in.Device())
	}

	// Detach and NoGrad give untracked results; recording resumes after NoGrad.
	d := y.Detach()
	if d.IsTracked() || !d.Device().IsAutodiff() || !slices.Equal(d.Float64s(), []float64{1, 4, 9, 0.25}) {
		t.Errorf("Detach: tracked %v on %v values %v", d.IsTracked(), d.Device(), d.Float64s())
	}
	if d.Mul(d).IsTracked() {
		t.Errorf("ops on a detached tensor are tracked")
	}
	var inside *Tensor
	NoGrad(func() { inside = x.Exp().Mul(x) })
	if inside.IsTracked() {
		t.Errorf("NoGrad: the result is tracked")
	}
	if !x.Exp().IsTracked() {
		t.Errorf("after NoGrad: recording did not resume")
	}

	// Backward on an untracked tensor panics with an *Error.
	for _, u := range []*Tensor{m, d, p, inside} {
		err := Try(func() { u.Backward() })
		var e *Error
		if !errors.As(err, &e) || e.Op != "backward" {
			t.Errorf("Backward on an untracked tensor on %v: got %v, want an *Error from backward", u.Device(), err)
		}
	}
	expectPanic(t, "require_grad on a plain device", func() { p.RequireGrad() }, "autodiff device")
	expectPanic(t, "require_grad on ints", func() { FromInts([]int{1}, []int{1}, ad).RequireGrad() }, "float")

	// Device rules.
	expectPanic(t, "autodiff twice", func() { ad.Autodiff() }, "only first-order autodiff is supported")
	expectPanic(t, "autodiff twice with checkpointing", func() { ck.Autodiff() }, "only first-order autodiff is supported")
	if s := ad.GradientCheckpointingStrategy(); s != Disabled || s.String() != "disabled" {
		t.Errorf("strategy of %v: %v", ad, s)
	}
	if s := ck.GradientCheckpointingStrategy(); s != Balanced || s.String() != "balanced" {
		t.Errorf("strategy of %v: %v", ck, s)
	}
	expectPanic(t, "strategy on a plain device", func() { plain.GradientCheckpointingStrategy() }, "autodiff")
	expectPanic(t, "checkpointing on a plain device", func() { plain.GradientCheckpointing() }, "autodiff")
	if !ad.Equal(plain) || !plain.Equal(ad) || !ck.Equal(ad) || !ck.Equal(plain) || ad.Equal(CPU()) {
		t.Errorf("Equal must compare hardware only: flex+autodiff vs flex %v, checkpointing vs flex %v, vs cpu %v",
			ad.Equal(plain), ck.Equal(plain), ad.Equal(CPU()))
	}
	if !ad.IsAutodiff() || plain.IsAutodiff() || ck.Inner().IsAutodiff() || ad.Inner() != plain {
		t.Errorf("IsAutodiff/Inner: %v %v %v", ad.IsAutodiff(), plain.IsAutodiff(), ck.Inner())
	}
	if !strings.HasSuffix(ad.String(), "+autodiff") {
		t.Errorf("String of an autodiff device: %q", ad.String())
	}
	if v := ck.Inner().String(); v != plain.String() {
		t.Errorf("Inner of %v prints %q, want %q", ck, v, plain.String())
	}
}

// TestGradHandWorked checks gradient conventions that finite differences
// cannot see, on values worked out by hand: ties of max/min split the
// gradient evenly (PyTorch's derivatives.yaml for amax/maximum), each leaf's
// gradient keeps its own dtype under promotion, intermediates have
// gradients, and Backward can run twice on one graph with equal results.
func TestGradHandWorked(t *testing.T) {
	for _, dev := range []Device{Flex().Autodiff(), Flex().Autodiff().GradientCheckpointing()} {
		f64 := func(shape []int, v ...float64) *Tensor { return mk(dev, ref{shape, v}, F64).RequireGrad() }
		name := dev.String() + " "

		x := f64([]int{4}, 1, 3, 3, -2)
		checkEq(t, name+"max ties", x.Max().Backward().Of(x), ref{[]int{4}, []float64{0, 0.5, 0.5, 0}}, F64)
		checkEq(t, name+"min", x.Min().Backward().Of(x), ref{[]int{4}, []float64{0, 0, 0, 1}}, F64)
		m := f64([]int{2, 2}, 2, 2, 1, 5)
		checkEq(t, name+"max_axis ties", m.MaxAxis(1, false).Sum().Backward().Of(m), ref{[]int{2, 2}, []float64{0.5, 0.5, 0, 1}}, F64)
		y := f64([]int{4}, 1, 0, 3, -2)
		gs := x.Maximum(y).Sum().Backward()
		checkEq(t, name+"maximum ties lhs", gs.Of(x), ref{[]int{4}, []float64{0.5, 1, 0.5, 0.5}}, F64)
		checkEq(t, name+"maximum ties rhs", gs.Of(y), ref{[]int{4}, []float64{0.5, 0, 0.5, 0.5}}, F64)

		// d sum(a·b)/da = b (as F32), d/db = a (as F64).
		a := FromFloats([]float32{1.5, -2}, []int{2}, dev).RequireGrad()
		b := f64([]int{2}, 3, 0.25)
		ab := a.Mul(b)
		g := ab.Sum().Backward()
		if ab.DType() != F64 {
			t.Errorf("%sf32 × f64 gave %v", name, ab.DType())
		}
		checkEq(t, name+"f32 leaf gradient", g.Of(a), ref{[]int{2}, []float64{3, 0.25}}, F32)
		checkEq(t, name+"f64 leaf gradient", g.Of(b), ref{[]int{2}, []float64{1.5, -2}}, F64)

		// loss = sum(sin(x²)): d loss / d(x²) = cos(x²), d loss / d loss = 1.
		sq := x.Mul(x)
		loss := sq.Sin().Sum()
		g1 := loss.Backward()
		checkEq(t, name+"intermediate gradient", g1.Of(sq), mapRef(ref{[]int{4}, []float64{1, 9, 9, 4}}, math.Cos), F64)
		checkEq(t, name+"root gradient", g1.Of(loss), ref{nil, []float64{1}}, F64)
		first, second := g1.Of(x).Float64s(), loss.Backward().Of(x).Float64s()
		if !bitsEqual(first, second) {
			t.Errorf("%sBackward twice: %v then %v", name, first, second)
		}
		checkEq(t, name+"d sum(sin(x²))/dx", g1.Of(x), ref{[]int{4}, []float64{2 * math.Cos(1), 6 * math.Cos(9), 6 * math.Cos(9), -4 * math.Cos(4)}}, F64)

		// d sum(w·cumsum(c))/dc_k = w_k + ... + w_{n-1}.
		c := f64([]int{4}, 1, -2, 3, 5)
		cs := c.CumSum(0)
		checkEq(t, name+"cumsum", cs, ref{[]int{4}, []float64{1, -1, 2, 7}}, F64)
		w := mk(dev, ref{[]int{4}, []float64{1, 10, 100, 1000}}, F64)
		checkEq(t, name+"cumsum gradient", cs.Mul(w).Sum().Backward().Of(c), ref{[]int{4}, []float64{1111, 1110, 1100, 1000}}, F64)
	}
}
