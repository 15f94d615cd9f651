package cpu

import (
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/peer"
)

// GEMM is a row-major BLAS-style matrix product, C = alpha·op(A)·op(B) +
// beta·C (cblas_sgemm / cblas_dgemm with CblasRowMajor), used to compare
// this backend's kernels with reference libraries in benchmarks.
type GEMM struct {
	// Name identifies the implementation ("ember", "openblas").
	Name  string
	Sgemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	Dgemm func(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
}

// EmberGEMM returns this backend's own GEMM kernels (Kernel names the
// selected micro-kernel, e.g. "avx512 14x32").
func EmberGEMM() GEMM { return GEMM{Name: "ember", Sgemm: gemm.Sgemm, Dgemm: gemm.Dgemm} }

// Kernel names the GEMM micro-kernel selected on this machine.
func Kernel() string { return gemm.Kernel() }

// OpenBLAS loads OpenBLAS (libopenblas.so.0) at run time, for benchmarks
// against a tuned BLAS. The error says why it cannot be used (library
// absent, platform without run-time loading). OpenBLAS runs its own threads.
func OpenBLAS() (GEMM, error) {
	o, err := peer.LoadOpenBLAS()
	if err != nil {
		return GEMM{}, err
	}
	return GEMM{Name: "openblas", Sgemm: o.Sgemm, Dgemm: o.Dgemm}, nil
}
