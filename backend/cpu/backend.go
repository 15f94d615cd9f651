package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() {
	backend.Register("cpu", Driver{})
}

// Priority is the DefaultDevice priority of the cpu backend (above flex's
// 10, below the GPU backends).
const Priority = 20

// DefaultMaxCached is the most memory, in bytes, the buffer allocator keeps
// on its free lists: an upper bound, the lists themselves keep per size
// class what the workload reused recently (see alloc.go).
const DefaultMaxCached = 256 << 20

// Driver opens cpu backends; it implements backend.Driver.
type Driver struct{}

// Open returns a new cpu backend for id; it never fails.
func (Driver) Open(id backend.DeviceID) (backend.Backend, error) { return New(id), nil }

// Devices returns the one device, DeviceID{Type: "cpu"}.
func (Driver) Devices() []backend.DeviceID { return []backend.DeviceID{{Type: "cpu"}} }

// Priority returns Priority.
func (Driver) Priority() int { return Priority }

// SingleDevice reports true: the backend has one device, named "cpu".
func (Driver) SingleDevice() bool { return true }

// Backend is the cpu backend for one device. It holds a flex backend,
// whose tensors (host tensors, see backend/internal/host) it shares and
// whose Exec runs every op its own kernels do not take: its kernel table
// has the hot base kinds (Matmul, Conv2d, ConvTranspose2d, Cat, the
// float32 elementwise ops, casts and reductions), which hand an op they
// decline to flex, and the fast-path kinds MaxPool2d, MaxPool2dGrad,
// Conv2dWeightGrad, SliceScatter and ExtremumGrad, which lower an op they
// decline with its decomposition. It is safe for concurrent use.
type Backend struct {
	flex  *flex.Backend
	alloc *allocator
}

var _ backend.Backend = (*Backend)(nil)

// kernels is the table Exec dispatches through; each kernel file fills in
// its kinds from init.
var kernels backend.Kernels[*Backend]

// New returns a cpu backend identified by id (usually
// backend.DeviceID{Type: "cpu"}), its random generator seeded with
// flex.DefaultSeed and its buffer allocator empty.
func New(id backend.DeviceID) *Backend {
	return &Backend{flex: flex.New(id), alloc: newAllocator(DefaultMaxCached)}
}

// Supports reports whether Exec runs kind k on operands of dtype dt: the
// kinds of the backend's own kernels for the dtypes they accept (max
// pooling for F32, Flex32 and F64; the gradient kernels for float dtypes)
// and everything flex runs (every base kind, CumSum).
func (be *Backend) Supports(k ir.Kind, dt backend.DType) bool {
	return kernels.Supports(k, dt) || be.flex.Supports(k, dt)
}

// Exec runs op, which has been inferred (see ir.Executor): on the
// backend's own kernel for its kind, which runs it when the operands'
// dtypes and layouts suit it, or else on flex.
func (be *Backend) Exec(op ir.Op) ir.Outputs {
	if op.Kind == ir.KindBinary {
		// The most frequent kind, called directly (one copy of op fewer).
		return ir.One(be.binaryOp(&op))
	}
	if int(op.Kind) < len(kernels) {
		if run := kernels[op.Kind].Run; run != nil {
			return run(be, op)
		}
	}
	return be.flex.Exec(op)
}

// ID identifies the device this backend runs on.
func (be *Backend) ID() backend.DeviceID { return be.flex.ID() }

// Sync returns nil: every op runs eagerly.
func (be *Backend) Sync() error { return nil }

// Flush does nothing: no work is queued.
func (be *Backend) Flush() {}

// Seed re-seeds the random generator (flex's): after Seed(s) the same
// sequence of Random ops yields the same values.
func (be *Backend) Seed(seed uint64) { be.flex.Seed(seed) }

// RNGState returns the random generator's state (flex's); it implements
// backend.RNGStater.
func (be *Backend) RNGState() ([]byte, error) { return be.flex.RNGState() }

// SetRNGState restores a state RNGState returned (flex's generator).
func (be *Backend) SetRNGState(state []byte) error { return be.flex.SetRNGState(state) }

// SupportsDType reports true for every valid dtype.
func (be *Backend) SupportsDType(dt backend.DType) bool { return be.flex.SupportsDType(dt) }

// FromData copies host data into a new contiguous tensor (see flex).
func (be *Backend) FromData(data *backend.TensorData) backend.Tensor { return be.flex.FromData(data) }

// ToData copies x to the host as contiguous row-major bytes (see flex).
func (be *Backend) ToData(x backend.Tensor) (*backend.TensorData, error) { return be.flex.ToData(x) }

// f32 returns a float32 buffer of n elements with unspecified contents
// from the allocator.
func (be *Backend) f32(n int) []float32 { return be.alloc.getF32(n) }

// newF32 returns a contiguous tensor of dtype dt (F32 or Flex32) and
// shape, of n elements, and its elements with unspecified contents for the
// caller to fill in: small tensors are one allocation (host.MakeFloat32),
// large ones take their buffer from the allocator.
func (be *Backend) newF32(dt ir.DType, shape []int, n int) (ir.Tensor, []float32) {
	if n < minPooled {
		return host.MakeFloat32(dt, shape)
	}
	out := be.f32(n)
	return host.NewFloat32(dt, shape, out), out
}

// f64 returns a float64 buffer of n elements with unspecified contents.
func (be *Backend) f64(n int) []float64 { return be.alloc.getF64(n) }

// isF32 reports whether dt is stored as float32 (F32 and Flex32).
func isF32(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 }

// numel is the number of elements of shape (1 for rank 0).
func numel(shape []int) int { return backend.NumElements(shape) }

// DeviceInfo describes the host: the backend's name and the machine's
// physical memory in bytes (0 where the platform does not say); it
// implements backend.DeviceDescriber.
func (be *Backend) DeviceInfo() backend.DeviceInfo { return be.flex.DeviceInfo() }
