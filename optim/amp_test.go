package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// TestMasterWeightUpdate checks mixed-precision training's core promise:
// with the forward and backward passes of an nn.Linear in BF16 or F16
// (autocast) and the parameters in F32, an SGD step updates the F32
// master weights, to within the low precision's rounding of the
// gradient, exactly as F32 training does, and keeps updates too small to
// change a 16-bit weight.
//
// For L = Σ c ⊙ (x·Wᵀ + b) the gradients are dW = cᵀ·x and db = Σ_rows c.
// Under autocast the backward pass forms them from c and x rounded to the
// low precision (relative error u each: 2^-8 for BF16, 2^-11 for F16),
// accumulates in float32 and rounds the result once more, so
//
//	|dW_amp − dW| <= 3u·Σ_b |c_bo·x_bi| (+ float32 accumulation, k·2^-24·Σ|c·x|)
//
// and likewise for db with Σ_b |c_bo|. The updated masters W' = W − lr·g
// (F32) then differ from the F32 run's by at most lr times that bound plus
// one float32 rounding of W'. The learning rate (1e-4) makes most updates
// smaller than half a BF16 ulp of the weight: a BF16 weight would not
// move, the F32 master must.
func TestMasterWeightUpdate(t *testing.T) {
	const in, out, batch, lr = 16, 4, 8, 1e-4
	rng := rand.New(rand.NewPCG(11, 12))
	vals := func(n int, lo, hi float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			m := lo + (hi-lo)*rng.Float64()
			if rng.IntN(2) == 0 {
				m = -m
			}
			v[i] = float32(m)
		}
		return v
	}
	xv, cv := vals(batch*in, 0.1, 1), vals(batch*out, 0.1, 1)
	wv, bv := vals(out*in, 0.05, 0.25), vals(out, 0.05, 0.25)
	for _, lp := range []ember.DType{ember.BF16, ember.F16} {
		u := 0x1p-8
		if lp == ember.F16 {
			u = 0x1p-11
		}
		adev := ember.CPU().Autodiff()
		// step runs one SGD step from (wv, bv) with the input on xdev and
		// returns the updated weight and bias.
		step := func(xdev ember.Device) (w, b []float64) {
			l := nn.NewLinear(in, out, adev)
			l.Weight.Value = ember.FromFloats(wv, []int{out, in}, adev).RequireGrad()
			l.Bias.Value = ember.FromFloats(bv, []int{out}, adev).RequireGrad()
			opt := NewSGD(l.NamedParameters(), SGDConfig{LR: lr})
			y := l.Forward(ember.FromFloats(xv, []int{batch, in}, xdev))
			loss := y.Mul(ember.FromFloats(cv, []int{batch, out}, adev)).Sum()
			if loss.DType() != ember.F32 {
				t.Fatalf("%v: loss %v", lp, loss.DType())
			}
			opt.Step(loss.Backward())
			if l.Weight.Value.DType() != ember.F32 || !l.Weight.Value.IsTracked() {
				t.Fatalf("%v: master weight %v tracked %v", lp, l.Weight.Value.DType(), l.Weight.Value.IsTracked())
			}
			return l.Weight.Value.Float64s(), l.Bias.Value.Float64s()
		}
		wRef, bRef := step(adev)
		wAmp, bAmp := step(adev.Autocast(lp))
		small := 0
		for o := range out {
			for i := range in {
				var g, mag float64
				for b := range batch {
					p := float64(cv[b*out+o]) * float64(xv[b*in+i])
					g += p
					mag += math.Abs(p)
				}
				k := o*in + i
				tol := lr*(3*u+batch*0x1p-24)*mag + 0x1p-23*math.Abs(wRef[k])
				if d := math.Abs(wAmp[k] - wRef[k]); d > tol {
					t.Errorf("%v: W'[%d,%d] = %v, F32 training gives %v (±%.3g)", lp, o, i, wAmp[k], wRef[k], tol)
				}
				w0 := float64(wv[k])
				if lr*math.Abs(g) < u*math.Abs(w0)/2 {
					small++
					if wAmp[k] == w0 {
						t.Errorf("%v: W[%d,%d] = %v lost its update of %.3g (below a 16-bit ulp)", lp, o, i, w0, -lr*g)
					}
				}
			}
			var g, mag float64
			for b := range batch {
				g += float64(cv[b*out+o])
				mag += math.Abs(float64(cv[b*out+o]))
			}
			tol := lr*(3*u+batch*0x1p-24)*mag + 0x1p-23*math.Abs(bRef[o])
			if d := math.Abs(bAmp[o] - bRef[o]); d > tol {
				t.Errorf("%v: b'[%d] = %v, F32 training gives %v (±%.3g)", lp, o, bAmp[o], bRef[o], tol)
			}
		}
		if lp == ember.BF16 && small < in*out/4 {
			t.Errorf("only %d of %d updates are below half a bf16 ulp: the test does not exercise the master weights", small, in*out)
		}
	}
}
