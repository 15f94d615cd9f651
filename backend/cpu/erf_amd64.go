package cpu

import "golang.org/x/sys/cpu"

//go:generate go run gen_erf.go

// The erf kernels of erf_amd64.s (see fused_erf.go): n is a multiple of
// the kernel's block (16 elements for AVX-512, 8 for AVX2), tab the
// erfTables row of its polynomial. Each stops before the first block
// holding an element to compute with math.Erf, which it leaves unwritten,
// or at n, and returns the number of elements it wrote.

//go:noescape
func erfAVX512(o, a *float32, n int, tab *float64) int

//go:noescape
func geluAVX512(o, t *float32, n int, tab *float64, k *float32) int

//go:noescape
func erfAVX2(o, a *float32, n int, tab *float64) int

// erfISA selects the erf kernel: the best this CPU has (AVX-512 needs F,
// DQ and VL, with the OS saving the ZMM state, which x/sys/cpu checks).
// Tests lower it to check every kernel.
var erfISA = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL:
		return erfWithAVX512
	case hasAVX2:
		return erfWithAVX2
	}
	return erfGeneric
}()

// erfVec computes the leading elements of o = erf(a) with the erfISA
// kernel and returns how many it did.
func erfVec(o, a []float32) int {
	var blk int
	var kern func(o, a *float32, n int, tab *float64) int
	var tab *float64
	switch erfISA {
	case erfWithAVX512:
		blk, kern, tab = 16, erfAVX512, &erfTable().q16[0][0]
	case erfWithAVX2:
		blk, kern, tab = 8, erfAVX2, &erfTable().c4[0][0]
	default:
		return 0
	}
	m := len(o) / blk * blk
	if m == 0 {
		return 0
	}
	_ = a[m-1]
	for i := 0; i < m; {
		i += kern(&o[i], &a[i], m-i, tab)
		if i < m {
			erfGo(o[i:i+blk], a[i:i+blk])
			i += blk
		}
	}
	return m
}

// geluVec computes the leading elements of geluF32 with the AVX-512
// kernel, where erfISA selects it, and returns how many it did: blocks of
// 16 elements, each block holding an element whose erf needs math.Erf by
// geluGo in scratch w.
func geluVec(o, t []float32, k *[3]float32, swap bool, w []float32) int {
	const blk = 16
	m := len(o) / blk * blk
	if erfISA != erfWithAVX512 || m == 0 {
		return 0
	}
	_, _ = o[m-1], t[m-1]
	tab := &erfTable().q16[0][0]
	for i := 0; i < m; {
		i += geluAVX512(&o[i], &t[i], m-i, tab, &k[0])
		if i < m {
			geluGo(o[i:i+blk], t[i:i+blk], k, swap, w)
			i += blk
		}
	}
	return m
}
