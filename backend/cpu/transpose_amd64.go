package cpu

import "golang.org/x/sys/cpu"

// hasAVX selects transpose8AVX.
var hasAVX = cpu.X86.HasAVX

//go:noescape
func transpose8AVX(dst *float32, ldd int, src *float32, lds int, n int, sstep, dstep int)

// transposeColumn8 transposes the 8-column strip src[r·lds + c] (r < 8·n,
// c < 8) into dst[c·ldd + r]: 8 rows of dst written front to back, whole
// cache lines at a time.
func transposeColumn8(dst []float32, ldd int, src []float32, lds, n int) {
	if n == 0 {
		return
	}
	_ = dst[7*ldd+8*n-1]
	_ = src[(8*n-1)*lds+7]
	if hasAVX {
		transpose8AVX(&dst[0], ldd, &src[0], lds, n, 32*lds, 32)
		return
	}
	transposeColumn8Go(dst, ldd, src, lds, n)
}
