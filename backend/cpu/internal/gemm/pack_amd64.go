package gemm

import "unsafe"

// Gather-based packing of 14-row micro-panels of a non-transposed op(A)
// (pack_amd64.s, AVX-512F): dst[p·14+r] = alpha·a[idx[r]+p] for r < 14,
// p < k, k ≥ 1, idx[r] = r·lda (idx has 16 entries).

//go:noescape
func packA14S(k int, a *float32, idx *int32, alpha float32, dst *float32)

//go:noescape
func packA14D(k int, a *float64, idx *int32, alpha float64, dst *float64)

// packA14 packs rows 0..13, columns 0..kb of the row-major matrix a
// (leading dimension lda), times alpha, into the micro-panel dst
// (dst[p·14+r]) with the AVX-512 gathers. It reports false, doing nothing,
// when the row offsets do not fit the gathers' 32-bit indices. Slices too
// short panic before the assembly runs.
func packA14[T float](a []T, lda, kb int, alpha T, dst []T) bool {
	if kb < 1 || 13*lda+kb > 1<<31-1 {
		return false
	}
	_ = a[13*lda+kb-1]
	_ = dst[14*kb-1]
	var idx [16]int32
	for r := range 14 {
		idx[r] = int32(r * lda)
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		packA14S(kb, (*float32)(unsafe.Pointer(&a[0])), &idx[0], float32(alpha), (*float32)(unsafe.Pointer(&dst[0])))
	} else {
		packA14D(kb, (*float64)(unsafe.Pointer(&a[0])), &idx[0], float64(alpha), (*float64)(unsafe.Pointer(&dst[0])))
	}
	return true
}
