package optim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// ErrStateMismatch is wrapped by LoadStateDict's errors when a state
// belongs to another optimizer: another algorithm, other hyperparameters,
// other parameter names, shapes or dtypes.
var ErrStateMismatch = errors.New("optimizer state does not match the optimizer")

// StateDict is an optimizer's whole state as plain data, what a checkpoint
// stores so that training continues bit for bit after LoadStateDict
// (PyTorch's Optimizer.state_dict, with parameters named instead of
// numbered).
type StateDict struct {
	// Optimizer names the algorithm: "adam", "adamw" or "sgd".
	Optimizer string
	// Hyper holds the configuration under PyTorch's param_group keys:
	// "lr", "beta1", "beta2", "eps" and "weight_decay" for Adam and
	// AdamW; "lr", "momentum", "weight_decay" and "nesterov" (1 or 0) for
	// SGD. "lr" is the current rate (SetLR's).
	Hyper map[string]float64
	// Params holds each parameter's state by its name
	// (nn.NamedParam.Name). A parameter that has none yet (it has taken
	// no step) is absent.
	Params map[string]ParamState
}

// ParamState is one parameter's optimizer state.
type ParamState struct {
	// Step is the parameter's step count t (Adam and AdamW, whose bias
	// corrections depend on it; 0 for SGD, which has none).
	Step int
	// Tensors holds the state tensors under PyTorch's names: "exp_avg"
	// and "exp_avg_sq" (Adam's m and v), "momentum_buffer" (SGD with
	// momentum). Each has its parameter's shape and dtype. StateDict
	// returns the optimizer's own tensors (tensors are immutable, so they
	// are a snapshot); LoadStateDict takes the given ones, moved to the
	// parameter's inner device.
	Tensors map[string]*ember.Tensor
}

// Stateful is implemented by Adam, AdamW and SGD: optimizers whose state
// can be saved and restored, so that a run continues from a checkpoint
// exactly as it would have without stopping (package train's checkpoints
// use it).
type Stateful interface {
	Optimizer
	// StateDict returns the optimizer's state. It returns an error when
	// two parameters share a name.
	StateDict() (*StateDict, error)
	// LoadStateDict replaces the optimizer's state with sd: the learning
	// rate, each named parameter's step count and tensors, and no state
	// for a parameter sd does not list. The other hyperparameters must
	// equal the optimizer's (edit sd.Hyper to load a state under another
	// configuration). It returns an error wrapping ErrStateMismatch,
	// changing nothing, when sd is of another algorithm or
	// configuration, names a parameter the optimizer does not have, or
	// holds a tensor of another name, shape or dtype.
	LoadStateDict(sd *StateDict) error
}

var (
	_ Stateful = (*Adam)(nil)
	_ Stateful = (*AdamW)(nil)
	_ Stateful = (*SGD)(nil)
)

// hypers returns Adam's or AdamW's configuration as StateDict.Hyper.
func (c AdamConfig) hypers() map[string]float64 {
	return map[string]float64{"lr": c.LR, "beta1": c.Beta1, "beta2": c.Beta2, "eps": c.Eps, "weight_decay": c.WeightDecay}
}

// hypers returns SGD's configuration as StateDict.Hyper.
func (c SGDConfig) hypers() map[string]float64 {
	nesterov := 0.0
	if c.Nesterov {
		nesterov = 1
	}
	return map[string]float64{"lr": c.LR, "momentum": c.Momentum, "weight_decay": c.WeightDecay, "nesterov": nesterov}
}

// uniqueNames returns an error of op when two of params share a name.
func uniqueNames(op string, params []nn.NamedParam) error {
	seen := make(map[string]bool, len(params))
	for _, np := range params {
		if seen[np.Name] {
			return fmt.Errorf("optim: %s: two parameters are named %q; the state is keyed by name", op, np.Name)
		}
		seen[np.Name] = true
	}
	return nil
}

// StateDict returns Adam's state: the learning rate and configuration,
// and each parameter's step count, "exp_avg" and "exp_avg_sq" (see
// Stateful).
func (o *Adam) StateDict() (*StateDict, error) { return o.stateDict("adam") }

// LoadStateDict restores a state StateDict returned (see Stateful).
func (o *Adam) LoadStateDict(sd *StateDict) error { return o.loadStateDict("adam", sd) }

// StateDict returns AdamW's state: the learning rate and configuration,
// and each parameter's step count, "exp_avg" and "exp_avg_sq" (see
// Stateful).
func (o *AdamW) StateDict() (*StateDict, error) { return o.stateDict("adamw") }

// LoadStateDict restores a state StateDict returned (see Stateful).
func (o *AdamW) LoadStateDict(sd *StateDict) error { return o.loadStateDict("adamw", sd) }

func (o *adamCore) stateDict(op string) (*StateDict, error) {
	if err := uniqueNames(op, o.params); err != nil {
		return nil, err
	}
	sd := &StateDict{Optimizer: op, Hyper: o.cfg.hypers(), Params: map[string]ParamState{}}
	for _, np := range o.params {
		s := o.state[np.Param]
		if s == nil || (s.t == 0 && s.m == nil) {
			continue
		}
		ps := ParamState{Step: s.t, Tensors: map[string]*ember.Tensor{}}
		if s.m != nil {
			ps.Tensors["exp_avg"], ps.Tensors["exp_avg_sq"] = s.m, s.v
		}
		sd.Params[np.Name] = ps
	}
	return sd, nil
}

func (o *adamCore) loadStateDict(op string, sd *StateDict) error {
	lr, err := checkStateDict(op, sd, o.cfg.hypers(), o.params, func(name string, ps ParamState) (bool, string) {
		if len(ps.Tensors) == 0 {
			return true, ""
		}
		return ps.Tensors["exp_avg"] != nil && ps.Tensors["exp_avg_sq"] != nil && len(ps.Tensors) == 2, "exp_avg and exp_avg_sq"
	})
	if err != nil {
		return err
	}
	state := make(map[*nn.Param]*adamState, len(sd.Params))
	for _, np := range o.params {
		ps, ok := sd.Params[np.Name]
		if !ok {
			continue
		}
		s := &adamState{t: ps.Step}
		if len(ps.Tensors) > 0 {
			s.m = onParamDevice(ps.Tensors["exp_avg"], np)
			s.v = onParamDevice(ps.Tensors["exp_avg_sq"], np)
		}
		state[np.Param] = s
	}
	o.state, o.cfg.LR = state, lr
	return nil
}

// StateDict returns SGD's state: the learning rate and configuration, and
// with momentum each parameter's "momentum_buffer" (see Stateful).
func (o *SGD) StateDict() (*StateDict, error) {
	if err := uniqueNames("sgd", o.params); err != nil {
		return nil, err
	}
	sd := &StateDict{Optimizer: "sgd", Hyper: o.cfg.hypers(), Params: map[string]ParamState{}}
	for _, np := range o.params {
		if b := o.buf[np.Param]; b != nil {
			sd.Params[np.Name] = ParamState{Tensors: map[string]*ember.Tensor{"momentum_buffer": b}}
		}
	}
	return sd, nil
}

// LoadStateDict restores a state StateDict returned (see Stateful).
func (o *SGD) LoadStateDict(sd *StateDict) error {
	momentum := o.cfg.Momentum != 0
	lr, err := checkStateDict("sgd", sd, o.cfg.hypers(), o.params, func(name string, ps ParamState) (bool, string) {
		if !momentum {
			return len(ps.Tensors) == 0, "no tensor (SGD without momentum)"
		}
		return ps.Tensors["momentum_buffer"] != nil && len(ps.Tensors) == 1, "momentum_buffer"
	})
	if err != nil {
		return err
	}
	buf := make(map[*nn.Param]*ember.Tensor, len(sd.Params))
	for _, np := range o.params {
		if ps, ok := sd.Params[np.Name]; ok && momentum {
			buf[np.Param] = onParamDevice(ps.Tensors["momentum_buffer"], np)
		}
	}
	o.buf, o.cfg.LR = buf, lr
	return nil
}

// onParamDevice returns x on np's inner device (x itself when it is
// there).
func onParamDevice(x *ember.Tensor, np nn.NamedParam) *ember.Tensor {
	return x.Detach().ToDevice(np.Param.Value.Device().Inner())
}

// checkStateDict returns sd's learning rate, or an error wrapping
// ErrStateMismatch when sd does not fit an optimizer op with
// configuration hyper and parameters params; tensorsOK says whether a
// parameter's tensor names are right, and what they should be.
func checkStateDict(op string, sd *StateDict, hyper map[string]float64, params []nn.NamedParam, tensorsOK func(string, ParamState) (bool, string)) (float64, error) {
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("optim: %s: LoadStateDict: %w: %s", op, ErrStateMismatch, fmt.Sprintf(format, args...))
	}
	if sd == nil {
		return 0, fmt.Errorf("optim: %s: LoadStateDict: nil state", op)
	}
	if sd.Optimizer != op {
		return 0, mismatch("the state is of optimizer %q, this optimizer is %q", sd.Optimizer, op)
	}
	if err := uniqueNames(op, params); err != nil {
		return 0, err
	}
	for _, k := range slices.Sorted(maps.Keys(sd.Hyper)) {
		if _, ok := hyper[k]; !ok {
			return 0, mismatch("unknown hyperparameter %q in the state (%s has %s)", k, op, strings.Join(slices.Sorted(maps.Keys(hyper)), ", "))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(hyper)) {
		v, ok := sd.Hyper[k]
		switch {
		case !ok:
			return 0, mismatch("the state lacks hyperparameter %q", k)
		case k == "lr":
			if !finite(v) || v < 0 {
				return 0, mismatch("the state's learning rate %v is not a finite number >= 0", v)
			}
		case v != hyper[k]:
			return 0, mismatch("the state was saved with %s = %v, this optimizer has %v (set StateDict.Hyper[%q] to load it anyway)", k, v, hyper[k], k)
		}
	}
	byName := make(map[string]nn.NamedParam, len(params))
	for _, np := range params {
		byName[np.Name] = np
	}
	for _, name := range slices.Sorted(maps.Keys(sd.Params)) {
		ps := sd.Params[name]
		np, ok := byName[name]
		if !ok {
			return 0, mismatch("the state holds parameter %q, which this optimizer does not have", name)
		}
		if ps.Step < 0 {
			return 0, mismatch("parameter %q has step count %d", name, ps.Step)
		}
		if ok, want := tensorsOK(name, ps); !ok {
			return 0, mismatch("parameter %q has state tensors %s, want %s", name, strings.Join(slices.Sorted(maps.Keys(ps.Tensors)), ", "), want)
		}
		v := np.Param.Value
		if v == nil {
			return 0, fmt.Errorf("optim: %s: LoadStateDict: parameter %q has a nil Value", op, name)
		}
		for _, k := range slices.Sorted(maps.Keys(ps.Tensors)) {
			x := ps.Tensors[k]
			if x.DType() != v.DType() || !slices.Equal(x.Shape(), v.Shape()) {
				return 0, mismatch("%s of parameter %q is %v %v, the parameter %v %v", k, name, x.Shape(), x.DType(), v.Shape(), v.DType())
			}
		}
	}
	return sd.Hyper["lr"], nil
}
