package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestMultiOutputGradients gives SGDStep (two outputs: the new parameter
// θ' = θ − lr·b' and the new momentum buffer b' = μ·b + g) a gradient rule
// for the duration of the test, so that the handling of multi-output nodes
// is checked: tracked outputs refer to their output index, Backward
// accumulates a gradient per output and passes nil for an output that got
// none, and under checkpointing (SGDStep is memory-bound) the node is
// recomputed once for both outputs. Gradients are checked against finite
// differences and bit for bit with and without checkpointing.
func TestMultiOutputGradients(t *testing.T) {
	const lr, mu = 0.1, 0.9
	saved := rules[ir.KindSGDStep]
	defer func() { rules[ir.KindSGDStep] = saved }()
	var sawNil, sawBoth bool
	rules[ir.KindSGDStep] = rule{backward: func(s *state, gs *ir.Outputs, dx []backend.Tensor) {
		gp, gb := gs[0], gs[1]
		// d/db' = G_b' − lr·G_θ'
		tb := ir.MulScalar(s.e, gp, -lr)
		if gb != nil {
			tb = ir.Add(s.e, gb, tb)
			sawBoth = true
		} else {
			sawNil = true
		}
		if s.wants(0) {
			dx[0] = gp
		}
		if s.wants(1) {
			dx[1] = tb
		}
		if s.wants(2) {
			dx[2] = ir.MulScalar(s.e, tb, mu)
		}
	}}
	step := func(b *Backend, xs []backend.Tensor) ir.Outputs {
		outs := exec(b, ir.Op{Kind: ir.KindSGDStep, In: [3]ir.Tensor{xs[0], xs[1], xs[2]},
			Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: lr, Momentum: mu}}})
		if b.IsTracked(outs[0]) {
			for j := range 2 {
				if tt, ok := outs[j].(*tensor); !ok || tt.out != uint8(j) || tt.node != outs[0].(*tensor).node {
					t.Fatalf("output %d does not refer to output %d of the node", j, j)
				}
			}
		}
		return outs
	}
	r := rand.New(rand.NewPCG(15, 15))
	shape := []int{2, 3}
	ins := []input{randIn(r, shape, 0.2, 2, true), randIn(r, shape, 0.2, 2, true), randIn(r, shape, 0.2, 2, true)}
	gradCheck(t, "sgd_step/both", ins, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		outs := step(b, xs)
		return ir.Add(b, ir.Mul(b, outs[0], outs[0]), ir.MulScalar(b, outs[1], 3))
	})
	gradCheck(t, "sgd_step/param-only", []input{ins[0], ins[1], constIn(ins[2])}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		outs := step(b, xs)
		return ir.Mul(b, outs[0], outs[0])
	})
	if !sawNil || !sawBoth {
		t.Errorf("rule saw a nil output gradient %v, both gradients %v; want both cases", sawNil, sawBoth)
	}
	// Intermediate gradients are kept per output.
	b := New(newInner(), false)
	xs := make([]backend.Tensor, 3)
	for i, in := range ins {
		xs[i] = b.RequireGrad(b.FromData(f64Data(in.shape, in.vals)))
	}
	outs := step(b, xs)
	gs := b.Backward(ir.Add(b, outs[0], ir.MulScalar(b, outs[1], 3)))
	g0, ok0 := gs.Get(outs[0])
	g1, ok1 := gs.Get(outs[1])
	if !ok0 || !ok1 {
		t.Fatalf("output gradients missing: %v %v", ok0, ok1)
	}
	checkVals(t, "d/dθ'", values(t, b.Unwrap(), g0), []float64{1, 1, 1, 1, 1, 1}, 0)
	checkVals(t, "d/db'", values(t, b.Unwrap(), g1), []float64{3, 3, 3, 3, 3, 3}, 0)
}
