package cu

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/emberml/ember/backend/cuda/internal/dl"
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

// Graph entry points, resolved by Load when the driver has all of them
// (graphErr says which are missing otherwise).
var (
	pStreamBeginCapture, pStreamEndCapture, pStreamIsCapturing        uintptr
	pGraphInstantiate, pGraphLaunch, pGraphExecDestroy, pGraphDestroy uintptr
	graphErr                                                          error
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
	syms := []dl.Sym{
		{P: &pInit, Name: "cuInit"}, {P: &pDriverGetVersion, Name: "cuDriverGetVersion"},
		{P: &pGetErrorName, Name: "cuGetErrorName"}, {P: &pGetErrorString, Name: "cuGetErrorString"},
		{P: &pDeviceGetCount, Name: "cuDeviceGetCount"}, {P: &pDeviceGet, Name: "cuDeviceGet"},
		{P: &pDeviceGetName, Name: "cuDeviceGetName"}, {P: &pDeviceTotalMem, Name: "cuDeviceTotalMem_v2"},
		{P: &pDeviceGetAttribute, Name: "cuDeviceGetAttribute"},
		{P: &pPrimaryCtxRetain, Name: "cuDevicePrimaryCtxRetain"}, {P: &pPrimaryCtxRelease, Name: "cuDevicePrimaryCtxRelease_v2"},
		{P: &pCtxSetCurrent, Name: "cuCtxSetCurrent"}, {P: &pCtxGetCurrent, Name: "cuCtxGetCurrent"},
		{P: &pCtxSynchronize, Name: "cuCtxSynchronize"},
		{P: &pStreamCreate, Name: "cuStreamCreate"}, {P: &pStreamSynchronize, Name: "cuStreamSynchronize"},
		{P: &pStreamDestroy, Name: "cuStreamDestroy_v2"},
		{P: &pMemAlloc, Name: "cuMemAlloc_v2"}, {P: &pMemFree, Name: "cuMemFree_v2"}, {P: &pMemGetInfo, Name: "cuMemGetInfo_v2"},
		{P: &pMemHostAlloc, Name: "cuMemHostAlloc"}, {P: &pMemFreeHost, Name: "cuMemFreeHost"},
		{P: &pMemcpyHtoDAsync, Name: "cuMemcpyHtoDAsync_v2"}, {P: &pMemcpyDtoHAsync, Name: "cuMemcpyDtoHAsync_v2"},
		{P: &pMemcpyDtoDAsync, Name: "cuMemcpyDtoDAsync_v2"},
		{P: &pMemsetD8Async, Name: "cuMemsetD8Async"}, {P: &pMemsetD16Async, Name: "cuMemsetD16Async"}, {P: &pMemsetD32Async, Name: "cuMemsetD32Async"},
		{P: &pModuleLoadData, Name: "cuModuleLoadData"}, {P: &pModuleGetFunction, Name: "cuModuleGetFunction"},
		{P: &pModuleUnload, Name: "cuModuleUnload"}, {P: &pLaunchKernel, Name: "cuLaunchKernel"},
		{P: &pFuncSetAttribute, Name: "cuFuncSetAttribute"},
		{P: &pEventCreate, Name: "cuEventCreate"}, {P: &pEventRecord, Name: "cuEventRecord"},
		{P: &pEventSynchronize, Name: "cuEventSynchronize"}, {P: &pEventElapsed, Name: "cuEventElapsedTime"},
		{P: &pEventDestroy, Name: "cuEventDestroy_v2"},
	}
	if err := dl.Resolve(h, Library, syms); err != nil {
		return err
	}
	graphErr = resolveOptional(h, []dl.Sym{
		{P: &pStreamBeginCapture, Name: "cuStreamBeginCapture_v2"}, {P: &pStreamEndCapture, Name: "cuStreamEndCapture"},
		{P: &pStreamIsCapturing, Name: "cuStreamIsCapturing"}, {P: &pGraphInstantiate, Name: "cuGraphInstantiateWithFlags"},
		{P: &pGraphLaunch, Name: "cuGraphLaunch"}, {P: &pGraphExecDestroy, Name: "cuGraphExecDestroy"},
		{P: &pGraphDestroy, Name: "cuGraphDestroy"},
	})
	if err := check("cuInit", call(pInit, 0)); err != nil {
		return err
	}
	return nil
}

// resolveOptional resolves syms as a group: all of them, or none (every
// address left 0) and an error listing the missing names.
func resolveOptional(h uintptr, syms []dl.Sym) error {
	var missing []string
	for _, s := range syms {
		p, err := purego.Dlsym(h, s.Name)
		if err != nil || p == 0 {
			missing = append(missing, s.Name)
			continue
		}
		*s.P = p
	}
	if len(missing) == 0 {
		return nil
	}
	for _, s := range syms {
		*s.P = 0
	}
	return fmt.Errorf("%s: graph entry points missing (driver too old for CUDA graphs): %s", Library, strings.Join(missing, ", "))
}

// ErrNotLoaded is returned by functions called before a successful Load.
var ErrNotLoaded = errors.New("cu: libcuda not loaded")
