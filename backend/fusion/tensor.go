package fusion

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Tensor is a fusion tensor: the result of a queued elementwise op. It is
// pending (a node of a stream), in flight (its stream is being computed),
// computed (it holds the wrapped backend's tensor) or a recipe (its stream
// was computed without writing it: a later use recomputes it from its
// operands). Only the Backend that made it may interpret it.
type Tensor struct {
	shape []int
	dtype ir.DType
	// owner is the decorator that made the tensor and guards its state.
	owner *Backend

	// The fields below are guarded by the Backend's mu.

	// t is the computed value, nil until then.
	t backend.Tensor
	// st is the stream the tensor is pending in, nil otherwise.
	st *stream
	// fl is the flight computing it, nil otherwise.
	fl *flight
	// node is the op (its Args are filled in per program).
	node ir.FusedNode
	// args are the operands: a fusion tensor not yet computed (lz) or a
	// tensor of the wrapped backend (t). Cleared once t is set.
	args [3]operand
	// users counts the pending nodes of st that read this tensor.
	users int32
	// want marks a tensor asked for: its drain writes it.
	want bool
	// size bounds the number of not-computed nodes its value depends on
	// (itself included), to keep recomputation short. It saturates at
	// maxRecipe+1: shared ancestors are counted once per path, so the
	// sum can grow exponentially along a chain that reads a value twice.
	size int32
	// gen and idx are scratch for planning (see plan.go).
	gen uint64
	idx int32
}

// operand is one operand of a node.
type operand struct {
	lz *Tensor
	t  backend.Tensor
}

// maxStreams is the number of goroutine streams above which a new node
// drains every stream.
const maxStreams = 64

// maxRecipe is the most not-computed nodes a new node may depend on
// through recipes; a recipe operand above it is computed first.
const maxRecipe = 32

// Shape is the tensor's shape.
func (t *Tensor) Shape() []int { return t.shape }

// bytes is the size of the tensor's value.
func (t *Tensor) bytes() int64 { return int64(ir.NumElements(t.shape)) * int64(t.dtype.Size()) }

// DType is the tensor's dtype.
func (t *Tensor) DType() ir.DType { return t.dtype }

// enqueue records op (fusable, inferred) as a pending node of the calling
// goroutine's stream and returns its tensor.
func (b *Backend) enqueue(op *ir.Op) *Tensor {
	n := &Tensor{
		shape: op.Shape,
		dtype: op.DType,
		node:  ir.FusedNode{Kind: op.Kind, Sub: op.Sub, DType: op.DType, Value: op.Scalars[0]},
		size:  1,
		owner: b,
	}
	nargs := n.node.NumArgs()
	for i := 0; i < nargs; i++ {
		if lz, ok := op.In[i].(*Tensor); ok && lz.owner != b {
			op.In[i] = lz.owner.need(lz) // another decorator's tensor: its value
		}
	}
	b.mu.Lock()
	var s *stream
	for {
		// Every operand must be computed, pending in this goroutine's
		// stream, or a short recipe. Any other (pending in another
		// goroutine's stream, in flight, a long recipe) is computed first,
		// without mu, and the check starts again.
		s = b.streamOf()
		var wait *Tensor
		for i := 0; i < nargs; i++ {
			if lz, ok := op.In[i].(*Tensor); ok && lz.t == nil &&
				lz.st != s && (lz.st != nil || lz.fl != nil || lz.size > maxRecipe) {
				wait = lz
				break
			}
		}
		if wait == nil {
			break
		}
		b.mu.Unlock()
		b.need(wait)
		b.mu.Lock()
	}
	for i := 0; i < nargs; i++ {
		x := op.In[i]
		lz, ok := x.(*Tensor)
		switch {
		case !ok:
			n.args[i].t = x
		case lz.t != nil:
			n.args[i].t = lz.t
		default:
			n.args[i].lz = lz
			n.size = min(n.size+lz.size, maxRecipe+1)
			if lz.st == s {
				if lz.users == 0 {
					s.sinkBytes -= lz.bytes()
				}
				lz.users++
			}
		}
	}
	n.st = s
	s.nodes = append(s.nodes, n)
	s.sinkBytes += n.bytes()
	full := len(s.nodes) >= b.maxNodes || s.sinkBytes >= b.maxSink
	crowded := len(b.streams) > maxStreams
	b.mu.Unlock()
	b.stats.Nodes.Add(1)
	if full {
		b.drain(s, nil)
	}
	if crowded {
		// Streams are per goroutine, and a goroutine that exits without
		// reading what it queued leaves its stream behind, holding its
		// inputs: past maxStreams, drain them all.
		b.drainAll()
	}
	return n
}

// need returns t's value, computing it (and what it depends on) first.
func (b *Backend) need(t *Tensor) backend.Tensor {
	if t.owner != b {
		return t.owner.need(t)
	}
	b.mu.Lock()
	for {
		switch {
		case t.t != nil:
			v := t.t
			b.mu.Unlock()
			return v
		case t.st != nil:
			s := t.st
			b.mu.Unlock()
			b.drain(s, t)
		case t.fl != nil:
			f := t.fl
			b.mu.Unlock()
			<-f.done
		default:
			b.mu.Unlock()
			b.compute(t)
		}
		b.mu.Lock()
	}
}

// drain computes the pending nodes of s, writing the sinks, want (when
// pending in s) and whatever a node of another shape reads.
func (b *Backend) drain(s *stream, want *Tensor) {
	b.mu.Lock()
	if want != nil && want.st != s {
		b.mu.Unlock() // drained meanwhile
		return
	}
	nodes := s.nodes
	s.nodes = nil
	for id, st := range b.streams {
		if st == s {
			delete(b.streams, id)
			break
		}
	}
	if len(nodes) == 0 {
		b.mu.Unlock()
		return
	}
	if want != nil {
		want.want = true
	}
	b.stats.Flushes.Add(1)
	b.flightLocked(nodes, nil)
}

// compute computes the recipe t.
func (b *Backend) compute(t *Tensor) {
	b.mu.Lock()
	if t.t != nil || t.st != nil || t.fl != nil {
		b.mu.Unlock()
		return
	}
	b.stats.Recomputed.Add(1)
	b.flightLocked(nil, t)
}

// flightLocked runs one flight, called with mu held, which it releases:
// the drained nodes of a stream (roots, in creation order) or the recipe
// t. It plans under mu, runs the programs without it, and stores the
// results.
func (b *Backend) flightLocked(roots []*Tensor, recipe *Tensor) {
	f := &flight{done: make(chan struct{})}
	p := b.plan(roots, recipe, f)
	b.flights[f] = struct{}{}
	b.mu.Unlock()

	ok := false
	defer func() {
		b.mu.Lock()
		for i := range p.nodes {
			pn := &p.nodes[i]
			n := pn.n
			if n.fl == f {
				n.fl = nil
			}
			if ok && pn.out != nil && n.t == nil {
				n.t = pn.out
				n.args = [3]operand{}
				n.size = 0
			}
		}
		delete(b.flights, f)
		b.mu.Unlock()
		close(f.done)
	}()
	b.run(p)
	ok = true
}
