package ir

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// FusedProgram is a DAG of elementwise ops evaluated in one pass over an
// iteration shape, the unit of work of the fusion decorator
// (backend/fusion): a backend that runs it (backend.Fuser) reads each
// input once and writes each output once, however many ops the program
// has, instead of one memory pass per op.
//
// Every node is an elementwise op (KindUnary, KindBinary, KindWhere,
// KindCast) or a constant (KindFull); its value at iteration index i is
// its op applied to its operands' values at i, where an input is read at
// the NumPy broadcast of i to its shape. Because elementwise ops commute
// with broadcasting, this equals running the ops one by one
// (FusedProgram.Run), bit for bit when the backend computes each node in
// its dtype exactly as its kernel for that op does.
type FusedProgram struct {
	// Shape is the iteration shape; every output has it.
	Shape []int
	// Inputs describe the tensors passed beside the program: input i has
	// dtype Inputs[i].DType and shape Inputs[i].Shape, broadcastable to
	// Shape.
	Inputs []FusedInput
	// Nodes are in topological order: a node's Args refer to inputs and
	// to earlier nodes only.
	Nodes []FusedNode
	// Outputs are the indices of the nodes whose values are written, each
	// into a new tensor of Shape and the node's DType.
	Outputs []int
}

// FusedInput describes one input of a FusedProgram.
type FusedInput struct {
	DType DType
	Shape []int
}

// FusedNode is one op of a FusedProgram.
type FusedNode struct {
	// Kind is KindUnary, KindBinary, KindWhere, KindCast or KindFull.
	Kind Kind
	// Sub is the unary or binary op (as Op.Sub).
	Sub uint8
	// DType is the node's output dtype.
	DType DType
	// Args are the operands: one for KindUnary and KindCast, two for
	// KindBinary, three (condition, then, else) for KindWhere, none for
	// KindFull.
	Args [3]FusedRef
	// Value is KindFull's constant, converted to DType as Full converts
	// it.
	Value float64
}

// NumArgs is the number of operands n has.
func (n *FusedNode) NumArgs() int {
	switch n.Kind {
	case KindUnary, KindCast:
		return 1
	case KindBinary:
		return 2
	case KindWhere:
		return 3
	}
	return 0
}

// Name is the node's op name ("add", "exp", "where", "cast", "full").
func (n *FusedNode) Name() string {
	op := Op{Kind: n.Kind, Sub: n.Sub}
	return op.Name()
}

// FusedRef names an operand of a FusedNode: an input of the program
// (InputRef) or an earlier node (NodeRef).
type FusedRef int32

// InputRef refers to input i of the program.
func InputRef(i int) FusedRef { return FusedRef(-1 - i) }

// NodeRef refers to node i of the program.
func NodeRef(i int) FusedRef { return FusedRef(i) }

// IsInput reports whether r refers to an input.
func (r FusedRef) IsInput() bool { return r < 0 }

// Index is the input's or node's index.
func (r FusedRef) Index() int {
	if r < 0 {
		return int(-1 - r)
	}
	return int(r)
}

// Fusable reports whether k is a kind a FusedProgram may hold.
func Fusable(k Kind) bool {
	switch k {
	case KindUnary, KindBinary, KindWhere, KindCast, KindFull:
		return true
	}
	return false
}

// Signature describes p without its shapes: the node list and the input
// dtypes. Two programs of one signature differ only in their shapes, so
// a backend that generates code for a program (adding the input layouts
// it specializes on) can cache it by signature.
func (p *FusedProgram) Signature() string {
	var b strings.Builder
	for _, in := range p.Inputs {
		b.WriteString(in.DType.String())
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for i := range p.Nodes {
		n := &p.Nodes[i]
		b.WriteString(strconv.Itoa(int(n.Kind)))
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(int(n.Sub)))
		b.WriteByte('.')
		b.WriteString(n.DType.String())
		for a := range n.NumArgs() {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(int(n.Args[a])))
		}
		if n.Kind == KindFull {
			b.WriteByte('=')
			b.WriteString(strconv.FormatUint(math.Float64bits(n.Value), 16)) // exact, NaN payloads too
		}
		b.WriteByte(';')
	}
	b.WriteByte('|')
	for _, o := range p.Outputs {
		b.WriteString(strconv.Itoa(o))
		b.WriteByte(',')
	}
	return b.String()
}

// Validate checks that p is well formed: every node fusable with in-range
// operands that precede it, every input's shape broadcastable to Shape,
// outputs in range. It returns an error saying what is wrong.
func (p *FusedProgram) Validate() error {
	for i, in := range p.Inputs {
		if len(in.Shape) > len(p.Shape) {
			return errorf("fused program: input %d has rank %d, above the iteration rank %d", i, len(in.Shape), len(p.Shape))
		}
		off := len(p.Shape) - len(in.Shape)
		for a, d := range in.Shape {
			if d != 1 && d != p.Shape[off+a] {
				return errorf("fused program: input %d of shape %v does not broadcast to %v", i, in.Shape, p.Shape)
			}
		}
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if !Fusable(n.Kind) {
			return errorf("fused program: node %d has kind %v, not elementwise", i, n.Kind)
		}
		for a := range n.NumArgs() {
			r := n.Args[a]
			if r.IsInput() && r.Index() >= len(p.Inputs) || !r.IsInput() && r.Index() >= i {
				return errorf("fused program: node %d (%s) operand %d refers to %d", i, n.Name(), a, r)
			}
		}
	}
	if len(p.Outputs) == 0 {
		return errorf("fused program has no outputs")
	}
	for _, o := range p.Outputs {
		if o < 0 || o >= len(p.Nodes) {
			return errorf("fused program: output node %d out of range", o)
		}
	}
	return nil
}

// Run evaluates p op by op on e, the reference for backends that run
// programs in one pass, and the path for programs a backend declines:
// inputs are e's tensors matching p.Inputs; it returns one tensor of
// p.Shape per output (an output that is a constant, or computed from
// smaller inputs only, is an expanded view of its value).
func (p *FusedProgram) Run(e Executor, inputs []Tensor) []Tensor {
	vals := make([]Tensor, len(p.Nodes))
	arg := func(r FusedRef) Tensor {
		if r.IsInput() {
			return inputs[r.Index()]
		}
		return vals[r.Index()]
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		switch n.Kind {
		case KindFull:
			vals[i] = Scalar(e, n.DType, n.Value)
		case KindUnary:
			vals[i] = Unary(e, UnaryOp(n.Sub), arg(n.Args[0]))
		case KindBinary:
			vals[i] = Binary(e, BinaryOp(n.Sub), arg(n.Args[0]), arg(n.Args[1]))
		case KindWhere:
			vals[i] = Where(e, arg(n.Args[0]), arg(n.Args[1]), arg(n.Args[2]))
		case KindCast:
			vals[i] = Cast(e, arg(n.Args[0]), n.DType)
		}
	}
	outs := make([]Tensor, len(p.Outputs))
	for i, o := range p.Outputs {
		t := vals[o]
		if !slices.Equal(t.Shape(), p.Shape) {
			t = Expand(e, t, p.Shape) // a broadcast result (a view)
		}
		outs[i] = t
	}
	return outs
}
