//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"
	"runtime"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
)

// Buffer is device memory from the device's caching allocator, shared by
// the views of one tensor. It returns to its pool when the garbage
// collector finds it unreachable (runtime.AddCleanup). Device work that
// still reads a freed buffer is ordered before any later write to its
// memory by the queue's barriers, and the host never writes tensor memory
// directly (uploads are copy commands on the queue), so a buffer may be
// reused as soon as it is freed.
type Buffer struct {
	blk *block
	a   *allocator
	// The padding puts fewer buffers in one heap span (AddCleanup walks
	// a per-span list; see backend/cuda's Buffer).
	_ [88]byte
}

// Bytes is the buffer's size in bytes.
func (b *Buffer) Bytes() uint64 { return b.blk.size }

type cleanupArg struct {
	a   *allocator
	blk *block
}

func freeBlock(c cleanupArg) { c.a.free(c.blk) }

// newBuffer allocates bytes (the persistent pool when persistent). A
// buffer larger than the device binds in one descriptor
// (maxStorageBufferRange) is refused, since no shader could read it.
// The error wraps backend.ErrOutOfMemory when the device has no room.
// It must not be called with d.mu held.
func (d *device) newBuffer(bytes uint64, persistent bool) (*Buffer, error) {
	if err := d.failed(); err != nil {
		return nil, err
	}
	if r := roundUp(bytes, sliceAlign); r > d.maxRange {
		return nil, fmt.Errorf("%w: a tensor of %d bytes exceeds the largest storage buffer %s binds (maxStorageBufferRange, %d bytes)",
			backend.ErrOutOfMemory, bytes, d.adapter.Name, d.maxRange)
	}
	blk, err := d.alloc.alloc(bytes, persistent)
	if err != nil {
		return nil, err
	}
	buf := &Buffer{blk: blk, a: d.alloc}
	if blk.size != 0 {
		runtime.AddCleanup(buf, freeBlock, cleanupArg{d.alloc, blk})
	}
	return buf, nil
}

// binding is one storage-buffer descriptor: a range of a VkBuffer.
type binding struct {
	buf        vk.Buffer
	off, bytes uint64
}

// bind returns buf's descriptor range (the dummy buffer's for a buffer
// without bytes).
func (d *device) bind(buf *Buffer) binding {
	if buf == nil || buf.blk.size == 0 {
		buf = d.dummy
	}
	pg, off := d.page(buf.blk.ptr)
	return binding{buf: pg.buf, off: off, bytes: buf.blk.rounded}
}

// collectGarbage runs the Go garbage collector and waits (at most 20 ms)
// for the cleanups it queued, so that dead tensors return their memory
// (as backend/cuda does: device memory is invisible to the Go heap).
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

// Tensor is a Vulkan tensor: a view (shape, strides and offset in
// elements) of a Buffer. Views made by Reshape, Permute, Expand, Slice and
// Flip share the buffer; strides may be 0 (expanded axes) or negative
// (flipped axes). Tensors are immutable once an op returns them.
type Tensor struct {
	buf     *Buffer
	shape   []int
	strides []int
	offset  int
	dtype   backend.DType
}

// Shape returns the logical shape (do not modify).
func (t *Tensor) Shape() []int { return t.shape }

// DType returns the element type.
func (t *Tensor) DType() backend.DType { return t.dtype }

// Strides returns the strides in elements (do not modify).
func (t *Tensor) Strides() []int { return t.strides }

// Offset returns the offset of the first element in the buffer, in elements.
func (t *Tensor) Offset() int { return t.offset }

// NumElements is the product of the shape (1 for rank 0).
func (t *Tensor) NumElements() int { return backend.NumElements(t.shape) }

// IsContiguous reports whether the tensor's elements are laid out
// row-major without gaps from its offset (axes of size 1 may have any
// stride).
func (t *Tensor) IsContiguous() bool { return layout.IsRowMajor(t.shape, t.strides) }

// view returns a tensor sharing t's buffer with a new layout.
func (t *Tensor) view(shape, strides []int, offset int) *Tensor {
	return &Tensor{buf: t.buf, shape: shape, strides: strides, offset: offset, dtype: t.dtype}
}

// tensorOf asserts x is a Vulkan tensor.
func tensorOf(x backend.Tensor) *Tensor { return x.(*Tensor) }

// storageSize is the bytes one element of dt occupies on the device
// (TensorData's size: Bool is one byte).
func storageSize(dt backend.DType) int { return dt.Size() }
