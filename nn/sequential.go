package nn

import (
	"strconv"

	"github.com/emberml/ember"
)

// Sequential chains modules: Forward feeds each module's output to the next
// (PyTorch's nn.Sequential). Children are named by position, "0", "1", ...,
// so parameter names read "0.weight", "2.bias".
type Sequential struct {
	Modules []Module
}

// NewSequential chains mods in order.
func NewSequential(mods ...Module) *Sequential {
	return &Sequential{Modules: append([]Module(nil), mods...)}
}

// Forward applies the modules in order (x itself when there are none).
func (s *Sequential) Forward(x *ember.Tensor) *ember.Tensor {
	need("sequential", []string{"x"}, x)
	for _, m := range s.Modules {
		x = m.Forward(x)
	}
	return x
}

// NamedParameters lists the children's parameters in order, each name
// prefixed with the child's index.
func (s *Sequential) NamedParameters() []NamedParam {
	var out []NamedParam
	for i, m := range s.Modules {
		out = append(out, prefixed(strconv.Itoa(i), m.NamedParameters())...)
	}
	return out
}

// NamedBuffers lists the children's buffers in order, each name prefixed
// with the child's index.
func (s *Sequential) NamedBuffers() []NamedParam {
	var out []NamedParam
	for i, m := range s.Modules {
		out = append(out, prefixed(strconv.Itoa(i), NamedBuffers(m))...)
	}
	return out
}

// SetTraining switches every child's mode (see the package function SetTraining).
func (s *Sequential) SetTraining(training bool) {
	for _, m := range s.Modules {
		SetTraining(m, training)
	}
}
