package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
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
