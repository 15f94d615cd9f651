package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// capture makes a checkpoint of model, opt (which must be
// optim.Stateful), the loss scaler scaler (nil for none), st, the random
// state of dev and config; best, when non-nil, holds the best epoch's
// values in nn.StateDict order.
func capture(model nn.Module, opt optim.Optimizer, scaler *optim.GradScaler, st State, dev ember.Device, config json.RawMessage, best []*ember.Tensor) (*Checkpoint, error) {
	so, ok := opt.(optim.Stateful)
	if !ok {
		return nil, fmt.Errorf("train: checkpoint: the optimizer %T cannot save its state (it does not implement optim.Stateful)", opt)
	}
	all, err := nn.StateDict(model)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	c := &Checkpoint{Model: make(map[string]*ember.TensorData, len(all)), State: st, Config: config}
	if scaler != nil {
		gs := scaler.StateDict()
		c.GradScaler = &gs
	}
	read := func(what string, t *ember.Tensor) (*ember.TensorData, error) {
		d, err := t.ToData()
		if err != nil {
			return nil, fmt.Errorf("train: checkpoint: reading %s: %w", what, err)
		}
		return d, nil
	}
	for _, p := range all {
		if c.Model[p.Name], err = read("parameter "+p.Name, p.Param.Value); err != nil {
			return nil, err
		}
	}
	if best != nil && len(best) == len(all) {
		c.Best = make(map[string]*ember.TensorData, len(all))
		for i, p := range all {
			if c.Best[p.Name], err = read("best "+p.Name, best[i]); err != nil {
				return nil, err
			}
		}
	}
	sd, err := so.StateDict()
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	c.Optimizer = OptimizerCheckpoint{Name: sd.Optimizer, Hyper: sd.Hyper, Steps: map[string]int{}, Tensors: map[string]map[string]*ember.TensorData{}}
	for name, ps := range sd.Params {
		c.Optimizer.Steps[name] = ps.Step
		if len(ps.Tensors) == 0 {
			continue
		}
		ts := map[string]*ember.TensorData{}
		for k, t := range ps.Tensors {
			if ts[k], err = read(k+" of "+name, t); err != nil {
				return nil, err
			}
		}
		c.Optimizer.Tensors[name] = ts
	}
	rng, err := dev.RNGState()
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		// Left out: the resumed run draws from a reseeded generator.
	case err != nil:
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	default:
		c.RNG = rng
	}
	return c, nil
}

// restore puts c's parameters and buffers into model, its optimizer state
// into opt, its loss scaler's state into scaler (nil for a run without
// one) and its random state into dev, changing nothing when it returns an
// error (wrapping ErrCheckpointMismatch for a checkpoint of another model
// or optimizer, or one with a loss scaler's state when scaler is nil or
// the reverse). It returns c's best-epoch values in
// nn.StateDict order (nil when c has none), and a note when the random
// state could not be restored (another kind of device).
func (c *Checkpoint) restore(model nn.Module, opt optim.Optimizer, scaler *optim.GradScaler, dev ember.Device) (best []*ember.Tensor, note string, err error) {
	so, ok := opt.(optim.Stateful)
	if !ok {
		return nil, "", fmt.Errorf("train: resume: the optimizer %T cannot load a state (it does not implement optim.Stateful)", opt)
	}
	all, err := nn.StateDict(model)
	if err != nil {
		return nil, "", fmt.Errorf("train: resume: %w", err)
	}
	mismatch := func(err error) error { return fmt.Errorf("train: resume: %w: %w", ErrCheckpointMismatch, err) }
	switch {
	case c.GradScaler != nil && scaler == nil:
		return nil, "", mismatch(errors.New("the checkpoint holds a loss scaler's state (F16 mixed precision), this run has no loss scaler"))
	case c.GradScaler == nil && scaler != nil:
		return nil, "", mismatch(errors.New("the checkpoint holds no loss scaler's state, this run scales its loss (F16 mixed precision)"))
	}
	// Every tensor is made on the inner device of the parameter it
	// belongs to before anything changes.
	devOf := make(map[string]ember.Device, len(all))
	for _, p := range all {
		devOf[p.Name] = p.Param.Value.Device().Inner()
	}
	// A tensor of a name the model lacks goes to the host, for the load
	// below to name it.
	place := func(name string, d *ember.TensorData) (t *ember.Tensor, err error) {
		dev, ok := devOf[name]
		if !ok {
			dev = ember.Flex()
		}
		if err := ember.Try(func() { t = ember.FromData(d, dev) }); err != nil {
			return nil, fmt.Errorf("train: resume: tensor %q: %w", name, err)
		}
		return t, nil
	}
	tensors := make(map[string]*ember.Tensor, len(c.Model))
	for _, name := range slices.Sorted(maps.Keys(c.Model)) {
		t, err := place(name, c.Model[name])
		if err != nil {
			return nil, "", err
		}
		tensors[name] = t
	}
	sd := &optim.StateDict{Optimizer: c.Optimizer.Name, Hyper: c.Optimizer.Hyper, Params: map[string]optim.ParamState{}}
	for name, step := range c.Optimizer.Steps {
		ps := optim.ParamState{Step: step, Tensors: map[string]*ember.Tensor{}}
		for k, d := range c.Optimizer.Tensors[name] {
			t, err := place(name, d)
			if err != nil {
				return nil, "", err
			}
			ps.Tensors[k] = t
		}
		sd.Params[name] = ps
	}
	if c.Best != nil {
		best = make([]*ember.Tensor, len(all))
		for i, p := range all {
			d, ok := c.Best[p.Name]
			if !ok {
				return nil, "", mismatch(fmt.Errorf("the best epoch's values lack tensor %q", p.Name))
			}
			if best[i], err = place(p.Name, d); err != nil {
				return nil, "", err
			}
			if !slices.Equal(best[i].Shape(), p.Param.Value.Shape()) || best[i].DType() != p.Param.Value.DType() {
				return nil, "", mismatch(fmt.Errorf("the best epoch's %q is %v %v, the model's %v %v", p.Name, best[i].Shape(), best[i].DType(), p.Param.Value.Shape(), p.Param.Value.DType()))
			}
			best[i] = best[i].ToDevice(p.Param.Value.Device())
		}
	}
	old, err := so.StateDict()
	if err != nil {
		return nil, "", fmt.Errorf("train: resume: %w", err)
	}
	var oldScaler optim.GradScalerState
	if scaler != nil {
		oldScaler = scaler.StateDict()
		if err := scaler.LoadStateDict(*c.GradScaler); err != nil {
			return nil, "", mismatch(err)
		}
	}
	if err := so.LoadStateDict(sd); err != nil {
		if scaler != nil {
			_ = scaler.LoadStateDict(oldScaler) // the scaler's own: it fits
		}
		return nil, "", mismatch(err)
	}
	if _, err := nn.LoadStateDict(model, tensors, nn.LoadOptions{}); err != nil {
		_ = so.LoadStateDict(old) // it was the optimizer's own: it fits
		if scaler != nil {
			_ = scaler.LoadStateDict(oldScaler)
		}
		return nil, "", mismatch(err)
	}
	if c.RNG != nil {
		if err := dev.SetRNGState(c.RNG); err != nil {
			note = fmt.Sprintf("the checkpoint's random generator state does not fit %v (%v); random ops (dropout) will differ from the uninterrupted run", dev, err)
		}
	}
	return best, note, nil
}
