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

// ExponentialLR decays the rate by gamma every step: base·gammaˢᵗᵉᵖ
// (PyTorch's ExponentialLR, counting optimizer steps instead of epochs).
// Negative steps count as 0. It panics with an *ember.Error naming the
// argument and its value unless base and gamma are finite numbers > 0.
func ExponentialLR(base, gamma float64) Schedule {
	checkHypers("exponential_lr", positive("base", base), positive("gamma", gamma))
	return ScheduleFunc(func(step int) float64 {
		return base * math.Pow(gamma, float64(max(step, 0)))
	})
}

// LinearLR moves the rate in a straight line from base at step 0 to end
// at step total, and keeps end after total: base + (end − base)·step/total
// (the linear decay of Hugging Face's get_linear_schedule_with_warmup with
// end 0; PyTorch's LinearLR is the same line given as factors of base).
// Negative steps give base. It panics with an *ember.Error naming the
// argument and its value unless base is a finite number > 0, end a finite
// number >= 0 and total positive.
func LinearLR(base, end float64, total int) Schedule {
	checkHypers("linear_lr", positive("base", base), nonNegative("end", end),
		hyper{"total", float64(total), total > 0, "a positive count"})
	return ScheduleFunc(func(step int) float64 {
		switch {
		case step <= 0:
			return base
		case step >= total:
			return end
		}
		return base + (end-base)*float64(step)/float64(total)
	})
}

// FixedLR is the constant rate lr at every step (what an optimizer does
// without a schedule; with WarmupLR, a warm-up to a constant rate). It
// panics with an *ember.Error unless lr is a finite number > 0. (PyTorch's
// ConstantLR is another thing: a factor applied for the first steps.)
func FixedLR(lr float64) Schedule {
	checkHypers("fixed_lr", positive("lr", lr))
	return ScheduleFunc(func(int) float64 { return lr })
}

// WarmupLR prefixes s with a linear warm-up of warmup steps: step k <
// warmup has rate s.LR(0)·(k+1)/warmup, rising to s's initial rate at the
// last warm-up step, and step k >= warmup has rate s.LR(k − warmup), so
// that s runs its whole course after the warm-up (give s the number of
// steps that remain). The first step trains at s.LR(0)/warmup rather than
// at 0, where Hugging Face's warm-up schedules spend a step at rate 0.
// warmup 0 returns s itself. It panics with an *ember.Error for a nil s or
// a negative warmup.
func WarmupLR(s Schedule, warmup int) Schedule {
	if s == nil {
		panic(&ember.Error{Op: "warmup_lr", Msg: "nil schedule"})
	}
	checkHypers("warmup_lr", hyper{"warmup", float64(warmup), warmup >= 0, "a count >= 0"})
	if warmup == 0 {
		return s
	}
	return ScheduleFunc(func(step int) float64 {
		if step < warmup {
			return s.LR(0) * float64(max(step, 0)+1) / float64(warmup)
		}
		return s.LR(step - warmup)
	})
}
