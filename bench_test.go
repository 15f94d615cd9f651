package ember

import (
	"testing"
)

// Benchmarks of root ops on the Flex backend (pure Go). Each reports the
// time per op; compute-bound ones also report GFLOP/s (2 FLOPs per
// multiply-add) and memory-bound ones bytes/s via SetBytes.

func benchSync(b *testing.B, dev Device) {
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkFlexAdd1M(b *testing.B) {
	dev := Flex()
	x, y := Rand([]int{1 << 20}, dev), Rand([]int{1 << 20}, dev)
	b.SetBytes(3 * 4 << 20) // two reads and one write of 1M f32
	b.ResetTimer()
	for b.Loop() {
		_ = x.Add(y)
	}
	benchSync(b, dev)
}

func benchMatmul(b *testing.B, n int) {
	dev := Flex()
	x, y := Rand([]int{n, n}, dev), Rand([]int{n, n}, dev)
	b.ResetTimer()
	for b.Loop() {
		_ = x.Matmul(y)
	}
	benchSync(b, dev)
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkFlexMatmul256(b *testing.B)  { benchMatmul(b, 256) }
func BenchmarkFlexMatmul1024(b *testing.B) { benchMatmul(b, 1024) }

func BenchmarkFlexSum16M(b *testing.B) {
	dev := Flex()
	x := Rand([]int{1 << 24}, dev)
	b.SetBytes(4 << 24)
	b.ResetTimer()
	for b.Loop() {
		_ = x.Sum()
	}
	benchSync(b, dev)
}

func BenchmarkFlexConv2d(b *testing.B) {
	dev := Flex()
	const n, c, hw, k = 8, 64, 56, 3
	x, w := Rand([]int{n, c, hw, hw}, dev), Rand([]int{c, c, k, k}, dev)
	opts := ConvOptions{Padding: [2]int{1, 1}}
	b.ResetTimer()
	for b.Loop() {
		_ = x.Conv2d(w, nil, opts)
	}
	benchSync(b, dev)
	flops := 2.0 * n * c * hw * hw * c * k * k
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkFlexSoftmax(b *testing.B) {
	dev := Flex()
	x := Randn([]int{256, 1024}, dev)
	b.SetBytes(2 * 4 * 256 * 1024)
	b.ResetTimer()
	for b.Loop() {
		_ = x.Softmax(-1)
	}
	benchSync(b, dev)
}
