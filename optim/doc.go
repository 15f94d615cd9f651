// Package optim provides gradient-descent optimizers (SGD with momentum and
// Nesterov, Adam, AdamW) and learning-rate schedules for the parameters of
// package nn, following PyTorch's torch.optim algorithms.
//
// An optimizer holds the model's *nn.Param cells. Step reads each
// parameter's gradient from the result of Tensor.Backward, computes the
// update on the parameter's inner (non-autodiff) device with untracked
// tensors, and stores the result as a fresh autodiff leaf in Param.Value:
// the old graph is dropped, so memory does not grow across steps. Optimizer
// state (momentum buffers, moment estimates) lives on the inner device too.
// Parameters without a gradient in a step are skipped and their state is
// left unchanged.
//
// Schedules map a step number to a learning rate; a training loop applies
// one with opt.SetLR(schedule.LR(step)) before each step.
//
// Optimizers are not safe for concurrent use.
package optim
