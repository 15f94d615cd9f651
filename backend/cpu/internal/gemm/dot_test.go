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

// TestSdotBlocksMatchesFloat64 runs every dot kernel shape of every kernel
// set over several blocks (rows of each block lda and ldb apart, blocks sa
// and sb apart, NaNs in the gaps, which must not be read) against
// per-lane float64 sums over all blocks, in both store modes.
func TestSdotBlocksMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range tileKernels() {
		t.Run(name, func(t *testing.T) {
			useTiles(t, name)
			lanes := TileLanes()
			mi, mj := SdotMaxRows()
			for ri := 1; ri <= mi; ri++ {
				for rj := 1; rj <= mj; rj++ {
					for _, k := range []int{1, 7, 16, 17, 40, 576} {
						for _, n := range []int{1, 2, 5} {
							lda, ldb := k+1+rng.IntN(3), k+1+rng.IntN(3)
							sa, sb := ri*lda+rng.IntN(5), rj*ldb+rng.IntN(5)
							a := make([]float32, (n-1)*sa+ri*lda)
							b := make([]float32, (n-1)*sb+rj*ldb)
							for e := range a {
								a[e] = float32(math.NaN())
							}
							for e := range b {
								b[e] = float32(math.NaN())
							}
							for m := range n {
								for i := range ri {
									copy(a[m*sa+i*lda:][:k], randF32(rng, k))
								}
								for j := range rj {
									copy(b[m*sb+j*ldb:][:k], randF32(rng, k))
								}
							}
							for _, acc := range []bool{false, true} {
								c := randF32(rng, ri*rj*lanes)
								old := append([]float32(nil), c...)
								SdotBlocks(ri, rj, k, n, a, lda, sa, b, ldb, sb, c, acc)
								for i := range ri {
									for j := range rj {
										for l := range lanes {
											var s, mag float64
											for m := range n {
												for e := l; e < k; e += lanes {
													p := float64(a[m*sa+i*lda+e]) * float64(b[m*sb+j*ldb+e])
													s += p
													mag += math.Abs(p)
												}
											}
											if acc {
												s += float64(old[(i*rj+j)*lanes+l])
												mag += math.Abs(float64(old[(i*rj+j)*lanes+l]))
											}
											if got := float64(c[(i*rj+j)*lanes+l]); math.Abs(got-s) > 2e-7*float64(n*k/lanes+2)*(mag+1) {
												t.Fatalf("ri %d rj %d k %d n %d acc %v: pair (%d,%d) lane %d = %v, want %v", ri, rj, k, n, acc, i, j, l, got, s)
											}
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

// TestLaneSumOrder checks that LaneSum's unrolled 16- and 8-lane sums give
// the bits of the pairwise loop (the order Sdot's callers rely on for
// reproducible results) on random values of mixed magnitude.
func TestLaneSumOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{16, 8} {
		for range 1000 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
			}
			if got, want := LaneSum(v), laneSumLoop(v); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%d lanes %v: LaneSum %v, pairwise loop %v", n, v, got, want)
			}
		}
	}
}
