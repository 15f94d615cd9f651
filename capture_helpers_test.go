package ember_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// replayDevices returns every local device that initializes: Enumerate's
// plus flex and cpu (cuda:0 on a CUDA machine).
func replayDevices(t testing.TB) []ember.Device {
	t.Helper()
	var out []ember.Device
	seen := map[string]bool{}
	for _, d := range append(ember.Enumerate(), ember.Flex(), ember.CPU()) {
		if seen[d.String()] {
			continue
		}
		seen[d.String()] = true
		if err := d.Init(); err != nil {
			t.Logf("skipping device %v: %v", d, err)
			continue
		}
		out = append(out, d)
	}
	t.Logf("replaying on %v", out)
	return out
}

// stepModel is a network for a training step: its constructor on a device
// and its input and target shapes.
type stepModel struct {
	name    string
	build   func(dev ember.Device) nn.Module
	inShape []int // the batch's shape
	classes int
}

// mlpModel is the MLP 16 → 32 → ReLU → 4 on batches of 8.
var mlpModel = stepModel{
	name: "mlp",
	build: func(dev ember.Device) nn.Module {
		return nn.NewSequential(nn.NewLinear(16, 32, dev), nn.Relu{}, nn.NewLinear(32, 4, dev))
	},
	inShape: []int{8, 16},
	classes: 4,
}

// cnnModel is conv 3×3 (1 → 4) → ReLU → max-pool 2 → flatten → linear
// 36 → 3 on batches [4, 1, 8, 8].
var cnnModel = stepModel{
	name: "cnn",
	build: func(dev ember.Device) nn.Module {
		return nn.NewSequential(
			nn.NewConv2d(1, 4, 3, ember.ConvOptions{}, dev), nn.Relu{}, nn.NewMaxPool2d(2, 2),
			nn.Flatten{}, nn.NewLinear(4*3*3, 3, dev))
	},
	inShape: []int{4, 1, 8, 8},
	classes: 3,
}

// stepData is the host data of one training step: parameter values (in
// NamedParameters order), a batch and its labels, all random and non-zero.
type stepData struct {
	params []*ember.TensorData
	x      *ember.TensorData
	labels []int
}

// newStepData draws the data of a step of m from seed.
func newStepData(m stepModel, seed uint64) stepData {
	rng := rand.New(rand.NewPCG(seed, 99))
	host := m.build(ember.Flex())
	var d stepData
	for _, p := range host.NamedParameters() {
		shape := p.Param.Value.Shape()
		fan := 1
		for _, s := range shape[1:] {
			fan *= s
		}
		bound := 1 / math.Sqrt(float64(fan))
		vals := make([]float32, p.Param.Value.NumElements())
		for i := range vals {
			v := (2*rng.Float64() - 1) * bound
			if math.Abs(v) < 1e-3*bound {
				v = 1e-3 * bound
			}
			vals[i] = float32(v)
		}
		d.params = append(d.params, ember.FromFloats(vals, shape, ember.Flex()).Data())
	}
	n := 1
	for _, s := range m.inShape {
		n *= s
	}
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64() + 0.1)
	}
	d.x = ember.FromFloats(xs, m.inShape, ember.Flex()).Data()
	d.labels = make([]int, m.inShape[0])
	for i := range d.labels {
		d.labels[i] = rng.IntN(m.classes)
	}
	return d
}

// modelOn builds m on dev with d's parameter values (tracked leaves on an
// autodiff device).
func modelOn(t testing.TB, m stepModel, d stepData, dev ember.Device) nn.Module {
	t.Helper()
	model := m.build(ember.Flex())
	for i, p := range model.NamedParameters() {
		p.Param.Value = ember.FromData(d.params[i], ember.Flex())
	}
	if err := nn.ToDevice(model, dev); err != nil {
		t.Fatal(err)
	}
	return model
}

// stepResult is what a training step returns: the loss, the gradient of
// the first parameter and every updated parameter.
type stepResult struct {
	loss   *ember.Tensor
	grad0  *ember.Tensor
	params []*ember.Tensor
}

// tensors lists the results in output order.
func (r stepResult) tensors() []*ember.Tensor {
	return append([]*ember.Tensor{r.loss, r.grad0}, r.params...)
}

// trainStep runs one step of model on (x, y) the way a user writes it:
// forward, cross-entropy, backward, one Adam update.
func trainStep(model nn.Module, x, y *ember.Tensor) stepResult {
	loss := nn.CrossEntropy(model.Forward(x), y)
	grads := loss.Backward()
	ps := model.NamedParameters()
	r := stepResult{loss: loss, grad0: grads.Of(ps[0].Param.Value)}
	optim.NewAdam(ps, optim.AdamConfig{LR: 0.01}).Step(grads)
	for _, p := range ps {
		r.params = append(r.params, p.Param.Value)
	}
	return r
}

// captureStep captures one training step of m with data d on a new
// autodiff capture device; the batch and labels are the inputs, and the
// outputs are those of stepResult.tensors.
func captureStep(t testing.TB, m stepModel, d stepData) *ember.CapturedGraph {
	t.Helper()
	dev := ember.Capture().Autodiff()
	model := modelOn(t, m, d, dev)
	x := ember.FromData(d.x, ember.Flex()).ToDevice(dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, ember.Flex()).ToDevice(dev)
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
	return g
}

// eagerStep runs the step of m with data d on dev (with autodiff) and
// returns its results' values.
func eagerStep(t testing.TB, m stepModel, d stepData, dev ember.Device) [][]float64 {
	t.Helper()
	ad := dev.Autodiff()
	model := modelOn(t, m, d, ad)
	x := ember.FromData(d.x, ember.Flex()).ToDevice(dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, ember.Flex()).ToDevice(dev)
	var out [][]float64
	for _, r := range trainStep(model, x, y).tensors() {
		out = append(out, r.Float64s())
	}
	return out
}

// stepInputs returns the graph inputs of a step, the batch and labels, on
// dev.
func stepInputs(d stepData, dev ember.Device) []*ember.Tensor {
	x := ember.FromData(d.x, ember.Flex()).ToDevice(dev)
	y := ember.FromInts(d.labels, []int{len(d.labels)}, ember.Flex()).ToDevice(dev)
	return []*ember.Tensor{x, y}
}

// values reads every tensor as float64s.
func values(ts []*ember.Tensor) [][]float64 {
	out := make([][]float64, len(ts))
	for i, x := range ts {
		out[i] = x.Float64s()
	}
	return out
}

// closeRel reports the first element of got that differs from want by
// more than tol relative to want's largest magnitude (per tensor), or -1.
func closeRel(got, want []float64, tol float64) (int, float64) {
	if len(got) != len(want) {
		return 0, math.Inf(1)
	}
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			return i, d / scale
		}
	}
	return -1, 0
}

// checkOutputs fails unless every tensor of got matches want to tol
// (relative to each tensor's largest magnitude).
func checkOutputs(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Errorf("%s: output %d has %d elements, want %d", what, i, len(got[i]), len(want[i]))
			continue
		}
		if j, rel := closeRel(got[i], want[i], tol); j >= 0 {
			t.Errorf("%s: output %d element %d: got %v, want %v (relative error %.3g > %g)", what, i, j, got[i][j], want[i][j], rel, tol)
		}
	}
}
