//go:build !amd64

package cpu

// transposeColumn8 transposes the 8-column strip src[r·lds + c] (r < 8·n,
// c < 8) into dst[c·ldd + r].
func transposeColumn8(dst []float32, ldd int, src []float32, lds, n int) {
	transposeColumn8Go(dst, ldd, src, lds, n)
}

// hasAVX is false: no vector transpose on this architecture.
var hasAVX = false
