package capture

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

func newTestBackend(t *testing.T) *Backend {
	t.Helper()
	b, err := Driver{}.Open(backend.DeviceID{Type: "capture", Index: 7})
	if err != nil {
		t.Fatal(err)
	}
	return b.(*Backend)
}

// panicValue runs f and returns what it panicked with.
func panicValue(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// replay runs graph g on flex with the given inputs (by position) through
// ir.Run and returns its outputs' data.
func replay(t *testing.T, g *ir.Graph, inputs ...*ir.TensorData) []*ir.TensorData {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	fx := flex.New(backend.DeviceID{Type: "flex"})
	env := map[ir.TensorID]ir.Tensor{}
	for i, in := range g.Inputs {
		env[in.ID] = fx.FromData(inputs[i])
	}
	for id, v := range g.Values {
		env[id] = fx.FromData(v)
	}
	for _, r := range g.Ops {
		op, err := r.Decode(func(id ir.TensorID) (ir.Tensor, bool) { x, ok := env[id]; return x, ok })
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		outs := ir.Run(fx, op)
		for j, id := range r.Outputs {
			if id != 0 {
				env[id] = outs[j]
			}
		}
	}
	var res []*ir.TensorData
	for _, id := range g.Outputs {
		d, err := fx.ToData(env[id])
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, d)
	}
	return res
}

// Recorded ops become records over ids, values the graph's Values and the
// declared inputs its Inputs; the graph computes what the ops do.
func TestRecordAndComplete(t *testing.T) {
	b := newTestBackend(t)
	x := b.FromData(ir.FromSlice([]float32{1, -2, 3}, []int{3}))
	w := b.FromData(ir.FromSlice([]float32{0.5, 4, -1}, []int{3}))
	s, err := b.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Begin(); !errors.Is(err, ErrAlreadyActive) {
		t.Fatalf("second Begin: %v", err)
	}
	y := ir.Unary(b, ir.OpExp, ir.Mul(b, x, w)) // exp(x·w)
	z := ir.Reduce(b, ir.ReduceSum, y, 0, false)
	if s.Len() != 3 {
		t.Fatalf("%d ops recorded, want 3", s.Len())
	}
	xid, wid := x.(*Tensor).TensorID(), w.(*Tensor).TensorID()
	zid := z.(*Tensor).TensorID()
	if xid != 1 || wid != 2 || zid <= wid {
		t.Fatalf("ids %d %d %d", xid, wid, zid)
	}
	g, err := s.Complete([]ir.TensorID{xid}, []ir.TensorID{zid})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Closed() {
		t.Error("Complete left the scope open")
	}
	if len(g.Ops) != 3 || g.Ops[0].Kind != ir.KindBinary || g.Ops[2].Kind != ir.KindReduce || !slices.Equal(g.Ops[0].Inputs, []ir.TensorID{xid, wid}) {
		t.Fatalf("ops %+v", g.Ops)
	}
	if len(g.Inputs) != 1 || g.Inputs[0].ID != xid || len(g.Values) != 1 || g.Values[wid] == nil {
		t.Fatalf("inputs %+v, values %v", g.Inputs, g.Values)
	}
	in := []float32{0.25, 0.5, -1}
	got := ir.As[float64](replay(t, g, ir.FromSlice(in, []int{3}))[0])
	want := math.Exp(0.25*0.5) + math.Exp(0.5*4) + math.Exp(1)
	if math.Abs(got[0]-want) > 1e-6*want {
		t.Errorf("replayed sum %v, want %v", got[0], want)
	}
	if _, err := s.Complete(nil, nil); !errors.Is(err, ErrNoScope) {
		t.Errorf("second Complete: %v", err)
	}
	// Outside a scope every op panics with ErrNoScope.
	r := panicValue(func() { ir.Neg(b, x) })
	var se *ScopeError
	if e, ok := r.(error); !ok || !errors.As(e, &se) || !errors.Is(e, ErrNoScope) || se.Op != "neg" || se.Device != "capture:7" {
		t.Errorf("an op outside a scope panicked with %v", r)
	}
}

// A tensor of another backend as an input panics with ErrForeignTensor;
// Seed panics with ErrInvalidDevice; values are copies both ways.
func TestForeignSeedAndValues(t *testing.T) {
	b, other := newTestBackend(t), newTestBackend(t)
	src := ir.FromSlice([]float32{1, 2}, []int{2})
	x := b.FromData(src)
	src.Bytes[0] = 0xff // the value was copied
	d, err := b.ToData(x)
	if err != nil || !slices.Equal(ir.As[float32](d), []float32{1, 2}) {
		t.Fatalf("ToData of a value: %v, %v", d, err)
	}
	d.Bytes[0] = 0xff // and is copied out
	if d2, _ := b.ToData(x); !slices.Equal(ir.As[float32](d2), []float32{1, 2}) {
		t.Errorf("ToData returned the stored bytes")
	}
	if !x.(*Tensor).IsValue() {
		t.Error("a value is not IsValue")
	}
	s, _ := b.Begin()
	y := other.FromData(src)
	r := panicValue(func() { ir.Add(b, x, y) })
	if e, ok := r.(error); !ok || !errors.Is(e, ErrForeignTensor) {
		t.Errorf("foreign input: %v", r)
	}
	z := ir.Neg(b, x)
	if _, err := b.ToData(z); !errors.Is(err, ErrNotComputed) {
		t.Errorf("ToData of a result: %v", err)
	}
	if _, err := b.ToData(y); !errors.Is(err, ErrForeignTensor) {
		t.Errorf("ToData of a foreign tensor: %v", err)
	}
	s.Close()
	r = panicValue(func() { b.Seed(1) })
	if e, ok := r.(error); !ok || !errors.Is(e, backend.ErrInvalidDevice) {
		t.Errorf("Seed: %v", r)
	}
	for _, bad := range []*ir.TensorData{nil, {Shape: []int{3}, DType: ir.F32, Bytes: make([]byte, 4)}, {DType: ir.DType(99)}} {
		if r := panicValue(func() { b.FromData(bad) }); r == nil {
			t.Errorf("FromData(%v) did not panic", bad)
		}
	}
	if !b.Supports(ir.KindAdamStep, ir.F32) || !b.Supports(ir.KindConv2d, ir.BF16) || b.Supports(ir.Kind(0), ir.F32) || b.Supports(ir.KindMatmul, ir.DType(99)) {
		t.Error("Supports is not every valid kind and dtype")
	}
	if !b.ChecksIndicesOnDevice() || !b.ChecksDivisorsOnDevice() || b.Sync() != nil {
		t.Error("ChecksIndicesOnDevice, ChecksDivisorsOnDevice or Sync")
	}
}

// SGDStep without momentum has no second output, as its decomposition;
// with momentum it has two. AdamStep has three.
func TestMultiOutputKinds(t *testing.T) {
	b := newTestBackend(t)
	p := b.FromData(ir.FromSlice([]float32{1, 2}, []int{2}))
	g := b.FromData(ir.FromSlice([]float32{0.5, -0.5}, []int{2}))
	s, _ := b.Begin()
	plain := ir.ApplyAll(b, ir.Op{Kind: ir.KindSGDStep, Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 0.1}}, In: [3]ir.Tensor{p, g}})
	mom := ir.ApplyAll(b, ir.Op{Kind: ir.KindSGDStep, Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 0.1, Momentum: 0.9}}, In: [3]ir.Tensor{p, g}})
	adam := ir.ApplyAll(b, ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1}},
		Xs: []ir.Tensor{p, g, g, g}})
	if plain[0] == nil || plain[1] != nil || mom[1] == nil || adam[2] == nil {
		t.Fatalf("outputs %v %v %v", plain, mom, adam)
	}
	ids := func(o ir.Outputs, n int) []ir.TensorID {
		var out []ir.TensorID
		for _, t := range o[:n] {
			out = append(out, t.(*Tensor).TensorID())
		}
		return out
	}
	outs := append(append(ids(plain, 1), ids(mom, 2)...), ids(adam, 3)...)
	graph, err := s.Complete(nil, outs)
	if err != nil {
		t.Fatal(err)
	}
	if r := graph.Ops[0]; len(r.Outputs) != 2 || r.Outputs[1] != 0 || len(r.Inputs) != 3 || r.Inputs[2] != 0 {
		t.Errorf("plain SGD record %+v", r)
	}
	res := replay(t, graph)
	// θ − lr·g = [0.95, 2.05]; first momentum step: b = g, the same θ.
	for i, d := range res[:3] {
		want := []float32{0.95, 2.05}
		if i == 2 {
			want = []float32{0.5, -0.5} // the buffer
		}
		got := ir.As[float32](d)
		for k := range want {
			if math.Abs(float64(got[k]-want[k])) > 1e-6 {
				t.Errorf("output %d = %v, want %v", i, got, want)
			}
		}
	}
}

// The driver opens capture ids only and lists no devices.
func TestDriver(t *testing.T) {
	for _, id := range []backend.DeviceID{{Type: "cpu"}, {Type: "capture", Kind: "x"}, {Type: "capture", Addr: "h:1"}, {Type: "capture", Index: -1}} {
		if _, err := (Driver{}).Open(id); !errors.Is(err, backend.ErrInvalidDevice) {
			t.Errorf("Open(%v): %v", id, err)
		}
	}
	if (Driver{}).Devices() != nil || (Driver{}).Priority() != 0 {
		t.Error("the driver lists devices or has a priority")
	}
	if d, ok := backend.Lookup("capture"); !ok {
		t.Error("capture is not registered")
	} else if _, ok := d.(Driver); !ok {
		t.Errorf("capture's driver is %T", d)
	}
}
