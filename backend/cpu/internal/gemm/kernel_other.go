//go:build !amd64

package gemm

// selectKernels installs the pure-Go kernels, the only ones on this
// architecture.
func selectKernels() { sKernel, dKernel = sGeneric, dGeneric }
