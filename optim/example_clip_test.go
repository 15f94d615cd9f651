package optim_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// ClipGradNorm rescales the gradients between Backward and Step, as
// PyTorch's torch.nn.utils.clip_grad_norm_: here the gradient of ½‖w‖²
// is w = (3, 4), of norm 5, and clipping to 1 keeps its direction.
// ClipGradValue clamps each element instead.
func ExampleClipGradNorm() {
	dev := ember.CPU().Autodiff()
	w := &nn.Param{Value: ember.FromFloats([]float32{3, 4}, []int{2}, dev).RequireGrad()}
	params := []nn.NamedParam{{Name: "w", Param: w}}

	grads := w.Value.Mul(w.Value).Sum().MulScalar(0.5).Backward()
	total := optim.ClipGradNorm(grads, params, 1, 2) // max norm 1, L2
	fmt.Printf("norm before %.4f, gradient after %.4f\n", total.Item(), grads.Of(w.Value).Float32s())

	grads = w.Value.Mul(w.Value).Sum().MulScalar(0.5).Backward()
	optim.ClipGradValue(grads, params, 3.5)
	fmt.Printf("clamped to ±3.5: %.4f\n", grads.Of(w.Value).Float32s())

	opt := optim.NewSGD(params, optim.SGDConfig{LR: 0.1})
	opt.Step(grads)
	fmt.Printf("w after one SGD step: %.4f\n", w.Value.Float32s())
	// Output:
	// norm before 5.0000, gradient after [0.6000 0.8000]
	// clamped to ±3.5: [3.0000 3.5000]
	// w after one SGD step: [2.7000 3.6500]
}

// A warm-up of 4 steps in front of a cosine decay over the 8 steps that
// follow: the rate rises to 0.1, then anneals to 0.
func ExampleWarmupLR() {
	s := optim.WarmupLR(optim.CosineLR(0.1, 0, 8), 4)
	for step := range 13 {
		fmt.Printf("%.4f ", s.LR(step))
	}
	fmt.Println()
	// Output:
	// 0.0250 0.0500 0.0750 0.1000 0.1000 0.0962 0.0854 0.0691 0.0500 0.0309 0.0146 0.0038 0.0000
}

// StateDict captures an optimizer's state (learning rate, step counts,
// moments) as plain data keyed by parameter name; LoadStateDict puts it
// into a fresh optimizer, which then continues exactly as the original
// would have. Package train stores it in its checkpoints.
func ExampleAdam_StateDict() {
	dev := ember.CPU().Autodiff()
	dev.Seed(7)
	model := nn.NewLinear(1, 1, dev)
	x, y := lineData(dev)
	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.1})
	for range 10 {
		opt.Step(nn.MSE(model.Forward(x), y).Backward())
	}
	sd, err := opt.StateDict()
	if err != nil {
		panic(err)
	}
	fmt.Println(sd.Optimizer, sd.Hyper["lr"], sd.Params["weight"].Step, sd.Params["weight"].Tensors["exp_avg"].Shape())

	// A new optimizer over the same parameters takes over.
	resumed := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.1})
	if err := resumed.LoadStateDict(sd); err != nil {
		panic(err)
	}
	st, _ := resumed.StateDict()
	fmt.Println("step count:", st.Params["bias"].Step)

	// A state of another optimizer is refused.
	sgd := optim.NewSGD(model.NamedParameters(), optim.SGDConfig{})
	fmt.Println(sgd.LoadStateDict(sd))
	// Output:
	// adam 0.1 10 [1 1]
	// step count: 10
	// optim: sgd: LoadStateDict: optimizer state does not match the optimizer: the state is of optimizer "adam", this optimizer is "sgd"
}
