package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// FromData copies host data to a new contiguous tensor (Bool as one byte
// per element, F16/BF16 as their bits, as TensorData holds them). Data
// prepared by Staging is copied asynchronously from pinned memory; other
// data is consumed before FromData returns. While the backend records a
// graph the bytes are copied to page-locked memory that the graph owns,
// from which every launch uploads them. It panics with an error wrapping
// backend.ErrOutOfMemory when the device is full.
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor {
	t := b.Empty(data.Shape, data.DType)
	n := uint64(len(data.Bytes))
	if n == 0 || b.uploadRecorded(t, data.Bytes) {
		return t
	}
	defer b.enter()()
	b.must(cu.MemcpyHtoDAsync(t.Ptr(), unsafe.Pointer(&data.Bytes[0]), n, b.stream))
	runtime.KeepAlive(data)
	return t
}

// ToData copies t to the host as contiguous row-major TensorData, waiting
// for the work that produces it. It returns an error wrapping
// backend.ErrExecution when that work failed (or the device is unusable
// after an earlier fault, or a kernel reported a bad index or a zero
// integer divisor since the last Sync or ToData, as Sync does) instead of
// panicking, and one wrapping ErrRecording while the backend records a
// graph.
func (b *Backend) ToData(x backend.Tensor) (data *backend.TensorData, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				data, err = nil, e
				return
			}
			panic(r)
		}
	}()
	if err := b.failed(); err != nil {
		return nil, err
	}
	if err := b.notRecording("ToData"); err != nil {
		return nil, err
	}
	t := b.Contiguous(x.(*Tensor))
	out := make([]byte, t.NumElements()*t.dtype.Size())
	exit := b.enter()
	defer exit()
	if len(out) > 0 {
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), t.Ptr(), uint64(len(out)), b.stream); err != nil {
			return nil, b.execError(err)
		}
	}
	if err := cu.StreamSynchronize(b.stream); err != nil {
		return nil, b.execError(err)
	}
	if err := b.statusError(); err != nil {
		return nil, err
	}
	runtime.KeepAlive(t)
	return &backend.TensorData{Shape: append([]int{}, t.shape...), DType: t.dtype, Bytes: out}, nil
}

// execError wraps a driver error from queued work in backend.ErrExecution.
func (b *Backend) execError(err error) error {
	e := b.fail(err)
	if b.failed() == nil {
		e = fmt.Errorf("%w: %w", backend.ErrExecution, e)
	}
	return e
}

// full returns a contiguous tensor of shape (kept by the result) filled
// with value converted to dt (as backend.TensorData.Convert: floats round
// to nearest even, ints truncate toward zero, Bool is value != 0).
func (b *Backend) full(shape []int, dt backend.DType, value float64) *Tensor {
	t := b.emptyOf(shape, dt)
	n := uint64(t.NumElements())
	if n == 0 {
		return t
	}
	one := &backend.TensorData{Shape: []int{1}, DType: backend.F64, Bytes: binary.LittleEndian.AppendUint64(nil, math.Float64bits(value))}
	bits := one.Convert(dt).Bytes
	b.fill(t, bits)
	return t
}

// fill sets every element of the contiguous tensor t to the element bits
// (little-endian, len(bits) == t's element size).
func (b *Backend) fill(t *Tensor, bits []byte) {
	n := uint64(t.NumElements())
	if len(bits) == 8 {
		k := b.Kernel("ember_fill_u64", fillSource)
		grid, block := Grid1D(int(min(n, 1<<20)), 256)
		b.Launch(k, grid, block, 0, t, n, binary.LittleEndian.Uint64(bits))
		return
	}
	defer b.enter()()
	switch len(bits) {
	case 1:
		b.must(cu.MemsetD8Async(t.Ptr(), bits[0], n, b.stream))
	case 2:
		b.must(cu.MemsetD16Async(t.Ptr(), binary.LittleEndian.Uint16(bits), n, b.stream))
	case 4:
		b.must(cu.MemsetD32Async(t.Ptr(), binary.LittleEndian.Uint32(bits), n, b.stream))
	}
}

const fillSource = `
extern "C" __global__ void ember_fill_u64(unsigned long long* p, unsigned long long n, unsigned long long v) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		p[i] = v;
	}
}
`

// arange returns [start, start+step, ..., start+(n-1)*step] of dt: each
// element is computed in float64 on the host and converted as Cast does.
func (b *Backend) arange(start, step float64, n int, dt backend.DType) *Tensor {
	raw := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(start+float64(i)*step))
	}
	d := (&backend.TensorData{Shape: []int{n}, DType: backend.F64, Bytes: raw}).Convert(dt)
	return tensorOf(b.FromData(d))
}

// arangeInts returns [start, start+step, ..., start+(n-1)*step] of integer
// dt: each element is computed exactly in int64 on the host (inference
// has checked that every element fits dt) and converted to dt.
func (b *Backend) arangeInts(start, step int64, n int, dt backend.DType) *Tensor {
	raw := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(start+int64(i)*step))
	}
	d := (&backend.TensorData{Shape: []int{n}, DType: backend.I64, Bytes: raw}).Convert(dt)
	return tensorOf(b.FromData(d))
}

// stagingSet tracks the pinned host buffers made by Staging, by address.
type stagingSet struct {
	mu sync.Mutex
	m  map[uintptr]uint64 // start -> length
}

func (s *stagingSet) contains(p unsafe.Pointer, n uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.m[uintptr(p)]
	return ok && n <= l
}

// Staging moves each data's bytes into page-locked host memory so that
// FromData copies them by DMA without a pageable bounce (PyTorch's
// pin_memory). The TensorData's Bytes are replaced by the pinned buffer,
// which is freed when the TensorData becomes unreachable: do not keep the
// Bytes slice past the TensorData. A FromData of staged data returns before
// the copy ran: do not change the bytes until the next Sync or ToData.
// Data whose pinned allocation fails is left as it was.
func (b *Backend) Staging(data ...*backend.TensorData) {
	if b.failed() != nil {
		return
	}
	exit := b.enter()
	defer exit()
	for _, d := range data {
		n := uint64(len(d.Bytes))
		if n == 0 || b.staged.contains(unsafe.Pointer(&d.Bytes[0]), n) {
			continue
		}
		p, err := cu.MemHostAlloc(n, 0)
		if err != nil {
			continue
		}
		pinned := unsafe.Slice((*byte)(p), n)
		copy(pinned, d.Bytes)
		d.Bytes = pinned
		b.staged.mu.Lock()
		if b.staged.m == nil {
			b.staged.m = map[uintptr]uint64{}
		}
		b.staged.m[uintptr(p)] = n
		b.staged.mu.Unlock()
		runtime.AddCleanup(d, b.freeStaged, uintptr(p))
	}
}

// freeStaged frees a pinned buffer once the stream is past its copies
// (after the capture, while the backend records a graph).
func (b *Backend) freeStaged(p uintptr) {
	b.staged.mu.Lock()
	delete(b.staged.m, p)
	b.staged.mu.Unlock()
	b.gate.whenIdle(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if cu.CtxSetCurrent(b.ctx) == nil {
			_ = cu.StreamSynchronize(b.stream)
			_ = cu.MemFreeHost(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
		}
	})
}
