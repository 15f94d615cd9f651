//go:build amd64 || 386

package gemm

// Pure-Go kernels, the fallback when the CPU lacks AVX2+FMA.
var (
	sGeneric = &microKernel[float32]{name: "generic 2x4", mr: 2, nr: 4, kc: 256, mc: 128, nc: 2048, run: genericMicro2x4[float32]}
	dGeneric = &microKernel[float64]{name: "generic 2x4", mr: 2, nr: 4, kc: 256, mc: 128, nc: 2048, run: genericMicro2x4[float64]}
)
