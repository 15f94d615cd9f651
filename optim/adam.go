package optim

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// AdamConfig configures Adam and AdamW. A zero field takes PyTorch's
// default: LR 1e-3, Beta1 0.9, Beta2 0.999, Eps 1e-8, and WeightDecay 0 for
// Adam but 0.01 for AdamW. (So a literal zero cannot be chosen for these
// fields; use Adam for AdamW without decay.) NewAdam and NewAdamW panic
// with an *ember.Error naming the field and its value for a negative, NaN
// or infinite LR, Eps or WeightDecay, or a beta outside [0, 1).
type AdamConfig struct {
	// LR is the learning rate, > 0.
	LR float64
	// Beta1 and Beta2 are the decay rates of the first and second moment
	// estimates, in [0, 1).
	Beta1, Beta2 float64
	// Eps, > 0, is added to the denominator for numerical stability.
	Eps float64
	// WeightDecay, >= 0, is Adam's L2 penalty (added to the gradient) or
	// AdamW's decoupled decay rate.
	WeightDecay float64
	// AllowMissingGrads makes Step skip, leaving them, their moment
	// estimates and their step counts unchanged, the parameters that have
	// no gradient; without it such a parameter makes Step panic (see
	// Optimizer).
	AllowMissingGrads bool
}

// withDefaults returns c with zero fields replaced by the defaults of op
// ("adam" or "adamw", whose default decay is weightDecay), and panics with
// an *ember.Error of op for an invalid field.
func (c AdamConfig) withDefaults(op string, weightDecay float64) AdamConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.LR, 1e-3)
	def(&c.Beta1, 0.9)
	def(&c.Beta2, 0.999)
	def(&c.Eps, 1e-8)
	def(&c.WeightDecay, weightDecay)
	checkHypers(op,
		positive("AdamConfig.LR", c.LR),
		unitInterval("AdamConfig.Beta1", c.Beta1),
		unitInterval("AdamConfig.Beta2", c.Beta2),
		positive("AdamConfig.Eps", c.Eps),
		nonNegative("AdamConfig.WeightDecay", c.WeightDecay),
	)
	return c
}

// adamState is one parameter's moment estimates and step count. m and v
// are nil until the parameter's first update, State or SetState (an entry
// NextScalars made holds only a count).
type adamState struct {
	m, v *ember.Tensor
	t    int
}

// entry returns p's state, adding an empty one (no moments, count 0) when
// it has none.
func (o *adamCore) entry(p *nn.Param) *adamState {
	s, ok := o.state[p]
	if !ok {
		s = &adamState{}
		o.state[p] = s
	}
	return s
}

// adamCore holds what Adam and AdamW share.
type adamCore struct {
	cfg    AdamConfig
	params []nn.NamedParam
	state  map[*nn.Param]*adamState
}

// step runs one update of op ("adam" or "adamw"); decoupled selects
// AdamW's weight decay. The update is ember.AdamStep: one fused kernel
// where the device has one, the composed elementwise ops elsewhere.
func (o *adamCore) step(op string, grads *ember.Gradients, decoupled bool) {
	c := o.cfg
	for _, u := range gather(op, o.params, grads, c.AllowMissingGrads) {
		p, g, theta := u.p, u.g, u.v
		s := o.entry(p)
		if s.m == nil {
			s.m, s.v = ember.ZerosLike(g), ember.ZerosLike(g)
		}
		s.t++
		var next *ember.Tensor
		next, s.m, s.v = ember.AdamStep(theta, g, s.m, s.v, ember.OptimUpdate{
			LR: c.LR, Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps, WeightDecay: c.WeightDecay, Step: s.t, Decoupled: decoupled,
		})
		commit(p, next)
	}
}

// Adam is PyTorch's torch.optim.Adam (amsgrad off) with L2 weight decay
// added to the gradient. For each parameter θ with gradient g, at its t-th
// step (t counts the steps in which θ had a gradient):
//
//	g ← g + λθ
//	m ← β₁m + (1−β₁)g
//	v ← β₂v + (1−β₂)g²
//	θ ← θ − lr/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + ε)
type Adam struct{ adamCore }

// NewAdam makes an Adam optimizer over params (a cell listed twice is
// updated once); zero config fields take PyTorch's defaults (see
// AdamConfig). It panics with an *ember.Error for an invalid config,
// naming the field and its value, or for a nil parameter.
func NewAdam(params []nn.NamedParam, cfg AdamConfig) *Adam {
	return &Adam{adamCore{cfg: cfg.withDefaults("adam", 0), params: checkParams("adam", params), state: map[*nn.Param]*adamState{}}}
}

// Step applies one update to every parameter from its gradient in grads.
// It panics with an *ember.Error, updating nothing, when a parameter has
// no gradient (unless AdamConfig.AllowMissingGrads) or a gradient of
// another shape.
func (o *Adam) Step(grads *ember.Gradients) { o.step("adam", grads, false) }

// LR returns the learning rate.
func (o *Adam) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate; it panics with an *ember.Error unless lr
// is a finite number >= 0.
func (o *Adam) SetLR(lr float64) {
	checkSetLR("adam", lr)
	o.cfg.LR = lr
}

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter, PyTorch's
// torch.optim.AdamW, amsgrad off): before the Adam update, without adding
// anything to the gradient,
//
//	θ ← θ·(1 − lr·λ)
//
// The default decay λ is 0.01.
type AdamW struct{ adamCore }

// NewAdamW makes an AdamW optimizer over params (a cell listed twice is
// updated once); zero config fields take PyTorch's defaults (WeightDecay
// 0.01; see AdamConfig). It panics with an *ember.Error for an invalid
// config, naming the field and its value, or for a nil parameter.
func NewAdamW(params []nn.NamedParam, cfg AdamConfig) *AdamW {
	return &AdamW{adamCore{cfg: cfg.withDefaults("adamw", 0.01), params: checkParams("adamw", params), state: map[*nn.Param]*adamState{}}}
}

// Step applies one update to every parameter from its gradient in grads.
// It panics with an *ember.Error, updating nothing, when a parameter has
// no gradient (unless AdamConfig.AllowMissingGrads) or a gradient of
// another shape.
func (o *AdamW) Step(grads *ember.Gradients) { o.step("adamw", grads, true) }

// LR returns the learning rate.
func (o *AdamW) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate; it panics with an *ember.Error unless lr
// is a finite number >= 0.
func (o *AdamW) SetLR(lr float64) {
	checkSetLR("adamw", lr)
	o.cfg.LR = lr
}
