package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step updates every parameter from its gradient in grads (see the
	// package comment). It panics with an *ember.Error naming the
	// parameters (index, name, shape, dtype, device) when any of them has
	// no gradient in grads, unless the optimizer's config sets
	// AllowMissingGrads, and when a gradient's shape differs from its
	// parameter's; no parameter is updated then.
	Step(grads *ember.Gradients)
	// LR returns the current learning rate.
	LR() float64
	// SetLR sets the learning rate used by the following steps. It panics
	// with an *ember.Error for a negative, NaN or infinite rate; 0 is
	// accepted (a schedule may anneal to 0) and makes steps leave the
	// parameters unchanged.
	SetLR(lr float64)
}

// update is one parameter's part of a step: its cell, its gradient and its
// current value, both on the inner device and of the parameter's dtype.
type update struct {
	p    *nn.Param
	g, v *ember.Tensor
}

// gather returns the updates of one step, in parameter order. A parameter
// without a gradient is left out when allowMissing is set; otherwise
// gather panics with an *ember.Error of op listing every such parameter.
// It also panics when a gradient's shape differs from its parameter's. It
// checks every parameter before returning, so a step that panics here
// changes nothing.
func gather(op string, params []nn.NamedParam, grads *ember.Gradients, allowMissing bool) []update {
	ups := make([]update, 0, len(params))
	var missing []string
	for i, np := range params {
		p := np.Param
		if p.Value == nil {
			panic(&ember.Error{Op: op, Msg: fmt.Sprintf("parameter %d %q has a nil Value", i, np.Name)})
		}
		var g *ember.Tensor
		if grads != nil {
			g = grads.Of(p.Value)
		}
		if g == nil {
			missing = append(missing, describeParam(i, np))
			continue
		}
		v := p.Value.Inner()
		if !slices.Equal(g.Shape(), v.Shape()) {
			panic(&ember.Error{Op: op, Operands: []string{"gradient " + g.String(), describeParam(i, np)},
				Msg: "gradient and parameter shapes differ"})
		}
		ups = append(ups, update{p: p, g: g.Cast(v.DType()), v: v})
	}
	if len(missing) > 0 && !allowMissing {
		why := "they did not contribute to the loss, or are not tracked leaves on an autodiff device"
		if grads == nil {
			why = "Step was given nil gradients"
		}
		panic(&ember.Error{Op: op, Operands: missing, Msg: fmt.Sprintf(
			"%d of %d parameters have no gradient (%s); nothing was updated; set AllowMissingGrads in the config to skip such parameters",
			len(missing), len(params), why)})
	}
	return ups
}

// describeParam formats a parameter as `parameter 3 "1.bias" [10] f32 on cpu+autodiff`.
func describeParam(i int, np nn.NamedParam) string {
	v := np.Param.Value
	return fmt.Sprintf("parameter %d %q %v %v on %v", i, np.Name, v.Shape(), v.DType(), v.Device())
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

// checkParams panics with an *ember.Error of op for nil cells and returns
// a copy of params in which a cell listed more than once (a module shared
// by two parts of a model, weight tying) keeps only its first entry, so
// that it is updated once per step with its whole gradient.
func checkParams(op string, params []nn.NamedParam) []nn.NamedParam {
	out := make([]nn.NamedParam, 0, len(params))
	seen := make(map[*nn.Param]bool, len(params))
	for i, p := range params {
		if p.Param == nil || p.Param.Value == nil {
			panic(&ember.Error{Op: op, Msg: fmt.Sprintf("parameter %d %q is nil", i, p.Name)})
		}
		if !seen[p.Param] {
			seen[p.Param] = true
			out = append(out, p)
		}
	}
	return out
}

// hyper is a config field under validation.
type hyper struct {
	field string  // e.g. "SGDConfig.Momentum"
	value float64 // its value
	ok    bool    // whether value is valid
	want  string  // what is valid, e.g. "a finite number in [0, 1)"
}

// checkHypers panics with an *ember.Error of op naming the first invalid
// field (or argument) and its value.
func checkHypers(op string, hs ...hyper) {
	for _, h := range hs {
		if !h.ok {
			panic(&ember.Error{Op: op, Msg: fmt.Sprintf("invalid %s = %v, want %s", h.field, h.value, h.want)})
		}
	}
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// positive is a finite x > 0.
func positive(field string, x float64) hyper {
	return hyper{field, x, finite(x) && x > 0, "a finite number > 0"}
}

// nonNegative is a finite x >= 0.
func nonNegative(field string, x float64) hyper {
	return hyper{field, x, finite(x) && x >= 0, "a finite number >= 0"}
}

// unitInterval is x in [0, 1).
func unitInterval(field string, x float64) hyper {
	return hyper{field, x, x >= 0 && x < 1, "a number in [0, 1)"}
}

// checkSetLR panics with an *ember.Error of op unless lr is a finite
// number >= 0.
func checkSetLR(op string, lr float64) {
	if !finite(lr) || lr < 0 {
		panic(&ember.Error{Op: op, Msg: fmt.Sprintf("SetLR(%v): want a finite learning rate >= 0", lr)})
	}
}
