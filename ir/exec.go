package ir

import (
	"errors"
	"fmt"
)

// Executor runs ops: a backend, a decorator, or anything that executes the
// kinds it supports. Supports and Exec must be safe for concurrent use.
type Executor interface {
	// Supports reports whether Exec runs kind k natively on operands of
	// dtype dt (KeyDType of the op). Base kinds must be supported for
	// every dtype the executor stores; for any other kind, false makes
	// Run lower the op with its Spec.Decompose instead.
	Supports(k Kind, dt DType) bool
	// Exec runs op, which has been inferred (Shape and DType are its
	// output's) and whose kind Supports accepted, and returns its
	// outputs. It panics with an error wrapping a sentinel (out of
	// memory, ...) for run-time failures.
	Exec(op Op) Outputs
}

// KeyDType is the dtype an executor's Supports is asked about for op: the
// dtype of its first input, or its output dtype for kinds without inputs.
func (op *Op) KeyDType() DType {
	n := specs[op.Kind].NumInputs
	switch {
	case n == 0:
		return op.DType
	case n < 0 || n > len(op.In):
		if len(op.Xs) > 0 && op.Xs[0] != nil {
			return op.Xs[0].DType()
		}
		return op.DType
	}
	if op.In[0] != nil {
		return op.In[0].DType()
	}
	return op.DType
}

// Run executes op on e: natively when e supports its kind for its key
// dtype, otherwise through the kind's decomposition (whose sub-ops go
// through Run in turn). This is the one dispatch rule of Ember. op must
// have been inferred. Base kinds go to Exec without asking Supports: for
// them Run(e, op) is e.Exec(op), which a hot path may call directly.
//
// Supports sees only the kind and a dtype. A kernel that finds at run time
// that it cannot take an op it accepted (an operand layout it has no fast
// path for) lowers the op itself with SpecOf(op.Kind).Decompose(op, e) on
// its own executor — never with Run on the same kind, which would come
// back to it.
func Run(e Executor, op Op) Outputs {
	d := specs[op.Kind].Decompose
	if d == nil || e.Supports(op.Kind, op.KeyDType()) {
		// Base kinds have no decomposition: every executor runs them
		// (and panics with an *UnsupportedError for a dtype it lacks).
		return e.Exec(op)
	}
	return d(op, e)
}

// Apply infers op and runs it on e, returning its first output. It is
// meant for code that builds ops from already validated operands
// (decompositions, gradient rules): an inference error is a bug there and
// panics with an *InferError.
func Apply(e Executor, op Op) Tensor {
	if err := op.Infer(); err != nil {
		panic(&InferError{Op: op.Name(), Err: err})
	}
	return Run(e, op)[0]
}

// ApplyAll is Apply returning every output.
func ApplyAll(e Executor, op Op) Outputs {
	if err := op.Infer(); err != nil {
		panic(&InferError{Op: op.Name(), Err: err})
	}
	return Run(e, op)
}

// ErrUnsupported: an executor was asked to run a base kind it lacks.
var ErrUnsupported = errors.New("unsupported op")

// UnsupportedError says which base kind an executor could not run; it
// wraps ErrUnsupported.
type UnsupportedError struct {
	Kind  Kind
	DType DType
}

// Error names the kind and dtype.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("ir: %s on %v is not supported by this backend and has no decomposition", e.Kind, e.DType)
}

// Unwrap returns ErrUnsupported.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// InferError is the panic value of Apply for an op that does not infer.
type InferError struct {
	Op  string
	Err error
}

// Error is the op's name and the inference error.
func (e *InferError) Error() string { return "ir: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the inference error.
func (e *InferError) Unwrap() error { return e.Err }

// errorf builds an inference error.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
