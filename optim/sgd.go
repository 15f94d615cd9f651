package optim

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// SGDConfig configures SGD. Zero values mean no momentum, no weight decay
// and plain (non-Nesterov) momentum; LR has no default and must be set.
type SGDConfig struct {
	// LR is the learning rate.
	LR float64
	// Momentum is the momentum factor μ (0 disables momentum).
	Momentum float64
	// WeightDecay is the L2 penalty λ added to the gradient.
	WeightDecay float64
	// Nesterov enables Nesterov momentum (needs Momentum > 0).
	Nesterov bool
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

// NewSGD makes an SGD optimizer over params. It panics with an
// *ember.Error for a negative LR, momentum or weight decay, Nesterov
// without momentum, or a nil parameter.
func NewSGD(params []nn.NamedParam, cfg SGDConfig) *SGD {
	if cfg.LR < 0 || cfg.Momentum < 0 || cfg.WeightDecay < 0 || (cfg.Nesterov && cfg.Momentum == 0) {
		panic(&ember.Error{Op: "sgd", Msg: "invalid config: LR, Momentum and WeightDecay must be >= 0 and Nesterov needs Momentum > 0"})
	}
	return &SGD{cfg: cfg, params: checkParams("sgd", params), buf: map[*nn.Param]*ember.Tensor{}}
}

// LR returns the learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// SetLR sets the learning rate.
func (o *SGD) SetLR(lr float64) { o.cfg.LR = lr }

// Step applies one update to every parameter with a gradient in grads.
func (o *SGD) Step(grads *ember.Gradients) {
	c := o.cfg
	for _, np := range o.params {
		p := np.Param
		g, v := gradOf(p, grads)
		if g == nil {
			continue
		}
		next, b := ember.SGDStep(v, g, o.buf[p], ember.OptimUpdate{
			LR: c.LR, Momentum: c.Momentum, WeightDecay: c.WeightDecay, Nesterov: c.Nesterov,
		})
		if b != nil {
			o.buf[p] = b
		}
		commit(p, next)
	}
}
