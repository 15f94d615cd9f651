package nn_test

import (
	"bytes"
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// SaveTo and LoadFrom read and write any io.Writer and io.Reader, with
// string metadata beside the tensors. A non-strict load (PyTorch's
// load_state_dict(strict=False)) fills the tensors a model shares with the
// source, here a pretrained body under a new head, and reports the rest
// instead of failing.
func ExampleLoadFrom() {
	dev := ember.CPU()
	dev.Seed(1)
	pretrained := nn.NewSequential(nn.NewLinear(4, 8, dev), nn.Relu{}, nn.NewLinear(8, 10, dev))
	var buf bytes.Buffer
	if err := nn.SaveTo(&buf, pretrained, map[string]string{"dataset": "digits"}); err != nil {
		panic(err)
	}

	// Same body, a new 3-class head one position further on.
	model := nn.NewSequential(nn.NewLinear(4, 8, dev), nn.Relu{}, nn.Gelu{}, nn.NewLinear(8, 3, dev))
	res, err := nn.LoadFrom(&buf, model, nn.LoadOptions{NonStrict: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("metadata:", res.Metadata)
	fmt.Println("missing:", res.MissingKeys)
	fmt.Println("unexpected:", res.UnexpectedKeys)
	// Output:
	// metadata: map[dataset:digits]
	// missing: [3.weight 3.bias]
	// unexpected: [2.bias 2.weight]
}
