package train

import (
	"context"
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// Training with Compile gives, bit for bit, the step losses, the
// accuracy and the final parameters of eager training, for every
// optimizer and model, over two epochs whose last batch is partial (so
// that eager steps and compiled replays alternate), on cpu and flex.
func TestCompiledTrainingMatchesEager(t *testing.T) {
	type run struct {
		model, optimizer string
	}
	runs := []run{{"mlp", "adam"}, {"mlp", "adamw"}, {"mlp", "sgd"}, {"cnn", "adam"}}
	devs := []ember.Device{ember.CPU(), ember.Flex()}
	if gpu := ember.CUDA(0); gpu.Init() == nil {
		devs = append(devs, gpu) // a CUDA graph from the second compiled step on
	}
	for _, dev := range devs {
		for _, r := range runs {
			if r.model == "cnn" && (testing.Short() || raceEnabled || dev.Type() == ember.TypeFlex) {
				continue // the CNN's pure-Go kernels are slow on flex and under the race detector
			}
			train := func(compile bool) *Result {
				all := newSynthetic(100 + 60)
				cfg := Config{Device: dev, Batch: 16, Seed: 5, Epochs: 2, Model: r.model, Optimizer: r.optimizer,
					Train: data.Subset(all, 0, 100), Test: data.Subset(all, 100, 160), Compile: compile}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatalf("%v %s/%s compile=%v: %v", dev, r.model, r.optimizer, compile, err)
				}
				return res
			}
			eager, compiled := train(false), train(true)
			name := dev.String() + " " + r.model + "/" + r.optimizer
			if len(eager.StepLosses) != 14 || len(compiled.StepLosses) != len(eager.StepLosses) {
				t.Fatalf("%s: %d and %d steps, want 14 (7 per epoch, the last of 4 examples)", name, len(eager.StepLosses), len(compiled.StepLosses))
			}
			for i := range eager.StepLosses {
				if math.Float64bits(eager.StepLosses[i]) != math.Float64bits(compiled.StepLosses[i]) {
					t.Fatalf("%s: step %d: compiled loss %v, eager %v", name, i+1, compiled.StepLosses[i], eager.StepLosses[i])
				}
			}
			if eager.TestAccuracy != compiled.TestAccuracy {
				t.Errorf("%s: accuracy %v compiled, %v eager", name, compiled.TestAccuracy, eager.TestAccuracy)
			}
			ep, cp := eager.Model.NamedParameters(), compiled.Model.NamedParameters()
			for i := range ep {
				a, b := ep[i].Param.Value.Float64s(), cp[i].Param.Value.Float64s()
				for k := range a {
					if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
						t.Fatalf("%s: parameter %s element %d: compiled %v, eager %v", name, ep[i].Name, k, b[k], a[k])
					}
				}
			}
		}
	}
}
