//go:build libtorch && cgo

package libtorch

/*
#cgo CXXFLAGS: -std=c++17 -g0 -I/usr/include/torch/csrc/api/include
#cgo LDFLAGS: -ltorch -ltorch_cpu -lc10
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/sysmem"
	"github.com/emberml/ember/ir"
)

// DefaultSeed seeds a backend's generator until its first Seed call, so a
// fresh backend's random ops are reproducible from run to run.
const DefaultSeed uint64 = 0x5eed

// Backend runs Ember's ops on one libtorch device through ATen. It is safe
// for concurrent use: ATen ops on distinct or shared read-only tensors are
// thread-safe, and the random generator is guarded inside the shim.
type Backend struct {
	id  backend.DeviceID
	dev C.lt_device
	gen *C.lt_gen
}

var _ backend.Backend = (*Backend)(nil)

// Version is the libtorch version the package was compiled against
// ("1.13.0").
func Version() string { return C.GoString(C.lt_version()) }

// HasCUDA reports whether this libtorch build has CUDA and sees a GPU.
func HasCUDA() bool { return C.lt_has_cuda() != 0 }

// NumThreads is the number of threads ATen runs one op on.
func NumThreads() int { return int(C.lt_num_threads()) }

// SetNumThreads sets the number of threads ATen runs one op on (n >= 1);
// it affects every libtorch backend of the process.
func SetNumThreads(n int) {
	if n >= 1 {
		C.lt_set_num_threads(C.int(n))
	}
}

// New opens the libtorch device id: DeviceID{Type: "libtorch"} is the CPU;
// Kind "cuda" (Index N), "mps" and "vulkan" (Index 0) are the devices
// libtorch has where it was built with them. The error wraps
// backend.ErrBackendUnavailable when this libtorch build lacks the device
// (Debian's libtorch-dev is CPU-only).
func New(id backend.DeviceID) (*Backend, error) {
	dev, err := deviceOf(id)
	if err != nil {
		return nil, err
	}
	C.lt_init()
	b := &Backend{id: id, dev: dev}
	var g *C.lt_gen
	if st := C.lt_gen_new(C.uint64_t(DefaultSeed), &g); st.code != C.LT_OK {
		return nil, fmt.Errorf("%w: libtorch: %v", backend.ErrBackendUnavailable, statusError("init", st))
	}
	b.gen = g
	runtime.AddCleanup(b, func(g *C.lt_gen) { C.lt_gen_free(g) }, g)
	return b, nil
}

// deviceOf maps an Ember device id to a libtorch device, checking that
// this libtorch build has it.
func deviceOf(id backend.DeviceID) (C.lt_device, error) {
	unavailable := func(what string) (C.lt_device, error) {
		return C.lt_device{}, fmt.Errorf("%w: this libtorch build (%s) has no %s", backend.ErrBackendUnavailable, Version(), what)
	}
	switch id.Kind {
	case "":
		if id.Index != 0 {
			return C.lt_device{}, fmt.Errorf("%w: libtorch has one CPU device, index 0 (got %d)", backend.ErrBackendUnavailable, id.Index)
		}
		return C.lt_device{_type: C.LT_CPU}, nil
	case "cuda":
		if C.lt_has_cuda() == 0 {
			return unavailable("CUDA support (it was built CPU-only)")
		}
		if n := int(C.lt_cuda_count()); id.Index < 0 || id.Index >= n {
			return C.lt_device{}, fmt.Errorf("%w: libtorch sees %d CUDA devices, not device %d", backend.ErrBackendUnavailable, n, id.Index)
		}
		return C.lt_device{_type: C.LT_CUDA, index: C.int(id.Index)}, nil
	case "mps":
		if C.lt_has_mps() == 0 {
			return unavailable("Metal Performance Shaders (MPS) support")
		}
		return C.lt_device{_type: C.LT_MPS}, nil
	case "vulkan":
		if C.lt_has_vulkan() == 0 {
			return unavailable("Vulkan support")
		}
		return C.lt_device{_type: C.LT_VULKAN}, nil
	}
	return C.lt_device{}, fmt.Errorf("%w: libtorch has no device kind %q", backend.ErrBackendUnavailable, id.Kind)
}

// ID identifies the device this backend runs on.
func (b *Backend) ID() backend.DeviceID { return b.id }

// Sync waits for the device's queued work (nothing on the CPU, where ATen
// runs every op before it returns). The error wraps backend.ErrExecution.
func (b *Backend) Sync() error {
	if b.dev._type == C.LT_CPU {
		return nil
	}
	if st := C.lt_sync(b.dev); st.code != C.LT_OK {
		return statusError("sync", st)
	}
	return nil
}

// Flush does nothing: ops run when Exec calls them.
func (b *Backend) Flush() {}

// Seed re-seeds the backend's ATen generator (a CPU mt19937, also for
// other devices, whose random tensors are drawn on the host and copied):
// after Seed(s) the same sequence of Random ops yields the same values.
func (b *Backend) Seed(seed uint64) {
	C.lt_gen_seed(b.gen, C.uint64_t(seed))
	runtime.KeepAlive(b)
}

// SupportsDType reports whether ATen has the dtype: every dtype but U16,
// U32 and U64, which libtorch 1.13 lacks. Flex32 is stored and computed
// as float32.
func (b *Backend) SupportsDType(dt backend.DType) bool { return dtypeOK(dt) }

// dtypeOK reports whether ATen stores dt.
func dtypeOK(dt backend.DType) bool {
	return dt.Valid() && dt != backend.U16 && dt != backend.U32 && dt != backend.U64
}

// kernels is the table Exec dispatches through; each kernel file fills in
// its kinds from init.
var kernels backend.Kernels[*Backend]

// Supports reports whether Exec runs kind k on operands of dtype dt: every
// base kind for every dtype SupportsDType accepts, and the fast paths
// MaxPool2d, Conv2dWeightGrad (float dtypes), SliceScatter, CumSum (not
// Bool) and AdamStep (F32, Flex32, F64). Other kinds are lowered by the
// caller with their decompositions.
func (b *Backend) Supports(k ir.Kind, dt backend.DType) bool {
	return dtypeOK(dt) && kernels.Supports(k, dt)
}

// Exec runs op, which has been inferred (see ir.Executor), and returns its
// outputs. It panics with an *ir.UnsupportedError for a dtype ATen lacks,
// with an error wrapping backend.ErrInvalidDevice for an input another
// backend made, and with an *Error (wrapping backend.ErrOutOfMemory or
// backend.ErrExecution) for a failure libtorch reports, an integer
// division by zero or an index out of range among them.
func (b *Backend) Exec(op ir.Op) ir.Outputs {
	if dt := op.KeyDType(); !dtypeOK(dt) || !dtypeOK(op.DType) {
		if !dtypeOK(dt) {
			panic(&ir.UnsupportedError{Kind: op.Kind, DType: dt})
		}
		panic(&ir.UnsupportedError{Kind: op.Kind, DType: op.DType})
	}
	return kernels.Exec(b, op)
}

// DeviceInfo names the device ("libtorch 1.13.0 cpu") and, for the CPU,
// the machine's physical memory in bytes (0 elsewhere); it implements
// backend.DeviceDescriber.
func (b *Backend) DeviceInfo() backend.DeviceInfo {
	if b.dev._type == C.LT_CPU {
		return backend.DeviceInfo{Name: "libtorch " + Version() + " cpu", MemoryBytes: sysmem.Total()}
	}
	return backend.DeviceInfo{Name: "libtorch " + Version() + " " + b.id.Kind}
}

// String names the backend's device.
func (b *Backend) String() string { return "libtorch backend " + b.id.String() }

func cudaCount() int {
	if C.lt_has_cuda() == 0 {
		return 0
	}
	return int(C.lt_cuda_count())
}

func hasMPS() bool { return C.lt_has_mps() != 0 }
