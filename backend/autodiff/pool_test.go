package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/ir"
)

// maxPool2d is ir.KindMaxPool2d of x on e.
func maxPool2d(e ir.Executor, x backend.Tensor, o backend.PoolOptions) backend.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}})
}

// TestMaxPool2dGradients records MaxPool2d as one op over the cpu backend
// (which has a max-pooling kernel; or over the tests' inner backend when it
// has one) after a memory-bound op, and checks the gradient against central
// finite differences (random inputs, ties have probability zero) and the
// checkpointed gradient against the plain one bit for bit, for
// overlapping, padded, dilated and strided windows.
func TestMaxPool2dGradients(t *testing.T) {
	if !newInner().Supports(ir.KindMaxPool2d, backend.F64) {
		saved := newInner
		newInner = func() backend.Backend { return cpu.New(backend.DeviceID{Type: "cpu"}) }
		defer func() { newInner = saved }()
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, o := range []backend.PoolOptions{
		{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}},
		{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}},
		{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{2, 1}},
	} {
		in := randIn(r, []int{2, 2, 5, 6}, 0.5, 1.5, true)
		gradCheck(t, "max_pool2d", []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			if !b.Supports(ir.KindMaxPool2d, backend.F64) {
				t.Fatal("autodiff over cpu does not support max_pool2d in F64")
			}
			y := maxPool2d(b, ir.Neg(b, xs[0]), o)
			if n, ok := y.(*tensor); ok && n.node.op.Kind != ir.KindMaxPool2d {
				t.Fatalf("max_pool2d recorded as %v, want one max_pool2d node", n.node.name())
			}
			return y
		})
	}
}

// TestMaxPool2dComposed checks max pooling over flex, which has no
// kernel: autodiff still records it as one max_pool2d node (its rule is
// marked whole), lowered below autodiff, whether ir.Run or Exec runs it,
// so its gradient routes each window's gradient to the window's first
// maximum as on cpu (a hand-worked case with tied maxima, and finite
// differences).
func TestMaxPool2dComposed(t *testing.T) {
	b := New(newInner(), false)
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	x := b.RequireGrad(b.FromData(f64Data([]int{1, 1, 2, 3}, []float64{1, 4, 2, 4, 0, 3})))
	composed := maxPool2d(b, x, o)
	op := ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	direct := b.Exec(op)[0]
	for name, y := range map[string]backend.Tensor{"run": composed, "exec": direct} {
		if n := y.(*tensor).node; n.op.Kind != ir.KindMaxPool2d {
			t.Errorf("%s: max_pool2d recorded as %v, want one max_pool2d node", name, n.name())
		}
		checkVals(t, name+" max_pool2d", values(t, b, y), []float64{4, 4}, 0)
		gs := b.Backward(y)
		g, _ := gs.Get(x)
		// Windows {1, 4, 4, 0} and {4, 2, 0, 3}: both select the 4 at
		// position 1, the first in kernel order.
		checkVals(t, name+" max_pool2d grad", values(t, b.Unwrap(), g), []float64{0, 2, 0, 0, 0, 0}, 0)
	}
	r := rand.New(rand.NewPCG(10, 9))
	o = backend.PoolOptions{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{2, 1}}
	gradCheck(t, "max_pool2d/composed", []input{randIn(r, []int{2, 2, 5, 6}, 0.5, 1.5, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		return maxPool2d(b, ir.Neg(b, xs[0]), o)
	})
}

// TestMaxPool2dDelegation checks that Backend offers the max-pooling kind
// for every dtype (recorded whole, lowered below autodiff where the inner
// backend has no kernel) and its gradient kind, run untracked, too, that
// untracked inputs and NoGrad give untracked outputs, and that
// MaxPool2dGrad (run untracked even on tracked inputs) returns the inner
// kernel's value.
func TestMaxPool2dDelegation(t *testing.T) {
	if b := New(newInner(), false); !b.Supports(ir.KindMaxPool2d, backend.F32) {
		t.Error("autodiff over flex does not offer max_pool2d")
	}
	inner := cpu.New(backend.DeviceID{Type: "cpu"})
	b := New(inner, false)
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.Flex32, backend.F16, backend.BF16} {
		if !b.Supports(ir.KindMaxPool2d, dt) {
			t.Errorf("Supports(max_pool2d, %v) = false", dt)
		}
		// The gradient kind is run untracked, lowered below autodiff
		// where the inner backend has no kernel.
		if !b.Supports(ir.KindMaxPool2dGrad, dt) {
			t.Errorf("Supports(max_pool2d_grad, %v) = false", dt)
		}
	}
	if !b.Supports(ir.KindMaxPool2d, backend.F32) {
		t.Error("autodiff over cpu does not offer max_pool2d in F32")
	}
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	data := f64Data([]int{1, 1, 2, 3}, []float64{1, 4, 2, 4, 0, 3})
	x := b.FromData(data)
	if b.IsTracked(maxPool2d(b, x, o)) {
		t.Error("pooling an untracked input is tracked")
	}
	xg := b.RequireGrad(x)
	NoGrad(func() {
		if b.IsTracked(maxPool2d(b, xg, o)) {
			t.Error("pooling under NoGrad is tracked")
		}
	})
	y := maxPool2d(b, xg, o)
	checkVals(t, "max_pool2d", values(t, inner, b.Primal(y)), []float64{4, 4}, 0)
	// Windows {1, 4, 4, 0} and {4, 2, 0, 3}: each sends its gradient to
	// its first maximum, the 4 at position 1.
	gs := b.Backward(y)
	g, _ := gs.Get(xg)
	checkVals(t, "max_pool2d grad", values(t, inner, g), []float64{0, 2, 0, 0, 0, 0}, 0)
	ones := ir.Full(b, []int{1, 1, 1, 2}, backend.F64, 1)
	direct := ir.Apply(b, ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{xg, y, ones}})
	if b.IsTracked(direct) {
		t.Error("MaxPool2dGrad result is tracked")
	}
	checkVals(t, "MaxPool2dGrad", values(t, inner, b.Primal(direct)), []float64{0, 2, 0, 0, 0, 0}, 0)
}
