package cu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// Library is the shared-object name Load opens.
const Library = "libcuda.so.1"

var (
	loadOnce sync.Once
	loadErr  error
	lib      uintptr
)

// Driver API entry points, resolved by Load.
var (
	pInit, pDriverGetVersion, pGetErrorName, pGetErrorString                    uintptr
	pDeviceGetCount, pDeviceGet, pDeviceGetName, pDeviceTotalMem                uintptr
	pDeviceGetAttribute, pPrimaryCtxRetain, pPrimaryCtxRelease                  uintptr
	pCtxSetCurrent, pCtxGetCurrent, pCtxSynchronize                             uintptr
	pStreamCreate, pStreamSynchronize, pStreamDestroy                           uintptr
	pMemAlloc, pMemFree, pMemGetInfo, pMemHostAlloc, pMemFreeHost               uintptr
	pMemcpyHtoDAsync, pMemcpyDtoHAsync, pMemcpyDtoDAsync                        uintptr
	pMemsetD8Async, pMemsetD16Async, pMemsetD32Async                            uintptr
	pModuleLoadData, pModuleGetFunction, pModuleUnload, pLaunchKernel           uintptr
	pFuncSetAttribute                                                           uintptr
	pEventCreate, pEventRecord, pEventSynchronize, pEventElapsed, pEventDestroy uintptr
)

// Load opens libcuda.so.1 and calls cuInit(0). It is safe to call many
// times; later calls return the first result. The error says which library
// or symbol is missing, or which CUDA error cuInit returned (for example
// CUDA_ERROR_NO_DEVICE).
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	h, err := purego.Dlopen(Library, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("%s not found: %w", Library, err)
	}
	lib = h
	syms := []struct {
		p    *uintptr
		name string
	}{
		{&pInit, "cuInit"}, {&pDriverGetVersion, "cuDriverGetVersion"},
		{&pGetErrorName, "cuGetErrorName"}, {&pGetErrorString, "cuGetErrorString"},
		{&pDeviceGetCount, "cuDeviceGetCount"}, {&pDeviceGet, "cuDeviceGet"},
		{&pDeviceGetName, "cuDeviceGetName"}, {&pDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&pDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&pPrimaryCtxRetain, "cuDevicePrimaryCtxRetain"}, {&pPrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&pCtxSetCurrent, "cuCtxSetCurrent"}, {&pCtxGetCurrent, "cuCtxGetCurrent"},
		{&pCtxSynchronize, "cuCtxSynchronize"},
		{&pStreamCreate, "cuStreamCreate"}, {&pStreamSynchronize, "cuStreamSynchronize"},
		{&pStreamDestroy, "cuStreamDestroy_v2"},
		{&pMemAlloc, "cuMemAlloc_v2"}, {&pMemFree, "cuMemFree_v2"}, {&pMemGetInfo, "cuMemGetInfo_v2"},
		{&pMemHostAlloc, "cuMemHostAlloc"}, {&pMemFreeHost, "cuMemFreeHost"},
		{&pMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"}, {&pMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&pMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
		{&pMemsetD8Async, "cuMemsetD8Async"}, {&pMemsetD16Async, "cuMemsetD16Async"}, {&pMemsetD32Async, "cuMemsetD32Async"},
		{&pModuleLoadData, "cuModuleLoadData"}, {&pModuleGetFunction, "cuModuleGetFunction"},
		{&pModuleUnload, "cuModuleUnload"}, {&pLaunchKernel, "cuLaunchKernel"},
		{&pFuncSetAttribute, "cuFuncSetAttribute"},
		{&pEventCreate, "cuEventCreate"}, {&pEventRecord, "cuEventRecord"},
		{&pEventSynchronize, "cuEventSynchronize"}, {&pEventElapsed, "cuEventElapsedTime"},
		{&pEventDestroy, "cuEventDestroy_v2"},
	}
	for _, s := range syms {
		p, err := purego.Dlsym(h, s.name)
		if err != nil {
			return fmt.Errorf("%s: symbol %s missing: %w", Library, s.name, err)
		}
		*s.p = p
	}
	if err := check("cuInit", call(pInit, 0)); err != nil {
		return err
	}
	return nil
}

// ErrNotLoaded is returned by functions called before a successful Load.
var ErrNotLoaded = errors.New("cu: libcuda not loaded")
