package optim

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
)

// capCase is a Capturable configuration under test.
type capCase struct {
	name string
	mk   func(ps []nn.NamedParam) Capturable
	// sgdMomentum marks an SGD with a momentum buffer, which exists only
	// after a first step.
	sgdMomentum bool
}

var capCases = []capCase{
	{name: "adam", mk: func(ps []nn.NamedParam) Capturable { return NewAdam(ps, AdamConfig{LR: 0.01}) }},
	{name: "adam l2", mk: func(ps []nn.NamedParam) Capturable {
		return NewAdam(ps, AdamConfig{LR: 0.02, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.03})
	}},
	{name: "adamw", mk: func(ps []nn.NamedParam) Capturable {
		return NewAdamW(ps, AdamConfig{LR: 0.01, WeightDecay: 0.05})
	}},
	{name: "sgd", mk: func(ps []nn.NamedParam) Capturable { return NewSGD(ps, SGDConfig{LR: 0.05}) }},
	{name: "sgd decay", mk: func(ps []nn.NamedParam) Capturable {
		return NewSGD(ps, SGDConfig{LR: 0.05, WeightDecay: 0.02})
	}},
	{name: "sgd momentum", sgdMomentum: true, mk: func(ps []nn.NamedParam) Capturable {
		return NewSGD(ps, SGDConfig{LR: 0.05, Momentum: 0.9})
	}},
	{name: "sgd nesterov decay", sgdMomentum: true, mk: func(ps []nn.NamedParam) Capturable {
		return NewSGD(ps, SGDConfig{LR: 0.05, Momentum: 0.8, Nesterov: true, WeightDecay: 0.01})
	}},
}

// capShapes are the parameter shapes of the direct tests: a matrix, a
// vector, a scalar, and a vector long enough for the cpu backend's
// parallel, vectorized paths.
var capShapes = [][]int{{3, 4}, {5}, {}, {1<<15 + 37}}

// randomData returns n random values of the shape in dtype dt, each of
// magnitude in [0.05, 1] with a random sign.
func randomData(rng *rand.Rand, shape []int, dt ember.DType) *ember.TensorData {
	n := ir.NumElements(shape)
	v := make([]float64, n)
	for i := range v {
		v[i] = 0.05 + 0.95*rng.Float64()
		if rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	if dt == ember.F64 {
		return ir.FromSlice(v, shape)
	}
	f := make([]float32, n)
	for i, x := range v {
		f[i] = float32(x)
	}
	return ir.FromSlice(f, shape)
}

// paramsOf makes tracked leaves on the autodiff device dev from data.
func paramsOf(data []*ember.TensorData, dev ember.Device) []nn.NamedParam {
	ps := make([]nn.NamedParam, len(data))
	for i, d := range data {
		ps[i] = nn.NamedParam{Name: fmt.Sprint("p", i), Param: &nn.Param{Value: ember.FromData(d, dev).RequireGrad()}}
	}
	return ps
}

// stepGrads is the gradient of Σᵢ sum(aᵢ·pᵢ·pᵢ + rᵢ·pᵢ), 2aᵢpᵢ + rᵢ:
// random and non-zero, and a function of the parameters.
func stepGrads(ps []nn.NamedParam, a, r []*ember.TensorData) *ember.Gradients {
	var loss *ember.Tensor
	for i, np := range ps {
		v := np.Param.Value
		dev := v.Device().Inner()
		ai, ri := ember.FromData(a[i], dev), ember.FromData(r[i], dev)
		li := v.Mul(v).Mul(ai).Add(v.Mul(ri)).Sum()
		if loss == nil {
			loss = li
		} else {
			loss = loss.Add(li)
		}
	}
	return loss.Backward()
}

// sameBits fails unless got and want have one dtype and shape and equal
// bytes.
func sameBits(t *testing.T, what string, got, want *ember.Tensor) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	if got.DType() != want.DType() || !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: got %v %v, want %v %v", what, got.Shape(), got.DType(), want.Shape(), want.DType())
	}
	gd, wd := got.Data(), want.Data()
	if !bytes.Equal(gd.Bytes, wd.Bytes) {
		g, w := gd.Float64s(), wd.Float64s()
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
				t.Fatalf("%s: element %d of %d is %v, want %v (bits differ)", what, i, len(g), g[i], w[i])
			}
		}
		t.Fatalf("%s: bytes differ", what)
	}
}

// sameState fails unless a and b, State results, are bit-identical.
func sameState(t *testing.T, what string, got, want []*ember.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d state tensors, want %d", what, len(got), len(want))
	}
	for i := range want {
		sameBits(t, fmt.Sprintf("%s: state %d", what, i), got[i], want[i])
	}
}

// wantScalars is NextScalars's result for step t with learning rate lr,
// written out from the package documentation.
func wantScalars(o Capturable, lr float64, t int) []float64 {
	switch o := o.(type) {
	case *Adam:
		c := o.cfg
		return []float64{1 - lr*c.WeightDecay, math.Sqrt(1 - math.Pow(c.Beta2, float64(t))), lr / (1 - math.Pow(c.Beta1, float64(t)))}
	case *AdamW:
		c := o.cfg
		return []float64{1 - lr*c.WeightDecay, math.Sqrt(1 - math.Pow(c.Beta2, float64(t))), lr / (1 - math.Pow(c.Beta1, float64(t)))}
	}
	return []float64{lr}
}

// logFusion records whether the cpu device fuses, which
// TestStepWithUnfused reads in its child's output.
func logFusion(t *testing.T) { t.Logf("cpu fusion: %v", ember.CPU().Fusion()) }

// TestStepWithMatchesStep runs 5 steps with Step on one copy of random
// parameters and 5 with NextScalars + StepWith on another, with a
// learning rate that changes every step and gradients that depend on the
// parameters: after every step the parameters and the state are
// bit-identical, NextScalars returns the numbers of the step, and the
// parameters are fresh tracked leaves that moved.
func TestStepWithMatchesStep(t *testing.T) {
	logFusion(t)
	for _, dev := range []ember.Device{ember.CPU(), ember.Flex()} {
		for _, c := range capCases {
			for _, dt := range []ember.DType{ember.F32, ember.F64} {
				if dt == ember.F64 && c.name != "adamw" && c.name != "sgd nesterov decay" {
					continue
				}
				t.Run(fmt.Sprintf("%v/%s/%v", dev, c.name, dt), func(t *testing.T) {
					testStepWithMatchesStep(t, dev, c, dt)
				})
			}
		}
	}
}

func testStepWithMatchesStep(t *testing.T, dev ember.Device, c capCase, dt ember.DType) {
	rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
	var init, a []*ember.TensorData
	for _, s := range capShapes {
		init = append(init, randomData(rng, s, dt))
		a = append(a, randomData(rng, s, dt))
	}
	ad := dev.Autodiff()
	pa, pb := paramsOf(init, ad), paramsOf(init, ad)
	oa, ob := c.mk(pa), c.mk(pb)
	base := oa.LR()
	for step := 1; step <= 5; step++ {
		lr := base * (1 - 0.15*float64(step-1))
		oa.SetLR(lr)
		ob.SetLR(lr)
		var r []*ember.TensorData
		for _, s := range capShapes {
			r = append(r, randomData(rng, s, dt))
		}
		old := pb[0].Param.Value
		ga, gb := stepGrads(pa, a, r), stepGrads(pb, a, r)
		want := wantScalars(ob, lr, step)
		for range 2 { // peeking advances nothing
			if p := ob.NextScalarsPeek(); !slices.Equal(p, want) {
				t.Fatalf("step %d: NextScalarsPeek = %v, want %v", step, p, want)
			}
		}
		s := ob.NextScalars()
		if !slices.Equal(s, want) {
			t.Fatalf("step %d: NextScalars = %v, want %v", step, s, want)
		}
		oa.Step(ga)
		ob.StepWith(gb, f64(s, dev))
		for i := range pa {
			sameBits(t, fmt.Sprintf("step %d: parameter %d", step, i), pb[i].Param.Value.Inner(), pa[i].Param.Value.Inner())
		}
		sameState(t, fmt.Sprintf("step %d", step), ob.State(), oa.State())
		v := pb[0].Param.Value
		if v == old || !v.IsTracked() || !v.Device().Equal(dev) || !v.Device().IsAutodiff() {
			t.Fatalf("step %d: parameter 0 is not a fresh tracked leaf on %v", step, ad)
		}
		if bytes.Equal(v.Data().Bytes, old.Data().Bytes) {
			t.Fatalf("step %d: parameter 0 did not change", step)
		}
	}
	if c.sgdMomentum || strings.HasPrefix(c.name, "adam") {
		if len(ob.State()) == 0 {
			t.Fatal("no state")
		}
	} else if ob.State() != nil {
		t.Fatalf("SGD without momentum has state %v", ob.State())
	}
}

// TestStepWithReadsScalars gives StepWith the numbers of another learning
// rate than the optimizer's own: the result is Step's at that rate, so
// the numbers come from the tensor.
func TestStepWithReadsScalars(t *testing.T) {
	dev := ember.CPU()
	for _, c := range capCases {
		rng := rand.New(rand.NewPCG(8, uint64(len(c.name))))
		var init, a, r []*ember.TensorData
		for _, s := range capShapes[:3] {
			init = append(init, randomData(rng, s, ember.F32))
			a = append(a, randomData(rng, s, ember.F32))
			r = append(r, randomData(rng, s, ember.F32))
		}
		ad := dev.Autodiff()
		pa, pb, pc := paramsOf(init, ad), paramsOf(init, ad), paramsOf(init, ad)
		oa, ob, oc := c.mk(pa), c.mk(pb), c.mk(pc)
		oa.SetLR(oa.LR() / 3)
		oc.SetLR(oa.LR())
		ob.NextScalars() // ob's own numbers (its step count advances)
		oa.Step(stepGrads(pa, a, r))
		ob.StepWith(stepGrads(pb, a, r), f64(oc.NextScalars(), dev))
		for i := range pa {
			sameBits(t, c.name+": parameter "+fmt.Sprint(i), pb[i].Param.Value.Inner(), pa[i].Param.Value.Inner())
		}
	}
}

// TestSetStateThenStep moves the state of an optimizer that took 2 steps
// into a fresh one over copies of its parameters (advancing its step
// counts with NextScalars): a third Step of each gives the same bits.
func TestSetStateThenStep(t *testing.T) {
	dev := ember.CPU().Autodiff()
	for _, c := range capCases {
		rng := rand.New(rand.NewPCG(9, uint64(len(c.name))))
		var init, a []*ember.TensorData
		for _, s := range capShapes[:3] {
			init = append(init, randomData(rng, s, ember.F32))
			a = append(a, randomData(rng, s, ember.F32))
		}
		grad := func(ps []nn.NamedParam, k int) *ember.Gradients {
			r := rand.New(rand.NewPCG(10, uint64(k)))
			var rs []*ember.TensorData
			for _, s := range capShapes[:3] {
				rs = append(rs, randomData(r, s, ember.F32))
			}
			return stepGrads(ps, a, rs)
		}
		pa := paramsOf(init, dev)
		oa := c.mk(pa)
		oa.Step(grad(pa, 1))
		oa.Step(grad(pa, 2))
		var now []*ember.TensorData
		for _, np := range pa {
			now = append(now, np.Param.Value.Data())
		}
		pb := paramsOf(now, dev)
		ob := c.mk(pb)
		ob.SetState(oa.State())
		ob.NextScalars()
		ob.NextScalars()
		oa.Step(grad(pa, 3))
		ob.Step(grad(pb, 3))
		for i := range pa {
			sameBits(t, c.name+": parameter "+fmt.Sprint(i), pb[i].Param.Value.Inner(), pa[i].Param.Value.Inner())
		}
		sameState(t, c.name, ob.State(), oa.State())
	}
}

// capModel is the network of the captured step: 5 → 4 → GELU → 3.
func capModel() nn.Module {
	return nn.NewSequential(nn.NewLinear(5, 4, ember.Flex()), nn.Gelu{}, nn.NewLinear(4, 3, ember.Flex()))
}

// modelWith returns capModel with the parameter values data, on dev.
func modelWith(t *testing.T, data []*ember.TensorData, dev ember.Device) nn.Module {
	t.Helper()
	m := capModel()
	for i, np := range m.NamedParameters() {
		np.Param.Value = ember.FromData(data[i], ember.Flex())
	}
	if err := nn.ToDevice(m, dev); err != nil {
		t.Fatal(err)
	}
	return m
}

// batch is one step's input and target.
type batch struct{ x, y *ember.TensorData }

// TestCapturedStepReplays captures a training step (forward, MSE,
// backward, StepWith) of a small network on an autodiff capture device,
// with the parameters, the optimizer state, the step's numbers and the
// batch as graph inputs and the new parameters and state as outputs, and
// replays it on cpu for 3 batches, feeding the outputs back and fresh
// NextScalars (at a changing learning rate) in each time: after every
// replay the parameters and state are bit-identical to eager Step on cpu.
// The graph holds no optimizer op and no baked-in value.
func TestCapturedStepReplays(t *testing.T) {
	logFusion(t)
	for _, c := range capCases {
		t.Run(c.name, func(t *testing.T) { testCapturedStepReplays(t, c) })
	}
}

func testCapturedStepReplays(t *testing.T, c capCase) {
	rng := rand.New(rand.NewPCG(11, uint64(len(c.name))))
	var init []*ember.TensorData
	for _, np := range capModel().NamedParameters() {
		init = append(init, randomData(rng, np.Param.Value.Shape(), ember.F32))
	}
	batches := make([]batch, 4)
	for i := range batches {
		batches[i] = batch{randomData(rng, []int{6, 5}, ember.F32), randomData(rng, []int{6, 3}, ember.F32)}
	}
	cpu := ember.CPU()
	loss := func(m nn.Module, b batch, dev ember.Device) *ember.Tensor {
		return nn.MSE(m.Forward(ember.FromData(b.x, dev)), ember.FromData(b.y, dev))
	}
	ref := modelWith(t, init, cpu.Autodiff())
	refOpt := c.mk(ref.NamedParameters())
	base := refOpt.LR()
	lrs := []float64{base, 0.7 * base, 1.3 * base}
	if c.sgdMomentum {
		// The momentum buffers exist after a first step: take it eagerly.
		refOpt.Step(loss(ref, batches[3], cpu.Autodiff()).Backward())
	}

	// The capture copy starts from the reference's parameters and state.
	capDev := ember.Capture().Autodiff()
	var now []*ember.TensorData
	for _, np := range ref.NamedParameters() {
		now = append(now, np.Param.Value.Data())
	}
	capM := modelWith(t, now, capDev)
	capOpt := c.mk(capM.NamedParameters())
	state0 := refOpt.State()
	var capState []*ember.Tensor
	for _, x := range state0 {
		capState = append(capState, x.ToDevice(capDev.Inner()))
	}
	capOpt.SetState(capState)
	capOpt.SetLR(lrs[0])
	first := capOpt.NextScalars()
	s := f64(make([]float64, len(first)), capDev.Inner())
	x := ember.FromData(batches[0].x, capDev)
	y := ember.FromData(batches[0].y, capDev)
	var keep []*ember.Tensor // the outputs, alive until Complete
	g, err := capDev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		var in, out []ember.TensorID
		ps := capM.NamedParameters()
		for _, np := range ps {
			in = append(in, np.Param.Value.ID())
		}
		for _, st := range capOpt.State() {
			in = append(in, st.ID())
		}
		in = append(in, s.ID(), x.ID(), y.ID())
		l := nn.MSE(capM.Forward(x), y)
		capOpt.StepWith(l.Backward(), s)
		for _, np := range ps {
			keep = append(keep, np.Param.Value)
		}
		keep = append(keep, capOpt.State()...)
		for _, k := range keep {
			out = append(out, k.ID())
		}
		return sc.Complete(in, out)
	})
	if err != nil {
		t.Fatal(err)
	}
	np, ns := len(capM.NamedParameters()), len(state0)
	if len(g.Inputs) != np+ns+3 || len(g.Outputs) != np+ns || len(g.Values) != 0 {
		t.Fatalf("graph: %d inputs, %d outputs, %d values; want %d, %d, 0", len(g.Inputs), len(g.Outputs), len(g.Values), np+ns+3, np+ns)
	}
	if in := g.Inputs[np+ns]; in.DType != ember.F64 || !slices.Equal(in.Shape, []int{len(first)}) {
		t.Fatalf("the numbers' input is %v %v", in.Shape, in.DType)
	}
	for _, r := range g.Operations {
		if r.Kind == ir.KindAdamStep || r.Kind == ir.KindSGDStep {
			t.Fatalf("the graph holds a %v op, whose numbers are constants", r.Kind)
		}
	}

	params := make([]*ember.Tensor, 0, np)
	for _, p := range ref.NamedParameters() {
		params = append(params, p.Param.Value.Inner())
	}
	state := state0
	nums := first
	for k := range 3 {
		if k > 0 {
			capOpt.SetLR(lrs[k])
			nums = capOpt.NextScalars()
		}
		inputs := slices.Concat(params, state, []*ember.Tensor{
			f64(nums, cpu), ember.FromData(batches[k].x, cpu), ember.FromData(batches[k].y, cpu)})
		outs, err := g.Run(cpu, inputs...)
		if err != nil {
			t.Fatalf("replay %d: %v", k, err)
		}
		params, state = outs[:np], outs[np:]

		refOpt.SetLR(lrs[k])
		refOpt.Step(loss(ref, batches[k], cpu.Autodiff()).Backward())
		for i, p := range ref.NamedParameters() {
			sameBits(t, fmt.Sprintf("replay %d: parameter %d", k, i), params[i], p.Param.Value.Inner())
		}
		sameState(t, fmt.Sprintf("replay %d", k), state, refOpt.State())
	}
}

// TestScalarTensorOpsMatchScalarOps checks the property StepWith rests
// on: dividing and multiplying by a float64 element cast to the dtype and
// broadcast equals DivScalar and MulScalar of the element, bit for bit,
// at sizes that take the cpu backend's serial, vectorized and parallel
// paths.
func TestScalarTensorOpsMatchScalarOps(t *testing.T) {
	logFusion(t)
	rng := rand.New(rand.NewPCG(12, 13))
	for _, dev := range []ember.Device{ember.CPU(), ember.Flex()} {
		for _, dt := range []ember.DType{ember.F32, ember.F64} {
			for _, n := range []int{1, 7, 1000, 1<<15 + 37} {
				x := ember.FromData(randomData(rng, []int{n}, dt), dev)
				v := math.Sqrt(1 - math.Pow(0.999, float64(1+rng.IntN(50)))) // not exact in f32
				st := f64([]float64{0.25, v}, dev).Narrow(0, 1, 1).Reshape().Cast(dt)
				what := fmt.Sprintf("%v %v n=%d", dev, dt, n)
				sameBits(t, what+": Div", x.Div(st), x.DivScalar(v))
				sameBits(t, what+": Mul", x.Mul(st), x.MulScalar(v))
				sameBits(t, what+": Sqrt·Div", x.Mul(x).Sqrt().Div(st).AddScalar(1e-8), x.Mul(x).Sqrt().DivScalar(v).AddScalar(1e-8))
			}
		}
	}
}

// TestStepWithUnfused runs TestStepWithMatchesStep,
// TestCapturedStepReplays and TestScalarTensorOpsMatchScalarOps again in
// a child process with EMBER_FUSION=0,
// so that cpu runs every op on its own.
func TestStepWithUnfused(t *testing.T) {
	if !ember.CPU().Fusion() {
		t.Skip("fusion is off in this process: the other tests ran unfused")
	}
	if testing.Short() {
		t.Skip("runs a child test process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^(TestStepWithMatchesStep|TestCapturedStepReplays|TestScalarTensorOpsMatchScalarOps)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), ember.FusionEnv+"=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{"cpu fusion: false", "--- PASS: TestStepWithMatchesStep", "--- PASS: TestCapturedStepReplays", "--- PASS: TestScalarTensorOpsMatchScalarOps"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Fatalf("the child's output lacks %q:\n%s", want, out)
		}
	}
}

// TestCapturablePanics checks the *ember.Errors of State, SetState,
// NextScalars, NextScalarsPeek and StepWith, and that a rejected SetState
// or StepWith changes nothing.
func TestCapturablePanics(t *testing.T) {
	dev := ember.CPU().Autodiff()
	two := func() []nn.NamedParam {
		return []nn.NamedParam{
			{Name: "w", Param: &nn.Param{Value: f64([]float64{1, -2, 3}, dev).Cast(ember.F32).RequireGrad()}},
			{Name: "b", Param: &nn.Param{Value: f64([]float64{0.5}, dev).Cast(ember.F32).RequireGrad()}},
		}
	}
	grads := func(ps []nn.NamedParam) *ember.Gradients {
		return ps[0].Param.Value.Sum().Add(ps[1].Param.Value.Sum().MulScalar(2)).Backward()
	}
	f32 := func(n int) *ember.Tensor { return ember.Zeros([]int{n}, dev.Inner()) }

	ps := two()
	adam := NewAdam(ps, AdamConfig{})
	before := adam.State()
	if len(before) != 4 {
		t.Fatalf("Adam over 2 parameters has %d state tensors, want 4", len(before))
	}
	for i, x := range before {
		if x.Device().IsAutodiff() || !slices.Equal(x.Shape(), ps[i/2].Param.Value.Shape()) || slices.ContainsFunc(x.Float64s(), func(v float64) bool { return v != 0 }) {
			t.Fatalf("Adam's initial state %d is %v on %v, want zeros of its parameter's shape on the inner device", i, x, x.Device())
		}
	}
	emberError(t, "adam SetState count", "adam", func() { adam.SetState(before[:3]) }, "got 3 tensors, want 4")
	emberError(t, "adam SetState nil", "adam", func() { adam.SetState([]*ember.Tensor{before[0], nil, before[2], before[3]}) }, "state 1 (v of parameter 0) is nil")
	emberError(t, "adam SetState shape", "adam", func() { adam.SetState([]*ember.Tensor{before[0], before[1], f32(2), before[3]}) },
		"state 2 (m of parameter 1) [2] f32", "shape and dtype")
	emberError(t, "adam SetState dtype", "adam", func() {
		adam.SetState([]*ember.Tensor{before[0], before[1].Cast(ember.F64), before[2], before[3]})
	}, "state 1 (v of parameter 0) [3] f64")
	if after := adam.State(); !slices.Equal(after, before) {
		t.Error("a rejected SetState changed the state")
	}
	emberError(t, "adam StepWith before NextScalars", "adam", func() { adam.StepWith(grads(ps), f64([]float64{1, 1, 1}, dev)) }, "call NextScalars")
	adam.NextScalars()
	emberError(t, "adam StepWith nil", "adam", func() { adam.StepWith(grads(ps), nil) }, "got nil")
	emberError(t, "adam StepWith f32", "adam", func() { adam.StepWith(grads(ps), f32(3)) }, "float64 tensor of shape [3]")
	emberError(t, "adam StepWith shape", "adam", func() { adam.StepWith(grads(ps), f64([]float64{1, 1}, dev)) }, "scalars [2] f64")
	emberError(t, "adam StepWith device", "adam", func() { adam.StepWith(grads(ps), f64([]float64{1, 1, 1}, ember.Flex())) }, "parameters' device")
	old := ps[0].Param.Value
	emberError(t, "adam StepWith missing gradient", "adam", func() {
		adam.StepWith(ps[0].Param.Value.Sum().Backward(), f64([]float64{1, 1, 1}, dev))
	}, `parameter 1 "b"`, "nothing was updated")
	if ps[0].Param.Value != old || !slices.Equal(adam.State(), before) {
		t.Error("a rejected StepWith changed a parameter or the state")
	}

	// Different step counts: Step with AllowMissingGrads skips b.
	qs := two()
	allow := NewAdamW(qs, AdamConfig{AllowMissingGrads: true})
	allow.Step(qs[0].Param.Value.Sum().Backward())
	emberError(t, "adamw NextScalars", "adamw", func() { allow.NextScalars() }, `parameter 0 "w" at step 1`, `parameter 1 "b" at step 0`)
	emberError(t, "adamw NextScalarsPeek", "adamw", func() { allow.NextScalarsPeek() }, `parameter 1 "b" at step 0`)
	// StepWith with AllowMissingGrads skips b and keeps its count as NextScalars set it.
	ws := two()
	skip := NewAdam(ws, AdamConfig{AllowMissingGrads: true})
	bOld := ws[1].Param.Value
	skip.StepWith(ws[0].Param.Value.Sum().Backward(), f64(skip.NextScalars(), dev))
	if ws[1].Param.Value != bOld {
		t.Error("StepWith updated a parameter without a gradient")
	}
	if got := skip.NextScalars(); !slices.Equal(got, wantScalars(skip, skip.LR(), 2)) {
		t.Errorf("after StepWith skipped a parameter, NextScalars = %v, want step 2's", got)
	}

	rs := two()
	sgd := NewSGD(rs, SGDConfig{LR: 0.1, Momentum: 0.9})
	emberError(t, "sgd State before a step", "sgd", func() { sgd.State() }, `parameter 0 "w"`, "no momentum buffer yet")
	emberError(t, "sgd SetState count", "sgd", func() { sgd.SetState([]*ember.Tensor{f32(3)}) }, "got 1 tensors, want 2")
	emberError(t, "sgd SetState shape", "sgd", func() { sgd.SetState([]*ember.Tensor{f32(3), f32(3)}) }, "state 1 (momentum buffer of parameter 1) [3] f32")
	emberError(t, "sgd StepWith shape", "sgd", func() { sgd.StepWith(grads(rs), f64([]float64{1, 1, 1}, dev)) }, "float64 tensor of shape [1]")
	sgd.SetState([]*ember.Tensor{f32(3), f32(1)})
	if st := sgd.State(); len(st) != 2 || st[1].Dim(0) != 1 {
		t.Errorf("SGD state after SetState: %v", st)
	}
	plain := NewSGD(two(), SGDConfig{LR: 0.1})
	if plain.State() != nil {
		t.Error("SGD without momentum has state")
	}
	plain.SetState(nil)
	emberError(t, "sgd SetState without momentum", "sgd", func() { plain.SetState([]*ember.Tensor{f32(3)}) }, "without momentum has no state")
}

// ExampleCapturable records one training step of a one-parameter model
// with AdamW's StepWith and replays it for three batches, feeding the
// parameter and the moment estimates back in; the result is that of
// eager Step.
func ExampleCapturable() {
	cpu := ember.CPU()
	w0 := ember.FromFloats([]float32{0.5, -1, 2}, []int{3}, cpu)
	batches := [][]float32{{1, 0, 1}, {0.5, 0.5, 0.5}, {2, -1, 0}}
	loss := func(w, x *ember.Tensor) *ember.Tensor { d := w.Sub(x); return d.Mul(d).Sum() } // Σ(w − x)²

	// Record the step on a capture device, everything it reads an input.
	dev := ember.Capture().Autodiff()
	w := &nn.Param{Value: w0.ToDevice(dev).RequireGrad()}
	opt := NewAdamW([]nn.NamedParam{{Name: "w", Param: w}}, AdamConfig{LR: 0.1})
	opt.SetState([]*ember.Tensor{ember.ZerosLike(w0).ToDevice(dev.Inner()), ember.ZerosLike(w0).ToDevice(dev.Inner())})
	nums := opt.NextScalars()
	s := ember.FromData(ir.FromSlice(make([]float64, len(nums)), []int{len(nums)}), dev.Inner())
	x := ember.FromFloats([]float32{0, 0, 0}, []int{3}, dev)
	var outs []*ember.Tensor
	g, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		st := opt.State()
		in := []ember.TensorID{w.Value.ID(), st[0].ID(), st[1].ID(), s.ID(), x.ID()}
		opt.StepWith(loss(w.Value, x).Backward(), s)
		outs = append([]*ember.Tensor{w.Value}, opt.State()...)
		return sc.Complete(in, []ember.TensorID{outs[0].ID(), outs[1].ID(), outs[2].ID()})
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Replay it on cpu, and take the same steps eagerly.
	state := []*ember.Tensor{w0, ember.ZerosLike(w0), ember.ZerosLike(w0)}
	ref := &nn.Param{Value: w0.ToDevice(cpu.Autodiff()).RequireGrad()}
	refOpt := NewAdamW([]nn.NamedParam{{Name: "w", Param: ref}}, AdamConfig{LR: 0.1})
	for k, b := range batches {
		if k > 0 {
			nums = opt.NextScalars()
		}
		xb := ember.FromFloats(b, []int{3}, cpu)
		sb := ember.FromData(ir.FromSlice(nums, []int{len(nums)}), cpu)
		state, err = g.Run(cpu, state[0], state[1], state[2], sb, xb)
		if err != nil {
			fmt.Println(err)
			return
		}
		refOpt.Step(loss(ref.Value, xb.ToDevice(cpu.Autodiff())).Backward())
		fmt.Printf("step %d: w = %.4f, equal to Step: %v\n", k+1, state[0].Float32s(),
			slices.Equal(state[0].Float32s(), ref.Value.Float32s()))
	}
	// Output:
	// step 1: w = [0.5995 -0.8990 1.8980], equal to Step: true
	// step 2: w = [0.6501 -0.7986 1.7966], equal to Step: true
	// step 3: w = [0.7232 -0.7288 1.6955], equal to Step: true
}
