//go:build !amd64

package cpu

// transposeStrip8 transposes the 8-row strip src[r·lds + c] (r < 8,
// c < 8·n) into dst[c·ldd + r].
func transposeStrip8(dst []float32, ldd int, src []float32, lds, n int) {
	transposeStrip8Go(dst, ldd, src, lds, n)
}
