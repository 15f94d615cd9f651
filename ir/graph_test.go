package ir

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// graphBuilder records ops inferred on Refs into a Graph.
type graphBuilder struct {
	t    testing.TB
	g    Graph
	next TensorID
}

func (b *graphBuilder) id() TensorID {
	b.next++
	return b.next
}

func (b *graphBuilder) input(shape []int, dt DType) *Ref {
	in := GraphInput{ID: b.id(), Shape: shape, DType: dt}
	b.g.Inputs = append(b.g.Inputs, in)
	return in.Ref()
}

func (b *graphBuilder) constant(d *TensorData) *Ref {
	id := b.id()
	if b.g.Values == nil {
		b.g.Values = map[TensorID]*TensorData{}
	}
	b.g.Values[id] = d
	return NewRef(id, d.Shape, d.DType)
}

// op infers op and records it; it returns its outputs (nil for those
// listed in drop).
func (b *graphBuilder) op(op Op, drop ...int) []*Ref {
	b.t.Helper()
	if err := op.Infer(); err != nil {
		b.t.Fatalf("%s: %v", op.Name(), err)
	}
	n := SpecOf(op.Kind).NumOutputs
	outs := make([]TensorID, n)
	refs := make([]*Ref, n)
	for j := range outs {
		if j > 0 && len(drop) > 0 && drop[0] == j {
			drop = drop[1:]
			continue
		}
		outs[j] = b.id()
		refs[j] = NewRef(outs[j], op.Shape, op.DType)
	}
	b.g.Ops = append(b.g.Ops, Encode(op, refID, outs))
	return refs
}

// testGraph is relu(x·w + bias) summed over axis 1, plus one SGD step of
// w without a momentum buffer and one Adam step (three outputs).
func testGraph(t testing.TB) *Graph {
	b := &graphBuilder{t: t}
	x := b.input([]int{2, 3}, F32)
	w := b.input([]int{3, 4}, F32)
	gw := b.input([]int{3, 4}, F32)
	bias := b.constant(FromSlice([]float32{0.5, -1, 2, 0}, []int{4}))
	mm := b.op(Op{Kind: KindMatmul, In: [3]Tensor{x, w}})[0]
	a := b.op(Op{Kind: KindBinary, Sub: uint8(OpAdd), In: [3]Tensor{mm, bias}})[0]
	zero := b.op(Op{Kind: KindFull, Shape: []int{}, DType: F32})[0]
	pos := b.op(Op{Kind: KindBinary, Sub: uint8(OpGt), In: [3]Tensor{a, zero}})[0]
	relu := b.op(Op{Kind: KindWhere, In: [3]Tensor{pos, a, zero}})[0]
	sum := b.op(Op{Kind: KindReduce, Sub: uint8(ReduceSum), Axis: 1, In: [3]Tensor{relu}})[0]
	sgd := b.op(Op{Kind: KindSGDStep, Attrs: &Attrs{Optim: OptimUpdate{LR: 0.1}}, In: [3]Tensor{w, gw, nil}}, 1)
	m := b.op(Op{Kind: KindFull, Shape: []int{3, 4}, DType: F32})[0]
	adam := b.op(Op{Kind: KindAdamStep, Attrs: &Attrs{Optim: OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1}},
		Xs: []Tensor{sgd[0], gw, m, m}})
	b.g.Outputs = []TensorID{sum.ID(), sgd[0].ID(), adam[0].ID(), adam[2].ID()}
	return &b.g
}

func TestGraphRoundTripAndValidate(t *testing.T) {
	g := testGraph(t)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := g.Ops[5].Shape; len(got) != 1 || got[0] != 2 {
		t.Fatalf("sum has shape %v", got)
	}
	if in := g.Ops[6].Inputs; len(in) != 3 || in[2] != 0 {
		t.Fatalf("SGD step inputs %v: the absent buffer is not id 0", in)
	}
	b, err := MarshalGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalGraph(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bitsEqual(g, got) {
		t.Fatalf("graph changed:\n got %+v\nwant %+v", got, g)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	b2, err := MarshalGraph(got)
	if err != nil || string(b) != string(b2) {
		t.Fatalf("re-encoding differs (%v)", err)
	}
}

func TestGraphValidateRejects(t *testing.T) {
	cases := []struct {
		name string
		mod  func(g *Graph)
		want string
	}{
		{"unknown input", func(g *Graph) { g.Ops[1].Inputs[0] = 999 }, "op 1 (add): input 0 (lhs): tensor 999 is not defined"},
		{"use before definition", func(g *Graph) { g.Ops[0], g.Ops[1] = g.Ops[1], g.Ops[0] }, "op 0 (add): input 0 (lhs): tensor 5 is not defined"},
		{"shape mismatch", func(g *Graph) { g.Ops[1].Shape = []int{2, 5} }, "op 1 (add): recorded output [2 5] f32, inferred [2 4] f32"},
		{"dtype mismatch", func(g *Graph) { g.Ops[3].DType = F32 }, "op 3 (gt): recorded output [2 4] f32, inferred [2 4] bool"},
		{"given shape wrong", func(g *Graph) { g.Inputs[0].Shape = []int{2, 5} }, "op 0 (matmul): inner dimensions differ"},
		{"unknown output", func(g *Graph) { g.Outputs = append(g.Outputs, 12345) }, "output 4: tensor 12345 is not defined"},
		{"dropped output", func(g *Graph) { g.Outputs = append(g.Outputs, 0) }, "output 4: tensor 0 is not defined"},
		{"redefined", func(g *Graph) { g.Ops[2].Outputs[0] = 1 }, "op 2 (full): output 0: tensor 1 is defined twice"},
		{"input twice", func(g *Graph) { g.Inputs[1].ID = 1 }, "input 1: tensor 1 is defined twice"},
		{"constant is input", func(g *Graph) { g.Values[1] = g.Values[4] }, "constant 1 is also an input"},
		{"input id 0", func(g *Graph) { g.Inputs[0].ID = 0 }, "input 0 has the reserved id 0"},
		{"input dtype", func(g *Graph) { g.Inputs[0].DType = 0 }, "input 0 (tensor 1): invalid dtype 0"},
		{"input shape", func(g *Graph) { g.Inputs[0].Shape = []int{-1} }, "negative size"},
		{"nil constant", func(g *Graph) { g.Values[4] = nil }, "constant 4 is nil"},
		{"bad constant", func(g *Graph) { g.Values[4] = &TensorData{Shape: []int{4}, DType: F32} }, "constant 4: tensor data: shape [4] of f32 needs 16 bytes, got 0"},
		{"constant id 0", func(g *Graph) { g.Values[0] = g.Values[4] }, "reserved id 0"},
		{"invalid record", func(g *Graph) { g.Ops[1].Kind = 0 }, "op 1: op: unknown kind 0"},
		{"missing required input", func(g *Graph) { g.Ops[1].Inputs[1] = 0 }, "op 1 (add): input 1 is missing"},
		{"infer fails", func(g *Graph) { g.Ops[5].Axis = 7 }, "op 5 (sum): axis 7 is out of range for rank 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGraph(t)
			c.mod(g)
			err := g.Validate()
			if !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("Validate: %v, want an error wrapping ErrInvalidGraph", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %q does not say %q", err, c.want)
			}
		})
	}
}

func TestGraphMarshalRejects(t *testing.T) {
	if _, err := MarshalGraph(nil); !errors.Is(err, ErrFormat) {
		t.Errorf("MarshalGraph(nil): %v", err)
	}
	g := testGraph(t)
	g.Values[4] = nil
	if _, err := MarshalGraph(g); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "constant 4 is nil") {
		t.Errorf("MarshalGraph with a nil constant: %v", err)
	}
	g = testGraph(t)
	g.Ops[0].Outputs = nil
	if _, err := MarshalGraph(g); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "0 output ids") {
		t.Errorf("MarshalGraph with an invalid record: %v", err)
	}
	// Decoding checks structure: a null constant, a bad record.
	cases := []struct {
		name    string
		payload any
		want    string
	}{
		{"null constant", map[int]any{2: map[int]any{4: nil}}, "constant 4 is nil"},
		{"bad constant", map[int]any{2: map[int]any{4: map[int]any{1: []int{2}, 2: 2}}}, "needs 8 bytes, got 0"},
		{"bad input", map[int]any{1: []any{map[int]any{1: 1, 3: 99}}}, "invalid dtype 99"},
		{"bad record", map[int]any{3: []any{map[int]any{1: 5}}}, "invalid sub-op 0"},
		{"unknown field", map[int]any{5: 1}, "unknown field"},
	}
	for _, c := range cases {
		_, err := UnmarshalGraph(rawEnvelope(t, 1, typeGraph, c.payload))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: UnmarshalGraph: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	_, err := UnmarshalGraph(rawEnvelope(t, 7, typeGraph, map[int]any{}))
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "graph encoded in format version 7, this build reads version 1") {
		t.Errorf("UnmarshalGraph of version 7: %v", err)
	}
}

// TestValidateRandomOps validates one-op graphs of every kind whose
// attributes and inputs are random (often alike, so that inference gets
// past its first checks): Validate and Infer must return, never panic,
// and an op that infers has a valid output.
func TestValidateRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range Kinds() {
		for i := range 3000 {
			c := randomOp(rng, k)
			if rng.IntN(2) == 0 {
				// Inputs alike: one shape and dtype, small attributes.
				shape := randomShape(rng)
				dt := randomDType(rng)
				if rng.IntN(2) == 0 {
					shape = []int{1 + rng.IntN(3), 1 + rng.IntN(3), 1 + rng.IntN(5), 1 + rng.IntN(5)}
				}
				for id := range c.refs {
					c.refs[id] = NewRef(id, shape, dt)
				}
				for j := range c.op.Ints {
					c.op.Ints[j] = rng.IntN(4)
				}
				c.op.Axis = rng.IntN(4)
				if c.op.Attrs != nil {
					smallAttrs(rng, shape, c.op.Attrs)
				}
				if rng.IntN(2) == 0 {
					c.op.Shape = shape
				}
			}
			g := &Graph{}
			for id, r := range c.refs {
				g.Inputs = append(g.Inputs, GraphInput{ID: id, Shape: r.Shape(), DType: r.DType()})
			}
			rec := Encode(c.op, refID, c.outs)
			op, err := rec.Decode(c.lookup)
			if err != nil {
				t.Fatalf("%v #%d: Decode: %v", k, i, err)
			}
			if op.Infer() == nil {
				if err := CheckShape(op.Shape); err != nil || !op.DType.Valid() {
					t.Fatalf("%v #%d: inferred an invalid output %v %v", k, i, op.Shape, op.DType)
				}
				rec.Shape, rec.DType = op.Shape, op.DType
			}
			g.Ops = []Record{rec}
			_ = g.Validate()
		}
	}
}

// smallAttrs sets a's options to small plausible values and its ranges to
// clamped ranges of shape.
func smallAttrs(rng *rand.Rand, shape []int, a *Attrs) {
	for i := range 2 {
		a.Conv.Stride[i], a.Conv.Padding[i], a.Conv.Dilation[i] = 1+rng.IntN(2), rng.IntN(2), 1+rng.IntN(2)
		a.Conv.OutputPadding[i] = rng.IntN(2)
		a.Pool.Kernel[i], a.Pool.Stride[i], a.Pool.Padding[i], a.Pool.Dilation[i] = 1+rng.IntN(3), 1+rng.IntN(2), rng.IntN(2), 1+rng.IntN(2)
	}
	a.Conv.Groups = 1 + rng.IntN(2)
	a.Optim.Step = 1 + rng.IntN(3)
	a.Ranges = FullRanges(shape)
	for i := range a.Ranges {
		a.Ranges[i].Start = rng.IntN(shape[i] + 1)
		a.Ranges[i].Step = 1 + rng.IntN(2)
	}
}
