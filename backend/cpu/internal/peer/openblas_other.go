//go:build !((linux || darwin) && (amd64 || arm64))

package peer

import "fmt"

// OpenBLAS is a loaded OpenBLAS library; on this platform it cannot be
// loaded and OpenBLAS always fails.
type OpenBLAS struct {
	// Path is the library file that was loaded.
	Path string
}

// LoadOpenBLAS returns an error wrapping ErrUnavailable: run-time loading of C
// libraries is not supported on this platform.
func LoadOpenBLAS() (*OpenBLAS, error) {
	return nil, fmt.Errorf("%w: cannot load C libraries on this platform", ErrUnavailable)
}

// Config returns "".
func (o *OpenBLAS) Config() string { return "" }

// SetThreads returns 0: no OpenBLAS can be loaded on this platform.
func (o *OpenBLAS) SetThreads(n int) int { return 0 }

// Sgemm panics: no OpenBLAS can be loaded on this platform.
func (o *OpenBLAS) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic("peer: OpenBLAS unavailable")
}

// Dgemm panics: no OpenBLAS can be loaded on this platform.
func (o *OpenBLAS) Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	panic("peer: OpenBLAS unavailable")
}
