package ember

import "github.com/emberml/ember/ir"

// OptimUpdate holds the hyperparameters of one fused optimizer update
// (ir.OptimUpdate): LR, Beta1, Beta2, Eps, WeightDecay, Step and Decoupled
// for AdamStep; LR, Momentum, WeightDecay and Nesterov for SGDStep.
type OptimUpdate = ir.OptimUpdate

// AdamStep runs one Adam update (AdamW's when u.Decoupled) of param with
// gradient grad and moment estimates m and v — four float tensors of one
// shape and dtype on one device — and returns the new param, m and v
// (PyTorch's torch.optim.Adam and AdamW with amsgrad off; u.Step is the
// parameter's step count t >= 1 including this update):
//
//	θ ← θ·(1 − lr·λ)                 (Decoupled)
//	g ← g + θ·λ                      (not Decoupled, λ ≠ 0)
//	m ← m·β₁ + g·(1 − β₁)
//	v ← v·β₂ + (g·g)·(1 − β₂)
//	θ ← θ − (m / (√v / √(1 − β₂ᵗ) + ε))·(lr / (1 − β₁ᵗ))
//
// each step an elementwise op rounding to the dtype. It is one kernel where
// the device has one (CUDA) and these ops elsewhere, with the same values.
// The results are not tracked by autodiff. It panics with an *Error when
// the tensors differ in shape, dtype or device, or u.Step < 1.
func AdamStep(param, grad, m, v *Tensor, u OptimUpdate) (newParam, newM, newV *Tensor) {
	names := []string{"param", "grad", "m", "v"}
	dev := commonDevice("adam_step", names, param, grad, m, v)
	out := dev.runAll(ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: u},
		Xs: []ir.Tensor{param.on(dev), grad.on(dev), m.on(dev), v.on(dev)}}, param, grad, m, v)
	return wrap(dev, out[0]), wrap(dev, out[1]), wrap(dev, out[2])
}

// SGDStep runs one SGD update of param with gradient grad (PyTorch's
// torch.optim.SGD with dampening 0) and returns the new param and momentum
// buffer; buf is the buffer of the previous step, nil on the first (the
// returned buffer is nil when u.Momentum is 0):
//
//	g ← g + θ·λ              (λ ≠ 0)
//	b ← g                    (μ ≠ 0, first step)
//	b ← b·μ + g              (μ ≠ 0, later steps)
//	g ← g + b·μ (Nesterov) or g ← b      (μ ≠ 0)
//	θ ← θ − g·lr
//
// The results are not tracked by autodiff. It panics with an *Error when
// the tensors differ in shape, dtype or device, or for Nesterov without
// momentum.
func SGDStep(param, grad, buf *Tensor, u OptimUpdate) (newParam, newBuf *Tensor) {
	xs := []*Tensor{param, grad}
	if buf != nil {
		xs = append(xs, buf)
	}
	dev := commonDevice("sgd_step", []string{"param", "grad", "momentum_buffer"}[:len(xs)], xs...)
	op := ir.Op{Kind: ir.KindSGDStep, Attrs: &ir.Attrs{Optim: u}, In: [3]ir.Tensor{param.on(dev), grad.on(dev)}}
	if buf != nil {
		op.In[2] = buf.on(dev)
	}
	out := dev.runAll(op, xs...)
	newParam = wrap(dev, out[0])
	if out[1] != nil {
		newBuf = wrap(dev, out[1])
	}
	return newParam, newBuf
}
