package ember

import (
	"slices"
	"strings"
	"testing"
)

// TestGradientsSet checks that Set replaces what Of returns (the value,
// detached, on the inner device) and refuses what cannot be a gradient.
func TestGradientsSet(t *testing.T) {
	ad := Flex().Autodiff()
	w := FromFloats([]float64{1.5, -2, 0.25}, []int{3}, ad).RequireGrad()
	loss := w.Mul(w).Sum()
	grads := loss.Backward()
	if got := grads.Of(w).Float64s(); !slices.Equal(got, []float64{3, -4, 0.5}) {
		t.Fatalf("d(Σw²)/dw = %v, want 2w", got)
	}
	half := grads.Of(w).MulScalar(0.5)
	grads.Set(w, half)
	got := grads.Of(w)
	if !slices.Equal(got.Float64s(), []float64{1.5, -2, 0.25}) || got.IsTracked() || got.Device().IsAutodiff() {
		t.Fatalf("after Set: %v tracked %v on %v", got.Float64s(), got.IsTracked(), got.Device())
	}
	// A tracked replacement on the autodiff device is stored detached.
	grads.Set(w, w.MulScalar(3))
	if got := grads.Of(w); !slices.Equal(got.Float64s(), []float64{4.5, -6, 0.75}) || got.IsTracked() {
		t.Fatalf("after Set of a tracked value: %v tracked %v", got.Float64s(), got.IsTracked())
	}
	other := F64
	if w.DType() == F64 {
		other = F32
	}
	bad := []struct {
		name     string
		g        *Gradients
		t, grad  *Tensor
		contains string
	}{
		{"nil gradients", nil, w, half, "nil Gradients"},
		{"untracked t", grads, FromFloats([]float64{1, 2, 3}, []int{3}, ad), half, "tracked"},
		{"nil grad", grads, w, nil, "needs a gradient"},
		{"shape", grads, w, FromFloats([]float64{1, 2}, []int{2}, Flex()), "shape and dtype"},
		{"dtype", grads, w, FromFloats([]float64{1, 2, 3}, []int{3}, Flex()).Cast(other), "shape and dtype"},
		{"device", grads, w, FromFloats([]float64{1, 2, 3}, []int{3}, CPU()), "shape and dtype"},
	}
	for _, c := range bad {
		err := Try(func() { c.g.Set(c.t, c.grad) })
		if err == nil || !strings.Contains(err.Error(), c.contains) || !strings.Contains(err.Error(), "gradients_set") {
			t.Errorf("%s: error %v, want one naming gradients_set and %q", c.name, err, c.contains)
		}
	}
	if got := grads.Of(w).Float64s(); !slices.Equal(got, []float64{4.5, -6, 0.75}) {
		t.Fatalf("a refused Set changed the gradient to %v", got)
	}
}

// TestGradientsSetAutocast checks Set on an F32 master weight of an
// autocast device, as optim.GradScaler uses it: a gradient from the inner
// device is accepted and read back unchanged, and one of the product's
// 16-bit dtype is refused.
func TestGradientsSetAutocast(t *testing.T) {
	ad := CPU().Autodiff().Autocast(BF16)
	w := FromFloats([]float32{1, 2, 3}, []int{3}, ad).RequireGrad()
	grads := w.Mul(w).Sum().Backward()
	if got := grads.Of(w).Float64s(); !slices.Equal(got, []float64{2, 4, 6}) {
		t.Fatalf("d(Σw²)/dw = %v, want 2w", got)
	}
	grads.Set(w, grads.Of(w).MulScalar(0.25))
	if got := grads.Of(w); !slices.Equal(got.Float64s(), []float64{0.5, 1, 1.5}) || got.DType() != F32 {
		t.Fatalf("after Set: %v %v, want [0.5 1 1.5] f32", got.Float64s(), got.DType())
	}
	err := Try(func() { grads.Set(w, grads.Of(w).Cast(BF16)) })
	if err == nil || !strings.Contains(err.Error(), "shape and dtype") {
		t.Fatalf("Set of a bf16 gradient for an f32 weight: %v, want a dtype error", err)
	}
}
