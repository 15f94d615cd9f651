package ember_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/emberml/ember"
)

// The bandwidth-bound kernels of the roofline comparison with PyTorch
// (bench/torch_roofline.py times the same ops): each reports GB/s of the
// bytes the op must move (inputs read once, output written once), or
// TFLOP/s for convolutions.

// benchGPU times f (one op, its result dropped) b.N times between two
// Syncs and reports per-op rate: bytes/s when bytes > 0, else flop/s.
func benchGPU(b *testing.B, dev ember.Device, bytes, flop float64, f func() *ember.Tensor) {
	b.Helper()
	for range 3 {
		f()
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		f()
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	s := b.Elapsed().Seconds() / float64(b.N)
	if bytes > 0 {
		b.ReportMetric(bytes/s/1e9, "GB/s")
	} else {
		b.ReportMetric(flop/s/1e12, "TFLOP/s")
	}
}

// BenchmarkCUDASumF32 is the full sum of 2^28 f32 (1 GiB read).
func BenchmarkCUDASumF32(b *testing.B) {
	dev := cudaDevice(b)
	n := 1 << 28
	x := ember.RandomDType([]int{n}, ember.Normal(0, 1), ember.F32, dev)
	benchGPU(b, dev, 4*float64(n), 0, func() *ember.Tensor { return x.Sum() })
}

// BenchmarkCUDASumAxis sums a [16384, 16384] f32 matrix along axis 0
// (columns) and axis 1 (rows).
func BenchmarkCUDASumAxis(b *testing.B) {
	dev := cudaDevice(b)
	n := 16384
	x := ember.RandomDType([]int{n, n}, ember.Normal(0, 1), ember.F32, dev)
	for _, axis := range []int{0, 1} {
		b.Run([]string{"axis0", "axis1"}[axis], func(b *testing.B) {
			benchGPU(b, dev, 4*float64(n)*float64(n), 0, func() *ember.Tensor { return x.SumAxis(axis, false) })
		})
	}
}

// BenchmarkCUDASoftmax is softmax along the last axis of [16384, 4096]
// f32 (one read, one write).
func BenchmarkCUDASoftmax(b *testing.B) {
	dev := cudaDevice(b)
	r, c := 16384, 4096
	x := ember.RandomDType([]int{r, c}, ember.Normal(0, 1), ember.F32, dev)
	benchGPU(b, dev, 8*float64(r*c), 0, func() *ember.Tensor { return x.Softmax(1) })
}

// BenchmarkCUDAAddBF16 adds two 2^28-element bf16 tensors.
func BenchmarkCUDAAddBF16(b *testing.B) {
	dev := cudaDevice(b)
	n := 1 << 28
	x := ember.RandomDType([]int{n}, ember.Normal(0, 1), ember.BF16, dev)
	y := ember.RandomDType([]int{n}, ember.Normal(0, 1), ember.BF16, dev)
	benchGPU(b, dev, 3*2*float64(n), 0, func() *ember.Tensor { return x.Add(y) })
}

// BenchmarkCUDAConv2d is a 3×3 convolution (padding 1) of a
// [64, 64, 56, 56] input to 64 channels, in f32 and bf16.
func BenchmarkCUDAConv2d(b *testing.B) {
	dev := cudaDevice(b)
	opts := ember.ConvOptions{Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	flop := 2 * 64.0 * 64 * 56 * 56 * 64 * 9
	for _, dt := range []ember.DType{ember.F32, ember.BF16} {
		x := ember.RandomDType([]int{64, 64, 56, 56}, ember.Normal(0, 1), dt, dev)
		w := ember.RandomDType([]int{64, 64, 3, 3}, ember.Normal(0, 0.1), dt, dev)
		b.Run(dt.String(), func(b *testing.B) {
			benchGPU(b, dev, 0, flop, func() *ember.Tensor { return x.Conv2d(w, nil, opts) })
		})
	}
}

// BenchmarkCUDASyncedCalls times the roofline ops one synchronized call
// at a time, as `ember bench kernels` and PyTorch's peer time them (the
// op, then Sync), beside the same ops queued back to back: us/call is the
// synchronized call, queued-us/call the back-to-back one, gc/call the Go
// collections per synchronized call (the CUDA allocator forces one
// before growing when enough was allocated since the last, see
// allocator.go's gcDueLocked). The gap between the two times is the host's
// cost per call that the queue hides.
func BenchmarkCUDASyncedCalls(b *testing.B) {
	dev := cudaDevice(b)
	opts := ember.ConvOptions{Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	xs := ember.RandomDType([]int{16384, 4096}, ember.Normal(0, 1), ember.F32, dev)
	xm := ember.RandomDType([]int{4096, 1024}, ember.Normal(0, 1), ember.F32, dev)
	cx := ember.RandomDType([]int{64, 64, 56, 56}, ember.Normal(0, 1), ember.F32, dev)
	cw := ember.RandomDType([]int{64, 64, 3, 3}, ember.Normal(0, 0.1), ember.F32, dev)
	sync := func() {
		if err := dev.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		f    func() *ember.Tensor
	}{
		{"softmax_16384x4096", func() *ember.Tensor { return xs.Softmax(1) }},
		{"softmax_4096x1024", func() *ember.Tensor { return xm.Softmax(1) }},
		{"sum_16384x4096", func() *ember.Tensor { return xs.Sum() }},
		{"conv2d_f32", func() *ember.Tensor { return cx.Conv2d(cw, nil, opts) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range 5 {
				c.f()
			}
			sync()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			gc0 := ms.NumGC
			b.ResetTimer()
			for range b.N {
				c.f()
				sync()
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/call")
			b.ReportMetric(float64(ms.NumGC-gc0)/float64(b.N), "gc/call")
			t0 := time.Now()
			for range b.N {
				c.f()
			}
			sync()
			b.ReportMetric(time.Since(t0).Seconds()*1e6/float64(b.N), "queued-us/call")
		})
	}
}
