package optim

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Defaults of GradScalerConfig, PyTorch's torch.amp.GradScaler defaults.
const (
	// DefaultInitScale is the initial loss scale, 2^16.
	DefaultInitScale = 65536.0
	// DefaultGrowthFactor multiplies the scale after GrowthInterval
	// consecutive steps with finite gradients.
	DefaultGrowthFactor = 2.0
	// DefaultBackoffFactor multiplies the scale after a step whose
	// gradients held an infinity or NaN.
	DefaultBackoffFactor = 0.5
	// DefaultGrowthInterval is the number of consecutive steps with
	// finite gradients after which the scale grows.
	DefaultGrowthInterval = 2000
)

// GradScalerConfig configures a GradScaler. A zero field takes PyTorch's
// default (DefaultInitScale, DefaultGrowthFactor, DefaultBackoffFactor,
// DefaultGrowthInterval). NewGradScaler panics with an *ember.Error naming
// the field and its value when InitScale is not a finite number > 0,
// GrowthFactor not a finite number > 1, BackoffFactor not in (0, 1), or
// GrowthInterval negative.
type GradScalerConfig struct {
	// InitScale is the loss scale of the first step.
	InitScale float64
	// GrowthFactor, > 1, multiplies the scale after GrowthInterval
	// consecutive steps with finite gradients.
	GrowthFactor float64
	// BackoffFactor, in (0, 1), multiplies the scale after a step whose
	// gradients were not all finite.
	BackoffFactor float64
	// GrowthInterval is that number of consecutive finite steps.
	GrowthInterval int
}

// withDefaults returns c with zero fields replaced by the defaults and
// panics with an *ember.Error for an invalid field.
func (c GradScalerConfig) withDefaults() GradScalerConfig {
	if c.InitScale == 0 {
		c.InitScale = DefaultInitScale
	}
	if c.GrowthFactor == 0 {
		c.GrowthFactor = DefaultGrowthFactor
	}
	if c.BackoffFactor == 0 {
		c.BackoffFactor = DefaultBackoffFactor
	}
	if c.GrowthInterval == 0 {
		c.GrowthInterval = DefaultGrowthInterval
	}
	const op = "grad_scaler"
	checkHypers(op,
		hyper{"GradScalerConfig.InitScale", c.InitScale, finite(c.InitScale) && c.InitScale > 0 && c.InitScale <= math.MaxFloat32, "a finite float32 > 0"},
		hyper{"GradScalerConfig.GrowthFactor", c.GrowthFactor, finite(c.GrowthFactor) && c.GrowthFactor > 1, "a finite number > 1"},
		hyper{"GradScalerConfig.BackoffFactor", c.BackoffFactor, c.BackoffFactor > 0 && c.BackoffFactor < 1, "a number in (0, 1)"},
		hyper{"GradScalerConfig.GrowthInterval", float64(c.GrowthInterval), c.GrowthInterval > 0, "a step count >= 1"},
	)
	return c
}

// GradScaler is dynamic loss scaling for F16 mixed-precision training
// (PyTorch's torch.amp.GradScaler, after Micikevicius et al., "Mixed
// Precision Training", ICLR 2018). Gradients computed in F16 underflow to
// zero below 2^-24; multiplying the loss by a large scale S before
// Backward shifts them into F16's range, and dividing the F32 parameter
// gradients by S before the optimizer step undoes it. When S is too large
// the scaled gradients overflow to ±Inf (or NaN): the scaler then skips
// the optimizer step, leaving the parameters and the optimizer's state
// unchanged, and halves S. After GrowthInterval consecutive steps with
// finite gradients it doubles S, so S settles just below the largest
// scale that does not overflow. A training step reads as PyTorch's:
//
//	scaler := optim.NewGradScaler(model.NamedParameters(), optim.GradScalerConfig{})
//	for ... {
//		loss := nn.CrossEntropy(model.Forward(x.ToDevice(amp)), y)
//		grads := scaler.Scale(loss).Backward()
//		scaler.Step(opt, grads) // unscales, then steps unless a gradient is Inf or NaN
//		scaler.Update()         // adjusts the scale
//	}
//
// with amp = dev.Autodiff().Autocast(ember.F16) and the model's
// parameters in F32 on dev.Autodiff(). To clip the gradients, call
// Unscale(grads) first, then ClipGradNorm, then Step (which does not
// unscale them twice), as in PyTorch. The rules are PyTorch's
// (_amp_update_scale_): after a step with a non-finite gradient the scale
// is multiplied by BackoffFactor and the count of finite steps restarts;
// after a finite step the count grows by one, and when it reaches
// GrowthInterval the scale is multiplied by GrowthFactor (unless the
// result would overflow float32) and the count restarts. The scale is a
// float32 value, as PyTorch's.
//
// BF16 has F32's exponent range and needs no loss scaling; a GradScaler
// works with it all the same. StateDict and LoadStateDict save and
// restore its progress for a checkpoint. A GradScaler is not safe for
// concurrent use.
type GradScaler struct {
	cfg    GradScalerConfig
	params []nn.NamedParam
	// scale is the current loss scale, a float32 value.
	scale float64
	// growthTracker counts the consecutive finite steps since the scale
	// last changed (PyTorch's _growth_tracker).
	growthTracker int
	// checked reports that Unscale ran since the last Update; foundInf
	// that a gradient it saw was not finite; unscaled is the Gradients it
	// unscaled last (so that Step does not unscale them twice).
	checked  bool
	foundInf bool
	unscaled *ember.Gradients
}

// NewGradScaler makes a GradScaler for the gradients of params (those the
// optimizer updates). It panics with an *ember.Error for an invalid
// config (see GradScalerConfig), a nil parameter, or an F16 parameter:
// unscaled F16 gradients lose what the scaling kept, so keep F32 master
// weights and run the model on an autocast device (PyTorch refuses F16
// gradients too).
func NewGradScaler(params []nn.NamedParam, cfg GradScalerConfig) *GradScaler {
	cfg = cfg.withDefaults()
	params = checkParams("grad_scaler", params)
	for i, np := range params {
		if np.Param.Value.DType() == ember.F16 {
			panic(&ember.Error{Op: "grad_scaler", Operands: []string{describeParam(i, np)},
				Msg: "F16 parameters cannot be unscaled safely; keep F32 master weights and run the model on an autocast device (Device.Autocast)"})
		}
	}
	return &GradScaler{cfg: cfg, params: params, scale: float64(float32(cfg.InitScale))}
}

// LossScale returns the current scale S (PyTorch's get_scale).
func (s *GradScaler) LossScale() float64 { return s.scale }

// Scale returns loss·S, the loss to call Backward on (an F16 or BF16 loss
// is first cast to F32, so that the product does not overflow 16 bits).
// It panics with an *ember.Error for a nil or non-float loss.
func (s *GradScaler) Scale(loss *ember.Tensor) *ember.Tensor {
	if loss == nil {
		panic(&ember.Error{Op: "grad_scaler_scale", Operands: []string{"loss <nil>"}, Msg: "needs the loss"})
	}
	if !loss.DType().IsFloat() {
		panic(&ember.Error{Op: "grad_scaler_scale", Operands: []string{"loss " + loss.String()}, Msg: "needs a float loss"})
	}
	if dt := loss.DType(); dt == ember.F16 || dt == ember.BF16 {
		loss = loss.Cast(ember.F32)
	}
	return loss.MulScalar(s.scale)
}

// Unscale divides the gradients of the scaler's parameters in grads by S
// in place (Gradients.Set; PyTorch's unscale_), and reports whether they
// are all finite. Call it before reading or clipping the gradients; Step
// calls it when it was not called for grads since the last Update.
// Parameters without a gradient in grads are skipped. The finiteness
// test is computed on the device and read back as one number (a wait for
// the device, where PyTorch keeps the flag on the device). The result is
// recorded for Step and Update: one non-finite gradient in any Unscale
// since the last Update makes Step skip and Update back off. It panics
// with an *ember.Error when grads is nil or was already unscaled since
// the last Update.
func (s *GradScaler) Unscale(grads *ember.Gradients) bool {
	if grads == nil {
		panic(&ember.Error{Op: "grad_scaler_unscale", Msg: "nil Gradients (use the result of Backward of Scale(loss))"})
	}
	if grads == s.unscaled {
		panic(&ember.Error{Op: "grad_scaler_unscale", Msg: "these gradients were already unscaled since the last Update"})
	}
	inv := float64(float32(1 / s.scale)) // PyTorch: the float32 reciprocal
	var checks []*ember.Tensor
	for _, np := range s.params {
		p := np.Param.Value
		g := grads.Of(p)
		if g == nil {
			continue
		}
		u := g.MulScalar(inv)
		grads.Set(p, u)
		// Σ u·0 is NaN when an element of u is ±Inf or NaN and 0
		// otherwise: one host read decides for every parameter.
		checks = append(checks, u.MulScalar(0).Sum().Cast(ember.F32).Reshape(1))
	}
	ok := true
	if len(checks) > 0 {
		ok = !math.IsNaN(ember.Cat(checks, 0).Sum().Item())
	}
	s.checked = true
	s.foundInf = s.foundInf || !ok
	s.unscaled = grads
	return ok
}

// Step unscales grads (unless Unscale already did since the last Update)
// and runs opt.Step(grads) when every gradient was finite; otherwise it
// skips the step, leaving the parameters and opt's state unchanged. It
// reports whether opt stepped. Call Update after the step (after the
// steps of every optimizer, with several). Panics as Unscale and
// opt.Step.
func (s *GradScaler) Step(opt Optimizer, grads *ember.Gradients) bool {
	if opt == nil {
		panic(&ember.Error{Op: "grad_scaler_step", Msg: "nil optimizer"})
	}
	if grads != s.unscaled {
		s.Unscale(grads)
	}
	if s.foundInf {
		return false
	}
	opt.Step(grads)
	return true
}

// Update adjusts the scale for the next step from what Unscale found
// since the last Update (see GradScaler for the rules). It panics with an
// *ember.Error when no Step or Unscale ran since the last Update, as
// PyTorch's update asserts.
func (s *GradScaler) Update() {
	if !s.checked {
		panic(&ember.Error{Op: "grad_scaler_update", Msg: "no inf checks were recorded since the last Update: call Step (or Unscale) first"})
	}
	if s.foundInf {
		s.scale = float64(float32(s.scale * s.cfg.BackoffFactor))
		s.growthTracker = 0
	} else {
		s.growthTracker++
		if s.growthTracker == s.cfg.GrowthInterval {
			if grown := float64(float32(s.scale * s.cfg.GrowthFactor)); !math.IsInf(grown, 0) {
				s.scale = grown
			}
			s.growthTracker = 0
		}
	}
	s.checked, s.foundInf, s.unscaled = false, false, nil
}

// Config returns the scaler's configuration, its zero fields replaced by
// the defaults.
func (s *GradScaler) Config() GradScalerConfig { return s.cfg }

// GradScalerState is a GradScaler's progress as plain data, what a
// checkpoint stores so that training continues bit for bit after
// LoadStateDict (the fields of PyTorch's GradScaler.state_dict that
// change; the configuration is Config's).
type GradScalerState struct {
	// Scale is the current loss scale.
	Scale float64 `json:"scale"`
	// GrowthTracker is the number of consecutive finite steps since the
	// scale last changed.
	GrowthTracker int `json:"growth_tracker"`
}

// StateDict returns the scaler's progress (PyTorch's
// GradScaler.state_dict).
func (s *GradScaler) StateDict() GradScalerState {
	return GradScalerState{Scale: s.scale, GrowthTracker: s.growthTracker}
}

// LoadStateDict restores progress saved by StateDict (PyTorch's
// GradScaler.load_state_dict). It returns an error, leaving the scaler
// unchanged, when Scale is not a finite float32 > 0, or when
// GrowthTracker is outside [0, GrowthInterval) (a state of a scaler with
// a longer growth interval: the error wraps ErrStateMismatch).
func (s *GradScaler) LoadStateDict(st GradScalerState) error {
	if !(finite(st.Scale) && st.Scale > 0 && st.Scale <= math.MaxFloat32) {
		return fmt.Errorf("optim: GradScaler.LoadStateDict: scale %v, want a finite float32 > 0", st.Scale)
	}
	if st.GrowthTracker < 0 || st.GrowthTracker >= s.cfg.GrowthInterval {
		return fmt.Errorf("optim: GradScaler.LoadStateDict: %w: growth tracker %d, want 0..%d (GrowthInterval %d)",
			ErrStateMismatch, st.GrowthTracker, s.cfg.GrowthInterval-1, s.cfg.GrowthInterval)
	}
	s.scale, s.growthTracker = float64(float32(st.Scale)), st.GrowthTracker
	return nil
}
