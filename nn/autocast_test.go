package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// bf16 rounds v to the nearest bfloat16 (ties to even), through float32:
// exact for the float32 values the tests use.
func bf16(v float64) float64 {
	return float64(ember.FromFloats([]float64{v}, []int{1}, ember.CPU()).Cast(ember.BF16).Float64s()[0])
}

// TestLinearAutocast checks nn.Linear on an autocast device: the output is
// BF16 (the bias cast to BF16, as PyTorch's autocast linear), its values
// are the product of the rounded operands rounded once, plus the rounded
// bias, rounded again (reference in float64, tolerance: the two
// roundings, 2·2^-8 relative, plus float32 accumulation over 13 terms);
// the gradient of the F32 weight is F32.
func TestLinearAutocast(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const in, out, batch = 13, 3, 4
	adev := ember.CPU().Autodiff()
	l := NewLinear(in, out, adev)
	xv := randVals(rng, batch*in)
	w, b := l.Weight.Value.Float64s(), l.Bias.Value.Float64s()
	y := l.Forward(ember.FromFloats(xv, []int{batch, in}, adev.Autocast(ember.BF16)))
	if y.DType() != ember.BF16 {
		t.Fatalf("autocast linear gives %v, want bf16", y.DType())
	}
	got := y.Float64s()
	for r := range batch {
		for o := range out {
			var s, abs float64
			for i := range in {
				p := bf16(float64(float32(xv[r*in+i]))) * bf16(w[o*in+i])
				s += p
				abs += math.Abs(p)
			}
			want := bf16(bf16(s) + bf16(b[o]))
			tol := 2*0x1p-8*(math.Abs(bf16(s))+math.Abs(b[o])) + in*0x1p-24*abs
			if d := math.Abs(got[r*out+o] - want); d > tol {
				t.Errorf("y[%d,%d] = %v, want %v (±%.3g)", r, o, got[r*out+o], want, tol)
			}
		}
	}
	g := y.Cast(ember.F32).Sum().Backward()
	for _, p := range []*Param{l.Weight, l.Bias} {
		if gp := g.Of(p.Value); gp == nil || gp.DType() != ember.F32 {
			t.Errorf("gradient of an F32 parameter through autocast: %v", gp)
		}
	}
	// Without autocast nothing changes.
	if y := l.Forward(ember.FromFloats(xv, []int{batch, in}, adev)); y.DType() != ember.F32 {
		t.Errorf("linear without autocast gives %v", y.DType())
	}
}

// TestLossesAutocast checks that the losses compute in F32 when their
// input is BF16 on an autocast device: the result is F32 and equals the
// loss of the same (BF16-representable) values computed in F32 on a
// device without autocast, to float32 rounding.
func TestLossesAutocast(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	amp := ember.CPU().Autocast(ember.BF16)
	predV, targV := randVals(rng, 24), randVals(rng, 24)
	pred := ember.FromFloats(predV, []int{6, 4}, amp).Cast(ember.BF16)
	pred32 := pred.Cast(ember.F32).ToDevice(ember.CPU())
	targ := ember.FromFloats(targV, []int{6, 4}, ember.CPU())
	probs := pred.Sigmoid()
	probs32 := probs.Cast(ember.F32).ToDevice(ember.CPU())
	labels := ember.FromInts([]int{0, 3, 1, 2, 2, 0}, []int{6}, ember.CPU())
	binary := targ.GtScalar(0).Cast(ember.F32)
	cases := []struct {
		name      string
		amp, want *ember.Tensor
	}{
		{"mse", MSE(pred, targ), MSE(pred32, targ)},
		{"mse_with", MSEWith(pred, targ, ReductionSum), MSEWith(pred32, targ, ReductionSum)},
		{"l1", L1(pred, targ, ReductionMean), L1(pred32, targ, ReductionMean)},
		{"huber", Huber(pred, targ, 0.5, ReductionMean), Huber(pred32, targ, 0.5, ReductionMean)},
		{"cross_entropy", CrossEntropy(pred, labels), CrossEntropy(pred32, labels)},
		{"cross_entropy_with", CrossEntropyWith(pred, labels, CrossEntropyOptions{LabelSmoothing: 0.1}),
			CrossEntropyWith(pred32, labels, CrossEntropyOptions{LabelSmoothing: 0.1})},
		{"nll", NLL(pred, labels, NLLOptions{}), NLL(pred32, labels, NLLOptions{})},
		{"bce", BinaryCrossEntropy(probs, binary, BCEOptions{}), BinaryCrossEntropy(probs32, binary, BCEOptions{})},
		{"bce_logits", BinaryCrossEntropyWithLogits(pred, binary, BCEOptions{}), BinaryCrossEntropyWithLogits(pred32, binary, BCEOptions{})},
		{"kl_div", KLDiv(pred.LogSoftmax(1).Cast(ember.BF16), targ.Softmax(1), false, ReductionBatchMean),
			KLDiv(pred32.LogSoftmax(1).Cast(ember.BF16).Cast(ember.F32), targ.Softmax(1), false, ReductionBatchMean)},
	}
	for _, c := range cases {
		if c.amp.DType() != ember.F32 {
			t.Errorf("%s under autocast: %v, want f32", c.name, c.amp.DType())
			continue
		}
		got, want := c.amp.Item(), c.want.Item()
		if d := math.Abs(got - want); d > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s under autocast = %v, the F32 loss of the same values %v", c.name, got, want)
		}
	}
	// Without autocast a BF16 prediction keeps its dtype (the loss of
	// BF16 operands is BF16, as before).
	if l := MSE(pred.ToDevice(ember.CPU()), targ.Cast(ember.BF16)); l.DType() != ember.BF16 {
		t.Errorf("mse of bf16 operands without autocast: %v", l.DType())
	}
}

// TestBatchNormAutocast checks that BatchNorm normalizes in F32 under
// autocast: the output is F32 and equals the F32 normalization of the
// same values.
func TestBatchNormAutocast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	v := randVals(rng, 2*3*4)
	x := ember.FromFloats(v, []int{2, 3, 4}, ember.CPU()).Cast(ember.BF16)
	bn, ref := NewBatchNorm(3, ember.CPU()), NewBatchNorm(3, ember.CPU())
	y := bn.Forward(x.ToDevice(ember.CPU().Autocast(ember.BF16)))
	want := ref.Forward(x.Cast(ember.F32))
	if y.DType() != ember.F32 {
		t.Fatalf("batch norm under autocast: %v, want f32", y.DType())
	}
	assertClose(t, "batch norm", y.Float64s(), want.Float64s(), 1e-6)
}

// TestToDType checks nn.ToDType: float parameters and buffers take the
// dtype (values rounded once), stay tracked leaves, and the module trains;
// integer buffers keep theirs; non-float dtypes are refused.
func TestToDType(t *testing.T) {
	adev := ember.CPU().Autodiff()
	m := NewSequential(NewLinear(4, 3, adev), NewBatchNorm(3, adev))
	before := m.NamedParameters()[0].Param.Value.Float64s()
	if err := ToDType(m, ember.F64); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.NamedParameters() {
		if p.Param.Value.DType() != ember.F64 || !p.Param.Value.IsTracked() {
			t.Errorf("%s: %v tracked %v", p.Name, p.Param.Value.DType(), p.Param.Value.IsTracked())
		}
	}
	for _, b := range NamedBuffers(m) {
		want := ember.F64
		if b.Name == "1.num_batches_tracked" {
			want = ember.I64
		}
		if b.Param.Value.DType() != want {
			t.Errorf("buffer %s: %v, want %v", b.Name, b.Param.Value.DType(), want)
		}
	}
	if got := m.NamedParameters()[0].Param.Value.Float64s(); !equalF64(got, before) {
		t.Error("F32 → F64 changed the values")
	}
	x := ember.FromFloats([]float32{1, 2, 3, 4, -1, 0.5, 2, 0}, []int{2, 4}, adev)
	y := m.Forward(x)
	if y.DType() != ember.F64 {
		t.Errorf("forward of the F64 module: %v", y.DType())
	}
	if g := y.Sum().Backward().Of(m.NamedParameters()[0].Param.Value); g == nil || g.DType() != ember.F64 {
		t.Errorf("gradient: %v", g)
	}
	if err := ToDType(m, ember.I32); err == nil {
		t.Error("ToDType(i32) accepted")
	}
	if err := ToDType(nil, ember.F32); err == nil {
		t.Error("ToDType(nil) accepted")
	}
	// BF16 rounds once to nearest even.
	l := NewLinear(2, 1, ember.CPU())
	l.Weight.Value = ember.FromFloats([]float32{1 + 0x1p-8, 1 + 3*0x1p-8}, []int{1, 2}, ember.CPU())
	if err := ToDType(l, ember.BF16); err != nil {
		t.Fatal(err)
	}
	if got := l.Weight.Value.Float64s(); got[0] != 1 || got[1] != 1+0x1p-6 {
		t.Errorf("bf16 weights %v, want [1 1.015625] (ties to even)", got)
	}
}

func equalF64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
