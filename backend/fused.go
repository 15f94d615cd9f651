package backend

// AdamUpdate holds the hyperparameters of one Adam or AdamW update (PyTorch's
// torch.optim.Adam and AdamW, amsgrad off).
type AdamUpdate struct {
	// LR is the learning rate.
	LR float64
	// Beta1 and Beta2 are the moment decay rates, in [0, 1).
	Beta1, Beta2 float64
	// Eps is added to the denominator.
	Eps float64
	// WeightDecay is the L2 penalty (added to the gradient) or, when
	// Decoupled, AdamW's decoupled decay rate; 0 disables it.
	WeightDecay float64
	// Step is the parameter's step count t >= 1, this update included
	// (for the bias corrections 1 − β₁ᵗ and 1 − β₂ᵗ).
	Step int
	// Decoupled selects AdamW's decay θ ← θ·(1 − lr·λ).
	Decoupled bool
}

// AdamStepper is implemented by backends that run a whole Adam update of
// one parameter in one kernel. Optimizers use it, when the backend has it,
// instead of composing the update from a dozen elementwise ops.
type AdamStepper interface {
	// AdamStep returns the updated parameter and moment estimates for
	// param, its gradient grad and the moments m and v (four tensors of one
	// shape and dtype), computing exactly what this sequence of elementwise
	// ops computes, each op rounding to the dtype and each scalar first
	// converted to the dtype:
	//
	//	θ ← θ·(1 − lr·λ)                 (Decoupled)
	//	g ← g + θ·λ                      (not Decoupled, λ ≠ 0)
	//	m ← m·β₁ + g·(1 − β₁)
	//	v ← v·β₂ + (g·g)·(1 − β₂)
	//	θ ← θ − (m / (√v / √(1 − β₂ᵗ) + ε))·(lr / (1 − β₁ᵗ))
	//
	// where the scalars 1 − lr·λ, 1 − β₁, 1 − β₂, √(1 − β₂ᵗ) and
	// lr / (1 − β₁ᵗ) are computed in float64. It reports false, and
	// returns nils, for a dtype or layout it does not handle; the caller
	// then composes the update. Arguments are validated by the caller.
	AdamStep(param, grad, m, v Tensor, u AdamUpdate) (newParam, newM, newV Tensor, ok bool)
}
