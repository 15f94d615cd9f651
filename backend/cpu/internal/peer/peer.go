// Package peer loads reference BLAS libraries at run time for benchmarks
// and comparisons: OpenBLAS through github.com/ebitengine/purego (dlopen, no
// cgo), so binaries build and run on machines without it and only the
// comparison is unavailable there.
package peer

import "errors"

// ErrUnavailable reports that a peer library cannot be used on this
// platform or is not installed; errors from OpenBLAS wrap it.
var ErrUnavailable = errors.New("peer: library unavailable")

// CBLAS constants (cblas.h).
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

func cblasTranspose(t bool) int32 {
	if t {
		return cblasTrans
	}
	return cblasNoTrans
}
