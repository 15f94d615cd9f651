package autodiff

import (
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
)

// newInner returns the backend the tests wrap: by default the portable
// pure-Go flex backend, which implements none of the optional gradient
// kernels, so the composed gradients are tested.
var newInner = func() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) }

// fastPaths is the set of optional kernels autodiff calls when its inner
// backend has them (Conv2dWeightGrader, SliceScatterer, ExtremumGrader,
// MaxPool2der).
type fastPaths interface {
	backend.Backend
	backend.Conv2dWeightGrader
	backend.SliceScatterer
	backend.ExtremumGrader
	backend.MaxPool2der
}

// countingInner wraps a backend with every optional kernel, forwards each
// optional method to it and counts the calls, so that a test can check
// that autodiff took the fast path rather than the composed fallback.
type countingInner struct {
	backend.Backend
	inner                                 fastPaths
	weightGrad, sliceScatter, extremum    atomic.Int64
	maxPool, maxPoolGrad, supportsMaxPool atomic.Int64
}

var _ fastPaths = (*countingInner)(nil)

func newCountingInner(inner fastPaths) *countingInner {
	return &countingInner{Backend: inner, inner: inner}
}

func (c *countingInner) Conv2dWeightGrad(x, g backend.Tensor, ws [4]int, o backend.ConvOptions) backend.Tensor {
	c.weightGrad.Add(1)
	return c.inner.Conv2dWeightGrad(x, g, ws, o)
}

func (c *countingInner) SliceScatter(src backend.Tensor, shape []int, ranges []backend.Range) backend.Tensor {
	c.sliceScatter.Add(1)
	return c.inner.SliceScatter(src, shape, ranges)
}

func (c *countingInner) ExtremumGrad(x, y, g backend.Tensor, axis int) backend.Tensor {
	c.extremum.Add(1)
	return c.inner.ExtremumGrad(x, y, g, axis)
}

func (c *countingInner) SupportsMaxPool2d(dt backend.DType) bool {
	c.supportsMaxPool.Add(1)
	return c.inner.SupportsMaxPool2d(dt)
}

func (c *countingInner) MaxPool2d(x backend.Tensor, o backend.PoolOptions) backend.Tensor {
	c.maxPool.Add(1)
	return c.inner.MaxPool2d(x, o)
}

func (c *countingInner) MaxPool2dGrad(x, y, g backend.Tensor, o backend.PoolOptions) backend.Tensor {
	c.maxPoolGrad.Add(1)
	return c.inner.MaxPool2dGrad(x, y, g, o)
}

// TestFastPathGradients reruns the convolution, movement, reduction and
// max-pooling gradient checks (finite differences, checkpointing
// bit-identity) over the cpu backend, whose Conv2dWeightGrad, SliceScatter,
// ExtremumGrad and MaxPool2dGrad replace the composed weight gradient,
// Slice adjoint, max/min gradient and pooling gradient. The cpu backend is
// wrapped in a decorator that counts the calls of each optional method,
// and every subtest must have called the kernels it exercises (the
// composed fallbacks give the same gradients, so the checks alone would
// pass without them).
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
		{"conv", TestConvGradients, map[string]*atomic.Int64{"Conv2dWeightGrad": &inner.weightGrad}},
		{"movement", TestMovementGradients, map[string]*atomic.Int64{"SliceScatter": &inner.sliceScatter}},
		{"reduce", TestReduceGradients, map[string]*atomic.Int64{"ExtremumGrad": &inner.extremum}},
		{"max-ties", TestReduceMaxTies, map[string]*atomic.Int64{"ExtremumGrad": &inner.extremum}},
		{"max_pool2d", TestMaxPool2dGradients, map[string]*atomic.Int64{
			"SupportsMaxPool2d": &inner.supportsMaxPool, "MaxPool2d": &inner.maxPool, "MaxPool2dGrad": &inner.maxPoolGrad}},
	} {
		for _, n := range []*atomic.Int64{&inner.weightGrad, &inner.sliceScatter, &inner.extremum, &inner.maxPool, &inner.maxPoolGrad, &inner.supportsMaxPool} {
			n.Store(0)
		}
		t.Run(c.name, c.test)
		for name, n := range c.calls {
			if n.Load() == 0 {
				t.Errorf("%s: the inner backend's %s was never called", c.name, name)
			}
		}
	}
}
