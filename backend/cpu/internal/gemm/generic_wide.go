//go:build !amd64 && !386

package gemm

// Pure-Go kernels, the only ones on this architecture.
var (
	sGeneric = &microKernel[float32]{name: "generic 4x4", mr: 4, nr: 4, kc: 256, mc: 128, nc: 2048, run: genericMicro4x4[float32]}
	dGeneric = &microKernel[float64]{name: "generic 4x4", mr: 4, nr: 4, kc: 256, mc: 128, nc: 2048, run: genericMicro4x4[float64]}
)
