//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// Backend runs Ember's primitives on one Vulkan adapter as compute
// shaders. It implements backend.Backend (ops arrive through Exec and are
// dispatched through a kernel table), backend.MemoryManager,
// backend.PerformanceStater and backend.DeviceDescriber, and is safe for
// concurrent use. The backends of every DeviceID naming one adapter share
// its device: queue, memory and pipelines.
type Backend struct {
	id backend.DeviceID
	d  *device

	seed         atomic.Uint64
	philoxOffset atomic.Uint64
}

var (
	_ backend.Backend           = (*Backend)(nil)
	_ backend.MemoryManager     = (*Backend)(nil)
	_ backend.PerformanceStater = (*Backend)(nil)
	_ backend.DeviceDescriber   = (*Backend)(nil)
)

// ID returns the device's identity as it was opened
// (DeviceID{Type: "vulkan", Kind: "discrete", Index: 0}, ...).
func (b *Backend) ID() backend.DeviceID { return b.id }

// Adapter describes the physical device the backend runs on.
func (b *Backend) Adapter() *Adapter { return b.d.adapter }

// kernels is the backend's kernel table: each ops file registers the kinds
// it implements from an init function.
var kernels backend.Kernels[*Backend]

// Supports reports whether Exec runs kind k on operands of dtype dt: every
// base kind on every dtype the device supports; other kinds are lowered by
// the caller with their ir.Spec.Decompose.
func (b *Backend) Supports(k ir.Kind, dt backend.DType) bool { return kernels.Supports(k, dt) }

// Exec runs op, inferred by the caller, with its kernel. Kernels record
// their work in the current command batch and return at once; the
// outputs are contiguous tensors or views of the inputs (movement kinds).
// A device failure panics with an error naming the device and the op.
func (b *Backend) Exec(op ir.Op) ir.Outputs { return kernels.Exec(b, op) }

// Sync submits the recorded work and waits for all of it. A lost device
// comes back as an error wrapping backend.ErrExecution; it is sticky.
// After new pipelines were compiled, Sync also saves the driver's
// pipeline cache (at most every cacheSaveInterval; see cache.go).
func (b *Backend) Sync() error {
	if err := b.d.waitIdle(); err != nil {
		return fmt.Errorf("%v: %w", b.id, err)
	}
	b.d.savePipelineCache()
	return nil
}

// Flush submits the recorded work without waiting for it.
func (b *Backend) Flush() {
	_ = b.d.flush()
}

// Seed sets the seed of the random ops and resets the Philox counter: the
// same seed and the same sequence of random ops give the same values.
func (b *Backend) Seed(seed uint64) {
	b.seed.Store(seed)
	b.philoxOffset.Store(0)
}

// nextPhilox reserves n counters of the Philox stream and returns the
// seed and the first counter.
func (b *Backend) nextPhilox(n uint64) (seed, offset uint64) {
	off := b.philoxOffset.Add(n) - n
	return b.seed.Load(), off
}

// SupportsDType reports whether dt can be stored, converted and computed,
// from the device's features: F64 needs shaderFloat64, F16 shaderFloat16;
// BF16 has no shader type without an extension, so it is stored as 16
// bits and computed in float32 (as F16 is: rounded to nearest even after
// each op, as on every backend); I64 and U64 need shaderInt64, the 8- and
// 16-bit dtypes and Bool 8- and 16-bit storage. Every usable adapter has
// all but shaderFloat16 (Adapters says which lack what).
func (b *Backend) SupportsDType(dt backend.DType) bool {
	switch dt {
	case backend.F64:
		return b.d.f64
	case backend.F16:
		return b.d.f16
	}
	return dt.Valid()
}

// DeviceInfo returns the adapter's name and device-local memory in bytes
// (backend.DeviceDescriber).
func (b *Backend) DeviceInfo() backend.DeviceInfo {
	return backend.DeviceInfo{Name: b.d.adapter.Name, MemoryBytes: b.d.adapter.Memory}
}

// must panics with err, naming the device and the op, when it is not nil.
func (b *Backend) must(op string, err error) {
	if err != nil {
		panic(fmt.Errorf("%v: %s: %w", b.id, op, err))
	}
}

// empty returns a new contiguous tensor of shape (kept) and dt with
// unspecified contents; it panics naming op when the device is out of
// memory.
func (b *Backend) empty(op string, shape []int, dt backend.DType) *Tensor {
	n := uint64(backend.NumElements(shape)) * uint64(storageSize(dt))
	buf, err := b.d.newBuffer(n, b.d.persistent.Load() > 0)
	b.must(op, err)
	return &Tensor{buf: buf, shape: shape, strides: layout.RowMajorStrides(shape), dtype: dt}
}

// run records dispatches, panicking with the device error naming op.
func (b *Backend) run(op string, ds ...dispatch) { b.must(op, b.d.run(ds...)) }
