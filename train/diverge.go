package train

import (
	"errors"
	"fmt"
	"math"
)

// ErrDiverged is wrapped by the error of a training run whose loss became
// NaN or infinite, or grew past its divergence factor times the first
// step's loss (see Config.DivergenceFactor and Trainer.DivergenceFactor).
var ErrDiverged = errors.New("training diverged")

// DivergedError is the error of a diverged run: which step, in which
// epoch, and the loss that gave it away. It wraps ErrDiverged.
type DivergedError struct {
	// Step is the step counted from 1 over the whole run, Epoch the
	// epoch counted from 1.
	Step, Epoch int
	// Loss is the step's loss; FirstLoss the run's first, the reference
	// of Factor (0 when the loss was not finite).
	Loss, FirstLoss, Factor float64
}

// Error reads, for example, "train: training diverged at step 812 (epoch
// 2): the loss is NaN; try a lower learning rate or gradient clipping".
func (e *DivergedError) Error() string {
	what := fmt.Sprintf("the loss is %v", e.Loss)
	if finite(e.Loss) {
		what = fmt.Sprintf("the loss %.4g is more than %g times the first step's %.4g", e.Loss, e.Factor, e.FirstLoss)
	}
	return fmt.Sprintf("train: %v at step %d (epoch %d): %s; try a lower learning rate or gradient clipping", ErrDiverged, e.Step, e.Epoch, what)
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

// checkLoss records the run's first loss in st and returns a
// *DivergedError when loss, that of step st.Step of epoch, is not finite
// or exceeds factor (> 1; <= 0 turns the check off) times the first loss.
func checkLoss(st *State, loss, factor float64, epoch int) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return &DivergedError{Step: st.Step, Epoch: epoch, Loss: loss, FirstLoss: st.FirstLoss, Factor: factor}
	}
	if st.FirstLoss == 0 {
		st.FirstLoss = loss
		return nil
	}
	if factor > 0 && st.FirstLoss > 0 && loss > factor*st.FirstLoss {
		return &DivergedError{Step: st.Step, Epoch: epoch, Loss: loss, FirstLoss: st.FirstLoss, Factor: factor}
	}
	return nil
}
