package train

import (
	"fmt"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// BenchmarkTrainStepDType times one eager training step (batch 64, Adam)
// of each model on cpu in each training precision: f32, f64 (parameters
// cast with nn.ToDType), and bf16 and f16 mixed precision (F32 master
// weights, the batch on the autocast device; f16 with a loss scaler).
func BenchmarkTrainStepDType(bb *testing.B) {
	b := syntheticBatch(64)
	for _, name := range []string{"mlp", "cnn"} {
		for _, dt := range []ember.DType{ember.F32, ember.F64, ember.BF16, ember.F16} {
			adev := ember.CPU().Autodiff()
			model, _ := NewModel(name, adev)
			fdev := adev
			var scaler *optim.GradScaler
			switch dt {
			case ember.F64:
				if err := nn.ToDType(model, ember.F64); err != nil {
					bb.Fatal(err)
				}
			case ember.BF16, ember.F16:
				fdev = adev.Autocast(dt)
			}
			cfg, _ := Config{Model: name}.withDefaults()
			opt := newOptimizer(cfg, model)
			if dt == ember.F16 {
				scaler = optim.NewGradScaler(model.NamedParameters(), optim.GradScalerConfig{})
			}
			step(model, opt, scaler, b, fdev)
			bb.Run(fmt.Sprintf("%s/%v", name, dt), func(bb *testing.B) {
				for bb.Loop() {
					step(model, opt, scaler, b, fdev)
				}
			})
		}
	}
}
