package autodiff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
)

// TestMaxPool2dGradients records MaxPool2d over the cpu backend (which
// implements backend.MaxPool2der; or over the tests' inner backend when it
// implements it) after a memory-bound op, and checks the
// gradient against central finite differences (random inputs, ties have
// probability zero) and the checkpointed gradient against the plain one
// bit for bit, for overlapping, padded, dilated and strided windows.
func TestMaxPool2dGradients(t *testing.T) {
	if _, ok := newInner().(backend.MaxPool2der); !ok {
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
			if !b.SupportsMaxPool2d(backend.F64) {
				t.Fatal("autodiff over cpu does not support max_pool2d in F64")
			}
			return b.MaxPool2d(b.Unary(backend.OpNeg, xs[0]), o)
		})
	}
}

// TestMaxPool2dDelegation checks that Backend offers the max-pool kernels
// only when its inner backend does, that untracked inputs and NoGrad give
// untracked outputs, and that MaxPool2dGrad returns the inner kernel's
// value untracked.
func TestMaxPool2dDelegation(t *testing.T) {
	if b := New(newInner(), false); b.SupportsMaxPool2d(backend.F32) {
		t.Error("autodiff over flex claims a max_pool2d kernel")
	} else if err := catch(func() { b.MaxPool2d(b.Full([]int{1, 1, 2, 2}, backend.F32, 1), backend.PoolOptions{}) }); !strings.Contains(err, "SupportsMaxPool2d") {
		t.Errorf("MaxPool2d without an inner kernel: panic %q", err)
	}
	inner := cpu.New(backend.DeviceID{Type: "cpu"})
	b := New(inner, false)
	if b.SupportsMaxPool2d(backend.F16) || !b.SupportsMaxPool2d(backend.F32) {
		t.Error("SupportsMaxPool2d does not follow the inner backend")
	}
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	data := f64Data([]int{1, 1, 2, 3}, []float64{1, 4, 2, 4, 0, 3})
	x := b.FromData(data)
	if b.IsTracked(b.MaxPool2d(x, o)) {
		t.Error("pooling an untracked input is tracked")
	}
	xg := b.RequireGrad(x)
	NoGrad(func() {
		if b.IsTracked(b.MaxPool2d(xg, o)) {
			t.Error("pooling under NoGrad is tracked")
		}
	})
	y := b.MaxPool2d(xg, o)
	checkVals(t, "max_pool2d", values(t, inner, b.Primal(y)), []float64{4, 4}, 0)
	// Windows {1, 4, 4, 0} and {4, 2, 0, 3}: the tied 4s share the first
	// window's gradient, the second 4 also takes all of the second's.
	gs := b.Backward(y)
	g, _ := gs.Get(xg)
	checkVals(t, "max_pool2d grad", values(t, inner, g), []float64{0, 1.5, 0, 0.5, 0, 0}, 0)
	direct := b.MaxPool2dGrad(xg, y, b.Full([]int{1, 1, 1, 2}, backend.F64, 1), o)
	if b.IsTracked(direct) {
		t.Error("MaxPool2dGrad result is tracked")
	}
	checkVals(t, "MaxPool2dGrad", values(t, inner, b.Primal(direct)), []float64{0, 1.5, 0, 0.5, 0, 0}, 0)
}

// catch runs f and returns its panic value printed ("" for none).
func catch(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
