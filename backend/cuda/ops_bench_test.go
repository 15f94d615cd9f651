package cuda

import (
	"fmt"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/ir"
)

// kernelMillis times run with device events, bb.N times after one warm-up
// run, and returns the median in milliseconds.
func kernelMillis(bb *testing.B, b *Backend, run func()) float64 {
	run()
	if err := b.Sync(); err != nil {
		bb.Fatal(err)
	}
	exit := b.enter()
	start, err1 := cu.EventCreate(cu.EventDefault)
	end, err2 := cu.EventCreate(cu.EventDefault)
	exit()
	if err1 != nil || err2 != nil {
		bb.Fatal(err1, err2)
	}
	var ms []float64
	for i := 0; i < bb.N; i++ {
		exit := b.enter()
		b.must(cu.EventRecord(start, b.stream))
		exit()
		run()
		exit = b.enter()
		b.must(cu.EventRecord(end, b.stream))
		b.must(cu.EventSynchronize(end))
		t, err := cu.EventElapsed(start, end)
		exit()
		if err != nil {
			bb.Fatal(err)
		}
		ms = append(ms, float64(t))
	}
	exit = b.enter()
	_ = cu.EventDestroy(start)
	_ = cu.EventDestroy(end)
	exit()
	slices.Sort(ms)
	return ms[len(ms)/2]
}

// BenchmarkKernelAdd measures the contiguous add of two 2^28-element
// tensors (the vectorized kernel, output preallocated) for several grid
// caps; GB/s counts two reads and one write.
func BenchmarkKernelAdd(bb *testing.B) {
	b := gpu(bb)
	n := 1 << 28
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		x := b.random([]int{n}, dt, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1})
		y := b.random([]int{n}, dt, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1})
		out := b.Empty([]int{n}, dt)
		for _, blocks := range []int{1 << 20, b.smCount * 16, b.smCount * 4} {
			bb.Run(fmt.Sprintf("%v/blocks=%d", dt, blocks), func(bb *testing.B) {
				saved := maxBlocks
				maxBlocks = blocks
				defer func() { maxBlocks = saved }()
				call := binaryCall(dt, backend.OpAdd)
				ms := kernelMillis(bb, b, func() {
					b.elementwise(call, out.shape, out, out.strides, []*Tensor{x, y}, [][]int{x.strides, y.strides})
				})
				bb.ReportMetric(float64(3*n*dt.Size())/(ms*1e-3)/1e9, "GB/s")
				bb.ReportMetric(ms, "ms")
			})
		}
	}
}

// BenchmarkKernelOps measures other memory-bound kernels on 2^26 F32
// elements: a strided (transposed) copy, a row and a column sum, and a
// cast to BF16.
func BenchmarkKernelOps(bb *testing.B) {
	b := gpu(bb)
	n := 1 << 26
	x := b.random([]int{8192, n / 8192}, backend.F32, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1})
	bytes := float64(n * 4)
	cases := []struct {
		name  string
		bytes float64
		run   func()
	}{
		{"copy-transposed", 2 * bytes, func() { b.Contiguous(tensorOf(ir.Permute(b, x, []int{1, 0}))) }},
		{"sum-rows", bytes, func() { ir.Reduce(b, backend.ReduceSum, x, 1, false) }},
		{"sum-cols", bytes, func() { ir.Reduce(b, backend.ReduceSum, x, 0, false) }},
		{"argmax-rows", bytes, func() { ir.Reduce(b, backend.ReduceArgMax, x, 1, false) }},
		{"cast-bf16", 1.5 * bytes, func() { ir.Cast(b, x, backend.BF16) }},
		{"exp", 2 * bytes, func() { ir.Unary(b, backend.OpExp, x) }},
	}
	for _, c := range cases {
		bb.Run(c.name, func(bb *testing.B) {
			ms := kernelMillis(bb, b, c.run)
			bb.ReportMetric(c.bytes/(ms*1e-3)/1e9, "GB/s")
			bb.ReportMetric(ms, "ms")
		})
	}
}
