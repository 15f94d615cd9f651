package optim

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// twoParams returns parameters "w" [2 3] and "b" [3] with values drawn
// from seed, on an autodiff flex device.
func twoParams(seed uint64) []nn.NamedParam {
	rng := rand.New(rand.NewPCG(seed, 3))
	dev := ember.Flex().Autodiff()
	mk := func(shape ...int) *nn.Param {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return &nn.Param{Value: ember.FromFloats(randVals(rng, n, -1, 1), shape, dev).RequireGrad()}
	}
	return []nn.NamedParam{{Name: "w", Param: mk(2, 3)}, {Name: "b", Param: mk(3)}}
}

// stepLoss is a loss with a non-trivial gradient: Σ (x·w + b − y)² on a
// fixed batch that depends on k.
func stepLoss(ps []nn.NamedParam, k int) *ember.Tensor {
	rng := rand.New(rand.NewPCG(uint64(k), 11))
	dev := ps[0].Param.Value.Device().Inner()
	x := ember.FromFloats(randVals(rng, 8, -1, 1), []int{4, 2}, dev)
	y := ember.FromFloats(randVals(rng, 12, -1, 1), []int{4, 3}, dev)
	d := x.Matmul(ps[0].Param.Value).Add(ps[1].Param.Value).Sub(y)
	return d.Mul(d).Sum()
}

func bitsOf(ps []nn.NamedParam) [][]byte {
	var out [][]byte
	for _, p := range ps {
		out = append(out, p.Param.Value.Data().Bytes)
	}
	return out
}

// TestStateDictResume checks that an optimizer restored from StateDict
// continues exactly as the original: after 4 steps, the state goes into a
// fresh optimizer over copies of the parameters, and both take 5 more
// steps with changing learning rates; the parameters stay bit-identical.
func TestStateDictResume(t *testing.T) {
	makers := map[string]func([]nn.NamedParam) Stateful{
		"adam":         func(p []nn.NamedParam) Stateful { return NewAdam(p, AdamConfig{LR: 0.05}) },
		"adamw":        func(p []nn.NamedParam) Stateful { return NewAdamW(p, AdamConfig{LR: 0.05, WeightDecay: 0.1}) },
		"sgd":          func(p []nn.NamedParam) Stateful { return NewSGD(p, SGDConfig{LR: 0.05}) },
		"sgd momentum": func(p []nn.NamedParam) Stateful { return NewSGD(p, SGDConfig{LR: 0.05, Momentum: 0.9}) },
		"sgd nesterov": func(p []nn.NamedParam) Stateful {
			return NewSGD(p, SGDConfig{LR: 0.05, Momentum: 0.8, Nesterov: true, WeightDecay: 0.01})
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			a := twoParams(1)
			optA := mk(a)
			sched := CosineLR(0.05, 0.001, 9)
			for k := range 4 {
				optA.SetLR(sched.LR(k))
				optA.Step(stepLoss(a, k).Backward())
			}
			sd, err := optA.StateDict()
			if err != nil {
				t.Fatal(err)
			}
			// Fresh optimizers over copies of the parameters: b gets the
			// state, c does not (so that the test can tell a lost state).
			clone := func() []nn.NamedParam {
				ps := twoParams(2)
				for i := range ps {
					ps[i].Param.Value = a[i].Param.Value.Detach().Inner().ToDevice(a[i].Param.Value.Device()).RequireGrad()
				}
				return ps
			}
			b, c := clone(), clone()
			optB, optC := mk(b), mk(c)
			if err := optB.LoadStateDict(sd); err != nil {
				t.Fatal(err)
			}
			if optB.LR() != optA.LR() {
				t.Fatalf("restored lr %v, want %v", optB.LR(), optA.LR())
			}
			for k := 4; k < 9; k++ {
				for _, o := range []struct {
					opt Stateful
					ps  []nn.NamedParam
				}{{optA, a}, {optB, b}, {optC, c}} {
					o.opt.SetLR(sched.LR(k))
					o.opt.Step(stepLoss(o.ps, k).Backward())
				}
			}
			ba, bb := bitsOf(a), bitsOf(b)
			for i := range ba {
				if !slices.Equal(ba[i], bb[i]) {
					t.Fatalf("parameter %s differs after resuming", a[i].Name)
				}
			}
			if name != "sgd" && slices.Equal(bitsOf(c)[0], ba[0]) {
				t.Fatal("without the state the run continued identically: the check is vacuous")
			}
		})
	}
}

// TestStateDictContents checks the names, counts and values a state holds.
func TestStateDictContents(t *testing.T) {
	ps := twoParams(4)
	opt := NewAdam(ps, AdamConfig{LR: 0.01, Beta1: 0.8})
	for k := range 3 {
		opt.Step(stepLoss(ps, k).Backward())
	}
	sd, err := opt.StateDict()
	if err != nil {
		t.Fatal(err)
	}
	if sd.Optimizer != "adam" || sd.Hyper["lr"] != 0.01 || sd.Hyper["beta1"] != 0.8 || sd.Hyper["beta2"] != 0.999 || sd.Hyper["eps"] != 1e-8 {
		t.Fatalf("state header %q %v", sd.Optimizer, sd.Hyper)
	}
	st := opt.State()
	for i, name := range []string{"w", "b"} {
		p := sd.Params[name]
		if p.Step != 3 || p.Tensors["exp_avg"] != st[2*i] || p.Tensors["exp_avg_sq"] != st[2*i+1] {
			t.Fatalf("parameter %s: step %d, tensors %v", name, p.Step, p.Tensors)
		}
	}
	fresh, _ := NewSGD(ps, SGDConfig{Momentum: 0.9}).StateDict()
	if len(fresh.Params) != 0 || fresh.Hyper["momentum"] != 0.9 || fresh.Hyper["nesterov"] != 0 {
		t.Fatalf("a fresh SGD's state: %+v", fresh)
	}
	dup := []nn.NamedParam{ps[0], {Name: "w", Param: ps[1].Param}}
	if _, err := NewAdam(dup, AdamConfig{}).StateDict(); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Fatalf("duplicate names: %v", err)
	}
}

// TestLoadStateDictMismatch checks that a state of another optimizer,
// configuration or model is refused with ErrStateMismatch, naming what
// differs, and changes nothing.
func TestLoadStateDictMismatch(t *testing.T) {
	ps := twoParams(5)
	src := NewAdam(ps, AdamConfig{LR: 0.01})
	src.Step(stepLoss(ps, 0).Backward())
	good, _ := src.StateDict()
	sgd, _ := NewSGD(ps, SGDConfig{Momentum: 0.9}).StateDict()
	edit := func(f func(sd *StateDict)) *StateDict {
		sd := &StateDict{Optimizer: good.Optimizer, Hyper: map[string]float64{}, Params: map[string]ParamState{}}
		for k, v := range good.Hyper {
			sd.Hyper[k] = v
		}
		for k, v := range good.Params {
			tensors := map[string]*ember.Tensor{}
			for n, x := range v.Tensors {
				tensors[n] = x
			}
			sd.Params[k] = ParamState{Step: v.Step, Tensors: tensors}
		}
		f(sd)
		return sd
	}
	cases := []struct {
		name string
		sd   *StateDict
		want string
	}{
		{"other optimizer", sgd, `optimizer "sgd"`},
		{"other beta", edit(func(sd *StateDict) { sd.Hyper["beta2"] = 0.99 }), "beta2 = 0.99"},
		{"unknown hyper", edit(func(sd *StateDict) { sd.Hyper["momentum"] = 0.9 }), `"momentum"`},
		{"missing hyper", edit(func(sd *StateDict) { delete(sd.Hyper, "eps") }), `"eps"`},
		{"bad lr", edit(func(sd *StateDict) { sd.Hyper["lr"] = -1 }), "learning rate"},
		{"other model", edit(func(sd *StateDict) { sd.Params["fc.weight"] = sd.Params["w"] }), `"fc.weight"`},
		{"other shape", edit(func(sd *StateDict) {
			sd.Params["b"].Tensors["exp_avg"] = ember.Zeros([]int{4}, ember.Flex())
		}), "exp_avg of parameter \"b\""},
		{"tensor names", edit(func(sd *StateDict) { delete(sd.Params["w"].Tensors, "exp_avg_sq") }), "exp_avg and exp_avg_sq"},
		{"negative step", edit(func(sd *StateDict) { sd.Params["w"] = ParamState{Step: -1, Tensors: sd.Params["w"].Tensors} }), "step count -1"},
	}
	dst := NewAdam(twoParams(6), AdamConfig{LR: 0.01})
	dst.Step(stepLoss(dst.params, 0).Backward())
	before, _ := dst.StateDict()
	for _, c := range cases {
		err := dst.LoadStateDict(c.sd)
		if !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrStateMismatch naming %s", c.name, err, c.want)
		}
	}
	after, _ := dst.StateDict()
	if after.Params["w"].Tensors["exp_avg"] != before.Params["w"].Tensors["exp_avg"] || after.Hyper["lr"] != before.Hyper["lr"] {
		t.Fatal("a refused state changed the optimizer")
	}
	if err := dst.LoadStateDict(nil); err == nil {
		t.Fatal("nil state accepted")
	}
	// SGD without momentum has no tensors; one with a buffer is refused.
	plain := NewSGD(ps, SGDConfig{})
	withBuf, _ := NewSGD(ps, SGDConfig{Momentum: 0.9}).StateDict()
	withBuf.Hyper["momentum"] = 0
	withBuf.Params["w"] = ParamState{Tensors: map[string]*ember.Tensor{"momentum_buffer": ember.ZerosLike(ps[0].Param.Value.Inner())}}
	if err := plain.LoadStateDict(withBuf); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a momentum buffer for SGD without momentum: %v", err)
	}
}
