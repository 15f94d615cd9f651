package ember

import (
	"math"
	"testing"
)

// softplusRef is PyTorch's softplus in float64.
func softplusRef(v, beta, threshold float64) float64 {
	if v*beta > threshold {
		return v
	}
	return math.Log1p(math.Exp(v*beta)) / beta
}

// TestTableMoreActivations checks Trunc, Frac, Softplus, Elu, Selu, Mish,
// Hardsigmoid, Hardswish and GeluTanh on every device, float dtype and
// layout against float64 formulas on the host, on random non-zero inputs
// spanning both sides of each kink (half dtypes within 8x their
// tolerance, as the compositions round several times), and their edge
// cases: trunc(-0.5) = -0, frac(±Inf) = NaN, softplus past its threshold
// is x exactly (no overflow at x = 1000), NaN propagates.
func TestTableMoreActivations(t *testing.T) {
	const alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
	fns := []struct {
		name string
		f    func(*Tensor) *Tensor
		ref  func(float64) float64
	}{
		{"trunc", (*Tensor).Trunc, math.Trunc},
		{"frac", (*Tensor).Frac, func(v float64) float64 { return v - math.Trunc(v) }},
		{"softplus", func(x *Tensor) *Tensor { return x.Softplus(1, 20) }, func(v float64) float64 { return softplusRef(v, 1, 20) }},
		{"softplus beta 2 threshold 3", func(x *Tensor) *Tensor { return x.Softplus(2, 3) }, func(v float64) float64 { return softplusRef(v, 2, 3) }},
		{"elu", func(x *Tensor) *Tensor { return x.Elu(0.7) }, func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 0.7 * math.Expm1(v)
		}},
		{"selu", (*Tensor).Selu, func(v float64) float64 {
			if v > 0 {
				return scale * v
			}
			return scale * alpha * math.Expm1(v)
		}},
		{"mish", (*Tensor).Mish, func(v float64) float64 { return v * math.Tanh(softplusRef(v, 1, 20)) }},
		{"hardsigmoid", (*Tensor).Hardsigmoid, func(v float64) float64 { return math.Min(math.Max(v/6+0.5, 0), 1) }},
		{"hardswish", (*Tensor).Hardswish, func(v float64) float64 { return v * math.Min(math.Max(v+3, 0), 6) / 6 }},
		{"gelu tanh", (*Tensor).GeluTanh, func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}},
	}
	shapes := [][]int{{11}, {1, 1}, {3, 5}, {2, 3, 4}, {2, 0, 3}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(67)
		for _, dt := range floatDTypes {
			loosen := 1.0
			if dt == F16 || dt == BF16 {
				loosen = 8
			}
			for _, shape := range shapes {
				x := randRef(shape, dt, nonZero(rng, 0.05, 6))
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for _, fn := range fns {
						name := fn.name + " " + dt.String() + " " + shapeName(shape) + " " + l.name
						check(t, name, fn.f(xt), mapRef(x, fn.ref), dt, loosen, nil)
					}
				}
			}
		}
		edge := ref{[]int{7}, []float64{-0.5, -1.25, math.Inf(1), math.Inf(-1), math.NaN(), 1000, -1000}}
		e := mk(dev, edge, F32)
		got := e.Trunc().Float64s()
		if !math.Signbit(got[0]) || got[0] != 0 {
			t.Errorf("trunc(-0.5) = %v, want -0", got[0])
		}
		checkEq(t, "trunc edges", e.Trunc(), mapRef(edge, math.Trunc), F32)
		checkEq(t, "frac edges", e.Frac(), ref{[]int{7}, []float64{-0.5, -0.25, math.NaN(), math.NaN(), math.NaN(), 0, 0}}, F32)
		checkEq(t, "softplus edges", e.Softplus(1, 20), mapRef(edge, func(v float64) float64 { return softplusRef(v, 1, 20) }), F32)
		checkEq(t, "int trunc is the identity", mk(dev, ref{[]int{2}, []float64{-3, 4}}, I64).Trunc(), ref{[]int{2}, []float64{-3, 4}}, I64)
		expectPanic(t, "softplus beta 0", func() { e.Softplus(0, 20) }, "softplus", "non-zero")
		expectPanic(t, "elu NaN alpha", func() { e.Elu(math.NaN()) }, "elu", "finite")
		expectPanic(t, "trunc of Bool", func() { e.IsNaN().Trunc() }, "trunc", "Bool")
	})
}

// lerpRef is PyTorch's lerp formula in float64.
func lerpRef(a, b, w float64) float64 {
	if math.Abs(w) < 0.5 {
		return a + w*(b-a)
	}
	return b - (b-a)*(1-w)
}

// rollRef rolls r by s along axis a.
func rollRef(r ref, s, a int) ref {
	n := r.shape[a]
	return build(r.shape, func(idx []int) float64 {
		j := append([]int{}, idx...)
		j[a] = ((idx[a]-s)%n + n) % n
		return r.at(j...)
	})
}

// TestTableLerpRollSpace checks Lerp (tensor and scalar weights,
// broadcasting), Roll (every axis, shifts of any sign and size, the
// flattened form) and Linspace/Logspace against float64 host formulas;
// lerp with weight 1 is end exactly.
func TestTableLerpRollSpace(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(71)
		for _, dt := range floatDTypes {
			a := randRef([]int{3, 4}, dt, nonZero(rng, 0.25, 3))
			b := randRef([]int{4}, dt, nonZero(rng, 0.25, 3))
			w := randRef([]int{3, 1}, dt, uniform(rng, -0.5, 1.5))
			for _, l := range layoutsFor(2) {
				at := l.view(dev, a, dt)
				want := build([]int{3, 4}, func(idx []int) float64 {
					return lerpRef(a.at(idx...), b.v[idx[1]], w.v[idx[0]])
				})
				check(t, "lerp "+dt.String()+" "+l.name, at.Lerp(mk(dev, b, dt), mk(dev, w, dt)), want, dt, 4, nil)
				for _, ws := range []float64{0.25, 0.5, 1, -2} {
					want := build([]int{3, 4}, func(idx []int) float64 { return lerpRef(a.at(idx...), b.v[idx[1]], ws) })
					check(t, "lerp scalar "+dt.String()+" "+l.name, at.LerpScalar(mk(dev, b, dt), ws), want, dt, 4, nil)
				}
			}
			end := mk(dev, b, dt)
			checkEq(t, "lerp weight 1 is end", mk(dev, b, dt).Neg().LerpScalar(end, 1), b, dt)
		}
		for _, shape := range [][]int{{5}, {3, 4}, {2, 3, 2}, {2, 0}} {
			x := randRef(shape, F32, nonZero(rng, 0.5, 2))
			for _, l := range layoutsFor(len(shape)) {
				xt := l.view(dev, x, F32)
				for a := -len(shape); a < len(shape); a++ {
					pa := (a + len(shape)) % len(shape)
					if shape[pa] == 0 {
						continue
					}
					for _, s := range []int{0, 1, -1, 2, 7, -13} {
						checkEq(t, "roll "+shapeName(shape)+" "+l.name+" axis "+itoa(a)+" shift "+itoa(s), xt.Roll([]int{s}, a), rollRef(x, s, pa), F32)
					}
				}
				if len(shape) == 2 && shape[1] > 0 {
					want := rollRef(rollRef(x, 1, 0), -3, 1)
					checkEq(t, "roll two axes "+l.name, xt.Roll([]int{1, -3}, 0, 1), want, F32)
					flat := rollRef(ref{[]int{numel(shape)}, x.v}, 5, 0)
					checkEq(t, "roll flattened "+l.name, xt.Roll([]int{5}), ref{shape, flat.v}, F32)
				}
			}
		}
		for _, c := range []struct {
			start, end float64
			steps      int
		}{{0, 1, 5}, {-3, 7.5, 11}, {2, -2, 4}, {1, 1, 3}, {5, 9, 1}, {0, 1, 0}} {
			vals := make([]float64, c.steps)
			for i := range vals {
				if c.steps == 1 {
					vals[i] = c.start
					continue
				}
				vals[i] = c.start + (c.end-c.start)*float64(i)/float64(c.steps-1)
			}
			dt := DType(dev.Settings().FloatDType)
			check(t, "linspace", Linspace(c.start, c.end, c.steps, dev), ref{[]int{c.steps}, vals}, dt, 1, nil)
			pows := make([]float64, len(vals))
			for i, v := range vals {
				pows[i] = math.Pow(2, v)
			}
			check(t, "logspace", Logspace(c.start, c.end, c.steps, 2, dev), ref{[]int{c.steps}, pows}, dt, 1, nil)
		}
		expectPanic(t, "roll shifts without axes", func() { Zeros([]int{3}, dev).Roll([]int{1, 2}) }, "roll", "one shift")
		expectPanic(t, "roll repeated axis", func() { Zeros([]int{3, 3}, dev).Roll([]int{1, 2}, 0, -2) }, "roll", "repeated")
		expectPanic(t, "linspace negative", func() { Linspace(0, 1, -1, dev) }, "linspace", "negative")
		expectPanic(t, "lerp of ints", func() { Arange(0, 3, dev).Lerp(Arange(0, 3, dev), Arange(0, 3, dev)) }, "lerp", "float")
	})
}

// TestGradActivations checks the gradients of the composed activations,
// Lerp (all three operands) and Roll against central differences, on
// inputs away from the kinks.
func TestGradActivations(t *testing.T) {
	rng := newRNG(73)
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2.5))
	for i, v := range x.v { // keep away from hardswish's kinks at ±3
		if math.Abs(math.Abs(v)-3) < 0.05 {
			x.v[i] = 1.7
		}
	}
	a := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	b := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	w := randRef([]int{3, 4}, F64, uniform(rng, -0.4, 1.4))
	un := func(name string, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{x}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		un("frac", (*Tensor).Frac),
		un("softplus", func(x *Tensor) *Tensor { return x.Softplus(1.5, 2) }),
		un("elu", func(x *Tensor) *Tensor { return x.Elu(0.8) }),
		un("selu", (*Tensor).Selu),
		un("mish", (*Tensor).Mish),
		un("hardsigmoid", (*Tensor).Hardsigmoid),
		un("hardswish", (*Tensor).Hardswish),
		un("gelu tanh", (*Tensor).GeluTanh),
		un("roll", func(x *Tensor) *Tensor { return x.Roll([]int{1, -1}, 0, 1) }),
		{name: "lerp", ins: []ref{a, b, w}, f: func(xs []*Tensor) *Tensor { return xs[0].Lerp(xs[1], xs[2]) }},
		{name: "lerp scalar", ins: []ref{a, b}, f: func(xs []*Tensor) *Tensor { return xs[0].LerpScalar(xs[1], 0.7) }},
	})
}
