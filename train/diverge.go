package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// ErrDiverged is wrapped by the error of Run and Trainer.Fit when training
// diverges (see DivergenceError): training never goes on silently with a
// NaN or infinite loss.
var ErrDiverged = errors.New("training diverged")

// MaxSkippedSteps is the number of consecutive steps a loss scaler
// (optim.GradScaler) may skip for non-finite gradients before Run and
// Trainer.Fit report divergence: by then the loss scale has fallen by
// 2^32 (from PyTorch's initial 2^16 to 2^-16), so the gradients overflow
// even unscaled. A healthy F16 run skips a few steps at its start, while
// the scale comes down from 2^16 to what the gradients allow, and one now
// and then after the scale has grown.
const MaxSkippedSteps = 32

// DivergenceError is the error of a training run that diverged: the loss
// of a step was NaN or infinite, or a loss scaler skipped MaxSkippedSteps
// consecutive steps. It wraps ErrDiverged.
type DivergenceError struct {
	// Step is the step at which divergence was seen, counted from 1 over
	// the run (Run) or the Trainer's State.Step (Fit).
	Step int
	// Epoch is the epoch of that step, counted from 1.
	Epoch int
	// Loss is the step's loss.
	Loss float64
	// DType is the training precision (F32 unless the run chose another).
	DType ember.DType
	// Reason says what was seen, e.g. "the loss is NaN".
	Reason string
}

// Error returns a message such as "train: training diverged at step 48
// (epoch 1, f16): the loss is NaN; ...".
func (e *DivergenceError) Error() string {
	return fmt.Sprintf("train: %v at step %d (epoch %d, %v): %s", ErrDiverged, e.Step, e.Epoch, e.DType, e.Reason)
}

// Unwrap returns ErrDiverged.
func (e *DivergenceError) Unwrap() error { return ErrDiverged }

// divergence watches a run's steps for divergence.
type divergence struct {
	dtype ember.DType
	// skipped counts the consecutive steps the loss scaler skipped.
	skipped int
}

// check returns a *DivergenceError when step (of epoch, both from 1),
// with loss loss, diverged; stepped says whether the optimizer stepped
// (false when a loss scaler skipped it) and scale is the loss scale after
// the step (0 without a scaler).
func (d *divergence) check(step, epoch int, loss float64, stepped bool, scale float64) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		hint := "try a lower learning rate"
		switch d.dtype {
		case ember.F16:
			hint = "F16 activations overflow beyond 65504: try DType bf16 (F32's range) or a lower learning rate"
		case ember.BF16:
			hint = "try a lower learning rate, or DType f32"
		}
		return &DivergenceError{Step: step, Epoch: epoch, Loss: loss, DType: d.dtype, Reason: fmt.Sprintf("the loss is %v; %s", loss, hint)}
	}
	if stepped {
		d.skipped = 0
		return nil
	}
	d.skipped++
	if d.skipped >= MaxSkippedSteps {
		return &DivergenceError{Step: step, Epoch: epoch, Loss: loss, DType: d.dtype, Reason: fmt.Sprintf(
			"the gradients held Inf or NaN in %d consecutive steps, all skipped (loss scale now %g): they overflow even unscaled; try a lower learning rate or DType bf16",
			d.skipped, scale)}
	}
	return nil
}
