package ember

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/capture"
	"github.com/emberml/ember/ir"
)

// CapturedGraph is the result of Device.CaptureScope: a backend-neutral,
// serializable list of ops over tensor ids (Burn's CapturedGraph). Unlike
// Burn's, it runs (Run, on any device) and goes through a file (WriteTo,
// ReadGraph). Its fields are those of the ir.Graph it wraps (Graph):
//
//   - Operations are the recorded ops in execution order, as ir.Records
//     (kind, sub-op, attributes, output shape and dtype, input and output
//     ids); drops are not recorded;
//   - Inputs are the declared inputs with the shapes and dtypes Run
//     expects, in declaration order;
//   - Outputs are the ids of the declared outputs, in order;
//   - Values are the data moved onto the capture device (parameters,
//     constants) that the ops use and that are not declared as inputs.
type CapturedGraph struct {
	Operations []ir.Record
	Inputs     []ir.GraphInput
	Outputs    []TensorID
	Values     map[TensorID]*TensorData
}

// graphFrom wraps an ir.Graph (sharing its slices and map).
func graphFrom(g *ir.Graph) *CapturedGraph {
	return &CapturedGraph{Operations: g.Ops, Inputs: g.Inputs, Outputs: g.Outputs, Values: g.Values}
}

// Graph returns the graph as an ir.Graph sharing g's slices and map (the
// form ir.MarshalGraph encodes and ir.Graph.Validate checks).
func (g *CapturedGraph) Graph() *ir.Graph {
	return &ir.Graph{Inputs: g.Inputs, Values: g.Values, Ops: g.Operations, Outputs: g.Outputs}
}

// Run replays the graph on dev with the given inputs, one per graph input
// in order, each of that input's shape and dtype and on dev's hardware
// (autodiff or not), and returns the outputs in order, on dev.
//
// Each op goes through the same path as a user's call on dev: it is
// inferred and validated, checked against the device's memory, lowered
// where dev lacks a kernel, and recorded by autodiff on an autodiff dev
// (so a replay with tracked inputs is differentiable). The values are
// moved onto dev first; random ops sample from dev's generator
// (Device.Seed). Index tensors of gather, scatter-add and index-select
// are bounds-checked and integer divisors checked for zero as the
// corresponding Tensor methods do. Intermediate results are released
// after their last use. The results equal eager execution of the same ops
// on dev.
//
// Run never panics on a malformed graph: it returns an error wrapping
// ErrInvalidGraph when the graph does not validate, an *Error when the
// inputs do not match it, dev's *DeviceError when dev cannot run, and,
// when an op fails, an error naming the op's index and name that wraps
// the op's own error (an *Error, ErrOutOfMemory, ...).
func (g *CapturedGraph) Run(dev Device, inputs ...*Tensor) (outputs []*Tensor, err error) {
	if g == nil {
		return nil, &Error{Op: "graph_run", Msg: "nil *CapturedGraph"}
	}
	if err := dev.Init(); err != nil {
		return nil, err
	}
	ig := g.Graph()
	if err := ig.Validate(); err != nil {
		return nil, fmt.Errorf("ember: graph_run on %v: %w", dev, err)
	}
	if err := g.checkInputs(dev, inputs); err != nil {
		return nil, err
	}
	env := make(map[TensorID]*Tensor, len(g.Inputs)+len(g.Values)+len(g.Operations))
	for i, in := range g.Inputs {
		env[in.ID] = inputs[i]
	}
	for _, id := range slices.Sorted(maps.Keys(g.Values)) {
		var v *Tensor
		if err := recoverError(func() { v = FromData(g.Values[id], dev) }); err != nil {
			return nil, fmt.Errorf("ember: graph_run on %v: moving value %d onto the device: %w", dev, id, err)
		}
		env[id] = v
	}
	// last[id] is the index of the last op reading id; outputs stay.
	last := make(map[TensorID]int, len(env)+len(g.Operations))
	for i := range g.Operations {
		for _, id := range g.Operations[i].Inputs {
			last[id] = i
		}
	}
	for _, id := range g.Outputs {
		last[id] = len(g.Operations)
	}
	for i := range g.Operations {
		r := &g.Operations[i]
		outs, err := replayOp(dev, i, r, env)
		if err != nil {
			return nil, err
		}
		for j, id := range r.Outputs {
			if id == 0 {
				continue
			}
			if outs[j] == nil {
				return nil, fmt.Errorf("ember: graph_run on %v: op %d (%s): %w: output %d (tensor %d) was not produced",
					dev, i, r.Kind, ErrInvalidGraph, j, id)
			}
			env[id] = wrap(dev, outs[j])
		}
		for _, id := range r.Inputs {
			if last[id] == i {
				delete(env, id)
			}
		}
		for _, id := range r.Outputs {
			if _, used := last[id]; !used {
				delete(env, id) // never read and not an output
			}
		}
	}
	outputs = make([]*Tensor, len(g.Outputs))
	for i, id := range g.Outputs {
		outputs[i] = env[id]
	}
	return outputs, nil
}

// checkInputs returns an *Error unless inputs match g's inputs: their
// number, and each one's presence, device, shape and dtype.
func (g *CapturedGraph) checkInputs(dev Device, inputs []*Tensor) error {
	if len(inputs) != len(g.Inputs) {
		return &Error{Op: "graph_run", Operands: []string{dev.String()},
			Msg: fmt.Sprintf("got %d inputs, the graph takes %d", len(inputs), len(g.Inputs))}
	}
	for i, in := range g.Inputs {
		x := inputs[i]
		name := fmt.Sprintf("input %d (tensor %d)", i, in.ID)
		if x == nil || x.t == nil {
			return nilError("graph_run", []string{name}, []*Tensor{x}, 0)
		}
		switch {
		case !x.dev.Equal(dev):
			return &Error{Op: "graph_run", Operands: []string{describe(name, x)},
				Msg: fmt.Sprintf("the input must be on %v; move it with ToDevice first", dev)}
		case x.DType() != in.DType || !slices.Equal(x.shape(), in.Shape):
			return &Error{Op: "graph_run", Operands: []string{describe(name, x)},
				Msg: fmt.Sprintf("the graph takes %v %v there", in.Shape, in.DType)}
		}
	}
	return nil
}

// replayOp runs record r (op i of a validated graph) on dev with its
// inputs from env, returning its outputs or the error of the op.
func replayOp(dev Device, i int, r *ir.Record, env map[TensorID]*Tensor) (ir.Outputs, error) {
	xs := make([]*Tensor, len(r.Inputs))
	for k, id := range r.Inputs {
		if id != 0 {
			xs[k] = env[id]
		}
	}
	return runRecord(dev, "graph_run", i, r, xs, func(id TensorID) (ir.Tensor, bool) {
		x, ok := env[id]
		if !ok {
			return nil, false
		}
		return x.on(dev), true
	})
}

// runRecord runs record r (op i of a validated graph) on dev, its input
// tensors xs (nil for an absent one) and lookup giving them to Decode,
// through the same path as a user's call (with checkReplayData's checks),
// and returns its outputs or the op's error, prefixed with what ran it
// ("graph_run", "compiled_run").
func runRecord(dev Device, what string, i int, r *ir.Record, xs []*Tensor, lookup func(TensorID) (ir.Tensor, bool)) (outs ir.Outputs, err error) {
	op, derr := r.Decode(lookup)
	if derr != nil {
		return outs, fmt.Errorf("ember: %s on %v: op %d (%s): %w: %w", what, dev, i, r.Kind, ErrInvalidGraph, derr)
	}
	op.Shape = slices.Clone(op.Shape)
	op.Ints = slices.Clone(op.Ints)
	err = recoverError(func() {
		checkReplayData(dev, &op, xs)
		outs = dev.runAll(op, xs...)
	})
	if err != nil {
		return outs, fmt.Errorf("ember: %s on %v: op %d (%s): %w", what, dev, i, op.Name(), err)
	}
	return outs, nil
}

// checkReplayData makes the data checks that the Tensor methods make
// before they build these ops, panicking with the same *Errors: the
// indices of gather, scatter-add and index-select and integer divisors,
// each unless dev checks them itself. A capture device, which computes
// nothing, is not checked.
func checkReplayData(dev Device, op *ir.Op, xs []*Tensor) {
	if _, ok := backend.As[*capture.Backend](dev.backend()); ok {
		return
	}
	switch op.Kind {
	case ir.KindGather, ir.KindScatterAdd, ir.KindIndexSelect:
		x, index := xs[0], xs[1]
		x.checkBounds(op.Name(), index, x.shape()[op.Axis])
	case ir.KindBinary:
		switch ir.BinaryOp(op.Sub) {
		case ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod:
			x, y := xs[0], xs[1]
			if !y.DType().IsInt() {
				return
			}
			checkDivisor(dev, op.Name(), x, y)
		}
	}
}

// recoverError runs f and returns what it panicked with as an error (any
// panic, Go runtime errors included: a graph from a file must never crash
// the program that runs it), or nil.
func recoverError(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = errors.New(fmt.Sprint(r))
			}
		}
	}()
	f()
	return nil
}
