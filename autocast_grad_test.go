package ember

import (
	"math"
	"testing"
)

// TestAutocastGradientsHandWorked checks the gradient of an F32 master
// weight through autocast casts against its closed form. For
// L = Σ c ⊙ (x·Wᵀ) with the product in BF16 (or F16) and c an F32
// constant, the backward pass casts ∂L/∂y = c to the low precision, forms
// dW = low(c)ᵀ·low(x) in that precision (float32 accumulation, one
// rounding) and casts it back to F32 for W: the reference is that
// expression in float64, rounded once; the tolerance is as in
// TestAutocastMatmulValues.
func TestAutocastGradientsHandWorked(t *testing.T) {
	rng := newRNG(3)
	const batch, in, out = 7, 11, 4
	x := randRef([]int{batch, in}, F32, nonZero(rng, 0.1, 1))
	w := randRef([]int{out, in}, F32, nonZero(rng, 0.1, 1))
	c := randRef([]int{batch, out}, F32, nonZero(rng, 0.1, 1))
	for _, dev := range autocastDevices() {
		for _, lp := range []DType{BF16, F16} {
			adev := dev.Autodiff()
			amp := adev.Autocast(lp)
			W := mk(adev, w, F32).RequireGrad()
			y := mk(amp, x, F32).Matmul(W.Transpose())
			loss := y.Mul(mk(adev, c, F32)).Sum()
			if y.DType() != lp || loss.DType() != F32 {
				t.Fatalf("%v/%v: y %v, loss %v", dev, lp, y.DType(), loss.DType())
			}
			g := loss.Backward().Of(W)
			if g == nil || g.DType() != F32 {
				t.Fatalf("%v/%v: gradient %v, want an F32 gradient of the master weight", dev, lp, g)
			}
			got := g.Float64s()
			for o := range out {
				for i := range in {
					var s, abs float64
					for b := range batch {
						p := quantize(c.at(b, o), lp) * quantize(x.at(b, i), lp)
						s += p
						abs += math.Abs(p)
					}
					want := quantize(s, lp)
					tol := 2*unitRoundoff(lp)*math.Abs(want) + batch*0x1p-24*abs
					if d := math.Abs(got[o*in+i] - want); d > tol {
						t.Errorf("%v/%v: dW[%d,%d] = %v, want %v (±%.3g)", dev, lp, o, i, got[o*in+i], want, tol)
					}
				}
			}
		}
	}
}

// TestAutocastGradientsFiniteDifferences checks that gradients flow
// through the autocast casts to F32 leaves and approximate the true
// derivative: for L(W, b) = Σ c ⊙ tanh(x·Wᵀ + b) (the product in the low
// precision, tanh in its operand's dtype, the sum in F32) the autodiff
// gradients must match central differences of the same function in
// float64 (step 1e-6) to within the low precision's accuracy: the
// gradients pass through about four roundings of relative size u (2^-8
// for BF16, 2^-11 for F16) and sums of up to 9 terms, so the bound is
// 16·u·Σ|terms| per element, Σ|terms| the float64 sum of the magnitudes
// of the terms of the reference gradient.
func TestAutocastGradientsFiniteDifferences(t *testing.T) {
	rng := newRNG(4)
	const batch, in, out = 9, 5, 3
	x := randRef([]int{batch, in}, F32, nonZero(rng, 0.1, 1))
	w := randRef([]int{out, in}, F32, nonZero(rng, 0.1, 0.5))
	bv := randRef([]int{out}, F32, nonZero(rng, 0.1, 0.5))
	c := randRef([]int{batch, out}, F32, nonZero(rng, 0.5, 1.5))
	// loss64 is L in float64 with its terms' magnitudes for the bound.
	pre := func(w, bv []float64, b, o int) float64 {
		s := bv[o]
		for i := range in {
			s += x.at(b, i) * w[o*in+i]
		}
		return s
	}
	loss64 := func(w, bv []float64) float64 {
		var l float64
		for b := range batch {
			for o := range out {
				l += c.at(b, o) * math.Tanh(pre(w, bv, b, o))
			}
		}
		return l
	}
	const h = 1e-6
	fd := func(v []float64, i int, f func() float64) float64 {
		old := v[i]
		v[i] = old + h
		up := f()
		v[i] = old - h
		down := f()
		v[i] = old
		return (up - down) / (2 * h)
	}
	wv, bvv := append([]float64(nil), w.v...), append([]float64(nil), bv.v...)
	for _, dev := range autocastDevices() {
		for _, lp := range []DType{BF16, F16} {
			u := unitRoundoff(lp)
			adev := dev.Autodiff()
			W := mk(adev, w, F32).RequireGrad()
			B := mk(adev, bv, F32).RequireGrad()
			y := mk(adev.Autocast(lp), x, F32).Matmul(W.Transpose())
			loss := y.Add(B.Cast(lp)).Tanh().Mul(mk(adev, c, F32)).Sum()
			grads := loss.Backward()
			gw, gb := grads.Of(W), grads.Of(B)
			if gw == nil || gb == nil || gw.DType() != F32 || gb.DType() != F32 {
				t.Fatalf("%v/%v: gradients %v, %v; want F32 gradients of both leaves", dev, lp, gw, gb)
			}
			gwv, gbv := gw.Float64s(), gb.Float64s()
			for o := range out {
				for i := range in {
					want := fd(wv, o*in+i, func() float64 { return loss64(wv, bvv) })
					var mag float64
					for b := range batch {
						th := math.Tanh(pre(wv, bvv, b, o))
						mag += math.Abs(c.at(b, o) * (1 - th*th) * x.at(b, i))
					}
					if d := math.Abs(gwv[o*in+i] - want); d > 16*u*mag+1e-6 {
						t.Errorf("%v/%v: dL/dW[%d,%d] = %v, central difference %v (±%.3g)", dev, lp, o, i, gwv[o*in+i], want, 16*u*mag)
					}
				}
				want := fd(bvv, o, func() float64 { return loss64(wv, bvv) })
				var mag float64
				for b := range batch {
					th := math.Tanh(pre(wv, bvv, b, o))
					mag += math.Abs(c.at(b, o) * (1 - th*th))
				}
				if d := math.Abs(gbv[o] - want); d > 16*u*mag+1e-6 {
					t.Errorf("%v/%v: dL/db[%d] = %v, central difference %v (±%.3g)", dev, lp, o, gbv[o], want, 16*u*mag)
				}
			}
		}
	}
}

// TestCastGradientFiniteDifferences checks the gradient rule of Cast on
// its own, with F64 leaves cast to F32 and back around a smooth function:
// L(v) = Σ w ⊙ exp(f32(v))·f32(v) against float64 central differences
// (step 1e-3, tolerance 1e-4 relative: the function is evaluated in
// float32, whose rounding of about 6e-8 relative, divided by the step,
// bounds the difference quotient's error).
func TestCastGradientFiniteDifferences(t *testing.T) {
	rng := newRNG(5)
	v := randRef([]int{6}, F64, nonZero(rng, 0.2, 1.5))
	w := randRef([]int{6}, F64, nonZero(rng, 0.5, 1))
	f := func(x []float64) float64 {
		var l float64
		for i, xi := range x {
			x32 := float64(float32(xi))
			l += w.v[i] * float64(float32(math.Exp(x32)*x32))
		}
		return l
	}
	for _, dev := range autocastDevices() {
		adev := dev.Autodiff()
		V := mk(adev, v, F64).RequireGrad()
		x := V.Cast(F32)
		loss := x.Exp().Mul(x).Cast(F64).Mul(mk(adev, w, F64)).Sum()
		g := loss.Backward().Of(V)
		if g == nil || g.DType() != F64 {
			t.Fatalf("%v: gradient %v, want F64", dev, g)
		}
		got := g.Float64s()
		const h = 1e-3
		for i := range v.v {
			x := append([]float64(nil), v.v...)
			x[i] += h
			up := f(x)
			x[i] -= 2 * h
			down := f(x)
			want := (up - down) / (2 * h)
			if math.Abs(got[i]-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%v: dL/dv[%d] = %v, central difference %v", dev, i, got[i], want)
			}
		}
	}
}
