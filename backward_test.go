package ember

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBackwardNeedsScalar checks that Backward refuses an output of more
// than one element (PyTorch's rule) and that BackwardWith computes the
// vector-Jacobian product: for y = x·x·w, d(Σ g·y)/dx = 2·x·w·g, against
// that closed form, on flex and cpu; mismatched or missing output
// gradients are *Errors.
func TestBackwardNeedsScalar(t *testing.T) {
	for _, dev := range []Device{Flex().Autodiff(), CPU().Autodiff()} {
		r := rand.New(rand.NewPCG(8, 1))
		vals := func() []float64 {
			v := make([]float64, 6)
			for i := range v {
				v[i] = r.Float64()*2 - 1
			}
			return v
		}
		x := FromFloats(vals(), []int{2, 3}, dev).Cast(F64).RequireGrad()
		w := FromFloats(vals(), []int{2, 3}, dev).Cast(F64)
		g := FromFloats(vals(), []int{2, 3}, dev).Cast(F64)
		y := x.Mul(x).Mul(w)
		misuse(t, "backward", func() { y.Backward() }, "scalar", "[2 3]")
		misuse(t, "backward", func() { y.BackwardWith(nil) }, "gradient")
		misuse(t, "backward", func() { y.BackwardWith(g.Reshape(3, 2)) }, "shape")
		misuse(t, "backward", func() { y.BackwardWith(g.Cast(F32)) }, "dtype")
		got := y.BackwardWith(g).Of(x).Float64s()
		xv, wv, gv := x.Float64s(), w.Float64s(), g.Float64s()
		for i := range got {
			if want := 2 * xv[i] * wv[i] * gv[i]; math.Abs(got[i]-want) > 1e-12 {
				t.Errorf("%v: d(Σg·y)/dx[%d] = %v, want %v", dev, i, got[i], want)
			}
		}
		// A one-element output of any rank is a scalar for Backward.
		s := y.Sum().Reshape(1, 1)
		got = s.Backward().Of(x).Float64s()
		for i := range got {
			if want := 2 * xv[i] * wv[i]; math.Abs(got[i]-want) > 1e-12 {
				t.Errorf("%v: d(Σy)/dx[%d] = %v, want %v", dev, i, got[i], want)
			}
		}
	}
}
