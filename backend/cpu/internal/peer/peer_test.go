package peer

import (
	"errors"
	"math"
	"testing"
)

// TestOpenBLASGemm checks cblas_sgemm/cblas_dgemm through the loader on a
// hand-worked 2×3·3×2 product (skipped when OpenBLAS is not installed).
func TestOpenBLASGemm(t *testing.T) {
	o, err := LoadOpenBLAS()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("error %v does not wrap ErrUnavailable", err)
		}
		t.Skip(err)
	}
	t.Logf("%s: %s", o.Path, o.Config())
	// A = [1 2 3; 4 5 6], B = [7 8; 9 10; 11 12]: A·B = [58 64; 139 154].
	// With alpha 2, beta 0.5 and C = [1 2; 3 4]: [116.5 129; 279.5 310].
	a := []float64{1, 2, 3, 4, 5, 6}
	b := []float64{7, 8, 9, 10, 11, 12}
	c := []float64{1, 2, 3, 4}
	want := []float64{116.5, 129, 279.5, 310}
	o.Dgemm(false, false, 2, 2, 3, 2, a, 3, b, 2, 0.5, c, 2)
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("dgemm: c = %v, want %v", c, want)
		}
	}
	// Transposed operands: Aᵀ stored 3×2, Bᵀ stored 2×3.
	at := []float32{1, 4, 2, 5, 3, 6}
	bt := []float32{7, 9, 11, 8, 10, 12}
	cs := []float32{1, 2, 3, 4}
	o.Sgemm(true, true, 2, 2, 3, 2, at, 2, bt, 3, 0.5, cs, 2)
	for i := range want {
		if math.Abs(float64(cs[i])-want[i]) > 1e-4 {
			t.Fatalf("sgemm: c = %v, want %v", cs, want)
		}
	}
}
