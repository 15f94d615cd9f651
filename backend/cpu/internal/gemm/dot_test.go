package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSdotMatchesFloat64 runs every dot kernel shape of every kernel set
// against per-lane float64 sums, with NaNs right after each row's k
// elements (which must not be read) and both store modes, and checks
// LaneSum against the plain float64 dot product.
func TestSdotMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range tileKernels() {
		t.Run(name, func(t *testing.T) {
			useTiles(t, name)
			lanes := TileLanes()
			mi, mj := SdotMaxRows()
			for ri := 1; ri <= mi; ri++ {
				for rj := 1; rj <= mj; rj++ {
					for _, k := range []int{0, 1, 3, 7, 8, 15, 16, 17, 40, 100} {
						lda, ldb := k+1+rng.IntN(3), k+1+rng.IntN(3)
						a, b := randF32(rng, ri*lda), randF32(rng, rj*ldb)
						for i := range ri {
							a[i*lda+k] = float32(math.NaN())
						}
						for j := range rj {
							b[j*ldb+k] = float32(math.NaN())
						}
						for _, acc := range []bool{false, true} {
							c := randF32(rng, ri*rj*lanes)
							old := append([]float32(nil), c...)
							Sdot(ri, rj, k, a, lda, b, ldb, c, acc)
							for i := range ri {
								for j := range rj {
									var dot float64
									for l := range lanes {
										var s float64
										for e := l; e < k; e += lanes {
											s += float64(a[i*lda+e]) * float64(b[j*ldb+e])
										}
										dot += s
										w := s
										if acc {
											w += float64(old[(i*rj+j)*lanes+l])
										}
										if got := float64(c[(i*rj+j)*lanes+l]); math.Abs(got-w) > 1e-5*float64(k+2) {
											t.Fatalf("ri %d rj %d k %d acc %v: pair (%d,%d) lane %d = %v, want %v", ri, rj, k, acc, i, j, l, got, w)
										}
									}
									if !acc {
										if got := float64(LaneSum(c[(i*rj+j)*lanes:][:lanes])); math.Abs(got-dot) > 1e-5*float64(k+2) {
											t.Fatalf("ri %d rj %d k %d: LaneSum (%d,%d) = %v, want %v", ri, rj, k, i, j, got, dot)
										}
									}
								}
							}
						}
					}
				}
			}
		})
	}
}
