// Package gemm is the dense matrix product of the CPU backend: BLAS sgemm
// and dgemm on row-major matrices, blocked in the GotoBLAS/BLIS scheme
// (op(B) packed in kc×nr panels, op(A) in mr×kc panels, a register-tiled
// micro-kernel over them) and spread over the persistent pool of package
// workers.
//
// The micro-kernel is chosen once at start-up from the CPU's features: Go
// assembly for amd64 with AVX-512F (14×32 float32, 14×16 float64 tiles) or
// AVX2+FMA (6×16 float32, 6×8 float64 tiles), and a pure-Go kernel
// elsewhere (other GOARCHes included: there is no arm64 NEON kernel yet).
// Kernel names the choice. Small products (up to 2^25 multiply-adds,
// alpha 1) take a direct path (small.go) that reads a transposed A, a
// row-major A and a row-major B in place with strided forms of the
// assembly kernels, packs only a transposed B and partial edge panels, and
// stays on the calling goroutine below 2^24 multiply-adds. Products with a
// single row or column have no matrix-vector kernel of their own.
//
// Beside the product the package has two register-tile kernels for
// implicit GEMM (the direct convolutions of the CPU backend): Stile, the
// micro-kernel's tile with its packed panels replaced by offset tables
// into the operands, and Sdot, lane-wise dot products of contiguous rows;
// both are generated Go assembly (gen_tiles.go, gen_dots.go) for AVX-512F
// and AVX2+FMA, with portable Go loops elsewhere (TileAccelerated).
package gemm

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices, with the semantics of BLAS sgemm (cblas_sgemm with
// CblasRowMajor). op(A) is m×k: A itself, stored as m rows of lda ≥ max(1,k)
// elements, or when transA the transpose of A, stored as k rows of
// lda ≥ max(1,m). op(B) is k×n: B (k rows of ldb ≥ n) or, when transB, Bᵀ
// (B stored as n rows of ldb ≥ k). C is m×n in m rows of ldc ≥ n. As in
// BLAS, when beta is 0 the old contents of C are not read (NaN and Inf in C
// do not propagate), and when alpha is 0 or k is 0 A and B are not read and
// C becomes beta·C. m, n or k equal to 0 are valid. The product is
// computed in float32 with fused multiply-adds in an order that depends on
// the kernel and the blocking, so results can differ from a naive loop by
// rounding (relative error of order k·2⁻²⁴). Slices too short for the
// stated shapes, or negative sizes, panic. Sgemm may be called
// concurrently from any number of goroutines on disjoint outputs; large
// products use all workers of package workers.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(sKernel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64: C = alpha·op(A)·op(B) + beta·C with the
// semantics of BLAS dgemm (row-major), computed in float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(dKernel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Kernel names the micro-kernel selected on this machine for Sgemm, such
// as "avx512 14x32", "avx2-fma 6x16", or "generic 2x4" (amd64, 386) and
// "generic 4x4" (other architectures) for the pure-Go fallback; Dgemm uses
// the float64 kernel of the same instruction set (14x16, 6x8, same generic
// tile).
func Kernel() string { return sKernel.name }
