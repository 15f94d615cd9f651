// Package optim provides gradient-descent optimizers (SGD with momentum and
// Nesterov, Adam, AdamW) and learning-rate schedules for the parameters of
// package nn, following PyTorch's torch.optim algorithms.
//
// A training step reads as PyTorch's, without zero_grad, since Backward
// returns fresh gradients each time:
//
//	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 1e-3})
//	sched := optim.CosineLR(1e-3, 1e-5, steps)
//	for step := range steps {
//		opt.SetLR(sched.LR(step))
//		loss := nn.MSE(model.Forward(x), y)
//		opt.Step(loss.Backward())
//	}
//
// ExampleSGD and ExampleAdam are complete programs that fit a line this
// way with a schedule; ExampleCapturable captures a step and replays it.
//
// An optimizer holds the model's *nn.Param cells. Step reads each
// parameter's gradient from the result of Tensor.Backward, computes the
// update on the parameter's inner (non-autodiff) device with untracked
// tensors, and stores the result as a fresh autodiff leaf in Param.Value:
// the old graph is dropped, so memory does not grow across steps. Optimizer
// state (momentum buffers, moment estimates) lives on the inner device too.
//
// Every parameter given to an optimizer must receive a gradient in every
// step: a parameter that did not contribute to the loss, or is not a
// tracked leaf on an autodiff device, makes Step panic with an
// *ember.Error naming it (index, name, shape, dtype, device) before any
// parameter is updated. Leave frozen parameters out of the list given to
// the optimizer, or set AllowMissingGrads in its config to skip, with
// their state unchanged, the parameters without a gradient in a step.
//
// Configs are validated when the optimizer is made: a zero field takes the
// documented default, and a negative, NaN or infinite value, or one out of
// its range, panics with an *ember.Error naming the optimizer, the field
// and the value. SetLR accepts any finite rate >= 0.
//
// Schedules map a step number to a learning rate; a training loop applies
// one with opt.SetLR(schedule.LR(step)) before each step. StepLR,
// ExponentialLR, CosineLR, LinearLR and FixedLR are the common decays;
// WarmupLR puts a linear warm-up in front of any of them. A schedule is a
// pure function of the step, so the step number is its whole state.
//
// ClipGradNorm and ClipGradValue rewrite the gradients between Backward
// and Step (through ember.Gradients.Set), as PyTorch's
// torch.nn.utils.clip_grad_norm_ and clip_grad_value_ do; GradNorm
// measures them without clipping. With a GradScaler, clip after
// GradScaler.Unscale and before GradScaler.Step, as PyTorch does.
//
// Adam, AdamW and SGD are Stateful: StateDict returns their whole state
// (learning rate, configuration, per-parameter step counts, moments and
// momentum buffers) as plain data keyed by parameter name, and
// LoadStateDict puts it back, refusing with ErrStateMismatch a state of
// another optimizer or model. A GradScaler's StateDict and LoadStateDict
// do the same for its scale and count of finite steps. Package train
// stores both in its checkpoints.
//
// Adam, AdamW and SGD are Capturable: a training step that ends in their
// StepWith can be captured once on an autodiff capture device
// (Device.CaptureScope on ember.Capture().Autodiff()) and replayed for
// every batch (CapturedGraph.Run), the step's numbers (NextScalars) and the
// optimizer state (State, SetState) going in and out of the graph as
// tensors. On devices without a fused optimizer kernel StepWith's results
// equal Step's bit for bit.
//
// Mixed precision: with the model's parameters in F32 and its input on an
// autocast device (ember.Device.Autocast), the forward and backward passes
// run in BF16 or F16 while every optimizer here updates the F32
// parameters, the master weights of Micikevicius et al.'s "Mixed
// Precision Training" (ICLR 2018), as PyTorch's AMP and NVIDIA Apex's O2
// level keep them. F16 adds dynamic loss scaling with a GradScaler
// (PyTorch's torch.amp.GradScaler): Scale the loss before Backward, Step
// through the scaler (it unscales the gradients and skips steps whose
// gradients overflowed), then Update its scale; ExampleGradScaler is a
// complete program.
//
// Optimizers and GradScalers are not safe for concurrent use.
package optim
