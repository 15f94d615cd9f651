package autodiff

import (
	"github.com/emberml/ember/backend"
)

// Gradients holds the gradients computed by one Backward call, keyed by
// tracked tensor: every tracked tensor the root depends on (leaves and
// intermediates) has one until it is removed or the Gradients is dropped. Each gradient is an inner-backend tensor with the shape
// and dtype of its tensor. A Gradients is not safe for concurrent mutation
// (Remove); concurrent Get calls are safe.
type Gradients struct {
	grads map[*node]backend.Tensor
}

// Get returns the gradient of the root passed to Backward with respect to
// t, a tracked tensor (a leaf or an intermediate result). ok is false when
// t is untracked or the root does not depend on it.
func (g *Gradients) Get(t backend.Tensor) (grad backend.Tensor, ok bool) {
	_, n := unwrap(t)
	if n == nil {
		return nil, false
	}
	grad, ok = g.grads[n]
	return grad, ok
}

// Remove returns t's gradient like Get and deletes it from g (Burn's
// Gradients::remove), so that it can be released early.
func (g *Gradients) Remove(t backend.Tensor) (grad backend.Tensor, ok bool) {
	_, n := unwrap(t)
	if n == nil {
		return nil, false
	}
	grad, ok = g.grads[n]
	delete(g.grads, n)
	return grad, ok
}

// Len is the number of tensors g holds a gradient for.
func (g *Gradients) Len() int { return len(g.grads) }

// Backward computes the gradients of root (tracked, any shape; the seed is
// a tensor of ones of root's shape, i.e. the gradient of the sum of root's
// elements) with respect to every tracked tensor root depends on. The graph
// is left intact, so Backward may be called again. With checkpointing, a
// recomputed value is held only until the last backward step that reads
// it, so the recomputed values do not all stay alive until Backward
// returns (see recompute.go). It panics if root is not tracked.
func (b *Backend) Backward(root backend.Tensor) *Gradients {
	rp, rn := unwrap(root)
	if rn == nil {
		panic("autodiff: Backward: the root tensor is not tracked (no input of it requires grad, or it was computed under NoGrad or from a detached tensor)")
	}
	order := topoOrder(rn)
	grads := map[*node]backend.Tensor{rn: b.inner.Full(rp.Shape(), rp.DType(), 1)}
	st := &state{b: b, stats: b.stats}
	st.stats.reset()
	if b.checkpointing {
		st.plan(order)
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if g, ok := grads[n]; ok && n.backward != nil {
			st.n = n
			b.accumulate(grads, n, n.backward(st, g))
		}
		st.done(n)
	}
	return &Gradients{grads: grads}
}

// accumulate adds the input gradients pg of n (nil entries skipped) to the
// gradients of n's parents.
func (b *Backend) accumulate(grads map[*node]backend.Tensor, n *node, pg []backend.Tensor) {
	for j, p := range n.parents {
		if p == nil || pg[j] == nil {
			continue
		}
		if acc, ok := grads[p]; ok {
			grads[p] = b.inner.Binary(backend.OpAdd, acc, pg[j])
		} else {
			grads[p] = pg[j]
		}
	}
}

// topoOrder returns the nodes reachable from root with every node after
// all of its parents (iterative depth-first post-order).
func topoOrder(root *node) []*node {
	type frame struct {
		n    *node
		next int
	}
	visited := map[*node]bool{root: true}
	var order []*node
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.n.parents) {
			p := f.n.parents[f.next]
			f.next++
			if p != nil && !visited[p] {
				visited[p] = true
				stack = append(stack, frame{n: p})
			}
			continue
		}
		order = append(order, f.n)
		stack = stack[:len(stack)-1]
	}
	return order
}
