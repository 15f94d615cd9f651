package ember_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// graphRecorderBackend is a test device that records device graphs the
// way the cuda backend does, over the flex backend: while recording, Exec
// returns placeholders and remembers the op; Launch runs the remembered
// ops. Static tensors are boxes whose contents CopyInto replaces, so a
// graph's inputs and outputs keep their identity across launches, like
// the fixed addresses of a CUDA graph.
type graphRecorderBackend struct {
	inner backend.Backend
	id    backend.DeviceID

	mu        sync.Mutex
	recording *recordedGraph
	launches  int
	// refuse makes BeginGraph fail (a capture the device rejects).
	refuse bool
	// divisors makes ChecksDivisorsOnDevice report true.
	divisors bool
}

// staticTensor is a NewStatic buffer.
type staticTensor struct {
	shape []int
	dt    ir.DType
	t     backend.Tensor // the contents, nil until written
}

func (s *staticTensor) Shape() []int                    { return s.shape }
func (s *staticTensor) DType() ir.DType                 { return s.dt }
func (p *pendingTensor) Shape() []int                   { return p.shape }
func (p *pendingTensor) DType() ir.DType                { return p.dt }
func (g *recordedGraph) Close() error                   { g.closed = true; return nil }
func (b *graphRecorderBackend) Unwrap() backend.Backend { return b.inner }

// pendingTensor is the result of an op recorded in a graph.
type pendingTensor struct {
	shape []int
	dt    ir.DType
}

// recordedGraph is a recorded graph: ops and copies in order.
type recordedGraph struct {
	b      *graphRecorderBackend
	steps  []recordedStep
	closed bool
}

type recordedStep struct {
	op       ir.Op
	outs     []*pendingTensor
	dst      *staticTensor // a copy when set
	src      backend.Tensor
	deferred bool
}

func (b *graphRecorderBackend) ID() backend.DeviceID { return b.id }

func (b *graphRecorderBackend) Supports(k ir.Kind, dt ir.DType) bool {
	return b.inner.Supports(k, dt)
}

func (b *graphRecorderBackend) SupportsDType(dt ir.DType) bool { return b.inner.SupportsDType(dt) }

func (b *graphRecorderBackend) FromData(d *backend.TensorData) backend.Tensor {
	return b.inner.FromData(d)
}

func (b *graphRecorderBackend) ToData(t backend.Tensor) (*backend.TensorData, error) {
	b.mu.Lock()
	rec := b.recording != nil
	b.mu.Unlock()
	if rec {
		return nil, fmt.Errorf("%v: reading data while recording a graph", b.id)
	}
	switch x := t.(type) {
	case *pendingTensor:
		return nil, fmt.Errorf("%v: a recorded tensor has no data", b.id)
	case *staticTensor:
		if x.t == nil {
			return nil, fmt.Errorf("%v: a static tensor that was never written", b.id)
		}
		return b.inner.ToData(x.t)
	}
	return b.inner.ToData(t)
}

func (b *graphRecorderBackend) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.recording != nil {
		return fmt.Errorf("%v: Sync while recording a graph", b.id)
	}
	return b.inner.Sync()
}

func (b *graphRecorderBackend) Flush()           { b.inner.Flush() }
func (b *graphRecorderBackend) Seed(seed uint64) { b.inner.Seed(seed) }

// Exec runs op (its static inputs unboxed) or, while recording, records
// it and returns placeholders.
func (b *graphRecorderBackend) Exec(op ir.Op) ir.Outputs {
	b.mu.Lock()
	rec := b.recording
	b.mu.Unlock()
	if rec == nil {
		return b.inner.Exec(resolveOp(op, nil))
	}
	op.Xs = slices.Clone(op.Xs)
	op.Shape, op.Ints = slices.Clone(op.Shape), slices.Clone(op.Ints)
	n := ir.SpecOf(op.Kind).NumOutputs
	if n == 0 {
		n = 1
	}
	var outs ir.Outputs
	st := recordedStep{op: op}
	for k := 0; k < n; k++ {
		p := &pendingTensor{shape: op.Shape, dt: op.DType}
		st.outs = append(st.outs, p)
		outs[k] = p
	}
	rec.steps = append(rec.steps, st)
	return outs
}

// resolveOp replaces static and pending inputs by their contents.
func resolveOp(op ir.Op, env map[*pendingTensor]backend.Tensor) ir.Op {
	r := func(x ir.Tensor) ir.Tensor {
		switch t := x.(type) {
		case *staticTensor:
			return t.t
		case *pendingTensor:
			return env[t]
		}
		return x
	}
	for i := range op.In {
		if op.In[i] != nil {
			op.In[i] = r(op.In[i])
		}
	}
	if op.Xs != nil {
		xs := make([]ir.Tensor, len(op.Xs))
		for i, x := range op.Xs {
			xs[i] = r(x)
		}
		op.Xs = xs
	}
	return op
}

func (b *graphRecorderBackend) BeginGraph() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.recording != nil {
		return fmt.Errorf("%v: already recording", b.id)
	}
	if b.refuse {
		return fmt.Errorf("%v: the capture was refused", b.id)
	}
	b.recording = &recordedGraph{b: b}
	return nil
}

func (b *graphRecorderBackend) EndGraph() (backend.DeviceGraph, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.recording
	b.recording = nil
	if g == nil {
		return nil, fmt.Errorf("%v: not recording", b.id)
	}
	return g, nil
}

func (b *graphRecorderBackend) NewStatic(shape []int, dt ir.DType) backend.Tensor {
	return &staticTensor{shape: slices.Clone(shape), dt: dt}
}

// CopyInto writes a copy of src into dst (through a flex op, so that the
// box holds its own tensor), now or, while recording, at launch.
func (b *graphRecorderBackend) CopyInto(dst, src backend.Tensor) error {
	d, ok := dst.(*staticTensor)
	if !ok {
		return fmt.Errorf("%v: CopyInto: dst is not a static tensor", b.id)
	}
	if !slices.Equal(d.shape, src.Shape()) || d.dt != src.DType() {
		return fmt.Errorf("%v: CopyInto: %v %v into %v %v", b.id, src.Shape(), src.DType(), d.shape, d.dt)
	}
	b.mu.Lock()
	rec := b.recording
	b.mu.Unlock()
	if rec != nil {
		rec.steps = append(rec.steps, recordedStep{dst: d, src: src})
		return nil
	}
	d.t = copyOf(b.inner, resolveOp(ir.Op{In: [3]ir.Tensor{src}}, nil).In[0])
	return nil
}

// copyOf returns a new tensor equal to x (x + 0 would change -0; a cast
// to its own dtype copies exactly).
func copyOf(inner backend.Backend, x ir.Tensor) backend.Tensor {
	op := ir.Op{Kind: ir.KindCast, DType: x.DType(), Shape: slices.Clone(x.Shape()), In: [3]ir.Tensor{x}}
	return ir.Run(inner, op)[0]
}

// Launch runs the recorded steps.
func (g *recordedGraph) Launch() error {
	if g.closed {
		return errors.New("launch of a closed graph")
	}
	g.b.mu.Lock()
	g.b.launches++
	g.b.mu.Unlock()
	env := map[*pendingTensor]backend.Tensor{}
	for _, s := range g.steps {
		if s.dst != nil {
			src := resolveOp(ir.Op{In: [3]ir.Tensor{s.src}}, env).In[0]
			s.dst.t = copyOf(g.b.inner, src)
			continue
		}
		outs := g.b.inner.Exec(resolveOp(s.op, env))
		for k, p := range s.outs {
			env[p] = outs[k]
		}
	}
	return nil
}

type graphRecorderDriver struct{}

func (graphRecorderDriver) Open(id backend.DeviceID) (backend.Backend, error) {
	return &graphRecorderBackend{inner: ember.Flex().Backend(), id: id}, nil
}
func (graphRecorderDriver) Devices() []backend.DeviceID { return nil }
func (graphRecorderDriver) Priority() int               { return 0 }
func (graphRecorderDriver) SingleDevice() bool          { return true }

var graphRecorderOnce sync.Once

// graphRecorderDevice returns the test device that records graphs.
func graphRecorderDevice(t testing.TB) (ember.Device, *graphRecorderBackend) {
	graphRecorderOnce.Do(func() { backend.Register("graphtest", graphRecorderDriver{}) })
	dev := ember.DeviceFromID(backend.DeviceID{Type: "graphtest"})
	if err := dev.Init(); err != nil {
		t.Fatal(err)
	}
	gb, ok := backend.As[*graphRecorderBackend](dev.Backend())
	if !ok {
		t.Fatal("the test device has no graph recorder")
	}
	return dev, gb
}

// On a device that records device graphs, a compiled training step runs
// the plan once, records the second run and launches the graph from then
// on; its results equal, bit for bit, the plan's on the same device with
// NoDeviceGraph, with the parameters carried through the graph's static
// buffers, and the outputs of a graph run are those buffers.
func TestCompiledDeviceGraph(t *testing.T) {
	const steps = 5
	dev, gb := graphRecorderDevice(t)
	for _, m := range []stepModel{mlpModel, cnnModel} {
		t.Run(m.name, func(t *testing.T) {
			d := newStepData(m, 21)
			g, carry := captureCarriedStep(t, m, d)
			xs, ys := batches(m, steps, 23)
			np := len(d.params)
			dg, err := g.Compile(dev, ember.CompileOptions{Carry: carry})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := g.Compile(dev, ember.CompileOptions{Carry: carry, NoDeviceGraph: true})
			if err != nil {
				t.Fatal(err)
			}
			before := gb.launches
			var prev []*ember.Tensor
			for s := range steps {
				in := make([]*ember.Tensor, np+2)
				if s == 0 {
					for i, p := range d.params {
						in[i] = ember.FromData(p, dev)
					}
				}
				in[np] = ember.FromFloats(xs[s], m.inShape, dev)
				in[np+1] = ember.FromInts(ys[s], []int{len(ys[s])}, dev)
				want, err := plan.Run(in...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := dg.Run(in...)
				if err != nil {
					t.Fatalf("step %d: %v", s, err)
				}
				for j := range want {
					if i := bitsEqual(got[j].Float64s(), want[j].Float64s()); i >= 0 {
						t.Fatalf("step %d output %d element %d: device graph %v, plan %v", s, j, i, got[j].Float64s()[i], want[j].Float64s()[i])
					}
				}
				wantMode := ember.CompiledPlan
				if s >= 1 {
					wantMode = ember.CompiledDeviceGraph
				}
				if dg.Mode() != wantMode {
					t.Fatalf("step %d: mode %v, want %v", s, dg.Mode(), wantMode)
				}
				if s >= 2 {
					for j := range got {
						if got[j] != prev[j] {
							t.Fatalf("step %d: output %d is not the graph's buffer of the last run", s, j)
						}
					}
					if st := dg.State(0); st != got[2] {
						t.Fatal("State(0) is not the carried buffer")
					}
				}
				prev = got
			}
			if n := gb.launches - before; n != steps-1 {
				t.Errorf("%d launches for %d runs; want %d (the first run executes the plan)", n, steps, steps-1)
			}
			// A new value for a carried input replaces the carried one.
			in := make([]*ember.Tensor, np+2)
			for i, p := range d.params {
				in[i] = ember.FromData(p, dev)
			}
			in[np] = ember.FromFloats(xs[0], m.inShape, dev)
			in[np+1] = ember.FromInts(ys[0], []int{len(ys[0])}, dev)
			want, err := g.Run(dev, in...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dg.Run(in...)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if i := bitsEqual(got[j].Float64s(), want[j].Float64s()); i >= 0 {
					t.Fatalf("reset run: output %d element %d: %v, want %v", j, i, got[j].Float64s()[i], want[j].Float64s()[i])
				}
			}
			if err := dg.Close(); err != nil {
				t.Fatal(err)
			}
			plan.Close()
		})
	}
}

// ChecksIndicesOnDevice lets gathers be recorded, as on CUDA (a bad index
// would panic in Launch here).
func (b *graphRecorderBackend) ChecksIndicesOnDevice() bool { return true }

// ChecksDivisorsOnDevice reports the divisors switch: a device that
// checks integer divisors itself lets integer divisions be recorded.
func (b *graphRecorderBackend) ChecksDivisorsOnDevice() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.divisors
}

// captureFunc records f over fresh f32 inputs of the given shapes on a
// capture device.
func captureFunc(t *testing.T, shapes [][]int, f func(xs []*ember.Tensor) []*ember.Tensor) *ember.CapturedGraph {
	t.Helper()
	dev := ember.Capture()
	var xs []*ember.Tensor
	var ids []ember.TensorID
	for _, sh := range shapes {
		n := 1
		for _, d := range sh {
			n *= d
		}
		x := ember.FromFloats(make([]float32, n), sh, ember.CPU()).ToDevice(dev)
		xs = append(xs, x)
		ids = append(ids, x.ID())
	}
	g, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		var oids []ember.TensorID
		for _, o := range f(xs) {
			oids = append(oids, o.ID())
		}
		return sc.Complete(ids, oids)
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runsOf runs c n times, the first with first as its inputs and later
// ones with nil (carried) inputs, and returns every run's outputs' values.
func runsOf(t *testing.T, c *ember.CompiledGraph, n int, first []*ember.Tensor) [][][]float64 {
	t.Helper()
	var out [][][]float64
	for i := range n {
		in := make([]*ember.Tensor, len(first))
		if i == 0 {
			copy(in, first)
		}
		outs, err := c.Run(in...)
		if err != nil {
			t.Fatalf("%v run %d: %v", c.Device(), i, err)
		}
		var vs [][]float64
		for _, o := range outs {
			vs = append(vs, o.Float64s())
		}
		out = append(out, vs)
	}
	return out
}

// Carried outputs that read an input another carry overwrites — a swap of
// two carried inputs, an input listed as an output after the carry that
// replaces it, a view of a carried input — give on a device graph the
// values they have on cpu: every output reads the run's inputs before any
// carried value is written back.
func TestCompiledDeviceGraphCarryOrder(t *testing.T) {
	dev, _ := graphRecorderDevice(t)
	swap := captureFunc(t, [][]int{{2}, {2}}, func(xs []*ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{xs[1].AddScalar(0)}
	})
	swap.Outputs = []ember.TensorID{swap.Inputs[1].ID, swap.Inputs[0].ID}
	swap.Operations = nil
	ident := captureFunc(t, [][]int{{2}}, func(xs []*ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{xs[0].AddScalar(1), xs[0].Reshape(1, 2)}
	})
	ident.Outputs = []ember.TensorID{ident.Outputs[0], ident.Inputs[0].ID, ident.Outputs[1]}
	delay := captureFunc(t, [][]int{{2}, {2, 1}}, func(xs []*ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{xs[0].AddScalar(1), xs[0].Reshape(2, 1)}
	})
	cases := []struct {
		name  string
		g     *ember.CapturedGraph
		carry []ember.GraphCarry
		first func(d ember.Device) []*ember.Tensor
	}{
		{"swap", swap, []ember.GraphCarry{{Output: 0, Input: 0}, {Output: 1, Input: 1}}, func(d ember.Device) []*ember.Tensor {
			return []*ember.Tensor{ember.FromFloats([]float32{1, 1}, []int{2}, d), ember.FromFloats([]float32{2, 2}, []int{2}, d)}
		}},
		{"identity after carry", ident, []ember.GraphCarry{{Output: 0, Input: 0}}, func(d ember.Device) []*ember.Tensor {
			return []*ember.Tensor{ember.FromFloats([]float32{10, 20}, []int{2}, d)}
		}},
		{"delay line (a view carried)", delay, []ember.GraphCarry{{Output: 0, Input: 0}, {Output: 1, Input: 1}}, func(d ember.Device) []*ember.Tensor {
			return []*ember.Tensor{ember.FromFloats([]float32{5, 6}, []int{2}, d), ember.FromFloats([]float32{0, 0}, []int{2, 1}, d)}
		}},
	}
	for _, k := range cases {
		want := func() [][][]float64 {
			c, err := k.g.Compile(ember.CPU(), ember.CompileOptions{Carry: k.carry})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			return runsOf(t, c, 5, k.first(ember.CPU()))
		}()
		c, err := k.g.Compile(dev, ember.CompileOptions{Carry: k.carry})
		if err != nil {
			t.Fatal(err)
		}
		got := runsOf(t, c, 5, k.first(dev))
		if c.Mode() != ember.CompiledDeviceGraph {
			t.Fatalf("%s: mode %v", k.name, c.Mode())
		}
		for r := range want {
			for j := range want[r] {
				if bitsEqual(got[r][j], want[r][j]) >= 0 {
					t.Fatalf("%s: run %d output %d: device graph %v, cpu %v", k.name, r, j, got[r][j], want[r][j])
				}
			}
		}
		c.Close()
	}
}

// A device that refuses the capture runs the plan from then on, with the
// plan's results, and DeviceGraphError says why; State is nil after Close;
// a compiled graph does not see later edits of the graph it came from; a
// capture device is refused; the accessors take a nil graph.
func TestCompiledGraphFallbackAndLifecycle(t *testing.T) {
	dev, gb := graphRecorderDevice(t)
	g := captureFunc(t, [][]int{{2}, {2}}, func(xs []*ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{xs[0].MulScalar(0.5).Add(xs[1])}
	})
	carry := []ember.GraphCarry{{Output: 0, Input: 0}}
	gb.mu.Lock()
	gb.refuse = true
	gb.mu.Unlock()
	defer func() {
		gb.mu.Lock()
		gb.refuse = false
		gb.mu.Unlock()
	}()
	c, err := g.Compile(dev, ember.CompileOptions{Carry: carry})
	if err != nil {
		t.Fatal(err)
	}
	g.Inputs[0].Shape = []int{3} // must not reach c
	x := ember.FromFloats([]float32{1, 2}, []int{2}, dev)
	first := []*ember.Tensor{ember.FromFloats([]float32{8, 0}, []int{2}, dev), x}
	var got [][]float64
	for i := range 4 {
		in := []*ember.Tensor{nil, x}
		if i == 0 {
			in = first
		}
		outs, err := c.Run(in...)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		got = append(got, outs[0].Float64s())
	}
	want := [][]float64{{5, 2}, {3.5, 3}, {2.75, 3.5}, {2.375, 3.75}}
	for i := range want {
		if bitsEqual(got[i], want[i]) >= 0 {
			t.Fatalf("run %d: %v, want %v", i, got[i], want[i])
		}
	}
	if c.Mode() != ember.CompiledPlan || c.DeviceGraphError() == nil || !strings.Contains(c.DeviceGraphError().Error(), "refused") {
		t.Errorf("mode %v, DeviceGraphError %v; want plan and the refusal", c.Mode(), c.DeviceGraphError())
	}
	if c.State(0) == nil {
		t.Error("State(0) is nil before Close")
	}
	c.Close()
	if c.State(0) != nil {
		t.Error("State(0) after Close is not nil")
	}
	var nilc *ember.CompiledGraph
	if nilc.State(0) != nil || nilc.Runs() != 0 || nilc.Mode() != ember.CompiledPlan || nilc.DeviceGraphError() != nil || !nilc.Device().IsZero() || nilc.Close() != nil {
		t.Error("the accessors of a nil *CompiledGraph")
	}
	if _, err := nilc.Run(); err == nil {
		t.Error("Run of a nil graph succeeded")
	}
	g.Inputs[0].Shape = []int{2}
	if _, err := g.Compile(ember.Capture(), ember.CompileOptions{}); !errors.Is(err, ember.ErrInvalidDevice) {
		t.Errorf("Compile for a capture device: %v, want ErrInvalidDevice", err)
	}
}
