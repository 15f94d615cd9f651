package ember_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// captureCarriedStep captures the training step of m with its parameters
// as inputs 0..n-1 (then x and y) and outputs loss, the first parameter's
// gradient and the n updated parameters, and returns the graph with the
// carries linking each updated parameter to its input.
func captureCarriedStep(t testing.TB, m stepModel, d stepData) (*ember.CapturedGraph, []ember.GraphCarry) {
	t.Helper()
	dev := ember.Capture().Autodiff()
	model := modelOn(t, m, d, dev)
	x := ember.FromData(d.x, ember.Flex()).ToDevice(dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, ember.Flex()).ToDevice(dev)
	var ins []ember.TensorID
	for _, p := range model.NamedParameters() {
		ins = append(ins, p.Param.Value.ID())
	}
	ins = append(ins, x.ID(), y.ID())
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		r := trainStep(model, x, y)
		var outs []ember.TensorID
		for _, o := range r.tensors() {
			outs = append(outs, o.ID())
		}
		return s.Complete(ins, outs)
	})
	if err != nil {
		t.Fatal(err)
	}
	var carry []ember.GraphCarry
	for i := range d.params {
		carry = append(carry, ember.GraphCarry{Output: 2 + i, Input: i})
	}
	return g, carry
}

// batches returns k random batches (x, labels) of m's shapes.
func batches(m stepModel, k int, seed uint64) ([][]float32, [][]int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := 1
	for _, s := range m.inShape {
		n *= s
	}
	xs, ys := make([][]float32, k), make([][]int, k)
	for b := range k {
		xs[b] = make([]float32, n)
		for i := range xs[b] {
			xs[b][i] = float32(rng.NormFloat64() + 0.05)
		}
		ys[b] = make([]int, m.inShape[0])
		for i := range ys[b] {
			ys[b][i] = rng.IntN(m.classes)
		}
	}
	return xs, ys
}

// bitsEqual reports the first element where a and b differ in their
// float64 bits (-1 when none), NaNs of any payload being equal.
func bitsEqual(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return i
		}
	}
	return -1
}

// A compiled training step run for several batches, its parameters
// carried from run to run, gives bit for bit the results of replaying the
// captured graph with CapturedGraph.Run and feeding the updated
// parameters back by hand, on every local device; the results are also
// within replayTol of eager training steps.
func TestCompiledStepMatchesReplay(t *testing.T) {
	const steps = 4
	for _, m := range []stepModel{mlpModel, cnnModel} {
		t.Run(m.name, func(t *testing.T) {
			d := newStepData(m, 5)
			g, carry := captureCarriedStep(t, m, d)
			xs, ys := batches(m, steps, 11)
			np := len(d.params)
			for _, dev := range replayDevices(t) {
				c, err := g.Compile(dev, ember.CompileOptions{Carry: carry})
				if err != nil {
					t.Fatalf("%v: %v", dev, err)
				}
				// Reference: CapturedGraph.Run with the parameters fed back.
				params := make([]*ember.Tensor, np)
				for i, p := range d.params {
					params[i] = ember.FromData(p, dev)
				}
				first := append([]*ember.Tensor(nil), params...)
				// Eager: a model trained step by step on dev.
				model := modelOn(t, m, d, dev.Autodiff())
				// An op on an output before the next run sees this run's
				// value, even where the next run overwrites the output's
				// buffer and the op is deferred (fusion).
				var doubled *ember.Tensor
				var doubledWant []float64
				for s := range steps {
					if doubled != nil && s == 3 {
						if i := bitsEqual(doubled.Float64s(), doubledWant); i >= 0 {
							t.Fatalf("%v: an op on a loss read after the next run: %v, want %v", dev, doubled.Float64s(), doubledWant)
						}
					}
					x := ember.FromFloats(xs[s], m.inShape, dev)
					y := ember.FromInts(ys[s], []int{len(ys[s])}, dev)
					want, err := g.Run(dev, append(append([]*ember.Tensor(nil), params...), x, y)...)
					if err != nil {
						t.Fatalf("%v: replay: %v", dev, err)
					}
					copy(params, want[2:])
					in := make([]*ember.Tensor, np+2)
					if s == 0 {
						copy(in, first)
					}
					in[np], in[np+1] = x, y
					got, err := c.Run(in...)
					if err != nil {
						t.Fatalf("%v: compiled run %d: %v", dev, s, err)
					}
					if s == 1 { // the first device-graph run on cuda
						doubled = got[0].MulScalar(2)
						doubledWant = want[0].MulScalar(2).Float64s()
					}
					if len(got) != len(want) {
						t.Fatalf("%v: %d outputs, want %d", dev, len(got), len(want))
					}
					for j := range want {
						if i := bitsEqual(got[j].Float64s(), want[j].Float64s()); i >= 0 {
							t.Fatalf("%v: step %d output %d element %d: compiled %v, replay %v", dev, s, j, i, got[j].Float64s()[i], want[j].Float64s()[i])
						}
					}
					xa, ya := x.ToDevice(dev.Autodiff()), y.ToDevice(dev.Autodiff())
					checkOutputs(t, dev.String()+" compiled against eager", values(got), values(trainStep(model, xa, ya).tensors()), replayTol)
					for i := range np {
						if st := c.State(i); st == nil || bitsEqual(st.Float64s(), want[2+i].Float64s()) >= 0 {
							t.Fatalf("%v: step %d: State(%d) is not the updated parameter", dev, s, i)
						}
					}
				}
				wantMode := ember.CompiledPlan
				if dev.Type() == ember.TypeCUDA {
					wantMode = ember.CompiledDeviceGraph // from the second run on
				}
				if c.Runs() != steps || c.Mode() != wantMode {
					t.Errorf("%v: Runs %d Mode %v; want %d, %v", dev, c.Runs(), c.Mode(), steps, wantMode)
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				if err := c.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				if _, err := c.Run(); err == nil || !strings.Contains(err.Error(), "closed") {
					t.Fatalf("Run after Close: %v", err)
				}
			}
		})
	}
}

// Compile and Run reject bad carries and bad inputs with errors that
// name the carry or the input, and a failed Run keeps the carried values.
func TestCompiledGraphErrors(t *testing.T) {
	d := newStepData(mlpModel, 8)
	g, carry := captureCarriedStep(t, mlpModel, d)
	dev := ember.CPU()
	var nilGraph *ember.CapturedGraph
	if _, err := nilGraph.Compile(dev, ember.CompileOptions{}); err == nil {
		t.Error("Compile of a nil graph succeeded")
	}
	bad := []struct {
		name  string
		carry []ember.GraphCarry
		want  string
	}{
		{"output out of range", []ember.GraphCarry{{Output: 99, Input: 0}}, "outputs"},
		{"input out of range", []ember.GraphCarry{{Output: 2, Input: -1}}, "inputs"},
		{"input twice", []ember.GraphCarry{{Output: 2, Input: 0}, {Output: 3, Input: 0}}, "carried twice"},
		{"output twice", []ember.GraphCarry{{Output: 2, Input: 0}, {Output: 2, Input: 1}}, "carried twice"},
		{"shape mismatch", []ember.GraphCarry{{Output: 3, Input: 0}}, "the output is"},
		{"loss into a weight", []ember.GraphCarry{{Output: 0, Input: 0}}, "the output is"},
	}
	for _, b := range bad {
		_, err := g.Compile(dev, ember.CompileOptions{Carry: b.carry})
		var e *ember.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "carry") {
			t.Errorf("%s: %v; want an *Error naming the carry (%q)", b.name, err, b.want)
		}
	}
	c, err := g.Compile(dev, ember.CompileOptions{Carry: carry})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	np := len(d.params)
	params := make([]*ember.Tensor, np)
	for i, p := range d.params {
		params[i] = ember.FromData(p, dev)
	}
	x := ember.FromData(d.x, dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, dev)
	in := func(ps []*ember.Tensor, x, y *ember.Tensor) []*ember.Tensor {
		return append(append([]*ember.Tensor(nil), ps...), x, y)
	}
	cases := []struct {
		name   string
		inputs []*ember.Tensor
		want   string
	}{
		{"too few", []*ember.Tensor{x}, "inputs"},
		{"carried nil before the first run", in(make([]*ember.Tensor, np), x, y), "first run"},
		{"nil batch", in(params, nil, y), "nil"},
		{"wrong shape", in(params, ember.Zeros([]int{3, 16}, dev), y), "the graph takes"},
		{"wrong dtype", in(params, x, ember.Zeros([]int{len(d.labels)}, dev)), "the graph takes"},
		{"wrong device", in(params, x.ToDevice(ember.Flex()), y), "must be on"},
	}
	for _, k := range cases {
		if _, err := c.Run(k.inputs...); err == nil || !strings.Contains(err.Error(), k.want) {
			t.Errorf("%s: %v; want an error containing %q", k.name, err, k.want)
		}
	}
	if c.Runs() != 0 || c.State(0) != nil {
		t.Fatalf("failed runs counted (%d) or set state", c.Runs())
	}
	outs, err := c.Run(in(params, x, y)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(in(make([]*ember.Tensor, np), x, nil)...); err == nil {
		t.Fatal("a nil batch after the first run was accepted")
	}
	if st := c.State(0); st == nil || bitsEqual(st.Float64s(), outs[2].Float64s()) >= 0 {
		t.Fatal("a failed run changed the carried value")
	}
	if c.State(np) != nil {
		t.Error("State of an input that is not carried is not nil")
	}
}
