//go:build !amd64

package gemm

// packA14 reports false: there is no gather-based packing on this
// architecture (see pack_amd64.go).
func packA14[T float](a []T, lda, kb int, alpha T, dst []T) bool { return false }
