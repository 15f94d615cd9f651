package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestReduceGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, op := range []backend.ReduceOp{backend.ReduceSum, backend.ReduceProd, backend.ReduceMax, backend.ReduceMin} {
		for axis := 0; axis < 3; axis++ {
			for _, keep := range []bool{false, true} {
				in := randIn(r, []int{2, 3, 4}, 0.5, 1.5, true)
				op, axis, keep := op, axis, keep
				gradCheck(t, op.String(), []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
					// reduce a permuted (non-contiguous) view
					x := ir.Permute(b, xs[0], []int{0, 2, 1})
					return ir.Reduce(b, op, x, axis, keep)
				})
			}
		}
	}
}

// TestReduceProdZeros checks the product's gradient with one and two zeros
// in a lane against hand-worked values.
func TestReduceProdZeros(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{3, 3}, []float64{
		2, 0, 3, // one zero: grad [0, 6, 0]
		0, 5, 0, // two zeros: grad 0
		1, 2, 4, // none: [8, 4, 2]
	})))
	gs := b.Backward(ir.Reduce(b, backend.ReduceProd, x, 1, false))
	g, _ := gs.Get(x)
	checkVals(t, "prod grad", values(t, b.Unwrap(), g), []float64{0, 6, 0, 0, 0, 0, 8, 4, 2}, 1e-15)
}

// TestReduceMaxTies checks that tied maxima and minima share the gradient
// evenly (PyTorch's amax/amin).
func TestReduceMaxTies(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		b := New(newInner(), ckpt)
		x := b.RequireGrad(b.FromData(f64Data([]int{2, 3}, []float64{1, 3, 3, 2, 2, 2})))
		mx := ir.Reduce(b, backend.ReduceMax, x, 1, false)
		mn := ir.Reduce(b, backend.ReduceMin, x, 1, true)
		w := b.FromData(f64Data([]int{2, 1}, []float64{10, 100}))
		loss := ir.Binary(b, backend.OpAdd, mx, ir.Reshape(b, ir.Binary(b, backend.OpMul, mn, w), []int{2}))
		gs := b.Backward(loss)
		g, _ := gs.Get(x)
		// row 0: max 3 tied twice (0.5 each), min 1 alone (10);
		// row 1: all equal: max 1/3 each, min 100/3 each.
		third := 1.0 / 3
		want := []float64{10, 0.5, 0.5, third + 100*third, third + 100*third, third + 100*third}
		checkVals(t, "max/min ties", values(t, b.Unwrap(), g), want, 1e-12)
	}
}

func TestArgMaxUntracked(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{2, 3}, []float64{1, 3, 2, 5, 4, 6})))
	if b.IsTracked(ir.Reduce(b, backend.ReduceArgMax, x, 1, false)) {
		t.Error("argmax result is tracked")
	}
}
