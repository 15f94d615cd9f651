package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCopyRows copies random blocks of every width from 1 to 40 between
// strided buffers and checks every element, and that the gaps between the
// destination rows and past the last one keep their NaN fill.
func TestCopyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for cols := 1; cols <= 40; cols++ {
		for _, rows := range []int{1, 2, 7} {
			lds, ldd := cols+rng.IntN(5), cols+rng.IntN(5)
			src := make([]float32, rows*lds)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			dst := make([]float32, rows*ldd+3)
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			copyRows(dst, ldd, src, lds, rows, cols)
			for i, v := range dst {
				r, c := i/ldd, i%ldd
				if r < rows && c < cols {
					if want := src[r*lds+c]; v != want {
						t.Fatalf("rows %d cols %d: dst[%d][%d] = %v, want %v", rows, cols, r, c, v, want)
					}
				} else if !math.IsNaN(float64(v)) {
					t.Fatalf("rows %d cols %d: dst[%d] = %v written outside the block", rows, cols, i, v)
				}
			}
		}
	}
}
