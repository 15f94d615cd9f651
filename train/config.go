package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/optim"
)

// Defaults applied by Run to zero Config fields.
const (
	// DefaultModel is the model trained when Config.Model is empty.
	DefaultModel = "mlp"
	// DefaultOptimizer is the optimizer used when Config.Optimizer is empty.
	DefaultOptimizer = "adam"
	// DefaultEpochs is the number of epochs when Config.Epochs is zero.
	DefaultEpochs = 1
	// DefaultBatch is the mini-batch size when Config.Batch is zero.
	DefaultBatch = 64
	// DefaultEvalBatch is the batch size of test-set evaluation.
	DefaultEvalBatch = 1000
	// DefaultSGDMomentum is the momentum of the "sgd" optimizer, with
	// learning rate optim.DefaultSGDLR: torch.optim's documented example
	// optim.SGD(model.parameters(), lr=0.01, momentum=0.9). One epoch of
	// the MLP reaches about 0.96 test accuracy with it.
	DefaultSGDMomentum = 0.9
	// DefaultAdamWWeightDecay is the decoupled weight decay of "adamw"
	// (PyTorch's default for AdamW).
	DefaultAdamWWeightDecay = 1e-2
	// DefaultStepGamma is the decay factor of the "step" schedule when
	// Config.Gamma is zero (PyTorch's StepLR default).
	DefaultStepGamma = 0.1
	// DefaultExponentialFinal is the fraction of the initial learning
	// rate that the "exponential" schedule reaches at the last step when
	// Config.Gamma is zero.
	DefaultExponentialFinal = 0.01
	// DefaultDivergenceFactor is Config.DivergenceFactor's default: a
	// step whose loss exceeds 100 times the run's first loss ends the
	// run (the cross-entropy of an untrained 10-class model is about
	// 2.3, so about 230; a network that reaches it has diverged).
	DefaultDivergenceFactor = 100
)

// Schedules lists the names Config.Schedule accepts.
var Schedules = []string{"constant", "cosine", "linear", "step", "exponential"}

// DefaultLR returns the learning rate used when Config.LR is zero: 1e-3 for
// "adam" and "adamw" (the Adam paper's and PyTorch's default),
// optim.DefaultSGDLR (0.01) for "sgd" (with momentum DefaultSGDMomentum),
// and 0 for an unknown name.
func DefaultLR(optimizer string) float64 {
	switch optimizer {
	case "adam", "adamw":
		return 1e-3
	case "sgd":
		return optim.DefaultSGDLR
	}
	return 0
}

// Config describes a training run. The zero value is valid: one epoch of
// the MLP with Adam (lr 1e-3), batches of 64, on ember.DefaultDevice, with
// MNIST found by data.FindMNIST and no output.
type Config struct {
	// Model is "mlp" (NewMLP) or "cnn" (NewCNN); "" means DefaultModel.
	Model string
	// Epochs is the number of passes over the training set; 0 means
	// DefaultEpochs. Negative values are an error.
	Epochs int
	// EvalOnly skips training: Run only evaluates the model (normally
	// loaded from Load) on the test set and reports it as epoch 0.
	EvalOnly bool
	// Batch is the mini-batch size; 0 means DefaultBatch. The last,
	// partial batch of an epoch is kept.
	Batch int
	// LR is the learning rate, finite and > 0; 0 means
	// DefaultLR(Optimizer). Negative, NaN and infinite rates are an error.
	LR float64
	// Optimizer is "adam", "adamw" or "sgd" (with momentum
	// DefaultSGDMomentum); "" means DefaultOptimizer.
	Optimizer string
	// Device runs the model; the zero Device means ember.DefaultDevice().
	// Run enables autodiff on it (an autodiff device is accepted as is).
	// An autocast device (ember.Device.Autocast, "cpu+autocast:bf16")
	// asks for that mixed precision: DType must then be 0 or its dtype.
	Device ember.Device
	// Seed seeds the device's random generator (parameter
	// initialization) and the shuffle order of the training batches.
	Seed uint64
	// Checkpointing trains with gradient checkpointing (the Balanced
	// strategy; see ember.Device.GradientCheckpointing): less memory,
	// identical gradients, some recomputation.
	Checkpointing bool
	// Compile captures the training step (forward, loss, backward and
	// optimizer update, with Checkpointing's recomputation when set)
	// after the first step and replays it for every batch of the
	// configured size (ember.CapturedGraph.Compile): on CUDA each step is
	// one CUDA graph launch over buffers that stay put, on other devices
	// the captured ops run one by one through the device's stack (no
	// faster than eager there). The results equal eager training's bit
	// for bit. It needs the adam, adamw or sgd optimizer.
	Compile bool
	// Load, when non-empty, is a parameter file written by nn.Save (for
	// example by an earlier run with Save), or a checkpoint (Checkpoint)
	// whose model's tensors are taken, loaded into the model before
	// training or, with EvalOnly, evaluated.
	Load string
	// Save, when non-empty, is the file the trained parameters are
	// written to with nn.Save.
	Save string
	// Plot, when non-empty, is the image file the curves are drawn to;
	// its extension picks the format (see WritePlot).
	Plot string
	// JSON makes the report JSON records, one per line: the
	// configuration (ConfigRecord), then one per epoch (EpochStats), and
	// per step with JSONSteps; it suppresses every other line on Out.
	JSON bool
	// DataDir is the directory of the MNIST IDX files; "" lets
	// data.FindMNIST locate them. Unused when Train and Test are set.
	DataDir string
	// Limit, when positive, trains on the first Limit training examples
	// only; 0 uses all.
	Limit int
	// TestLimit, when positive, evaluates on the first TestLimit test
	// examples only; 0 uses all.
	TestLimit int
	// Out receives the report; nil discards it.
	Out io.Writer
	// Progress draws a progress bar per epoch on ProgressOut.
	Progress bool
	// ProgressOut is where the progress bar goes; nil means os.Stderr.
	ProgressOut io.Writer
	// Train and Test, when non-nil, replace the MNIST training and test
	// splits. Their examples must have 784 F32 feature values (28×28
	// images, e.g. of shape [1 28 28]) and one I64 label in 0..9.
	Train, Test data.Dataset
	// OnStep, when non-nil, is called after every optimizer step with the
	// step number (counted from 1 over the whole run) and the step's
	// mean loss. With Compile the losses of compiled steps are read back
	// 16 at a time, so the calls come in groups (in step order), and
	// after the epoch's last step at the latest.
	OnStep func(step int, loss float64)

	// Schedule names the learning-rate schedule over the run's steps
	// (optim's schedules, stepped once per optimizer step): "constant"
	// (or ""), "cosine" (optim.CosineLR from LR to MinLR over the steps
	// after the warm-up), "linear" (optim.LinearLR, likewise), "step"
	// (optim.StepLR: times Gamma every StepSize steps) or "exponential"
	// (optim.ExponentialLR: times Gamma every step).
	Schedule string
	// Warmup is the number of linear warm-up steps before the schedule
	// (optim.WarmupLR: the rate rises from LR/Warmup to LR); 0 means
	// none. It may be used with any schedule, "constant" included.
	Warmup int
	// MinLR is the final rate of "cosine" and "linear", finite and >= 0
	// (default 0).
	MinLR float64
	// Gamma is the decay factor of "step" (0 means DefaultStepGamma) and
	// of "exponential" per step (0 means the factor that reaches
	// DefaultExponentialFinal·LR at the run's last step), finite and > 0.
	Gamma float64
	// StepSize is the period of "step", in steps; 0 means one epoch's
	// steps.
	StepSize int
	// ClipNorm, when > 0, scales the gradients before each update so that
	// their total L2 norm is at most ClipNorm (optim.ClipGradNorm).
	ClipNorm float64
	// ClipValue, when > 0, limits each gradient element to
	// [−ClipValue, ClipValue] before each update (optim.ClipGradValue),
	// before ClipNorm when both are set.
	ClipValue float64
	// DivergenceFactor: a step whose loss exceeds DivergenceFactor times
	// the run's first loss ends the run with an error wrapping
	// ErrDiverged (a *DivergedError) that names the step; 0 means
	// DefaultDivergenceFactor, a negative value turns this check off. A
	// NaN or infinite loss always ends the run that way, as do
	// MaxSkippedSteps consecutive steps skipped by an F16 run's loss
	// scaler. Otherwise it must be > 1.
	DivergenceFactor float64
	// JSONSteps adds one JSON record per optimizer step (see
	// StepRecord) to the report, and implies JSON.
	JSONSteps bool
	// Checkpoint, when non-empty, is the file a checkpoint (see
	// Checkpoint: parameters, optimizer state, an F16 run's loss scale,
	// progress, random state)
	// is written to after every epoch, every CheckpointEvery steps, and
	// when the run is interrupted (ctx done); Resume continues from it.
	// A run that diverges leaves the last checkpoint as it was.
	Checkpoint string
	// CheckpointEvery, when positive, also writes Checkpoint every that
	// many steps (counted over the whole run).
	CheckpointEvery int
	// Resume, when non-empty, is a checkpoint written by an earlier run
	// (Config.Checkpoint) to continue from: the run starts at the
	// checkpoint's epoch and step with its parameters, optimizer state
	// and random state, and takes exactly the steps the uninterrupted run
	// would have taken, bit for bit on the same device (an F16 run's
	// loss scale and its count of finite steps included). The settings
	// that shape those steps (RunSettings: model, optimizer, LR, batch,
	// seed, schedule, clipping, DType and loss scaling, the training
	// set's size) must equal the checkpoint's, or Run returns an error
	// wrapping ErrCheckpointMismatch that names the first difference:
	// a run continues in the precision it was trained in. Epochs may
	// grow (except under "cosine" and "linear", whose length it sets).
	Resume string
	// DType is the training precision; 0 means ember.F32. With ember.F64
	// the parameters (nn.ToDType), activations, gradients and optimizer
	// state are all float64. With ember.BF16 or ember.F16 training is in
	// mixed precision: the parameters stay in F32 (master weights, which
	// the optimizer updates), the forward and backward passes run on the
	// autocast device Device.Autocast(DType) (matmul and convolutions in
	// 16 bits, reductions, softmax, norms and the loss in F32), and the
	// test accuracy is measured the same way. F16 adds dynamic loss
	// scaling (optim.GradScaler, configured by LossScale): steps whose
	// gradients overflow are skipped, and ClipNorm and ClipValue apply to
	// the unscaled gradients. Other dtypes are an error, as is
	// F16 with Compile (the loss scaler decides on the host whether to
	// step).
	DType ember.DType
	// LossScale configures the dynamic loss scaling of an F16 run; zero
	// fields take PyTorch's defaults (initial scale 2^16, doubled after
	// 2000 steps with finite gradients, halved after a step without).
	// Setting it for another DType is an error.
	LossScale optim.GradScalerConfig
}

// withDefaults returns c with zero fields filled in, or an error naming the
// first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if _, ok := models[c.Model]; !ok {
		return c, fmt.Errorf("train: unknown model %q (want %s)", c.Model, modelNames())
	}
	if c.Optimizer == "" {
		c.Optimizer = DefaultOptimizer
	}
	if DefaultLR(c.Optimizer) == 0 {
		return c, fmt.Errorf("train: unknown optimizer %q (want adam, adamw or sgd)", c.Optimizer)
	}
	if c.LR == 0 {
		c.LR = DefaultLR(c.Optimizer)
	}
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return c, fmt.Errorf("train: learning rate %g, want a finite number > 0 (0 = the optimizer's default)", c.LR)
	}
	if c.Epochs == 0 {
		c.Epochs = DefaultEpochs
	}
	if c.Epochs < 0 {
		return c, fmt.Errorf("train: %d epochs, want >= 1", c.Epochs)
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Batch < 0 {
		return c, fmt.Errorf("train: batch size %d, want >= 1", c.Batch)
	}
	switch c.DType {
	case 0:
		c.DType = ember.F32
	case ember.F32, ember.F64, ember.BF16:
	case ember.F16:
		if c.Compile {
			return c, fmt.Errorf("train: Compile does not support DType f16: its dynamic loss scaling decides on the host whether each step is taken (bf16 and f64 compile)")
		}
	default:
		return c, fmt.Errorf("train: dtype %v, want f32, f64, bf16 or f16", c.DType)
	}
	if c.LossScale != (optim.GradScalerConfig{}) && c.DType != ember.F16 {
		return c, fmt.Errorf("train: LossScale is set, but loss scaling is for DType f16 (this run is %v)", c.DType)
	}
	if c.DType == ember.F16 {
		if err := ember.Try(func() { optim.NewGradScaler(nil, c.LossScale) }); err != nil {
			return c, fmt.Errorf("train: LossScale: %w", err)
		}
	}
	if c.Limit < 0 || c.TestLimit < 0 {
		return c, fmt.Errorf("train: limits %d and %d, want >= 0 (0 = all examples)", c.Limit, c.TestLimit)
	}
	if c.Schedule == "" {
		c.Schedule = "constant"
	}
	if !slices.Contains(Schedules, c.Schedule) {
		return c, fmt.Errorf("train: unknown schedule %q (want %s)", c.Schedule, strings.Join(Schedules, ", "))
	}
	switch {
	case c.Warmup < 0:
		return c, fmt.Errorf("train: %d warm-up steps, want >= 0", c.Warmup)
	case !finite(c.MinLR) || c.MinLR < 0:
		return c, fmt.Errorf("train: minimum learning rate %g, want a finite number >= 0", c.MinLR)
	case !finite(c.Gamma) || c.Gamma < 0:
		return c, fmt.Errorf("train: schedule gamma %g, want a finite number > 0 (0 = the schedule's default)", c.Gamma)
	case c.StepSize < 0:
		return c, fmt.Errorf("train: schedule step size %d, want >= 1 (0 = one epoch)", c.StepSize)
	case !finite(c.ClipNorm) || c.ClipNorm < 0:
		return c, fmt.Errorf("train: gradient clipping norm %g, want a finite number > 0 (0 = no clipping)", c.ClipNorm)
	case !finite(c.ClipValue) || c.ClipValue < 0:
		return c, fmt.Errorf("train: gradient clipping value %g, want a finite number > 0 (0 = no clipping)", c.ClipValue)
	case !finite(c.DivergenceFactor) || c.DivergenceFactor > 0 && c.DivergenceFactor <= 1:
		return c, fmt.Errorf("train: divergence factor %g, want a number > 1 (0 = %d, negative = off)", c.DivergenceFactor, DefaultDivergenceFactor)
	case c.CheckpointEvery < 0:
		return c, fmt.Errorf("train: checkpoint every %d steps, want >= 0 (0 = after every epoch only)", c.CheckpointEvery)
	case c.CheckpointEvery > 0 && c.Checkpoint == "":
		return c, errors.New("train: CheckpointEvery needs a Checkpoint file")
	case c.Resume != "" && c.Load != "":
		return c, errors.New("train: Resume and Load are both set; a checkpoint holds the parameters already")
	case c.Resume != "" && c.EvalOnly:
		return c, errors.New("train: Resume with EvalOnly; load the checkpoint's parameters with Load to evaluate them")
	}
	if c.DivergenceFactor == 0 {
		c.DivergenceFactor = DefaultDivergenceFactor
	}
	if c.JSONSteps {
		c.JSON = true
	}
	if c.Device.IsZero() {
		c.Device = ember.DefaultDevice()
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	return c, nil
}
