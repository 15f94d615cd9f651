//go:build !amd64

package gemm

// tileSetByName returns nil: there are no tile kernels on this
// architecture, so Stile runs its portable loop.
func tileSetByName(string) *tileSet { return nil }
