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

// The strided kernels (see microKernel.runS): the panels' rows lie as and
// bs elements apart.

//go:noescape
func sgemmAVX2S(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX2S(k int, a *float64, as int, b *float64, bs int, c *float64, ldc int, acc bool)

//go:noescape
func sgemmAVX512S(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func sgemmAVX512S16(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX512S(k int, a *float64, as int, b *float64, bs int, c *float64, ldc int, acc bool)

// The row kernels (see microKernel.runR): A as mr rows as elements apart.

//go:noescape
func sgemmAVX2R(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX2R(k int, a *float64, as int, b *float64, bs int, c *float64, ldc int, acc bool)

//go:noescape
func sgemmAVX512R(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func sgemmAVX512R16(k int, a *float32, as int, b *float32, bs int, c *float32, ldc int, acc bool)

//go:noescape
func dgemmAVX512R(k int, a *float64, as int, b *float64, bs int, c *float64, ldc int, acc bool)

// asmKernelR wraps a row assembly kernel as a microKernel.runR, checking
// the slice lengths once per call.
func asmKernelR[T float](mr, nr int, f func(k int, a *T, as int, b *T, bs int, c *T, ldc int, acc bool)) func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool) {
	return func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool) {
		_ = a[(mr-1)*as+k-1]
		_ = b[(k-1)*bs+nr-1]
		_ = c[(mr-1)*ldc+nr-1]
		f(k, &a[0], as, &b[0], bs, &c[0], ldc, acc)
	}
}

// asmKernelS wraps a strided assembly kernel as a microKernel.runS,
// checking the slice lengths once per call.
func asmKernelS[T float](mr, nr int, f func(k int, a *T, as int, b *T, bs int, c *T, ldc int, acc bool)) func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool) {
	return func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool) {
		_ = a[(k-1)*as+mr-1]
		_ = b[(k-1)*bs+nr-1]
		_ = c[(mr-1)*ldc+nr-1]
		f(k, &a[0], as, &b[0], bs, &c[0], ldc, acc)
	}
}

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

// Blocking. AVX-512 (tuned on a Sapphire Rapids core, 48 KiB L1D and
// 2 MiB L2): kc·nr of B is 64 KiB (f32) or 32 KiB (f64) and streams from
// L2 at a fraction of its bandwidth, while the mc×kc block of A (1.1 MiB,
// 1 MiB) stays in L2; a large mc makes each pass over the packed B block
// (from L3) serve many rows, which measured 10–20 % faster than an
// L1-sized kc with mc ≈ 170. AVX2 chips have 256 KiB–1.25 MiB of L2, so
// their A blocks are kept to 240 KiB.
var (
	sAVX2 = &microKernel[float32]{name: "avx2-fma 6x16", mr: 6, nr: 16, kc: 256, mc: 240, nc: 4096,
		run: asmKernel(6, 16, sgemmAVX2), runS: asmKernelS(6, 16, sgemmAVX2S), runR: asmKernelR(6, 16, sgemmAVX2R)}
	dAVX2 = &microKernel[float64]{name: "avx2-fma 6x8", mr: 6, nr: 8, kc: 256, mc: 120, nc: 4096,
		run: asmKernel(6, 8, dgemmAVX2), runS: asmKernelS(6, 8, dgemmAVX2S), runR: asmKernelR(6, 8, dgemmAVX2R)}
	sAVX512 = &microKernel[float32]{name: "avx512 14x32", mr: 14, nr: 32, kc: 512, mc: 560, nc: 4096, gatherA: true,
		run: asmKernel(14, 32, sgemmAVX512), runS: asmKernelS(14, 32, sgemmAVX512S), runR: asmKernelR(14, 32, sgemmAVX512R),
		narrow: &microKernel[float32]{name: "avx512 14x16", mr: 14, nr: 16, gatherA: true,
			runS: asmKernelS(14, 16, sgemmAVX512S16), runR: asmKernelR(14, 16, sgemmAVX512R16)}}
	dAVX512 = &microKernel[float64]{name: "avx512 14x16", mr: 14, nr: 16, kc: 256, mc: 504, nc: 4096, gatherA: true,
		run: asmKernel(14, 16, dgemmAVX512), runS: asmKernelS(14, 16, dgemmAVX512S), runR: asmKernelR(14, 16, dgemmAVX512R)}
)

// selectKernels installs the fastest kernels this CPU supports: AVX-512F
// (with the OS saving the ZMM state, which x/sys/cpu checks), else
// AVX2+FMA, else pure Go.
func selectKernels() {
	switch {
	case cpu.X86.HasAVX512F:
		sKernel, dKernel = sAVX512, dAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		sKernel, dKernel = sAVX2, dAVX2
	default:
		sKernel, dKernel = sGeneric, dGeneric
	}
}
