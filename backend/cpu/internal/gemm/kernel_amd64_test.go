package gemm

import "golang.org/x/sys/cpu"

// testKernelSets lists the kernel pairs this CPU can run, the selected one
// first.
func testKernelSets() []kernelSet {
	sets := []kernelSet{{sKernel, dKernel}}
	if cpu.X86.HasAVX512F && sKernel != sAVX512 {
		sets = append(sets, kernelSet{sAVX512, dAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && sKernel != sAVX2 {
		sets = append(sets, kernelSet{sAVX2, dAVX2})
	}
	if sKernel != sGeneric {
		sets = append(sets, kernelSet{sGeneric, dGeneric})
	}
	return sets
}
