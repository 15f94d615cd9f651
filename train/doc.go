// Package train is Ember's training loop for image classifiers on MNIST:
// it builds a model (NewMLP or NewCNN), feeds it mini-batches from package
// data on an autodiff device, minimizes the cross-entropy with an optimizer
// from package optim and reports, per epoch, the mean training loss, the
// test accuracy, the time taken and the throughput. It is what
// `ember train` runs.
//
// A run is described by a Config and started with Run:
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
// per-step loss sequence.
//
// Reports go to Config.Out, either as human-readable lines or, with
// Config.JSON, as exactly one JSON object per line per epoch (see
// EpochStats). A progress bar (github.com/schollz/progressbar) is drawn on
// standard error when Config.Progress is set, and Config.Plot names a PNG
// file for the loss and accuracy curves (gonum.org/v1/plot). Trained
// parameters are written with nn.Save (Config.Save) and read back with
// nn.Load (Config.Load); Evaluate measures the accuracy of any model on a
// dataset, so a saved model can be evaluated without training by running
// with Load and EvalOnly set.
package train
