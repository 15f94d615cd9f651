package optim

import (
	"math"

	"github.com/emberml/ember"
)

// Schedule gives the learning rate for a step number (0 for the first step).
type Schedule interface {
	// LR returns the learning rate of step (>= 0).
	LR(step int) float64
}

// ScheduleFunc adapts a function to Schedule.
type ScheduleFunc func(step int) float64

// LR returns f(step).
func (f ScheduleFunc) LR(step int) float64 { return f(step) }

// StepLR decays the rate by gamma every stepSize steps:
// base·gamma^⌊step/stepSize⌋ (PyTorch's StepLR, counting optimizer steps
// instead of epochs). Negative steps count as 0. It panics with an
// *ember.Error when stepSize is not positive.
func StepLR(base float64, stepSize int, gamma float64) Schedule {
	if stepSize <= 0 {
		panic(&ember.Error{Op: "step_lr", Msg: "stepSize must be positive"})
	}
	return ScheduleFunc(func(step int) float64 {
		if step < 0 {
			step = 0
		}
		return base * math.Pow(gamma, float64(step/stepSize))
	})
}

// CosineLR anneals from base to min over total steps along half a cosine:
// min + (base − min)·(1 + cos(π·step/total))/2 for 0 ≤ step ≤ total, and
// min after total (PyTorch's CosineAnnealingLR closed form with
// T_max = total and eta_min = min, without its restart after T_max);
// negative steps give base. It panics with an *ember.Error when total is
// not positive.
func CosineLR(base, min float64, total int) Schedule {
	if total <= 0 {
		panic(&ember.Error{Op: "cosine_lr", Msg: "total must be positive"})
	}
	return ScheduleFunc(func(step int) float64 {
		switch {
		case step <= 0:
			return base
		case step >= total:
			return min
		}
		return min + (base-min)*(1+math.Cos(math.Pi*float64(step)/float64(total)))/2
	})
}
