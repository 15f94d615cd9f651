package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// ToDType converts a module's parameters in place, as PyTorch's
// module.double(); on an autocast device a Linear of F32 parameters
// computes in the autocast dtype instead, its parameters left in F32.
func ExampleToDType() {
	dev := ember.CPU().Autodiff()
	dev.Seed(1)
	model := nn.NewSequential(nn.NewLinear(4, 3, dev), nn.Relu{}, nn.NewLinear(3, 2, dev))
	x := ember.Ones([]int{5, 4}, dev)
	fmt.Println("f32 model:", model.Forward(x).DType())
	fmt.Println("autocast:", model.Forward(x.ToDevice(dev.Autocast(ember.BF16))).DType())

	if err := nn.ToDType(model, ember.F64); err != nil {
		fmt.Println(err)
		return
	}
	p := model.NamedParameters()[0].Param.Value
	fmt.Println("f64 model:", model.Forward(x).DType(), p.DType(), p.IsTracked())
	// Output:
	// f32 model: f32
	// autocast: bf16
	// f64 model: f64 f64 true
}
