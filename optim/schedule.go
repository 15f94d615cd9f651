package optim

import "math"

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
// *ember.Error naming the argument and its value unless base and gamma
// are finite numbers > 0 and stepSize is positive.
func StepLR(base float64, stepSize int, gamma float64) Schedule {
	checkHypers("step_lr", positive("base", base), positive("gamma", gamma),
		hyper{"stepSize", float64(stepSize), stepSize > 0, "a positive count"})
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
// negative steps give base. It panics with an *ember.Error naming the
// argument and its value unless base is a finite number > 0, min a finite
// number >= 0 and total positive.
func CosineLR(base, min float64, total int) Schedule {
	checkHypers("cosine_lr", positive("base", base), nonNegative("min", min),
		hyper{"total", float64(total), total > 0, "a positive count"})
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
