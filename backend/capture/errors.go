package capture

import (
	"errors"
	"fmt"

	"github.com/emberml/ember/ir"
)

// Sentinel errors of the recorder; the root package re-exports them
// (ember.ErrAlreadyActive, ember.ErrUndeclaredInput, ...).
var (
	// ErrAlreadyActive: Begin was called while a scope is open on the
	// device (from any goroutine).
	ErrAlreadyActive = errors.New("a capture scope is already open on this device")
	// ErrNoScope: an op reached the device while no scope was open (before
	// Begin, after Complete or Close).
	ErrNoScope = errors.New("no capture scope is open on this device")
	// ErrNotComputed: a tensor computed on a capture device was read; the
	// device records ops and computes nothing, so only values (data moved
	// onto it) can be read.
	ErrNotComputed = errors.New("the tensor was recorded, not computed: a capture device holds no value for it")
	// ErrForeignTensor: an op's input was not made by this capture device.
	ErrForeignTensor = errors.New("the tensor was not made by this capture device")

	// ErrUnknownTensor: a boundary id that the device does not know: 0,
	// never issued, or a tensor dropped before the scope used it.
	ErrUnknownTensor = errors.New("unknown tensor")
	// ErrDuplicateBoundary: an id listed twice among the inputs, or twice
	// among the outputs.
	ErrDuplicateBoundary = errors.New("tensor listed twice")
	// ErrUndeclaredInput: an op of the scope used a tensor that is neither
	// declared as an input, nor produced by an op of the scope, nor a
	// value (data moved onto the device).
	ErrUndeclaredInput = errors.New("tensor used but not declared as an input")
	// ErrInputProduced: a declared input is produced by an op of the
	// scope.
	ErrInputProduced = errors.New("input is produced inside the graph")
	// ErrOutputDropped: a declared output became unreachable (was
	// garbage collected) before Complete, so the program can no longer
	// refer to it.
	ErrOutputDropped = errors.New("output was dropped before Complete")
	// ErrOutputNotProduced: a declared output is not produced by an op of
	// the scope (it is a value, an input, or a tensor of another scope).
	ErrOutputNotProduced = errors.New("output is not produced by the graph")
)

// BoundaryError reports a declared boundary that Complete rejects. Err is
// one of the boundary sentinels (ErrUnknownTensor ... ErrOutputNotProduced),
// so errors.Is tells the classes apart.
type BoundaryError struct {
	// Boundary is "input" or "output".
	Boundary string
	// Index is the position in the declared list, or -1 for an undeclared
	// input (which is in no list).
	Index int
	// ID is the tensor's id.
	ID ir.TensorID
	// Shape and DType describe the tensor where the device knows it.
	Shape []int
	DType ir.DType
	// Op is the op that used an undeclared input, with its index in the
	// scope ("op 3 (matmul)"); empty for the other classes.
	Op string
	// Err is the class's sentinel.
	Err error
}

// Error formats as "input 2 (tensor 17 [2 3] f32): input is produced inside
// the graph".
func (e *BoundaryError) Error() string {
	where := fmt.Sprintf("%s %d", e.Boundary, e.Index)
	if e.Index < 0 {
		where = e.Boundary
	}
	what := fmt.Sprintf("tensor %d", e.ID)
	if e.DType.Valid() {
		what += fmt.Sprintf(" %v %v", e.Shape, e.DType)
	}
	msg := fmt.Sprintf("%s (%s): %v", where, what, e.Err)
	if e.Op != "" {
		msg += " (used by " + e.Op + ")"
	}
	return msg
}

// Unwrap returns the class's sentinel.
func (e *BoundaryError) Unwrap() error { return e.Err }

// ScopeError is the panic value of an op the device cannot record: one
// that arrives outside a scope (ErrNoScope) or has an input of another
// device (ErrForeignTensor). The root package turns it into an
// *ember.Error naming the op and the device.
type ScopeError struct {
	// Op is the op's name ("add", "matmul").
	Op string
	// Device is the capture device's name ("capture:3").
	Device string
	// Detail says more (which input), or is empty.
	Detail string
	// Err is ErrNoScope or ErrForeignTensor.
	Err error
}

// Error formats as "capture: OP on DEVICE: cause".
func (e *ScopeError) Error() string {
	s := fmt.Sprintf("capture: %s on %s: %v", e.Op, e.Device, e.Err)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *ScopeError) Unwrap() error { return e.Err }
