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
//	{"record":"epoch","epoch":1,"step":938,"train_loss":0.2853,"test_accuracy":0.9571,"seconds":12.3,"examples_per_second":4878}
//
// Epoch 0 is the report of an evaluation-only run (Config.EvalOnly): its
// TrainLoss is 0 and Seconds and ExamplesPerSecond describe the
// evaluation.
type EpochStats struct {
	// Epoch counts from 1.
	Epoch int `json:"epoch"`
	// Step is the number of optimizer steps taken when the epoch ended,
	// counted over the whole run (a resumed run included).
	Step int `json:"step"`
	// TrainLoss is the mean cross-entropy (nats) over the epoch's
	// training examples, each measured in the forward pass of its step.
	TrainLoss float64 `json:"train_loss"`
	// TestAccuracy is the fraction (0..1) of test examples whose logits'
	// argmax equals the label, after the epoch, in evaluation mode.
	TestAccuracy float64 `json:"test_accuracy"`
	// Seconds is the wall time of the epoch's training steps (the test
	// evaluation is not included; for an epoch resumed from a
	// checkpoint, the part after the resume).
	Seconds float64 `json:"seconds"`
	// ExamplesPerSecond is the number of training examples of the epoch
	// taken in Seconds divided by Seconds.
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
	// StepLosses holds the mean loss of every optimizer step of this
	// run, in order: StepLosses[i] is the loss of step StartStep+i+1.
	StepLosses []float64
	// StartStep is the number of steps taken before this run: 0, or the
	// checkpoint's step count for a resumed run (Config.Resume).
	StartStep int
	// TestAccuracy is the last measured test accuracy.
	TestAccuracy float64
	// Notes holds remarks about the run that are not errors (a random
	// state that could not be restored on resume); Run also prints them.
	Notes []string
}

// Run trains the model cfg describes and returns its per-epoch statistics
// and the trained model. It reports to cfg.Out as it goes (see Config and
// EpochStats) and writes cfg.Save, cfg.Checkpoint and cfg.Plot at the
// end. When ctx is done it stops after the current step, still writes
// Save, Checkpoint and Plot for what was trained, and returns the
// context's cause with the partial Result. When training diverges (a NaN
// or infinite loss, a loss more than cfg.DivergenceFactor times the
// first step's, or an F16 loss scaler skipping MaxSkippedSteps steps in
// a row) it stops at that step and returns a *DivergedError (wrapping
// ErrDiverged) naming the step, with the partial Result; only Plot is
// written then. Other errors: an invalid Config, missing or corrupt
// MNIST files (wrapping fs.ErrNotExist or data.ErrFormat), an unusable
// device or one that cannot compute in DType, a failed Load, Resume
// (ErrInvalidCheckpoint, ErrCheckpointMismatch), Save or Checkpoint, and
// tensor errors raised during training (the *ember.Error caught by
// ember.Try, wrapped).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if dt, ok := cfg.Device.AutocastDType(); ok {
		// "cpu+autodiff+autocast:bf16" asks for mixed precision.
		if cfg.DType != 0 && cfg.DType != dt {
			return nil, fmt.Errorf("train: the device %v autocasts to %v, but the run's dtype is %v", cfg.Device, dt, cfg.DType)
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
	var resume *Checkpoint
	if cfg.Resume != "" {
		// Read before anything else, so that a bad file fails fast.
		if resume, err = LoadCheckpoint(cfg.Resume); err != nil {
			return nil, err
		}
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
	r := &runner{cfg: cfg, trainSet: trainSet, testSet: testSet, rep: newReporter(cfg), resume: resume}
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
	// resume is the checkpoint to continue from (Config.Resume).
	resume *Checkpoint
	// state is the progress, as a checkpoint records it.
	state State
	// settings are the resolved settings, sched the learning-rate
	// schedule (nil for a constant rate).
	settings RunSettings
	sched    optim.Schedule
	// model, opt and adev are the run's model, optimizer and autodiff
	// device.
	model nn.Module
	opt   optim.Optimizer
	adev  ember.Device
	// compiled is the compiled training step (Config.Compile), made after
	// the first eager step.
	compiled *compiledStep
	// taken counts the steps started, over the whole run: state.Step
	// plus the compiled steps whose losses are not read yet.
	taken int
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
	r.model, r.adev = model, adev
	r.res = &Result{Model: model, Device: adev}
	r.fdev, r.div = adev, divergence{dtype: cfg.DType, factor: cfg.DivergenceFactor}
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
		if err := loadParameters(cfg.Load, model); err != nil {
			return err
		}
	}

	loader := data.NewLoader(r.trainSet, cfg.Batch, data.LoaderOptions{Shuffle: true, Seed: cfg.Seed})
	defer loader.Close()
	r.settings, r.sched = cfg.settings(loader.Len(), r.trainSet.Len())
	if cfg.EvalOnly {
		r.rep.start(cfg, r.header(loader.Len()))
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
		return r.finish(model, false)
	}

	r.opt = newOptimizer(cfg, model)
	if cfg.DType == ember.F16 {
		r.scaler = optim.NewGradScaler(model.NamedParameters(), cfg.LossScale)
	}
	if r.resume != nil {
		if err := r.restore(dev); err != nil {
			return err
		}
	}
	r.rep.start(cfg, r.header(loader.Len()))
	for _, n := range r.res.Notes {
		r.rep.note(n)
	}
	defer func() {
		if r.compiled != nil {
			r.compiled.close()
		}
	}()
	for e := r.state.Epoch; e < cfg.Epochs; e++ {
		st, err := r.epoch(ctx, e, loader)
		if err != nil {
			if ctx.Err() != nil && !errors.Is(err, ErrDiverged) {
				// Interrupted: keep what was trained so far.
				if ferr := r.finish(model, true); ferr != nil {
					return errors.Join(err, ferr)
				}
			} else if errors.Is(err, ErrDiverged) {
				if ferr := r.finish(model, false); ferr != nil {
					return errors.Join(err, ferr)
				}
			}
			return err
		}
		r.res.Epochs = append(r.res.Epochs, st)
		r.res.TestAccuracy = st.TestAccuracy
		r.rep.epoch(st, cfg.Epochs)
		if cfg.Checkpoint != "" && e+1 < cfg.Epochs {
			if err := r.writeCheckpoint(); err != nil {
				return err
			}
		}
	}
	return r.finish(model, true)
}

// restore continues from the checkpoint r.resume: its settings must be
// the run's, and it must have steps left to take.
func (r *runner) restore(dev ember.Device) error {
	c := r.resume
	saved, err := c.RunSettings()
	if err != nil {
		return err
	}
	if err := r.settings.compare(saved); err != nil {
		return err
	}
	if c.State.Epoch >= r.cfg.Epochs {
		return fmt.Errorf("train: the checkpoint has completed %d of %d epochs; give more epochs to continue", c.State.Epoch, r.cfg.Epochs)
	}
	_, note, err := c.restore(r.model, r.opt, r.scaler, dev)
	if err != nil {
		return err
	}
	if note != "" {
		r.res.Notes = append(r.res.Notes, note)
	}
	r.state = c.State
	r.res.StartStep = c.State.Step
	r.taken = c.State.Step
	return nil
}

// header describes the run for the report's first line or record.
func (r *runner) header(perEpoch int) runHeader {
	return runHeader{
		settings: r.settings, device: r.fdev, params: nn.NumParams(r.model), trainN: r.trainSet.Len(), testN: r.testSet.Len(),
		perEpoch: perEpoch, state: r.state,
	}
}

// epoch trains one epoch (counted from 0), from the checkpoint's batch
// when it is the resumed one, and evaluates the model.
func (r *runner) epoch(ctx context.Context, e int, loader *data.Loader) (EpochStats, error) {
	cfg := r.cfg
	nn.SetTraining(r.model, true)
	st := &r.state
	if e != st.Epoch || st.EpochStep > loader.Len() {
		// A new epoch (a resumed epoch keeps its position and sums).
		st.Epoch, st.EpochStep, st.EpochLossSum, st.EpochExamples, st.EpochSkipped = e, 0, 0, 0, 0
	}
	first := st.EpochStep
	bar := r.rep.bar(e, cfg.Epochs, loader.Len(), first)
	start := time.Now()
	it := loader.IterFrom(ctx, e, first)
	defer it.Close()
	startExamples := st.EpochExamples
	account := func(sr stepResult, size int) error {
		st.Step++
		st.EpochStep++
		st.EpochLossSum += sr.loss * float64(size)
		st.EpochExamples += size
		r.res.StepLosses = append(r.res.StepLosses, sr.loss)
		if cfg.OnStep != nil {
			cfg.OnStep(st.Step, sr.loss)
		}
		if cfg.JSONSteps {
			rec := StepRecord{Step: st.Step, Epoch: e + 1, Batch: st.EpochStep, Loss: sr.loss, LR: r.lr(st.Step - 1),
				LossScale: sr.scale, Skipped: !sr.stepped}
			if sr.gradNorm != nil {
				v := sr.gradNorm.Item()
				rec.GradNorm = &v
			}
			r.rep.step(rec)
		}
		bar.step(sr.loss)
		if err := r.div.check(st, e+1, sr.loss, sr.stepped, sr.scale); err != nil {
			bar.finish()
			return err
		}
		return nil
	}
	// Compiled steps' losses are read back in groups, so that the device
	// runs ahead of the host instead of waiting for each read.
	var pending []pendingLoss
	flush := func() error {
		defer func() { pending = pending[:0] }()
		for _, p := range pending {
			if err := account(stepResult{loss: p.t.Item(), stepped: true}, p.size); err != nil {
				return err
			}
		}
		return nil
	}
	for it.Next() {
		b := it.Batch()
		sr, err := r.step(b)
		if err != nil {
			return EpochStats{}, err
		}
		if sr.compiled != nil {
			pending = append(pending, pendingLoss{sr.compiled, b.Size})
		} else if err := flush(); err != nil {
			return EpochStats{}, err
		} else if err := account(sr, b.Size); err != nil {
			return EpochStats{}, err
		}
		// Losses are read and checkpoints written at every group's end,
		// and at each multiple of CheckpointEvery.
		due := cfg.CheckpointEvery > 0 && r.taken%cfg.CheckpointEvery == 0
		if len(pending) >= lossReadGroup || due && len(pending) > 0 {
			if err := flush(); err != nil {
				return EpochStats{}, err
			}
		}
		if due {
			if err := r.writeCheckpoint(); err != nil {
				return EpochStats{}, err
			}
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
	acc, err := Evaluate(r.model, r.testSet, r.fdev, DefaultEvalBatch)
	if err != nil {
		return EpochStats{}, err
	}
	out := EpochStats{Epoch: e + 1, Step: st.Step, TestAccuracy: acc, Seconds: secs, Steps: st.EpochStep, SkippedSteps: st.EpochSkipped}
	if r.scaler != nil {
		out.LossScale = r.scaler.LossScale()
	}
	if st.EpochExamples > 0 {
		out.TrainLoss = st.EpochLossSum / float64(st.EpochExamples)
		out.ExamplesPerSecond = float64(st.EpochExamples-startExamples) / secs
	}
	st.Epoch, st.EpochStep, st.EpochLossSum, st.EpochExamples, st.EpochSkipped = e+1, 0, 0, 0, 0
	return out, nil
}

// lr returns the learning rate of step k (counted from 0).
func (r *runner) lr(k int) float64 {
	if r.sched == nil {
		return r.cfg.LR
	}
	return r.sched.LR(k)
}

// stepResult is what one training step of a Run gives back.
type stepResult struct {
	// loss is the batch's mean loss (eager steps).
	loss float64
	// compiled is the loss of a compiled step, as a tensor to be read
	// later (nil for an eager step).
	compiled *ember.Tensor
	// stepped reports that the optimizer stepped (an F16 loss scaler
	// skips the steps whose gradients overflow); scale is the loss scale
	// after the step (0 without a scaler).
	stepped bool
	scale   float64
	// gradNorm is the gradients' norm before clipping, with ClipNorm on
	// eager steps (nil otherwise).
	gradNorm *ember.Tensor
}

// step runs one optimizer step on batch b. The learning rate is the
// schedule's for the step. With Config.Compile the first step runs
// eagerly, the training step is then captured and compiled for batches
// of that size, and every later batch of that size replays it, returning
// its loss as a tensor (stepResult.compiled) to be read later; a batch of
// another size (the last, partial one) runs eagerly from the carried
// values.
func (r *runner) step(b data.Batch) (stepResult, error) {
	k := r.taken // this step's number, from 0 (compiled steps not accounted yet included)
	r.taken++
	if r.sched != nil {
		r.opt.SetLR(r.sched.LR(k))
	}
	if !r.cfg.Compile {
		return r.eagerStep(b), nil
	}
	if r.compiled == nil && len(r.res.StepLosses) > 0 && b.Size == r.cfg.Batch {
		cs, err := newCompiledStep(r.model, r.opt, r.fdev, b.Size, r.cfg.ClipNorm, r.cfg.ClipValue)
		if err != nil {
			return stepResult{}, err
		}
		r.compiled = cs
	}
	if r.compiled != nil && r.compiled.fits(b) {
		return stepResult{compiled: r.compiled.run(b), stepped: true}, nil
	}
	if r.compiled != nil {
		r.compiled.sync()
	}
	return r.eagerStep(b), nil
}

// eagerStep runs one optimizer step on batch b, made on the run's batch
// device (autocast in mixed precision): forward, cross-entropy, then
// update's backward pass, loss scaling, clipping and optimizer step.
func (r *runner) eagerStep(b data.Batch) stepResult {
	x := ember.FromFloats(b.Images, []int{b.Size, imageChannels, imageSize, imageSize}, r.fdev)
	y := ember.FromInts(b.Labels, []int{b.Size}, r.fdev)
	loss := nn.CrossEntropy(r.model.Forward(x), y)
	stepped, scale, gn := update(loss, r.model.NamedParameters(), r.opt, r.scaler, r.cfg.ClipNorm, r.cfg.ClipValue)
	return stepResult{loss: loss.Item(), stepped: stepped, scale: scale, gradNorm: gn}
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

// writeCheckpoint writes Config.Checkpoint from the current state.
func (r *runner) writeCheckpoint() error {
	if r.compiled != nil {
		r.compiled.sync()
	}
	c, err := capture(r.model, r.opt, r.scaler, r.state, r.adev, r.settings.marshal(), nil)
	if err != nil {
		return err
	}
	return SaveCheckpoint(r.cfg.Checkpoint, c)
}

// finish writes the Save and Plot files, and the checkpoint when
// checkpoint is set (not after divergence).
func (r *runner) finish(model nn.Module, checkpoint bool) error {
	if checkpoint && r.cfg.Checkpoint != "" && r.opt != nil {
		if err := r.writeCheckpoint(); err != nil {
			return err
		}
	}
	if checkpoint && r.cfg.Save != "" {
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

// step runs one eager optimizer step of model with opt on batch b, made
// on fdev (the model's autodiff device, with autocast in mixed
// precision), with the loss scaler scaler when non-nil and without
// clipping, and returns the batch's mean loss.
func step(model nn.Module, opt optim.Optimizer, scaler *optim.GradScaler, b data.Batch, fdev ember.Device) float64 {
	r := &runner{model: model, opt: opt, scaler: scaler, fdev: fdev}
	return r.eagerStep(b).loss
}
