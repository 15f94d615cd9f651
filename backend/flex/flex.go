package flex

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/hostrng"
	"github.com/emberml/ember/internal/sysmem"
	"github.com/emberml/ember/ir"
)

// DefaultSeed seeds a backend's generator until its first Seed call, so a
// fresh backend's random ops are reproducible from run to run.
const DefaultSeed uint64 = 0x5eed

// Backend is the flex backend for one device. It is safe for concurrent
// use: ops share no mutable state apart from the random generator, which a
// mutex guards.
type Backend struct {
	id  backend.DeviceID
	rng *hostrng.Generator
}

var _ backend.Backend = (*Backend)(nil)

// New returns a flex backend identified by id (usually
// backend.DeviceID{Type: "flex"}), its generator seeded with DefaultSeed.
func New(id backend.DeviceID) *Backend {
	return &Backend{id: id, rng: hostrng.New(DefaultSeed)}
}

// ID identifies the device this backend runs on.
func (be *Backend) ID() backend.DeviceID { return be.id }

// Sync returns nil: flex runs every op eagerly.
func (be *Backend) Sync() error { return nil }

// Flush does nothing: flex queues no work.
func (be *Backend) Flush() {}

// Seed re-seeds the generator (a PCG from math/rand/v2): after Seed(s) the
// same sequence of Random ops yields the same values.
func (be *Backend) Seed(seed uint64) { be.rng.Seed(seed) }

// RNGState returns the generator's state, "pcg:" and the PCG's 128-bit
// state (math/rand/v2's PCG.MarshalBinary); it implements
// backend.RNGStater. rand.Rand keeps no state beside its source, so the
// source's state is the whole generator's.
func (be *Backend) RNGState() ([]byte, error) { return be.rng.State() }

// SetRNGState restores a state RNGState returned (of this backend or of
// another whose generator is a PCG seeded the same way: flex, cpu,
// ndarray). It returns an error, changing nothing, for another state.
func (be *Backend) SetRNGState(state []byte) error {
	if err := be.rng.SetState(state); err != nil {
		return fmt.Errorf("%s: SetRNGState: %w", be.id, err)
	}
	return nil
}

// kernels is the table Exec dispatches through; each kernel file fills in
// its kinds from init.
var kernels backend.Kernels[*Backend]

// Supports reports whether Exec runs kind k on operands of dtype dt: every
// base kind for every dtype, and CumSum for every numeric dtype. The
// fast-path kinds (max pooling, the gradient kernels, the optimizer steps)
// are left to their decompositions (ir.Run).
func (be *Backend) Supports(k ir.Kind, dt backend.DType) bool { return kernels.Supports(k, dt) }

// Exec runs op, which has been inferred (see ir.Executor), and returns its
// output. Kernels take the output shape from op.Shape and may keep it in
// the tensor they return. It panics with an *ir.UnsupportedError for a
// kind Supports rejects, with an error wrapping
// backend.ErrInvalidDevice for an input another backend made, and with an
// error naming the op for an integer division by zero or an index out of
// range.
func (be *Backend) Exec(op ir.Op) ir.Outputs { return kernels.Exec(be, op) }

// SupportsDType reports true for every valid dtype.
func (be *Backend) SupportsDType(dt backend.DType) bool { return dt.Valid() }

// DeviceInfo describes the host: the backend's name and the machine's
// physical memory in bytes (0 where the platform does not say); it
// implements backend.DeviceDescriber.
func (be *Backend) DeviceInfo() backend.DeviceInfo {
	return backend.DeviceInfo{Name: be.id.Type, MemoryBytes: sysmem.Total()}
}
