package optim

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// DefaultSGDLR is SGD's learning rate when SGDConfig.LR is zero: 0.01, the
// default of Keras's SGD (learning_rate=0.01, momentum 0) and the rate of
// torch.optim's own usage example, optim.SGD(model.parameters(), lr=0.01,
// momentum=0.9), in the "How to use an optimizer" section of its
// documentation. (Recent releases of PyTorch's SGD class default to 1e-3,
// which without momentum is too slow for the MNIST networks of package
// train.)
const DefaultSGDLR = 0.01

// SGDConfig configures SGD. The zero value is plain SGD with learning rate
// DefaultSGDLR: a zero LR means DefaultSGDLR, and zero Momentum and
// WeightDecay mean none (PyTorch's defaults). NewSGD panics with an
// *ember.Error naming the field and its value for a negative, NaN or
// infinite LR or WeightDecay, a Momentum outside [0, 1), or Nesterov
// without momentum.
type SGDConfig struct {
	// LR is the learning rate, > 0; 0 means DefaultSGDLR.
	LR float64
	// Momentum is the momentum factor μ in [0, 1) (0 disables momentum;
	// from 1 on the momentum buffer grows without bound).
	Momentum float64
	// WeightDecay is the L2 penalty λ >= 0 added to the gradient.
	WeightDecay float64
	// Nesterov enables Nesterov momentum (needs Momentum > 0).
	Nesterov bool
	// AllowMissingGrads makes Step skip, leaving them and their momentum
	// buffers unchanged, the parameters that have no gradient; without it
	// such a parameter makes Step panic (see Optimizer).
	AllowMissingGrads bool
}

// withDefaults returns c with its zero LR replaced by DefaultSGDLR, and
// panics with an *ember.Error for an invalid field.
func (c SGDConfig) withDefaults() SGDConfig {
	if c.LR == 0 {
		c.LR = DefaultSGDLR
	}
	checkHypers("sgd",
		positive("SGDConfig.LR", c.LR),
		unitInterval("SGDConfig.Momentum", c.Momentum),
		nonNegative("SGDConfig.WeightDecay", c.WeightDecay),
		hyper{"SGDConfig.Momentum", c.Momentum, !c.Nesterov || c.Momentum > 0, "a number in (0, 1) with Nesterov"},
	)
	return c
}

// SGD is stochastic gradient descent with optional momentum, Nesterov
// momentum and L2 weight decay, PyTorch's torch.optim.SGD with dampening 0.
// For each parameter θ with gradient g, at step t:
//
//	g ← g + λθ
//	b ← g                 (t = 1)
//	b ← μb + g            (t > 1)
//	g ← g + μb (Nesterov) or g ← b (otherwise)   (when μ ≠ 0)
//	θ ← θ − lr·g
type SGD struct {
	cfg    SGDConfig
	params []nn.NamedParam
	buf    map[*nn.Param]*ember.Tensor
}

// NewSGD makes an SGD optimizer over params (a cell listed twice is
// updated once). A zero LR takes DefaultSGDLR (see SGDConfig). It panics
// with an *ember.Error for an invalid config, naming the field and its
// value, or for a nil parameter.
func NewSGD(params []nn.NamedParam, cfg SGDConfig) *SGD {
	return &SGD{cfg: cfg.withDefaults(), params: checkParams("sgd", params), buf: map[*nn.Param]*ember.Tensor{}}
}

// LR returns the learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate; it panics with an *ember.Error unless lr
// is a finite number >= 0.
func (o *SGD) SetLR(lr float64) {
	checkSetLR("sgd", lr)
	o.cfg.LR = lr
}

// Step applies one update to every parameter from its gradient in grads.
// It panics with an *ember.Error, updating nothing, when a parameter has
// no gradient (unless SGDConfig.AllowMissingGrads) or a gradient of
// another shape.
func (o *SGD) Step(grads *ember.Gradients) {
	c := o.cfg
	for _, u := range gather("sgd", o.params, grads, c.AllowMissingGrads) {
		next, b := ember.SGDStep(u.v, u.g, o.buf[u.p], ember.OptimUpdate{
			LR: c.LR, Momentum: c.Momentum, WeightDecay: c.WeightDecay, Nesterov: c.Nesterov,
		})
		if b != nil {
			o.buf[u.p] = b
		}
		commit(u.p, next)
	}
}
