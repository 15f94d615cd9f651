package autodiff

import (
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// newInner returns the backend the tests wrap: by default the portable
// pure-Go flex backend, which has no kernel for the gradient kinds
// (Conv2dWeightGrad, SliceScatter, ExtremumGrad, MaxPool2dGrad), so their
// decompositions are tested.
var newInner = func() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) }

// countingInner wraps a backend, forwards Supports and Exec to it and
// counts, per kind, the Supports calls and the ops executed, so that a
// test can check that autodiff ran a kind's kernel rather than its
// decomposition.
type countingInner struct {
	backend.Backend
	supports, execs [ir.NumKinds]atomic.Int64
}

func newCountingInner(inner backend.Backend) *countingInner {
	return &countingInner{Backend: inner}
}

func (c *countingInner) Supports(k ir.Kind, dt backend.DType) bool {
	c.supports[k].Add(1)
	return c.Backend.Supports(k, dt)
}

func (c *countingInner) Exec(op ir.Op) ir.Outputs {
	c.execs[op.Kind].Add(1)
	return c.Backend.Exec(op)
}

func (c *countingInner) Unwrap() backend.Backend { return c.Backend }

func (c *countingInner) reset() {
	for k := range c.execs {
		c.supports[k].Store(0)
		c.execs[k].Store(0)
	}
}

// TestFastPathGradients reruns the convolution, movement, reduction and
// max-pooling gradient checks (finite differences, checkpointing
// bit-identity) over the cpu backend, whose kernels for Conv2dWeightGrad,
// SliceScatter, ExtremumGrad and MaxPool2dGrad replace the decomposed
// weight gradient, Slice adjoint, max/min gradient and pooling gradient.
// The cpu backend is wrapped in a decorator that counts the ops it
// executes per kind, and every subtest must have executed the kernels it
// exercises (the decompositions give the same gradients, so the checks
// alone would pass without them).
func TestFastPathGradients(t *testing.T) {
	inner := newCountingInner(cpu.New(backend.DeviceID{Type: "cpu"}))
	saved := newInner
	newInner = func() backend.Backend { return inner }
	defer func() { newInner = saved }()
	for _, c := range []struct {
		name  string
		test  func(*testing.T)
		calls map[string]*atomic.Int64
	}{
		{"conv", TestConvGradients, map[string]*atomic.Int64{"Exec(conv2d_weight_grad)": &inner.execs[ir.KindConv2dWeightGrad]}},
		{"movement", TestMovementGradients, map[string]*atomic.Int64{"Exec(slice_scatter)": &inner.execs[ir.KindSliceScatter]}},
		{"reduce", TestReduceGradients, map[string]*atomic.Int64{"Exec(extremum_grad)": &inner.execs[ir.KindExtremumGrad]}},
		{"max-ties", TestReduceMaxTies, map[string]*atomic.Int64{"Exec(extremum_grad)": &inner.execs[ir.KindExtremumGrad]}},
		{"max_pool2d", TestMaxPool2dGradients, map[string]*atomic.Int64{
			"Supports(max_pool2d)":  &inner.supports[ir.KindMaxPool2d],
			"Exec(max_pool2d)":      &inner.execs[ir.KindMaxPool2d],
			"Exec(max_pool2d_grad)": &inner.execs[ir.KindMaxPool2dGrad]}},
	} {
		inner.reset()
		t.Run(c.name, c.test)
		for name, n := range c.calls {
			if n.Load() == 0 {
				t.Errorf("%s: the inner backend's %s was never called", c.name, name)
			}
		}
	}
}
