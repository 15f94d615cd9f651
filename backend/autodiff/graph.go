package autodiff

import (
	"strconv"
	"sync/atomic"

	"github.com/emberml/ember/backend"
)

// tensor is the autodiff backend's tensor: the inner backend's tensor (the
// primal) and, when tracked, the node that produced it.
type tensor struct {
	primal backend.Tensor
	node   *node
}

func (t *tensor) Shape() []int         { return t.primal.Shape() }
func (t *tensor) DType() backend.DType { return t.primal.DType() }

// backwardFn returns the gradients of a node's inputs given the gradient g
// of its output (an inner tensor of the output's shape and dtype). Entry i
// may be nil when s.wants(i) is false.
type backwardFn func(s *state, g backend.Tensor) []backend.Tensor

// forwardFn runs a primitive on inner tensors; it is kept by checkpointed
// memory-bound nodes to recompute their output.
type forwardFn func(ins []backend.Tensor) backend.Tensor

// node is one recorded op (or a leaf). Nodes form a DAG through parents;
// nothing else refers to them, so a graph is collected with its tensors.
type node struct {
	prim     Primitive // 0 for a leaf
	parents  []*node   // one per op input; nil for an untracked input
	saved    []backend.Tensor
	inShapes [][]int
	output   backend.Tensor // kept output (leaves, compute-bound ops, or needed by backward)
	forward  forwardFn      // set only for checkpointed memory-bound nodes
	backward backwardFn
	needIn   uint64 // bit i: backward may read input i
	needOut  bool   // backward may read the output
	shape    []int
	dtype    backend.DType
}

// noGradDepth counts the NoGrad calls in progress in the whole process.
var noGradDepth atomic.Int64

// NoGrad runs f with recording suspended on every autodiff backend: ops
// called while f runs return untracked tensors. The switch is a
// process-wide counter, not per goroutine: ops on other goroutines during f
// are not recorded either (as torch.no_grad is per thread, this is coarser).
// Calls nest; a panic in f still restores recording.
func NoGrad(f func()) {
	noGradDepth.Add(1)
	defer noGradDepth.Add(-1)
	f()
}

// unwrap returns the inner tensor and node of t. A tensor that is not an
// autodiff tensor (an inner backend tensor passed directly) is taken as
// untracked.
func unwrap(t backend.Tensor) (backend.Tensor, *node) {
	if at, ok := t.(*tensor); ok {
		return at.primal, at.node
	}
	return t, nil
}

// op describes a primitive call for record.
type op struct {
	prim    Primitive
	needIn  uint64 // bit i: backward reads input i
	needOut bool   // backward reads the output
	fwd     forwardFn
	bwd     backwardFn
}

// record runs o.fwd on the primals of ins and, when some input is tracked,
// recording is on and the output is a float, attaches a node.
func (b *Backend) record(o op, ins ...backend.Tensor) backend.Tensor {
	prims := make([]backend.Tensor, len(ins))
	var parents []*node
	for i, t := range ins {
		p, n := unwrap(t)
		prims[i] = p
		if n != nil {
			if parents == nil {
				parents = make([]*node, len(ins))
			}
			parents[i] = n
		}
	}
	out := o.fwd(prims)
	if parents == nil || noGradDepth.Load() > 0 || !out.DType().IsFloat() {
		return &tensor{primal: out}
	}
	n := &node{
		prim:     o.prim,
		parents:  parents,
		saved:    make([]backend.Tensor, len(ins)),
		inShapes: make([][]int, len(ins)),
		backward: o.bwd,
		needIn:   o.needIn,
		needOut:  o.needOut,
		shape:    out.Shape(),
		dtype:    out.DType(),
	}
	for i, p := range prims {
		n.inShapes[i] = p.Shape()
	}
	if b.checkpointing {
		mem := Classify(o.prim) == MemoryBound
		for i, p := range prims {
			// Tracked inputs come back from the parents in Backward;
			// untracked ones are constants and must be kept.
			if parents[i] == nil && (mem || o.needIn&(1<<uint(i)) != 0) {
				n.saved[i] = p
			}
		}
		if mem {
			n.forward = o.fwd
		} else {
			n.output = out
		}
	} else {
		for i, p := range prims {
			if o.needIn&(1<<uint(i)) != 0 {
				n.saved[i] = p
			}
		}
		if o.needOut {
			n.output = out
		}
	}
	return &tensor{primal: out, node: n}
}

// wants reports whether input i is tracked (its gradient is used).
func (s *state) wants(i int) bool { return s.n.parents[i] != nil }

// in returns the value of input i.
func (s *state) in(i int) backend.Tensor {
	if t := s.n.saved[i]; t != nil {
		return t
	}
	if p := s.n.parents[i]; p != nil {
		return s.value(p)
	}
	panic("autodiff: internal error: input " + strconv.Itoa(i) + " of " + s.n.prim.String() + " was not kept")
}

// out returns the value of the node's output.
func (s *state) out() backend.Tensor { return s.value(s.n) }

// inShape returns the shape of input i.
func (s *state) inShape(i int) []int { return s.n.inShapes[i] }
