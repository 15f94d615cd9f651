// Package nvrtc binds NVRTC, CUDA's run-time compiler (libnvrtc), loaded at
// run time with purego (no cgo). Compile turns CUDA C source into a cubin
// for one GPU architecture, or PTX when NVRTC does not know the architecture.
package nvrtc

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/emberml/ember/backend/cuda/internal/dl"
)

// Libraries are the names Load tries, in order: the unversioned name, then
// CUDA 13 and 12, each also under /usr/local/cuda.
var Libraries = []string{
	"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
	"/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so",
	"/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
}

var (
	loadOnce sync.Once
	loadErr  error
	libName  string

	pVersion, pErrorString, pCreate, pDestroy, pCompile uintptr
	pLogSize, pLog, pCubinSize, pCubin, pPTXSize, pPTX  uintptr
	pNumArchs, pArchs                                   uintptr
)

// Load opens the first library of Libraries that exists. The error lists
// every name tried.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

// LibraryName is the library Load opened.
func LibraryName() string { return libName }

func load() error {
	h, name, err := dl.OpenFirst("libnvrtc", Libraries)
	if err != nil {
		return err
	}
	libName = name
	syms := []dl.Sym{
		{P: &pVersion, Name: "nvrtcVersion"}, {P: &pErrorString, Name: "nvrtcGetErrorString"},
		{P: &pCreate, Name: "nvrtcCreateProgram"}, {P: &pDestroy, Name: "nvrtcDestroyProgram"},
		{P: &pCompile, Name: "nvrtcCompileProgram"}, {P: &pLogSize, Name: "nvrtcGetProgramLogSize"},
		{P: &pLog, Name: "nvrtcGetProgramLog"}, {P: &pCubinSize, Name: "nvrtcGetCUBINSize"}, {P: &pCubin, Name: "nvrtcGetCUBIN"},
		{P: &pPTXSize, Name: "nvrtcGetPTXSize"}, {P: &pPTX, Name: "nvrtcGetPTX"},
		{P: &pNumArchs, Name: "nvrtcGetNumSupportedArchs"}, {P: &pArchs, Name: "nvrtcGetSupportedArchs"},
	}
	if err := dl.Resolve(h, libName, syms); err != nil {
		return err
	}
	return nil
}

//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

func errorString(r int32) string {
	p, _, _ := purego.SyscallN(pErrorString, uintptr(r))
	return dl.CString(p)
}

func check(name string, r int32) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", name, errorString(r), r)
}

// Version returns NVRTC's major and minor version.
func Version() (major, minor int, err error) {
	var ma, mi int32
	err = check("nvrtcVersion", call(pVersion, uintptr(unsafe.Pointer(&ma)), uintptr(unsafe.Pointer(&mi))))
	return int(ma), int(mi), err
}

// SupportedArchs lists the sm_XY numbers (XY = 10*major+minor) NVRTC can
// emit machine code for.
func SupportedArchs() ([]int, error) {
	var n int32
	if err := check("nvrtcGetNumSupportedArchs", call(pNumArchs, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	a := make([]int32, n)
	if err := check("nvrtcGetSupportedArchs", call(pArchs, uintptr(unsafe.Pointer(&a[0])))); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, v := range a {
		out[i] = int(v)
	}
	return out, nil
}

// CompileError is a failed compilation: the kernel's name, the options and
// NVRTC's log.
type CompileError struct {
	Name    string
	Options []string
	Log     string
	Err     error
}

// Error gives the kernel's name, the options, the failure and NVRTC's log.
func (e *CompileError) Error() string {
	return fmt.Sprintf("nvrtc: compiling %s (%s): %v\n%s", e.Name, strings.Join(e.Options, " "), e.Err, e.Log)
}

// Compile compiles source (named name in messages) with the options and
// returns the cubin when cubin is true (options must name a real
// architecture, -arch=sm_XY) or the PTX otherwise. A failed compilation
// returns a *CompileError carrying NVRTC's log.
func Compile(source, name string, options []string, cubin bool) ([]byte, error) {
	src := append([]byte(source), 0)
	cname := append([]byte(name+".cu"), 0)
	var prog uintptr
	if err := check("nvrtcCreateProgram", call(pCreate, uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0)); err != nil {
		return nil, err
	}
	defer call(pDestroy, uintptr(unsafe.Pointer(&prog)))
	opts := make([][]byte, len(options))
	ptrs := make([]uintptr, len(options)+1)
	for i, o := range options {
		opts[i] = append([]byte(o), 0)
		ptrs[i] = uintptr(unsafe.Pointer(&opts[i][0]))
	}
	r := call(pCompile, prog, uintptr(len(options)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(opts)
	if r != 0 {
		return nil, &CompileError{Name: name, Options: options, Log: programLog(prog), Err: check("nvrtcCompileProgram", r)}
	}
	sizeFn, getFn, what := pPTXSize, pPTX, "nvrtcGetPTX"
	if cubin {
		sizeFn, getFn, what = pCubinSize, pCubin, "nvrtcGetCUBIN"
	}
	var n uintptr
	if err := check(what+"Size", call(sizeFn, prog, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	if n > 0 {
		if err := check(what, call(getFn, prog, uintptr(unsafe.Pointer(&out[0])))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func programLog(prog uintptr) string {
	var n uintptr
	if call(pLogSize, prog, uintptr(unsafe.Pointer(&n))) != 0 || n <= 1 {
		return ""
	}
	b := make([]byte, n)
	if call(pLog, prog, uintptr(unsafe.Pointer(&b[0]))) != 0 {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}
