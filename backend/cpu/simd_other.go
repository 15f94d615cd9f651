//go:build !amd64

package cpu

import "unsafe"

// sumF32 is the float64 sum of x.
func sumF32(x []float32) float64 { return sum64(x) }

// addF32 sets o[i] = a[i] + b[i].
func addF32(o, a, b []float32, total int) { addGo(o, a, b) }

// prefetch does nothing here.
func prefetch(p unsafe.Pointer, n int) {}

// streamable reports false: storeStream only copies here.
func streamable() bool { return false }

// storeStream copies a into o.
func storeStream(o, a []float32) { copy(o, a) }

// copyRows copies rows rows of cols elements from src (rows lds elements
// apart) to dst (rows ldd apart); the two must not overlap.
func copyRows(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	copyRowsGo(dst, ldd, src, lds, rows, cols)
}
