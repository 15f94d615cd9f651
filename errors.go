package ember

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/emberml/ember/backend"
)

// Sentinel errors; wrap-compatible with errors.Is. They are the same values
// as package backend's, so backends and users agree on them.
var (
	// ErrOutOfMemory: a device allocation failed even after its cache was released.
	ErrOutOfMemory = backend.ErrOutOfMemory
	// ErrBackendUnavailable: the device's backend is missing from this build,
	// or its library or hardware is missing on this machine.
	ErrBackendUnavailable = backend.ErrBackendUnavailable
	// ErrAlreadyInitialized: Configure was called twice, or after the
	// device's first tensor operation.
	ErrAlreadyInitialized = backend.ErrAlreadyInitialized
	// ErrUnsupportedDType: the device cannot store or compute in that dtype.
	ErrUnsupportedDType = backend.ErrUnsupportedDType
	// ErrExecution: queued device work failed asynchronously (see ExecutionError).
	ErrExecution = backend.ErrExecution
	// ErrInvalidDevice: the operation needs a different kind of device.
	ErrInvalidDevice = backend.ErrInvalidDevice
)

// Error is the panic value of tensor-math misuse: a shape, dtype, device or
// axis that the op cannot accept. It names the op, describes each operand
// (shape, dtype, device) and says what was expected. Turn such panics into
// errors with Try.
type Error struct {
	// Op is the op's name, e.g. "matmul".
	Op string
	// Operands describe the inputs, e.g. "lhs [2 3] f32 on cpu".
	Operands []string
	// Msg says what is wrong and what was expected.
	Msg string
	// Err is an underlying cause (for example a device's initialization
	// error), or nil.
	Err error
}

// Error formats as "ember: OP: MSG (operand; operand)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ember: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if len(e.Operands) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(e.Operands, "; "))
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Try runs f and returns the *Error (or any other error value) it panicked
// with, or nil if it returned normally. Panics whose value is not an error,
// and Go runtime errors (nil dereference, index out of range: bugs rather
// than misuse), are re-raised.
func Try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				if _, isRuntime := e.(runtime.Error); !isRuntime {
					err = e
					return
				}
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// DeviceError is a run-time failure tied to one device (initialization,
// configuration). It wraps a sentinel such as ErrAlreadyInitialized or
// ErrBackendUnavailable.
type DeviceError struct {
	// Device is the device's name as Device.String prints it.
	Device string
	// Op is what was attempted ("init", "configure", ...).
	Op string
	// Err is the cause; errors.Is sees through it.
	Err error
}

// Error formats as "ember: DEVICE: OP: cause", the cause without a
// leading "ember: " or "DEVICE: " of its own (a backend's error that
// already names the device reads "ember: cuda:0: init: backend
// unavailable: ...", not "... init: cuda:0: backend unavailable").
func (e *DeviceError) Error() string {
	msg := fmt.Sprint(e.Err)
	msg = strings.TrimPrefix(msg, "ember: ")
	if e.Device != "" {
		msg = strings.TrimPrefix(msg, e.Device+": ")
	}
	return fmt.Sprintf("ember: %s: %s: %s", e.Device, e.Op, msg)
}

// Unwrap returns the cause.
func (e *DeviceError) Unwrap() error { return e.Err }

// ExecutionError is returned by Device.Sync (and reads) when queued work
// failed asynchronously, e.g. a GPU kernel fault. It wraps ErrExecution and
// the backend's own error.
type ExecutionError struct {
	// Device is the device's name.
	Device string
	// Err is the backend's error.
	Err error
}

// Error formats as "ember: DEVICE: execution failed: cause", the cause
// without a leading "ember: ", "DEVICE: " or "execution failed: " of its
// own (a backend's error that already names the device and the sentinel
// reads "ember: cuda:0: execution failed: div: integer division by zero",
// not "... execution failed: cuda:0: execution failed: div: ...").
func (e *ExecutionError) Error() string {
	msg := fmt.Sprint(e.Err)
	msg = strings.TrimPrefix(msg, "ember: ")
	if e.Device != "" {
		msg = strings.TrimPrefix(msg, e.Device+": ")
	}
	msg = strings.TrimPrefix(msg, ErrExecution.Error()+": ")
	return fmt.Sprintf("ember: %s: execution failed: %s", e.Device, msg)
}

// Unwrap returns ErrExecution and the backend's error.
func (e *ExecutionError) Unwrap() []error { return []error{ErrExecution, e.Err} }

// describe formats one operand as "NAME [2 3] f32 on cpu" ("NAME <nil>"
// for a nil or zero Tensor).
func describe(name string, t *Tensor) string {
	if t == nil || t.t == nil {
		return name + " <nil>"
	}
	return fmt.Sprintf("%s %v %v on %v", name, t.t.Shape(), t.t.DType(), t.dev)
}

// need panics with an *Error for op when x, its operand name, is nil or a
// zero Tensor (one not made by this package). Every exported function and
// method checks its tensor operands through need or commonDevice before
// it reads them.
func (x *Tensor) need(op, name string) {
	if x == nil || x.t == nil {
		x.failNilOperand(op, name)
	}
}

// failNilOperand panics with the *Error for op of the nil or zero operand
// x named name (out of line: need and prim stay cheap enough to inline).
//
//go:noinline
func (x *Tensor) failNilOperand(op, name string) { panic(nilOperand(op, name, x)) }

// nilOperand is nilError for the single operand x named name.
func nilOperand(op, name string, x *Tensor) *Error {
	return nilError(op, []string{name}, []*Tensor{x}, 0)
}

// failNil panics with nilError(op, names, xs, i).
func failNil(op string, names []string, xs []*Tensor, i int) {
	panic(nilError(op, names, xs, i))
}

// nilError is the *Error for op whose operand xs[i] is nil or a zero
// Tensor; names name xs.
func nilError(op string, names []string, xs []*Tensor, i int) *Error {
	ops := make([]string, len(xs))
	for j, y := range xs {
		ops[j] = describe(names[j], y)
	}
	msg := "operand " + names[i] + " is a nil *Tensor"
	if xs[i] != nil {
		msg = "operand " + names[i] + " is a zero Tensor (tensors are made by this package's functions)"
	}
	return &Error{Op: op, Operands: ops, Msg: msg}
}

// The *Errors of the accessors of a nil or zero receiver, built once so
// that the accessors stay cheap enough to inline.
var (
	errNilShape = nilOperand("shape", "x", nil)
	errNilDType = nilOperand("dtype", "x", nil)
)

// prim returns x's backend tensor, panicking with an *Error for op when x
// is nil or a zero Tensor.
func (x *Tensor) prim(op string) backend.Tensor {
	if x == nil || x.t == nil {
		x.failNilOperand(op, "x")
	}
	return x.t
}

// fail panics with an *Error for op.
func fail(op string, operands []string, format string, args ...any) {
	panic(&Error{Op: op, Operands: operands, Msg: fmt.Sprintf(format, args...)})
}

// asError converts a backend panic value into an error (used at boundaries).
func asError(r any) error {
	if e, ok := r.(error); ok {
		return e
	}
	return errors.New(fmt.Sprint(r))
}
