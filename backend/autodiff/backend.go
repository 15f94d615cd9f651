package autodiff

import (
	"fmt"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Backend wraps an inner backend.Backend and records a graph of the ops
// applied to tracked tensors, so that Backward can compute gradients
// (Burn's Autodiff<B> decorator). It implements backend.Backend and
// backend.Wrapper: ops arrive through Exec, run on the inner backend, and
// a result with a tracked input is a tracked tensor wrapping the inner
// result. An untracked result is the inner backend's tensor itself. It is
// safe for concurrent use (nodes are immutable once recorded).
type Backend struct {
	inner         backend.Backend
	checkpointing bool
	stats         *cacheStats // observes Backward's recomputation cache in tests
}

var (
	_ backend.Backend = (*Backend)(nil)
	_ backend.Wrapper = (*Backend)(nil)
)

// New wraps inner. With checkpointing false the graph keeps what each
// gradient rule needs (strategy Disabled); with true it uses the Balanced
// strategy (see Classify): memory-bound nodes keep no output and are
// recomputed during Backward.
func New(inner backend.Backend, checkpointing bool) *Backend {
	if inner == nil {
		panic("autodiff: New: inner backend is nil")
	}
	return &Backend{inner: inner, checkpointing: checkpointing}
}

// Unwrap returns the wrapped backend.
func (b *Backend) Unwrap() backend.Backend { return b.inner }

// Checkpointing reports whether the Balanced checkpointing strategy is on.
func (b *Backend) Checkpointing() bool { return b.checkpointing }

// Strategy returns Balanced when checkpointing is on, else Disabled.
func (b *Backend) Strategy() CheckpointingStrategy {
	if b.checkpointing {
		return Balanced
	}
	return Disabled
}

// Supports reports whether Exec runs kind k on dtype dt as one op:
//   - a kind with a gradient rule when it is a base kind, the inner
//     backend supports it for dt, or its rule is marked whole (MaxPool2d,
//     whose gradient is not its decomposition's). Another fast-path kind
//     the inner backend lacks is thus lowered by the caller (ir.Run) above
//     autodiff, which records the base ops of its decomposition;
//   - always, a kind that is run untracked (creation, the gradient kinds
//     ExtremumGrad, SliceScatter, Conv2dWeightGrad and MaxPool2dGrad, the
//     optimizer steps): Exec runs it with ir.Run on the inner backend, so
//     it stays one kernel where the inner backend has one and is lowered
//     below autodiff, untracked, where it has none;
//   - never, a kind autodiff has no rule for.
func (b *Backend) Supports(k ir.Kind, dt backend.DType) bool {
	if !k.Valid() {
		return false
	}
	r := &rules[k]
	if r.nondiff {
		return true
	}
	return r.backward != nil && (r.whole || ir.SpecOf(k).Decompose == nil || b.inner.Supports(k, dt))
}

// Exec runs op on the inner backend (with ir.Run, so a kind the inner
// backend lacks is lowered below autodiff) on the primals of its inputs
// (tracked tensors of this package or the inner backend's tensors). When
// an input is tracked, recording is on (see NoGrad), the kind has a
// gradient rule and an output has a float dtype, it records a node, and
// each float output is returned as a tracked tensor; other outputs are
// the inner backend's tensors. op must have been inferred.
func (b *Backend) Exec(op ir.Op) ir.Outputs { return b.exec(&op, nil) }

// Slot is the storage of one tracked tensor, for a layer above autodiff
// that allocates it inside its own wrapper of a result (see ExecInto).
type Slot struct{ t tensor }

// ExecInto is Exec for a caller that wraps output 0 in an object of its
// own: when output 0 is tracked, its tracked tensor is stored in the Slot
// that slot returns (called at most once) instead of in an allocation of
// its own, so that the caller can allocate both together.
func (b *Backend) ExecInto(op ir.Op, slot func() *Slot) ir.Outputs { return b.exec(&op, slot) }

// exec is Exec and ExecInto; it modifies op (the callers' copy).
func (b *Backend) exec(op *ir.Op, slot func() *Slot) ir.Outputs {
	r := &rules[op.Kind]
	if r.backward == nil && !r.nondiff {
		// A kind without a gradient rule: its decomposition runs here,
		// so its parts are recorded.
		if d := ir.SpecOf(op.Kind).Decompose; d != nil {
			return d(*op, b)
		}
		panic(&ir.UnsupportedError{Kind: op.Kind, DType: op.KeyDType()})
	}
	var par [3]ref
	var xpar []ref
	tracked := false
	if op.UsesXs() {
		var xs []backend.Tensor
		for i, x := range op.Xs {
			if t, ok := x.(*tensor); ok {
				if xs == nil {
					xs = slices.Clone(op.Xs)
					if r.backward != nil {
						xpar = make([]ref, len(op.Xs))
					}
				}
				xs[i] = t.primal
				if xpar != nil {
					xpar[i] = ref{t.node, t.out}
				}
			}
		}
		if xs != nil {
			op.Xs = xs
			tracked = true
		}
	} else {
		for i, x := range op.In {
			if t, ok := x.(*tensor); ok {
				op.In[i] = t.primal
				par[i] = ref{t.node, t.out}
				tracked = true
			}
		}
	}
	var outs ir.Outputs
	if ir.SpecOf(op.Kind).Decompose == nil {
		outs = b.inner.Exec(*op) // a base kind: what ir.Run does, one call fewer
	} else {
		outs = ir.Run(b.inner, *op)
	}
	if !tracked || r.backward == nil || recordingOff() {
		return outs
	}
	nout := ir.SpecOf(op.Kind).NumOutputs
	float := false
	for j := range nout {
		if outs[j] != nil && outs[j].DType().IsFloat() {
			float = true
			break
		}
	}
	if !float {
		return outs
	}
	n := b.record(op, r, &par, xpar, &outs, nout)
	for j := range nout {
		if o := outs[j]; o != nil {
			if dt := o.DType(); dt.IsFloat() {
				if j == 0 && slot != nil {
					s := slot()
					s.t = tensor{primal: o, node: n, dtype: dt}
					outs[j] = &s.t
				} else {
					outs[j] = &tensor{primal: o, node: n, out: uint8(j), dtype: dt}
				}
			}
		}
	}
	return outs
}

// Transfer returns moved, a copy on b's inner backend of t (a tensor of
// the autodiff backend src, which may run on other hardware), as a tensor
// of b tracked like t: Backward from a result on b carries the gradient
// back into t's graph (copied to src's inner backend through the host when
// src's inner backend is another one), so that leaves on src receive their
// gradients, as PyTorch's x.to(device) is differentiable. An untracked t,
// or a call under NoGrad, gives moved untracked.
func (b *Backend) Transfer(src *Backend, t, moved backend.Tensor) backend.Tensor {
	_, r := unwrap(t)
	if r.n == nil || src == nil || recordingOff() || !moved.DType().IsFloat() {
		return moved
	}
	n := &node{op: ir.Op{Shape: moved.Shape(), DType: moved.DType()}, nout: 1, nin: 1, ext: &extra{from: src}}
	n.par[0], n.pout[0] = r.n, r.i
	n.dt0 = t.DType()
	return &tensor{primal: moved, node: n, dtype: moved.DType()}
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
	return leaf(p)
}

// IsTracked reports whether t carries a node (it is a leaf made by
// RequireGrad or the result of an op with a tracked input).
func (b *Backend) IsTracked(t backend.Tensor) bool {
	_, r := unwrap(t)
	return r.n != nil
}

// Primal returns the inner backend's tensor of t (t itself when t is not
// tracked).
func (b *Backend) Primal(t backend.Tensor) backend.Tensor {
	p, _ := unwrap(t)
	return p
}

// Wrap returns an inner tensor as an untracked tensor of this backend,
// which is the inner tensor itself (a tracked tensor is detached instead).
func (b *Backend) Wrap(inner backend.Tensor) backend.Tensor { return b.Primal(inner) }

// Detach returns an untracked tensor over the same inner storage as t (the
// inner tensor).
func (b *Backend) Detach(t backend.Tensor) backend.Tensor { return b.Primal(t) }

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
	return b.inner.FromData(data)
}

// ToData reads t's primal from the inner backend.
func (b *Backend) ToData(t backend.Tensor) (*backend.TensorData, error) {
	p, _ := unwrap(t)
	return b.inner.ToData(p)
}
