package ir

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrInvalidGraph is wrapped by Graph.Validate's errors.
var ErrInvalidGraph = errors.New("ir: invalid graph")

// Graph is a computation as data: ops over tensor ids, in an order in
// which every op's inputs are defined before it. A tensor id is defined
// once, as a graph input, a constant in Values or an output of an op.
// Graphs are what capture records and what replays on any device; they
// encode with MarshalGraph, as a CBOR map with the keys 1 (Inputs) to 4
// (Outputs) in field order.
type Graph struct {
	// Inputs are the tensors the caller supplies, with the shapes and
	// dtypes the graph was built for.
	Inputs []GraphInput
	// Values are the constants the graph holds, by id.
	Values map[TensorID]*TensorData
	// Ops are the records of the graph's ops in execution order.
	Ops []Record
	// Outputs are the ids of the graph's results.
	Outputs []TensorID
}

// GraphInput is a graph input: its id, shape and dtype.
type GraphInput struct {
	// ID is the input's tensor id (not 0).
	ID TensorID
	// Shape and DType are those of the tensor the caller supplies.
	Shape []int
	DType DType
}

// Ref returns the placeholder tensor of the input.
func (in GraphInput) Ref() *Ref { return NewRef(in.ID, in.Shape, in.DType) }

// check validates the graph's inputs and constants structurally (the ops
// are checked when decoded).
func (g *Graph) check() error {
	for i, in := range g.Inputs {
		switch {
		case in.ID == 0:
			return fmt.Errorf("input %d has the reserved id 0", i)
		case !in.DType.Valid():
			return fmt.Errorf("input %d (tensor %d): invalid dtype %d", i, in.ID, in.DType)
		}
		if err := checkEncodedShape(in.Shape); err != nil {
			return fmt.Errorf("input %d (tensor %d): %v", i, in.ID, err)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.Values)) {
		d := g.Values[id]
		switch {
		case id == 0:
			return fmt.Errorf("a constant has the reserved id 0")
		case d == nil:
			return fmt.Errorf("constant %d is nil", id)
		}
		if err := checkData(d.Shape, d.DType, d.Bytes); err != nil {
			return fmt.Errorf("constant %d: %v", id, err)
		}
	}
	return nil
}

// Validate replays the graph symbolically: the inputs and constants are
// known tensors; each op's inputs must be known, the op (decoded with
// Refs) must pass its kind's Infer with the recorded output shape and
// dtype, and its outputs, which must be new ids, become known; the
// graph's outputs must be known. Every output of a multi-output kind
// (AdamStep, SGDStep) has the shape and dtype of output 0. Validate needs
// nothing but the graph; it returns an error wrapping ErrInvalidGraph
// that names the first op or tensor at fault.
func (g *Graph) Validate() error {
	if err := g.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidGraph, err)
	}
	known := make(map[TensorID]*Ref, len(g.Inputs)+len(g.Values)+len(g.Ops))
	for i, in := range g.Inputs {
		if _, dup := known[in.ID]; dup {
			return fmt.Errorf("%w: input %d: tensor %d is defined twice", ErrInvalidGraph, i, in.ID)
		}
		known[in.ID] = in.Ref()
	}
	for _, id := range slices.Sorted(maps.Keys(g.Values)) {
		if _, dup := known[id]; dup {
			return fmt.Errorf("%w: constant %d is also an input", ErrInvalidGraph, id)
		}
		d := g.Values[id]
		known[id] = NewRef(id, d.Shape, d.DType)
	}
	lookup := func(id TensorID) (Tensor, bool) {
		r, ok := known[id]
		if !ok {
			return nil, false
		}
		return r, true
	}
	for i := range g.Ops {
		r := &g.Ops[i]
		if err := r.check(); err != nil {
			return fmt.Errorf("%w: op %d: %v", ErrInvalidGraph, i, err)
		}
		op, bad := r.decode(lookup)
		if bad >= 0 {
			return fmt.Errorf("%w: op %d (%s): input %d (%s): tensor %d is not defined",
				ErrInvalidGraph, i, op.Name(), bad, operandName(r.Kind, bad), r.Inputs[bad])
		}
		if err := op.Infer(); err != nil {
			return fmt.Errorf("%w: op %d (%s): %w", ErrInvalidGraph, i, op.Name(), err)
		}
		if !slices.Equal(op.Shape, r.Shape) || op.DType != r.DType {
			return fmt.Errorf("%w: op %d (%s): recorded output %v %v, inferred %v %v",
				ErrInvalidGraph, i, op.Name(), r.Shape, r.DType, op.Shape, op.DType)
		}
		for j, id := range r.Outputs {
			if id == 0 {
				continue
			}
			if _, dup := known[id]; dup {
				return fmt.Errorf("%w: op %d (%s): output %d: tensor %d is defined twice", ErrInvalidGraph, i, op.Name(), j, id)
			}
			shape, dt := outputType(&op, j)
			known[id] = NewRef(id, shape, dt)
		}
	}
	for i, id := range g.Outputs {
		if _, ok := known[id]; !ok {
			return fmt.Errorf("%w: output %d: tensor %d is not defined", ErrInvalidGraph, i, id)
		}
	}
	return nil
}

// outputType is the shape and dtype of output j of an inferred op: those
// of output 0 for every kind so far (AdamStep's param, m and v; SGDStep's
// param and momentum buffer).
func outputType(op *Op, j int) ([]int, DType) { return op.Shape, op.DType }

// wireGraph is the encoded form of Graph.
type wireGraph struct {
	Inputs  []wireInput            `cbor:"1,keyasint,omitzero"`
	Values  map[TensorID]*wireData `cbor:"2,keyasint,omitzero"`
	Ops     []wireRecord           `cbor:"3,keyasint,omitzero"`
	Outputs []TensorID             `cbor:"4,keyasint,omitzero"`
}

// wireInput is GraphInput with keys (convertible to and from it).
type wireInput struct {
	ID    TensorID `cbor:"1,keyasint,omitzero"`
	Shape []int    `cbor:"2,keyasint,omitzero"`
	DType DType    `cbor:"3,keyasint,omitzero"`
}

// toWireGraph checks g structurally and returns its encoded form.
func toWireGraph(g *Graph) (*wireGraph, error) {
	if err := g.check(); err != nil {
		return nil, formatError("graph: %v", err)
	}
	w := &wireGraph{Outputs: g.Outputs}
	if g.Inputs != nil {
		w.Inputs = make([]wireInput, len(g.Inputs))
		for i, in := range g.Inputs {
			w.Inputs[i] = wireInput(in)
		}
	}
	if g.Values != nil {
		w.Values = make(map[TensorID]*wireData, len(g.Values))
		for id, d := range g.Values {
			w.Values[id] = (*wireData)(d)
		}
	}
	if g.Ops != nil {
		w.Ops = make([]wireRecord, len(g.Ops))
		for i := range g.Ops {
			r, err := toWireRecord(&g.Ops[i])
			if err != nil {
				return nil, formatError("graph: op %d: %v", i, err)
			}
			w.Ops[i] = *r
		}
	}
	return w, nil
}

// graph returns the structurally checked graph w encodes.
func (w *wireGraph) graph() (*Graph, error) {
	g := &Graph{Outputs: w.Outputs}
	if w.Inputs != nil {
		g.Inputs = make([]GraphInput, len(w.Inputs))
		for i, in := range w.Inputs {
			g.Inputs[i] = GraphInput(in)
		}
	}
	if w.Values != nil {
		g.Values = make(map[TensorID]*TensorData, len(w.Values))
		for id, d := range w.Values {
			g.Values[id] = (*TensorData)(d)
		}
	}
	if w.Ops != nil {
		g.Ops = make([]Record, len(w.Ops))
		for i := range w.Ops {
			r, err := w.Ops[i].record()
			if err != nil {
				return nil, formatError("graph: op %d: %v", i, err)
			}
			g.Ops[i] = r
		}
	}
	if err := g.check(); err != nil {
		return nil, formatError("graph: %v", err)
	}
	return g, nil
}

// MarshalGraph encodes g with its format version. It fails for a graph
// whose inputs, constants or records are structurally invalid (it does
// not call Validate).
func MarshalGraph(g *Graph) ([]byte, error) {
	if g == nil {
		return nil, formatError("graph: nil")
	}
	w, err := toWireGraph(g)
	if err != nil {
		return nil, err
	}
	return marshal(typeGraph, w)
}

// UnmarshalGraph decodes a graph encoded by MarshalGraph and checks it
// structurally; call Validate before running it. Errors wrap ErrFormat,
// or ErrVersion for another format version.
func UnmarshalGraph(data []byte) (*Graph, error) {
	var w wireGraph
	if err := unmarshal(data, typeGraph, &w); err != nil {
		return nil, err
	}
	return w.graph()
}

// MarshalCBOR encodes g without an envelope (cbor.Marshaler), for
// messages that embed graphs and carry their own version. It fails for a
// graph whose inputs, constants or records are structurally invalid.
func (g Graph) MarshalCBOR() ([]byte, error) {
	w, err := toWireGraph(&g)
	if err != nil {
		return nil, err
	}
	return encMode.Marshal(w)
}

// UnmarshalCBOR decodes a graph encoded by MarshalCBOR and checks it
// structurally (cbor.Unmarshaler); Validate checks that its ops fit
// together.
func (g *Graph) UnmarshalCBOR(data []byte) error {
	var w wireGraph
	if err := decMode.Unmarshal(data, &w); err != nil {
		return formatError("graph: %v", err)
	}
	v, err := w.graph()
	if err != nil {
		return err
	}
	*g = *v
	return nil
}
