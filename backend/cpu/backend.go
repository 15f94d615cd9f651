package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

func init() {
	backend.Register("cpu", Driver{})
}

// Priority is the DefaultDevice priority of the cpu backend (above flex's
// 10, below the GPU backends).
const Priority = 20

// DefaultMaxCached is the most memory, in bytes, the buffer allocator keeps
// on its free lists.
const DefaultMaxCached = 256 << 20

// Driver opens cpu backends; it implements backend.Driver.
type Driver struct{}

// Open returns a new cpu backend for id; it never fails.
func (Driver) Open(id backend.DeviceID) (backend.Backend, error) { return New(id), nil }

// Devices returns the one device, DeviceID{Type: "cpu"}.
func (Driver) Devices() []backend.DeviceID { return []backend.DeviceID{{Type: "cpu"}} }

// Priority returns Priority.
func (Driver) Priority() int { return Priority }

// Backend is the cpu backend for one device. It embeds the flex backend,
// whose kernels and tensors (*flex.Tensor) it shares, and overrides the
// hot ops: Matmul, Conv2d, ConvTranspose2d, Cat, the float32 elementwise
// ops and reductions, and implements the optional gradient kernels
// (backend.Conv2dWeightGrader, backend.SliceScatterer,
// backend.ExtremumGrader) and max pooling (backend.MaxPool2der). It is safe
// for concurrent use.
type Backend struct {
	*flex.Backend
	alloc *allocator
}

var _ backend.Backend = (*Backend)(nil)

// New returns a cpu backend identified by id (usually
// backend.DeviceID{Type: "cpu"}), its random generator seeded with
// flex.DefaultSeed and its buffer allocator empty.
func New(id backend.DeviceID) *Backend {
	return &Backend{Backend: flex.New(id), alloc: newAllocator(DefaultMaxCached)}
}

// f32 returns a float32 buffer of n elements with unspecified contents
// from the allocator.
func (be *Backend) f32(n int) []float32 { return be.alloc.f32.get(n) }

// f64 returns a float64 buffer of n elements with unspecified contents.
func (be *Backend) f64(n int) []float64 { return be.alloc.f64.get(n) }

// isF32 reports whether dt is stored as float32 (F32 and Flex32).
func isF32(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 }

// numel is the number of elements of shape (1 for rank 0).
func numel(shape []int) int { return backend.NumElements(shape) }
