// Package cudnn binds the part of cuDNN's legacy convolution API (the
// v7-style calls that cuDNN 9 keeps in libcudnn_cnn, reached through the
// libcudnn.so.9 front library) that Ember's CUDA backend uses: the handle
// and its stream, tensor, filter and convolution descriptors, the
// algorithm heuristics and searches, the workspace sizes and the three
// convolution calls (forward, backward data, backward filter). The
// library is loaded at run time with purego (no cgo); a machine without
// it builds and runs the same binary, and Load says why it cannot be used.
//
// Every function returns an *Error naming the cuDNN call and its status
// (cudnnGetErrorString) when the call does not return
// CUDNN_STATUS_SUCCESS. Load must succeed before any other function is
// called. cuDNN works in the CUDA context current on the calling OS thread:
// callers lock their goroutine to its thread and make the context current
// first. A handle must not be used by two threads at once.
package cudnn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/emberml/ember/backend/cuda/internal/dl"
)

// PathVariable names the environment variable that points Load at a
// cuDNN outside the loader's search path: the directory that holds
// libcudnn.so.9 (a Python wheel's site-packages/nvidia/cudnn/lib) or the
// library file itself.
const PathVariable = "EMBER_CUDNN_PATH"

// MinVersion is the oldest cuDNN Load accepts (cudnnGetVersion's
// numbering: 9.0.0 is 90000); older releases number their statuses
// differently.
const MinVersion = 90000

// Libraries returns the names Load tries, in order: those under
// $EMBER_CUDNN_PATH when it is set, then "libcudnn.so.9" and "libcudnn.so"
// on the loader's search path.
func Libraries() []string {
	var names []string
	if p := os.Getenv(PathVariable); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			names = append(names, p)
		} else {
			names = append(names, filepath.Join(p, "libcudnn.so.9"), filepath.Join(p, "libcudnn.so"))
		}
	}
	return append(names, "libcudnn.so.9", "libcudnn.so")
}

// subLibraries are cuDNN 9's parts, in dependency order. When the front
// library was opened by path they are opened from its directory first, so
// that its own loading of them by name finds them already loaded.
var subLibraries = []string{
	"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
	"libcudnn_heuristic.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9",
}

var (
	loadOnce sync.Once
	loadErr  error
	libName  string
	version  int

	pGetVersion, pGetErrorString, pCreate, pDestroy, pSetStream                                uintptr
	pCreateTensor, pSetTensor4dEx, pDestroyTensor, pCreateFilter, pSetFilter4d, pDestroyFilter uintptr
	pCreateConv, pSetConv2d, pSetConvGroups, pSetConvMath, pDestroyConv                        uintptr
	pFwdCount, pFwdGet, pFwdFind, pFwdWorkspace, pFwd                                          uintptr
	pBwdDataCount, pBwdDataGet, pBwdDataFind, pBwdDataWorkspace, pBwdData                      uintptr
	pBwdFilterCount, pBwdFilterGet, pBwdFilterFind, pBwdFilterWorkspace, pBwdFilter            uintptr
	pOpsVersionCheck, pCnnVersionCheck                                                         uintptr
)

// Load opens the first library of Libraries that loads, resolves the
// entry points and checks the version (at least MinVersion) and the
// convolution sub-library (cudnnCnnVersionCheck). It is safe to call many
// times; later calls return the first result. The error names the
// libraries tried, a missing entry point, or the version found.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

// LibraryName is the library Load opened.
func LibraryName() string { return libName }

// Version is cudnnGetVersion of the loaded library (91400 for 9.14.0);
// 0 before a successful Load.
func Version() int { return version }

func load() error {
	h, name, err := dl.OpenFirst("cuDNN (libcudnn)", Libraries())
	if err != nil {
		return fmt.Errorf("%w (set %s to the directory of libcudnn.so.9)", err, PathVariable)
	}
	handles := []uintptr{h}
	if strings.Contains(name, "/") {
		dir := filepath.Dir(name)
		for _, s := range subLibraries {
			if sh, err := purego.Dlopen(filepath.Join(dir, s), purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				handles = append(handles, sh)
			}
		}
	}
	opened := false
	syms := []dl.Sym{
		{P: &pGetVersion, Name: "cudnnGetVersion"}, {P: &pGetErrorString, Name: "cudnnGetErrorString"},
		{P: &pCreate, Name: "cudnnCreate"}, {P: &pDestroy, Name: "cudnnDestroy"}, {P: &pSetStream, Name: "cudnnSetStream"},
		{P: &pCreateTensor, Name: "cudnnCreateTensorDescriptor"}, {P: &pSetTensor4dEx, Name: "cudnnSetTensor4dDescriptorEx"},
		{P: &pDestroyTensor, Name: "cudnnDestroyTensorDescriptor"},
		{P: &pCreateFilter, Name: "cudnnCreateFilterDescriptor"}, {P: &pSetFilter4d, Name: "cudnnSetFilter4dDescriptor"},
		{P: &pDestroyFilter, Name: "cudnnDestroyFilterDescriptor"},
		{P: &pCreateConv, Name: "cudnnCreateConvolutionDescriptor"}, {P: &pSetConv2d, Name: "cudnnSetConvolution2dDescriptor"},
		{P: &pSetConvGroups, Name: "cudnnSetConvolutionGroupCount"}, {P: &pSetConvMath, Name: "cudnnSetConvolutionMathType"},
		{P: &pDestroyConv, Name: "cudnnDestroyConvolutionDescriptor"},
		{P: &pFwdCount, Name: "cudnnGetConvolutionForwardAlgorithmMaxCount"},
		{P: &pFwdGet, Name: "cudnnGetConvolutionForwardAlgorithm_v7"},
		{P: &pFwdFind, Name: "cudnnFindConvolutionForwardAlgorithmEx"},
		{P: &pFwdWorkspace, Name: "cudnnGetConvolutionForwardWorkspaceSize"},
		{P: &pFwd, Name: "cudnnConvolutionForward"},
		{P: &pBwdDataCount, Name: "cudnnGetConvolutionBackwardDataAlgorithmMaxCount"},
		{P: &pBwdDataGet, Name: "cudnnGetConvolutionBackwardDataAlgorithm_v7"},
		{P: &pBwdDataFind, Name: "cudnnFindConvolutionBackwardDataAlgorithmEx"},
		{P: &pBwdDataWorkspace, Name: "cudnnGetConvolutionBackwardDataWorkspaceSize"},
		{P: &pBwdData, Name: "cudnnConvolutionBackwardData"},
		{P: &pBwdFilterCount, Name: "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount"},
		{P: &pBwdFilterGet, Name: "cudnnGetConvolutionBackwardFilterAlgorithm_v7"},
		{P: &pBwdFilterFind, Name: "cudnnFindConvolutionBackwardFilterAlgorithmEx"},
		{P: &pBwdFilterWorkspace, Name: "cudnnGetConvolutionBackwardFilterWorkspaceSize"},
		{P: &pBwdFilter, Name: "cudnnConvolutionBackwardFilter"},
	}
	for _, s := range syms {
		*s.P = lookup(handles, s.Name)
		if *s.P == 0 && !opened {
			// A front library without the legacy entry points: take
			// them from the sub-libraries that define them.
			opened = true
			for _, n := range []string{"libcudnn_ops.so.9", "libcudnn_cnn.so.9"} {
				if strings.Contains(name, "/") {
					n = filepath.Join(filepath.Dir(name), n)
				}
				if sh, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
					handles = append(handles, sh)
				}
			}
			*s.P = lookup(handles, s.Name)
		}
		if *s.P == 0 {
			return fmt.Errorf("%s: symbol %s missing (in it and in its sub-libraries)", name, s.Name)
		}
	}
	pOpsVersionCheck = lookup(handles, "cudnnOpsVersionCheck")
	pCnnVersionCheck = lookup(handles, "cudnnCnnVersionCheck")
	v, _, _ := purego.SyscallN(pGetVersion)
	if int(v) < MinVersion {
		return fmt.Errorf("%s: cuDNN %s found, %s or later needed", name, versionString(int(v)), versionString(MinVersion))
	}
	for _, c := range []struct {
		p    uintptr
		name string
	}{{pOpsVersionCheck, "cudnnOpsVersionCheck"}, {pCnnVersionCheck, "cudnnCnnVersionCheck"}} {
		if c.p == 0 {
			continue
		}
		if err := check(c.name, call(c.p)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	libName, version = name, int(v)
	return nil
}

// lookup returns the address of symbol name in the first of handles that
// has it, or 0.
func lookup(handles []uintptr, name string) uintptr {
	for _, h := range handles {
		if p, err := purego.Dlsym(h, name); err == nil && p != 0 {
			return p
		}
	}
	return 0
}

// versionString formats a cudnnGetVersion number as "9.14.0": major·10000
// + minor·100 + patch from cuDNN 9 on, major·1000 + minor·100 + patch
// before.
func versionString(v int) string {
	if v < 10000 {
		return fmt.Sprintf("%d.%d.%d", v/1000, v/100%10, v%100)
	}
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

// VersionString is Version formatted as "9.14.0".
func VersionString() string { return versionString(version) }

//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// Error is a failed cuDNN call: Call is the function name, Status its
// cudnnStatus_t and Text cudnnGetErrorString's name for it.
type Error struct {
	Call   string
	Status int32
	Text   string
}

// Error gives the call, the status's name and its code.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%d)", e.Call, e.Text, e.Status) }

// Unsupported reports whether cuDNN declined the problem before running
// anything: a CUDNN_STATUS_BAD_PARAM* (2xxx) or CUDNN_STATUS_NOT_SUPPORTED*
// (3xxx) status, as cuDNN 9 numbers them. Other statuses (internal or
// execution failures, 4xxx and 5xxx) are faults.
func (e *Error) Unsupported() bool {
	c := e.Status / 1000
	return c == 2 || c == 3
}

func check(name string, r int32) error {
	if r == 0 {
		return nil
	}
	text := "unknown status"
	if pGetErrorString != 0 {
		s, _, _ := purego.SyscallN(pGetErrorString, uintptr(r))
		if t := dl.CString(s); t != "" {
			text = t
		}
	}
	return &Error{Call: name, Status: r, Text: text}
}

// Handle is a cudnnHandle_t.
type Handle uintptr

// Create makes a handle in the current CUDA context (cudnnCreate).
func Create() (Handle, error) {
	var h Handle
	err := check("cudnnCreate", call(pCreate, uintptr(unsafe.Pointer(&h))))
	return h, err
}

// Destroy frees the handle (cudnnDestroy).
func Destroy(h Handle) error { return check("cudnnDestroy", call(pDestroy, uintptr(h))) }

// SetStream makes the handle's work go to stream s, a CUstream
// (cudnnSetStream).
func SetStream(h Handle, s uintptr) error {
	return check("cudnnSetStream", call(pSetStream, uintptr(h), s))
}
