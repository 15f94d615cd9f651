package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Summary lists a model's layers with their parameter shapes and counts,
// then the totals, without running the model. This is the MNIST
// multilayer perceptron of the train package: 784·128 + 128 + 128·10 + 10
// = 101,770 float32 parameters.
func ExampleSummary() {
	dev := ember.CPU()
	model := nn.NewSequential(
		nn.Flatten{},
		nn.NewLinear(28*28, 128, dev),
		nn.Relu{},
		nn.NewLinear(128, 10, dev),
	)
	fmt.Print(nn.Summary(model))
	// Output:
	// Model: Sequential
	// ======================================================
	// Path   Layer               Parameter shapes     Params
	// ------------------------------------------------------
	// 0      Flatten                                       0
	// 1      Linear(784 → 128)   [128, 784], [128]   100,480
	// 2      Relu                                          0
	// 3      Linear(128 → 10)    [10, 128], [10]       1,290
	// ======================================================
	// Trainable parameters:  101,770
	// Non-trainable buffers: 0
	// Parameter memory:      397.54 KiB (407,080 B, f32)
}
