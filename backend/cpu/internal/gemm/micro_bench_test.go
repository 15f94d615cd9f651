package gemm

import "testing"

// BenchmarkMicroKernel runs the selected float32 and float64 micro-kernels
// alone on L1-resident packed panels (k = 256), the ceiling of the driver.
func BenchmarkMicroKernel(b *testing.B) {
	b.Run("f32", func(b *testing.B) { benchMicro(b, sKernel) })
	b.Run("f64", func(b *testing.B) { benchMicro(b, dKernel) })
}

func benchMicro[T float](b *testing.B, kr *microKernel[T]) {
	const k = 256
	a := make([]T, k*kr.mr)
	bp := make([]T, k*kr.nr)
	c := make([]T, kr.mr*kr.nr)
	for i := range a {
		a[i] = T(i%7) * 0.25
	}
	for i := range bp {
		bp[i] = T(i%5) * 0.5
	}
	for b.Loop() {
		kr.run(k, a, bp, c, kr.nr, false)
	}
	b.ReportMetric(2*float64(k*kr.mr*kr.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
