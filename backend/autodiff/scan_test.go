package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// exec infers op and runs it with b.Exec, so that its kind is recorded as
// one op even where the inner backend lowers it.
func exec(b *Backend, op ir.Op) ir.Outputs {
	if err := op.Infer(); err != nil {
		panic(err)
	}
	return b.Exec(op)
}

// TestCumSumGradients checks the gradient of the inclusive prefix sum (the
// reverse prefix sum of the output gradient) against central finite
// differences along every axis of a permuted (non-contiguous) view, with
// the op recorded as one cumsum node, and through ir.Apply (one node where
// the inner backend has a kernel, the decomposition's ops otherwise).
func TestCumSumGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	for axis := range 3 {
		in := randIn(r, []int{2, 3, 4}, 0.2, 2, true)
		gradCheck(t, "cumsum/exec", []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			x := ir.Permute(b, xs[0], []int{0, 2, 1})
			y := exec(b, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{x}})[0]
			if b.IsTracked(y) && y.(*tensor).node.op.Kind != ir.KindCumSum {
				t.Fatalf("cumsum recorded as %v", y.(*tensor).node.name())
			}
			return y
		})
		gradCheck(t, "cumsum/apply", []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			y := ir.Apply(b, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{xs[0]}})
			if b.IsTracked(y) && b.Supports(ir.KindCumSum, backend.F64) && y.(*tensor).node.op.Kind != ir.KindCumSum {
				t.Fatalf("cumsum with a kernel recorded as %v", y.(*tensor).node.name())
			}
			return y
		})
	}
}

// TestCumSumGradientValues checks the gradient of sum(w·cumsum(x)) on
// hand-worked values: d/dx_k = w_k + ... + w_{n-1}.
func TestCumSumGradientValues(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{4}, []float64{1, -2, 3, 5})))
	y := exec(b, ir.Op{Kind: ir.KindCumSum, Axis: 0, In: [3]ir.Tensor{x}})[0]
	checkVals(t, "cumsum", values(t, b, y), []float64{1, -1, 2, 7}, 0)
	w := b.FromData(f64Data([]int{4}, []float64{1, 10, 100, 1000}))
	gs := b.Backward(ir.Mul(b, y, w))
	g, _ := gs.Get(x)
	checkVals(t, "cumsum grad", values(t, b.Unwrap(), g), []float64{1111, 1110, 1100, 1000}, 0)
}
