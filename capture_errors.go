package ember

import (
	"errors"
	"fmt"

	"github.com/emberml/ember/backend/capture"
	"github.com/emberml/ember/ir"
)

// Sentinel errors of capture (Device.CaptureScope, CapturedGraph). They are
// the same values as package capture's.
var (
	// ErrAlreadyActive: CaptureScope was called on a capture device that
	// has a scope open (from any goroutine).
	ErrAlreadyActive = capture.ErrAlreadyActive
	// ErrNoCaptureScope: an op reached a capture device while no scope
	// was open on it (before CaptureScope, or after Complete); the *Error
	// of such an op wraps it.
	ErrNoCaptureScope = capture.ErrNoScope
	// ErrNotComputed: a tensor computed on a capture device was read
	// (ToData, Float32s, Item, ...); the device records ops and holds
	// values only for data moved onto it.
	ErrNotComputed = capture.ErrNotComputed

	// ErrUnknownBoundary: a declared input or output id that the capture
	// device does not know (0, never issued, or a tensor dropped before
	// the scope used it).
	ErrUnknownBoundary = capture.ErrUnknownTensor
	// ErrDuplicateBoundary: an id listed twice among the inputs, or twice
	// among the outputs.
	ErrDuplicateBoundary = capture.ErrDuplicateBoundary
	// ErrUndeclaredInput: an op of the scope used a tensor that is
	// neither declared as an input, nor created inside the scope, nor a
	// value (data moved onto the capture device).
	ErrUndeclaredInput = capture.ErrUndeclaredInput
	// ErrInputProduced: a declared input is produced by an op of the
	// scope.
	ErrInputProduced = capture.ErrInputProduced
	// ErrOutputDropped: a declared output was dropped (became unreachable
	// and was garbage collected) before Complete.
	ErrOutputDropped = capture.ErrOutputDropped
	// ErrOutputNotProduced: a declared output is not produced by an op of
	// the scope (a value, an input, a tensor of an earlier scope).
	ErrOutputNotProduced = capture.ErrOutputNotProduced

	// ErrInvalidGraph: a graph does not validate (ir.Graph.Validate), or
	// its inputs do not match it; the same value as ir.ErrInvalidGraph.
	ErrInvalidGraph = ir.ErrInvalidGraph
	// ErrGraphTooLarge: ReadGraph met more bytes than its limit.
	ErrGraphTooLarge = errors.New("ember: graph file exceeds the size limit")
)

// CaptureError is the error CaptureScope returns for a boundary that
// CaptureScope.Complete rejects: which boundary, which tensor, and the
// class as a sentinel (Err), so that errors.Is(err, ErrOutputDropped) and
// the like tell the classes apart:
//
//   - ErrUnknownBoundary: the id is unknown to the device;
//   - ErrDuplicateBoundary: the id is listed twice in one list;
//   - ErrUndeclaredInput: an op used a tensor that is neither declared,
//     nor created inside the scope, nor a value (Op names that op);
//   - ErrInputProduced: a declared input is produced inside the graph;
//   - ErrOutputDropped: a declared output was dropped before Complete;
//   - ErrOutputNotProduced: a declared output is not produced by the
//     graph.
//
// Burn's capture also rejects an output consumed in place; Ember's tensors
// are immutable and no op consumes its input, so that class cannot occur.
type CaptureError struct {
	// Device is the capture device's name ("capture:3").
	Device string
	// Boundary is "input" or "output".
	Boundary string
	// Index is the position in the declared list, -1 for an undeclared
	// input.
	Index int
	// ID is the tensor's id.
	ID TensorID
	// Shape and DType describe the tensor where the device knows it
	// (DType is 0 otherwise).
	Shape []int
	DType DType
	// Op is the op that used an undeclared input ("op 3 (matmul)"),
	// empty for the other classes.
	Op string
	// Err is the class's sentinel.
	Err error
}

// Error formats as "ember: capture:3: capture_scope: output 1 (tensor 17
// [2 3] f32): output was dropped before Complete".
func (e *CaptureError) Error() string {
	where := fmt.Sprintf("%s %d", e.Boundary, e.Index)
	if e.Index < 0 {
		where = e.Boundary
	}
	what := fmt.Sprintf("tensor %d", e.ID)
	if e.DType.Valid() {
		what += fmt.Sprintf(" %v %v", e.Shape, e.DType)
	}
	s := fmt.Sprintf("ember: %s: capture_scope: %s (%s): %v", e.Device, where, what, e.Err)
	if e.Op != "" {
		s += " (used by " + e.Op + ")"
	}
	return s
}

// Unwrap returns the class's sentinel.
func (e *CaptureError) Unwrap() error { return e.Err }

// captureError converts the recorder's boundary errors into *CaptureError
// (other errors are returned as they are, inside a *DeviceError).
func captureError(dev string, err error) error {
	var be *capture.BoundaryError
	if errors.As(err, &be) {
		return &CaptureError{Device: dev, Boundary: be.Boundary, Index: be.Index, ID: be.ID,
			Shape: be.Shape, DType: be.DType, Op: be.Op, Err: be.Err}
	}
	return &DeviceError{Device: dev, Op: "capture_scope", Err: err}
}
