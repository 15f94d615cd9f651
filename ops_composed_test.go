package ember

import (
	"math"
	"testing"
)

// TestComposedHandWorked checks composed ops on values worked out by hand.
func TestComposedHandWorked(t *testing.T) {
	dev := Flex()
	x := FromFloats([]float64{-2, -0.5, 0, 0.5, 3, math.NaN()}, []int{6}, dev)
	checkEq(t, "relu", x.Relu(), ref{[]int{6}, []float64{0, 0, 0, 0.5, 3, math.NaN()}}, F32)
	checkEq(t, "leaky_relu", x.LeakyRelu(0.1), ref{[]int{6}, []float64{-0.2, -0.05, 0, 0.5, 3, math.NaN()}}, F32)
	checkEq(t, "clamp", x.Clamp(-1, 1), ref{[]int{6}, []float64{-1, -0.5, 0, 0.5, 1, math.NaN()}}, F32)
	checkEq(t, "clamp lo>hi", x.Clamp(2, 1), ref{[]int{6}, []float64{1, 1, 1, 1, 1, math.NaN()}}, F32)
	// softmax([0, ln 3]) = [1/4, 3/4]; log-sum-exp of [1000, 1000] = 1000 + ln 2.
	s := FromFloats([]float64{0, math.Log(3), 1000, 1000}, []int{2, 2}, dev)
	checkEq(t, "softmax", s.Softmax(-1), ref{[]int{2, 2}, []float64{0.25, 0.75, 0.5, 0.5}}, F32)
	checkEq(t, "logsumexp", s.LogSumExp(1, false), ref{[]int{2}, []float64{math.Log(4), 1000 + math.Ln2}}, F32)
	inf := FromFloats([]float64{math.Inf(-1), math.Inf(-1), math.Inf(1), 0}, []int{2, 2}, dev)
	checkEq(t, "logsumexp inf", inf.LogSumExp(-1, true), ref{[]int{2, 1}, []float64{math.Inf(-1), math.Inf(1)}}, F32)
	// var([1, 2, 3, 4]) = 5/3 unbiased, 5/4 population.
	v := FromFloats([]float64{1, 2, 3, 4}, []int{4}, dev)
	checkEq(t, "var unbiased", v.Var(0, 1, false), ref{nil, []float64{5.0 / 3}}, F32)
	checkEq(t, "std population", v.Std(0, 0, true), ref{[]int{1}, []float64{math.Sqrt(1.25)}}, F32)
	checkEq(t, "var of one", v.Narrow(0, 0, 1).Var(0, 1, false), ref{nil, []float64{math.NaN()}}, F32)
	checkEq(t, "mean empty", Zeros([]int{0}, dev).Mean(), ref{nil, []float64{math.NaN()}}, F32)
	checkEq(t, "mean int", FromInts([]int{1, 2}, []int{2}, dev).Mean(), ref{nil, []float64{1.5}}, F32)
	// gelu(1) = Φ(1) = 0.8413447460685429; silu(1) = 1/(1+e^-1).
	one := FromFloats([]float64{1}, []int{1}, dev)
	checkEq(t, "gelu", one.Gelu(), ref{[]int{1}, []float64{0.8413447460685429}}, F32)
	checkEq(t, "silu", one.Silu(), ref{[]int{1}, []float64{1 / (1 + math.Exp(-1))}}, F32)
	oh := OneHot(FromInts([]int{2, 0, 1}, []int{3}, dev), 3)
	checkEq(t, "one_hot", oh, ref{[]int{3, 3}, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0}}, F32)
	expectPanic(t, "one_hot out of range", func() { OneHot(FromInts([]int{3}, []int{1}, dev), 3) }, "label 3", "[0, 3)")
	if x.AllClose(x, 0, 0) { // NaN is never close (PyTorch's equal_nan=false)
		t.Errorf("allclose: a tensor holding NaN compared close to itself")
	}
	a := FromFloats([]float64{1, 2, math.Inf(1)}, []int{3}, dev)
	b := FromFloats([]float64{1.001, 2, math.Inf(1)}, []int{3}, dev)
	if !a.AllClose(b, 1e-2, 0) || a.AllClose(b, 1e-4, 0) {
		t.Errorf("allclose with rtol 1e-2 / 1e-4: want true / false")
	}
}

// gradCheck compares the autodiff gradient of sum(f(x)·w) with central
// finite differences in F64 (step 1e-6, tolerance 1e-6 relative).
func gradCheck(t *testing.T, name string, x ref, f func(*Tensor) *Tensor) {
	t.Helper()
	ad := Flex().Autodiff()
	rng := newRNG(uint64(len(name)))
	xt := mk(ad, x, F64).RequireGrad()
	y := f(xt)
	w := randRef(y.Shape(), F64, nonZero(rng, 0.5, 1.5))
	wt := mk(ad, w, F64)
	g := y.Mul(wt).Sum().Backward().Of(xt)
	if g == nil {
		t.Errorf("%s: no gradient", name)
		return
	}
	loss := func(v []float64) float64 {
		yt := f(mk(Flex(), ref{x.shape, v}, F64))
		return yt.Mul(mk(Flex(), w, F64)).Sum().Item()
	}
	const h = 1e-6
	want := ref{shape: x.shape, v: make([]float64, len(x.v))}
	for i := range x.v {
		v := append([]float64{}, x.v...)
		v[i] += h
		up := loss(v)
		v[i] -= 2 * h
		want.v[i] = (up - loss(v)) / (2 * h)
	}
	check(t, name+" gradient", g, want, F64, 1e6, nil)
}

// TestComposedGradients checks that autodiff flows through the composed ops.
func TestComposedGradients(t *testing.T) {
	rng := newRNG(3)
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.1, 2))
	img := randRef([]int{1, 2, 5, 5}, F64, nonZero(rng, 0.1, 2))
	cases := []struct {
		name string
		in   ref
		f    func(*Tensor) *Tensor
	}{
		{"relu", x, (*Tensor).Relu},
		{"gelu", x, (*Tensor).Gelu},
		{"silu", x, (*Tensor).Silu},
		{"leaky_relu", x, func(x *Tensor) *Tensor { return x.LeakyRelu(0.2) }},
		{"softmax", x, func(x *Tensor) *Tensor { return x.Softmax(-1) }},
		{"log_softmax", x, func(x *Tensor) *Tensor { return x.LogSoftmax(0) }},
		{"logsumexp", x, func(x *Tensor) *Tensor { return x.LogSumExp(1, false) }},
		{"mean", x, (*Tensor).Mean},
		{"var", x, func(x *Tensor) *Tensor { return x.Var(0, 1, true) }},
		{"std", x, func(x *Tensor) *Tensor { return x.Std(-1, 0, false) }},
		{"square", x, (*Tensor).Square},
		{"clamp", x, func(x *Tensor) *Tensor { return x.Clamp(-0.7, 0.9) }},
		{"max_pool2d", img, func(x *Tensor) *Tensor {
			return x.MaxPool2d(PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}})
		}},
		{"avg_pool2d", img, func(x *Tensor) *Tensor {
			return x.AvgPool2d(PoolOptions{Kernel: [2]int{2, 3}, Padding: [2]int{1, 1}}, false)
		}},
	}
	for _, c := range cases {
		gradCheck(t, c.name, c.in, c.f)
	}
	// Relu's gradient at exactly 0 is 0; clamp's is 1 on its bounds.
	ad := Flex().Autodiff()
	z := FromFloats([]float64{0, -1, 1}, []int{3}, ad).RequireGrad()
	checkEq(t, "relu grad at 0", z.Relu().Sum().Backward().Of(z), ref{[]int{3}, []float64{0, 0, 1}}, F32)
	checkEq(t, "clamp grad on bounds", z.Clamp(-1, 1).Sum().Backward().Of(z), ref{[]int{3}, []float64{1, 1, 1}}, F32)
}
