package capture

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	backend.Register("capture", Driver{})
}

// Driver opens capture backends; it implements backend.Driver. It lists
// no devices: capture devices are made on demand (ember.Capture), one
// backend per DeviceID.
type Driver struct{}

// Open returns a new, empty capture backend for id; it fails only for an
// id that is not a capture device's.
func (Driver) Open(id backend.DeviceID) (backend.Backend, error) {
	if id.Type != "capture" || id.Kind != "" || id.Addr != "" || id.Index < 0 {
		return nil, fmt.Errorf("%w: %v is not a capture device", backend.ErrInvalidDevice, id)
	}
	return New(id), nil
}

// Devices lists none: capture devices are not hardware.
func (Driver) Devices() []backend.DeviceID { return nil }

// Priority is 0: DefaultDevice never picks a capture device.
func (Driver) Priority() int { return 0 }

// Backend records the ops it receives instead of running them (Burn's
// capture device). It implements backend.Backend, backend.IndexChecker and
// backend.DivisorChecker and is safe for concurrent use.
//
// Tensors are *Tensor handles with a shape, a dtype and an id from a
// counter of the backend (1, 2, ...; never reused). FromData makes a
// value: a tensor whose data the backend holds, inside or outside a scope.
// Exec records the op in the open scope (see Begin) and returns new
// handles for its outputs; outside a scope it panics with a *ScopeError
// wrapping ErrNoScope. ToData returns a value's data and fails with
// ErrNotComputed for a recorded result: nothing is computed here.
type Backend struct {
	id   backend.DeviceID
	name string
	// last is the last tensor id issued.
	last atomic.Uint64

	mu sync.Mutex
	// live describes every tensor whose handle is reachable, by id
	// (entries are removed by the handles' cleanups).
	live map[ir.TensorID]info
	// scope is the open scope, nil when none is.
	scope *Scope
}

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.IndexChecker   = (*Backend)(nil)
	_ backend.DivisorChecker = (*Backend)(nil)
)

// info describes one tensor of the backend.
type info struct {
	shape []int
	dtype ir.DType
	// value is the data of a value (FromData), nil for a recorded result.
	value *ir.TensorData
}

// New returns an empty capture backend for the device id.
func New(id backend.DeviceID) *Backend {
	return &Backend{id: id, name: id.String(), live: map[ir.TensorID]info{}}
}

// Tensor is the capture backend's tensor handle: an id, a shape and a
// dtype, plus the data of a value. It implements backend.NumberedTensor.
// When a handle becomes unreachable (runtime.AddCleanup), the backend
// forgets it; a recorded result dropped before Complete can no longer be
// an output (ErrOutputDropped).
type Tensor struct {
	id    ir.TensorID
	shape []int
	dtype ir.DType
	value *ir.TensorData
	b     *Backend
}

// Shape is the tensor's shape (do not modify it).
func (t *Tensor) Shape() []int { return t.shape }

// DType is the tensor's dtype.
func (t *Tensor) DType() ir.DType { return t.dtype }

// TensorID is the tensor's id on its capture device (never 0).
func (t *Tensor) TensorID() ir.TensorID { return t.id }

// IsValue reports whether the tensor is a value (data moved onto the
// device with FromData) rather than the result of a recorded op.
func (t *Tensor) IsValue() bool { return t.value != nil }

// newTensor issues a handle of the next id and registers it; the caller
// holds b.mu.
func (b *Backend) newTensor(shape []int, dt ir.DType, value *ir.TensorData) *Tensor {
	id := ir.TensorID(b.last.Add(1))
	t := &Tensor{id: id, shape: shape, dtype: dt, value: value, b: b}
	b.live[id] = info{shape: shape, dtype: dt, value: value}
	runtime.AddCleanup(t, b.drop, id)
	return t
}

// drop forgets the tensor id, whose handle became unreachable, and marks
// it dropped in the open scope when the scope produced it.
func (b *Backend) drop(id ir.TensorID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.live, id)
	if s := b.scope; s != nil {
		if _, ok := s.produced[id]; ok {
			s.dropped[id] = true
		}
	}
}

// Live reports whether the handle of tensor id is still reachable (its
// cleanup has not run). It is meant for tests and tools that wait for a
// dropped tensor to be noticed.
func (b *Backend) Live(id ir.TensorID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.live[id]
	return ok
}

// ID identifies the capture device.
func (b *Backend) ID() backend.DeviceID { return b.id }

// Supports reports true for every valid kind and dtype: ops are recorded as
// the kinds the caller built, never decomposed here. A graph replayed on a
// device that lacks a kind's kernel is lowered there.
func (b *Backend) Supports(k ir.Kind, dt backend.DType) bool { return k.Valid() && dt.Valid() }

// Exec records op, which has been inferred, in the open scope and returns
// new handles for its outputs (of op's shape and dtype; SGDStep without
// momentum has no second output, as its decomposition). It panics with a
// *ScopeError wrapping ErrNoScope when no scope is open, or wrapping
// ErrForeignTensor for an input this backend did not make.
func (b *Backend) Exec(op ir.Op) ir.Outputs {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !op.Kind.Valid() {
		panic(&ScopeError{Op: op.Name(), Device: b.name, Err: &ir.UnsupportedError{Kind: op.Kind, DType: op.DType}})
	}
	s := b.scope
	if s == nil {
		panic(&ScopeError{Op: op.Name(), Device: b.name, Err: ErrNoScope})
	}
	return s.record(&op)
}

// Sync returns nil: nothing runs on a capture device.
func (b *Backend) Sync() error { return nil }

// Flush does nothing: nothing is queued.
func (b *Backend) Flush() {}

// Seed panics with an error wrapping backend.ErrInvalidDevice: random ops
// are recorded and sample on the device a graph replays on, so seed that
// device instead.
func (b *Backend) Seed(seed uint64) {
	panic(fmt.Errorf("capture: seed on %s: %w: a capture device records random ops without sampling; seed the device the graph runs on", b.name, backend.ErrInvalidDevice))
}

// SupportsDType reports true for every valid dtype: any dtype can be
// recorded (F32, F64, BF16, I32 and Bool among them).
func (b *Backend) SupportsDType(dt backend.DType) bool { return dt.Valid() }

// ChecksIndicesOnDevice reports true (backend.IndexChecker): indices are
// checked where a graph replays, so the caller does not read them back.
func (b *Backend) ChecksIndicesOnDevice() bool { return true }

// ChecksDivisorsOnDevice reports true (backend.DivisorChecker): the
// divisors of integer divisions are checked where a graph replays, so the
// caller does not read them back (a recorded result has no data to read).
func (b *Backend) ChecksDivisorsOnDevice() bool { return true }

// FromData makes a value: a tensor holding a copy of data, inside or
// outside a scope. A recorded op that uses it puts it in the graph's
// values, unless the scope declares it as an input. It panics with an
// error wrapping ir.ErrFormat for nil or inconsistent data.
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor {
	if data == nil || !data.DType.Valid() {
		panic(fmt.Errorf("capture: from_data on %s: %w: needs tensor data of a valid dtype", b.name, ir.ErrFormat))
	}
	if n, err := ir.NumBytes(data.Shape, data.DType); err != nil || n != len(data.Bytes) {
		panic(fmt.Errorf("capture: from_data on %s: %w: shape %v of %v does not match %d bytes", b.name, ir.ErrFormat, data.Shape, data.DType, len(data.Bytes)))
	}
	v := &ir.TensorData{Shape: slices.Clone(data.Shape), DType: data.DType, Bytes: slices.Clone(data.Bytes)}
	if v.Shape == nil {
		v.Shape = []int{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.newTensor(v.Shape, v.DType, v)
}

// ToData returns a copy of a value's data. A recorded result has none: the
// error wraps ErrNotComputed. A tensor of another backend gives an error
// wrapping ErrForeignTensor.
func (b *Backend) ToData(t backend.Tensor) (*backend.TensorData, error) {
	ct, ok := t.(*Tensor)
	if !ok || ct.b != b {
		return nil, fmt.Errorf("capture: to_data on %s: %w", b.name, ErrForeignTensor)
	}
	if ct.value == nil {
		return nil, fmt.Errorf("capture: to_data of tensor %d %v %v on %s: %w", ct.id, ct.shape, ct.dtype, b.name, ErrNotComputed)
	}
	return cloneData(ct.value), nil
}

// cloneData returns a deep copy of d.
func cloneData(d *ir.TensorData) *ir.TensorData {
	return &ir.TensorData{Shape: slices.Clone(d.Shape), DType: d.DType, Bytes: slices.Clone(d.Bytes)}
}
