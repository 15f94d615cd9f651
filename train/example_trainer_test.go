package train_test

import (
	"context"
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// A Trainer fits a linear model to y = 3x − 1 on 64 points, holding a
// quarter out for validation and stopping early once the validation
// error no longer falls.
func ExampleTrainer_Fit() {
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
	dev := ember.Flex()
	dev.Seed(1)
	model := nn.NewLinear(1, 1, dev.Autodiff())
	t := &train.Trainer{
		Model:           model,
		Loss:            nn.MSE,
		Optimizer:       optim.NewSGD(model.NamedParameters(), optim.SGDConfig{LR: 0.1, Momentum: 0.9}),
		Metrics:         []train.Metric{train.MAE()},
		Epochs:          100,
		BatchSize:       8,
		Seed:            1,
		ValidationSplit: 0.25,
		EarlyStopping:   &train.EarlyStopping{Monitor: "val_mae", Patience: 3, MinDelta: 1e-4},
		OnEpoch: func(r train.EpochReport) error {
			if r.Epoch%10 == 0 {
				fmt.Printf("epoch %d: loss %.3f, val_mae %.3f\n", r.Epoch, r.Values["loss"], r.Values["val_mae"])
			}
			return nil
		},
	}
	hist, err := t.Fit(context.Background(), ds)
	if err != nil {
		fmt.Println(err)
		return
	}
	st := hist.State
	fmt.Printf("stopped: %v, after epoch %d; best val_mae %.3f at epoch %d\n", st.Stopped, st.Epoch, st.Best, st.BestEpoch)
	fmt.Printf("y = %.3f x %+.3f\n", model.Weight.Value.Float32s()[0], model.Bias.Value.Float32s()[0])
	// Output:
	// epoch 10: loss 0.014, val_mae 0.115
	// epoch 20: loss 0.000, val_mae 0.003
	// epoch 30: loss 0.000, val_mae 0.000
	// stopped: true, after epoch 30; best val_mae 0.000 at epoch 27
	// y = 3.000 x -1.000
}
