package winograd

import "golang.org/x/sys/cpu"

//go:generate go run gen_winograd.go

// The assembly sets (winograd_amd64.s).
var (
	avx512 = &Set{name: "avx512", lanes: 16, input: inputAVX512, output: outputAVX512, kernel: kernelAVX512,
		tinput: tinputAVX512, toutput: toutputAVX512, wgrad: wgradAVX512}
	avx2 = &Set{name: "avx2", lanes: 8, input: inputAVX2, output: outputAVX2, kernel: kernelAVX2,
		tinput: tinputAVX2, toutput: toutputAVX2, wgrad: wgradAVX2}
)

// setByName returns the named assembly set if this CPU supports it.
func setByName(name string) *Set {
	switch {
	case name == "avx512" && cpu.X86.HasAVX512F:
		return avx512
	case name == "avx2" && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return avx2
	}
	return nil
}
