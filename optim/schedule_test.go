package optim

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

// TestSchedulesMore checks ExponentialLR, LinearLR, FixedLR and WarmupLR
// against hand-worked values.
func TestSchedulesMore(t *testing.T) {
	check := func(name string, s Schedule, want map[int]float64) {
		t.Helper()
		for step, w := range want {
			if got := s.LR(step); math.Abs(got-w) > 1e-15 {
				t.Errorf("%s.LR(%d) = %v, want %v", name, step, got, w)
			}
		}
	}
	check("ExponentialLR", ExponentialLR(0.5, 0.9), map[int]float64{-3: 0.5, 0: 0.5, 1: 0.45, 2: 0.405, 3: 0.3645})
	check("LinearLR", LinearLR(1, 0.2, 4), map[int]float64{-1: 1, 0: 1, 1: 0.8, 2: 0.6, 3: 0.4, 4: 0.2, 9: 0.2})
	check("FixedLR", FixedLR(0.3), map[int]float64{0: 0.3, 1000: 0.3})
	// Four warm-up steps at 1/4, 2/4, 3/4, 4/4 of the cosine's first
	// rate, then the cosine from its step 0 (1) to its step 2 (0.1).
	w := WarmupLR(CosineLR(1, 0.1, 2), 4)
	check("WarmupLR", w, map[int]float64{0: 0.25, 1: 0.5, 2: 0.75, 3: 1, 4: 1, 5: 0.55, 6: 0.1, 7: 0.1})
	if s := FixedLR(2); WarmupLR(s, 0).LR(0) != 2 {
		t.Error("WarmupLR with no warm-up changed the schedule")
	}
	for name, f := range map[string]func(){
		"ExponentialLR gamma 0": func() { ExponentialLR(1, 0) },
		"LinearLR end < 0":      func() { LinearLR(1, -1, 3) },
		"LinearLR total 0":      func() { LinearLR(1, 0, 0) },
		"FixedLR NaN":           func() { FixedLR(math.NaN()) },
		"WarmupLR nil":          func() { WarmupLR(nil, 3) },
		"WarmupLR negative":     func() { WarmupLR(FixedLR(1), -1) },
	} {
		if ember.Try(f) == nil {
			t.Errorf("%s: no panic", name)
		}
	}
}
