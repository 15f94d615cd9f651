package train

import (
	"bytes"
	"testing"

	"github.com/emberml/ember"
)

// BenchmarkCheckpointMLP times a checkpoint of the MNIST MLP trained with
// Adam on cpu (101,770 parameters and twice as many moments, 1.2 MB):
// capture (reading every tensor back), WriteCheckpoint to memory, and
// ReadCheckpoint plus restoring it into another model and optimizer; and,
// for scale, one eager training step (batch 64).
func BenchmarkCheckpointMLP(bb *testing.B) {
	adev := ember.CPU().Autodiff()
	model, _ := NewModel("mlp", adev)
	cfg, _ := Config{}.withDefaults()
	opt := newOptimizer(cfg, model)
	b := syntheticBatch(64)
	step(model, opt, nil, b, adev)
	st := State{Epoch: 1, Step: 1, EpochStep: 1}
	var buf bytes.Buffer
	bb.Run("capture", func(bb *testing.B) {
		for bb.Loop() {
			if _, err := capture(model, opt, nil, st, adev, []byte("{}"), nil); err != nil {
				bb.Fatal(err)
			}
		}
	})
	c, err := capture(model, opt, nil, st, adev, []byte("{}"), nil)
	if err != nil {
		bb.Fatal(err)
	}
	bb.Run("write", func(bb *testing.B) {
		for bb.Loop() {
			buf.Reset()
			if err := WriteCheckpoint(&buf, c); err != nil {
				bb.Fatal(err)
			}
		}
		bb.SetBytes(int64(buf.Len()))
	})
	raw := bytes.Clone(buf.Bytes())
	other, _ := NewModel("mlp", adev)
	otherOpt := newOptimizer(cfg, other)
	bb.Run("read+restore", func(bb *testing.B) {
		for bb.Loop() {
			c, err := ReadCheckpoint(bytes.NewReader(raw))
			if err != nil {
				bb.Fatal(err)
			}
			if _, _, err := c.restore(other, otherOpt, nil, adev); err != nil {
				bb.Fatal(err)
			}
		}
		bb.SetBytes(int64(len(raw)))
	})
	bb.Run("train-step", func(bb *testing.B) {
		for bb.Loop() {
			step(model, opt, nil, b, adev)
		}
	})
}

// BenchmarkClipMLP times one eager MLP training step (batch 64, Adam, cpu)
// without clipping, with ClipGradNorm (1.0) and with ClipGradValue (0.1).
func BenchmarkClipMLP(bb *testing.B) {
	adev := ember.CPU().Autodiff()
	b := syntheticBatch(64)
	for _, c := range []struct {
		name        string
		norm, value float64
	}{{"none", 0, 0}, {"norm", 1, 0}, {"value", 0, 0.1}} {
		model, _ := NewModel("mlp", adev)
		cfg, _ := Config{ClipNorm: c.norm, ClipValue: c.value}.withDefaults()
		r := &runner{cfg: cfg, model: model, opt: newOptimizer(cfg, model), adev: adev}
		r.eagerStep(b)
		bb.Run(c.name, func(bb *testing.B) {
			for bb.Loop() {
				r.eagerStep(b)
			}
		})
	}
}
