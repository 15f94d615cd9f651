package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/emberml/ember/backend/cpu/internal/peer"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchSizes are the square sizes n of the n×n·n×n benchmarks.
var benchSizes = []int{256, 512, 1024, 2048}

// benchSquare runs f (one n×n·n×n product on operands of type T) for each
// size and reports GFLOP/s (2n³ flops per product).
func benchSquare[T float](b *testing.B, f func(n int, a, bm, c []T)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			a, bm, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
			for i := range a {
				a[i], bm[i] = T(rng.Float64()-0.5), T(rng.Float64()-0.5)
			}
			f(n, a, bm, c) // warm up: buffers, pool, library threads
			b.ResetTimer()
			for b.Loop() {
				f(n, a, bm, c)
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkSgemm(b *testing.B) {
	b.Logf("kernel %s", Kernel())
	benchSquare(b, func(n int, a, bm, c []float32) { Sgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
}

func BenchmarkDgemm(b *testing.B) {
	benchSquare(b, func(n int, a, bm, c []float64) { Dgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
}

func BenchmarkGonumSgemm(b *testing.B) {
	var impl gonum.Implementation
	benchSquare(b, func(n int, a, bm, c []float32) {
		impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
	})
}

func BenchmarkGonumDgemm(b *testing.B) {
	var impl gonum.Implementation
	benchSquare(b, func(n int, a, bm, c []float64) {
		impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
	})
}

func BenchmarkOpenBLASSgemm(b *testing.B) {
	o, err := peer.LoadOpenBLAS()
	if err != nil {
		b.Skip(err)
	}
	benchSquare(b, func(n int, a, bm, c []float32) { o.Sgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
}

func BenchmarkOpenBLASDgemm(b *testing.B) {
	o, err := peer.LoadOpenBLAS()
	if err != nil {
		b.Skip(err)
	}
	benchSquare(b, func(n int, a, bm, c []float64) { o.Dgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
}

// BenchmarkVersusOpenBLAS alternates Sgemm/Dgemm and OpenBLAS on the same
// n×n·n×n product, each iteration running both once, and reports the best
// rate of each side over the iterations and their ratio (ember/OpenBLAS):
// on a machine shared with other work, alternating and taking the best
// compares the two under the same conditions.
func BenchmarkVersusOpenBLAS(b *testing.B) {
	o, err := peer.LoadOpenBLAS()
	if err != nil {
		b.Skip(err)
	}
	b.Run("sgemm", func(b *testing.B) {
		versus(b, func(n int, a, bm, c []float32) { Sgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) },
			func(n int, a, bm, c []float32) { o.Sgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
	})
	b.Run("dgemm", func(b *testing.B) {
		versus(b, func(n int, a, bm, c []float64) { Dgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) },
			func(n int, a, bm, c []float64) { o.Dgemm(false, false, n, n, n, 1, a, n, bm, n, 0, c, n) })
	})
}

func versus[T float](b *testing.B, ours, peer func(n int, a, bm, c []T)) {
	for _, n := range benchSizes[2:] {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			a, bm, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
			for i := range a {
				a[i], bm[i] = T(rng.Float64()-0.5), T(rng.Float64()-0.5)
			}
			ours(n, a, bm, c)
			peer(n, a, bm, c)
			bestOurs, bestPeer := math.Inf(1), math.Inf(1)
			for b.Loop() {
				// OpenBLAS's threads keep spinning for a while after a
				// call: let them go to sleep before running Ember. Each
				// side is then timed on its second back-to-back call, so
				// neither pays for waking idle cores.
				time.Sleep(150 * time.Millisecond)
				ours(n, a, bm, c)
				t0 := time.Now()
				ours(n, a, bm, c)
				bestOurs = min(bestOurs, time.Since(t0).Seconds())
				peer(n, a, bm, c)
				t1 := time.Now()
				peer(n, a, bm, c)
				bestPeer = min(bestPeer, time.Since(t1).Seconds())
			}
			flop := 2 * float64(n) * float64(n) * float64(n) / 1e9
			b.ReportMetric(flop/bestOurs, "ember-GFLOP/s")
			b.ReportMetric(flop/bestPeer, "openblas-GFLOP/s")
			b.ReportMetric(bestPeer/bestOurs, "ratio")
		})
	}
}

// smallShapes are the small and skinny products of BenchmarkSmallVersusOpenBLAS:
// 256³ and the float32 products of one training step of the MNIST MLP
// (784 → 128 → 10, batch 64) as the cpu backend issues them (the
// weights' transposed views are transposed operands): the two forward
// layers, the input gradient of the second layer and both weight
// gradients.
var smallShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"256x256x256", false, false, 256, 256, 256},
	{"fc1-64x128x784-NT", false, true, 64, 128, 784},
	{"fc2-64x10x128-NT", false, true, 64, 10, 128},
	{"fc2-dx-64x128x10-NN", false, false, 64, 128, 10},
	{"fc2-dw-128x10x64-TN", true, false, 128, 10, 64},
	{"fc1-dw-784x128x64-TN", true, false, 784, 128, 64},
}

// BenchmarkSmallVersusOpenBLAS times Sgemm (as it runs, and with the
// direct path kept on one thread: "ember1") and OpenBLAS (1 thread, then
// its default: all cores) on smallShapes, interleaved: each round times
// calls of every side back to back, and the medians over rounds are
// reported in µs with their ratios ("x-openblas1": OpenBLAS on 1 thread
// over Sgemm, >1 means Sgemm is faster; "x1-openblas1": both on 1
// thread).
func BenchmarkSmallVersusOpenBLAS(b *testing.B) {
	o, err := peer.LoadOpenBLAS()
	if err != nil {
		b.Skip(err)
	}
	defThreads := o.SetThreads(0)
	b.Logf("kernel %s; OpenBLAS %s, %d threads by default", Kernel(), o.Config(), defThreads)
	for _, s := range smallShapes {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, uint64(s.m*s.n*s.k)))
			a, bm := make([]float32, s.m*s.k), make([]float32, s.k*s.n)
			c := make([]float32, s.m*s.n)
			for i := range a {
				a[i] = float32(rng.Float64() - 0.5)
			}
			for i := range bm {
				bm[i] = float32(rng.Float64() - 0.5)
			}
			lda, ldb := s.k, s.n
			if s.transA {
				lda = s.m
			}
			if s.transB {
				ldb = s.k
			}
			// Calls per sample: about 2 ms of work at 100 GFLOP/s.
			reps := max(1, int(2e-3*100e9/(2*float64(s.m*s.n*s.k))))
			run := func(f func()) float64 {
				t0 := time.Now()
				for range reps {
					f()
				}
				return time.Since(t0).Seconds() / float64(reps) * 1e6
			}
			ours := func() { Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n) }
			theirs := func() { o.Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n) }
			var to, t1, tn, to1 []float64
			ours()
			theirs()
			par := directParallel
			defer func() { directParallel = par }()
			for b.Loop() {
				to = append(to, run(ours))
				directParallel = math.MaxInt
				to1 = append(to1, run(ours))
				directParallel = par
				o.SetThreads(1)
				t1 = append(t1, run(theirs))
				o.SetThreads(defThreads)
				tn = append(tn, run(theirs))
			}
			mo, m1, mn, mo1 := median(to), median(t1), median(tn), median(to1)
			b.ReportMetric(mo, "ember-us")
			b.ReportMetric(mo1, "ember1-us")
			b.ReportMetric(m1/mo1, "x1-openblas1")
			b.ReportMetric(m1, "openblas1-us")
			b.ReportMetric(mn, "openblasN-us")
			b.ReportMetric(m1/mo, "x-openblas1")
			b.ReportMetric(mn/mo, "x-openblasN")
			b.ReportMetric(2*float64(s.m*s.n*s.k)/mo/1e3, "ember-GFLOP/s")
		})
	}
}

// median returns the median of x (sorting it).
func median(x []float64) float64 {
	slices.Sort(x)
	return x[len(x)/2]
}
