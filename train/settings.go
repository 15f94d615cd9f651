package train

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/optim"
)

// RunSettings are the settings of a Run that shape its steps, resolved
// (defaults filled in), as a checkpoint written by Run records them
// (Checkpoint.Config) and as Resume compares them with the resuming
// run's. Fields that a schedule does not use are zero.
type RunSettings struct {
	Model     string  `json:"model"`     // Config.Model
	Optimizer string  `json:"optimizer"` // Config.Optimizer
	LR        float64 `json:"lr"`        // Config.LR, the base rate
	Batch     int     `json:"batch"`     // Config.Batch
	Seed      uint64  `json:"seed"`      // Config.Seed
	// Epochs is the number of epochs the run was given; a resumed run
	// may be given more.
	Epochs int `json:"epochs"`
	// The learning-rate schedule (see Config), Gamma and StepSize
	// resolved to the values used.
	Schedule string  `json:"schedule"`  // Config.Schedule
	Warmup   int     `json:"warmup"`    // Config.Warmup
	MinLR    float64 `json:"lr_min"`    // Config.MinLR (cosine, linear)
	Gamma    float64 `json:"gamma"`     // the decay factor (step, exponential)
	StepSize int     `json:"step_size"` // the period of step, in steps
	// DecaySteps is the length of "cosine" and "linear" after the
	// warm-up: the run's steps minus Warmup.
	DecaySteps int     `json:"decay_steps"`
	ClipNorm   float64 `json:"clip_norm"`  // Config.ClipNorm
	ClipValue  float64 `json:"clip_value"` // Config.ClipValue
	// TrainExamples is the size of the training set (after Limit).
	TrainExamples int `json:"train_examples"`
	// DType is the training precision, "f32", "f64", "bf16" or "f16"
	// (Config.DType; "f32" in checkpoints written before it was
	// recorded).
	DType string `json:"dtype"`
	// The dynamic loss scaling of an "f16" run (Config.LossScale,
	// resolved to the values used, under PyTorch's GradScaler argument
	// names); zero for the other precisions.
	InitScale      float64 `json:"init_scale"`
	GrowthFactor   float64 `json:"growth_factor"`
	BackoffFactor  float64 `json:"backoff_factor"`
	GrowthInterval int     `json:"growth_interval"`
}

// RunSettings decodes the settings a checkpoint written by Run recorded.
// It returns an error wrapping ErrInvalidCheckpoint when Config does not
// hold them (a checkpoint written by a Trainer, for instance).
func (c *Checkpoint) RunSettings() (RunSettings, error) {
	var s RunSettings
	if err := strictJSON(string(c.Config), &s); err != nil || s.Model == "" {
		return s, fmt.Errorf("train: %w: the checkpoint's config is not a Run's settings (written by a Trainer?)", ErrInvalidCheckpoint)
	}
	if s.DType == "" {
		s.DType = ember.F32.String()
	}
	return s, nil
}

// settings resolves the schedule of cfg (after withDefaults) for a run of
// perEpoch steps per epoch, trainN training examples, and returns the
// settings and the schedule (nil for a constant rate without warm-up).
func (c Config) settings(perEpoch, trainN int) (RunSettings, optim.Schedule) {
	s := RunSettings{
		Model: c.Model, Optimizer: c.Optimizer, LR: c.LR, Batch: c.Batch, Seed: c.Seed, Epochs: c.Epochs,
		Schedule: c.Schedule, Warmup: c.Warmup, ClipNorm: c.ClipNorm, ClipValue: c.ClipValue, TrainExamples: trainN,
		DType: c.DType.String(),
	}
	if c.DType == ember.F16 {
		ls := optim.NewGradScaler(nil, c.LossScale).Config()
		s.InitScale, s.GrowthFactor, s.BackoffFactor, s.GrowthInterval = ls.InitScale, ls.GrowthFactor, ls.BackoffFactor, ls.GrowthInterval
	}
	decay := max(1, c.Epochs*perEpoch-c.Warmup)
	var sched optim.Schedule
	switch c.Schedule {
	case "cosine":
		s.MinLR, s.DecaySteps = c.MinLR, decay
		sched = optim.CosineLR(c.LR, c.MinLR, decay)
	case "linear":
		s.MinLR, s.DecaySteps = c.MinLR, decay
		sched = optim.LinearLR(c.LR, c.MinLR, decay)
	case "step":
		s.Gamma, s.StepSize = c.Gamma, c.StepSize
		if s.Gamma == 0 {
			s.Gamma = DefaultStepGamma
		}
		if s.StepSize == 0 {
			s.StepSize = max(1, perEpoch)
		}
		sched = optim.StepLR(c.LR, s.StepSize, s.Gamma)
	case "exponential":
		s.Gamma = c.Gamma
		if s.Gamma == 0 {
			s.Gamma = 1
			if decay > 1 {
				s.Gamma = math.Pow(DefaultExponentialFinal, 1/float64(decay-1))
			}
		}
		sched = optim.ExponentialLR(c.LR, s.Gamma)
	default:
		if c.Warmup == 0 {
			return s, nil
		}
		sched = optim.FixedLR(c.LR)
	}
	return s, optim.WarmupLR(sched, c.Warmup)
}

// compare returns an error wrapping ErrCheckpointMismatch naming the
// first setting in which s, the resuming run's, differs from saved, the
// checkpoint's (Epochs may grow). TrainExamples is compared before the
// schedule, whose DecaySteps follow from it.
func (s RunSettings) compare(saved RunSettings) error {
	a, b := reflect.ValueOf(s), reflect.ValueOf(saved)
	order := []int{}
	for i := range a.NumField() {
		switch a.Type().Field(i).Name {
		case "Epochs":
		case "TrainExamples":
			order = append([]int{i}, order...)
		default:
			order = append(order, i)
		}
	}
	for _, i := range order {
		f := a.Type().Field(i)
		if x, y := a.Field(i).Interface(), b.Field(i).Interface(); x != y {
			hint := ""
			switch f.Name {
			case "DecaySteps":
				hint = fmt.Sprintf(" (the %s schedule spans the run's epochs: resume with the checkpoint's %d)", saved.Schedule, saved.Epochs)
			case "DType":
				hint = fmt.Sprintf(" (a run continues in the precision it was trained in: resume with dtype %s)", saved.DType)
			}
			return fmt.Errorf("train: %w: the checkpoint was written with %s = %v, this run has %v%s", ErrCheckpointMismatch, jsonName(f), y, x, hint)
		}
	}
	return nil
}

// jsonName returns the JSON key of the struct field f.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// marshal returns s as a JSON object (it has no non-finite values after
// validation).
func (s RunSettings) marshal() json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // unreachable: plain numbers and strings
	}
	return b
}
