package main

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// The vs-cuda family compares the bench device (--device, typically
// vulkan) with the CUDA backend's cuda:0 in the same process, on the two
// kernels a GPU backend lives by: an f32 matrix product of 4096³ (FLOP/s)
// and an f32 addition of 2^28 elements (bytes read plus written per
// second). Each timed run queues reps operations and synchronizes once,
// so the queue's submission latency is amortized. The device's row
// carries its rate over cuda:0's; cuda:0's row says why it is missing
// where it cannot run.
func init() {
	benchFamilies = append(benchFamilies, benchFamily{name: "vs-cuda", run: benchVsCUDA, explicit: true})
}

const (
	vsCUDAGemm = 4096    // the sgemm's side
	vsCUDAAdd  = 1 << 28 // the addition's elements
	vsCUDAReps = 10      // operations per timed run
)

func benchVsCUDA(b *bencher) ([]benchResult, error) {
	devs := []ember.Device{b.dev}
	cuda := ember.CUDA(0)
	cudaErr := cuda.Init()
	if cudaErr == nil && !cuda.Equal(b.dev) {
		devs = append(devs, cuda)
	}
	n := max(vsCUDAGemm/benchScale, 2)
	m := max(vsCUDAAdd/benchScale, 2)
	gemmShape := fmt.Sprintf("%dx%dx%d", n, n, n)
	var gemm, add []benchResult
	for _, d := range devs {
		var g, a benchResult
		err := ember.Try(func() { g, a = vsCUDAOn(b, d, n, m) })
		if err != nil {
			note := fmt.Sprintf("%v skipped: %v", d, err)
			g = benchResult{Bench: "vs-cuda-sgemm", Shape: gemmShape, Backend: d.String(), DType: "f32", Note: note}
			a = benchResult{Bench: "vs-cuda-add", Shape: fmt.Sprint(m), Backend: d.String(), DType: "f32", Note: note}
		}
		gemm, add = append(gemm, g), append(add, a)
		d.MemoryCleanup()
	}
	var out []benchResult
	for _, rows := range [][]benchResult{gemm, add} {
		r := withRatios(rows[0], rows[1:]...)
		if cudaErr != nil {
			r[0].Note = strings.TrimPrefix(r[0].Note+"; cuda:0 skipped: "+cudaErr.Error(), "; ")
		}
		out = append(out, r...)
	}
	return out, nil
}

// vsCUDAOn times the sgemm of side n and the addition of m elements on d.
func vsCUDAOn(b *bencher, d ember.Device, n, m int) (gemm, add benchResult) {
	gemmShape := fmt.Sprintf("%dx%dx%d", n, n, n)
	{
		x := ember.Randn([]int{n, n}, d)
		y := ember.Randn([]int{n, n}, d)
		sec := b.timeOn(d, "vs-cuda sgemm "+gemmShape+" "+d.String(), func() *ember.Tensor {
			var z *ember.Tensor
			for range vsCUDAReps {
				z = x.Matmul(y)
			}
			return z
		}) / vsCUDAReps
		gemm = benchResult{Bench: "vs-cuda-sgemm", Shape: gemmShape, Backend: d.String(), DType: "f32", Median: sec,
			GFLOPS: 2 * float64(n) * float64(n) * float64(n) / sec / 1e9}
	}
	u := ember.Full([]int{m}, 1.5, d)
	v := ember.Full([]int{m}, 2.25, d)
	sec := b.timeOn(d, fmt.Sprintf("vs-cuda add %d %v", m, d), func() *ember.Tensor {
		var z *ember.Tensor
		for range vsCUDAReps {
			z = u.Add(v)
		}
		return z
	}) / vsCUDAReps
	add = benchResult{Bench: "vs-cuda-add", Shape: fmt.Sprint(m), Backend: d.String(), DType: "f32", Median: sec,
		GBPS: 3 * 4 * float64(m) / sec / 1e9}
	return gemm, add
}
