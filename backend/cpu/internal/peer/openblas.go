//go:build (linux || darwin) && (amd64 || arm64)

package peer

import (
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// OpenBLAS is a loaded OpenBLAS library (libopenblas.so.0). Its methods are
// safe for concurrent use as far as OpenBLAS itself is; OpenBLAS runs its
// own thread pool (OPENBLAS_NUM_THREADS, default all cores).
type OpenBLAS struct {
	// Path is the library file that was loaded.
	Path   string
	sgemm  func(order, transA, transB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	dgemm  func(order, transA, transB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	config func() string
	setThr func(n int32)
	getThr func() int32
}

var openBLAS struct {
	once sync.Once
	lib  *OpenBLAS
	err  error
}

// openBLASNames are the library names tried, in order.
var openBLASNames = []string{"libopenblas.so.0", "libopenblas.so", "libopenblas.dylib", "libopenblas.0.dylib"}

// LoadOpenBLAS loads OpenBLAS on first call (later calls return the same
// library or error). The error wraps ErrUnavailable and names the files
// tried when the library is absent (on Debian/Ubuntu: apt-get install
// libopenblas0-pthread).
func LoadOpenBLAS() (*OpenBLAS, error) {
	openBLAS.once.Do(func() {
		var errs []error
		for _, name := range openBLASNames {
			h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			lib := &OpenBLAS{Path: name}
			purego.RegisterLibFunc(&lib.sgemm, h, "cblas_sgemm")
			purego.RegisterLibFunc(&lib.dgemm, h, "cblas_dgemm")
			if _, err := purego.Dlsym(h, "openblas_get_config"); err == nil {
				purego.RegisterLibFunc(&lib.config, h, "openblas_get_config")
			}
			if _, err := purego.Dlsym(h, "openblas_set_num_threads"); err == nil {
				purego.RegisterLibFunc(&lib.setThr, h, "openblas_set_num_threads")
				purego.RegisterLibFunc(&lib.getThr, h, "openblas_get_num_threads")
			}
			openBLAS.lib = lib
			return
		}
		openBLAS.err = fmt.Errorf("%w: OpenBLAS not found (tried %v): %v", ErrUnavailable, openBLASNames, errs)
	})
	return openBLAS.lib, openBLAS.err
}

// Config returns OpenBLAS's build description (openblas_get_config: version,
// core type, thread count), or "" when the library does not export it.
func (o *OpenBLAS) Config() string {
	if o.config == nil {
		return ""
	}
	return o.config()
}

// SetThreads sets the number of threads OpenBLAS uses for later calls
// (openblas_set_num_threads; n ≤ 0 is ignored) and returns the number in
// force afterwards (openblas_get_num_threads), or 0 when the library does
// not export them.
func (o *OpenBLAS) SetThreads(n int) int {
	if o.setThr == nil {
		return 0
	}
	if n > 0 {
		o.setThr(int32(n))
	}
	return int(o.getThr())
}

// Sgemm calls cblas_sgemm(CblasRowMajor, ...): C = alpha·op(A)·op(B) +
// beta·C with the argument conventions of gemm.Sgemm (row-major, leading
// dimensions in elements). Sizes must fit in int32 and be non-empty enough
// for the slices to have a first element; too-short slices are undefined
// behaviour in the C library, so callers must pass valid shapes.
func (o *OpenBLAS) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	o.sgemm(cblasRowMajor, cblasTranspose(transA), cblasTranspose(transB), int32(m), int32(n), int32(k),
		alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}

// Dgemm is Sgemm for float64 (cblas_dgemm).
func (o *OpenBLAS) Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	o.dgemm(cblasRowMajor, cblasTranspose(transA), cblasTranspose(transB), int32(m), int32(n), int32(k),
		alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}
