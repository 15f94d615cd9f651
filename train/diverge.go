package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// ErrDiverged is wrapped by the error of Run and Trainer.Fit when training
// diverges (see DivergedError): training never goes on silently with a
// NaN or infinite loss, a loss that grew past its divergence factor times
// the first step's (Config.DivergenceFactor, Trainer.DivergenceFactor), or
// a loss scaler that skips every step.
var ErrDiverged = errors.New("training diverged")

// MaxSkippedSteps is the number of consecutive steps a loss scaler
// (optim.GradScaler) may skip for non-finite gradients before Run and
// Trainer.Fit report divergence: by then the loss scale has fallen by
// 2^32 (from PyTorch's initial 2^16 to 2^-16), so the gradients overflow
// even unscaled. A healthy F16 run skips a few steps at its start, while
// the scale comes down from 2^16 to what the gradients allow, and one now
// and then after the scale has grown.
const MaxSkippedSteps = 32

// DivergedError is the error of a training run that diverged at a step:
// its loss was NaN or infinite, or more than Factor times the run's first
// loss, or a loss scaler had skipped MaxSkippedSteps consecutive steps
// (SkippedSteps says which). It wraps ErrDiverged.
type DivergedError struct {
	// Step is the step at which divergence was seen, counted from 1 over
	// the whole run (Run, a resumed run included) or the Trainer's
	// State.Step (Fit); Epoch is its epoch, counted from 1.
	Step, Epoch int
	// Loss is the step's loss; FirstLoss the run's first (0 when the
	// first step's loss was not finite), the reference of Factor, the
	// divergence factor in force (<= 0 when that check was off).
	Loss, FirstLoss, Factor float64
	// DType is the training precision (F32 unless the run chose
	// another); 0 leaves it out of the message.
	DType ember.DType
	// SkippedSteps is MaxSkippedSteps when the loss scaler's skipped
	// steps are what diverged (the loss itself may be finite), else 0.
	SkippedSteps int
	// LossScale is the loss scaler's scale after the step (0 without
	// one).
	LossScale float64
}

// Error reads, for example, "train: training diverged at step 812 (epoch
// 2, f32): the loss 412.5 is more than 100 times the first step's 2.303;
// try a lower learning rate or gradient clipping", or, for an F16 run
// whose loss overflowed, "train: training diverged at step 48 (epoch 1,
// f16): the loss is +Inf; F16 activations overflow beyond 65504: try
// bf16 precision (F32's range) or a lower learning rate"; the hints
// name precisions as Config.DType and --dtype spell them.
func (e *DivergedError) Error() string {
	where := fmt.Sprintf("epoch %d", e.Epoch)
	if e.DType != 0 {
		where += fmt.Sprintf(", %v", e.DType)
	}
	var what string
	switch {
	case e.SkippedSteps > 0:
		what = fmt.Sprintf("the gradients held Inf or NaN in %d consecutive steps, all skipped (loss scale now %g): they overflow even unscaled; try a lower learning rate or bf16 precision",
			e.SkippedSteps, e.LossScale)
	case !finite(e.Loss):
		hint := "try a lower learning rate or gradient clipping"
		switch e.DType {
		case ember.F16:
			hint = "F16 activations overflow beyond 65504: try bf16 precision (F32's range) or a lower learning rate"
		case ember.BF16:
			hint = "try a lower learning rate, gradient clipping, or f32 precision"
		}
		what = fmt.Sprintf("the loss is %v; %s", e.Loss, hint)
	default:
		what = fmt.Sprintf("the loss %.4g is more than %g times the first step's %.4g; try a lower learning rate or gradient clipping", e.Loss, e.Factor, e.FirstLoss)
	}
	return fmt.Sprintf("train: %v at step %d (%s): %s", ErrDiverged, e.Step, where, what)
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

// divergence watches a run's steps for divergence.
type divergence struct {
	// dtype is the training precision the errors name.
	dtype ember.DType
	// factor is the divergence factor (> 1; <= 0 turns that check off).
	factor float64
}

// check accounts the step st.Step (already counted) of epoch (from 1) in
// st, whose loss is loss: it records the run's first loss and counts the
// consecutive steps a loss scaler skipped (stepped is false for a
// skipped step; scale is the loss scale after the step, 0 without a
// scaler). It returns a *DivergedError when loss is not finite, exceeds
// factor times the first loss, or the step is the MaxSkippedSteps-th
// skipped in a row.
func (d divergence) check(st *State, epoch int, loss float64, stepped bool, scale float64) error {
	diverged := func() *DivergedError {
		return &DivergedError{Step: st.Step, Epoch: epoch, Loss: loss, FirstLoss: st.FirstLoss, Factor: d.factor, DType: d.dtype, LossScale: scale}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return diverged()
	}
	if st.FirstLoss == 0 {
		st.FirstLoss = loss
	} else if d.factor > 0 && st.FirstLoss > 0 && loss > d.factor*st.FirstLoss {
		return diverged()
	}
	if stepped {
		st.ConsecutiveSkipped = 0
		return nil
	}
	st.ConsecutiveSkipped++
	st.EpochSkipped++
	if st.ConsecutiveSkipped >= MaxSkippedSteps {
		e := diverged()
		e.SkippedSteps = st.ConsecutiveSkipped
		return e
	}
	return nil
}
