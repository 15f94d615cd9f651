package cu

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Result is a CUresult code.
type Result int32

// Result codes the backend treats specially.
const (
	Success            Result = 0
	ErrorOutOfMemory   Result = 2
	ErrorNotReady      Result = 600
	ErrorNoDevice      Result = 100
	ErrorIllegalAddr   Result = 700
	ErrorLaunchFailed  Result = 719
	ErrorInvalidValue  Result = 1
	ErrorNotInitalized Result = 3
)

// Error is a failed driver call: Call is the function name ("cuMemAlloc_v2"),
// Code its CUresult, Name and Message cuGetErrorName/cuGetErrorString.
type Error struct {
	Call    string
	Code    Result
	Name    string
	Message string
}

// Error gives the call, the result's name and code, and its message.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, int(e.Code), e.Message)
}

// Sticky reports whether the error leaves the context unusable (a kernel
// fault such as CUDA_ERROR_ILLEGAL_ADDRESS): every later call on the
// context fails.
func (e *Error) Sticky() bool {
	switch e.Code {
	case 214, // ECC uncorrectable
		700, // illegal address
		702, // launch timeout
		714, // hardware stack error
		715, // illegal instruction
		716, // misaligned address
		717, // invalid address space
		718, // invalid PC
		719, // launch failed
		999: // unknown
		return true
	}
	return false
}

// call invokes a driver function. Pointer arguments converted with
// uintptr(unsafe.Pointer(p)) in the argument list are kept alive and
// unmoved for the call (go:uintptrescapes).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return Result(int32(r))
}

// check turns a CUresult into nil or an *Error naming call.
func check(name string, r Result) error {
	if r == Success {
		return nil
	}
	e := &Error{Call: name, Code: r, Name: fmt.Sprintf("CUDA_ERROR_%d", int(r)), Message: "unknown error"}
	if pGetErrorName != 0 {
		var s *byte
		if call(pGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&s))) == Success && s != nil {
			e.Name = goString(s)
		}
		s = nil
		if call(pGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&s))) == Success && s != nil {
			e.Message = goString(s)
		}
	}
	return e
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
