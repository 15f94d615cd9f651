package cpu

import "golang.org/x/sys/cpu"

// hasAVX selects transpose8AVX.
var hasAVX = cpu.X86.HasAVX

//go:noescape
func transpose8AVX(dst *float32, ldd int, src *float32, lds int, n int)

// transposeStrip8 transposes the 8-row strip src[r·lds + c] (r < 8,
// c < 8·n) into dst[c·ldd + r].
func transposeStrip8(dst []float32, ldd int, src []float32, lds, n int) {
	if n == 0 {
		return
	}
	_ = dst[(8*n-1)*ldd+7]
	_ = src[7*lds+8*n-1]
	if hasAVX {
		transpose8AVX(&dst[0], ldd, &src[0], lds, n)
		return
	}
	transposeStrip8Go(dst, ldd, src, lds, n)
}
