package autodiff

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/petermattis/goid"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// tensor is the autodiff backend's tracked tensor: the inner backend's
// tensor (the primal) and the output of a node that produced it. Only
// tracked tensors are of this type; an untracked tensor is the inner
// backend's tensor itself.
type tensor struct {
	primal backend.Tensor
	node   *node
	out    uint8         // which output of node
	dtype  backend.DType // the primal's, read once
}

func (t *tensor) Shape() []int         { return t.primal.Shape() }
func (t *tensor) DType() backend.DType { return t.dtype }

// ref names output i of node n; the zero ref is an untracked value.
type ref struct {
	n *node
	i uint8
}

// node is one recorded op (or a leaf). Nodes form a DAG through their
// parents; nothing else refers to them, so a graph is collected with its
// tensors. A node is immutable once recorded, so concurrent Backward calls
// may share it. Its layout keeps the common case (up to three inputs, one
// output) in one 320-byte allocation; variadic inputs and kept outputs
// past the first live in ext.
type node struct {
	// op is the recorded op (KindInvalid for a leaf) with its attributes
	// and inferred output shape. Its inputs are the primals that the node
	// keeps (those the rule reads, and under checkpointing the untracked
	// inputs of a recomputed node); the others are nil. A kind that holds
	// its inputs in Xs has Xs nil when it keeps none.
	op ir.Op
	// par[i] and pout[i] name input i's producer and which of its outputs
	// it is (nil for an untracked input), for kinds with inputs in op.In.
	// An input's shape is its producer's output shape or, for an
	// untracked input, the kept input's (see inShape).
	par [3]*node
	// out0 is output 0 when kept (a leaf's value, an output the rule
	// reads, every output of a checkpointed compute-bound node).
	out0 backend.Tensor
	// ext holds the parents and shapes of a kind with inputs in op.Xs and
	// the kept outputs past the first; nil when there are none.
	ext *extra
	// needIn has bit i set when the rule reads input i; needOut bit j
	// when it reads output j.
	needIn  uint64
	needOut uint8
	nin     uint8 // inputs in op.In (a kind with inputs in op.Xs: 0)
	nout    uint8 // outputs
	// recompute marks a checkpointed memory-bound node: it keeps no
	// output and Backward runs op again on its inputs.
	recompute bool
	// dt0 is input 0's dtype (Cast's gradient is cast back to it).
	dt0  ir.DType
	pout [3]uint8 // see par
}

// extra is the rarely used part of a node.
type extra struct {
	parents []ref   // one per input of a kind with inputs in op.Xs
	shapes  [][]int // their shapes
	outputs [ir.MaxOutputs - 1]backend.Tensor
	// from is set on a transfer node (see Backend.Transfer): the backend
	// of its one input, whose graph the gradient is carried back to.
	from *Backend
}

// numIn is the number of inputs of n's op.
func (n *node) numIn() int {
	if n.ext != nil && n.ext.parents != nil {
		return len(n.ext.parents)
	}
	return int(n.nin)
}

// parent returns input i's producer (zero for an untracked input).
func (n *node) parent(i int) ref {
	if n.nin == 0 {
		return n.ext.parents[i]
	}
	return ref{n.par[i], n.pout[i]}
}

// inShape returns the shape of input i: its producer's output shape (every
// output of a kind has the op's output shape) or, for an untracked input,
// the kept input's. Rules read the shapes of tracked and kept inputs only.
func (n *node) inShape(i int) []int {
	if n.nin == 0 {
		return n.ext.shapes[i]
	}
	if p := n.par[i]; p != nil {
		return p.op.Shape
	}
	if x := n.op.In[i]; x != nil {
		return x.Shape()
	}
	panic("autodiff: internal error: the shape of input " + strconv.Itoa(i) + " of " + n.name() + " was not kept")
}

// output returns output j when kept, else nil.
func (n *node) output(j int) backend.Tensor {
	if j == 0 {
		return n.out0
	}
	if n.ext == nil {
		return nil
	}
	return n.ext.outputs[j-1]
}

// keepOutput keeps t as output j.
func (n *node) keepOutput(j int, t backend.Tensor) {
	if j == 0 {
		n.out0 = t
		return
	}
	if t == nil {
		return
	}
	if n.ext == nil {
		n.ext = &extra{}
	}
	n.ext.outputs[j-1] = t
}

// input returns the kept value of input i, or nil.
func (n *node) input(i int) backend.Tensor {
	if n.nin == 0 {
		if n.op.Xs == nil {
			return nil
		}
		return n.op.Xs[i]
	}
	return n.op.In[i]
}

// isLeaf reports whether n was made by RequireGrad.
func (n *node) isLeaf() bool { return n.op.Kind == ir.KindInvalid && !n.isTransfer() }

// isTransfer reports whether n was made by Transfer.
func (n *node) isTransfer() bool { return n.ext != nil && n.ext.from != nil }

// name is n's op name for messages.
func (n *node) name() string {
	switch {
	case n.isLeaf():
		return "leaf"
	case n.isTransfer():
		return "to_device"
	}
	return n.op.Name()
}

// leaf returns a tracked leaf over p.
func leaf(p backend.Tensor) *tensor {
	n := &node{op: ir.Op{Shape: p.Shape(), DType: p.DType()}, nout: 1, out0: p}
	return &tensor{primal: p, node: n, dtype: p.DType()}
}

// noGradGoroutines counts the goroutines inside NoGrad, so that the check
// of the op path costs one atomic load while none is; noGradDepths maps
// each such goroutine's id to its nesting depth (a *int only that
// goroutine reads or writes).
var (
	noGradGoroutines atomic.Int64
	noGradDepths     sync.Map // int64 → *int
)

// NoGrad runs f with recording suspended on the calling goroutine, on
// every autodiff backend: ops called by f's goroutine return untracked
// tensors, while other goroutines (a training loop running beside an
// evaluation) keep recording. Like torch.no_grad, which is per thread,
// the scope is the goroutine: goroutines that f starts record as usual.
// Calls nest; a panic in f still restores recording.
func NoGrad(f func()) {
	id := goid.Get()
	v, _ := noGradDepths.LoadOrStore(id, new(int))
	depth := v.(*int)
	if *depth == 0 {
		noGradGoroutines.Add(1)
	}
	*depth++
	defer func() {
		if *depth--; *depth == 0 {
			noGradDepths.Delete(id)
			noGradGoroutines.Add(-1)
		}
	}()
	f()
}

// recordingOff reports whether the calling goroutine is inside NoGrad.
func recordingOff() bool {
	if noGradGoroutines.Load() == 0 {
		return false
	}
	_, in := noGradDepths.Load(goid.Get())
	return in
}

// unwrap returns the primal of t and, when t is tracked, its ref.
func unwrap(t backend.Tensor) (backend.Tensor, ref) {
	if at, ok := t.(*tensor); ok {
		return at.primal, ref{at.node, at.out}
	}
	return t, ref{}
}

// record builds the node of op, which ran on the inner backend with the
// primals of its inputs (op holds them) and gave outs. par holds the
// parents of a kind with inputs in In, xpar those of a kind with inputs
// in Xs.
func (b *Backend) record(op *ir.Op, r *rule, par *[3]ref, xpar []ref, outs *ir.Outputs, nout int) *node {
	n := &node{op: *op, nout: uint8(nout)}
	usesXs := op.UsesXs()
	var nin int
	var shapes [][]int
	if usesXs {
		nin = len(op.Xs)
		shapes = make([][]int, nin)
		n.ext = &extra{parents: xpar, shapes: shapes}
	} else {
		nin = op.NumInputs()
		for i, p := range par {
			n.par[i], n.pout[i] = p.n, p.i
		}
		n.nin = uint8(nin)
	}
	var tracked uint64
	for i := range min(nin, 64) {
		if n.parent(i).n != nil {
			tracked |= 1 << uint(i)
		}
	}
	needIn, needOut := r.needs(&n.op, tracked) // n.op is still op
	n.needIn, n.needOut = needIn, needOut
	mem := b.checkpointing && ir.SpecOf(op.Kind).Cost == ir.MemoryBound
	var kept []backend.Tensor // the kept inputs of an Xs kind
	for i := range nin {
		x := op.Input(i)
		if x != nil {
			if shapes != nil {
				shapes[i] = x.Shape()
			}
			if i == 0 {
				n.dt0 = x.DType()
			}
		}
		need := i < 64 && needIn&(1<<uint(i)) != 0
		keep := need
		if b.checkpointing {
			// Tracked inputs come back from the parents in Backward;
			// untracked ones are constants and must be kept.
			keep = n.parent(i).n == nil && (mem || need)
		}
		switch {
		case usesXs:
			if keep && x != nil {
				if kept == nil {
					kept = make([]backend.Tensor, nin)
				}
				kept[i] = x
			}
		case !keep:
			n.op.In[i] = nil
		}
	}
	if usesXs {
		n.op.Xs = kept
	}
	switch {
	case mem:
		n.recompute = true
	case b.checkpointing:
		for j := range nout {
			n.keepOutput(j, outs[j])
		}
	default:
		for j := range nout {
			if needOut&(1<<uint(j)) != 0 {
				n.keepOutput(j, outs[j])
			}
		}
	}
	return n
}

// wants reports whether input i of the node being differentiated is
// tracked (its gradient is used).
func (s *state) wants(i int) bool { return s.n.parent(i).n != nil }

// in returns the value of input i.
func (s *state) in(i int) backend.Tensor {
	if t := s.n.input(i); t != nil {
		return t
	}
	if p := s.n.parent(i); p.n != nil {
		return s.value(p)
	}
	panic("autodiff: internal error: input " + strconv.Itoa(i) + " of " + s.n.name() + " was not kept")
}

// out returns the value of output j.
func (s *state) out(j int) backend.Tensor { return s.value(ref{s.n, uint8(j)}) }

// inShape returns the shape of input i.
func (s *state) inShape(i int) []int { return s.n.inShape(i) }

// op returns the op being differentiated.
func (s *state) op() *ir.Op { return &s.n.op }
