package train_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// Mixed-precision training with a Trainer: the parameters stay F32 on
// dev, the Trainer's Device is dev with autocast, so the batches are made
// there and the layer's product runs in F16, and a GradScaler scales the
// loss and skips the steps whose F16 gradients overflow.
func ExampleTrainer_mixedPrecision() {
	x, y := make([]float32, 64), make([]float32, 64)
	for i := range x {
		x[i] = float32(i)/32 - 1
		y[i] = 3*x[i] - 1
	}
	ds, err := data.FromSlices(x, []int{64, 1}, y, []int{64, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	dev := ember.CPU().Autodiff()
	dev.Seed(1)
	model := nn.NewLinear(1, 1, dev)
	t := &train.Trainer{
		Model:      model,
		Device:     dev.Autocast(ember.F16),
		Optimizer:  optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.05}),
		GradScaler: optim.NewGradScaler(model.NamedParameters(), optim.GradScalerConfig{}),
		Epochs:     40,
		BatchSize:  16,
		Seed:       1,
	}
	hist, err := t.Fit(context.Background(), ds)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss %.4f after %d steps, loss scale %g\n", hist.Epochs[len(hist.Epochs)-1].Values["loss"], hist.State.Step, t.GradScaler.LossScale())
	fmt.Printf("y = %.2f x %+.2f, weights %v\n", model.Weight.Value.Item(), model.Bias.Value.Item(), model.Weight.Value.DType())

	// A run that diverges stops with the step at which it did.
	bad := nn.NewLinear(1, 1, dev)
	_, err = (&train.Trainer{Model: bad, Epochs: 5, BatchSize: 16,
		Optimizer: optim.NewSGD(bad.NamedParameters(), optim.SGDConfig{LR: 1e30})}).Fit(context.Background(), ds)
	var de *train.DivergedError
	if errors.As(err, &de) {
		fmt.Println("diverged at step", de.Step, errors.Is(err, train.ErrDiverged))
		fmt.Println(err)
	}
	// Output:
	// loss 0.0004 after 160 steps, loss scale 16384
	// y = 2.97 x -1.00, weights f32
	// diverged at step 2 true
	// train: training diverged at step 2 (epoch 1, f32): the loss is +Inf; try a lower learning rate or gradient clipping
}
