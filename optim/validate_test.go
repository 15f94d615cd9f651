package optim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// maker builds one of the package's optimizers with a learning rate of
// 0.1 and, when allow is set, AllowMissingGrads.
type maker struct {
	op string
	mk func(ps []nn.NamedParam, allow bool) Optimizer
}

var makers = []maker{
	{"sgd", func(ps []nn.NamedParam, allow bool) Optimizer {
		return NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, AllowMissingGrads: allow})
	}},
	{"adam", func(ps []nn.NamedParam, allow bool) Optimizer {
		return NewAdam(ps, AdamConfig{LR: 0.1, AllowMissingGrads: allow})
	}},
	{"adamw", func(ps []nn.NamedParam, allow bool) Optimizer {
		return NewAdamW(ps, AdamConfig{LR: 0.1, AllowMissingGrads: allow})
	}},
}

// emberError runs f and returns the *ember.Error it panics with, failing
// the test when it does not panic or panics with something else, or when
// the error's op is not op or its text lacks one of want.
func emberError(t *testing.T, what, op string, f func(), want ...string) {
	t.Helper()
	err := ember.Try(f)
	var e *ember.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want a panic with an *ember.Error", what, err)
		return
	}
	if e.Op != op {
		t.Errorf("%s: error op %q, want %q (%v)", what, e.Op, op, e)
	}
	for _, w := range want {
		if !strings.Contains(e.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", what, e.Error(), w)
		}
	}
}

// linear is Σ θ·w, whose gradient with respect to θ is w.
func linear(theta *ember.Tensor, w []float64) *ember.Tensor {
	return theta.Mul(f64(w, theta.Device().Inner())).Sum()
}

func sameValues(t *testing.T, what string, got *ember.Tensor, want []float64, tol float64) {
	t.Helper()
	g := got.Float64s()
	for i := range want {
		if !(math.Abs(g[i]-want[i]) <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s: %v, want %v", what, g, want)
		}
	}
}

// TestMissingGradients checks that a parameter without a gradient makes
// Step panic, naming it and updating nothing, and that with
// AllowMissingGrads it is skipped with its state kept.
func TestMissingGradients(t *testing.T) {
	t.Run("reported", testMissingGradientReported)
	t.Run("allowed", testAllowMissingGradsKeepsState)
}

func testMissingGradientReported(t *testing.T) {
	dev := ember.Flex().Autodiff()
	for _, m := range makers {
		used := &nn.Param{Value: f64([]float64{1, 2, 3}, dev).RequireGrad()}
		idle := &nn.Param{Value: ember.Zeros([]int{2, 2}, dev).RequireGrad()}
		opt := m.mk([]nn.NamedParam{{Name: "fc.weight", Param: used}, {Name: "head.bias", Param: idle}}, false)
		before := used.Value
		grads := linear(used.Value, []float64{0.5, -1, 2}).Backward()
		emberError(t, m.op+" missing gradient", m.op, func() { opt.Step(grads) },
			`1 of 2 parameters have no gradient`, `parameter 1 "head.bias" [2 2] f32`, "AllowMissingGrads")
		// Nothing was updated, although the failing parameter comes second.
		if used.Value != before {
			t.Errorf("%s: a step that reported a missing gradient updated another parameter", m.op)
		}
		sameValues(t, m.op+" untouched parameter", used.Value, []float64{1, 2, 3}, 0)

		emberError(t, m.op+" nil gradients", m.op, func() { opt.Step(nil) },
			"2 of 2 parameters have no gradient", "nil gradients", `parameter 0 "fc.weight" [3] f64`)

		// Parameters that are not tracked leaves never get a gradient.
		flat := &nn.Param{Value: f64([]float64{1, 2}, ember.Flex())}
		plain := m.mk([]nn.NamedParam{{Name: "w", Param: flat}}, false)
		other := linear(f64([]float64{1, 2}, dev).RequireGrad(), []float64{1, 1}).Backward()
		emberError(t, m.op+" untracked parameter", m.op, func() { plain.Step(other) },
			`parameter 0 "w" [2] f64 on flex`)
	}

	// A cell listed twice (a shared module) is updated once, with its
	// whole gradient, and is not reported as missing.
	shared := &nn.Param{Value: f64([]float64{1, -1}, dev).RequireGrad()}
	opt := NewSGD([]nn.NamedParam{{Name: "0.weight", Param: shared}, {Name: "2.weight", Param: shared}}, SGDConfig{LR: 0.5})
	x := shared.Value
	opt.Step(linear(x, []float64{1, 2}).Add(linear(x, []float64{3, 4})).Backward())
	sameValues(t, "shared cell", shared.Value, []float64{1 - 0.5*4, -1 - 0.5*6}, 1e-15)
}

// testAllowMissingGradsKeepsState alternates which of two parameters gets
// a gradient: with AllowMissingGrads the other one and its optimizer state
// (momentum buffer; Adam's moments and step count) stay as they were.
func testAllowMissingGradsKeepsState(t *testing.T) {
	dev := ember.Flex().Autodiff()
	w1, w2, w3 := []float64{0.5, 1}, []float64{3, -4}, []float64{-1, 2}
	for _, m := range makers {
		p := &nn.Param{Value: f64([]float64{1, -2}, dev).RequireGrad()}
		q := &nn.Param{Value: f64([]float64{7, 8}, dev).RequireGrad()}
		opt := m.mk([]nn.NamedParam{{Name: "p", Param: p}, {Name: "q", Param: q}}, true)
		var ref func(th, g []float64, step int) []float64
		switch m.op {
		case "sgd":
			var b []float64
			ref = func(th, g []float64, step int) []float64 {
				out := make([]float64, len(th))
				if step == 1 {
					b = append([]float64(nil), g...)
				} else {
					for i := range b {
						b[i] = 0.9*b[i] + g[i]
					}
				}
				for i := range th {
					out[i] = th[i] - 0.1*b[i]
				}
				return out
			}
		case "adam":
			ref = adamRef(0.1, 0.9, 0.999, 1e-8, 0, false)
		case "adamw":
			ref = adamRef(0.1, 0.9, 0.999, 1e-8, 0.01, true)
		}
		theta := []float64{1, -2}
		opt.Step(linear(p.Value, w1).Backward()) // q has no gradient
		theta = ref(theta, w1, 1)
		sameValues(t, m.op+" step 1", p.Value, theta, 1e-12)
		sameValues(t, m.op+" step 1, idle q", q.Value, []float64{7, 8}, 0)
		opt.Step(linear(q.Value, w2).Backward()) // p has no gradient
		sameValues(t, m.op+" step 2, idle p", p.Value, theta, 0)
		opt.Step(linear(p.Value, w3).Backward())
		theta = ref(theta, w3, 2) // p's second step: its buffer or moments and t = 2
		sameValues(t, m.op+" step 3", p.Value, theta, 1e-12)
		opt.Step(nil) // nothing has a gradient: a no-op
		sameValues(t, m.op+" nil step", p.Value, theta, 0)
	}
}

func TestConfigValidation(t *testing.T) {
	p := []nn.NamedParam{{Name: "p", Param: &nn.Param{Value: ember.Zeros([]int{2}, ember.Flex().Autodiff()).RequireGrad()}}}
	nan, inf := math.NaN(), math.Inf(1)
	type bad struct {
		field string
		value float64
		cfg   any
	}
	var cases []bad
	for _, v := range []float64{nan, inf, math.Inf(-1), -1} {
		cases = append(cases, bad{"SGDConfig.LR", v, SGDConfig{LR: v}})
		cases = append(cases, bad{"AdamConfig.LR", v, AdamConfig{LR: v}})
	}
	for _, v := range []float64{nan, inf, -0.1, 1, 1.5} {
		cases = append(cases,
			bad{"SGDConfig.Momentum", v, SGDConfig{Momentum: v}},
			bad{"AdamConfig.Beta1", v, AdamConfig{Beta1: v}},
			bad{"AdamConfig.Beta2", v, AdamConfig{Beta2: v}})
	}
	for _, v := range []float64{nan, inf, -0.01} {
		cases = append(cases,
			bad{"SGDConfig.WeightDecay", v, SGDConfig{WeightDecay: v}},
			bad{"AdamConfig.WeightDecay", v, AdamConfig{WeightDecay: v}})
	}
	for _, v := range []float64{nan, inf, -1e-8} {
		cases = append(cases, bad{"AdamConfig.Eps", v, AdamConfig{Eps: v}})
	}
	cases = append(cases, bad{"SGDConfig.Momentum", 0, SGDConfig{Nesterov: true}})
	for _, c := range cases {
		want := []string{c.field, fmt.Sprintf("= %v,", c.value)}
		switch cfg := c.cfg.(type) {
		case SGDConfig:
			emberError(t, fmt.Sprintf("%+v", cfg), "sgd", func() { NewSGD(p, cfg) }, want...)
		case AdamConfig:
			emberError(t, fmt.Sprintf("adam %+v", cfg), "adam", func() { NewAdam(p, cfg) }, want...)
			emberError(t, fmt.Sprintf("adamw %+v", cfg), "adamw", func() { NewAdamW(p, cfg) }, want...)
		}
	}
	// The edges of the ranges are accepted.
	if err := ember.Try(func() {
		NewSGD(p, SGDConfig{LR: 1e-300, Momentum: 0.999999, WeightDecay: 0, Nesterov: true})
		NewAdam(p, AdamConfig{Beta1: 0.999999, Beta2: 0.999999, Eps: 1e-300, WeightDecay: 1e6})
	}); err != nil {
		t.Errorf("valid configs: %v", err)
	}
}

// TestZeroConfigs checks that a zero config field takes its documented
// default: SGDConfig{} is plain SGD with DefaultSGDLR, not a no-op.
func TestZeroConfigs(t *testing.T) {
	dev := ember.Flex().Autodiff()
	p := &nn.Param{Value: f64([]float64{1, 2, 3}, dev).RequireGrad()}
	opt := NewSGD([]nn.NamedParam{{Name: "p", Param: p}}, SGDConfig{})
	if DefaultSGDLR != 0.01 || opt.LR() != DefaultSGDLR {
		t.Fatalf("SGDConfig{}: LR %v, want DefaultSGDLR = 0.01", opt.LR())
	}
	w := []float64{0.5, -1, 2}
	opt.Step(linear(p.Value, w).Backward())
	sameValues(t, "SGDConfig{} step", p.Value, []float64{1 - 0.01*0.5, 2 + 0.01, 3 - 0.01*2}, 1e-15)
	opt.Step(linear(p.Value, w).Backward()) // no momentum: the same step again
	sameValues(t, "SGDConfig{} second step", p.Value, []float64{1 - 0.02*0.5, 2 + 0.02, 3 - 0.02*2}, 1e-15)

	a := NewAdamW([]nn.NamedParam{{Name: "p", Param: p}}, AdamConfig{})
	if a.LR() != 1e-3 || a.cfg.Beta1 != 0.9 || a.cfg.Beta2 != 0.999 || a.cfg.Eps != 1e-8 || a.cfg.WeightDecay != 0.01 {
		t.Errorf("AdamW defaults %+v", a.cfg)
	}
}

func TestSetLRValidation(t *testing.T) {
	dev := ember.Flex().Autodiff()
	for _, m := range makers {
		p := &nn.Param{Value: f64([]float64{1, -2}, dev).RequireGrad()}
		opt := m.mk([]nn.NamedParam{{Name: "p", Param: p}}, false)
		for _, lr := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1e-9} {
			emberError(t, fmt.Sprintf("%s SetLR(%v)", m.op, lr), m.op, func() { opt.SetLR(lr) },
				fmt.Sprintf("SetLR(%v)", lr))
		}
		if opt.LR() != 0.1 {
			t.Errorf("%s: a rejected SetLR changed LR to %v", m.op, opt.LR())
		}
		// 0 is accepted (a schedule may end there) and updates nothing.
		opt.SetLR(0)
		opt.Step(linear(p.Value, []float64{3, 4}).Backward())
		sameValues(t, m.op+" lr 0", p.Value, []float64{1, -2}, 0)
	}
}

func TestScheduleValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for name, c := range map[string]struct {
		op, want string
		f        func()
	}{
		"step base NaN":    {"step_lr", "base = NaN", func() { StepLR(nan, 1, 0.5) }},
		"step base < 0":    {"step_lr", "base = -1", func() { StepLR(-1, 1, 0.5) }},
		"step base 0":      {"step_lr", "base = 0", func() { StepLR(0, 1, 0.5) }},
		"step gamma Inf":   {"step_lr", "gamma = +Inf", func() { StepLR(0.1, 1, inf) }},
		"step gamma 0":     {"step_lr", "gamma = 0", func() { StepLR(0.1, 1, 0) }},
		"step gamma NaN":   {"step_lr", "gamma = NaN", func() { StepLR(0.1, 1, nan) }},
		"step size":        {"step_lr", "stepSize = -3", func() { StepLR(0.1, -3, 0.5) }},
		"cosine base Inf":  {"cosine_lr", "base = +Inf", func() { CosineLR(inf, 0, 4) }},
		"cosine min < 0":   {"cosine_lr", "min = -0.5", func() { CosineLR(0.1, -0.5, 4) }},
		"cosine min NaN":   {"cosine_lr", "min = NaN", func() { CosineLR(0.1, nan, 4) }},
		"cosine base 0":    {"cosine_lr", "base = 0", func() { CosineLR(0, 0, 4) }},
		"cosine total < 0": {"cosine_lr", "total = -1", func() { CosineLR(0.1, 0, -1) }},
	} {
		emberError(t, name, c.op, c.f, c.want)
	}
}
