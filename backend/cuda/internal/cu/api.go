package cu

import (
	"runtime"
	"sync"
	"unsafe"
)

// Device is a CUdevice ordinal handle.
type Device int32

// Context, Stream, Module, Function and Event are driver handles.
type (
	Context  uintptr
	Stream   uintptr
	Module   uintptr
	Function uintptr
	Event    uintptr
)

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr = uint64

// Device attributes used by the backend (CUdevice_attribute values).
const (
	AttrMaxThreadsPerBlock           = 1
	AttrMultiprocessorCount          = 16
	AttrComputeCapabilityMajor       = 75
	AttrComputeCapabilityMinor       = 76
	AttrMaxSharedMemoryPerBlockOptin = 97
)

// DriverVersion returns cuDriverGetVersion (1000*major + 10*minor).
func DriverVersion() (int, error) {
	var v int32
	err := check("cuDriverGetVersion", call(pDriverGetVersion, uintptr(unsafe.Pointer(&v))))
	return int(v), err
}

// DeviceCount returns cuDeviceGetCount.
func DeviceCount() (int, error) {
	var n int32
	err := check("cuDeviceGetCount", call(pDeviceGetCount, uintptr(unsafe.Pointer(&n))))
	return int(n), err
}

// DeviceGet returns the device with the given ordinal.
func DeviceGet(ordinal int) (Device, error) {
	var d Device
	err := check("cuDeviceGet", call(pDeviceGet, uintptr(unsafe.Pointer(&d)), uintptr(ordinal)))
	return d, err
}

// DeviceName returns the device's marketing name.
func DeviceName(d Device) (string, error) {
	buf := make([]byte, 256)
	if err := check("cuDeviceGetName", call(pDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), 256, uintptr(d))); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// DeviceTotalMem returns the device's memory in bytes.
func DeviceTotalMem(d Device) (uint64, error) {
	var n uint64
	err := check("cuDeviceTotalMem_v2", call(pDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(d)))
	return n, err
}

// DeviceAttribute returns cuDeviceGetAttribute(attr, d).
func DeviceAttribute(attr int, d Device) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", call(pDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(d)))
	return int(v), err
}

// PrimaryCtxRetain retains the device's primary context.
func PrimaryCtxRetain(d Device) (Context, error) {
	var c Context
	err := check("cuDevicePrimaryCtxRetain", call(pPrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(d)))
	return c, err
}

// PrimaryCtxRelease releases a retain of the device's primary context.
func PrimaryCtxRelease(d Device) error {
	return check("cuDevicePrimaryCtxRelease_v2", call(pPrimaryCtxRelease, uintptr(d)))
}

// CtxSetCurrent binds c to the calling OS thread.
func CtxSetCurrent(c Context) error {
	return check("cuCtxSetCurrent", call(pCtxSetCurrent, uintptr(c)))
}

// CtxGetCurrent returns the context bound to the calling OS thread (0: none).
func CtxGetCurrent() (Context, error) {
	var c Context
	err := check("cuCtxGetCurrent", call(pCtxGetCurrent, uintptr(unsafe.Pointer(&c))))
	return c, err
}

// CtxSynchronize waits for all work of the current context.
func CtxSynchronize() error { return check("cuCtxSynchronize", call(pCtxSynchronize)) }

// StreamNonBlocking is CU_STREAM_NON_BLOCKING: no implicit ordering with
// the legacy default stream.
const StreamNonBlocking = 1

// StreamCreate creates a stream in the current context.
func StreamCreate(flags uint32) (Stream, error) {
	var s Stream
	err := check("cuStreamCreate", call(pStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags)))
	return s, err
}

// StreamSynchronize waits for the stream's work; it returns the first
// asynchronous error of that work.
func StreamSynchronize(s Stream) error {
	return check("cuStreamSynchronize", call(pStreamSynchronize, uintptr(s)))
}

// StreamDestroy destroys the stream.
func StreamDestroy(s Stream) error {
	return check("cuStreamDestroy_v2", call(pStreamDestroy, uintptr(s)))
}

// MemAlloc allocates bytes of device memory (cuMemAlloc_v2).
func MemAlloc(bytes uint64) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAlloc_v2", call(pMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)))
	return p, err
}

// MemFree frees device memory from MemAlloc.
func MemFree(p DevicePtr) error { return check("cuMemFree_v2", call(pMemFree, uintptr(p))) }

// MemGetInfo returns the free and total device memory in bytes.
func MemGetInfo() (free, total uint64, err error) {
	err = check("cuMemGetInfo_v2", call(pMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total))))
	return
}

// MemHostAlloc allocates page-locked host memory (flags 0: portable to the
// context only).
func MemHostAlloc(bytes uint64, flags uint32) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := check("cuMemHostAlloc", call(pMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes), uintptr(flags)))
	return p, err
}

// MemFreeHost frees memory from MemHostAlloc.
func MemFreeHost(p unsafe.Pointer) error {
	return check("cuMemFreeHost", call(pMemFreeHost, uintptr(p)))
}

// MemcpyHtoDAsync copies bytes from host src to device dst on stream s.
// A pageable src is consumed before the call returns; a page-locked src
// must stay unchanged until the stream reaches the copy.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, s Stream) error {
	return check("cuMemcpyHtoDAsync_v2", call(pMemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s)))
}

// MemcpyDtoHAsync copies bytes from device src to host dst on stream s.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, s Stream) error {
	return check("cuMemcpyDtoHAsync_v2", call(pMemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s)))
}

// MemcpyDtoDAsync copies bytes between device addresses on stream s.
func MemcpyDtoDAsync(dst, src DevicePtr, bytes uint64, s Stream) error {
	return check("cuMemcpyDtoDAsync_v2", call(pMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s)))
}

// MemsetD8Async sets n bytes at dst to v on stream s.
func MemsetD8Async(dst DevicePtr, v uint8, n uint64, s Stream) error {
	return check("cuMemsetD8Async", call(pMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s)))
}

// MemsetD16Async sets n 16-bit words at dst (2-byte aligned) to v on stream s.
func MemsetD16Async(dst DevicePtr, v uint16, n uint64, s Stream) error {
	return check("cuMemsetD16Async", call(pMemsetD16Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s)))
}

// MemsetD32Async sets n 32-bit words at dst (4-byte aligned) to v on stream s.
func MemsetD32Async(dst DevicePtr, v uint32, n uint64, s Stream) error {
	return check("cuMemsetD32Async", call(pMemsetD32Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s)))
}

// ModuleLoadData loads a cubin or PTX image into the current context.
func ModuleLoadData(image []byte) (Module, error) {
	var m Module
	err := check("cuModuleLoadData", call(pModuleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0]))))
	return m, err
}

// ModuleGetFunction returns the kernel named name.
func ModuleGetFunction(m Module, name string) (Function, error) {
	var f Function
	cname := append([]byte(name), 0)
	err := check("cuModuleGetFunction", call(pModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))))
	return f, err
}

// ModuleUnload unloads a module.
func ModuleUnload(m Module) error { return check("cuModuleUnload", call(pModuleUnload, uintptr(m))) }

// FuncAttrMaxDynamicSharedSize is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const FuncAttrMaxDynamicSharedSize = 8

// FuncSetAttribute sets a kernel attribute.
func FuncSetAttribute(f Function, attr, value int) error {
	return check("cuFuncSetAttribute", call(pFuncSetAttribute, uintptr(f), uintptr(attr), uintptr(value)))
}

// LaunchKernel launches f on stream s. params is a packed argument buffer
// laid out as the kernel's parameter list (each argument at its natural
// alignment), passed through CU_LAUNCH_PARAM_BUFFER_POINTER; it may be nil
// for a kernel without parameters.
func LaunchKernel(f Function, grid, block [3]uint32, shared uint32, s Stream, params []byte) error {
	var r Result
	if len(params) == 0 {
		r = call(pLaunchKernel, uintptr(f), uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(shared), uintptr(s), 0, 0)
	} else {
		// The buffer is copied into a heap object (reused through a pool):
		// a caller's stack-allocated slice could move while its address
		// sits in extra as a uintptr; heap objects do not move. The driver
		// copies the parameters before cuLaunchKernel returns.
		lp := launchPool.Get().(*launchParams)
		if cap(lp.buf) < len(params) {
			lp.buf = make([]byte, len(params))
		}
		lp.buf = lp.buf[:len(params)]
		copy(lp.buf, params)
		lp.size = uintptr(len(params))
		lp.extra = [5]uintptr{1, uintptr(unsafe.Pointer(&lp.buf[0])), 2, uintptr(unsafe.Pointer(&lp.size)), 0}
		r = call(pLaunchKernel, uintptr(f), uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(shared), uintptr(s), 0,
			uintptr(unsafe.Pointer(&lp.extra[0])))
		runtime.KeepAlive(lp)
		launchPool.Put(lp)
	}
	return check("cuLaunchKernel", r)
}

// launchParams is the CU_LAUNCH_PARAM_BUFFER_* "extra" array and the size it
// points to; it is heap-allocated (the call's pointer arguments escape).
type launchParams struct {
	extra [5]uintptr
	size  uintptr
	buf   []byte
}

var launchPool = sync.Pool{New: func() any { return &launchParams{buf: make([]byte, 0, 512)} }}

// EventDefault and EventDisableTiming are cuEventCreate flags.
const (
	EventDefault       = 0
	EventDisableTiming = 2
)

// EventCreate creates an event.
func EventCreate(flags uint32) (Event, error) {
	var e Event
	err := check("cuEventCreate", call(pEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)))
	return e, err
}

// EventRecord records e on stream s.
func EventRecord(e Event, s Stream) error {
	return check("cuEventRecord", call(pEventRecord, uintptr(e), uintptr(s)))
}

// EventSynchronize waits for e.
func EventSynchronize(e Event) error {
	return check("cuEventSynchronize", call(pEventSynchronize, uintptr(e)))
}

// EventElapsed returns the milliseconds between two completed events.
func EventElapsed(start, end Event) (float32, error) {
	var ms float32
	err := check("cuEventElapsedTime", call(pEventElapsed, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)))
	return ms, err
}

// EventDestroy destroys e.
func EventDestroy(e Event) error { return check("cuEventDestroy_v2", call(pEventDestroy, uintptr(e))) }

// Graph and GraphExec are CUDA graph handles: a recorded graph (CUgraph)
// and its executable instance (CUgraphExec).
type (
	Graph     uintptr
	GraphExec uintptr
)

// Stream capture modes (CUstreamCaptureMode). In CaptureModeRelaxed the
// capture does not restrict other API calls (cuMemAlloc, module loading)
// on any thread, and it may be ended from another OS thread than the one
// that began it.
const (
	CaptureModeGlobal      = 0
	CaptureModeThreadLocal = 1
	CaptureModeRelaxed     = 2
)

// CaptureStatus is a stream's capture status (CUstreamCaptureStatus).
type CaptureStatus int32

// The capture statuses: not capturing, capturing, and capturing after an
// illegal call invalidated the capture (cuStreamEndCapture then fails).
const (
	CaptureNone        CaptureStatus = 0
	CaptureActive      CaptureStatus = 1
	CaptureInvalidated CaptureStatus = 2
)

// GraphsAvailable returns nil when Load succeeded and resolved the graph
// entry points (cuStreamBeginCapture_v2, cuStreamEndCapture,
// cuStreamIsCapturing, cuGraphInstantiateWithFlags, cuGraphLaunch,
// cuGraphExecDestroy, cuGraphDestroy), else an error naming what is
// missing. The other functions of this file fail with that error.
func GraphsAvailable() error {
	if err := Load(); err != nil {
		return err
	}
	return graphErr
}

// StreamBeginCapture starts capturing the work queued on s into a graph
// (cuStreamBeginCapture_v2) in the given mode (CaptureModeRelaxed, ...).
func StreamBeginCapture(s Stream, mode int) error {
	if err := GraphsAvailable(); err != nil {
		return err
	}
	return check("cuStreamBeginCapture_v2", call(pStreamBeginCapture, uintptr(s), uintptr(mode)))
}

// StreamEndCapture ends the capture on s and returns the captured graph.
// When the capture was invalidated it fails
// (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) and returns no graph; the stream
// is not capturing afterwards in either case.
func StreamEndCapture(s Stream) (Graph, error) {
	if err := GraphsAvailable(); err != nil {
		return 0, err
	}
	var g Graph
	err := check("cuStreamEndCapture", call(pStreamEndCapture, uintptr(s), uintptr(unsafe.Pointer(&g))))
	return g, err
}

// StreamIsCapturing returns s's capture status.
func StreamIsCapturing(s Stream) (CaptureStatus, error) {
	if err := GraphsAvailable(); err != nil {
		return CaptureNone, err
	}
	var st CaptureStatus
	err := check("cuStreamIsCapturing", call(pStreamIsCapturing, uintptr(s), uintptr(unsafe.Pointer(&st))))
	return st, err
}

// GraphInstantiate makes an executable graph of g
// (cuGraphInstantiateWithFlags). The executable is independent of g: g may
// be destroyed afterwards.
func GraphInstantiate(g Graph, flags uint64) (GraphExec, error) {
	if err := GraphsAvailable(); err != nil {
		return 0, err
	}
	var e GraphExec
	err := check("cuGraphInstantiateWithFlags", call(pGraphInstantiate, uintptr(unsafe.Pointer(&e)), uintptr(g), uintptr(flags)))
	return e, err
}

// GraphLaunch queues one run of e on stream s.
func GraphLaunch(e GraphExec, s Stream) error {
	if err := GraphsAvailable(); err != nil {
		return err
	}
	return check("cuGraphLaunch", call(pGraphLaunch, uintptr(e), uintptr(s)))
}

// GraphExecDestroy destroys e; runs of e already queued complete first
// (the driver frees e when they are done).
func GraphExecDestroy(e GraphExec) error {
	if err := GraphsAvailable(); err != nil {
		return err
	}
	return check("cuGraphExecDestroy", call(pGraphExecDestroy, uintptr(e)))
}

// GraphDestroy destroys g.
func GraphDestroy(g Graph) error {
	if err := GraphsAvailable(); err != nil {
		return err
	}
	return check("cuGraphDestroy", call(pGraphDestroy, uintptr(g)))
}
