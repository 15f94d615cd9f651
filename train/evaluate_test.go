package train

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
)

// referenceAccuracy classifies ds with the MLP's parameters in float64
// loops: logits = W2·relu(W1·x + b1) + b2, argmax with the lowest index on
// ties.
func referenceAccuracy(t *testing.T, m nn.Module, ds data.Dataset) float64 {
	t.Helper()
	seq := m.(*nn.Sequential)
	l1, l2 := seq.Modules[1].(*nn.Linear), seq.Modules[3].(*nn.Linear)
	w1, b1 := l1.Weight.Value.Float64s(), l1.Bias.Value.Float64s()
	w2, b2 := l2.Weight.Value.Float64s(), l2.Bias.Value.Float64s()
	correct := 0
	for i := 0; i < ds.Len(); i++ {
		img, label := example(t, ds, i)
		h := make([]float64, 128)
		for o := range h {
			s := b1[o]
			for k, v := range img {
				s += w1[o*784+k] * float64(v)
			}
			h[o] = max(s, 0)
		}
		best, bestV := 0, 0.0
		for c := 0; c < 10; c++ {
			s := b2[c]
			for k, v := range h {
				s += w2[c*128+k] * v
			}
			if c == 0 || s > bestV {
				best, bestV = c, s
			}
		}
		if best == label {
			correct++
		}
	}
	return float64(correct) / float64(ds.Len())
}

func TestEvaluateMatchesReference(t *testing.T) {
	// A briefly trained model.
	cfg := syntheticConfig(48)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Relabel every third example so the accuracy lands near 2/3 and
	// both the correct and the wrong predictions are checked.
	ds := relabeled{data.Subset(cfg.Test, 0, 61)}
	want := referenceAccuracy(t, res.Model, ds)
	for _, batch := range []int{1, 7, 64} {
		got, err := Evaluate(res.Model, ds, res.Device, batch)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("batch %d: accuracy %v, float64 reference %v", batch, got, want)
		}
	}
	if want == 0 || want == 1 {
		t.Logf("reference accuracy %v: the comparison is weak", want)
	}
	// Evaluation records nothing for backward.
	x := ember.FromFloats(make([]float32, 784), []int{1, 1, 28, 28}, res.Device)
	var y *ember.Tensor
	ember.NoGrad(func() { y = res.Model.Forward(x) })
	if y.IsTracked() {
		t.Fatal("forward under NoGrad is tracked")
	}
}

// relabeled shifts the label of every third example by one class.
type relabeled struct{ data.Dataset }

func (r relabeled) Gather(idx []int, f, t []byte) error {
	if err := r.Dataset.Gather(idx, f, t); err != nil {
		return err
	}
	for k, i := range idx {
		if i%3 == 0 {
			l := binary.LittleEndian.Uint64(t[8*k:])
			binary.LittleEndian.PutUint64(t[8*k:], (l+1)%10)
		}
	}
	return nil
}

// tinyImages is a dataset of 10-value examples, which Evaluate rejects.
type tinyImages struct{ *synthetic }

func (tinyImages) Schema() data.Schema {
	return data.Schema{Features: data.Field{Shape: []int{10}, DType: ember.F32}, Targets: data.Field{DType: ember.I64}}
}

func TestEvaluateErrors(t *testing.T) {
	dev := ember.Flex()
	m := NewMLP(dev)
	if _, err := Evaluate(m, newSynthetic(4), dev, 0); err == nil {
		t.Error("batch 0 accepted")
	}
	if _, err := Evaluate(m, newSynthetic(0), dev, 4); err == nil {
		t.Error("empty dataset accepted")
	}
	if _, err := Evaluate(m, tinyImages{newSynthetic(3)}, dev, 2); err == nil {
		t.Error("10-value examples accepted")
	}
}
