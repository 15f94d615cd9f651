package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
	"golang.org/x/term"
)

// runTrain carries out `ember train` with a validated configuration: it
// runs train.Run, which prints one line per epoch (or, with --json, JSON
// records: the configuration, then one per epoch, and one per step with
// --json-steps) on standard output, and draws a progress bar on standard
// error when that is a terminal and --json is off. With --load FILE
// --epochs 0 it only evaluates the saved model on the test set. Ctrl-C
// stops training after the current step; --save, --plot and --checkpoint
// are still written.
var runTrain = func(cfg TrainConfig) error {
	var dev ember.Device
	fromEnv := func(err error) error {
		if cfg.DeviceFromEnv && err != nil {
			return envDeviceError(cfg.Device, err)
		}
		return err
	}
	if cfg.Device != "" {
		d, err := parseDeviceArg(cfg.Device)
		if err != nil {
			return fromEnv(err)
		}
		if err := d.Init(); err != nil {
			return fromEnv(err)
		}
		dev = d
	}
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	dtype, ok := trainDType[cfg.DType]
	if !ok {
		return fmt.Errorf("--dtype %q: want one of %s", cfg.DType, strings.Join(trainDTypes, ", "))
	}
	tc := train.Config{
		Model:            cfg.Model,
		Epochs:           cfg.Epochs,
		EvalOnly:         cfg.Epochs == 0,
		Batch:            cfg.BatchSize,
		LR:               cfg.LR,
		Optimizer:        cfg.Optimizer,
		Device:           dev,
		Seed:             cfg.Seed,
		Checkpointing:    cfg.Checkpointing,
		Compile:          cfg.Compile,
		Load:             cfg.LoadPath,
		Save:             cfg.SavePath,
		Plot:             cfg.PlotPath,
		JSON:             cfg.JSON,
		DataDir:          cfg.DataDir,
		Limit:            cfg.Limit,
		Schedule:         cfg.Schedule,
		Warmup:           cfg.Warmup,
		MinLR:            cfg.MinLR,
		Gamma:            cfg.Gamma,
		StepSize:         cfg.StepSize,
		ClipNorm:         cfg.ClipNorm,
		ClipValue:        cfg.ClipValue,
		DivergenceFactor: cfg.DivergenceFactor,
		JSONSteps:        cfg.JSONSteps,
		Checkpoint:       cfg.CheckpointPath,
		CheckpointEvery:  cfg.CheckpointEvery,
		Resume:           cfg.ResumePath,
		DType:            dtype,
		LossScale:        optim.GradScalerConfig{InitScale: cfg.LossScale, GrowthInterval: cfg.LossScaleGrowthInterval},
		Out:              out,
		Progress:         !cfg.JSON && isTerminal(cfg.ErrOut),
		ProgressOut:      cfg.ErrOut,
	}
	res, err := train.Run(ctx, tc)
	if err != nil && !onlyCancelled(ctx, err) {
		// A failure, possibly joined with the interruption (a checkpoint
		// that could not be written): nothing below holds.
		return err
	}
	if err != nil && cfg.ErrOut != nil {
		steps := 0
		if res != nil {
			steps = len(res.StepLosses)
		}
		resume := ""
		if cfg.CheckpointPath != "" {
			resume = fmt.Sprintf("; continue with ember train --resume %s", cfg.CheckpointPath)
		}
		fmt.Fprintf(cfg.ErrOut, "ember train: interrupted after %d steps%s\n", steps, resume)
	}
	if !cfg.JSON {
		if cfg.SavePath != "" {
			fmt.Fprintf(out, "saved parameters to %s\n", cfg.SavePath)
		}
		if cfg.PlotPath != "" && res != nil && len(res.StepLosses) > 0 {
			fmt.Fprintf(out, "wrote training curves to %s\n", cfg.PlotPath)
		}
		if cfg.CheckpointPath != "" && res != nil && !errors.Is(err, train.ErrDiverged) {
			fmt.Fprintf(out, "wrote checkpoint to %s\n", cfg.CheckpointPath)
		}
	}
	return err
}

// trainDType maps --dtype values to train.Config.DType ("" is the
// default, f32).
var trainDType = map[string]ember.DType{"": ember.F32, "f32": ember.F32, "f64": ember.F64, "bf16": ember.BF16, "f16": ember.F16}

// isTerminal reports whether w is a file attached to a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
