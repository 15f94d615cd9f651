package ember

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/autodiff"
)

// DeviceIndex selects one device of a backend. DefaultIndex lets the backend
// pick (index 0).
type DeviceIndex int

// DefaultIndex asks the backend for its default device (index 0).
const DefaultIndex DeviceIndex = -1

func (i DeviceIndex) resolve() int {
	if i == DefaultIndex {
		return 0
	}
	if i < 0 {
		panic(&Error{Op: "device", Msg: fmt.Sprintf("device index must be non-negative (got %d)", int(i))})
	}
	return int(i)
}

// Device is a handle to one compute device of one backend, optionally with
// autodiff enabled. It is a small comparable value, safe to copy and to use
// from many goroutines. Constructors (CPU, Flex, CUDA, ...) never fail: use
// Init to learn whether the device can run; an operation on an unusable
// device panics with the same error Init returns.
//
// The device model is Burn's (burn-tensor's Device): one handle, many
// backends, autodiff as a property of the device.
type Device struct {
	st            *deviceState // nil for the zero Device
	autodiff      bool
	checkpointing bool
	// autocast is the low-precision dtype of an autocast device (F16 or
	// BF16), 0 without autocast (see Autocast).
	autocast DType
}

// CPU is the optimized CPU backend (SIMD GEMM and convolutions, parallel
// float32 elementwise ops and reductions; Flex kernels for the rest).
func CPU() Device { return Device{st: cpuState()} }

// Flex is the portable eager pure-Go backend (no assembly; runs on every GOARCH).
func Flex() Device { return Device{st: flexState()} }

// NdArray is the portable dense-array backend over gonum
// (backend/ndarray): one device, printed "ndarray", that runs every op and
// dtype with Ember's semantics, more slowly than Flex. Its priority is
// below Flex's, so it is never the default device.
//
// Deprecated: use Flex (or CPU), which run the same ops with the same
// semantics, faster.
func NdArray() Device { return deviceFor(backend.DeviceID{Type: "ndarray"}) }

// CUDA is NVIDIA GPU i through the driver API, NVRTC and cuBLAS, loaded at
// run time. It panics if i is negative and not DefaultIndex.
func CUDA(i DeviceIndex) Device {
	return deviceFor(backend.DeviceID{Type: "cuda", Index: i.resolve()})
}

// ROCm is AMD GPU i through HIP, loaded at run time. It panics if i is
// negative and not DefaultIndex. Not in this build:
// Init reports ErrBackendUnavailable.
func ROCm(i DeviceIndex) Device {
	return deviceFor(backend.DeviceID{Type: "rocm", Index: i.resolve()})
}

// WGPU is a GPU of the given kind through a portable graphics API
// (Burn's WgpuDevice). On Linux the API is Vulkan: WGPU(k) runs the
// Vulkan backend on the adapter Vulkan(k) selects, printed "wgpu:KIND:N".
// Elsewhere Init reports ErrBackendUnavailable.
func WGPU(k DeviceKind) Device { return kindDevice("wgpu", k) }

// Vulkan is a GPU of the given kind running SPIR-V compute shaders
// (backend/vulkan, libvulkan.so.1 loaded at run time, Linux on amd64 and
// arm64): DiscreteGPU(i), IntegratedGPU(i) and VirtualGPU(i) select the
// i-th adapter of that type in the loader's order, KindCPU the software
// adapter (Mesa's lavapipe), DefaultKind the first of discrete,
// integrated, virtual and software adapters (or the one
// EMBER_WGPU_DEFAULT_DEVICE names); Existing is not supported. A software
// adapter is never the automatic DefaultDevice (the cpu backend is
// faster), but Vulkan(DefaultKind) selects it where it is the only one.
// Where the backend cannot run, Init reports ErrBackendUnavailable.
func Vulkan(k DeviceKind) Device { return kindDevice("vulkan", k) }

// Metal is an Apple GPU of the given kind. Not in this build (and on
// platforms other than macOS and iOS there is no Metal): Init reports
// ErrBackendUnavailable saying so.
func Metal(k DeviceKind) Device { return kindDevice("metal", k) }

// WebGPU is a GPU of the given kind through WebGPU. Not in this build
// (and outside a browser, js/wasm, there is no WebGPU): Init reports
// ErrBackendUnavailable saying so.
func WebGPU(k DeviceKind) Device { return kindDevice("webgpu", k) }

// LibTorch is LibTorch's CPU device, "libtorch": Ember's ops run as ATen
// calls (backend/libtorch). It exists in builds with the libtorch build tag
// and cgo (go build -tags libtorch, against libtorch-dev); without them
// Init reports ErrBackendUnavailable. It is never the default device.
func LibTorch() Device { return deviceFor(backend.DeviceID{Type: "libtorch"}) }

// LibTorchCUDA is LibTorch's CUDA device i, "libtorch:cuda:N". It opens
// in builds with the libtorch tag whose libtorch has CUDA and sees GPU i;
// otherwise Init reports ErrBackendUnavailable saying what is missing
// (Debian's libtorch-dev is CPU-only). It panics if i is negative and not
// DefaultIndex.
func LibTorchCUDA(i DeviceIndex) Device {
	return deviceFor(backend.DeviceID{Type: "libtorch", Kind: "cuda", Index: i.resolve()})
}

// LibTorchMPS is LibTorch's Apple Metal Performance Shaders device,
// "libtorch:mps:0". It opens in builds with the libtorch tag whose libtorch
// has MPS; otherwise Init reports ErrBackendUnavailable saying so.
func LibTorchMPS() Device { return deviceFor(backend.DeviceID{Type: "libtorch", Kind: "mps"}) }

// LibTorchVulkan is LibTorch's Vulkan device, "libtorch:vulkan:0". It
// opens in builds with the libtorch tag whose libtorch has Vulkan;
// otherwise Init reports ErrBackendUnavailable saying so.
func LibTorchVulkan() Device { return deviceFor(backend.DeviceID{Type: "libtorch", Kind: "vulkan"}) }

var captureCounter atomic.Int64

// Capture returns a new capture device (capture:0, capture:1, ...) that
// records operations instead of running them (Burn's Device::capture):
// see Device.CaptureScope and CapturedGraph. Each call returns a device no
// earlier call returned: indices increase and are never reused, and an
// index that ParseDevice already named ("capture:3") is skipped.
//
// Data goes onto a capture device and never comes back: FromData and
// ToDevice from another device make values, which read back as they are;
// reading a recorded result is an *ExecutionError wrapping ErrNotComputed,
// and moving any of its tensors to another device a *DeviceError wrapping
// ErrInvalidDevice. Ops outside a scope panic with an *Error wrapping
// ErrNoCaptureScope; Seed panics with an *Error wrapping ErrInvalidDevice;
// Sync and Flush do nothing. The device records every dtype.
func Capture() Device {
	for {
		id := backend.DeviceID{Type: "capture", Index: int(captureCounter.Add(1) - 1)}
		if _, taken := states.LoadOrStore(id, &deviceState{id: id, settings: defaultSettings}); !taken {
			return deviceFor(id)
		}
	}
}

// DeviceFromID returns the device for a backend's DeviceID (for backend authors).
func DeviceFromID(id backend.DeviceID) Device {
	if id.Type == "" {
		return Device{}
	}
	return deviceFor(id)
}

// ID returns the device's backend DeviceID (hardware identity).
func (d Device) ID() backend.DeviceID { return d.state().id }

// Type returns the device's backend type ("cpu", "cuda", ...).
func (d Device) Type() DeviceType {
	id := d.ID()
	return DeviceType{name: id.Type, addr: id.Addr}
}

// Index returns the device's index within its backend.
func (d Device) Index() DeviceIndex { return DeviceIndex(d.ID().Index) }

// IsZero reports whether d is the zero Device (no backend).
func (d Device) IsZero() bool { return d.st == nil }

// String prints the parseable device name: "cpu", "flex", "cuda:1",
// "vulkan:discrete:0", "remote+ws://host:3000/0", "capture:3", followed by
// "+autodiff" (and "+checkpointing") where enabled and "+autocast:bf16" or
// "+autocast:f16" on an autocast device. ParseDevice is its inverse.
func (d Device) String() string {
	if d.IsZero() {
		return "<no device>"
	}
	s := d.st.id.String()
	if d.autodiff {
		s += "+autodiff"
		if d.checkpointing {
			s += "+checkpointing"
		}
	}
	if d.autocast != 0 {
		s += "+autocast:" + d.autocast.String()
	}
	return s
}

// Equal compares hardware identity; autodiff, checkpointing and autocast
// are ignored (CPU().Autodiff().Equal(CPU()) is true).
func (d Device) Equal(o Device) bool { return d.st == o.st }

// DefaultDevice returns, in order: the device named by the EMBER_DEVICE
// environment variable (a name ParseDevice accepts), then the best available
// local backend (the registered driver of highest priority that has a device
// which initializes: cuda > rocm > vulkan/wgpu > cpu > flex, each device
// ranked by backend.PriorityOf, so that a software Vulkan adapter such as
// lavapipe ranks below cpu and is never chosen automatically). It never
// returns a device that cannot run: an unusable EMBER_DEVICE is reported on
// standard error once and skipped.
//
// DefaultDevice never returns an autodiff or autocast device: the
// environment chooses the hardware, the program chooses gradient tracking
// and precision, so the idiom DefaultDevice().Autodiff() works whatever
// EMBER_DEVICE says. A "+autodiff", "+autodiff+checkpointing" or
// "+autocast:DTYPE" suffix in EMBER_DEVICE is accepted and ignored here
// (EMBER_DEVICE=cuda:0+autodiff selects cuda:0); programs that take a full
// device name from their user, such as ember train --device, parse it with
// ParseDevice and honour the suffixes.
func DefaultDevice() Device {
	defaultOnce.Do(func() { defaultDev = pickDefault() })
	return defaultDev
}

var (
	defaultOnce sync.Once
	defaultDev  Device
)

// unusableEnvDevice is the warning DefaultDevice prints when the device
// EMBER_DEVICE names cannot run: one "ember: " prefix, though err (a
// *DeviceError) starts with its own.
func unusableEnvDevice(name string, err error) string {
	return fmt.Sprintf("ember: EMBER_DEVICE=%q is unusable, using the best available device instead: %s", name, strings.TrimPrefix(err.Error(), "ember: "))
}

func pickDefault() Device {
	if name := os.Getenv("EMBER_DEVICE"); name != "" {
		d, err := ParseDevice(name)
		if err == nil {
			err = d.Init()
		}
		if err == nil {
			return d.Inner()
		}
		fmt.Fprintln(os.Stderr, unusableEnvDevice(name, err))
	}
	type cand struct {
		prio int
		id   backend.DeviceID
	}
	var cands []cand
	for _, name := range backend.Drivers() {
		drv, _ := backend.Lookup(name)
		for _, id := range drv.Devices() {
			cands = append(cands, cand{backend.PriorityOf(drv, id), id})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].prio > cands[j].prio })
	for _, c := range cands {
		d := deviceFor(c.id)
		if d.Init() == nil {
			return d
		}
	}
	return Flex()
}

// Init initializes the device's backend now (loads its library, creates its
// context, connects) and returns why the device cannot run, as a
// *DeviceError wrapping ErrBackendUnavailable or the backend's error. It is
// cheap after the first call.
func (d Device) Init() error {
	_, err := d.state().open()
	return err
}

// Backend returns the backend that runs this device's operations (the
// autodiff decorator on an autodiff device). It is meant for backend
// authors; it panics with the device's initialization error when unusable.
func (d Device) Backend() backend.Backend { return d.backend() }

// Autodiff returns the device with gradient tracking enabled for tensors
// created on it. It panics on an autodiff device: "only first-order
// autodiff is supported".
func (d Device) Autodiff() Device {
	if d.autodiff {
		panic(&Error{Op: "autodiff", Operands: []string{d.String()}, Msg: "only first-order autodiff is supported"})
	}
	d.autodiff = true
	return d
}

// IsAutodiff reports whether gradient tracking is enabled.
func (d Device) IsAutodiff() bool { return d.autodiff }

// Inner returns the hardware device alone: d without autodiff,
// checkpointing and autocast (d itself when it has none of them).
func (d Device) Inner() Device { return Device{st: d.st} }

// CheckpointingStrategy says what an autodiff device keeps for backward.
type CheckpointingStrategy int

const (
	// Disabled keeps every output backward needs.
	Disabled CheckpointingStrategy = iota
	// Balanced recomputes memory-bound ops (elementwise, movement) during
	// backward and keeps compute-bound ones (matmul, conv, reductions,
	// gather/scatter, cast); see package autodiff for the per-op table.
	Balanced
)

// String returns "disabled" or "balanced".
func (s CheckpointingStrategy) String() string {
	if s == Balanced {
		return "balanced"
	}
	return "disabled"
}

// GradientCheckpointing returns the autodiff device with the Balanced
// checkpointing strategy: lower peak memory, identical gradients. It panics
// on a non-autodiff device.
func (d Device) GradientCheckpointing() Device {
	if !d.autodiff {
		panic(&Error{Op: "gradient_checkpointing", Operands: []string{d.String()}, Msg: "needs an autodiff device (call Autodiff first)"})
	}
	d.checkpointing = true
	return d
}

// GradientCheckpointingStrategy returns Balanced or Disabled. It panics on a
// non-autodiff device.
func (d Device) GradientCheckpointingStrategy() CheckpointingStrategy {
	if !d.autodiff {
		panic(&Error{Op: "gradient_checkpointing_strategy", Operands: []string{d.String()}, Msg: "needs an autodiff device (call Autodiff first)"})
	}
	if d.checkpointing {
		return Balanced
	}
	return Disabled
}

// Sync waits for all pending work on the device and returns an
// *ExecutionError if any of it failed.
func (d Device) Sync() error {
	st, err := d.tryStack(false)
	if err != nil {
		return err
	}
	if err := st.top.Sync(); err != nil {
		var ee *ExecutionError
		if errors.As(err, &ee) {
			return err
		}
		return &ExecutionError{Device: d.Inner().String(), Err: err}
	}
	return nil
}

// Flush hands buffered work to execution without waiting (a no-op for eager backends).
func (d Device) Flush() {
	if st, err := d.tryStack(false); err == nil {
		st.top.Flush()
	}
}

// Seed makes random ops on this device reproducible: after Seed(s) the same
// sequence of random ops yields the same values on the same backend. It
// panics with the initialization error on an unusable device.
func (d Device) Seed(seed uint64) {
	st, err := d.tryStack(false)
	if err != nil {
		panic(err)
	}
	st.top.Seed(seed)
}

// SupportsDType reports whether the device can store, convert and compute
// in dt (false on an unusable device).
func (d Device) SupportsDType(dt DType) bool {
	st, err := d.tryStack(false)
	return err == nil && dt.Valid() && st.top.SupportsDType(dt)
}

// deviceState is the per-hardware-device state shared by a device and its
// autodiff variants: the base backend (opened once), the decorator stacks
// built on it (one per mode, see stack.go), the settings and the memory
// limit.
type deviceState struct {
	id   backend.DeviceID
	once sync.Once
	b    backend.Backend
	err  error

	stacks  [numModes]atomic.Pointer[stack]
	stackMu sync.Mutex

	limitOnce  sync.Once
	limit      uint64
	limitWhere string

	mu         sync.Mutex
	settings   DeviceSettings
	configured bool
	locked     atomic.Bool

	// fusion is the device's FusionSetting, fixed (fusionFixed) when its
	// first stack is built.
	fusion      atomic.Uint32
	fusionFixed atomic.Bool
	// fusionOnce makes fusionBackend, the one fusion decorator of the
	// device's stacks.
	fusionOnce    sync.Once
	fusionBackend backend.Backend
}

var (
	states    sync.Map // backend.DeviceID -> *deviceState
	zeroState = &deviceState{settings: defaultSettings}
)

// stateFor returns the one state of the device id (made on first use).
func stateFor(id backend.DeviceID) *deviceState {
	if s, ok := states.Load(id); ok {
		return s.(*deviceState)
	}
	s, _ := states.LoadOrStore(id, &deviceState{id: id, settings: defaultSettings})
	return s.(*deviceState)
}

// deviceFor returns the device (without autodiff) of id.
func deviceFor(id backend.DeviceID) Device { return Device{st: stateFor(id)} }

func (d Device) state() *deviceState {
	if d.st == nil {
		return zeroState
	}
	return d.st
}

func (s *deviceState) open() (backend.Backend, error) {
	s.once.Do(func() {
		name := s.id.String()
		if s.id.Type == "" {
			s.err = &DeviceError{Device: "<no device>", Op: "init", Err: fmt.Errorf("%w: the zero Device has no backend", ErrBackendUnavailable)}
			return
		}
		drv, ok := backend.Lookup(s.id.Type)
		if !ok {
			s.err = &DeviceError{Device: name, Op: "init", Err: fmt.Errorf("%w: the %s backend is not part of this build (registered: %s)",
				ErrBackendUnavailable, s.id.Type, strings.Join(backend.Drivers(), ", "))}
			return
		}
		b, err := func() (b backend.Backend, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = asError(r)
				}
			}()
			return drv.Open(s.id)
		}()
		if err == nil && b == nil {
			err = fmt.Errorf("%w: the %s driver returned no backend", ErrBackendUnavailable, s.id.Type)
		}
		if err != nil {
			s.err = &DeviceError{Device: name, Op: "init", Err: err}
			return
		}
		s.b = b
		s.adoptReported(b)
	})
	return s.b, s.err
}

// backend returns the top of d's decorator stack (autodiff where enabled),
// locks the device's settings, or panics with the init error.
func (d Device) backend() backend.Backend { return d.stack().top }

// stack returns d's decorator stack, building it on first use, and locks
// the device's settings (the first tensor operation does).
func (d Device) stack() *stack {
	s := d.state()
	if st := s.stacks[d.mode()].Load(); st != nil {
		if !s.locked.Load() {
			s.lock()
		}
		return st
	}
	st, err := d.tryStack(true)
	if err != nil {
		panic(err)
	}
	return st
}

// tryStack returns d's decorator stack, building it on first use, or the
// device's init error; lock says whether to lock the settings (tensor
// operations do; Sync, Seed and queries do not).
func (d Device) tryStack(lock bool) (*stack, error) {
	s := d.state()
	st := s.stacks[d.mode()].Load()
	if st == nil {
		b, err := s.open()
		if err != nil {
			return nil, err
		}
		st = s.build(d, b)
	}
	if lock && !s.locked.Load() {
		s.lock()
	}
	return st, nil
}

// lock locks the settings. Under the settings mutex, so a concurrent
// Configure either completes before the first op or fails.
func (s *deviceState) lock() {
	s.mu.Lock()
	s.locked.Store(true)
	s.mu.Unlock()
}

// ad returns the autodiff decorator of an autodiff device (nil otherwise).
func (d Device) ad() *autodiff.Backend {
	if !d.autodiff {
		return nil
	}
	return d.stack().ad
}
