package nn_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// A small multilayer perceptron, PyTorch's
// nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)): a batch of
// 5 inputs [5, 4] maps to [5, 3]. Parameters are named by position, as in
// a PyTorch state dict.
func ExampleSequential() {
	dev := ember.CPU()
	dev.Seed(1) // the layers' initialization draws from the device's generator
	model := nn.NewSequential(
		nn.NewLinear(4, 8, dev),
		nn.Relu{},
		nn.NewLinear(8, 3, dev),
	)
	x := ember.Randn([]int{5, 4}, dev)
	y := model.Forward(x)
	fmt.Println(x.Shape(), "→", y.Shape())
	fmt.Printf("%.3f\n", y.Slice(ember.R(0, 1)).Float32s())
	for _, p := range model.NamedParameters() {
		fmt.Println(p.Name, p.Param.Value.Shape())
	}
	fmt.Println(nn.NumParams(model), "parameters")
	fmt.Print(nn.Summary(model))
	// Output:
	// [5 4] → [5 3]
	// [0.417 -0.294 -0.012]
	// 0.weight [8 4]
	// 0.bias [8]
	// 2.weight [3 8]
	// 2.bias [3]
	// 67 parameters
	// Model: Sequential
	// ================================================
	// Path   Layer           Parameter shapes   Params
	// ------------------------------------------------
	// 0      Linear(4 → 8)   [8, 4], [8]            40
	// 1      Relu                                    0
	// 2      Linear(8 → 3)   [3, 8], [3]            27
	// ================================================
	// Trainable parameters:  67
	// Non-trainable buffers: 0
	// Parameter memory:      268 B (f32)
}

// Save writes a model's parameters and buffers as a safetensors file
// (PyTorch's torch.save of a state dict, readable by
// safetensors.torch.load_file); Load reads them into a model of the same
// architecture, here one initialized differently, which then computes the
// same outputs.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "ember-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	dev := ember.CPU()
	newModel := func() *nn.Sequential {
		return nn.NewSequential(nn.NewLinear(3, 4, dev), nn.Relu{}, nn.NewLinear(4, 2, dev))
	}
	dev.Seed(1)
	a := newModel()
	if err := nn.Save(path, a); err != nil {
		panic(err)
	}
	dev.Seed(2)
	b := newModel()
	x := ember.Randn([]int{2, 3}, dev)
	equal := func() bool {
		for i, p := range a.NamedParameters() {
			q := b.NamedParameters()[i]
			if p.Name != q.Name || p.Param.Value.Ne(q.Param.Value).Any().Item() != 0 {
				return false
			}
		}
		return true
	}
	fmt.Println("equal before Load:", equal())
	if err := nn.Load(path, b); err != nil {
		panic(err)
	}
	fmt.Println("equal after Load:", equal())
	same := a.Forward(x).Eq(b.Forward(x)).All().Item() != 0
	fmt.Println("same outputs:", same)
	// Output:
	// equal before Load: false
	// equal after Load: true
	// same outputs: true
}
