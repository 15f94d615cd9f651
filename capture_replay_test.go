package ember_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// replayTol is the tolerance of a replay against eager execution: each
// element within 1e-6 of the tensor's largest magnitude (a normwise
// relative error).
const replayTol = 1e-6

// mlpReference is a float64 implementation of the MLP step of
// capture_helpers_test.go (16 → 32 → ReLU → 4, cross-entropy, one Adam
// step with lr 0.01 and PyTorch's defaults, t = 1), written out by hand:
// it returns the loss, dL/dW1 and the four updated parameters.
func mlpReference(d stepData) [][]float64 {
	f := func(td *ember.TensorData) []float64 { return ir.As[float64](td) }
	w1, b1, w2, b2 := f(d.params[0]), f(d.params[1]), f(d.params[2]), f(d.params[3])
	x := f(d.x)
	const n, in, hid, out = 8, 16, 32, 4
	h := make([]float64, n*hid) // pre-activation
	for i := range n {
		for j := range hid {
			acc := b1[j]
			for k := range in {
				acc += x[i*in+k] * w1[j*in+k]
			}
			h[i*hid+j] = acc
		}
	}
	a := make([]float64, n*hid)
	for i, v := range h {
		a[i] = math.Max(v, 0)
	}
	var loss float64
	dz := make([]float64, n*out) // d loss / d logits
	for i := range n {
		z := make([]float64, out)
		m := math.Inf(-1)
		for j := range out {
			acc := b2[j]
			for k := range hid {
				acc += a[i*hid+k] * w2[j*hid+k]
			}
			z[j] = acc
			m = math.Max(m, acc)
		}
		var se float64
		for _, v := range z {
			se += math.Exp(v - m)
		}
		y := d.labels[i]
		loss -= (z[y] - m - math.Log(se)) / n
		for j := range out {
			p := math.Exp(z[j]-m) / se
			if j == y {
				p--
			}
			dz[i*out+j] = p / n
		}
	}
	gw2, gb2 := make([]float64, out*hid), make([]float64, out)
	da := make([]float64, n*hid)
	for i := range n {
		for j := range out {
			gb2[j] += dz[i*out+j]
			for k := range hid {
				gw2[j*hid+k] += dz[i*out+j] * a[i*hid+k]
				da[i*hid+k] += dz[i*out+j] * w2[j*hid+k]
			}
		}
	}
	gw1, gb1 := make([]float64, hid*in), make([]float64, hid)
	for i := range n {
		for j := range hid {
			if h[i*hid+j] <= 0 {
				continue
			}
			g := da[i*hid+j]
			gb1[j] += g
			for k := range in {
				gw1[j*in+k] += g * x[i*in+k]
			}
		}
	}
	adam := func(theta, g []float64) []float64 {
		// t = 1: m̂ = g, v̂ = g², θ ← θ − lr·m̂/(√v̂ + ε).
		out := make([]float64, len(theta))
		for i := range theta {
			out[i] = theta[i] - 0.01*g[i]/(math.Abs(g[i])+1e-8)
		}
		return out
	}
	return [][]float64{{loss}, gw1, adam(w1, gw1), adam(b1, gb1), adam(w2, gw2), adam(b2, gb2)}
}

// kindsOf counts the kinds of g's ops.
func kindsOf(g *ember.CapturedGraph) map[ir.Kind]int {
	n := map[ir.Kind]int{}
	for _, r := range g.Operations {
		n[r.Kind]++
	}
	return n
}

// A training step (forward, cross-entropy, backward, Adam) captured on an
// autodiff capture device replays on every local device with the values
// of eager execution there, to replayTol; the MLP's also match a float64
// hand-written step to 1e-4 (float32 arithmetic).
func TestCaptureTrainingStepReplays(t *testing.T) {
	for _, m := range []stepModel{mlpModel, cnnModel} {
		t.Run(m.name, func(t *testing.T) {
			d := newStepData(m, 3)
			g := captureStep(t, m, d)
			k := kindsOf(g)
			if k[ir.KindAdamStep] != 4 || k[ir.KindScatterAdd] == 0 || k[ir.KindMatmul] < 3 {
				t.Errorf("the graph lacks backward or optimizer ops: %v", k)
			}
			if m.name == "cnn" && (k[ir.KindConv2d] != 1 || k[ir.KindMaxPool2d] != 1 || k[ir.KindMaxPool2dGrad] != 1 || k[ir.KindConv2dWeightGrad] != 1) {
				t.Errorf("the CNN graph lacks conv or pool ops: %v", k)
			}
			if len(g.Inputs) != 2 || len(g.Values) != 4 || len(g.Outputs) != 6 {
				t.Errorf("%d inputs, %d values, %d outputs; want 2, 4 (the parameters), 6", len(g.Inputs), len(g.Values), len(g.Outputs))
			}
			for _, dev := range replayDevices(t) {
				want := eagerStep(t, m, d, dev)
				outs, err := g.Run(dev, stepInputs(d, dev)...)
				if err != nil {
					t.Fatalf("%v: %v", dev, err)
				}
				for _, o := range outs {
					if !o.Device().Equal(dev) {
						t.Fatalf("%v: an output is on %v", dev, o.Device())
					}
				}
				checkOutputs(t, "replay on "+dev.String(), values(outs), want, replayTol)
				if m.name == "mlp" {
					checkOutputs(t, "eager on "+dev.String()+" against float64", want, mlpReference(d), 1e-4)
				}
			}
		})
	}
}

// A graph written with WriteTo and read back with ReadGraph replays to the
// same result, and its encoding is stable.
func TestCaptureGraphRoundTrip(t *testing.T) {
	for _, m := range []stepModel{mlpModel, cnnModel} {
		d := newStepData(m, 4)
		g := captureStep(t, m, d)
		var buf bytes.Buffer
		n, err := g.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) || n == 0 {
			t.Fatalf("%s: WriteTo: %d bytes (buffer %d), %v", m.name, n, buf.Len(), err)
		}
		enc := slices.Clone(buf.Bytes())
		r, err := ember.ReadGraph(&buf)
		if err != nil {
			t.Fatalf("%s: ReadGraph: %v", m.name, err)
		}
		if len(r.Operations) != len(g.Operations) || !slices.Equal(r.Outputs, g.Outputs) || len(r.Values) != len(g.Values) {
			t.Fatalf("%s: read %d ops, outputs %v; wrote %d, %v", m.name, len(r.Operations), r.Outputs, len(g.Operations), g.Outputs)
		}
		var again bytes.Buffer
		if _, err := r.WriteTo(&again); err != nil || !bytes.Equal(again.Bytes(), enc) {
			t.Errorf("%s: re-encoding differs (%v)", m.name, err)
		}
		for _, dev := range []ember.Device{ember.CPU(), ember.Flex()} {
			want, err := g.Run(dev, stepInputs(d, dev)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Run(dev, stepInputs(d, dev)...)
			if err != nil {
				t.Fatal(err)
			}
			checkOutputs(t, m.name+" read back on "+dev.String(), values(got), values(want), 0)
			checkOutputs(t, m.name+" read back against eager on "+dev.String(), values(got), eagerStep(t, m, d, dev), replayTol)
		}
	}
}

var updateGraphs = flag.Bool("update-graphs", false, "rewrite testdata/graphs/mlp_step.* from a fresh capture")

// graphFixture is the JSON file next to a committed graph: its inputs,
// the value ids of the model's parameters (in NamedParameters order), and
// the outputs of eager execution on the device named.
type graphFixture struct {
	Params     []ember.TensorID `json:"params"`
	Inputs     []fixtureTensor  `json:"inputs"`
	ComputedOn string           `json:"computed_on"`
	Outputs    []fixtureTensor  `json:"outputs"`
}

// fixtureTensor is a tensor in a fixture: its shape, dtype and values.
type fixtureTensor struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

func fixtureOf(x *ember.Tensor) fixtureTensor {
	return fixtureTensor{Shape: x.Shape(), DType: x.DType().String(), Values: x.Float64s()}
}

// tensor makes the fixture's tensor on dev (exact for f32 and i64 values).
func (f fixtureTensor) tensor(t *testing.T, dev ember.Device) *ember.Tensor {
	t.Helper()
	dt, err := backend.ParseDType(f.DType)
	if err != nil {
		t.Fatal(err)
	}
	x := ember.FromFloats(f.Values, f.Shape, ember.Flex()).Cast(dt)
	return x.ToDevice(dev)
}

// writeGraphFixture captures the MLP step, writes the graph and its
// fixture (outputs computed eagerly on cpu) to dir.
func writeGraphFixture(t *testing.T, graphPath, jsonPath string) {
	d := newStepData(mlpModel, 2024)
	dev := ember.Capture().Autodiff()
	model := modelOn(t, mlpModel, d, dev)
	x := ember.FromData(d.x, ember.Flex()).ToDevice(dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, ember.Flex()).ToDevice(dev)
	var fx graphFixture
	for _, p := range model.NamedParameters() {
		fx.Params = append(fx.Params, p.Param.Value.ID())
	}
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		r := trainStep(model, x, y)
		var outs []ember.TensorID
		for _, o := range r.tensors() {
			outs = append(outs, o.ID())
		}
		return s.Complete([]ember.TensorID{x.ID(), y.ID()}, outs)
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	for _, in := range stepInputs(d, ember.Flex()) {
		fx.Inputs = append(fx.Inputs, fixtureOf(in))
	}
	fx.ComputedOn = ember.CPU().String()
	shapes := [][]int{{}, d.params[0].Shape} // the loss, the first gradient, the parameters
	for _, p := range d.params {
		shapes = append(shapes, p.Shape)
	}
	for i, v := range eagerStep(t, mlpModel, d, ember.CPU()) {
		fx.Outputs = append(fx.Outputs, fixtureTensor{Shape: shapes[i], DType: "f32", Values: v})
	}
	js, err := json.MarshalIndent(fx, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(graphPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(graphPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonPath, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes) and %s", graphPath, buf.Len(), jsonPath)
}

// The committed graph testdata/graphs/mlp_step.graph (an MLP training step
// captured on an autodiff capture device; regenerate with
// go test -run TestCaptureGraphFile -update-graphs) replays on every local
// device — cuda:0 on a CUDA machine — to the outputs stored next to it
// (computed eagerly on cpu) and to eager execution of the same step on
// that device, both to replayTol.
func TestCaptureGraphFile(t *testing.T) {
	graphPath := filepath.Join("testdata", "graphs", "mlp_step.graph")
	jsonPath := filepath.Join("testdata", "graphs", "mlp_step.json")
	if *updateGraphs {
		writeGraphFixture(t, graphPath, jsonPath)
	}
	f, err := os.Open(graphPath)
	if err != nil {
		t.Fatalf("%v (generate it with go test -run TestCaptureGraphFile -update-graphs)", err)
	}
	defer f.Close()
	g, err := ember.ReadGraph(f)
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var fx graphFixture
	if err := json.Unmarshal(js, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Params) != 4 || len(fx.Inputs) != 2 || len(fx.Outputs) != 6 {
		t.Fatalf("fixture has %d params, %d inputs, %d outputs", len(fx.Params), len(fx.Inputs), len(fx.Outputs))
	}
	want := make([][]float64, len(fx.Outputs))
	for i, o := range fx.Outputs {
		want[i] = o.Values
	}
	// The step's data, from the graph's values and the fixture's inputs.
	var d stepData
	for _, id := range fx.Params {
		v, ok := g.Values[id]
		if !ok {
			t.Fatalf("the graph has no value %d", id)
		}
		d.params = append(d.params, v)
	}
	d.x = fx.Inputs[0].tensor(t, ember.Flex()).Data()
	for _, v := range fx.Inputs[1].Values {
		d.labels = append(d.labels, int(v))
	}
	checkOutputs(t, "float64 step against the stored outputs", mlpReference(d), want, 1e-4)
	for _, dev := range replayDevices(t) {
		var ins []*ember.Tensor
		for _, in := range fx.Inputs {
			ins = append(ins, in.tensor(t, dev))
		}
		outs, err := g.Run(dev, ins...)
		if err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		got := values(outs)
		checkOutputs(t, "file replay on "+dev.String()+" against "+fx.ComputedOn, got, want, replayTol)
		checkOutputs(t, "file replay on "+dev.String()+" against eager there", got, eagerStep(t, mlpModel, d, dev), replayTol)
	}
}

// Run on autodiff devices records the replayed ops: Backward from a
// replayed output gives the gradient of the graph's function.
func TestCaptureReplayIsDifferentiable(t *testing.T) {
	dev := ember.Capture()
	wv := []float32{0.5, -1, 2}
	x := onCapture([]float32{1, 1, 1}, []int{3}, dev)
	w := onCapture(wv, []int{3}, dev)
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.Mul(w).Exp().Sum()
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	xv := []float32{0.25, 0.5, -0.75}
	for _, d := range replayDevices(t) {
		ad := d.Autodiff()
		xt := ember.FromFloats(xv, []int{3}, ember.Flex()).ToDevice(ad).RequireGrad()
		outs, err := g.Run(ad, xt)
		if err != nil {
			t.Fatalf("%v: %v", ad, err)
		}
		gx := outs[0].Backward().Of(xt).Float64s()
		for i := range xv {
			want := float64(wv[i]) * math.Exp(float64(xv[i])*float64(wv[i])) // d/dx Σ exp(x·w)
			if math.Abs(gx[i]-want) > 1e-6*math.Abs(want) {
				t.Errorf("%v: gradient %d = %v, want %v", ad, i, gx[i], want)
			}
		}
	}
}

// Run returns errors, never panics, for mismatched inputs, malformed
// graphs, out-of-range indices and integer division by zero.
func TestCaptureRunErrors(t *testing.T) {
	dev := ember.Capture()
	x := onCapture([]float32{1, 2, 3}, []int{3}, dev)
	idx := ember.FromInts([]int{0, 2}, []int{2}, ember.Flex()).ToDevice(dev)
	a := ember.FromInts([]int{6, 9}, []int{2}, ember.Flex()).ToDevice(dev)
	b := ember.FromInts([]int{3, 2}, []int{2}, ember.Flex()).ToDevice(dev)
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.IndexSelect(0, idx).Exp()
		q := a.Div(b)
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID(), q.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	flex := ember.Flex()
	in := ember.FromFloats([]float32{1, 2, 3}, []int{3}, flex)
	outs, err := g.Run(flex, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[1].Int64s(); !slices.Equal(got, []int64{2, 4}) {
		t.Errorf("6/3, 9/2 = %v, want [2 4] (truncating)", got)
	}
	if got := outs[0].Float64s(); math.Abs(got[1]-math.Exp(3)) > 1e-5 {
		t.Errorf("exp(x[2]) = %v", got[1])
	}

	var e *ember.Error
	for what, run := range map[string]func() error{
		"no inputs":     func() error { _, err := g.Run(flex); return err },
		"nil input":     func() error { _, err := g.Run(flex, nil); return err },
		"wrong shape":   func() error { _, err := g.Run(flex, ember.Zeros([]int{4}, flex)); return err },
		"wrong dtype":   func() error { _, err := g.Run(flex, ember.Zeros([]int{3}, flex).Cast(ember.F64)); return err },
		"other device":  func() error { _, err := g.Run(flex, ember.Zeros([]int{3}, ember.CPU())); return err },
		"nil graph":     func() error { _, err := (*ember.CapturedGraph)(nil).Run(flex); return err },
		"two inputs":    func() error { _, err := g.Run(flex, in, in); return err },
		"zero device":   func() error { _, err := g.Run(ember.Device{}, in); return err },
		"capture input": func() error { _, err := g.Run(flex, x); return err },
	} {
		err := run()
		var de *ember.DeviceError
		if err == nil || !(errors.As(err, &e) || errors.As(err, &de)) {
			t.Errorf("%s: %v, want an *Error or *DeviceError", what, err)
		}
	}

	// Malformed graphs: an unknown input id, a wrong recorded shape, a
	// missing value.
	mutate := func(f func(c *ember.CapturedGraph)) *ember.CapturedGraph {
		c := *g
		c.Operations = slices.Clone(g.Operations)
		for i := range c.Operations {
			c.Operations[i].Inputs = slices.Clone(c.Operations[i].Inputs)
		}
		c.Values = map[ember.TensorID]*ember.TensorData{}
		for id, v := range g.Values {
			c.Values[id] = v
		}
		f(&c)
		return &c
	}
	for what, c := range map[string]*ember.CapturedGraph{
		"unknown tensor": mutate(func(c *ember.CapturedGraph) { c.Operations[1].Inputs[0] = 1 << 40 }),
		"wrong shape":    mutate(func(c *ember.CapturedGraph) { c.Operations[1].Shape = []int{5} }),
		"missing value":  mutate(func(c *ember.CapturedGraph) { delete(c.Values, idx.ID()) }),
		"nil value":      mutate(func(c *ember.CapturedGraph) { c.Values[idx.ID()] = nil }),
	} {
		if _, err := c.Run(flex, in); !errors.Is(err, ember.ErrInvalidGraph) {
			t.Errorf("%s: %v, want ErrInvalidGraph", what, err)
		}
	}

	// Data a graph holds is checked as the Tensor methods check it.
	bad := mutate(func(c *ember.CapturedGraph) { c.Values[idx.ID()] = ember.FromInts([]int{0, 7}, []int{2}, flex).Data() })
	zero := mutate(func(c *ember.CapturedGraph) { c.Values[b.ID()] = ember.FromInts([]int{3, 0}, []int{2}, flex).Data() })
	for _, d := range replayDevices(t) {
		in := ember.FromFloats([]float32{1, 2, 3}, []int{3}, flex).ToDevice(d)
		outs, err := bad.Run(d, in)
		if ic, ok := backend.As[backend.IndexChecker](d.Backend()); ok && ic.ChecksIndicesOnDevice() {
			if err == nil {
				_, err = outs[0].ToData()
			}
			if !errors.Is(err, ember.ErrExecution) {
				t.Errorf("%v: index 7 of 3: %v, want ErrExecution", d, err)
			}
		} else if !errors.As(err, &e) || e.Op != "index_select" || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), "op 0") {
			t.Errorf("%v: index 7 of 3: %v, want the *Error of index_select naming op 0", d, err)
		}
		outs, err = zero.Run(d, in)
		if dc, ok := backend.As[backend.DivisorChecker](d.Backend()); ok && dc.ChecksDivisorsOnDevice() {
			// The divisor is checked by the device: the error comes from
			// the next read (or Sync) and is not left for later work.
			if err == nil {
				_, err = outs[0].ToData()
			}
			if !errors.Is(err, ember.ErrExecution) || !strings.Contains(err.Error(), "division by zero") {
				t.Errorf("%v: 9/0: %v, want ErrExecution naming the division by zero", d, err)
			}
			if err := d.Sync(); err != nil {
				t.Errorf("%v: the zero divisor is reported again at Sync: %v", d, err)
			}
		} else if !errors.As(err, &e) || !strings.Contains(err.Error(), "division by zero") {
			t.Errorf("%v: 9/0: %v, want an *Error", d, err)
		}
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// ReadGraph rejects oversize, truncated, malformed and invalid input with
// errors wrapping the matching sentinel; WriteTo reports write failures.
func TestReadGraphErrors(t *testing.T) {
	g := captureStep(t, mlpModel, newStepData(mlpModel, 5))
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	enc := buf.Bytes()
	if _, err := ember.ReadGraphWith(bytes.NewReader(enc), ember.GraphReadOptions{MaxBytes: int64(len(enc) - 1)}); !errors.Is(err, ember.ErrGraphTooLarge) {
		t.Errorf("limit one byte short: %v", err)
	}
	if _, err := ember.ReadGraphWith(bytes.NewReader(enc), ember.GraphReadOptions{MaxBytes: int64(len(enc))}); err != nil {
		t.Errorf("limit exactly the size: %v", err)
	}
	for what, in := range map[string][]byte{
		"empty":     nil,
		"truncated": enc[:len(enc)/2],
		"garbage":   []byte("not a graph at all"),
		"trailing":  append(slices.Clone(enc), 0),
	} {
		if _, err := ember.ReadGraph(bytes.NewReader(in)); !errors.Is(err, ir.ErrFormat) {
			t.Errorf("%s: %v, want ir.ErrFormat", what, err)
		}
	}
	c := *g
	c.Operations = slices.Clone(g.Operations)
	c.Operations[3].Shape = []int{7, 7}
	var bad bytes.Buffer
	if _, err := c.WriteTo(&bad); err != nil {
		t.Fatal(err)
	}
	if _, err := ember.ReadGraph(&bad); !errors.Is(err, ember.ErrInvalidGraph) {
		t.Errorf("a graph that does not validate: %v", err)
	}
	if _, err := g.WriteTo(errWriter{}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("failing writer: %v", err)
	}
	if _, err := (*ember.CapturedGraph)(nil).WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("WriteTo of a nil graph succeeded")
	}
}
