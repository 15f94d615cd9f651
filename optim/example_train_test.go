package optim_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// lineData returns 16 points of y = 3x + 2 for x evenly spaced in [-1, 1],
// as [16, 1] inputs and targets on dev.
func lineData(dev ember.Device) (x, y *ember.Tensor) {
	x = ember.Linspace(-1, 1, 16, dev).Reshape(16, 1)
	return x, x.MulScalar(3).AddScalar(2)
}

// The PyTorch training loop, step for step: forward, loss, backward
// (loss.backward() is loss.Backward(), which returns the gradients rather
// than storing them in .grad, so there is no zero_grad), optimizer step,
// and the schedule's rate set before each step (scheduler.step()). Here
// SGD with momentum and a StepLR schedule fit y = 3x + 2 with one
// nn.Linear(1, 1).
func ExampleSGD() {
	dev := ember.CPU().Autodiff() // parameters built here are tracked leaves
	dev.Seed(7)
	model := nn.NewLinear(1, 1, dev)
	x, y := lineData(dev)

	opt := optim.NewSGD(model.NamedParameters(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	sched := optim.StepLR(0.1, 40, 0.5) // halve the rate every 40 steps
	for step := range 120 {
		opt.SetLR(sched.LR(step))
		loss := nn.MSE(model.Forward(x), y)
		if step%30 == 0 {
			fmt.Printf("step %3d  lr %.4f  loss %.4f\n", step, opt.LR(), loss.Item())
		}
		opt.Step(loss.Backward())
	}
	w, b := model.Weight.Value.Item(), model.Bias.Value.Item()
	fmt.Printf("y = %.3f·x + %.3f\n", w, b)
	// Output:
	// step   0  lr 0.1000  loss 6.4981
	// step  30  lr 0.1000  loss 0.0315
	// step  60  lr 0.0500  loss 0.0075
	// step  90  lr 0.0250  loss 0.0001
	// y = 2.999·x + 2.003
}

// Adam with a cosine schedule on the same problem; ember.NoGrad evaluates
// the trained model without recording (torch.no_grad).
func ExampleAdam() {
	dev := ember.CPU().Autodiff()
	dev.Seed(7)
	model := nn.NewLinear(1, 1, dev)
	x, y := lineData(dev)

	const steps = 300
	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.1})
	sched := optim.CosineLR(0.1, 0.001, steps)
	for step := range steps {
		opt.SetLR(sched.LR(step))
		loss := nn.MSE(model.Forward(x), y)
		if step%100 == 0 {
			fmt.Printf("step %3d  lr %.4f  loss %.4f\n", step, opt.LR(), loss.Item())
		}
		opt.Step(loss.Backward())
	}
	ember.NoGrad(func() {
		fmt.Printf("final loss %.4f\n", nn.MSE(model.Forward(x), y).Item())
	})
	fmt.Printf("y = %.3f·x + %.3f\n", model.Weight.Value.Item(), model.Bias.Value.Item())
	// Output:
	// step   0  lr 0.1000  loss 6.4981
	// step 100  lr 0.0753  loss 0.0001
	// step 200  lr 0.0257  loss 0.0000
	// final loss 0.0000
	// y = 3.000·x + 2.000
}

// A schedule maps a step number to a learning rate.
func ExampleStepLR() {
	s := optim.StepLR(0.1, 10, 0.5)
	for _, step := range []int{0, 9, 10, 25} {
		fmt.Printf("%d: %.4f\n", step, s.LR(step))
	}
	// Output:
	// 0: 0.1000
	// 9: 0.1000
	// 10: 0.0500
	// 25: 0.0250
}

// CosineLR anneals along half a cosine from base at step 0 to min at step
// total, and stays at min afterwards.
func ExampleCosineLR() {
	s := optim.CosineLR(0.1, 0, 100)
	for _, step := range []int{0, 25, 50, 100, 150} {
		fmt.Printf("%d: %.4f\n", step, s.LR(step))
	}
	// Output:
	// 0: 0.1000
	// 25: 0.0854
	// 50: 0.0500
	// 100: 0.0000
	// 150: 0.0000
}
