package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// fusedGeluChain is gelu(x·a + b)·c over four F32 inputs of shape, with
// gelu(t) = t·((erf(t·(1/√2)) + 1)·0.5), the op sequence of ember's Gelu
// (MulScalar, Erf, AddScalar, MulScalar, then Mul with t).
func fusedGeluChain(shape []int) *ir.FusedProgram {
	var b fusedBuilder
	b.p.Shape = shape
	x, a, bias, c := b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape)
	t := b.binary(ir.OpAdd, b.binary(ir.OpMul, x, a), bias)
	cdf := b.binary(ir.OpMul, t, b.full(ir.F32, 1/math.Sqrt2))
	cdf = b.unary(ir.OpErf, cdf)
	cdf = b.binary(ir.OpAdd, cdf, b.full(ir.F32, 1))
	cdf = b.binary(ir.OpMul, cdf, b.full(ir.F32, 0.5))
	y := b.binary(ir.OpMul, b.binary(ir.OpMul, t, cdf), c)
	b.p.Outputs = []int{y.Index()}
	return &b.p
}

// normalInputs returns n F32 tensors of shape with standard normal values.
func normalInputs(be *Backend, n int, shape []int) []backend.Tensor {
	r := rand.New(rand.NewPCG(1, 2))
	ts := make([]backend.Tensor, n)
	for i := range ts {
		v := make([]float32, numel(shape))
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		ts[i] = be.FromData(ir.FromSlice(v, shape))
	}
	return ts
}

// benchFused runs p on inputs fused (ExecFused) and unfused (p.Run, one
// Exec per node), reporting bytes as the inputs read and outputs written
// once.
func benchFused(b *testing.B, p *ir.FusedProgram, inputs []backend.Tensor) {
	be := newTestBackend()
	bytes := int64(4 * numel(p.Shape) * (len(p.Inputs) + len(p.Outputs)))
	b.Run("fused", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			if _, ok := be.ExecFused(p, inputs); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("unfused", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			p.Run(be, inputs)
		}
	})
	// The two in turn, under the same load: unfused/fused-time is the
	// speed-up of fusion.
	b.Run("interleaved", func(b *testing.B) {
		benchInterleaved(b, []string{"fused", "unfused"}, []func(){
			func() { be.ExecFused(p, inputs) },
			func() { p.Run(be, inputs) },
		})
	})
}

// BenchmarkFusedChain is gelu(x·a + b)·c on 16M float32 elements: eleven
// nodes, four inputs, one output.
func BenchmarkFusedChain(b *testing.B) {
	shape := []int{1 << 24}
	benchFused(b, fusedGeluChain(shape), normalInputs(newTestBackend(), 4, shape))
}

// BenchmarkFusedChainAdam is Adam's update of 100k parameters: four
// inputs, three outputs.
func BenchmarkFusedChainAdam(b *testing.B) {
	shape := []int{100000}
	benchFused(b, fusedAdam(shape, 1e-3, 0.9, 0.999, 1e-8, 3), normalInputs(newTestBackend(), 4, shape))
}

// BenchmarkFusedChainOverlap runs the 16M gelu chain fused with and
// without prefetching the next block's inputs during erf and streaming
// the output, interleaved ("<variant>/both-time" compares each with both
// on).
func BenchmarkFusedChainOverlap(b *testing.B) {
	shape := []int{1 << 24}
	be := newTestBackend()
	p, inputs := fusedGeluChain(shape), normalInputs(be, 4, shape)
	pmin, smin := fusedPrefetchMin, fusedStreamMin
	defer func() { fusedPrefetchMin, fusedStreamMin = pmin, smin }()
	run := func(pf, st bool) func() {
		return func() {
			fusedPrefetchMin, fusedStreamMin = pmin, smin
			if !pf {
				fusedPrefetchMin = math.MaxInt
			}
			if !st {
				fusedStreamMin = math.MaxInt
			}
			be.ExecFused(p, inputs)
		}
	}
	benchInterleaved(b, []string{"both", "prefetch", "stream", "neither"},
		[]func(){run(true, true), run(true, false), run(false, true), run(false, false)})
}

// biasReluProgram is the program the fusion decorator builds for a
// convolution's bias add and ReLU over y of shape [N, C, H, W] with bias
// b of shape [1, C, 1, 1]: relu(y + b) = where(y + b <= 0, 0, y + b), and
// with grad, the gradient where(y + b <= 0, 0, grad) that the backward pass
// recomputes from y instead of storing a mask.
func biasReluProgram(shape []int, grad bool) *ir.FusedProgram {
	var b fusedBuilder
	b.p.Shape = shape
	y := b.input(ir.F32, shape)
	bias := b.input(ir.F32, []int{1, shape[1], 1, 1})
	t := b.binary(ir.OpAdd, y, bias)
	mask := b.binary(ir.OpLe, t, b.full(ir.F32, 0))
	val := t
	if grad {
		val = b.input(ir.F32, shape)
	}
	out := b.where(mask, b.full(ir.F32, 0), val)
	b.p.Outputs = []int{out.Index()}
	return &b.p
}

// BenchmarkFusedBiasRelu runs the bias-add-and-ReLU programs of the MNIST
// CNN's two convolutions (forward and gradient, batch 64) fused and op by
// op.
func BenchmarkFusedBiasRelu(b *testing.B) {
	be := newTestBackend()
	for _, shape := range [][]int{{64, 32, 24, 24}, {64, 64, 8, 8}} {
		for _, grad := range []bool{false, true} {
			name := fmt.Sprintf("%dx%dx%dx%d/fwd", shape[0], shape[1], shape[2], shape[3])
			ins := []backend.Tensor{randTensor(be, shape, 1), randTensor(be, []int{1, shape[1], 1, 1}, 2)}
			if grad {
				name = name[:len(name)-3] + "grad"
				ins = append(ins, randTensor(be, shape, 3))
			}
			b.Run(name, func(b *testing.B) { benchFused(b, biasReluProgram(shape, grad), ins) })
		}
	}
}
