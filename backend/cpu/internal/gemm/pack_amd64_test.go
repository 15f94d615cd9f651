package gemm

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestPackAGather checks the AVX-512 gather packing of packA against the
// scalar loop (gather off) on a padded row-major A with partial panels,
// for both element types and alpha ≠ 1: the two must agree exactly (both
// compute alpha·a in the element type, once per value).
func TestPackAGather(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	checkPackAGather[float32](t)
	checkPackAGather[float64](t)
}

func checkPackAGather[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const lda, i0, p0, mb, kb = 70, 3, 5, 47, 61 // 3 full panels and 5 rows
	a := make([]T, (i0+mb)*lda)
	for i := range a {
		a[i] = T(rng.Float64()*4 - 2)
	}
	for _, alpha := range []T{1, -0.75} {
		want := make([]T, roundUp(mb, 14)*kb)
		got := make([]T, len(want))
		for i := range got {
			got[i] = 99 // rows past mb must be cleared
		}
		packA(false, a, lda, i0, p0, mb, kb, 14, alpha, want, false)
		packA(false, a, lda, i0, p0, mb, kb, 14, alpha, got, true)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%T alpha=%v: dst[%d] = %v, want %v", got[0], alpha, i, got[i], want[i])
			}
		}
		// Spot-check the layout itself: dst[panel·14·kb + p·14 + r].
		r, p := 16, 9 // panel 1, row 2
		if w := alpha * a[(i0+r)*lda+p0+p]; got[14*kb+p*14+2] != w {
			t.Fatalf("%T alpha=%v: layout: got %v, want %v", got[0], alpha, got[14*kb+p*14+2], w)
		}
	}
}
