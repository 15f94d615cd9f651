package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/emberml/ember"
	"github.com/emberml/ember/optim"
)

// trainerSettings are the settings of a Trainer that shape its steps
// beside the model and the optimizer (whose checkpointed state carries
// their own): a checkpoint records them, and the Fit after Resume
// compares them. The Schedule, a function, cannot be compared.
type trainerSettings struct {
	BatchSize       int     `json:"batch_size"`
	Seed            uint64  `json:"seed"`
	Shuffle         bool    `json:"shuffle"`
	DropLast        bool    `json:"drop_last"`
	ValidationSplit float64 `json:"validation_split"`
	TrainExamples   int     `json:"train_examples"`
	ClipNorm        float64 `json:"clip_norm"`
	ClipValue       float64 `json:"clip_value"`
	// Autocast is the autocast dtype of the Trainer's Device ("bf16",
	// "f16"; "" without autocast).
	Autocast string `json:"autocast,omitempty"`
}

// currentSettings returns the settings of the Fit r resolved.
func (t *Trainer) currentSettings(r *fitRun) *trainerSettings {
	s := &trainerSettings{BatchSize: r.batch, Seed: t.Seed, Shuffle: !t.NoShuffle, DropLast: t.DropLast,
		ValidationSplit: t.ValidationSplit, TrainExamples: r.trainSet.Len(), ClipNorm: t.ClipNorm, ClipValue: t.ClipValue}
	if dt, ok := r.dev.AutocastDType(); ok {
		s.Autocast = dt.String()
	}
	return s
}

// compare returns an error wrapping ErrCheckpointMismatch naming the
// first setting in which s differs from saved.
func (s *trainerSettings) compare(saved *trainerSettings) error {
	a, b := reflect.ValueOf(*s), reflect.ValueOf(*saved)
	for i := range a.NumField() {
		if x, y := a.Field(i).Interface(), b.Field(i).Interface(); x != y {
			return fmt.Errorf("train: %w: the checkpoint was written with %s = %v, this Trainer has %v",
				ErrCheckpointMismatch, jsonName(a.Type().Field(i)), y, x)
		}
	}
	return nil
}

// ensureOptimizer sets Optimizer to Fit's default, Adam with learning
// rate 1e-3 over the model's parameters, when it is nil.
func (t *Trainer) ensureOptimizer() {
	if t.Optimizer == nil {
		t.Optimizer = optim.NewAdam(t.Model.NamedParameters(), optim.AdamConfig{LR: 1e-3})
	}
}

// device returns the device whose random generator the model draws
// from: Device, else that of the model's first parameter.
func (t *Trainer) device() (ember.Device, error) {
	if !t.Device.IsZero() {
		return t.Device, nil
	}
	ps := t.Model.NamedParameters()
	if len(ps) == 0 || ps[0].Param == nil || ps[0].Param.Value == nil {
		return ember.Device{}, errors.New("train: the model has no parameters to take the device from; set Trainer.Device")
	}
	return ps[0].Param.Value.Device(), nil
}

// Checkpoint returns the Trainer's checkpoint: the model's parameters and
// buffers, the optimizer's state (it must implement optim.Stateful, as
// Adam, AdamW and SGD do), the GradScaler's state, State (the position
// inside an epoch included), the device's random generator state, the
// settings of the last Fit (batch size, seed, shuffling, split, clipping,
// autocast dtype), and the best epoch's values for
// EarlyStopping.RestoreBest. Save it with
// SaveCheckpoint or WriteCheckpoint; call it between Fit calls, or from
// OnStep or OnEpoch. Errors: a nil Model, an optimizer without a state
// to save, duplicate parameter names, and device errors reading tensors.
func (t *Trainer) Checkpoint() (*Checkpoint, error) {
	if t.Model == nil {
		return nil, errors.New("train: Trainer.Model is nil")
	}
	t.ensureOptimizer()
	dev, err := t.device()
	if err != nil {
		return nil, err
	}
	s := t.settings
	if s == nil {
		s = &trainerSettings{}
	}
	config, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	return capture(t.Model, t.Optimizer, t.GradScaler, t.State, dev, config, t.best)
}

// Resume puts checkpoint c, written by Checkpoint, into the Trainer: the
// model's parameters and buffers, the optimizer's state (Optimizer nil
// becomes Fit's default Adam first), the GradScaler's state, State, the
// device's random state and the best epoch's values; the next Fit continues exactly where the
// checkpointed training stopped, in the middle of an epoch if need be,
// and takes the steps it would have taken (bit for bit on the same
// device, given the same data, loss, metrics and Schedule). That Fit
// first checks that its settings (batch size, seed, shuffling, split,
// clipping, autocast dtype, training set size) are the checkpoint's.
//
// Errors, after which nothing has changed: a nil Model or c, a
// checkpoint of another model or optimizer (wrapping
// ErrCheckpointMismatch and nn.ErrMismatch or optim.ErrStateMismatch),
// one with a loss scaler's state for a Trainer without a GradScaler or
// the reverse (ErrCheckpointMismatch),
// one whose settings are not a Trainer's, and device errors. A random
// state the device cannot take (a checkpoint of another kind of device)
// is not an error: training continues with the device's generator as it
// is, and its random ops (dropout) differ from the uninterrupted run's.
func (t *Trainer) Resume(c *Checkpoint) error {
	if t.Model == nil {
		return errors.New("train: Trainer.Model is nil")
	}
	if c == nil {
		return errors.New("train: Resume: nil checkpoint")
	}
	var saved trainerSettings
	if err := strictJSON(string(c.Config), &saved); err != nil {
		return fmt.Errorf("train: %w: the checkpoint's config is not a Trainer's (written by Run?): %v", ErrInvalidCheckpoint, err)
	}
	if err := c.State.check(); err != nil {
		return fmt.Errorf("train: %w: %v", ErrInvalidCheckpoint, err)
	}
	t.ensureOptimizer()
	dev, err := t.device()
	if err != nil {
		return err
	}
	best, _, err := c.restore(t.Model, t.Optimizer, t.GradScaler, dev)
	if err != nil {
		return err
	}
	t.State, t.best = c.State, best
	if saved != (trainerSettings{}) {
		t.resumed = &saved
	}
	return nil
}

// writeCheckpoint writes CheckpointPath.
func (t *Trainer) writeCheckpoint() error {
	c, err := t.Checkpoint()
	if err != nil {
		return err
	}
	return SaveCheckpoint(t.CheckpointPath, c)
}
