package train

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// update runs the backward pass of loss and the optimizer step that Run
// and Trainer take after each forward pass. Without a loss scaler the
// gradients are clipped (clipGrads) and opt steps. With one (F16 mixed
// precision) the backward pass starts from the scaled loss, the gradients
// are unscaled before they are clipped (PyTorch's recipe: scaler.unscale_
// before clip_grad_norm_, so that the clipping threshold applies to the
// true gradients and an overflow is seen before clipping hides it), and
// the scaler steps opt unless they overflowed, then updates its scale.
// It reports whether opt stepped, the loss scale after the step (0
// without a scaler), and, with norm clipping, the gradients' total norm
// before clipping (nil without it).
func update(loss *ember.Tensor, params []nn.NamedParam, opt optim.Optimizer, scaler *optim.GradScaler, clipNorm, clipValue float64) (stepped bool, scale float64, gradNorm *ember.Tensor) {
	if scaler == nil {
		grads := loss.Backward()
		gradNorm = clipGrads(grads, params, clipNorm, clipValue)
		opt.Step(grads)
		return true, 0, gradNorm
	}
	grads := scaler.Scale(loss).Backward()
	if clipNorm > 0 || clipValue > 0 {
		scaler.Unscale(grads)
		gradNorm = clipGrads(grads, params, clipNorm, clipValue)
	}
	stepped = scaler.Step(opt, grads)
	scaler.Update()
	return stepped, scaler.LossScale(), gradNorm
}

// clipGrads limits the gradients of params in grads by value (when
// value > 0), then by total L2 norm (when norm > 0), and returns the norm
// before norm clipping (nil without it).
func clipGrads(grads *ember.Gradients, params []nn.NamedParam, norm, value float64) *ember.Tensor {
	if value > 0 {
		optim.ClipGradValue(grads, params, value)
	}
	if norm > 0 {
		return optim.ClipGradNorm(grads, params, norm, 2)
	}
	return nil
}
