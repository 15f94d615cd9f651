package backend

import (
	"github.com/emberml/ember/ir"
)

// Tensor is a backend's handle to one tensor's storage and layout (ir.Tensor).
// Only the backend that made it may interpret it; the root package treats it
// as opaque apart from Shape and DType.
type Tensor = ir.Tensor

// Backend runs operations on one device. Ops arrive as values (ir.Op)
// through Exec; a kind the backend does not Support is lowered by the
// caller with its ir.Spec.Decompose (ir.Run), so a backend implements the
// base kinds and whichever fast-path kinds it has kernels for, and
// nothing else. Every op has been validated and inferred by the caller
// (ir.Op.Infer: its Shape and DType are the output's), so a backend
// panics (with an error wrapping a sentinel of this package) only for
// run-time failures such as running out of memory.
//
// Decorators (autodiff, fusion, capture, remote) implement the same
// interface around an inner Backend and expose it through Unwrap (see
// Wrapper and As).
//
// All methods must be safe for concurrent use.
type Backend interface {
	// Supports and Exec run ops (see ir.Executor).
	ir.Executor

	// ID identifies the device this backend instance runs on.
	ID() DeviceID

	// Sync waits for all queued work and returns an error wrapping
	// ErrExecution for any asynchronous failure since the last Sync.
	Sync() error
	// Flush hands queued work to execution without waiting (no-op for eager backends).
	Flush()
	// Seed re-seeds the device's random generator: after Seed(s) the same
	// sequence of random ops yields the same values.
	Seed(seed uint64)
	// SupportsDType reports whether storage, conversion and arithmetic in dt work.
	SupportsDType(dt DType) bool

	// FromData copies host data onto the device.
	FromData(data *TensorData) Tensor
	// ToData copies a tensor to the host (contiguous, row-major).
	ToData(t Tensor) (*TensorData, error)
}

// Wrapper is implemented by decorators: Unwrap returns the backend they
// wrap.
type Wrapper interface {
	// Unwrap returns the wrapped backend (never nil).
	Unwrap() Backend
}

// As returns the first backend of b's decorator chain (b, then what
// b.Unwrap returns, and so on) that implements T, as errors.As walks an
// error chain. Device capabilities (MemoryManager, PerformanceStater,
// DeviceDescriber, IndexChecker, DivisorChecker) and decorator-specific
// APIs are found this way, whatever decorators wrap the backend that has
// them.
func As[T any](b Backend) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		w, ok := b.(Wrapper)
		if !ok {
			break
		}
		b = w.Unwrap()
	}
	var zero T
	return zero, false
}

// Base returns the innermost backend of b's decorator chain.
func Base(b Backend) Backend {
	for {
		w, ok := b.(Wrapper)
		if !ok {
			return b
		}
		b = w.Unwrap()
	}
}

// IndexChecker is implemented by backends that check the indices of
// Gather, ScatterAdd and IndexSelect on the device and report a bad index
// from the next Sync or ToData (an error wrapping ErrExecution). The root
// package then skips its host-side bounds check, which would cost a device
// round trip per op.
type IndexChecker interface {
	// ChecksIndicesOnDevice reports whether the backend checks indices
	// on the device.
	ChecksIndicesOnDevice() bool
}

// DivisorChecker is implemented by backends that check the divisors of
// integer Div, FloorDiv, Rem and Mod on the device and report a zero
// divisor from the next Sync or ToData (an error wrapping ErrExecution
// that names the device and the op) instead of failing the op. The root
// package then skips its host-side check, which would read every integer
// divisor back and so cost a device round trip per division. A backend
// that does not implement it (or reports false) is handed no integer
// division by zero by the root package.
type DivisorChecker interface {
	// ChecksDivisorsOnDevice reports whether the backend checks integer
	// divisors on the device.
	ChecksDivisorsOnDevice() bool
}

// DeviceInfo describes a device's hardware: the model name the driver
// reports ("NVIDIA H200") and its memory in bytes (0 where unknown).
type DeviceInfo struct {
	Name        string
	MemoryBytes uint64
}

// DeviceDescriber is implemented by backends that can name their hardware;
// the root package's Device.Info uses it.
type DeviceDescriber interface {
	// DeviceInfo describes the device the backend runs on.
	DeviceInfo() DeviceInfo
}

// Kernels is a backend's table of native kernels, one entry per ir.Kind,
// for backends that dispatch Exec through a table (flex, cpu, cuda): a
// kernel file registers its kinds in an init function, so adding a
// kernel edits no switch.
type Kernels[B any] [ir.NumKinds]Kernel[B]

// Kernel is one entry of a Kernels table: Run executes the op; DTypes,
// when set, restricts the dtypes (of the op's first input) it accepts.
type Kernel[B any] struct {
	Run    func(b B, op ir.Op) ir.Outputs
	DTypes func(dt DType) bool
}

// Supports reports whether the table has a kernel for k that accepts dt.
func (t *Kernels[B]) Supports(k ir.Kind, dt DType) bool {
	if int(k) >= len(t) {
		return false
	}
	e := &t[k]
	return e.Run != nil && (e.DTypes == nil || e.DTypes(dt))
}

// Set installs the kernel of k, panicking when it is already set.
func (t *Kernels[B]) Set(k ir.Kind, run func(b B, op ir.Op) ir.Outputs, dtypes func(dt DType) bool) {
	if t[k].Run != nil {
		panic("backend: kernel for " + k.String() + " registered twice")
	}
	t[k] = Kernel[B]{Run: run, DTypes: dtypes}
}

// Exec runs op with its kernel; it panics with an *ir.UnsupportedError
// when the table has none.
func (t *Kernels[B]) Exec(b B, op ir.Op) ir.Outputs {
	if int(op.Kind) < len(t) {
		if r := t[op.Kind].Run; r != nil {
			return r(b, op)
		}
	}
	panic(&ir.UnsupportedError{Kind: op.Kind, DType: op.KeyDType()})
}
