package capture

import (
	"fmt"
	"slices"

	"github.com/emberml/ember/ir"
)

// Scope is one recording on a capture backend: the ops Exec received
// between Begin and Complete (or Close), in order, as ir.Records over
// tensor ids. At most one scope is open per backend; ops from any
// goroutine are recorded in it.
type Scope struct {
	b *Backend

	// The fields below are guarded by b.mu.

	ops []ir.Record
	// produced maps each tensor an op of the scope produced to the op's
	// index.
	produced map[ir.TensorID]int
	// ext describes the tensors that ops of the scope used without
	// producing them (inputs and values), in the order of first use.
	ext      map[ir.TensorID]extUse
	extOrder []ir.TensorID
	// dropped holds the produced tensors whose handles became
	// unreachable.
	dropped map[ir.TensorID]bool
	// closed is set by Complete and Close.
	closed bool
}

// extUse is a tensor a scope used without producing it.
type extUse struct {
	info
	// op and name are the index and name of the first op that used it.
	op   int
	name string
}

// Begin opens a scope. It fails with ErrAlreadyActive while another scope
// of the backend is open, whichever goroutine opened it.
func (b *Backend) Begin() (*Scope, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.scope != nil {
		return nil, ErrAlreadyActive
	}
	s := &Scope{
		b:        b,
		produced: map[ir.TensorID]int{},
		ext:      map[ir.TensorID]extUse{},
		dropped:  map[ir.TensorID]bool{},
	}
	b.scope = s
	return s, nil
}

// Close closes the scope without a graph (what is recorded is discarded);
// closing a closed scope does nothing. Ops that reach the backend
// afterwards panic with ErrNoScope.
func (s *Scope) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.closeLocked()
}

// closeLocked closes the scope; the caller holds b.mu.
func (s *Scope) closeLocked() {
	s.closed = true
	if s.b.scope == s {
		s.b.scope = nil
	}
}

// Closed reports whether Complete or Close has closed the scope.
func (s *Scope) Closed() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.closed
}

// Len is the number of ops recorded so far.
func (s *Scope) Len() int {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return len(s.ops)
}

// record appends op to the scope and returns its output handles; the
// caller holds b.mu and has checked op's kind.
func (s *Scope) record(op *ir.Op) ir.Outputs {
	b := s.b
	idx := len(s.ops)
	name := op.Name()
	n := op.NumInputs()
	var ins []ir.TensorID
	if n > 0 {
		ins = make([]ir.TensorID, n)
	}
	spec := ir.SpecOf(op.Kind)
	for i := range n {
		x := op.Input(i)
		if x == nil {
			continue // an absent optional input
		}
		t, ok := x.(*Tensor)
		if !ok || t.b != b {
			operand := fmt.Sprintf("input %d", i)
			if i < len(spec.Operands) {
				operand += " (" + spec.Operands[i] + ")"
			}
			panic(&ScopeError{Op: name, Device: b.name, Detail: fmt.Sprintf("%s %v %v", operand, x.Shape(), x.DType()), Err: ErrForeignTensor})
		}
		ins[i] = t.id
		if _, inside := s.produced[t.id]; !inside {
			if _, seen := s.ext[t.id]; !seen {
				s.ext[t.id] = extUse{info: info{shape: t.shape, dtype: t.dtype, value: t.value}, op: idx, name: name}
				s.extOrder = append(s.extOrder, t.id)
			}
		}
	}
	shape := slices.Clone(op.Shape)
	if shape == nil {
		shape = []int{}
	}
	outIDs := make([]ir.TensorID, spec.NumOutputs)
	var outs ir.Outputs
	for j := range outIDs {
		if !kept(op, j) {
			continue
		}
		t := b.newTensor(shape, op.DType, nil)
		outIDs[j] = t.id
		outs[j] = t
		s.produced[t.id] = idx
	}
	r := ir.Record{
		Kind: op.Kind, Sub: op.Sub, DType: op.DType, KeepDim: op.KeepDim, Axis: op.Axis,
		Shape: slices.Clone(shape), Scalars: op.Scalars, Ints: slices.Clone(op.Ints),
		Inputs: ins, Outputs: outIDs,
	}
	if op.Attrs != nil {
		a := *op.Attrs
		a.Ranges = slices.Clone(a.Ranges)
		r.Attrs = &a
	}
	s.ops = append(s.ops, r)
	return outs
}

// kept reports whether output j of op exists: every output, except
// SGDStep's momentum buffer without momentum (its decomposition returns
// none, so neither does the recorder).
func kept(op *ir.Op, j int) bool {
	if op.Kind == ir.KindSGDStep && j == 1 {
		return op.Attrs != nil && op.Attrs.Optim.Momentum != 0
	}
	return true
}

// Complete closes the scope and returns its graph: the recorded ops, the
// declared inputs (with their shapes and dtypes), the values the ops used
// that are not declared inputs, and the declared outputs. Whatever the
// result, the scope is closed when Complete returns.
//
// It returns a *BoundaryError wrapping
//   - ErrDuplicateBoundary for an id listed twice among the inputs or
//     among the outputs;
//   - ErrUnknownTensor for an id the backend does not know (0, never
//     issued, or a tensor dropped before the scope used it);
//   - ErrInputProduced for an input that an op of the scope produced;
//   - ErrOutputDropped for an output whose handle became unreachable
//     before Complete;
//   - ErrOutputNotProduced for an output that no op of the scope produced
//     (a value, an input, a tensor of an earlier scope);
//   - ErrUndeclaredInput for a tensor an op used that is neither declared,
//     nor produced in the scope, nor a value (a result of an earlier
//     scope), naming that op.
//
// Inputs are checked first, in order, then outputs, then undeclared
// inputs in the order the ops first used them; the first fault is
// reported. Tensors are immutable and no op consumes its input in place,
// so no output can have been consumed. Complete on a closed scope returns
// an error wrapping ErrNoScope.
func (s *Scope) Complete(inputs, outputs []ir.TensorID) (*ir.Graph, error) {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("capture: complete on %s: %w (the scope was already completed)", b.name, ErrNoScope)
	}
	s.closeLocked()
	g := &ir.Graph{Ops: s.ops}
	bad := func(boundary string, i int, id ir.TensorID, sentinel error) *BoundaryError {
		e := &BoundaryError{Boundary: boundary, Index: i, ID: id, Err: sentinel}
		if inf, ok := s.describe(id); ok {
			e.Shape, e.DType = inf.shape, inf.dtype
		}
		return e
	}
	declared := make(map[ir.TensorID]int, len(inputs))
	for i, id := range inputs {
		if _, dup := declared[id]; dup {
			return nil, bad("input", i, id, ErrDuplicateBoundary)
		}
		if _, ok := s.produced[id]; ok {
			return nil, bad("input", i, id, ErrInputProduced)
		}
		inf, ok := s.describe(id)
		if !ok {
			return nil, bad("input", i, id, ErrUnknownTensor)
		}
		declared[id] = i
		g.Inputs = append(g.Inputs, ir.GraphInput{ID: id, Shape: slices.Clone(inf.shape), DType: inf.dtype})
	}
	seen := make(map[ir.TensorID]bool, len(outputs))
	for i, id := range outputs {
		if seen[id] {
			return nil, bad("output", i, id, ErrDuplicateBoundary)
		}
		seen[id] = true
		if _, ok := s.produced[id]; ok {
			if s.dropped[id] {
				return nil, bad("output", i, id, ErrOutputDropped)
			}
			continue
		}
		if _, ok := s.describe(id); ok {
			return nil, bad("output", i, id, ErrOutputNotProduced)
		}
		return nil, bad("output", i, id, ErrUnknownTensor)
	}
	g.Outputs = slices.Clone(outputs)
	for _, id := range s.extOrder {
		if _, ok := declared[id]; ok {
			continue
		}
		u := s.ext[id]
		if u.value == nil {
			e := bad("input", -1, id, ErrUndeclaredInput)
			e.Op = fmt.Sprintf("op %d (%s)", u.op, u.name)
			return nil, e
		}
		if g.Values == nil {
			g.Values = map[ir.TensorID]*ir.TensorData{}
		}
		g.Values[id] = cloneData(u.value)
	}
	if err := g.Validate(); err != nil {
		// Every recorded op was inferred by its caller, so this is a
		// caller that bypassed inference.
		return nil, fmt.Errorf("capture: complete on %s: the recorded graph does not validate: %w", b.name, err)
	}
	return g, nil
}

// describe returns what the scope or the backend knows of tensor id: a
// tensor the scope used or produced, or any live tensor of the backend.
// The caller holds b.mu.
func (s *Scope) describe(id ir.TensorID) (info, bool) {
	if u, ok := s.ext[id]; ok {
		return u.info, true
	}
	if i, ok := s.produced[id]; ok {
		r := &s.ops[i]
		return info{shape: r.Shape, dtype: r.DType}, true
	}
	inf, ok := s.b.live[id]
	return inf, ok
}
