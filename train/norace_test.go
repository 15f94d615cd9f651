//go:build !race

package train

// raceEnabled reports whether the tests run under the race detector,
// which slows the pure-Go kernels about tenfold.
const raceEnabled = false
