package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// scalerModel is one F32 parameter w [2] = [1, 2] on cpu+autodiff with the
// loss Σ w ⊙ c, whose gradient is c.
type scalerModel struct {
	p      *nn.Param
	params []nn.NamedParam
}

func newScalerModel() *scalerModel {
	p := &nn.Param{Value: ember.FromFloats([]float32{1, 2}, []int{2}, ember.CPU().Autodiff()).RequireGrad()}
	return &scalerModel{p: p, params: []nn.NamedParam{{Name: "w", Param: p}}}
}

func (m *scalerModel) loss(c []float32) *ember.Tensor {
	return m.p.Value.Mul(ember.FromFloats(c, []int{2}, ember.CPU())).Sum()
}

// TestGradScalerSequence checks the scale, the skipped steps and the
// parameters over a hand-worked sequence of steps with finite gradients
// (F) and gradients that overflow once scaled (I: c = [3e38, 0], whose
// loss is finite but whose scaled gradient is Inf in F32), with
// InitScale 8, GrowthFactor 2, BackoffFactor 0.5 and GrowthInterval 3:
//
//	step      1  2  3  4  5  6  7  8  9 10 11 12
//	grads     F  F  F  I  F  F  I  I  F  F  F  F
//	stepped   y  y  y  n  y  y  n  n  y  y  y  y
//	scale     8  8 16  8  8  8  4  2  2  2  4  4   (after Update)
//
// An SGD step (lr 0.125) on finite gradients c = [0.5, -0.25] subtracts
// exactly [0.0625, -0.03125] (the scale is a power of two, so unscaling
// is exact); a skipped step leaves w as it was.
func TestGradScalerSequence(t *testing.T) {
	m := newScalerModel()
	opt := NewSGD(m.params, SGDConfig{LR: 0.125})
	s := NewGradScaler(m.params, GradScalerConfig{InitScale: 8, GrowthFactor: 2, BackoffFactor: 0.5, GrowthInterval: 3})
	if s.LossScale() != 8 {
		t.Fatalf("initial scale %v", s.LossScale())
	}
	finite, overflow := []float32{0.5, -0.25}, []float32{3e38, 0}
	seq := "FFFIFFIIFFFF"
	wantScale := []float64{8, 8, 16, 8, 8, 8, 4, 2, 2, 2, 4, 4}
	w := []float64{1, 2}
	for i, kind := range seq {
		c := finite
		if kind == 'I' {
			c = overflow
		}
		loss := m.loss(c)
		if math.IsInf(loss.Item(), 0) {
			t.Fatalf("step %d: the unscaled loss is not finite", i+1)
		}
		scaled := s.Scale(loss)
		if got, want := scaled.Item(), loss.Item()*s.LossScale(); kind == 'F' && got != want {
			t.Errorf("step %d: scaled loss %v, want %v", i+1, got, want)
		}
		grads := scaled.Backward()
		ok := s.Unscale(grads)
		if ok != (kind == 'F') {
			t.Errorf("step %d: Unscale says finite=%v", i+1, ok)
		}
		if ok {
			if g := grads.Of(m.p.Value).Float64s(); g[0] != 0.5 || g[1] != -0.25 {
				t.Errorf("step %d: unscaled gradient %v, want [0.5 -0.25]", i+1, g)
			}
		}
		stepped := s.Step(opt, grads)
		if stepped != (kind == 'F') {
			t.Errorf("step %d: stepped %v", i+1, stepped)
		}
		if stepped {
			w[0] -= 0.125 * 0.5
			w[1] += 0.125 * 0.25
		}
		s.Update()
		if s.LossScale() != wantScale[i] {
			t.Errorf("step %d: scale %v, want %v", i+1, s.LossScale(), wantScale[i])
		}
		if got := m.p.Value.Float64s(); got[0] != w[0] || got[1] != w[1] {
			t.Errorf("step %d: w = %v, want %v", i+1, got, w)
		}
	}
	if st := s.StateDict(); st.Scale != 4 || st.GrowthTracker != 1 {
		t.Errorf("StateDict = %+v, want scale 4, tracker 1", st)
	}
}

// TestGradScalerSkipKeepsAdamState checks that a skipped step leaves an
// Adam optimizer's moments and step count as they were.
func TestGradScalerSkipKeepsAdamState(t *testing.T) {
	m := newScalerModel()
	opt := NewAdam(m.params, AdamConfig{LR: 0.01})
	s := NewGradScaler(m.params, GradScalerConfig{})
	s.Step(opt, s.Scale(m.loss([]float32{0.5, -0.25})).Backward())
	s.Update()
	state := opt.State()
	before := make([][]float64, len(state))
	for i, x := range state {
		before[i] = x.Float64s()
	}
	w := m.p.Value.Float64s()
	if s.Step(opt, s.Scale(m.loss([]float32{3e38, 0})).Backward()) {
		t.Fatal("a step with overflowing gradients was taken")
	}
	s.Update()
	for i, x := range opt.State() {
		if got := x.Float64s(); !sameFloats(got, before[i]) {
			t.Errorf("Adam state %d changed by a skipped step: %v, was %v", i, got, before[i])
		}
	}
	if got := m.p.Value.Float64s(); !sameFloats(got, w) {
		t.Errorf("w changed by a skipped step: %v, was %v", got, w)
	}
	if s.LossScale() != DefaultInitScale*DefaultBackoffFactor {
		t.Errorf("scale %v after one overflow", s.LossScale())
	}
}

// TestGradScalerDefaults checks PyTorch's defaults: 2^16 at first, doubled
// after the 2000th consecutive finite step (reached here through
// LoadStateDict), and never grown past the largest float32.
func TestGradScalerDefaults(t *testing.T) {
	m := newScalerModel()
	opt := NewSGD(m.params, SGDConfig{LR: 0.01})
	s := NewGradScaler(m.params, GradScalerConfig{})
	if s.LossScale() != 65536 {
		t.Fatalf("default initial scale %v", s.LossScale())
	}
	step := func() {
		s.Step(opt, s.Scale(m.loss([]float32{0.5, 0.5})).Backward())
		s.Update()
	}
	if err := s.LoadStateDict(GradScalerState{Scale: 65536, GrowthTracker: 1998}); err != nil {
		t.Fatal(err)
	}
	step()
	if st := s.StateDict(); st.Scale != 65536 || st.GrowthTracker != 1999 {
		t.Fatalf("after the 1999th finite step: %+v", st)
	}
	step()
	if st := s.StateDict(); st.Scale != 131072 || st.GrowthTracker != 0 {
		t.Fatalf("after the 2000th finite step: %+v, want scale 131072, tracker 0", st)
	}
	// 2^127·2 overflows float32: the scale stays.
	big := float64(math.Float32frombits(0x7f000000)) // 2^127
	if err := s.LoadStateDict(GradScalerState{Scale: big, GrowthTracker: 1999}); err != nil {
		t.Fatal(err)
	}
	s.Step(opt, s.Scale(m.loss([]float32{0, 0})).Backward())
	s.Update()
	if st := s.StateDict(); st.Scale != big || st.GrowthTracker != 0 {
		t.Errorf("growth past float32: %+v, want the scale kept at 2^127", st)
	}
}

// TestGradScalerMisuse checks the panics and errors: Update without a
// step, unscaling twice, invalid configs (naming the field), F16
// parameters, and bad states.
func TestGradScalerMisuse(t *testing.T) {
	m := newScalerModel()
	s := NewGradScaler(m.params, GradScalerConfig{})
	expectPanic := func(what, want string, f func()) {
		t.Helper()
		err := ember.Try(f)
		var e *ember.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an *ember.Error containing %q", what, err, want)
		}
	}
	expectPanic("Update first", "no inf checks", s.Update)
	grads := s.Scale(m.loss([]float32{1, 1})).Backward()
	s.Unscale(grads)
	expectPanic("Unscale twice", "already unscaled", func() { s.Unscale(grads) })
	expectPanic("nil grads", "nil Gradients", func() { s.Unscale(nil) })
	expectPanic("nil optimizer", "nil optimizer", func() { s.Step(nil, grads) })
	expectPanic("int loss", "float loss", func() { s.Scale(ember.FromInts([]int{1}, []int{1}, ember.CPU())) })
	for field, cfg := range map[string]GradScalerConfig{
		"InitScale":      {InitScale: -1},
		"GrowthFactor":   {GrowthFactor: 1},
		"BackoffFactor":  {BackoffFactor: 1.5},
		"GrowthInterval": {GrowthInterval: -2},
	} {
		expectPanic(field, "GradScalerConfig."+field, func() { NewGradScaler(m.params, cfg) })
	}
	half := &nn.Param{Value: ember.FromFloats([]float32{1}, []int{1}, ember.CPU().Autodiff()).Cast(ember.F16).RequireGrad()}
	expectPanic("f16 parameter", "master weights", func() { NewGradScaler([]nn.NamedParam{{Name: "h", Param: half}}, GradScalerConfig{}) })
	before := s.StateDict()
	for _, st := range []GradScalerState{{Scale: 0}, {Scale: math.Inf(1)}, {Scale: 1, GrowthTracker: -1}, {Scale: 1, GrowthTracker: 2000}} {
		if err := s.LoadStateDict(st); err == nil {
			t.Errorf("LoadStateDict(%+v) accepted", st)
		}
	}
	if err := s.LoadStateDict(GradScalerState{Scale: 1, GrowthTracker: 2000}); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("a growth tracker past GrowthInterval: %v, want ErrStateMismatch", err)
	}
	if after := s.StateDict(); after != before {
		t.Errorf("refused states changed the scaler from %+v to %+v", before, after)
	}
	if c := s.Config(); c != (GradScalerConfig{InitScale: DefaultInitScale, GrowthFactor: DefaultGrowthFactor, BackoffFactor: DefaultBackoffFactor, GrowthInterval: DefaultGrowthInterval}) {
		t.Errorf("Config() = %+v, want the defaults", c)
	}
}

// TestGradScalerF16Training trains y = 3x + 2 with the product in F16
// (the parameters F32 on an autocast device) and Adam, scaled and
// unscaled by a GradScaler: the parameters never become NaN, the first
// steps are skipped while the scale comes down from 2^16 (the scaled
// gradients, about 2^16·10, overflow F16's 65504), and the fit reaches
// the line to within F16's accuracy (|error| < 0.02 after 300 steps).
func TestGradScalerF16Training(t *testing.T) {
	dev := ember.CPU().Autodiff()
	dev.Seed(7)
	model := nn.NewLinear(1, 1, dev)
	amp := dev.Autocast(ember.F16)
	x := ember.Linspace(-1, 1, 16, amp).Reshape(16, 1)
	y := x.MulScalar(3).AddScalar(2)
	opt := NewAdam(model.NamedParameters(), AdamConfig{LR: 0.05})
	s := NewGradScaler(model.NamedParameters(), GradScalerConfig{})
	skipped := 0
	for step := range 300 {
		loss := nn.MSE(model.Forward(x), y)
		if !s.Step(opt, s.Scale(loss).Backward()) {
			skipped++
		}
		s.Update()
		for _, p := range model.NamedParameters() {
			if v := p.Param.Value.Float64s(); math.IsNaN(v[0]) || math.IsInf(v[0], 0) {
				t.Fatalf("step %d: %s = %v", step, p.Name, v)
			}
		}
	}
	if skipped == 0 || skipped > 10 {
		t.Errorf("%d steps skipped, want a few while the scale comes down", skipped)
	}
	w, b := model.Weight.Value.Item(), model.Bias.Value.Item()
	if math.Abs(w-3) > 0.02 || math.Abs(b-2) > 0.02 {
		t.Errorf("fit y = %v·x + %v, want 3·x + 2", w, b)
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
