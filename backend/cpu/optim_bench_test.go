package cpu

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// mlpParamShapes are the parameter shapes of train's default MLP
// (784 → 128 → ReLU → 10): 101,770 float32 values.
var mlpParamShapes = [][]int{{128, 784}, {128}, {10, 128}, {10}}

// BenchmarkAdamStepMLP times one Adam update (L2 decay 0) of all the MLP's
// parameters, one op per parameter as optim.Adam issues them: on the
// kernel; on ir's decomposition op by op (this backend's elementwise
// kernels); and on the decomposition through the fusion decorator (fused
// elementwise programs, the default device's path without the kernel).
// The weight gradients are transposed views, as a training step's matmul
// gradients are ("training-layout"), or row-major ("row-major").
func BenchmarkAdamStepMLP(b *testing.B) {
	u := ir.OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 3}
	benchOptimMLP(b, func(p, g, m, v backend.Tensor) ir.Op {
		return ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: u}, Xs: []ir.Tensor{p, g, m, v}}
	})
}

// BenchmarkSGDStepMLP is BenchmarkAdamStepMLP for SGD with momentum 0.9
// and a momentum buffer.
func BenchmarkSGDStepMLP(b *testing.B) {
	u := ir.OptimUpdate{LR: 1e-2, Momentum: 0.9}
	benchOptimMLP(b, func(p, g, m, _ backend.Tensor) ir.Op {
		return ir.Op{Kind: ir.KindSGDStep, Attrs: &ir.Attrs{Optim: u}, In: [3]ir.Tensor{p, g, m}}
	})
}

// benchOptimMLP times the update mk builds for each MLP parameter (from
// random F32 param, grad and moments) on the kernel, the decomposition
// and the fused decomposition (with -count, the runs of the three
// alternate; each pays for the collections its own allocations cause).
func benchOptimMLP(b *testing.B, mk func(p, g, m, v backend.Tensor) ir.Op) {
	be := newTestBackend()
	fb := newFusedDecomposition(b, be)
	for _, layout := range []string{"training-layout", "row-major"} {
		ops := make([]ir.Op, len(mlpParamShapes))
		for i, s := range mlpParamShapes {
			n := numel(s)
			g := tensorOf(be, randVals(n, 2), s, backend.F32)
			if len(s) == 2 && layout == "training-layout" {
				g = laidOut(be, randVals(n, 2), s, backend.F32, transposedLayout)
			}
			ops[i] = mk(tensorOf(be, randVals(n, 1), s, backend.F32), g,
				tensorOf(be, randVals(n, 3), s, backend.F32), tensorOf(be, absVals(randVals(n, 4)), s, backend.F32))
			if err := ops[i].Infer(); err != nil {
				b.Fatal(err)
			}
		}
		kind := ops[0].Kind
		kernel := func() {
			for _, op := range ops {
				ir.Run(be, op)
			}
		}
		decomposed := func() {
			for _, op := range ops {
				ir.SpecOf(kind).Decompose(op, be)
			}
		}
		fused := func() {
			for _, op := range ops {
				ir.Run(fb, op)
			}
			fb.Flush()
		}
		for _, c := range []struct {
			name string
			f    func()
		}{{"kernel", kernel}, {"decomposed", decomposed}, {"fused-decomposition", fused}} {
			b.Run(layout+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					c.f()
				}
			})
		}
	}
}
