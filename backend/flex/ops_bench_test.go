package flex

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

func benchTensor(shape []int, dt backend.DType) *Tensor {
	return mk(randRef(rand.New(rand.NewPCG(1, 1)), shape, dt), dt)
}

func BenchmarkAddF32Contiguous1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(3 * 4 << 20)
	for b.Loop() {
		tb.Binary(backend.OpAdd, x, y)
	}
}

func BenchmarkAddF32Scalar1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor(nil, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		tb.Binary(backend.OpMul, x, y)
	}
}

func BenchmarkAddF32Row1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024}, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		tb.Binary(backend.OpAdd, x, y)
	}
}

func BenchmarkAddF32Transposed1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024, 1024}, backend.F32)
	xt := tb.Permute(x, []int{1, 0})
	b.SetBytes(3 * 4 << 20)
	for b.Loop() {
		tb.Binary(backend.OpAdd, xt, y)
	}
}

func BenchmarkExpF32_1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		tb.Unary(backend.OpExp, x)
	}
}

func BenchmarkMaxF32Relu1M(b *testing.B) {
	x, z := benchTensor([]int{1024, 1024}, backend.F32), tb.Full(nil, backend.F32, 0)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		tb.Binary(backend.OpMax, x, z)
	}
}

func BenchmarkSumF32LastAxis1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(4 << 20)
	for b.Loop() {
		tb.Reduce(backend.ReduceSum, x, 1, false)
	}
}

func BenchmarkSumF32FirstAxis1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(4 << 20)
	for b.Loop() {
		tb.Reduce(backend.ReduceSum, x, 0, false)
	}
}

func BenchmarkMatmulF32_256(b *testing.B) {
	x, y := benchTensor([]int{256, 256}, backend.F32), benchTensor([]int{256, 256}, backend.F32)
	for b.Loop() {
		tb.Matmul(x, y)
	}
}

func BenchmarkTinyAddF32(b *testing.B) {
	x, y := benchTensor([]int{4}, backend.F32), benchTensor([]int{4}, backend.F32)
	for b.Loop() {
		tb.Binary(backend.OpAdd, x, y)
	}
}

func BenchmarkCastF32ToBF16_1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	for b.Loop() {
		tb.Cast(x, backend.BF16)
	}
}
