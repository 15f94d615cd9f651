package optim_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// Mixed-precision training in F16, as PyTorch's torch.autocast with a
// GradScaler: the parameters stay in F32 on dev (master weights), the
// input lives on dev.Autocast(ember.F16), so the layer's product runs in
// F16 while the loss is computed in F32; the scaler multiplies the loss by
// its scale before Backward and divides the gradients by it before the
// optimizer step. The first steps' scaled gradients (2^16 times the true
// ones) overflow F16 and are skipped while the scale comes down.
func ExampleGradScaler() {
	dev := ember.CPU().Autodiff()
	dev.Seed(7)
	model := nn.NewLinear(1, 1, dev) // F32 parameters
	amp := dev.Autocast(ember.F16)
	x, y := lineData(amp)

	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.05})
	scaler := optim.NewGradScaler(model.NamedParameters(), optim.GradScalerConfig{})
	skipped := 0
	for step := range 300 {
		out := model.Forward(x) // F16
		loss := nn.MSE(out, y)  // F32
		if step == 0 {
			fmt.Println("output", out.DType(), "loss", loss.DType(), "weight", model.Weight.Value.DType())
		}
		grads := scaler.Scale(loss).Backward()
		if !scaler.Step(opt, grads) { // unscale, then step unless Inf/NaN
			skipped++
		}
		scaler.Update()
	}
	fmt.Printf("skipped %d steps, loss scale %g\n", skipped, scaler.LossScale())
	fmt.Printf("y = %.2f·x + %.2f\n", model.Weight.Value.Item(), model.Bias.Value.Item())
	// Output:
	// output f16 loss f32 weight f32
	// skipped 2 steps, loss scale 16384
	// y = 3.00·x + 2.00
}
