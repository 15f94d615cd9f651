package autodiff

import (
	"fmt"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Gradients holds the gradients computed by one Backward call, keyed by
// tracked tensor: every tracked tensor the root depends on (leaves and
// intermediates) has one until it is removed or the Gradients is dropped.
// Each gradient is an inner-backend tensor with the shape and dtype of its
// tensor. A Gradients is not safe for concurrent mutation (Remove);
// concurrent Get calls are safe.
type Gradients struct {
	grads map[ref]backend.Tensor
}

// Get returns the gradient of the root passed to Backward with respect to
// t, a tracked tensor (a leaf or an intermediate result). ok is false when
// t is untracked or the root does not depend on it.
func (g *Gradients) Get(t backend.Tensor) (grad backend.Tensor, ok bool) {
	_, r := unwrap(t)
	if r.n == nil {
		return nil, false
	}
	grad, ok = g.grads[r]
	return grad, ok
}

// Remove returns t's gradient like Get and deletes it from g (Burn's
// Gradients::remove), so that it can be released early.
func (g *Gradients) Remove(t backend.Tensor) (grad backend.Tensor, ok bool) {
	_, r := unwrap(t)
	if r.n == nil {
		return nil, false
	}
	grad, ok = g.grads[r]
	delete(g.grads, r)
	return grad, ok
}

// Set makes grad the gradient of t, a tracked tensor, replacing the one g
// holds (or adding one), as gradient clipping or loss unscaling does before
// an optimizer step reads it, and reports whether t is tracked; an
// untracked t leaves g unchanged. grad is a tensor of the inner backend;
// the caller checks that it has t's shape and dtype. Like Remove, it is not
// safe for concurrent use with other calls on g.
func (g *Gradients) Set(t, grad backend.Tensor) bool {
	_, r := unwrap(t)
	if r.n == nil {
		return false
	}
	g.grads[r] = grad
	return true
}

// Len is the number of tensors g holds a gradient for.
func (g *Gradients) Len() int { return len(g.grads) }

// Backward computes the gradients of root (tracked, any shape; the seed is
// a tensor of ones of root's shape, i.e. the gradient of the sum of root's
// elements) with respect to every tracked tensor root depends on. Each
// node's rule receives the gradients of its outputs (nil for an output
// that got none; a node none of whose outputs got one is skipped) and the
// input gradients are added to the parents' in input order. The graph is
// left intact, so Backward may be called again. With checkpointing, a
// recomputed value is held only until the last backward step that reads
// it, so the recomputed values do not all stay alive until Backward
// returns (see recompute.go). It panics if root is not tracked.
func (b *Backend) Backward(root backend.Tensor) *Gradients {
	rp, rr := unwrap(root)
	if rr.n == nil {
		panic(notTracked)
	}
	return b.backward(rr, ir.Full(b.inner, rp.Shape(), rp.DType(), 1))
}

// BackwardWith is Backward seeded with seed instead of ones: the
// gradients of Σ seed·root (the vector-Jacobian product, PyTorch's
// root.backward(seed)). seed is a tensor of the inner backend (or an
// untracked one; a tracked seed's history is ignored) of root's shape and
// dtype. It panics if root is not tracked or seed does not match.
func (b *Backend) BackwardWith(root, seed backend.Tensor) *Gradients {
	rp, rr := unwrap(root)
	if rr.n == nil {
		panic(notTracked)
	}
	sp, _ := unwrap(seed)
	if sp == nil || sp.DType() != rp.DType() || !slices.Equal(sp.Shape(), rp.Shape()) {
		panic(fmt.Sprintf("autodiff: BackwardWith: the seed must have the root's shape %v and dtype %v", rp.Shape(), rp.DType()))
	}
	return b.backward(rr, sp)
}

// notTracked is the panic of Backward of an untracked tensor.
const notTracked = "autodiff: Backward: the root tensor is not tracked (no input of it requires grad, or it was computed under NoGrad or from a detached tensor)"

// backward runs the backward pass from rr seeded with seed.
func (b *Backend) backward(rr ref, seed backend.Tensor) *Gradients {
	order, owner := topoOrder(rr.n, b)
	grads := map[ref]backend.Tensor{rr: seed}
	st := &state{b: b, e: b.inner, owner: owner, stats: b.stats}
	st.stats.reset()
	if slices.ContainsFunc(order, func(n *node) bool { return n.recompute }) {
		st.plan(order)
	}
	var dx []backend.Tensor
	var gs ir.Outputs
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if !n.isLeaf() {
			gs = ir.Outputs{}
			some := false
			for j := range int(n.nout) {
				if g, ok := grads[ref{n, uint8(j)}]; ok {
					gs[j], some = g, true
				}
			}
			if some {
				nin := n.numIn()
				if cap(dx) < nin {
					dx = make([]backend.Tensor, nin)
				}
				dx = dx[:nin]
				clear(dx)
				be := owner[n]
				st.n, st.b, st.e = n, be, be.inner
				in := be // the backend of n's inputs and their gradients
				if n.isTransfer() {
					in = n.ext.from
					dx[0] = carry(gs[0], be.inner, in.inner)
				} else {
					rules[n.op.Kind].backward(st, &gs, dx)
				}
				accumulate(grads, n, dx, in.inner)
			}
		}
		st.done(n)
	}
	return &Gradients{grads: grads}
}

// accumulate adds the input gradients dx of n (nil entries skipped) to the
// gradients of n's parents, in input order, on e (the inner backend of the
// parents' graph).
func accumulate(grads map[ref]backend.Tensor, n *node, dx []backend.Tensor, e backend.Backend) {
	for j := range n.numIn() {
		p := n.parent(j)
		if p.n == nil || dx[j] == nil {
			continue
		}
		if acc, ok := grads[p]; ok {
			grads[p] = ir.Add(e, acc, dx[j])
		} else {
			grads[p] = dx[j]
		}
	}
}

// topoOrder returns the nodes reachable from root with every node after
// all of its parents (iterative depth-first post-order).
func topoOrder(root *node, b *Backend) ([]*node, map[*node]*Backend) {
	type frame struct {
		n    *node
		next int
	}
	owner := map[*node]*Backend{root: b}
	var order []*node
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < f.n.numIn() {
			p := f.n.parent(f.next).n
			f.next++
			if _, seen := owner[p]; p != nil && !seen {
				// A node's graph is its child's, past a transfer node
				// its input's.
				if f.n.isTransfer() {
					owner[p] = f.n.ext.from
				} else {
					owner[p] = owner[f.n]
				}
				stack = append(stack, frame{n: p})
			}
			continue
		}
		order = append(order, f.n)
		stack = stack[:len(stack)-1]
	}
	return order, owner
}

// carry returns gradient g of backend from on backend to: g itself when
// both are the same backend, else a copy through the host.
func carry(g backend.Tensor, from, to backend.Backend) backend.Tensor {
	if from == to {
		return g
	}
	d, err := from.ToData(g)
	if err != nil {
		panic(fmt.Errorf("autodiff: Backward: reading the gradient of a tensor moved from another device: %w", err))
	}
	return to.FromData(d)
}
