package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/backend/cuda/internal/cublas"
	"github.com/emberml/ember/backend/cuda/internal/nvrtc"
	"github.com/emberml/ember/ir"
)

// Backend runs Ember's primitives on one NVIDIA GPU: one primary context,
// one non-blocking stream on which every kernel, copy and cuBLAS call is
// queued in program order, a caching allocator and a kernel cache. It
// implements backend.Backend (ops arrive through Exec and are dispatched
// through the kernel table), backend.MemoryManager,
// backend.PerformanceStater, backend.DeviceDescriber,
// backend.IndexChecker, backend.DivisorChecker and backend.GraphRecorder
// (CUDA graphs: see BeginGraph), and is safe for concurrent use.
type Backend struct {
	id           backend.DeviceID
	dev          cu.Device
	ctx          cu.Context
	stream       cu.Stream
	ccMajor      int
	ccMinor      int
	smCount      int
	name         string
	alloc        *allocator
	persistent   atomic.Int32
	fatal        atomic.Pointer[error]
	kcache       kernelCache               // compiled kernels, their build statistics, the warm-up
	fusedTier    atomic.Pointer[fusedTier] // how fused kernels are compiled (fused_tiering.go)
	fusedStats   fusedCounters
	elemKernels  sync.Map // elemVariant -> *Kernel
	fusedPlans   sync.Map // fused program signature (fusedSignature) -> *fusedPlan
	blasOnce     sync.Once
	blas         cublas.Handle
	blasErr      error
	blasMu       sync.Mutex
	dnn          dnnState // cuDNN's handle and convolution plans (conv_cudnn.go)
	tf32         atomic.Bool
	seed         atomic.Uint64
	philoxOffset atomic.Uint64
	staged       stagingSet
	// rec is the graph being recorded (nil: none); gate orders the driver
	// calls a capture forbids against its start and end; graphMu
	// serializes BeginGraph and EndGraph (see graph.go).
	rec     atomic.Pointer[recording]
	gate    captureGate
	graphMu sync.Mutex
}

// Open initializes GPU index: loads libcuda.so.1 and NVRTC, retains the
// primary context, creates the backend's stream and starts compiling the
// kernels of the common training steps in the background (see
// Precompile; EMBER_CUDA_WARMUP=0 turns this off). The error wraps
// backend.ErrBackendUnavailable and names the missing library or the CUDA
// error (no device, index out of range, ...).
func Open(index int) (*Backend, error) {
	id := backend.DeviceID{Type: "cuda", Index: index}
	unavailable := func(err error) (*Backend, error) {
		return nil, fmt.Errorf("%v: %w: %w", id, backend.ErrBackendUnavailable, err)
	}
	if err := cu.Load(); err != nil {
		return unavailable(err)
	}
	if err := nvrtc.Load(); err != nil {
		return unavailable(err)
	}
	n, err := cu.DeviceCount()
	if err != nil {
		return unavailable(err)
	}
	if index < 0 || index >= n {
		return unavailable(fmt.Errorf("device index %d out of range (%d CUDA devices)", index, n))
	}
	b := &Backend{id: id}
	if b.dev, err = cu.DeviceGet(index); err != nil {
		return unavailable(err)
	}
	if b.ccMajor, err = cu.DeviceAttribute(cu.AttrComputeCapabilityMajor, b.dev); err != nil {
		return unavailable(err)
	}
	if b.ccMinor, err = cu.DeviceAttribute(cu.AttrComputeCapabilityMinor, b.dev); err != nil {
		return unavailable(err)
	}
	if b.smCount, err = cu.DeviceAttribute(cu.AttrMultiprocessorCount, b.dev); err != nil {
		return unavailable(err)
	}
	b.name, _ = cu.DeviceName(b.dev)
	if b.ctx, err = cu.PrimaryCtxRetain(b.dev); err != nil {
		return unavailable(err)
	}
	defer b.enter()()
	if b.stream, err = cu.StreamCreate(cu.StreamNonBlocking); err != nil {
		return unavailable(err)
	}
	b.alloc = newAllocator(&cuMemory{ctx: b.ctx, stream: b.stream, gate: &b.gate}, collectGarbage)
	b.fusedTier.Store(newFusedTier(FusedTiering{Sync: envSyncCompile()}))
	b.startWarmUp()
	return b, nil
}

// ID returns the device's identity, DeviceID{Type: "cuda", Index: i}.
func (b *Backend) ID() backend.DeviceID { return b.id }

// Name is the GPU's name as the driver reports it ("NVIDIA H200").
func (b *Backend) Name() string { return b.name }

// Stream returns the CUstream every operation of the backend is queued on.
func (b *Backend) Stream() uintptr { return uintptr(b.stream) }

// CapabilityMajorMinor returns the device's compute capability (9, 0 on an H100/H200).
func (b *Backend) CapabilityMajorMinor() (int, int) { return b.ccMajor, b.ccMinor }

// MultiprocessorCount returns the number of SMs (for sizing grids).
func (b *Backend) MultiprocessorCount() int { return b.smCount }

// Sync waits for all queued work. An asynchronous fault (an illegal
// address in a kernel, ...) comes back as an error wrapping
// backend.ErrExecution that names the CUDA error; such a fault is sticky:
// the device stays unusable and every later operation fails with it. An
// index out of range or a zero integer divisor that a kernel reported
// since the last Sync or ToData comes back as an error wrapping
// backend.ErrExecution that names the op; it is reported once, and the
// device stays usable. While the backend records a graph, Sync returns an
// error wrapping ErrRecording at once (the recording goes on).
func (b *Backend) Sync() error {
	if err := b.failed(); err != nil {
		return err
	}
	if err := b.notRecording("Sync"); err != nil {
		return err
	}
	defer b.enter()()
	if err := cu.StreamSynchronize(b.stream); err != nil {
		e := b.fail(err)
		if b.failed() == nil {
			e = fmt.Errorf("%w: %w", backend.ErrExecution, e)
		}
		return e
	}
	return b.statusError()
}

// kernels is the backend's kernel table: each ops file registers the kinds
// it implements from an init function.
var kernels backend.Kernels[*Backend]

// Supports reports whether Exec runs kind k on operands of dtype dt: every
// base kind on every dtype, and the fast-path kinds that have a kernel here
// (AdamStep on F32, Flex32 and F64; CumSum on every dtype but Bool;
// Conv2dWeightGrad on the float dtypes, on cuDNN when it takes the op and
// through its decomposition otherwise). For any other kind the caller
// lowers the op with its ir.Spec.Decompose.
func (b *Backend) Supports(k ir.Kind, dt backend.DType) bool { return kernels.Supports(k, dt) }

// Exec runs op, inferred by the caller (op.Shape and op.DType are its
// output's) and of a kind Supports accepts, with its kernel. Kernels queue
// their work on the stream and return at once; the outputs are contiguous
// tensors or views of the inputs (movement kinds). While the backend
// records a graph the work is recorded instead (see BeginGraph), and a
// panic of the op makes EndGraph fail.
func (b *Backend) Exec(op ir.Op) ir.Outputs {
	if r := b.rec.Load(); r != nil {
		return b.execRecorded(r, op)
	}
	return kernels.Exec(b, op)
}

// ChecksIndicesOnDevice reports that gather, scatter-add and index-select
// check their indices on the device: a bad index is reported by the next
// Sync or ToData (wrapping backend.ErrExecution) instead of being checked on
// the host, which would cost a device round trip per op
// (backend.IndexChecker).
func (b *Backend) ChecksIndicesOnDevice() bool { return true }

// ChecksDivisorsOnDevice reports that the integer Div, FloorDiv, Rem and
// Mod kernels, unfused and inside fused programs, check their divisors on
// the device: a zero divisor gives 0 in its element and is reported by the
// next Sync or ToData as an error wrapping backend.ErrExecution that names
// the device and the op ("cuda:0: execution failed: div: integer division
// by zero (i32 operands)"), instead of being looked for on the host, which
// would cost a device round trip per division (backend.DivisorChecker).
func (b *Backend) ChecksDivisorsOnDevice() bool { return true }

// Flush is a no-op: every operation is queued on the stream when it is called.
func (b *Backend) Flush() {}

// Seed sets the seed of the random ops and resets the Philox counter offset
// (see NextPhilox): the same seed and the same sequence of random ops give
// the same values.
func (b *Backend) Seed(seed uint64) {
	b.seed.Store(seed)
	b.philoxOffset.Store(0)
}

// cudaRNGTag starts the state RNGState returns.
const cudaRNGTag = "cuda-philox:"

// RNGState returns the random ops' state: "cuda-philox:", the seed and the
// Philox counter offset (little-endian 64-bit each); it implements
// backend.RNGStater.
func (b *Backend) RNGState() ([]byte, error) {
	st := []byte(cudaRNGTag)
	st = binary.LittleEndian.AppendUint64(st, b.seed.Load())
	return binary.LittleEndian.AppendUint64(st, b.philoxOffset.Load()), nil
}

// SetRNGState restores a state RNGState returned. It returns an error,
// changing nothing, for another state.
func (b *Backend) SetRNGState(state []byte) error {
	rest, ok := bytes.CutPrefix(state, []byte(cudaRNGTag))
	if !ok || len(rest) != 16 {
		return fmt.Errorf("%s: SetRNGState: not a CUDA Philox generator state (%d bytes)", b.id, len(state))
	}
	b.seed.Store(binary.LittleEndian.Uint64(rest))
	b.philoxOffset.Store(binary.LittleEndian.Uint64(rest[8:]))
	return nil
}

// NextPhilox reserves n counter values of the device's Philox-4x32 stream
// and returns the seed and the first counter offset to use: kernels draw
// from counters offset .. offset+n-1 (n counts 128-bit Philox outputs or
// elements, as the kernel defines; reservations never overlap).
func (b *Backend) NextPhilox(n uint64) (seed, offset uint64) {
	off := b.philoxOffset.Add(n) - n
	return b.seed.Load(), off
}

// SupportsDType reports whether dt can be stored, converted and computed:
// every dtype, except F16 and BF16 below compute capability 8.0.
func (b *Backend) SupportsDType(dt backend.DType) bool {
	if dt == backend.F16 || dt == backend.BF16 {
		return b.ccMajor >= 8
	}
	return dt.Valid()
}

// copyStrided copies src (any strides) into dst (contiguous, same shape and
// dtype) on the backend's stream; the elementwise kernel library sets it.
var copyStrided func(b *Backend, dst, src *Tensor)

// Contiguous returns t when it is contiguous, else a contiguous copy.
func (b *Backend) Contiguous(t *Tensor) *Tensor {
	if t.IsContiguous() {
		return t
	}
	if copyStrided == nil {
		panic("cuda: Contiguous: no strided copy kernel is registered")
	}
	out := b.emptyOf(t.shape, t.dtype)
	copyStrided(b, out, t)
	return out
}

// DeviceInfo returns the GPU's name and total memory in bytes
// (backend.DeviceDescriber).
func (b *Backend) DeviceInfo() backend.DeviceInfo {
	_, total, _ := DeviceInfo(b.id.Index)
	return backend.DeviceInfo{Name: b.name, MemoryBytes: total}
}
