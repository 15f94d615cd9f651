package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// LossFunc computes a batch's loss from the model's output pred and the
// batch's targets: a scalar float tensor, the mean over the batch's
// examples (nn.MSE and nn.CrossEntropy are LossFuncs).
type LossFunc func(pred, target *ember.Tensor) *ember.Tensor

// ErrStop, returned by Trainer.OnEpoch, ends training after that epoch:
// Fit returns without an error, with State.Stopped set.
var ErrStop = errors.New("train: stop training")

// Trainer fits any model to any data.Dataset (in the manner of Keras'
// Model.fit and Lightning's Trainer): each epoch it runs the optimizer over
// shuffled mini-batches of the training set, then measures the loss and
// the metrics on the validation set, reports, and applies early stopping.
// Only Model is required:
//
//	t := &train.Trainer{Model: model, Epochs: 20, Metrics: []train.Metric{train.Accuracy()},
//		ValidationSplit: 0.2, EarlyStopping: &train.EarlyStopping{Patience: 3, RestoreBest: true}}
//	hist, err := t.Fit(ctx, ds)
//
// Batches come from a data.Loader that places them on the device while
// the previous step runs: features as the model's input x [B, ...] and
// targets as the loss's target [B, ...], dtypes as the dataset has them.
// Runs are reproducible: the shuffle order of epoch e is
// data.Permutation(n, Seed, e) and the validation split depends on Seed
// alone, so the same model initialization, seed and device give the same
// losses. The progress of training is the State, which Fit continues
// from: a second Fit call (or one on a Trainer whose State was restored)
// trains the epochs State.Epoch+1..Epochs. A Trainer is used from one
// goroutine at a time.
type Trainer struct {
	// Model is the network, a function of the batch's features; its
	// parameters must live on an autodiff device. See FuncModule for a
	// model given as a function.
	Model nn.Module
	// Loss is minimized; nil means nn.CrossEntropy for integer targets
	// and nn.MSE for float targets.
	Loss LossFunc
	// Optimizer updates the model's parameters; nil makes Fit set it to
	// Adam (learning rate 1e-3) over Model.NamedParameters().
	Optimizer optim.Optimizer
	// GradScaler, when non-nil, scales the loss before each backward pass
	// and unscales the gradients before each optimizer step, skipping
	// the steps whose gradients overflow (dynamic loss scaling for F16
	// mixed precision; see optim.GradScaler). Make it over the
	// parameters the Optimizer updates. With ClipNorm or ClipValue the
	// gradients are unscaled before they are clipped (PyTorch's recipe).
	// Its scale and progress are part of the Trainer's Checkpoint.
	GradScaler *optim.GradScaler
	// Metrics are measured on the training batches (as the steps see
	// them, in training mode) and on the validation set, and reported
	// under their names and "val_" + their names.
	Metrics []Metric
	// Device is where batches are placed and the model runs; the zero
	// Device means the device of the model's first parameter. Fit
	// enables autodiff on it. For mixed-precision training keep the
	// parameters in F32 and set Device to their device with autocast,
	// e.g. dev.Autodiff().Autocast(ember.BF16) (ember.Device.Autocast;
	// add a GradScaler for F16): the batches are made there, so the
	// forward and backward passes run in mixed precision while the
	// optimizer updates the F32 parameters.
	Device ember.Device
	// Epochs is the number of passes over the training set; 0 means 1.
	Epochs int
	// BatchSize is the number of examples per optimizer step; 0 means
	// DefaultBatch (64).
	BatchSize int
	// EvalBatchSize is the batch size of validation and Evaluate; 0
	// means BatchSize.
	EvalBatchSize int
	// NoShuffle visits the training examples in dataset order; by
	// default each epoch has its own seeded order.
	NoShuffle bool
	// Seed selects the shuffle orders and the validation split. It does
	// not initialize the model, whose parameters exist before Fit.
	Seed uint64
	// DropLast skips each epoch's final partial batch.
	DropLast bool
	// Prefetch is the number of batches prepared ahead
	// (data.LoaderOptions.Prefetch); 0 means data.DefaultPrefetch.
	Prefetch int
	// Validation is the dataset the model is measured on after every
	// epoch, of the training set's Schema.
	Validation data.Dataset
	// ValidationSplit, in (0, 1), holds out that fraction of Fit's
	// dataset as the validation set instead (data.RandomSplit with a seed
	// derived from Seed); 0 means none. Setting both is an error.
	ValidationSplit float64
	// EarlyStopping, when non-nil, stops training once its monitored
	// value stops improving, and may restore the best epoch's
	// parameters.
	EarlyStopping *EarlyStopping
	// OnEpoch, when non-nil, is called after every epoch with its
	// report. Returning ErrStop ends training after the epoch; another
	// error aborts Fit, which returns it.
	OnEpoch func(EpochReport) error
	// OnStep, when non-nil, is called after every optimizer step with
	// the step number (State.Step, counted from 1) and the batch's loss.
	OnStep func(step int, loss float64)
	// Out, when non-nil, receives one line per epoch, e.g.
	//
	//	epoch 3/20  loss 0.2114  accuracy 0.9375  val_loss 0.1933  val_accuracy 0.9500  0.4 s
	Out io.Writer
	// State is the progress of training, updated by Fit.
	State State

	// Schedule, when non-nil, sets the optimizer's learning rate before
	// every step: Schedule.LR(State.Step), the step number counted from 0
	// over the whole training (see package optim's schedules).
	Schedule optim.Schedule
	// ClipNorm, when > 0, scales the gradients before each update so
	// that their total L2 norm is at most ClipNorm (optim.ClipGradNorm).
	ClipNorm float64
	// ClipValue, when > 0, limits each gradient element to
	// [−ClipValue, ClipValue] before each update (optim.ClipGradValue),
	// before ClipNorm when both are set.
	ClipValue float64
	// DivergenceFactor: a step whose loss exceeds DivergenceFactor times
	// the first step's loss (State.FirstLoss) ends Fit with an error
	// wrapping ErrDiverged that names the step; 0 means
	// DefaultDivergenceFactor, a negative value turns this check off. A
	// NaN or infinite loss always ends Fit that way, as do
	// MaxSkippedSteps consecutive steps skipped by the GradScaler.
	// Otherwise it must be > 1.
	DivergenceFactor float64
	// CheckpointPath, when non-empty, is the file Fit writes a checkpoint
	// (Checkpoint) to after every epoch, every CheckpointEvery steps, and
	// when its context is done; Resume continues from it. A diverged
	// step leaves the last checkpoint as it was.
	CheckpointPath string
	// CheckpointEvery, when positive, also writes CheckpointPath every
	// that many steps (State.Step a multiple of it).
	CheckpointEvery int

	// best holds the parameters and buffers of the best epoch when
	// EarlyStopping.RestoreBest is set.
	best []*ember.Tensor
	// settings are those of the last Fit (see trainerSettings); resumed,
	// those of the checkpoint given to Resume, compared by the next Fit.
	settings, resumed *trainerSettings
}

// State is a Trainer's progress, plain data meant to be saved beside the
// model's parameters and optimizer state to resume training later.
type State struct {
	// Epoch is the number of epochs completed.
	Epoch int `json:"epoch"`
	// Step is the number of optimizer steps taken.
	Step int `json:"step"`
	// BestEpoch is the epoch (counted from 1) whose monitored value was
	// the best so far, 0 before any or without EarlyStopping.
	BestEpoch int `json:"best_epoch"`
	// Best is that value (finite), meaningful when BestEpoch > 0.
	Best float64 `json:"best"`
	// Wait is the number of epochs since BestEpoch without improvement.
	Wait int `json:"wait"`
	// Stopped reports that early stopping or OnEpoch ended training;
	// Fit does nothing more until it is cleared.
	Stopped bool `json:"stopped"`
	// EpochStep is the number of batches of epoch Epoch+1 already taken
	// (0 between epochs): Fit resumes that epoch at this batch.
	EpochStep int `json:"epoch_step"`
	// EpochLossSum is the sum of loss × batch size over those batches,
	// so that the resumed epoch reports the mean loss of all its batches.
	EpochLossSum float64 `json:"epoch_loss_sum"`
	// EpochExamples is the number of examples in those batches.
	EpochExamples int `json:"epoch_examples"`
	// FirstLoss is the loss of the run's first step, the reference of
	// divergence detection (see DivergenceFactor); 0 before it.
	FirstLoss float64 `json:"first_loss"`
	// ConsecutiveSkipped is the number of steps up to Step that a loss
	// scaler (GradScaler) skipped in a row for non-finite gradients;
	// MaxSkippedSteps of them end training (see DivergedError).
	ConsecutiveSkipped int `json:"consecutive_skipped,omitempty"`
	// EpochSkipped is the number of steps of epoch Epoch+1 that a loss
	// scaler skipped (0 between epochs; Run reports it as
	// EpochStats.SkippedSteps).
	EpochSkipped int `json:"epoch_skipped,omitempty"`
}

// check returns an error for a State that no run can reach: negative
// counts or sums, or a non-finite loss.
func (s State) check() error {
	switch {
	case s.Epoch < 0 || s.Step < 0 || s.BestEpoch < 0 || s.Wait < 0 || s.EpochStep < 0 || s.EpochExamples < 0 ||
		s.ConsecutiveSkipped < 0 || s.EpochSkipped < 0:
		return fmt.Errorf("negative count in %+v", s)
	case s.EpochStep > s.Step:
		return fmt.Errorf("epoch_step %d exceeds step %d", s.EpochStep, s.Step)
	case s.ConsecutiveSkipped > s.Step || s.EpochSkipped > s.EpochStep:
		return fmt.Errorf("more skipped steps than steps in %+v", s)
	case !finite(s.EpochLossSum) || !finite(s.FirstLoss) || !finite(s.Best):
		return fmt.Errorf("non-finite loss in %+v", s)
	}
	return nil
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// EpochReport is the outcome of one epoch.
type EpochReport struct {
	// Epoch counts from 1; Epochs is the number configured.
	Epoch, Epochs int
	// Step is State.Step after the epoch.
	Step int
	// Values holds the epoch's measurements by name: "loss" (the
	// example-weighted mean of the steps' losses), each metric's name
	// (over the training batches), and with a validation set "val_loss"
	// and "val_" + each metric's name.
	Values map[string]float64
	// Seconds is the wall time of the epoch, validation included.
	Seconds float64
	// Improved reports that the early-stopping value improved (always
	// false without EarlyStopping).
	Improved bool
	// Stop reports that training ends after this epoch (early stopping
	// or ErrStop from OnEpoch).
	Stop bool
}

// History is what Fit returns: the reports of the epochs it ran.
type History struct {
	// Epochs holds one report per epoch run by this Fit call.
	Epochs []EpochReport
	// StepLosses holds the loss of every step of this Fit call, in order.
	StepLosses []float64
	// State is the Trainer's State when Fit returned.
	State State
	// Restored reports that the best epoch's parameters were put back
	// (EarlyStopping.RestoreBest).
	Restored bool
}

// FuncModule returns a Module whose Forward is forward and whose
// parameters are params, for a model written as a plain function (a
// closure reading the params' Values). It panics if forward is nil.
func FuncModule(forward func(x *ember.Tensor) *ember.Tensor, params []nn.NamedParam) nn.Module {
	if forward == nil {
		panic("train: FuncModule: nil forward function")
	}
	return funcModule{forward, params}
}

type funcModule struct {
	forward func(*ember.Tensor) *ember.Tensor
	params  []nn.NamedParam
}

func (m funcModule) Forward(x *ember.Tensor) *ember.Tensor { return m.forward(x) }
func (m funcModule) NamedParameters() []nn.NamedParam      { return m.params }

// fitRun is a Trainer's configuration resolved for one call.
type fitRun struct {
	dev              ember.Device
	loss             LossFunc
	epochs           int
	batch, evalBatch int
	trainSet, valSet data.Dataset
	stop             *stopper
	// div watches the steps for divergence.
	div divergence
}

// resolve fills in the defaults for ds (the training or evaluation set)
// and validates the configuration.
func (t *Trainer) resolve(ds data.Dataset, training bool) (*fitRun, error) {
	if t.Model == nil {
		return nil, errors.New("train: Trainer.Model is nil")
	}
	if ds == nil {
		return nil, errors.New("train: nil dataset")
	}
	r := &fitRun{dev: t.Device, loss: t.Loss, epochs: t.Epochs, batch: t.BatchSize, evalBatch: t.EvalBatchSize, trainSet: ds}
	params := t.Model.NamedParameters()
	if r.dev.IsZero() {
		if len(params) == 0 || params[0].Param == nil || params[0].Param.Value == nil {
			return nil, errors.New("train: the model has no parameters to take the device from; set Trainer.Device")
		}
		r.dev = params[0].Param.Value.Device()
	}
	r.div.dtype = ember.F32 // the precision divergence errors name
	if dt, ok := r.dev.AutocastDType(); ok {
		r.div.dtype = dt
	} else if len(params) > 0 && params[0].Param != nil && params[0].Param.Value != nil {
		r.div.dtype = params[0].Param.Value.DType()
	}
	if training {
		if !r.dev.IsAutodiff() {
			r.dev = r.dev.Autodiff()
		}
		for _, p := range params {
			if p.Param == nil || p.Param.Value == nil {
				return nil, fmt.Errorf("train: parameter %q is nil", p.Name)
			}
			if d := p.Param.Value.Device(); !d.IsAutodiff() {
				return nil, fmt.Errorf("train: parameter %q is on %v, which does not record gradients; make the model on %v.Autodiff()", p.Name, d, d)
			}
		}
	}
	if r.epochs == 0 {
		r.epochs = 1
	}
	if r.batch == 0 {
		r.batch = DefaultBatch
	}
	if r.evalBatch == 0 {
		r.evalBatch = r.batch
	}
	switch {
	case r.epochs < 0:
		return nil, fmt.Errorf("train: Trainer.Epochs %d, want >= 1 (0 = 1)", r.epochs)
	case r.batch < 0 || r.evalBatch < 0:
		return nil, fmt.Errorf("train: batch sizes %d and %d, want >= 1 (0 = default)", r.batch, r.evalBatch)
	case t.Prefetch < data.NoPrefetch:
		return nil, fmt.Errorf("train: Trainer.Prefetch %d, want >= 0 or data.NoPrefetch", t.Prefetch)
	case !finite(t.ClipNorm) || t.ClipNorm < 0 || !finite(t.ClipValue) || t.ClipValue < 0:
		return nil, fmt.Errorf("train: Trainer.ClipNorm %g and ClipValue %g, want finite numbers >= 0 (0 = no clipping)", t.ClipNorm, t.ClipValue)
	case !finite(t.DivergenceFactor) || t.DivergenceFactor > 0 && t.DivergenceFactor <= 1:
		return nil, fmt.Errorf("train: Trainer.DivergenceFactor %g, want a number > 1 (0 = %d, negative = off)", t.DivergenceFactor, DefaultDivergenceFactor)
	case t.CheckpointEvery < 0 || t.CheckpointEvery > 0 && t.CheckpointPath == "":
		return nil, fmt.Errorf("train: Trainer.CheckpointEvery %d, want >= 0, with a CheckpointPath", t.CheckpointEvery)
	}
	r.div.factor = t.DivergenceFactor
	if r.div.factor == 0 {
		r.div.factor = DefaultDivergenceFactor
	}
	schema := ds.Schema()
	if err := schema.Validate(max(ds.Len(), r.batch, r.evalBatch)); err != nil {
		return nil, fmt.Errorf("train: dataset schema: %w", err)
	}
	if r.loss == nil {
		switch dt := schema.Targets.DType; {
		case dt.IsInt():
			r.loss = nn.CrossEntropy
		case dt.IsFloat():
			r.loss = nn.MSE
		default:
			return nil, fmt.Errorf("train: no default loss for %v targets; set Trainer.Loss", dt)
		}
	}
	if !training {
		return r, nil
	}
	if f := t.ValidationSplit; f != 0 {
		if !(f > 0 && f < 1) {
			return nil, fmt.Errorf("train: Trainer.ValidationSplit %v, want a fraction in (0, 1)", f)
		}
		if t.Validation != nil {
			return nil, errors.New("train: both Trainer.Validation and Trainer.ValidationSplit are set")
		}
		r.trainSet, r.valSet = data.RandomSplit(ds, f, t.Seed^splitSeed)
		if r.trainSet.Len() == 0 || r.valSet.Len() == 0 {
			return nil, fmt.Errorf("train: ValidationSplit %v of %d examples leaves %d for training and %d for validation", f, ds.Len(), r.trainSet.Len(), r.valSet.Len())
		}
	} else if t.Validation != nil {
		r.valSet = t.Validation
		if vs := r.valSet.Schema(); !vs.Equal(schema) {
			return nil, fmt.Errorf("train: the validation set has %v, the training set %v", vs, schema)
		}
		if r.valSet.Len() == 0 {
			return nil, errors.New("train: the validation set is empty")
		}
	}
	var err error
	if r.stop, err = t.EarlyStopping.resolve(r.valSet != nil, t.Metrics); err != nil {
		return nil, err
	}
	return r, nil
}

// splitSeed is mixed into Seed for the validation split, so that the
// split's permutation is not the first epoch's shuffle.
const splitSeed = 0x243f6a8885a308d3

// Fit trains the model on ds for the remaining epochs (State.Epoch+1 to
// Epochs) and returns their reports. It stops early when EarlyStopping or
// OnEpoch says so. When ctx is done it stops after the current step and
// returns the context's cause with the History so far (the parameters
// are then those of the last step). Errors: an invalid configuration (a
// nil Model, parameters not on an autodiff device, a bad batch size or
// split, an unknown monitored name, a validation set of another
// schema), no batch to train on, the dataset's errors, tensor errors
// raised by the model, the loss or a metric (the *ember.Error caught by
// ember.Try, wrapped), OnEpoch's errors, a failed checkpoint, and a
// *DivergedError (wrapping ErrDiverged) when a step's loss is NaN or
// infinite or more than DivergenceFactor times the first step's, or the
// GradScaler skipped MaxSkippedSteps steps in a row: Fit stops at that
// step. Fit leaves the model in evaluation mode.
func (t *Trainer) Fit(ctx context.Context, ds data.Dataset) (*History, error) {
	r, err := t.resolve(ds, true)
	if err != nil {
		return nil, err
	}
	t.ensureOptimizer()
	t.settings = t.currentSettings(r)
	if t.resumed != nil {
		if err := t.settings.compare(t.resumed); err != nil {
			return nil, err
		}
		t.resumed = nil
	}
	hist := &History{}
	loader := data.NewLoader(r.trainSet, r.batch, data.LoaderOptions{
		Shuffle: !t.NoShuffle, Seed: t.Seed, DropLast: t.DropLast, Prefetch: t.Prefetch, Device: r.dev,
	})
	defer loader.Close()
	if loader.Len() == 0 {
		return nil, fmt.Errorf("train: no batch to train on (%d examples, batch size %d, DropLast %v)", r.trainSet.Len(), r.batch, t.DropLast)
	}
	defer nn.SetTraining(t.Model, false)
	for t.State.Epoch < r.epochs && !t.State.Stopped {
		rep, err := t.epoch(ctx, r, loader, hist)
		if err != nil {
			hist.State = t.State
			if ctx.Err() != nil && !errors.Is(err, ErrDiverged) && t.CheckpointPath != "" {
				// Interrupted: keep the progress.
				if cerr := t.writeCheckpoint(); cerr != nil {
					return hist, errors.Join(err, cerr)
				}
			}
			return hist, err
		}
		hist.Epochs = append(hist.Epochs, rep)
		if t.OnEpoch != nil {
			switch err := t.OnEpoch(rep); {
			case errors.Is(err, ErrStop):
				t.State.Stopped = true
				hist.Epochs[len(hist.Epochs)-1].Stop = true
			case err != nil:
				hist.State = t.State
				return hist, err
			}
		}
		if t.CheckpointPath != "" {
			if err := t.writeCheckpoint(); err != nil {
				hist.State = t.State
				return hist, err
			}
		}
	}
	if r.stop != nil && r.stop.restore && t.best != nil && t.State.BestEpoch != t.State.Epoch {
		t.restore()
		hist.Restored = true
		if t.Out != nil {
			fmt.Fprintf(t.Out, "restored the parameters of epoch %d (%s %.4f)\n", t.State.BestEpoch, r.stop.monitor, t.State.Best)
		}
	}
	hist.State = t.State
	return hist, nil
}

// epoch trains epoch State.Epoch (counted from 0), validates, and applies
// early stopping.
func (t *Trainer) epoch(ctx context.Context, r *fitRun, loader *data.Loader, hist *History) (EpochReport, error) {
	start := time.Now()
	e := t.State.Epoch
	values, err := t.trainEpoch(ctx, r, loader, e, hist)
	if err != nil {
		return EpochReport{}, err
	}
	if r.valSet != nil {
		vals, err := t.measure(ctx, r, r.valSet)
		if err != nil {
			return EpochReport{}, fmt.Errorf("train: validation after epoch %d: %w", e+1, err)
		}
		for k, v := range vals {
			values["val_"+k] = v
		}
	}
	t.State.Epoch = e + 1
	rep := EpochReport{Epoch: e + 1, Epochs: r.epochs, Step: t.State.Step, Values: values}
	if r.stop != nil {
		rep.Improved, rep.Stop = r.stop.update(&t.State, e+1, values[r.stop.monitor])
		if rep.Improved && r.stop.restore {
			t.best = t.snapshot()
		}
		t.State.Stopped = rep.Stop
	}
	rep.Seconds = time.Since(start).Seconds()
	t.print(rep, r)
	return rep, nil
}

// trainEpoch runs the optimizer over the batches of epoch e, from batch
// State.EpochStep when it resumes that epoch, and returns the mean loss
// over all the epoch's batches and the metrics over those this call saw.
func (t *Trainer) trainEpoch(ctx context.Context, r *fitRun, loader *data.Loader, e int, hist *History) (map[string]float64, error) {
	nn.SetTraining(t.Model, true)
	for _, m := range t.Metrics {
		m.Reset()
	}
	st := &t.State
	if st.EpochStep > loader.Len() {
		st.EpochStep, st.EpochLossSum, st.EpochExamples, st.EpochSkipped = 0, 0, 0, 0
	}
	it := loader.IterFrom(ctx, e, st.EpochStep)
	defer it.Close()
	params := t.Model.NamedParameters()
	var stepErr error
	err := ember.Try(func() {
		for it.Next() {
			b := it.Batch()
			if t.Schedule != nil {
				t.Optimizer.SetLR(t.Schedule.LR(st.Step))
			}
			pred := t.Model.Forward(b.X)
			loss := r.loss(pred, b.Y)
			if loss == nil || loss.NumElements() != 1 {
				panic(&ember.Error{Op: "train.Trainer", Operands: []string{describe("loss", loss)}, Msg: "the loss must be a scalar (the batch mean)"})
			}
			stepped, scale, _ := update(loss, params, t.Optimizer, t.GradScaler, t.ClipNorm, t.ClipValue)
			l := loss.Item()
			if len(t.Metrics) > 0 {
				p := pred.Detach()
				for _, m := range t.Metrics {
					m.Update(p, b.Y)
				}
			}
			st.Step++
			st.EpochStep++
			st.EpochLossSum += l * float64(b.Size)
			st.EpochExamples += b.Size
			hist.StepLosses = append(hist.StepLosses, l)
			if t.OnStep != nil {
				t.OnStep(st.Step, l)
			}
			if stepErr = r.div.check(st, e+1, l, stepped, scale); stepErr != nil {
				return
			}
			if t.CheckpointEvery > 0 && st.Step%t.CheckpointEvery == 0 {
				if stepErr = t.writeCheckpoint(); stepErr != nil {
					return
				}
			}
		}
	})
	if err == nil && stepErr != nil {
		return nil, stepErr // a divergence or a failed checkpoint, which say where
	}
	if err == nil {
		err = it.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("train: epoch %d: %w", e+1, err)
	}
	values := map[string]float64{"loss": math.NaN()}
	if st.EpochExamples > 0 {
		values["loss"] = st.EpochLossSum / float64(st.EpochExamples)
	}
	st.EpochStep, st.EpochLossSum, st.EpochExamples, st.EpochSkipped = 0, 0, 0, 0
	for _, m := range t.Metrics {
		values[m.Name()] = m.Value()
	}
	return values, nil
}

// Evaluate measures the model on ds: the mean loss ("loss", weighted by
// batch size) and each metric (by its name), in evaluation mode
// (nn.SetTraining(Model, false), left so) and under ember.NoGrad, in
// batches of EvalBatchSize on Device (defaults as for Fit). Errors: a nil
// Model or dataset, an empty dataset, the dataset's errors, ctx's cause,
// and tensor errors of the model, loss or metrics.
func (t *Trainer) Evaluate(ctx context.Context, ds data.Dataset) (map[string]float64, error) {
	r, err := t.resolve(ds, false)
	if err != nil {
		return nil, err
	}
	return t.measure(ctx, r, ds)
}

// measure is Evaluate with the configuration resolved.
func (t *Trainer) measure(ctx context.Context, r *fitRun, ds data.Dataset) (map[string]float64, error) {
	if ds.Len() == 0 {
		return nil, errors.New("train: Evaluate: empty dataset")
	}
	nn.SetTraining(t.Model, false)
	for _, m := range t.Metrics {
		m.Reset()
	}
	loader := data.NewLoader(ds, r.evalBatch, data.LoaderOptions{Prefetch: t.Prefetch, Device: r.dev})
	defer loader.Close()
	it := loader.Iter(ctx, 0)
	defer it.Close()
	var sum float64
	n := 0
	err := ember.Try(func() {
		ember.NoGrad(func() {
			for it.Next() {
				b := it.Batch()
				pred := t.Model.Forward(b.X)
				loss := r.loss(pred, b.Y)
				if loss == nil || loss.NumElements() != 1 {
					panic(&ember.Error{Op: "train.Trainer", Operands: []string{describe("loss", loss)}, Msg: "the loss must be a scalar (the batch mean)"})
				}
				sum += loss.Item() * float64(b.Size)
				n += b.Size
				for _, m := range t.Metrics {
					m.Update(pred, b.Y)
				}
			}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	values := map[string]float64{"loss": sum / float64(n)}
	for _, m := range t.Metrics {
		values[m.Name()] = m.Value()
	}
	return values, nil
}

// cells returns the model's parameters, then its buffers, and how many
// are parameters.
func (t *Trainer) cells() ([]*nn.Param, int) {
	var cells []*nn.Param
	for _, p := range t.Model.NamedParameters() {
		cells = append(cells, p.Param)
	}
	n := len(cells)
	for _, p := range nn.NamedBuffers(t.Model) {
		cells = append(cells, p.Param)
	}
	return cells, n
}

// snapshot returns the current values of the model's parameters and
// buffers, untracked (tensors are immutable: optimizers replace a
// parameter's Value, they do not write into it).
func (t *Trainer) snapshot() []*ember.Tensor {
	cells, _ := t.cells()
	out := make([]*ember.Tensor, len(cells))
	for i, c := range cells {
		out[i] = c.Value.Detach()
	}
	return out
}

// restore puts the snapshot t.best back into the model: parameters as
// fresh tracked leaves on their autodiff device.
func (t *Trainer) restore() {
	cells, n := t.cells()
	if len(cells) != len(t.best) {
		return
	}
	for i, c := range cells {
		v := t.best[i]
		if i < n && v.Device().IsAutodiff() && v.DType().IsFloat() {
			v = v.RequireGrad()
		}
		c.Value = v
	}
}

// print writes rep's line to Out.
func (t *Trainer) print(rep EpochReport, r *fitRun) {
	if t.Out == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d/%d", rep.Epoch, rep.Epochs)
	keys := []string{"loss"}
	for _, m := range t.Metrics {
		keys = append(keys, m.Name())
	}
	if r.valSet != nil {
		for _, k := range slices.Clone(keys) {
			keys = append(keys, "val_"+k)
		}
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s %.4f", k, rep.Values[k])
	}
	fmt.Fprintf(&b, "  %.1f s", rep.Seconds)
	fmt.Fprintln(t.Out, b.String())
	if rep.Stop && r.stop != nil {
		fmt.Fprintf(t.Out, "early stopping: %s has not improved for %d epochs (best %.4f at epoch %d)\n", r.stop.monitor, t.State.Wait, t.State.Best, t.State.BestEpoch)
	}
}
