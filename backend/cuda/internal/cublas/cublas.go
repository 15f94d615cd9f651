// Package cublas binds the cuBLAS calls Ember's CUDA backend uses
// (handle, stream, math mode, cublasGemmStridedBatchedEx), loaded at run
// time with purego (no cgo). Matrices are column-major, as in cuBLAS.
package cublas

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/emberml/ember/backend/cuda/internal/dl"
)

// Libraries are the names Load tries, in order.
var Libraries = []string{
	"libcublas.so", "libcublas.so.13", "libcublas.so.12",
	"/usr/local/cuda/lib64/libcublas.so", "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so",
	"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
}

var (
	loadOnce sync.Once
	loadErr  error
	libName  string

	pCreate, pDestroy, pSetStream, pSetMathMode, pGemmEx, pStatusName, pStatusString uintptr
	pGemmEx1, pSetWorkspace                                                          uintptr
)

// Load opens the first library of Libraries that exists.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

// LibraryName is the library Load opened.
func LibraryName() string { return libName }

func load() error {
	h, name, err := dl.OpenFirst("libcublas", Libraries)
	if err != nil {
		return err
	}
	libName = name
	syms := []dl.Sym{
		{P: &pCreate, Name: "cublasCreate_v2"}, {P: &pDestroy, Name: "cublasDestroy_v2"},
		{P: &pSetStream, Name: "cublasSetStream_v2"}, {P: &pSetMathMode, Name: "cublasSetMathMode"},
		{P: &pGemmEx, Name: "cublasGemmStridedBatchedEx"}, {P: &pGemmEx1, Name: "cublasGemmEx"},
		{P: &pSetWorkspace, Name: "cublasSetWorkspace_v2"},
		{P: &pStatusName, Name: "cublasGetStatusName"}, {P: &pStatusString, Name: "cublasGetStatusString"},
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

// Error is a failed cuBLAS call with its status name and description.
type Error struct {
	Call   string
	Status int32
	Name   string
	Text   string
}

// Error gives the call, the status's name and code, and its description.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, e.Status, e.Text)
}

func check(name string, r int32) error {
	if r == 0 {
		return nil
	}
	n, _, _ := purego.SyscallN(pStatusName, uintptr(r))
	s, _, _ := purego.SyscallN(pStatusString, uintptr(r))
	return &Error{Call: name, Status: r, Name: dl.CString(n), Text: dl.CString(s)}
}

// Handle is a cublasHandle_t.
type Handle uintptr

// Create makes a handle in the current CUDA context.
func Create() (Handle, error) {
	var h Handle
	err := check("cublasCreate_v2", call(pCreate, uintptr(unsafe.Pointer(&h))))
	return h, err
}

// Destroy frees the handle.
func Destroy(h Handle) error { return check("cublasDestroy_v2", call(pDestroy, uintptr(h))) }

// SetStream makes the handle's work go to stream s.
func SetStream(h Handle, s uintptr) error {
	return check("cublasSetStream_v2", call(pSetStream, uintptr(h), s))
}

// SetWorkspace gives the handle bytes of device memory at ptr as its
// workspace (cublasSetWorkspace_v2); the memory must outlive the handle's
// use. Larger workspaces let cuBLAS pick faster algorithms (PyTorch gives
// 32 MiB on Hopper).
func SetWorkspace(h Handle, ptr uint64, bytes uint64) error {
	return check("cublasSetWorkspace_v2", call(pSetWorkspace, uintptr(h), uintptr(ptr), uintptr(bytes)))
}

// Math modes (cublasMath_t).
const (
	DefaultMath  = 0
	PedanticMath = 2
	TF32Math     = 3
)

// SetMathMode sets the handle's math mode.
func SetMathMode(h Handle, mode int) error {
	return check("cublasSetMathMode", call(pSetMathMode, uintptr(h), uintptr(mode)))
}

// DataType is a cudaDataType_t.
type DataType int32

// The data types the backend uses.
const (
	R32F  DataType = 0
	R64F  DataType = 1
	R16F  DataType = 2
	R16BF DataType = 14
)

// ComputeType is a cublasComputeType_t.
type ComputeType int32

// The compute types the backend uses.
const (
	Compute32F         ComputeType = 68
	Compute32FPedantic ComputeType = 69
	Compute64F         ComputeType = 70
	Compute32FFastTF32 ComputeType = 77
)

// Operation is a cublasOperation_t.
type Operation int32

// The operations.
const (
	OpN Operation = 0
	OpT Operation = 1
)

// Gemm describes one cublasGemmStridedBatchedEx call: C = alpha*op(A)*op(B)
// + beta*C for Batch matrices at the given strides (elements), all
// column-major. Alpha and Beta point to host scalars of the compute type's
// scalar type (float32 for 32F compute, float64 for 64F).
type Gemm struct {
	TransA, TransB Operation
	M, N, K        int
	Alpha, Beta    unsafe.Pointer
	A              uint64
	AType          DataType
	LDA            int
	StrideA        int64
	B              uint64
	BType          DataType
	LDB            int
	StrideB        int64
	C              uint64
	CType          DataType
	LDC            int
	StrideC        int64
	Batch          int
	Compute        ComputeType
}

// GemmStridedBatchedEx runs g (algorithm CUBLAS_GEMM_DEFAULT) on the
// handle's stream; a single matrix (Batch 1) goes through cublasGemmEx,
// as PyTorch does, whose heuristics pick the non-batched kernels.
func GemmStridedBatchedEx(h Handle, g *Gemm) error {
	const gemmDefault = ^uintptr(0) // CUBLAS_GEMM_DEFAULT = -1
	// Pinning makes the scalars heap objects that stay put during the call.
	var pin runtime.Pinner
	pin.Pin(g.Alpha)
	pin.Pin(g.Beta)
	defer pin.Unpin()
	if g.Batch == 1 {
		return check("cublasGemmEx", call(pGemmEx1, uintptr(h),
			uintptr(g.TransA), uintptr(g.TransB), uintptr(g.M), uintptr(g.N), uintptr(g.K),
			uintptr(g.Alpha), uintptr(g.A), uintptr(g.AType), uintptr(g.LDA),
			uintptr(g.B), uintptr(g.BType), uintptr(g.LDB),
			uintptr(g.Beta), uintptr(g.C), uintptr(g.CType), uintptr(g.LDC),
			uintptr(g.Compute), gemmDefault))
	}
	return check("cublasGemmStridedBatchedEx", call(pGemmEx, uintptr(h),
		uintptr(g.TransA), uintptr(g.TransB), uintptr(g.M), uintptr(g.N), uintptr(g.K),
		uintptr(g.Alpha), uintptr(g.A), uintptr(g.AType), uintptr(g.LDA), uintptr(g.StrideA),
		uintptr(g.B), uintptr(g.BType), uintptr(g.LDB), uintptr(g.StrideB),
		uintptr(g.Beta), uintptr(g.C), uintptr(g.CType), uintptr(g.LDC), uintptr(g.StrideC),
		uintptr(g.Batch), uintptr(g.Compute), gemmDefault))
}
