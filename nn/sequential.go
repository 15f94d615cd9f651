package nn

import (
	"fmt"
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
	for _, m := range s.children("sequential") {
		x = m.Forward(x)
	}
	return x
}

// NamedParameters lists the children's parameters in order, each name
// prefixed with the child's index.
func (s *Sequential) NamedParameters() []NamedParam {
	var out []NamedParam
	for i, m := range s.children("sequential.named_parameters") {
		out = append(out, prefixed(strconv.Itoa(i), m.NamedParameters())...)
	}
	return out
}

// NamedBuffers lists the children's buffers in order, each name prefixed
// with the child's index.
func (s *Sequential) NamedBuffers() []NamedParam {
	var out []NamedParam
	for i, m := range s.children("sequential.named_buffers") {
		out = append(out, prefixed(strconv.Itoa(i), NamedBuffers(m))...)
	}
	return out
}

// SetTraining switches every child's mode (see the package function SetTraining).
func (s *Sequential) SetTraining(training bool) {
	for _, m := range s.children("sequential.set_training") {
		SetTraining(m, training)
	}
}

// children returns the modules of s (none for a nil s), panicking with an
// *ember.Error naming op when one of them is nil.
func (s *Sequential) children(op string) []Module {
	if s == nil {
		return nil
	}
	for i, m := range s.Modules {
		if m == nil {
			panic(&ember.Error{Op: op, Msg: fmt.Sprintf("module %d is nil", i)})
		}
	}
	return s.Modules
}
