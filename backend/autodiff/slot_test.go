package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestExecInto checks that ExecInto stores a tracked output 0 in the
// caller's slot (and only then calls it), that the result is the same
// value as Exec's and that gradients through it are those of Exec's:
// d(Σ w·(x·y))/dx = w·y against the hand-computed product.
func TestExecInto(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	shape := []int{2, 3}
	xin, yin := randIn(r, shape, 0.5, 2, true), randIn(r, shape, 0.5, 2, true)
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data(shape, xin.vals)))
	y := b.FromData(f64Data(shape, yin.vals)) // untracked
	op := ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpMul), In: [3]ir.Tensor{x, y}}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	var slot Slot
	calls := 0
	got := b.ExecInto(op, func() *Slot { calls++; return &slot })[0]
	if calls != 1 || got != backend.Tensor(&slot.t) {
		t.Fatalf("tracked result: slot called %d times, result in slot %v", calls, got == backend.Tensor(&slot.t))
	}
	want := b.Exec(op)[0]
	checkVals(t, "exec_into/value", values(t, b, got), values(t, b, want), 0)

	// The gradient of Σ w·got with respect to x is w·y.
	w := make([]float64, len(xin.vals))
	for i := range w {
		w[i] = 0.25 + r.Float64()
	}
	loss := ir.Reduce(b, ir.ReduceSum, ir.Reshape(b, ir.Mul(b, got, b.FromData(f64Data(shape, w))), []int{6}), 0, false)
	g, ok := b.Backward(loss).Get(x)
	if !ok {
		t.Fatal("no gradient for x")
	}
	wantG := make([]float64, len(w))
	for i := range w {
		wantG[i] = w[i] * yin.vals[i]
	}
	checkVals(t, "exec_into/grad", values(t, b, g), wantG, 1e-15)

	// Untracked operands: the slot is not used.
	op.In[0] = b.Primal(x)
	calls = 0
	got = b.ExecInto(op, func() *Slot { calls++; return &slot })[0]
	if calls != 0 || b.IsTracked(got) {
		t.Fatalf("untracked result: slot called %d times, tracked %v", calls, b.IsTracked(got))
	}
	// Under NoGrad neither.
	op.In[0] = x
	NoGrad(func() { got = b.ExecInto(op, func() *Slot { calls++; return &slot })[0] })
	if calls != 0 || b.IsTracked(got) {
		t.Fatalf("NoGrad: slot called %d times, tracked %v", calls, b.IsTracked(got))
	}
}
