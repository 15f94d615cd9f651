//go:build !amd64

package gemm

// testKernelSets lists the kernel pairs this CPU can run: the pure-Go ones.
func testKernelSets() []kernelSet { return []kernelSet{{sKernel, dKernel}} }
