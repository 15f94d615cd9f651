//go:build libtorch && cgo

package libtorch

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// BenchmarkAdamStep times one fused Adam update of 100352 float32
// parameters (the MNIST MLP's first layer) against its decomposition into
// base kinds on the same backend.
func BenchmarkAdamStep(b *testing.B) {
	n := 784 * 128
	rng := newRNG(1)
	v := randVals(rng, n, 0.1, 1, backend.F32)
	for i := range v {
		v[i] = math.Abs(v[i]) // a second moment is not negative
	}
	xs := []ir.Tensor{
		lt(randVals(rng, n, 0.1, 1, backend.F32), []int{n}, backend.F32),
		lt(randVals(rng, n, 0.1, 1, backend.F32), []int{n}, backend.F32),
		lt(randVals(rng, n, 0.1, 1, backend.F32), []int{n}, backend.F32),
		lt(v, []int{n}, backend.F32),
	}
	op := ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 3}}, Xs: xs}
	if err := op.Infer(); err != nil {
		b.Fatal(err)
	}
	b.Run("fused", func(b *testing.B) {
		for b.Loop() {
			tb.Exec(op)
		}
	})
	b.Run("decomposed", func(b *testing.B) {
		for b.Loop() {
			ir.SpecOf(op.Kind).Decompose(op, decomposer{})
		}
	})
}
