package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 selects the AVX2 loops of simd_amd64.s.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func sumF32AVX2(x *float32, n int) float64

//go:noescape
func addF32AVX2(o, a, b *float32, n int, nt bool)

//go:noescape
func prefetchT0(p unsafe.Pointer, lines int)

//go:noescape
func streamF32AVX2(o, a *float32, n int)

// sumF32 is the float64 sum of x.
func sumF32(x []float32) float64 {
	if !hasAVX2 || len(x) < 16 {
		return sum64(x)
	}
	m := len(x) &^ 15
	return sumF32AVX2(&x[0], m) + sum64(x[m:])
}

// addF32 sets o[i] = a[i] + b[i]; total is the size of the whole output
// (for the choice of stores).
func addF32(o, a, b []float32, total int) {
	if !hasAVX2 || len(o) < 16 {
		addGo(o, a, b)
		return
	}
	a, b = a[:len(o)], b[:len(o)]
	m := len(o) &^ 15
	nt := total >= ntMin && uintptr(unsafe.Pointer(&o[0]))%32 == 0
	addF32AVX2(&o[0], &a[0], &b[0], m, nt)
	addGo(o[m:], a[m:], b[m:])
}

// prefetch asks for the cache lines of the bytes [p, p+n) (PREFETCHT0).
func prefetch(p unsafe.Pointer, n int) {
	if n > 0 {
		prefetchT0(p, (int(uintptr(p))&63+n+63)/64)
	}
}

// streamable reports whether storeStream streams (with AVX2).
func streamable() bool { return hasAVX2 }

// storeStream copies a into o with non-temporal stores where o is 32-byte
// aligned and the CPU has AVX2 (the bulk; the rest by copy): the lines of
// o are written without being read first, and not kept in the caches.
func storeStream(o, a []float32) {
	a = a[:len(o)]
	m := 0
	if hasAVX2 && len(o) >= 16 && uintptr(unsafe.Pointer(&o[0]))%32 == 0 {
		m = len(o) &^ 15
		streamF32AVX2(&o[0], &a[0], m)
	}
	copy(o[m:], a[m:])
}

//go:noescape
func copyRowsAVX(dst *float32, ldd int, src *float32, lds int, rows, cols int)

// copyRows copies rows rows of cols elements from src (rows lds elements
// apart) to dst (rows ldd apart); the two must not overlap.
func copyRows(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = dst[(rows-1)*ldd+cols-1]
	_ = src[(rows-1)*lds+cols-1]
	if !hasAVX2 || cols < 8 {
		copyRowsGo(dst, ldd, src, lds, rows, cols)
		return
	}
	copyRowsAVX(&dst[0], ldd, &src[0], lds, rows, cols)
}
