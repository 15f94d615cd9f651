package ndarray

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/hostrng"
	"github.com/emberml/ember/internal/sysmem"
	"github.com/emberml/ember/ir"
)

// DefaultSeed seeds a backend's generator until its first Seed call (the
// seed flex uses), so a fresh backend's random ops are reproducible from
// run to run.
const DefaultSeed uint64 = 0x5eed

// Backend is the ndarray backend for one device. It is safe for
// concurrent use: tensors are immutable, and the random generator, the
// only mutable state, is guarded by a mutex.
type Backend struct {
	id  backend.DeviceID
	rng *hostrng.Generator
}

var (
	_ backend.Backend         = (*Backend)(nil)
	_ backend.DeviceDescriber = (*Backend)(nil)
)

// New returns an ndarray backend identified by id (usually
// backend.DeviceID{Type: "ndarray"}), its generator seeded with
// DefaultSeed.
func New(id backend.DeviceID) *Backend {
	return &Backend{id: id, rng: hostrng.New(DefaultSeed)}
}

// ID identifies the device this backend runs on.
func (be *Backend) ID() backend.DeviceID { return be.id }

// Sync returns nil: every op runs eagerly, so no failure is pending.
func (be *Backend) Sync() error { return nil }

// Flush does nothing: the backend queues no work.
func (be *Backend) Flush() {}

// Seed re-seeds the generator (a PCG from math/rand/v2, seeded as flex
// seeds its own): after Seed(s) the same sequence of Random ops yields the
// same values, the values flex gives after its Seed(s).
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

// SupportsDType reports true for every valid dtype (ir.AllDTypes).
func (be *Backend) SupportsDType(dt backend.DType) bool { return dt.Valid() }

// Supports reports whether Exec runs kind k on operands of dtype dt: the
// base kinds of package ir (KindFull through KindConvTranspose2d) for
// every valid dtype. Every other kind (pooling, the gradient kernels, the
// optimizer steps, CumSum) is left to its decomposition (ir.Run).
func (be *Backend) Supports(k ir.Kind, dt backend.DType) bool {
	return k >= ir.KindFull && k <= ir.KindConvTranspose2d && dt.Valid()
}

// Exec runs op, which has been inferred (see ir.Executor), and returns its
// output, which keeps op.Shape. It panics with an *ir.UnsupportedError
// for a kind Supports rejects, with an error wrapping
// backend.ErrInvalidDevice for an input another backend made, and with an
// error naming the op for an integer division by zero or an index out of
// range (which the root package checks before the op gets here).
func (be *Backend) Exec(op ir.Op) ir.Outputs {
	var t *Tensor
	switch op.Kind {
	case ir.KindFull:
		t = be.full(op)
	case ir.KindArange:
		t = be.arange(op)
	case ir.KindRandom:
		t = be.random(op)
	case ir.KindUnary:
		t = be.unary(op)
	case ir.KindBinary:
		t = be.binary(op)
	case ir.KindWhere:
		t = be.where(op)
	case ir.KindCast:
		t = be.cast(op)
	case ir.KindReduce:
		t = be.reduce(op)
	case ir.KindReshape:
		t = be.reshape(op)
	case ir.KindPermute:
		t = be.permute(op)
	case ir.KindExpand:
		t = be.expand(op)
	case ir.KindSlice:
		t = be.slice(op)
	case ir.KindPad:
		t = be.pad(op)
	case ir.KindFlip:
		t = be.flip(op)
	case ir.KindCat:
		t = be.cat(op)
	case ir.KindGather:
		t = be.gather(op)
	case ir.KindScatterAdd:
		t = be.scatterAdd(op)
	case ir.KindIndexSelect:
		t = be.indexSelect(op)
	case ir.KindMatmul:
		t = be.matmul(op)
	case ir.KindConv2d:
		t = be.conv2d(op)
	case ir.KindConvTranspose2d:
		t = be.convTranspose2d(op)
	default:
		panic(&ir.UnsupportedError{Kind: op.Kind, DType: op.KeyDType()})
	}
	return ir.One(t)
}

// DeviceInfo describes the host: the backend's name and the machine's
// physical memory in bytes (0 where the platform does not say); it
// implements backend.DeviceDescriber.
func (be *Backend) DeviceInfo() backend.DeviceInfo {
	return backend.DeviceInfo{Name: be.id.Type, MemoryBytes: sysmem.Total()}
}
