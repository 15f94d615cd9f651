package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// EpochStats is the report of one epoch, printed by Run as one JSON
// object per line with Config.JSON:
//
//	{"epoch":1,"train_loss":0.2853,"test_accuracy":0.9571,"seconds":12.3,"examples_per_second":4878}
//
// Epoch 0 is the report of an evaluation-only run (Config.EvalOnly): its
// TrainLoss is 0 and Seconds and ExamplesPerSecond describe the
// evaluation.
type EpochStats struct {
	// Epoch counts from 1.
	Epoch int `json:"epoch"`
	// TrainLoss is the mean cross-entropy (nats) over the epoch's
	// training examples, each measured in the forward pass of its step.
	TrainLoss float64 `json:"train_loss"`
	// TestAccuracy is the fraction (0..1) of test examples whose logits'
	// argmax equals the label, after the epoch, in evaluation mode.
	TestAccuracy float64 `json:"test_accuracy"`
	// Seconds is the wall time of the epoch's training steps (the test
	// evaluation is not included).
	Seconds float64 `json:"seconds"`
	// ExamplesPerSecond is the number of training examples of the epoch
	// divided by Seconds.
	ExamplesPerSecond float64 `json:"examples_per_second"`
	// Steps is the number of optimizer steps of the epoch (not part of
	// the JSON report).
	Steps int `json:"-"`
	// SkippedSteps is the number of the epoch's steps that the loss
	// scaler of an F16 run skipped because their gradients held Inf or
	// NaN (absent from the JSON when 0).
	SkippedSteps int `json:"skipped_steps,omitempty"`
	// LossScale is the loss scale of an F16 run at the end of the epoch
	// (absent from the JSON for other precisions).
	LossScale float64 `json:"loss_scale,omitempty"`
}

// Result is what Run returns.
type Result struct {
	// Model is the trained model; its parameters live on Device.
	Model nn.Module
	// Device is the autodiff device the model was trained on.
	Device ember.Device
	// Epochs holds one entry per epoch (or the single Epoch 0 entry of
	// an evaluation-only run).
	Epochs []EpochStats
	// StepLosses holds the mean loss of every optimizer step, in order.
	StepLosses []float64
	// TestAccuracy is the last measured test accuracy.
	TestAccuracy float64
}

// Run trains the model cfg describes and returns its per-epoch statistics
// and the trained model. It reports to cfg.Out as it goes (see Config and
// EpochStats) and writes cfg.Save and cfg.Plot at the end. When ctx is
// done it stops after the current step, still writes Save and Plot for
// what was trained, and returns the context's cause with the partial
// Result. When training diverges (a NaN or infinite loss, or an F16 loss
// scaler skipping MaxSkippedSteps steps in a row) it stops there and
// returns a *DivergenceError (wrapping ErrDiverged) naming the step, with
// the partial Result; Save and Plot are not written then. Other errors:
// an invalid Config, missing or corrupt MNIST files (wrapping
// fs.ErrNotExist or data.ErrFormat), an unusable device or one that cannot
// compute in DType, a failed Load or Save, and tensor errors raised during
// training (the *ember.Error caught by ember.Try, wrapped).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if dt, ok := cfg.Device.AutocastDType(); ok {
		// "cpu+autodiff+autocast:bf16" asks for mixed precision.
		if cfg.DType != 0 && cfg.DType != dt {
			return nil, fmt.Errorf("train: the device %v autocasts to %v, but DType is %v", cfg.Device, dt, cfg.DType)
		}
		cfg.DType = dt
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Device.IsAutodiff() && cfg.Device.GradientCheckpointingStrategy() == ember.Balanced {
		cfg.Checkpointing = true // "cpu+autodiff+checkpointing" asks for it
	}
	dev := cfg.Device.Inner()
	if err := dev.Init(); err != nil {
		return nil, err
	}
	if !dev.SupportsDType(cfg.DType) {
		return nil, fmt.Errorf("train: %v cannot compute in %v (DType)", dev, cfg.DType)
	}
	trainSet, testSet, err := datasets(cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, trainSet: trainSet, testSet: testSet, rep: newReporter(cfg)}
	if err := ember.Try(func() { err = r.run(ctx, dev) }); err != nil {
		return r.res, fmt.Errorf("train: %w", err)
	}
	return r.res, err
}

// datasets returns the training and test sets of cfg, capped by Limit
// and TestLimit.
func datasets(cfg Config) (trainSet, testSet data.Dataset, err error) {
	trainSet, testSet = cfg.Train, cfg.Test
	if trainSet == nil {
		if trainSet, err = data.MNIST(cfg.DataDir, "train", data.Normalized()); err != nil {
			return nil, nil, err
		}
	}
	if testSet == nil {
		if testSet, err = data.MNIST(cfg.DataDir, "test", data.Normalized()); err != nil {
			return nil, nil, err
		}
	}
	if err := checkImages("training", trainSet); err != nil {
		return nil, nil, err
	}
	if err := checkImages("test", testSet); err != nil {
		return nil, nil, err
	}
	if cfg.Limit > 0 {
		trainSet = data.Subset(trainSet, 0, min(cfg.Limit, trainSet.Len()))
	}
	if cfg.TestLimit > 0 {
		testSet = data.Subset(testSet, 0, min(cfg.TestLimit, testSet.Len()))
	}
	return trainSet, testSet, nil
}

// checkImages returns an error unless ds's examples are 784 F32 values
// (28×28 images, of any shape) with an I64 class label each.
func checkImages(what string, ds data.Dataset) error {
	s := ds.Schema()
	if s.Features.DType != ember.F32 || s.Features.Size() != imagePixels || s.Targets.DType != ember.I64 || s.Targets.Size() != 1 {
		return fmt.Errorf("train: the %s set has %v; want 784 f32 features (28×28 images) and one i64 class label per example", what, s)
	}
	return nil
}

// runner holds the state of one Run.
type runner struct {
	cfg               Config
	trainSet, testSet data.Dataset
	rep               *reporter
	res               *Result
	// compiled is the compiled training step (Config.Compile), made after
	// the first eager step.
	compiled *compiledStep
	// fdev is the device the batches are made on: the model's autodiff
	// device, with autocast in mixed precision (Config.DType).
	fdev ember.Device
	// scaler is the loss scaler of an F16 run (nil otherwise).
	scaler *optim.GradScaler
	// div watches the steps for divergence.
	div divergence
}

// run is Run after validation; tensor errors panic out of it.
func (r *runner) run(ctx context.Context, dev ember.Device) error {
	cfg := r.cfg
	dev.Seed(cfg.Seed)
	adev := dev.Autodiff()
	if cfg.Checkpointing {
		adev = adev.GradientCheckpointing()
	}
	model, _ := NewModel(cfg.Model, adev)
	r.res = &Result{Model: model, Device: adev}
	r.fdev, r.div = adev, divergence{dtype: cfg.DType}
	switch cfg.DType {
	case ember.F64:
		if err := nn.ToDType(model, ember.F64); err != nil {
			return err
		}
	case ember.BF16, ember.F16:
		r.fdev = adev.Autocast(cfg.DType)
	default:
		// A device configured with another float dtype (DeviceConfig)
		// trains in it: divergence reports name it.
		if ps := model.NamedParameters(); len(ps) > 0 {
			r.div.dtype = ps[0].Param.Value.DType()
		}
	}
	if cfg.Load != "" {
		if err := nn.Load(cfg.Load, model); err != nil {
			return err
		}
	}
	r.rep.start(cfg, r.fdev, nn.NumParams(model), r.trainSet.Len(), r.testSet.Len())

	if cfg.EvalOnly {
		start := time.Now()
		acc, err := Evaluate(model, r.testSet, r.fdev, DefaultEvalBatch)
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		st := EpochStats{TestAccuracy: acc, Seconds: secs, ExamplesPerSecond: float64(r.testSet.Len()) / secs}
		r.res.Epochs = append(r.res.Epochs, st)
		r.res.TestAccuracy = acc
		r.rep.epoch(st, 0)
		return r.finish(model)
	}

	opt := newOptimizer(cfg, model)
	if cfg.DType == ember.F16 {
		r.scaler = optim.NewGradScaler(model.NamedParameters(), cfg.LossScale)
	}
	loader := data.NewLoader(r.trainSet, cfg.Batch, data.LoaderOptions{Shuffle: true, Seed: cfg.Seed})
	defer loader.Close()
	defer func() {
		if r.compiled != nil {
			r.compiled.close()
		}
	}()
	for e := 0; e < cfg.Epochs; e++ {
		st, err := r.epoch(ctx, e, loader, model, opt, r.fdev)
		if err != nil {
			if ctx.Err() != nil {
				// Interrupted: keep what was trained so far.
				if ferr := r.finish(model); ferr != nil {
					return errors.Join(err, ferr)
				}
			}
			return err
		}
		r.res.Epochs = append(r.res.Epochs, st)
		r.res.TestAccuracy = st.TestAccuracy
		r.rep.epoch(st, cfg.Epochs)
	}
	return r.finish(model)
}

// epoch trains one epoch (counted from 0) and evaluates the model.
func (r *runner) epoch(ctx context.Context, e int, loader *data.Loader, model nn.Module, opt optim.Optimizer, adev ember.Device) (EpochStats, error) {
	nn.SetTraining(model, true)
	bar := r.rep.bar(e, r.cfg.Epochs, loader.Len())
	start := time.Now()
	it := loader.Iter(ctx, e)
	defer it.Close()
	var lossSum float64
	examples, steps, skipped := 0, 0, 0
	account := func(loss float64, size int, stepped bool) error {
		lossSum += loss * float64(size)
		examples += size
		steps++
		if !stepped {
			skipped++
		}
		r.res.StepLosses = append(r.res.StepLosses, loss)
		var scale float64
		if r.scaler != nil {
			scale = r.scaler.LossScale()
		}
		if err := r.div.check(len(r.res.StepLosses), e+1, loss, stepped, scale); err != nil {
			bar.finish()
			return err
		}
		if r.cfg.OnStep != nil {
			r.cfg.OnStep(len(r.res.StepLosses), loss)
		}
		bar.step(loss)
		return nil
	}
	// Compiled steps' losses are read back in groups, so that the device
	// runs ahead of the host instead of waiting for each read.
	var pending []pendingLoss
	flush := func() error {
		defer func() { pending = pending[:0] }()
		for _, p := range pending {
			if err := account(p.t.Item(), p.size, true); err != nil {
				return err
			}
		}
		return nil
	}
	for it.Next() {
		b := it.Batch()
		loss, stepped, lt, err := r.step(model, opt, b, adev)
		if err != nil {
			return EpochStats{}, err
		}
		if lt != nil {
			pending = append(pending, pendingLoss{lt, b.Size})
			if len(pending) >= lossReadGroup {
				if err := flush(); err != nil {
					return EpochStats{}, err
				}
			}
			continue
		}
		if err := flush(); err != nil {
			return EpochStats{}, err
		}
		if err := account(loss, b.Size, stepped); err != nil {
			return EpochStats{}, err
		}
	}
	if err := flush(); err != nil {
		return EpochStats{}, err
	}
	bar.finish()
	if r.compiled != nil {
		r.compiled.sync()
	}
	if err := it.Err(); err != nil {
		return EpochStats{}, err
	}
	secs := time.Since(start).Seconds()
	acc, err := Evaluate(model, r.testSet, adev, DefaultEvalBatch)
	if err != nil {
		return EpochStats{}, err
	}
	st := EpochStats{Epoch: e + 1, TestAccuracy: acc, Seconds: secs, Steps: steps, SkippedSteps: skipped}
	if r.scaler != nil {
		st.LossScale = r.scaler.LossScale()
	}
	if examples > 0 {
		st.TrainLoss = lossSum / float64(examples)
		st.ExamplesPerSecond = float64(examples) / secs
	}
	return st, nil
}

// step runs one optimizer step on batch b, made on dev, and returns the
// batch's mean loss and whether the optimizer stepped (an F16 loss scaler
// skips steps whose gradients overflow). With Config.Compile the first
// step runs eagerly, the training step is then captured and compiled for
// batches of that size, and every later batch of that size replays it,
// returning its loss as a tensor (compiledLoss) to be read later; a batch
// of another size (the last, partial one) runs eagerly from the carried
// values.
func (r *runner) step(model nn.Module, opt optim.Optimizer, b data.Batch, dev ember.Device) (loss float64, stepped bool, compiledLoss *ember.Tensor, err error) {
	if !r.cfg.Compile {
		loss, stepped = scaledStep(model, opt, r.scaler, b, dev)
		return loss, stepped, nil, nil
	}
	if r.compiled == nil && len(r.res.StepLosses) > 0 && b.Size == r.cfg.Batch {
		cs, err := newCompiledStep(model, opt, dev, b.Size)
		if err != nil {
			return 0, false, nil, err
		}
		r.compiled = cs
	}
	if r.compiled != nil && r.compiled.fits(b) {
		return 0, true, r.compiled.run(b), nil
	}
	if r.compiled != nil {
		r.compiled.sync()
	}
	loss, stepped = scaledStep(model, opt, r.scaler, b, dev)
	return loss, stepped, nil, nil
}

// lossReadGroup is the number of compiled steps whose losses are read
// back together.
const lossReadGroup = 16

// pendingLoss is the loss of a compiled step, not read back yet, and the
// size of its batch.
type pendingLoss struct {
	t    *ember.Tensor
	size int
}

// step runs one optimizer step on batch b and returns the batch's mean
// loss: forward, cross-entropy, backward, update.
func step(model nn.Module, opt optim.Optimizer, b data.Batch, adev ember.Device) float64 {
	loss, _ := scaledStep(model, opt, nil, b, adev)
	return loss
}

// scaledStep is step on dev (the model's autodiff device, with autocast
// in mixed precision) with an optional loss scaler: the backward pass
// starts from the scaled loss and the scaler unscales the gradients and
// steps, or skips the step when they overflowed, then updates its scale.
// It reports whether the optimizer stepped.
func scaledStep(model nn.Module, opt optim.Optimizer, scaler *optim.GradScaler, b data.Batch, dev ember.Device) (loss float64, stepped bool) {
	x := ember.FromFloats(b.Images, []int{b.Size, imageChannels, imageSize, imageSize}, dev)
	y := ember.FromInts(b.Labels, []int{b.Size}, dev)
	l := nn.CrossEntropy(model.Forward(x), y)
	if scaler == nil {
		opt.Step(l.Backward())
		return l.Item(), true
	}
	stepped = scaler.Step(opt, scaler.Scale(l).Backward())
	scaler.Update()
	return l.Item(), stepped
}

// finish writes the Save and Plot files.
func (r *runner) finish(model nn.Module) error {
	if r.cfg.Save != "" {
		if err := nn.Save(r.cfg.Save, model); err != nil {
			return err
		}
	}
	if r.cfg.Plot != "" && len(r.res.StepLosses) > 0 {
		if err := WritePlot(r.cfg.Plot, r.res); err != nil {
			return err
		}
	}
	return nil
}

// newOptimizer builds the optimizer cfg names over the model's parameters.
func newOptimizer(cfg Config, model nn.Module) optim.Optimizer {
	params := model.NamedParameters()
	switch cfg.Optimizer {
	case "sgd":
		return optim.NewSGD(params, optim.SGDConfig{LR: cfg.LR, Momentum: DefaultSGDMomentum})
	case "adamw":
		return optim.NewAdamW(params, optim.AdamConfig{LR: cfg.LR, WeightDecay: DefaultAdamWWeightDecay})
	default:
		return optim.NewAdam(params, optim.AdamConfig{LR: cfg.LR})
	}
}
