package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// tileKernels returns the tile kernel sets this machine can run, the
// portable loop last.
func tileKernels() []string {
	var names []string
	for _, n := range []string{"avx512", "avx2"} {
		if tileSetByName(n) != nil {
			names = append(names, n)
		}
	}
	return append(names, "generic")
}

func useTiles(t testing.TB, name string) {
	t.Helper()
	restore, err := UseTileKernel(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}

// TestStileMatchesFloat64 runs every tile shape of every kernel set on
// random operands read through random offset tables (overlapping,
// unordered, some rows repeated) and compares with the sum in float64,
// for both store modes.
func TestStileMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range tileKernels() {
		t.Run(name, func(t *testing.T) {
			useTiles(t, name)
			lanes := TileLanes()
			for vecs := 1; vecs <= 2; vecs++ {
				cols := vecs * lanes
				for rows := 1; rows <= TileMaxRows(vecs); rows++ {
					for _, k := range []int{0, 1, 2, 3, 7, 64, 129} {
						a := randF32(rng, 300)
						b := randF32(rng, 500)
						ao := make([]int32, k+3)
						bo := make([]int32, k+3)
						for p := range ao {
							ao[p] = int32(rng.IntN(len(a) - rows + 1))
							bo[p] = int32(rng.IntN(len(b) - cols + 1))
						}
						ldc := cols + rng.IntN(5)
						for _, acc := range []bool{false, true} {
							c := randF32(rng, rows*ldc)
							want := make([]float64, len(c))
							for i := range c {
								want[i] = float64(c[i])
							}
							for r := range rows {
								for j := range cols {
									s := 0.0
									for p := range k {
										s += float64(a[int(ao[p])+r]) * float64(b[int(bo[p])+j])
									}
									if acc {
										want[r*ldc+j] += s
									} else {
										want[r*ldc+j] = s
									}
								}
							}
							Stile(rows, vecs, k, a, NewOffsets(ao), b, NewOffsets(bo), c, ldc, acc)
							for i := range c {
								r, j := i/ldc, i%ldc
								w := want[i]
								if j >= cols { // between the rows: untouched
									continue
								}
								if d := math.Abs(float64(c[i]) - w); d > 1e-5*float64(k+1)*math.Max(1, math.Abs(w)) {
									t.Fatalf("rows %d vecs %d k %d acc %v: C[%d][%d] = %v, want %v", rows, vecs, k, acc, r, j, c[i], w)
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestStileBounds checks that reads past an operand panic before any work.
func TestStileBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func()
	}{
		{"a", func() {
			Stile(4, 1, 1, make([]float32, 10), NewOffsets([]int32{7}), make([]float32, 64), NewOffsets([]int32{0}), make([]float32, 64), 16, false)
		}},
		{"b", func() {
			Stile(1, 2, 1, make([]float32, 10), NewOffsets([]int32{0}), make([]float32, 40), NewOffsets([]int32{20}), make([]float32, 64), 32, false)
		}},
		{"c", func() {
			Stile(2, 1, 1, make([]float32, 10), NewOffsets([]int32{0}), make([]float32, 64), NewOffsets([]int32{0}), make([]float32, 20), 16, false)
		}},
		{"rows", func() {
			Stile(15, 1, 1, make([]float32, 100), NewOffsets([]int32{0}), make([]float32, 64), NewOffsets([]int32{0}), make([]float32, 1000), 32, false)
		}},
		{"k", func() {
			Stile(1, 1, 2, make([]float32, 100), NewOffsets([]int32{0}), make([]float32, 64), NewOffsets([]int32{0}), make([]float32, 1000), 32, false)
		}},
		{"negative", func() { NewOffsets([]int32{3, -1}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tc.run()
		})
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkStile runs tiles of a 5×5 convolution with 32 input channels
// (the MNIST CNN's second layer): rows are consecutive pixels of an
// output row read from a 12×12 image, columns 16·vecs output channels of
// packed weights, k = 800.
func BenchmarkStile(b *testing.B) {
	for _, name := range tileKernels() {
		useTiles(b, name)
		lanes := TileLanes()
		for _, vecs := range []int{1, 2} {
			rows := min(8, TileMaxRows(vecs))
			b.Run(fmt.Sprintf("%s/R%dV%d", name, rows, vecs), func(b *testing.B) {
				const cin, kh, kw, h, w = 32, 5, 5, 12, 12
				k := cin * kh * kw
				cols := vecs * lanes
				img := randF32(rand.New(rand.NewPCG(1, 1)), cin*h*w)
				wts := randF32(rand.New(rand.NewPCG(1, 2)), k*cols)
				ao, bo := make([]int32, k), make([]int32, k)
				for p := range k {
					ci, y, x := p/(kh*kw), p/kw%kh, p%kw
					ao[p] = int32(ci*h*w + y*w + x)
					bo[p] = int32(p * cols)
				}
				aoff, boff := NewOffsets(ao), NewOffsets(bo)
				c := make([]float32, rows*cols)
				for b.Loop() {
					Stile(rows, vecs, k, img, aoff, wts, boff, c, cols, false)
				}
				b.ReportMetric(2*float64(k*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestStileBatchMatchesStile checks a batch of tiles at scattered
// positions against one Stile call per tile, bit for bit, on every kernel
// set.
func TestStileBatchMatchesStile(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, name := range tileKernels() {
		t.Run(name, func(t *testing.T) {
			useTiles(t, name)
			cols := 2 * TileLanes()
			rows := min(5, TileMaxRows(2))
			const k, ldc = 37, 70
			a, b := randF32(rng, 900), randF32(rng, 2000)
			ao, bo := make([]int32, k), make([]int32, k)
			for p := range k {
				ao[p] = int32(rng.IntN(500))
				bo[p] = int32(rng.IntN(2000 - cols))
			}
			aoff, boff := NewOffsets(ao), NewOffsets(bo)
			pos := []TilePos{{0, 0}, {17, 5}, {300, 400}, {3, 1000}, {17, 5}}
			for _, acc := range []bool{false, true} {
				c0 := randF32(rng, 2000)
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				StileBatch(rows, 2, k, a, aoff, b, boff, got, ldc, acc, pos)
				for _, q := range pos {
					Stile(rows, 2, k, a[q.A:], aoff, b, boff, want[q.C:], ldc, acc)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("acc %v: c[%d] = %v, want %v", acc, i, got[i], want[i])
					}
				}
			}
		})
	}
}
