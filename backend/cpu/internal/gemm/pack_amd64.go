package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

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

//go:noescape
func packT8S(k int, src *float32, lds int, dst *float32, ldd int)

// hasTransposePack selects packT8S (AVX).
var hasTransposePack = cpu.X86.HasAVX2

// transpose8 sets dst[p·ldd+r] = src[r·lds+p] for r < 8 and p < k8, the
// multiple of 8 it returns (at most k), with packT8S for float32 on AVX2
// (returning 0 elsewhere, leaving everything to the caller).
func transpose8[T float](src []T, lds, k int, dst []T, ldd int) int {
	var z T
	k8 := k &^ 7
	if !hasTransposePack || unsafe.Sizeof(z) != 4 || k8 == 0 {
		return 0
	}
	_ = src[7*lds+k8-1]
	_ = dst[(k8-1)*ldd+7]
	packT8S(k8, (*float32)(unsafe.Pointer(&src[0])), lds, (*float32)(unsafe.Pointer(&dst[0])), ldd)
	return k8
}
