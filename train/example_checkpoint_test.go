package train_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// Training interrupted in the middle of an epoch continues from its
// checkpoint as if nothing had happened: the checkpoint holds the
// parameters, Adam's moments and step counts, the position in the epoch,
// the random state (dropout here) and the settings, and the resumed
// Trainer ends with the parameters of an uninterrupted run, bit for bit.
func ExampleTrainer_Resume() {
	x, y := make([]float32, 96), make([]float32, 48)
	for i := range y {
		x[2*i], x[2*i+1] = float32(i%7)/7, float32(i%5)/5
		y[i] = 2*x[2*i] - x[2*i+1] + 0.5
	}
	ds, _ := data.FromSlices(x, []int{48, 2}, y, []int{48, 1})
	newTrainer := func() *train.Trainer {
		dev := ember.Flex().Autodiff()
		dev.Seed(3)
		model := nn.NewSequential(nn.NewLinear(2, 16, dev), nn.Relu{}, nn.NewDropout(0.1), nn.NewLinear(16, 1, dev))
		opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.01})
		return &train.Trainer{Model: model, Optimizer: opt, Epochs: 6, BatchSize: 8, Seed: 1,
			Schedule: optim.CosineLR(0.01, 0.001, 36), ClipNorm: 1}
	}
	weights := func(t *train.Trainer) []float32 {
		var w []float32
		for _, p := range t.Model.NamedParameters() {
			w = append(w, p.Param.Value.Float32s()...)
		}
		return w
	}

	// The uninterrupted run: 6 epochs of 6 steps.
	whole := newTrainer()
	if _, err := whole.Fit(context.Background(), ds); err != nil {
		panic(err)
	}

	// A run stopped after step 15 (epoch 3, batch 3) that saves a
	// checkpoint (Fit also writes one by itself with CheckpointPath).
	dir, _ := os.MkdirTemp("", "ember-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	first := newTrainer()
	first.OnStep = func(step int, _ float64) {
		if step == 15 {
			cancel()
		}
	}
	_, err := first.Fit(ctx, ds)
	fmt.Println("interrupted:", errors.Is(err, context.Canceled))
	c, err := first.Checkpoint()
	if err != nil {
		panic(err)
	}
	if err := train.SaveCheckpoint(path, c); err != nil {
		panic(err)
	}

	// Later, in another process: a fresh Trainer takes over.
	c, err = train.LoadCheckpoint(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("checkpoint: step %d, epoch %d, batch %d\n", c.State.Step, c.State.Epoch+1, c.State.EpochStep)
	second := newTrainer()
	if err := second.Resume(c); err != nil {
		panic(err)
	}
	hist, err := second.Fit(context.Background(), ds)
	if err != nil {
		panic(err)
	}
	fmt.Println("steps after the resume:", len(hist.StepLosses))
	fmt.Println("same parameters as the uninterrupted run:", slices.Equal(weights(second), weights(whole)))
	// Output:
	// interrupted: true
	// checkpoint: step 15, epoch 3, batch 3
	// steps after the resume: 21
	// same parameters as the uninterrupted run: true
}
