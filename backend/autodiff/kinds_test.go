package autodiff

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// limitedInner is a backend that claims no kernel for any fast-path kind
// (only base kinds are Supported), to test Supports against an inner
// backend that lacks them.
type limitedInner struct{ backend.Backend }

func (l limitedInner) Supports(k ir.Kind, dt backend.DType) bool {
	return ir.SpecOf(k).Decompose == nil && l.Backend.Supports(k, dt)
}

// TestSupports checks which kinds autodiff runs as one op: base kinds and
// the kinds run untracked always; fast-path kinds with a gradient rule
// exactly when the inner backend supports them, or always when the rule
// is marked whole (MaxPool2d).
func TestSupports(t *testing.T) {
	for _, inner := range []backend.Backend{newInner(), limitedInner{newInner()}} {
		b := New(inner, false)
		for _, k := range ir.Kinds() {
			for _, dt := range []backend.DType{backend.F64, backend.F32} {
				want := ir.SpecOf(k).Decompose == nil || rules[k].nondiff || rules[k].whole || inner.Supports(k, dt)
				if got := b.Supports(k, dt); got != want {
					t.Errorf("%T: Supports(%v, %v) = %v, want %v", inner, k, dt, got, want)
				}
			}
		}
		if b.Supports(ir.KindInvalid, backend.F64) || b.Supports(ir.Kind(ir.NumKinds), backend.F64) {
			t.Error("Supports accepts an invalid kind")
		}
	}
}

// TestUntrackedKinds checks that the kinds run untracked (the gradient
// kinds, the optimizer steps, creation) return the inner backend's
// tensors even for tracked inputs, with the inner backend's values
// (whether it has kernels for them or lowers them), and
// that non-float outputs (comparisons, argmax, casts to ints) are not
// tracked either.
func TestUntrackedKinds(t *testing.T) {
	for _, inner := range []backend.Backend{newInner(), limitedInner{newInner()}} {
		testUntrackedKinds(t, New(inner, false))
	}
}

func testUntrackedKinds(t *testing.T, b *Backend) {
	r := rand.New(rand.NewPCG(14, 14))
	in := randIn(r, []int{2, 3}, 0.2, 2, true).vals
	x := b.RequireGrad(b.FromData(f64Data([]int{2, 3}, in)))
	u := ir.Apply(b, ir.Op{Kind: ir.KindSliceScatter, Shape: []int{4, 3}, Attrs: &ir.Attrs{Ranges: []backend.Range{{Start: 1, End: 4, Step: 2}, {Start: 0, End: 3, Step: 1}}},
		In: [3]ir.Tensor{x}})
	if b.IsTracked(u) {
		t.Error("slice_scatter of a tracked input is tracked")
	}
	y := ir.Reduce(b, backend.ReduceMax, x, 1, true)
	eg := ir.Apply(b, ir.Op{Kind: ir.KindExtremumGrad, Axis: 1, In: [3]ir.Tensor{x, y, ir.Full(b, []int{2, 1}, backend.F64, 1)}})
	if b.IsTracked(eg) {
		t.Error("extremum_grad of tracked inputs is tracked")
	}
	g := b.RequireGrad(ir.Full(b, []int{2, 3}, backend.F64, 0.5))
	m := ir.Full(b, []int{2, 3}, backend.F64, 0.25)
	adam := ir.Op{Kind: ir.KindAdamStep, Xs: []ir.Tensor{x, g, m, m},
		Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 0.1, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Step: 1}}}
	outs := ir.ApplyAll(b, adam)
	inner := adam
	inner.Xs = []ir.Tensor{b.Primal(x), b.Primal(g), m, m}
	want := ir.ApplyAll(b.Unwrap(), inner)
	for i := range 3 {
		if b.IsTracked(outs[i]) {
			t.Errorf("adam_step output %d is tracked", i)
		}
		if !bytes.Equal(rawBytes(t, b, outs[i]), rawBytes(t, b.Unwrap(), want[i])) {
			t.Errorf("adam_step output %d differs from the inner backend's", i)
		}
	}
	if b.IsTracked(ir.Full(b, []int{2}, backend.F64, 1)) {
		t.Error("full is tracked")
	}
	for name, v := range map[string]backend.Tensor{
		"eq":     ir.Binary(b, backend.OpEq, x, x),
		"argmax": ir.Reduce(b, backend.ReduceArgMax, x, 1, false),
		"cast":   ir.Cast(b, x, backend.I32),
	} {
		if b.IsTracked(v) {
			t.Errorf("%s of a tracked input is tracked", name)
		}
	}
}
