package flex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randSlice returns n uniform values in [-1, -0.1] ∪ [0.1, 1] (non-zero).
func randSlice[T kernelFloat](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		v := 0.1 + 0.9*rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		s[i] = T(v)
	}
	return s
}

// refGemm is the float64 triple loop C = op(A)·op(B) (+ C0 when accumulate).
func refGemm[T kernelFloat](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c0 []T, ldc int, accumulate bool) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			if accumulate {
				s = float64(c0[i*ldc+j])
			}
			for p := 0; p < k; p++ {
				ai := i*lda + p
				if transA {
					ai = p*lda + i
				}
				bi := p*ldb + j
				if transB {
					bi = j*ldb + p
				}
				s += float64(a[ai]) * float64(b[bi])
			}
			out[i*n+j] = s
		}
	}
	return out
}

type gemmFunc[T kernelFloat] func(transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, accumulate bool)

// checkGemm runs f on random operands with padded leading dimensions and
// compares C with refGemm elementwise within tol·(1+Σ|a||b|), and checks
// that the padding columns of C are untouched.
func checkGemm[T kernelFloat](t *testing.T, f gemmFunc[T], tol float64, transA, transB bool, m, n, k int, accumulate bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(m*1000003+n*1009+k), uint64(k)))
	const pad = 3
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad+1, n+pad
	a := randSlice[T](rng, max(ar*lda, 1))
	b := randSlice[T](rng, max(br*ldb, 1))
	c := randSlice[T](rng, max(m*ldc, 1))
	c0 := append([]T(nil), c...)
	want := refGemm(transA, transB, m, n, k, a, lda, b, ldb, c0, ldc, accumulate)
	f(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := float64(c[i*ldc+j])
			if j >= n {
				if got != float64(c0[i*ldc+j]) {
					t.Fatalf("C[%d,%d] (padding) changed from %v to %v", i, j, c0[i*ldc+j], got)
				}
				continue
			}
			if d := math.Abs(got - want[i*n+j]); d > tol*(1+float64(k)) {
				t.Fatalf("C[%d,%d] = %v, want %v (|diff| %.3g)", i, j, got, want[i*n+j], d)
			}
		}
	}
}

func TestGemm(t *testing.T) {
	sizes := []int{1, 3, 17, 65, 130}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, acc := range []bool{false, true} {
				for _, m := range sizes {
					for _, n := range sizes {
						for _, k := range sizes {
							if m*n*k > 17*65*130 && (m != n || n != k) {
								continue // keep the test fast; large cases below
							}
							name := fmt.Sprintf("tA=%v,tB=%v,acc=%v,%dx%dx%d", ta, tb, acc, m, n, k)
							checkGemm(t, gemmF32, 1e-6, ta, tb, m, n, k, acc)
							checkGemm(t, gemmF64, 1e-14, ta, tb, m, n, k, acc)
							if t.Failed() {
								t.Fatal(name)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmBlocks uses sizes that cross the gemmKC, gemmMC and gemmNC block
// edges and the parallel split.
func TestGemmBlocks(t *testing.T) {
	cases := [][3]int{
		{gemmMC + 3, gemmNC + 5, gemmKC + 7},
		{1, 2*gemmNC + 1, 2*gemmKC + 1},
		{2*gemmMC + 1, 3, gemmKC},
		{64, 128, 784}, {64, 10, 128}, {784, 128, 64}, {64, 784, 128},
	}
	for _, s := range cases {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				acc := s[0]%2 == 0
				checkGemm(t, gemmF32, 1e-6, ta, tb, s[0], s[1], s[2], acc)
				checkGemm(t, gemmF64, 1e-14, ta, tb, s[0], s[1], s[2], !acc)
			}
		}
	}
}

// TestGemmZeroK checks that k = 0 zeroes C unless accumulating.
func TestGemmZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4, 5, 6}
	gemmF32(false, false, 2, 2, 0, nil, 0, nil, 2, c, 3, true)
	if c[0] != 1 || c[4] != 5 {
		t.Fatalf("accumulate with k=0 changed C: %v", c)
	}
	gemmF32(false, false, 2, 2, 0, nil, 0, nil, 2, c, 3, false)
	want := []float32{0, 0, 3, 0, 0, 6}
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("k=0 overwrite: got %v, want %v", c, want)
		}
	}
}
