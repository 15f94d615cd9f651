package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// Assembly micro-kernels (kernels_amd64.s): they compute the mr×nr tile of
// the packed panels a (k·mr values) and b (k·nr values), k ≥ 1, into the
// rows of c, ldc elements apart, adding to C when acc (microKernel.run).

//go:noescape
func sgemmAVX2(k int, a, b, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX2(k int, a, b, c *float64, ldc int, acc bool)

//go:noescape
func sgemmAVX512(k int, a, b, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX512(k int, a, b, c *float64, ldc int, acc bool)

// asmKernel wraps an assembly kernel as a microKernel.run, checking the
// slice lengths once per call so the assembly cannot run out of bounds.
func asmKernel[T float](mr, nr int, f func(k int, a, b, c *T, ldc int, acc bool)) func(k int, a, b, c []T, ldc int, acc bool) {
	return func(k int, a, b, c []T, ldc int, acc bool) {
		_ = a[k*mr-1]
		_ = b[k*nr-1]
		_ = c[(mr-1)*ldc+nr-1]
		f(k, &a[0], &b[0], &c[0], ldc, acc)
	}
}

// Blocking: kc·nr of B (the L1-resident micro-panel) and mc·kc of A (the
// L2-resident block) sized for 32–48 KiB L1D and ≥ 1 MiB L2 per core.
var (
	sAVX2   = &microKernel[float32]{name: "avx2-fma 6x16", mr: 6, nr: 16, kc: 384, mc: 144, nc: 4096, run: asmKernel(6, 16, sgemmAVX2)}
	dAVX2   = &microKernel[float64]{name: "avx2-fma 6x8", mr: 6, nr: 8, kc: 384, mc: 144, nc: 4096, run: asmKernel(6, 8, dgemmAVX2)}
	sAVX512 = &microKernel[float32]{name: "avx512 14x32", mr: 14, nr: 32, kc: 384, mc: 168, nc: 4096, run: asmKernel(14, 32, sgemmAVX512)}
	dAVX512 = &microKernel[float64]{name: "avx512 14x16", mr: 14, nr: 16, kc: 384, mc: 168, nc: 4096, run: asmKernel(14, 16, dgemmAVX512)}
)

// Set by tests to select a lower instruction set than the CPU offers.
var noAVX512 bool

// selectKernels installs the fastest kernels this CPU supports: AVX-512F
// (with the OS saving the ZMM state, which x/sys/cpu checks), else
// AVX2+FMA, else pure Go.
func selectKernels() {
	switch {
	case cpu.X86.HasAVX512F && !noAVX512:
		sKernel, dKernel = sAVX512, dAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		sKernel, dKernel = sAVX2, dAVX2
	default:
		sKernel, dKernel = sGeneric, dGeneric
	}
}
