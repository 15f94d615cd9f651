package nn

import "github.com/emberml/ember"

// Relu is the module form of ember.Tensor.Relu: max(x, 0) elementwise, any
// shape (PyTorch's nn.ReLU). It has no parameters.
type Relu struct{}

// Forward returns x.Relu().
func (Relu) Forward(x *ember.Tensor) *ember.Tensor {
	need("relu", []string{"x"}, x)
	return x.Relu()
}

// NamedParameters returns nil.
func (Relu) NamedParameters() []NamedParam { return nil }

// Gelu is the module form of ember.Tensor.Gelu, the exact
// x·Φ(x) activation (PyTorch's nn.GELU with approximate="none").
type Gelu struct{}

// Forward returns x.Gelu().
func (Gelu) Forward(x *ember.Tensor) *ember.Tensor {
	need("gelu", []string{"x"}, x)
	return x.Gelu()
}

// NamedParameters returns nil.
func (Gelu) NamedParameters() []NamedParam { return nil }

// Flatten reshapes [N, d1, d2, ...] to [N, d1·d2·...] (PyTorch's nn.Flatten
// with its defaults start_dim=1, end_dim=−1). A rank-1 input [N] becomes
// [N, 1]. It panics with an *ember.Error on a rank-0 input.
type Flatten struct{}

// Forward flattens every axis after the first.
func (Flatten) Forward(x *ember.Tensor) *ember.Tensor {
	need("flatten", []string{"x"}, x)
	if x.Rank() == 0 {
		fail("flatten", x, "needs at least one axis")
	}
	shape := x.Shape()
	rest := 1
	for _, s := range shape[1:] {
		rest *= s
	}
	return x.Reshape(shape[0], rest)
}

// NamedParameters returns nil.
func (Flatten) NamedParameters() []NamedParam { return nil }
