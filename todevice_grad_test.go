package ember

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestToDeviceIsDifferentiable moves a tracked tensor between devices
// (flex → cpu, cpu → flex, and on one device into the checkpointing
// mode) in the middle of a computation: y = Σ w·(x·x moved), so
// dy/dx = 2·x·w, checked against that closed form, arrives at x's leaf on
// its own device; an untracked source stays untracked, and under NoGrad the
// moved tensor is untracked.
func TestToDeviceIsDifferentiable(t *testing.T) {
	pairs := [][2]Device{
		{Flex().Autodiff(), CPU().Autodiff()},
		{CPU().Autodiff(), Flex().Autodiff()},
		{CPU().Autodiff(), CPU().Autodiff().GradientCheckpointing()},
		{CPU().Autodiff().GradientCheckpointing(), Flex().Autodiff()},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range pairs {
		src, dst := p[0], p[1]
		xv, wv := make([]float64, 5), make([]float64, 5)
		for i := range xv {
			xv[i], wv[i] = r.Float64()*2-1, 0.5+r.Float64()
		}
		x := FromFloats(xv, []int{5}, src).Cast(F64).RequireGrad()
		w := FromFloats(wv, []int{5}, dst).Cast(F64)
		xv, wv = x.Float64s(), w.Float64s()
		moved := x.Mul(x).ToDevice(dst)
		if !moved.IsTracked() || !moved.Device().Equal(dst) {
			t.Fatalf("%v → %v: moved tensor tracked %v, on %v", src, dst, moved.IsTracked(), moved.Device())
		}
		g := moved.Mul(w).Sum().Backward().Of(x)
		if g == nil || !g.Device().Equal(src) {
			t.Fatalf("%v → %v: gradient of the source leaf missing or on the wrong device (%v)", src, dst, g)
		}
		for i, got := range g.Float64s() {
			if want := 2 * xv[i] * wv[i]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%v → %v: dy/dx[%d] = %v, want %v", src, dst, i, got, want)
			}
		}
		if x.Detach().ToDevice(dst).IsTracked() {
			t.Errorf("%v → %v: an untracked tensor became tracked", src, dst)
		}
		NoGrad(func() {
			if x.ToDevice(dst).IsTracked() {
				t.Errorf("%v → %v: a move under NoGrad is tracked", src, dst)
			}
		})
	}
}
