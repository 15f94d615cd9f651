package autodiff

import (
	"github.com/emberml/ember/backend"
)

var _ backend.MaxPool2der = (*Backend)(nil)

// SupportsMaxPool2d reports whether the inner backend implements
// backend.MaxPool2der and supports dt; only then may MaxPool2d and
// MaxPool2dGrad be called (callers compose the pooling otherwise).
func (b *Backend) SupportsMaxPool2d(dt backend.DType) bool {
	mp, ok := b.inner.(backend.MaxPool2der)
	return ok && mp.SupportsMaxPool2d(dt)
}

// MaxPool2d runs the inner backend's MaxPool2d (x [N, C, H, W] ->
// [N, C, Ho, Wo], see backend.MaxPool2der) and records its gradient, the
// inner backend's MaxPool2dGrad of the input, the kept output and the
// output gradient (tied maxima share the gradient evenly, as for Reduce
// with ReduceMax). The node keeps x and the output; under the Balanced
// strategy it is compute-bound (PrimMaxPool2d), so the output is kept and
// a tracked x comes back from its parent. It panics when
// SupportsMaxPool2d(x's dtype) is false.
func (b *Backend) MaxPool2d(x backend.Tensor, opts backend.PoolOptions) backend.Tensor {
	mp := b.maxPooler(x.DType())
	return b.record(op{prim: PrimMaxPool2d, needIn: 1, needOut: true,
		fwd: func(in []backend.Tensor) backend.Tensor { return mp.MaxPool2d(in[0], opts) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{mp.MaxPool2dGrad(s.in(0), s.out(), g, opts)}
		},
	}, x)
}

// MaxPool2dGrad runs the inner backend's MaxPool2dGrad on the primals of
// x, y and g and returns an untracked tensor (gradients are first order
// only). It panics when SupportsMaxPool2d(x's dtype) is false.
func (b *Backend) MaxPool2dGrad(x, y, g backend.Tensor, opts backend.PoolOptions) backend.Tensor {
	mp := b.maxPooler(x.DType())
	xp, _ := unwrap(x)
	yp, _ := unwrap(y)
	gp, _ := unwrap(g)
	return &tensor{primal: mp.MaxPool2dGrad(xp, yp, gp, opts)}
}

// maxPooler returns the inner backend as a MaxPool2der for dt, panicking
// when it is not one or does not support dt.
func (b *Backend) maxPooler(dt backend.DType) backend.MaxPool2der {
	mp, ok := b.inner.(backend.MaxPool2der)
	if !ok || !mp.SupportsMaxPool2d(dt) {
		panic("autodiff: MaxPool2d: the inner backend has no max-pooling kernel for " + dt.String() + " (check SupportsMaxPool2d)")
	}
	return mp
}
