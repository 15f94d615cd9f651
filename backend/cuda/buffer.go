package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// Buffer is device memory from the backend's caching allocator, shared by
// the views of one tensor. It returns to its pool when the garbage
// collector finds it unreachable (a runtime.AddCleanup), or at once through
// Backend.Release. Memory is therefore given back after a GC cycle, which
// the allocator forces before it would grow a pool (see Empty).
//
// A buffer allocated while the backend records a graph comes from that
// graph's allocator and returns there, whenever it is freed (see
// BeginGraph).
type Buffer struct {
	blk     *block
	a       *allocator
	cleanup runtime.Cleanup
	// pins counts the open device graphs that use the buffer (made before
	// their recording): Release leaves a pinned buffer to the collector.
	pins atomic.Int32
	// static marks a buffer made by NewStatic, which CopyInto writes.
	static bool
	// The padding puts fewer buffers in one heap span: AddCleanup inserts
	// into a per-span list of cleanups sorted by address, a linear walk
	// that took ~0.4 µs per tensor with 256 buffers to a span.
	_ [88]byte
}

// Bytes is the buffer's size in bytes.
func (b *Buffer) Bytes() uint64 { return b.blk.size }

// Ptr is the buffer's device address (0 when it holds no bytes).
func (b *Buffer) Ptr() uint64 { return b.blk.ptr }

type cleanupArg struct {
	a   *allocator
	blk *block
}

func freeBlock(c cleanupArg) { c.a.free(c.blk) }

// newBuffer allocates bytes from the pools (the persistent pool inside
// MemoryPersistentAllocations), those of the graph being recorded while
// the backend records one. It panics with an error wrapping
// backend.ErrOutOfMemory when the device has no room after the cache was
// released.
func (b *Backend) newBuffer(bytes uint64) *Buffer {
	if r := b.rec.Load(); r != nil {
		return b.newBufferIn(r.alloc, r, bytes)
	}
	return b.newBufferIn(b.alloc, nil, bytes)
}

// newBufferIn allocates bytes from a; r, when not nil, is the recording
// whose failure an allocation error also is.
func (b *Backend) newBufferIn(a *allocator, r *recording, bytes uint64) *Buffer {
	if err := b.failed(); err != nil {
		panic(err)
	}
	blk, err := a.alloc(bytes, b.persistent.Load() > 0)
	if err != nil {
		e := b.fail(err)
		if r != nil {
			r.setErr(e)
		}
		panic(e)
	}
	buf := &Buffer{blk: blk, a: a}
	if blk.size != 0 {
		buf.cleanup = runtime.AddCleanup(buf, freeBlock, cleanupArg{a, blk})
	}
	return buf
}

// Empty returns a new contiguous tensor of shape and dt with uninitialized
// contents, from the caching allocator. It panics with an error wrapping
// backend.ErrOutOfMemory when the device is full.
func (b *Backend) Empty(shape []int, dt backend.DType) *Tensor {
	return b.emptyOf(append([]int(nil), shape...), dt)
}

// emptyOf is Empty keeping shape in the new tensor instead of a copy: the
// caller guarantees that nobody modifies it (an op's output shape, which
// the backend may keep, or a tensor's own shape).
func (b *Backend) emptyOf(shape []int, dt backend.DType) *Tensor {
	n := uint64(backend.NumElements(shape)) * uint64(dt.Size())
	return &Tensor{buf: b.newBuffer(n), shape: shape, strides: layout.RowMajorStrides(shape), dtype: dt}
}

// Release returns t's buffer to the pool now, instead of when the garbage
// collector finds it unreachable. The caller guarantees that no other view
// of the buffer is used afterwards (device work already queued on the
// backend's stream may still read it: the stream orders it before any
// later use of the memory). A buffer that an open device graph uses
// (one made before the graph's recording and read or written by the
// recorded work) is left to the garbage collector, which returns it once
// the graph is closed, because the graph uses it at every launch.
func (b *Backend) Release(t *Tensor) {
	if t == nil || t.buf == nil || t.buf.blk.size == 0 || t.buf.pins.Load() > 0 {
		return
	}
	t.buf.cleanup.Stop()
	t.buf.a.free(t.buf.blk)
}

// collectGarbage runs the Go garbage collector and waits (at most 20 ms)
// for the cleanups it queued, so that dead tensors return their memory. A
// sentinel made unreachable before the collection has its cleanup queued
// by the same cycle as the dead buffers' (runtime.GC returns after the
// sweep that queues them); waiting for it costs one collection, not two.
func collectGarbage() {
	done := make(chan struct{})
	sentinel := new([4]*int) // not a tiny allocation: its cleanup runs
	runtime.AddCleanup(sentinel, func(c chan struct{}) { close(c) }, done)
	sentinel = nil
	runtime.GC()
	select {
	case <-done:
	case <-time.After(20 * time.Millisecond):
	}
	runtime.Gosched()
}

// cuMemory draws pages from cuMemAlloc on one context. While gate says
// that the stream is capturing a graph, where cuStreamSynchronize and
// cuMemFree are illegal, synchronize does nothing and free waits for the
// end of the capture; free synchronizes the stream itself.
type cuMemory struct {
	ctx    cu.Context
	stream cu.Stream
	gate   *captureGate
}

func (m *cuMemory) lock() func() {
	runtime.LockOSThread()
	_ = cu.CtxSetCurrent(m.ctx)
	return runtime.UnlockOSThread
}

func (m *cuMemory) alloc(n uint64) (uint64, error) {
	defer m.lock()()
	p, err := cu.MemAlloc(n)
	if err != nil {
		if ce, ok := err.(*cu.Error); ok && ce.Code == cu.ErrorOutOfMemory {
			return 0, fmt.Errorf("%w: %w", backend.ErrOutOfMemory, err)
		}
		return 0, err
	}
	return p, nil
}

func (m *cuMemory) free(p uint64) {
	m.gate.whenIdle(func() {
		defer m.lock()()
		_ = cu.StreamSynchronize(m.stream)
		_ = cu.MemFree(p)
	})
}

func (m *cuMemory) synchronize() {
	m.gate.ifIdle(func() {
		defer m.lock()()
		_ = cu.StreamSynchronize(m.stream)
	})
}

func (m *cuMemory) info() (free, total uint64) {
	defer m.lock()()
	free, total, _ = cu.MemGetInfo()
	return
}
