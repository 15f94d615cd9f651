package flex

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func benchTensor(shape []int, dt backend.DType) *Tensor {
	return mk(randRef(rand.New(rand.NewPCG(1, 1)), shape, dt), dt)
}

func BenchmarkAddF32Contiguous1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(3 * 4 << 20)
	for b.Loop() {
		ir.Binary(tb, backend.OpAdd, x, y)
	}
}

func BenchmarkAddF32Scalar1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor(nil, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		ir.Binary(tb, backend.OpMul, x, y)
	}
}

func BenchmarkAddF32Row1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024}, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		ir.Binary(tb, backend.OpAdd, x, y)
	}
}

func BenchmarkAddF32Transposed1M(b *testing.B) {
	x, y := benchTensor([]int{1024, 1024}, backend.F32), benchTensor([]int{1024, 1024}, backend.F32)
	xt := ir.Permute(tb, x, []int{1, 0})
	b.SetBytes(3 * 4 << 20)
	for b.Loop() {
		ir.Binary(tb, backend.OpAdd, xt, y)
	}
}

func BenchmarkExpF32_1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		ir.Unary(tb, backend.OpExp, x)
	}
}

func BenchmarkMaxF32Relu1M(b *testing.B) {
	x, z := benchTensor([]int{1024, 1024}, backend.F32), ir.Full(tb, nil, backend.F32, 0)
	b.SetBytes(2 * 4 << 20)
	for b.Loop() {
		ir.Binary(tb, backend.OpMax, x, z)
	}
}

func BenchmarkSumF32LastAxis1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(4 << 20)
	for b.Loop() {
		ir.Reduce(tb, backend.ReduceSum, x, 1, false)
	}
}

func BenchmarkSumF32FirstAxis1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	b.SetBytes(4 << 20)
	for b.Loop() {
		ir.Reduce(tb, backend.ReduceSum, x, 0, false)
	}
}

func BenchmarkMatmulF32_256(b *testing.B) {
	x, y := benchTensor([]int{256, 256}, backend.F32), benchTensor([]int{256, 256}, backend.F32)
	for b.Loop() {
		ir.Matmul(tb, x, y)
	}
}

func BenchmarkTinyAddF32(b *testing.B) {
	x, y := benchTensor([]int{4}, backend.F32), benchTensor([]int{4}, backend.F32)
	for b.Loop() {
		ir.Binary(tb, backend.OpAdd, x, y)
	}
}

func BenchmarkCastF32ToBF16_1M(b *testing.B) {
	x := benchTensor([]int{1024, 1024}, backend.F32)
	for b.Loop() {
		ir.Cast(tb, x, backend.BF16)
	}
}
