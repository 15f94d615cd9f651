package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func randTensor(be *Backend, shape []int, seed uint64) backend.Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, numel(shape))
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return be.FromData(ir.FromSlice(v, shape))
}

func BenchmarkAdd16M(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	x, y := randTensor(be, []int{1 << 24}, 1), randTensor(be, []int{1 << 24}, 2)
	b.SetBytes(3 * 4 << 24)
	for b.Loop() {
		ir.Binary(be, backend.OpAdd, x, y)
	}
}

func BenchmarkSum16M(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	x := randTensor(be, []int{1 << 24}, 1)
	b.SetBytes(4 << 24)
	for b.Loop() {
		ir.Reduce(be, backend.ReduceSum, x, 0, false)
	}
}

func BenchmarkCopy16M(b *testing.B) {
	src, dst := make([]float32, 1<<24), make([]float32, 1<<24)
	b.SetBytes(2 * 4 << 24)
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkMatmul(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	for _, n := range []int{256, 1024} {
		x, y := randTensor(be, []int{n, n}, 1), randTensor(be, []int{n, n}, 2)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				ir.Matmul(be, x, y)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkConv(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	x, w := randTensor(be, []int{16, 64, 56, 56}, 1), randTensor(be, []int{64, 64, 3, 3}, 2)
	o := backend.ConvOptions{Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	flop := 2 * 16 * 64 * 56 * 56 * 64 * 9.0
	for _, byImage := range []bool{true, false} {
		b.Run(fmt.Sprintf("byImage=%v", byImage), func(b *testing.B) {
			convByImage = byImage
			defer func() { convByImage = true }()
			for b.Loop() {
				ir.Conv2d(be, x, w, o)
			}
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("transpose/byImage=%v", byImage), func(b *testing.B) {
			convByImage = byImage
			defer func() { convByImage = true }()
			y := ir.Conv2d(be, x, w, o)
			for b.Loop() {
				ir.ConvTranspose2d(be, y, w, o)
			}
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkAddStats(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	x, y := randTensor(be, []int{1 << 24}, 1), randTensor(be, []int{1 << 24}, 2)
	b.SetBytes(3 * 4 << 24)
	for b.Loop() {
		ir.Binary(be, backend.OpAdd, x, y)
	}
	b.Logf("hits %d misses %d forced GCs %d", be.alloc.hits.Load(), be.alloc.misses.Load(), be.alloc.forcedGC.Load())
}

// BenchmarkExecAdd4 times the per-op path of a 4-element F32 Add built
// with ir.Add (Infer, then Supports and Exec through the kernel table).
// Its allocations are the result: the tensor (strides included), its
// storage handle and its data.
func BenchmarkExecAdd4(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	x, y := randTensor(be, []int{4}, 1), randTensor(be, []int{4}, 2)
	b.ReportAllocs()
	for b.Loop() {
		ir.Add(be, x, y)
	}
}

// BenchmarkGoAdd4 is the plain Go allocate-and-add that BenchmarkExecAdd4
// is measured against.
func BenchmarkGoAdd4(b *testing.B) {
	x, y := []float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}
	b.ReportAllocs()
	for b.Loop() {
		out := make([]float32, len(x))
		for i := range out {
			out[i] = x[i] + y[i]
		}
		sinkF32 = out
	}
}

var sinkF32 []float32

// BenchmarkMatmulDType times the matrix product in F32, BF16 and F16 (the
// 16-bit ones computed in float32 and rounded once) at the first layer of
// the MNIST MLP ([64, 784] × [784, 128]) and at 512².
func BenchmarkMatmulDType(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	for _, s := range [][3]int{{64, 784, 128}, {512, 512, 512}} {
		m, k, n := s[0], s[1], s[2]
		for _, dt := range []backend.DType{backend.F32, backend.BF16, backend.F16} {
			x := ir.Cast(be, randTensor(be, []int{m, k}, 1), dt)
			y := ir.Cast(be, randTensor(be, []int{k, n}, 2), dt)
			b.Run(fmt.Sprintf("%dx%dx%d/%v", m, k, n, dt), func(b *testing.B) {
				for b.Loop() {
					ir.Matmul(be, x, y)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
