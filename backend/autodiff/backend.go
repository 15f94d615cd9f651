package autodiff

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Backend wraps an inner backend.Backend and records a graph of the ops
// applied to tracked tensors, so that Backward can compute gradients
// (Burn's Autodiff<B> decorator). It implements backend.Backend; its
// tensors wrap the inner backend's tensors. It is safe for concurrent use
// (nodes are immutable once recorded).
type Backend struct {
	inner         backend.Backend
	checkpointing bool
	stats         *cacheStats // observes Backward's recomputation cache in tests
}

var _ backend.Backend = (*Backend)(nil)

// New wraps inner. With checkpointing false the graph keeps what each
// backward function needs (strategy Disabled); with true it uses the
// Balanced strategy (see Classify): memory-bound nodes keep no output and
// are recomputed during Backward.
func New(inner backend.Backend, checkpointing bool) *Backend {
	if inner == nil {
		panic("autodiff: New: inner backend is nil")
	}
	return &Backend{inner: inner, checkpointing: checkpointing}
}

// Inner returns the wrapped backend.
func (b *Backend) Inner() backend.Backend { return b.inner }

// Checkpointing reports whether the Balanced checkpointing strategy is on.
func (b *Backend) Checkpointing() bool { return b.checkpointing }

// Strategy returns Balanced when checkpointing is on, else Disabled.
func (b *Backend) Strategy() CheckpointingStrategy {
	if b.checkpointing {
		return Balanced
	}
	return Disabled
}

// RequireGrad returns a tracked leaf over the same inner storage as t (t
// may be tracked or not; a tracked t's history is not linked: the result
// is a new leaf, like PyTorch's x.detach().requires_grad_()). It panics if
// t's dtype is not a float dtype.
func (b *Backend) RequireGrad(t backend.Tensor) backend.Tensor {
	p, _ := unwrap(t)
	if !p.DType().IsFloat() {
		panic(fmt.Sprintf("autodiff: RequireGrad: only float tensors can require grad, got %v", p.DType()))
	}
	return &tensor{primal: p, node: &node{output: p, shape: p.Shape(), dtype: p.DType()}}
}

// IsTracked reports whether t carries a node (it is a leaf made by
// RequireGrad or the result of an op with a tracked input).
func (b *Backend) IsTracked(t backend.Tensor) bool {
	_, n := unwrap(t)
	return n != nil
}

// Primal returns the inner backend's tensor of t (t itself when t is not an
// autodiff tensor).
func (b *Backend) Primal(t backend.Tensor) backend.Tensor {
	p, _ := unwrap(t)
	return p
}

// Wrap returns an untracked autodiff tensor around an inner tensor (an
// autodiff tensor is detached instead).
func (b *Backend) Wrap(inner backend.Tensor) backend.Tensor {
	p, _ := unwrap(inner)
	return &tensor{primal: p}
}

// Detach returns an untracked tensor over the same inner storage as t.
func (b *Backend) Detach(t backend.Tensor) backend.Tensor {
	p, _ := unwrap(t)
	return &tensor{primal: p}
}

// ID returns the inner backend's ID unchanged.
func (b *Backend) ID() backend.DeviceID { return b.inner.ID() }

// Sync delegates to the inner backend.
func (b *Backend) Sync() error { return b.inner.Sync() }

// Flush delegates to the inner backend.
func (b *Backend) Flush() { b.inner.Flush() }

// Seed delegates to the inner backend.
func (b *Backend) Seed(seed uint64) { b.inner.Seed(seed) }

// SupportsDType delegates to the inner backend.
func (b *Backend) SupportsDType(dt backend.DType) bool { return b.inner.SupportsDType(dt) }

// FromData copies data onto the inner device; the result is untracked.
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor {
	return &tensor{primal: b.inner.FromData(data)}
}

// ToData reads t's primal from the inner backend.
func (b *Backend) ToData(t backend.Tensor) (*backend.TensorData, error) {
	p, _ := unwrap(t)
	return b.inner.ToData(p)
}

// Full delegates to the inner backend; the result is untracked.
func (b *Backend) Full(shape []int, dt backend.DType, value float64) backend.Tensor {
	return &tensor{primal: b.inner.Full(shape, dt, value)}
}

// Arange delegates to the inner backend; the result is untracked.
func (b *Backend) Arange(start, step float64, n int, dt backend.DType) backend.Tensor {
	return &tensor{primal: b.inner.Arange(start, step, n, dt)}
}

// Random delegates to the inner backend; the result is untracked.
func (b *Backend) Random(shape []int, dt backend.DType, dist backend.Distribution) backend.Tensor {
	return &tensor{primal: b.inner.Random(shape, dt, dist)}
}
