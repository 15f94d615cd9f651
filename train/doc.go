// Package train fits models to data. It has two entry points:
//
//   - Trainer, a training loop for any model (an nn.Module, or a function
//     wrapped by FuncModule) on any data.Dataset, as Keras' Model.fit or
//     Lightning's Trainer: a loss, an optimizer from package optim,
//     metrics (Accuracy, MSE, MAE, or any Metric), a validation set or
//     split measured every epoch, EarlyStopping on a named value (with
//     the best epoch's parameters restored on request), a learning-rate
//     Schedule, gradient clipping (ClipNorm, ClipValue), divergence
//     detection, a per-epoch report and callback, and a State (epoch,
//     step, position inside the epoch, best value) that Fit continues
//     from;
//   - Run, the MNIST image-classifier job that `ember train` runs: it
//     builds a model (NewMLP or NewCNN), feeds it mini-batches of MNIST
//     on an autodiff device, minimizes the cross-entropy and reports,
//     per epoch, the mean training loss, the test accuracy, the time
//     taken and the throughput.
//
// A Trainer run:
//
//	ds, _ := data.ReadCSVFile("blobs.csv", data.CSVOptions{Header: true,
//		Target: data.ClassTarget, ClassNames: []string{"red", "green", "blue"}})
//	dev := ember.DefaultDevice().Autodiff()
//	model := nn.NewSequential(nn.NewLinear(2, 16, dev), nn.Relu{}, nn.NewLinear(16, 3, dev))
//	t := &train.Trainer{Model: model, Epochs: 30, Metrics: []train.Metric{train.Accuracy()},
//		ValidationSplit: 0.2, EarlyStopping: &train.EarlyStopping{Monitor: "val_accuracy", Patience: 5, RestoreBest: true}}
//	hist, err := t.Fit(ctx, ds)
//
// The MNIST job is described by a Config and started with Run:
//
//	res, err := train.Run(ctx, train.Config{Model: "cnn", Epochs: 2, Out: os.Stdout})
//	if err != nil { ... }
//	fmt.Println(res.TestAccuracy)
//
// The zero Config trains the MLP for one epoch with Adam (learning rate
// 1e-3) on batches of 64 on ember.DefaultDevice, as PyTorch's MNIST example
// does with its own model. Runs are reproducible: Run seeds the device's
// random generator (parameter initialization) and the loader's shuffle
// with Config.Seed, so the same seed on the same device yields the same
// per-step loss sequence; a Trainer given the same model, optimizer,
// batch size and seed takes exactly the same steps.
//
// Precision: Config.DType trains the MNIST job in F32 (the default), F64,
// or BF16 or F16 mixed precision (F32 master weights, the batches on an
// autocast device, F16 with dynamic loss scaling by an optim.GradScaler).
// A Trainer trains in mixed precision when its Device is an autocast
// device (ember.Device.Autocast), with a GradScaler for F16; gradient
// clipping then applies to the unscaled gradients.
//
// Run's reports go to Config.Out, either as human-readable lines or, with
// Config.JSON, as JSON records, one per line: first the whole
// configuration (ConfigRecord), then one per epoch (EpochStats) and, with
// Config.JSONSteps, one per step (StepRecord); the "record" key says
// which. A progress bar (github.com/schollz/progressbar), fitted to the
// terminal's width, is drawn on standard error when Config.Progress is
// set, and Config.Plot names a PNG file for the loss and accuracy curves
// (gonum.org/v1/plot). Trained parameters are written with nn.Save
// (Config.Save) and read back with nn.Load (Config.Load, which also takes
// a checkpoint's model); Evaluate measures the accuracy of an MNIST model
// on a dataset, so a saved model can be evaluated without training by
// running with Load and EvalOnly set.
//
// Both entry points take the conveniences of PyTorch training scripts:
// learning-rate schedules with warm-up (Config.Schedule and Warmup, or
// any optim.Schedule as Trainer.Schedule), gradient clipping by norm and
// by value (optim.ClipGradNorm, optim.ClipGradValue), and divergence
// detection: a NaN or infinite loss, one DivergenceFactor times the first,
// or MaxSkippedSteps consecutive steps skipped by a loss scaler ends
// training with a *DivergedError (wrapping ErrDiverged) naming the step,
// the epoch and the precision instead of continuing silently.
//
// Checkpoints. A Checkpoint holds everything needed to continue training
// bit for bit: the model's parameters and buffers, the optimizer's state
// (optim.StateDict: moments, step counts, learning rate), the loss
// scaler's state of F16 mixed precision (optim.GradScaler.StateDict: the
// scale and the count of finite steps since it changed), the progress
// (epoch, step, the batch inside the epoch and the epoch's running loss),
// the device's random generator state (ember.Device.RNGState; the data
// loader's shuffle order is a function of the seed and the epoch), and the
// settings the continuation must share (the precision among them: a run
// continues only in the dtype it was trained in). It is stored as a safetensors
// file whose metadata is versioned (CheckpointFormat, CheckpointVersion;
// WriteCheckpoint, ReadCheckpoint, SaveCheckpoint, LoadCheckpoint). Run
// writes one with Config.Checkpoint (after every epoch, every
// CheckpointEvery steps and when interrupted) and continues one with
// Config.Resume; a Trainer makes one with Checkpoint (or CheckpointPath)
// and continues one with Resume. A checkpoint of another model,
// optimizer, precision or configuration is refused with
// ErrCheckpointMismatch naming the difference. ExampleTrainer_Resume interrupts a run in the
// middle of an epoch and resumes it.
package train
