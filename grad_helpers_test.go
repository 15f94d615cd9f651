package ember

import (
	"math"
	"slices"
	"testing"
)

// This file holds the finite-difference machinery of the gradient tests:
// each case is a function of one or more F64 leaves; its autodiff gradient
// of the scalar loss sum(f(xs)·w), with w fixed random weights, is compared
// with central differences of the same loss evaluated on the plain
// (non-autodiff) device, on both the plain autodiff device and its
// checkpointing variant, and the two gradients must be bit-identical.

// fdStep and fdTol are the default central-difference step and tolerance:
// |autodiff − numeric| <= fdTol·max(1, |numeric|).
const (
	fdStep = 1e-6
	fdTol  = 1e-6
)

// gradCase is one gradient check: the leaves' values, the function of the
// leaves (constants it needs are built on the leaves' device or captured
// from the plain device), and optional step and tolerance overrides.
type gradCase struct {
	name string
	ins  []ref
	f    func(xs []*Tensor) *Tensor
	step float64 // 0: fdStep
	tol  float64 // 0: fdTol
}

// mkF64 puts each ref on dev as an F64 tensor (the raw float64 values, no
// cast through the device's float dtype).
func mkF64(dev Device, rs []ref) []*Tensor {
	out := make([]*Tensor, len(rs))
	for i, r := range rs {
		out[i] = mk(dev, r, F64)
	}
	return out
}

// numericGrads returns the central-difference gradient of loss with respect
// to every element of every input.
func numericGrads(ins []ref, step float64, loss func([]ref) float64) [][]float64 {
	out := make([][]float64, len(ins))
	for k, in := range ins {
		out[k] = make([]float64, len(in.v))
		for i := range in.v {
			pert := slices.Clone(ins)
			v := slices.Clone(in.v)
			pert[k] = ref{shape: in.shape, v: v}
			v[i] = in.v[i] + step
			up := loss(pert)
			v[i] = in.v[i] - step
			down := loss(pert)
			out[k][i] = (up - down) / (2 * step)
		}
	}
	return out
}

// autodiffGrads runs the case on an autodiff device: it checks that the
// forward result is tracked and bit-identical to the plain device's, and
// returns the gradients of sum(f(xs)·w) with respect to the leaves (nil
// entries where none came back, which is reported).
func autodiffGrads(t *testing.T, c gradCase, dev Device, w ref, plainOut []float64) [][]float64 {
	t.Helper()
	xs := mkF64(dev, c.ins)
	for i := range xs {
		xs[i] = xs[i].RequireGrad()
	}
	y := c.f(xs)
	if !y.IsTracked() || !y.Device().IsAutodiff() {
		t.Errorf("%s on %v: result tracked=%v device %v, want a tracked result on the autodiff device", c.name, dev, y.IsTracked(), y.Device())
		return nil
	}
	if got := y.Float64s(); !bitsEqual(got, plainOut) {
		t.Errorf("%s on %v: forward values differ from the plain device's: %v vs %v", c.name, dev, got, plainOut)
	}
	grads := y.Mul(mk(dev, w, F64)).Sum().Backward()
	out := make([][]float64, len(xs))
	for i, x := range xs {
		g := grads.Of(x)
		if g == nil {
			t.Errorf("%s on %v: no gradient for input %d", c.name, dev, i)
			continue
		}
		if g.DType() != F64 || !slices.Equal(g.Shape(), c.ins[i].shape) || g.Device().IsAutodiff() || g.IsTracked() {
			t.Errorf("%s on %v: gradient %d is %v %v on %v (tracked %v), want F64 %v on the inner device, untracked",
				c.name, dev, i, g.DType(), g.Shape(), g.Device(), g.IsTracked(), c.ins[i].shape)
			continue
		}
		out[i] = g.Float64s()
	}
	return out
}

// bitsEqual reports whether two float64 slices hold the same bits.
func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// runGradCase checks one case on Flex().Autodiff() and its checkpointing
// variant against central differences, and the two against each other.
func runGradCase(t *testing.T, c gradCase, seed uint64) {
	t.Helper()
	step, tol := c.step, c.tol
	if step == 0 {
		step = fdStep
	}
	if tol == 0 {
		tol = fdTol
	}
	plain := Flex()
	y0 := c.f(mkF64(plain, c.ins))
	if y0.DType() != F64 {
		t.Fatalf("%s: output dtype %v, want F64", c.name, y0.DType())
	}
	rng := newRNG(seed)
	w := randRef(y0.Shape(), F64, nonZero(rng, 0.5, 1.5))
	wt := mk(plain, w, F64)
	loss := func(rs []ref) float64 { return c.f(mkF64(plain, rs)).Mul(wt).Sum().Item() }
	num := numericGrads(c.ins, step, loss)
	plainOut := y0.Float64s()

	ad := Flex().Autodiff()
	ck := ad.GradientCheckpointing()
	gd := autodiffGrads(t, c, ad, w, plainOut)
	gc := autodiffGrads(t, c, ck, w, plainOut)
	if gd == nil || gc == nil {
		return
	}
	for k := range c.ins {
		if gd[k] == nil || gc[k] == nil {
			continue
		}
		bad := 0
		for i, n := range num[k] {
			if a := gd[k][i]; !(math.Abs(a-n) <= tol*max(1, math.Abs(n))) {
				if bad < 3 {
					idx := make([]int, len(c.ins[k].shape))
					unravelInto(i, c.ins[k].shape, idx)
					t.Errorf("%s: d loss / d input %d at %v: autodiff %v, finite differences %v (tol %g)", c.name, k, idx, a, n, tol)
				}
				bad++
			}
		}
		if bad > 3 {
			t.Errorf("%s: input %d: %d of %d gradient elements differ", c.name, k, bad, len(num[k]))
		}
		if !bitsEqual(gd[k], gc[k]) {
			t.Errorf("%s: input %d: gradients with checkpointing differ from those without:\n%v\n%v", c.name, k, gc[k], gd[k])
		}
	}
}

// runGradCases runs each case as a subtest, seeding its weights with the
// case's position.
func runGradCases(t *testing.T, cases []gradCase) {
	t.Helper()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { runGradCase(t, c, uint64(1000+i)) })
	}
}

// on1 adapts a one-input function to a gradCase function.
func on1(f func(*Tensor) *Tensor) func([]*Tensor) *Tensor {
	return func(xs []*Tensor) *Tensor { return f(xs[0]) }
}

// on2 adapts a two-input function to a gradCase function.
func on2(f func(a, b *Tensor) *Tensor) func([]*Tensor) *Tensor {
	return func(xs []*Tensor) *Tensor { return f(xs[0], xs[1]) }
}

// intsOn makes an integer tensor (the device's int dtype) on x's device.
func intsOn(x *Tensor, vals []int, shape []int) *Tensor { return FromInts(vals, shape, x.Device()) }

// boolsOn makes a Bool tensor on x's device.
func boolsOn(x *Tensor, vals []bool, shape []int) *Tensor { return FromBools(vals, shape, x.Device()) }
