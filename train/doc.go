// Package train fits models to data. It has two entry points:
//
//   - Trainer, a training loop for any model (an nn.Module, or a function
//     wrapped by FuncModule) on any data.Dataset, as Keras' Model.fit or
//     Lightning's Trainer: a loss, an optimizer from package optim,
//     metrics (Accuracy, MSE, MAE, or any Metric), a validation set or
//     split measured every epoch, EarlyStopping on a named value (with
//     the best epoch's parameters restored on request), a per-epoch
//     report and callback, and a State (epoch, step, best value) that
//     Fit continues from;
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
// device (ember.Device.Autocast), with a GradScaler for F16. Both stop
// with a *DivergenceError (wrapping ErrDiverged) naming the step when a
// loss is NaN or infinite, or when a loss scaler skipped MaxSkippedSteps
// steps in a row: training never goes on silently from a NaN.
//
// Run's reports go to Config.Out, either as human-readable lines or, with
// Config.JSON, as exactly one JSON object per line per epoch (see
// EpochStats). A progress bar (github.com/schollz/progressbar) is drawn on
// standard error when Config.Progress is set, and Config.Plot names a PNG
// file for the loss and accuracy curves (gonum.org/v1/plot). Trained
// parameters are written with nn.Save (Config.Save) and read back with
// nn.Load (Config.Load); Evaluate measures the accuracy of an MNIST model
// on a dataset, so a saved model can be evaluated without training by
// running with Load and EvalOnly set.
package train
