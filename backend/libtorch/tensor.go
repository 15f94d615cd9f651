//go:build libtorch && cgo

package libtorch

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Tensor is the libtorch backend's tensor: a handle to an at::Tensor in
// libtorch's memory (which may be a view sharing another tensor's
// storage), with Ember's shape and dtype. The handle is released when the
// Tensor becomes unreachable (runtime.AddCleanup); ATen frees the storage
// with its last handle.
type Tensor struct {
	h     *C.lt_tensor
	shape []int
	dtype backend.DType
}

// Shape is the logical shape (row-major; nil or empty for rank 0).
// Callers must not modify it.
func (t *Tensor) Shape() []int { return t.shape }

// DType is the element type.
func (t *Tensor) DType() backend.DType { return t.dtype }

// String describes the tensor's dtype and shape, for debugging.
func (t *Tensor) String() string { return fmt.Sprintf("libtorch.Tensor(%v %v)", t.dtype, t.shape) }

// asTensor converts a backend.Tensor made by this package; anything else is
// a programming error of the caller.
func asTensor(x ir.Tensor) *Tensor {
	t, ok := x.(*Tensor)
	if !ok || t == nil || t.h == nil {
		panic(fmt.Errorf("libtorch: tensor of type %T was not made by the libtorch backend: %w", x, backend.ErrInvalidDevice))
	}
	return t
}

// handle is what a Tensor's cleanup releases.
type handle struct {
	h     *C.lt_tensor
	bytes int64
}

func release(h handle) {
	C.lt_free(h.h)
	live.Add(-h.bytes)
}

// wrap makes the Tensor of a new handle, whose storage holds out.bytes
// bytes not shared with the op's inputs.
func wrap(out C.lt_out, shape []int, dt backend.DType) *Tensor {
	t := &Tensor{h: out.t, shape: shape, dtype: dt}
	n := int64(out.bytes)
	runtime.AddCleanup(t, release, handle{out.t, n})
	account(n)
	return t
}

// The bytes of libtorch storage that live handles hold, and the amount at
// the last collection. Go's collector does not see libtorch's memory, so
// account starts a collection (in the background) whenever live grew by
// gcStep, or by a quarter of the amount live at the last one when that is
// larger, since the last: dead handles then release their storage to the
// caching allocator, which serves the next allocations from it (memory
// that is reused costs no page faults).
var (
	live, gcBase atomic.Int64
	gcBusy       atomic.Bool
)

const gcStep = 32 << 20

func account(n int64) {
	if n == 0 {
		return
	}
	l := live.Add(n)
	base := gcBase.Load()
	if l-base < max(gcStep, base/4) || !gcBusy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		gcBase.Store(live.Load())
		gcBusy.Store(false)
	}()
}

// LiveBytes is the number of bytes of libtorch storage that tensors of
// this package hold (views count once, with the tensor that made their
// storage).
func LiveBytes() int64 { return live.Load() }

// Error is a failure that libtorch reported: a C++ exception, caught in the
// shim, while running Op. It wraps backend.ErrOutOfMemory when an
// allocation failed and backend.ErrExecution otherwise.
type Error struct {
	// Op names the operation ("binary", "from_data", ...).
	Op string
	// Msg is the exception's message.
	Msg string
	// OutOfMemory reports an allocation failure.
	OutOfMemory bool
}

// Error formats as "libtorch: OP: MSG".
func (e *Error) Error() string { return "libtorch: " + e.Op + ": " + e.Msg }

// Unwrap returns backend.ErrOutOfMemory or backend.ErrExecution.
func (e *Error) Unwrap() error {
	if e.OutOfMemory {
		return backend.ErrOutOfMemory
	}
	return backend.ErrExecution
}

var _ error = (*Error)(nil)

// statusError converts a failed status, freeing its message.
func statusError(op string, st C.lt_status) *Error {
	msg := "unknown failure"
	if st.msg != nil {
		msg = C.GoString(st.msg)
		C.lt_free_msg(st.msg)
	}
	return &Error{Op: op, Msg: msg, OutOfMemory: st.code == C.LT_OOM}
}

// check panics with the *Error of a failed status.
func check(op string, st C.lt_status) {
	if st.code != C.LT_OK {
		panic(statusError(op, st))
	}
}

// int64s converts ints for the shim; nil for none.
func int64s(v []int) []C.int64_t {
	if len(v) == 0 {
		return nil
	}
	out := make([]C.int64_t, len(v))
	for i, x := range v {
		out[i] = C.int64_t(x)
	}
	return out
}

// ptr is the address of v's first element, or nil.
func ptr(v []C.int64_t) *C.int64_t {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// littleEndianHost reports whether this machine stores numbers
// little-endian, the byte order of TensorData and of ATen's memory on
// every platform libtorch supports.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// swapBytes reverses the bytes of each size-byte element of b in place.
func swapBytes(b []byte, size int) {
	if size <= 1 {
		return
	}
	for i := 0; i+size <= len(b); i += size {
		slices.Reverse(b[i : i+size])
	}
}

// FromData copies host data (little-endian, row-major; Bool bytes != 0 are
// true) into a new contiguous tensor. It panics with an error wrapping
// backend.ErrUnsupportedDType for U16, U32 and U64, and with an *Error when
// the bytes do not fit the shape or libtorch cannot allocate.
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor {
	if !dtypeOK(data.DType) {
		panic(fmt.Errorf("libtorch: from data: %v: %w (libtorch %s has no such type)", data.DType, backend.ErrUnsupportedDType, Version()))
	}
	bytes := data.Bytes
	if !littleEndianHost {
		bytes = slices.Clone(bytes)
		swapBytes(bytes, data.DType.Size())
	}
	shape := int64s(data.Shape)
	var p unsafe.Pointer
	if len(bytes) > 0 {
		p = unsafe.Pointer(&bytes[0])
	}
	var out C.lt_out
	check("from_data", C.lt_from_data(b.dev, C.int(data.DType), ptr(shape), C.int(len(shape)), p, C.size_t(len(bytes)), &out))
	return wrap(out, slices.Clone(data.Shape), data.DType)
}

// ToData copies x to the host as contiguous row-major little-endian bytes
// (Bool as 0/1 bytes). The error is an *Error when libtorch fails.
func (b *Backend) ToData(x backend.Tensor) (*backend.TensorData, error) {
	t := asTensor(x)
	buf := make([]byte, ir.NumElements(t.shape)*t.dtype.Size())
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	st := C.lt_to_data(t.h, p, C.size_t(len(buf)))
	runtime.KeepAlive(t)
	if st.code != C.LT_OK {
		return nil, statusError("to_data", st)
	}
	if !littleEndianHost {
		swapBytes(buf, t.dtype.Size())
	}
	return &backend.TensorData{Shape: slices.Clone(t.shape), DType: t.dtype, Bytes: buf}, nil
}

// describe reports a handle's ATen dtype (an ir.DType, 0 for a type
// Ember lacks) and sizes, for tests.
func describe(t *Tensor) (ir.DType, []int, error) {
	var dt, rank C.int
	var sizes [16]C.int64_t
	st := C.lt_info(t.h, &dt, &rank, &sizes[0], C.int(len(sizes)))
	runtime.KeepAlive(t)
	if st.code != C.LT_OK {
		return 0, nil, statusError("info", st)
	}
	if int(rank) > len(sizes) {
		return 0, nil, errors.New("libtorch: rank above 16")
	}
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = int(sizes[i])
	}
	return ir.DType(dt), shape, nil
}
