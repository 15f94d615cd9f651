package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Param is a named cell holding one tensor of a module: a trainable
// parameter or a buffer. Optimizers and Load replace Value; modules read it
// on every Forward, so they see the replacement.
type Param struct {
	// Value is the current tensor. For a trainable parameter on an autodiff
	// device it is a tracked leaf (Tensor.RequireGrad).
	Value *ember.Tensor
}

// NamedParam pairs a parameter (or buffer) with its dotted path in the
// module tree, e.g. "0.weight" or "3.running_mean" (PyTorch state-dict
// names).
type NamedParam struct {
	Name  string
	Param *Param
}

// Module is a layer or a network: a function of one tensor with named
// trainable parameters.
type Module interface {
	// Forward applies the module to x. Layers panic with an *ember.Error on
	// shapes they cannot accept.
	Forward(x *ember.Tensor) *ember.Tensor
	// NamedParameters lists the trainable parameters in a stable order
	// (the same on every call), with dotted names.
	NamedParameters() []NamedParam
}

// BufferOwner is implemented by modules holding non-trainable state that
// belongs in a checkpoint (BatchNorm's running statistics). Containers such
// as Sequential implement it by prefixing their children's buffers.
type BufferOwner interface {
	// NamedBuffers lists the buffers in a stable order with dotted names.
	NamedBuffers() []NamedParam
}

// trainingSetter is implemented by modules whose behaviour depends on the
// mode (BatchNorm, Dropout) and by containers that forward the mode.
type trainingSetter interface{ SetTraining(training bool) }

// SetTraining switches m and, through containers, every module below it to
// training (true) or evaluation (false) mode, like PyTorch's
// Module.train(mode). Modules without a mode are left alone. A custom
// container should implement SetTraining(bool) and forward it to its
// children (calling this function on each).
func SetTraining(m Module, training bool) {
	if s, ok := m.(trainingSetter); ok {
		s.SetTraining(training)
	}
}

// NamedBuffers returns m's buffers (nil when m owns none). See BufferOwner.
func NamedBuffers(m Module) []NamedParam {
	if b, ok := m.(BufferOwner); ok {
		return b.NamedBuffers()
	}
	return nil
}

// NumParams returns the number of scalar elements in m's trainable
// parameters (buffers are not counted), like summing p.numel() over
// PyTorch's parameters().
func NumParams(m Module) int {
	n := 0
	for _, p := range m.NamedParameters() {
		n += p.Param.Value.NumElements()
	}
	return n
}

// newParam wraps t as a parameter: a tracked leaf on an autodiff device,
// the tensor itself otherwise.
func newParam(t *ember.Tensor) *Param {
	if t.Device().IsAutodiff() {
		t = t.RequireGrad()
	}
	return &Param{Value: t}
}

// prefixed returns ps with prefix + "." prepended to every name.
func prefixed(prefix string, ps []NamedParam) []NamedParam {
	out := make([]NamedParam, len(ps))
	for i, p := range ps {
		out[i] = NamedParam{Name: prefix + "." + p.Name, Param: p.Param}
	}
	return out
}

// fail panics with an *ember.Error for op, the error type of tensor-math
// misuse throughout Ember.
func fail(op string, x *ember.Tensor, format string, args ...any) {
	var ops []string
	if x != nil {
		ops = []string{describe("x", x)}
	}
	panic(&ember.Error{Op: op, Operands: ops, Msg: fmt.Sprintf(format, args...)})
}

// describe formats an operand as "NAME [2 3] f32 on cpu" ("NAME <nil>"
// for nil).
func describe(name string, t *ember.Tensor) string {
	if t == nil {
		return name + " <nil>"
	}
	return fmt.Sprintf("%s %v %v on %v", name, t.Shape(), t.DType(), t.Device())
}

// need panics with an *ember.Error for op when one of xs, whose operand
// names are names, is nil. Every exported function and Forward method of
// this package checks its tensors with it before reading them.
func need(op string, names []string, xs ...*ember.Tensor) {
	for i, x := range xs {
		if x != nil {
			continue
		}
		ops := make([]string, len(xs))
		for j, y := range xs {
			ops[j] = describe(names[j], y)
		}
		panic(&ember.Error{Op: op, Operands: ops, Msg: "operand " + names[i] + " is a nil *Tensor"})
	}
}

// initialized panics with an *ember.Error naming op when a module's
// receiver is nil or one of its parameters (named by names) is missing,
// as in a zero-value module (Linear{}) that its constructor did not make.
// recv is whether the receiver pointer is non-nil.
func initialized(op, ctor string, recv bool, names []string, ps ...*Param) {
	if !recv {
		panic(&ember.Error{Op: op, Msg: "the module is a nil pointer; make it with " + ctor})
	}
	for i, p := range ps {
		if p == nil || p.Value == nil {
			panic(&ember.Error{Op: op, Msg: "parameter " + names[i] + " is missing: the module is not initialized; make it with " + ctor})
		}
	}
}
