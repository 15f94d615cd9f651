package optim

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"slices"
)

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step updates every parameter that has a gradient in grads (see the
	// package comment). It panics with an *ember.Error when a gradient's
	// shape differs from its parameter's.
	Step(grads *ember.Gradients)
	// LR returns the current learning rate.
	LR() float64
	// SetLR sets the learning rate used by the following steps.
	SetLR(lr float64)
}

// gradOf returns p's gradient and value on the inner device, or nils when
// p has no gradient.
func gradOf(p *nn.Param, grads *ember.Gradients) (g, v *ember.Tensor) {
	if p == nil || p.Value == nil || grads == nil {
		return nil, nil
	}
	g = grads.Of(p.Value)
	if g == nil {
		return nil, nil
	}
	v = p.Value.Inner()
	if !slices.Equal(g.Shape(), v.Shape()) {
		panic(&ember.Error{Op: "optimizer step", Operands: []string{
			"gradient " + g.String(), "parameter " + v.String()}, Msg: "gradient and parameter shapes differ"})
	}
	return g.Cast(v.DType()), v
}

// commit stores the updated value (computed on the inner device) in p as
// a fresh leaf on p's device.
func commit(p *nn.Param, updated *ember.Tensor) {
	dev := p.Value.Device()
	updated = updated.ToDevice(dev)
	if dev.IsAutodiff() {
		updated = updated.RequireGrad()
	}
	p.Value = updated
}

// checkParams panics with an *ember.Error for nil cells; it returns a copy.
func checkParams(op string, params []nn.NamedParam) []nn.NamedParam {
	for _, p := range params {
		if p.Param == nil || p.Param.Value == nil {
			panic(&ember.Error{Op: op, Msg: "parameter " + p.Name + " is nil"})
		}
	}
	return append([]nn.NamedParam(nil), params...)
}
