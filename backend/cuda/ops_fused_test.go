package cuda

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestKernelAdamStep checks that the fused Adam kernel gives ir's
// decomposition of KindAdamStep (the composed elementwise ops, run on the
// same device) bit for bit: F32, Flex32 and F64; Adam, Adam with an L2
// penalty and AdamW; contiguous and permuted operands.
func TestKernelAdamStep(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(23, 24))
	updates := []ir.OptimUpdate{
		{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1},
		{LR: 0.02, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.1, Step: 3},
		{LR: 0.03, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.2, Step: 7, Decoupled: true},
	}
	shape := []int{37, 129}
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64} {
		if !b.Supports(ir.KindAdamStep, dt) {
			t.Fatalf("fused Adam on %v is not supported", dt)
		}
		for ui, u := range updates {
			for _, l := range layouts[:2] {
				what := name("adam ", dt, " update ", ui, " ", l.name)
				try(t, what, func() {
					upload := func(d *backend.TensorData) backend.Tensor { return l.view(b, b.FromData(d), shape) }
					p := upload(nonZero(rng, l.base(shape), dt))
					g := upload(nonZero(rng, l.base(shape), dt))
					m := upload(nonZero(rng, l.base(shape), dt))
					v := upload(fromF64(l.base(shape), dt, func() float64 { return 0.01 + 4*rng.Float64() }))
					op := ir.Op{Kind: ir.KindAdamStep, Xs: []ir.Tensor{p, g, m, v}, Attrs: &ir.Attrs{Optim: u}}
					if err := op.Infer(); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					fused := b.Exec(op)
					composed := ir.SpecOf(ir.KindAdamStep).Decompose(op, b)
					for i, out := range []string{"param", "m", "v"} {
						fd, err := b.ToData(fused[i])
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						cd, err := b.ToData(composed[i])
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						if fd.DType != dt || !slices.Equal(fd.Shape, shape) {
							t.Fatalf("%s: %s is %v %v", what, out, fd.DType, fd.Shape)
						}
						if err := fd.ApproxEqual(cd, 0, 0); err != nil || string(fd.Bytes) != string(cd.Bytes) {
							t.Errorf("%s: fused %s differs from the composed ops: %v", what, out, err)
						}
					}
				})
			}
		}
	}
	for _, dt := range []backend.DType{backend.F16, backend.BF16} {
		if b.Supports(ir.KindAdamStep, dt) {
			t.Errorf("fused Adam claims %v, which it does not run", dt)
		}
	}
}
