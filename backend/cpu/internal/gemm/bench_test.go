package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

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
