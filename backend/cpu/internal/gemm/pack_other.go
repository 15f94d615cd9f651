//go:build !amd64

package gemm

// packA14 reports false: there is no gather-based packing on this
// architecture (see pack_amd64.go).
func packA14[T float](a []T, lda, kb int, alpha T, dst []T) bool { return false }

// transpose8 returns 0: there is no transposing packer on this
// architecture (see pack_amd64.go).
func transpose8[T float](src []T, lds, k int, dst []T, ldd int) int { return 0 }
