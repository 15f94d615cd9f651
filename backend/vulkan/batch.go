//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
)

// Work is recorded into batches: one command buffer with its own command
// pool, descriptor pool, parameter block and fence. Operations append
// dispatches and copies to the current batch, each followed by a global
// memory barrier, so commands run in program order; a batch is submitted
// when it is full (batchDispatches), when the memory its dispatches bind
// reaches batchBytes (so that the device starts on large operations while
// the program records the next ones, as a CUDA stream would run them),
// when its pools run out, on Flush, and before anything waits for the
// device. Completed batches (their fence signalled) are reset and reused.

// Batch limits.
const (
	batchDispatches = 256       // dispatches per batch before it is submitted
	batchSets       = 512       // descriptor sets per batch
	batchBindings   = 8         // storage buffers per set, at most
	paramsChunk     = 256 << 10 // bytes of parameter blocks per batch
	stagingChunk    = 4 << 20   // default size of an upload chunk
	maxInflight     = 16        // submitted batches before Submit waits
	keepChunkBytes  = 64 << 20  // free host chunks kept for reuse
)

type batch struct {
	serial     uint64
	pool       vk.CommandPool
	cmd        vk.CommandBuffer
	fence      vk.Fence
	dpool      vk.DescriptorPool
	sets       int
	dispatches int
	bytes      uint64 // memory bound by the dispatches (a measure of their work)
	params     *hostChunk
	staging    *hostChunk   // current upload chunk (bump allocated)
	chunks     []*hostChunk // every chunk to return when the batch completes
}

// batchBytes is the memory a batch's dispatches bind before it is
// submitted.
var batchBytes uint64 = 256 << 20

// hostChunk is a host-visible buffer, mapped, for parameter blocks and
// staging copies.
type hostChunk struct {
	buf  vk.Buffer
	mem  vk.DeviceMemory
	ptr  unsafe.Pointer
	size uint64
	used uint64
	kind int // chunkParams or chunkStaging
}

const (
	chunkParams = iota
	chunkStaging
)

// hostChunks are the free chunks of each kind.
type hostChunks struct {
	free  [2][]*hostChunk
	bytes uint64
}

// getChunk returns a free chunk of kind holding at least n bytes, or a new
// one. Called with d.mu held.
func (d *device) getChunk(kind int, n uint64) (*hostChunk, error) {
	l := d.chunks.free[kind]
	best := -1
	for i, c := range l {
		if c.size >= n && (best < 0 || c.size < l[best].size) {
			best = i
		}
	}
	if best >= 0 {
		c := l[best]
		l[best] = l[len(l)-1]
		d.chunks.free[kind] = l[:len(l)-1]
		d.chunks.bytes -= c.size
		c.used = 0
		return c, nil
	}
	size := n
	typ := d.stagingType
	if kind == chunkParams {
		typ = d.paramsType
		size = max(size, paramsChunk)
	} else {
		size = max(size, stagingChunk)
	}
	buf, err := d.api.CreateBuffer(size, vk.BufferUsageStorageBuffer|vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst)
	if err != nil {
		return nil, memErr(err)
	}
	req := d.api.BufferMemoryRequirements(buf)
	mem, err := d.api.AllocateMemory(req.Size, typ)
	if err != nil {
		d.api.DestroyBuffer(buf)
		return nil, memErr(err)
	}
	if err := d.api.BindBufferMemory(buf, mem, 0); err != nil {
		d.api.DestroyBuffer(buf)
		d.api.FreeMemory(mem)
		return nil, err
	}
	ptr, err := d.api.MapMemory(mem, req.Size)
	if err != nil {
		d.api.DestroyBuffer(buf)
		d.api.FreeMemory(mem)
		return nil, err
	}
	return &hostChunk{buf: buf, mem: mem, ptr: ptr, size: size, kind: kind}, nil
}

// putChunk keeps c for reuse, or destroys it when enough is kept.
func (d *device) putChunk(c *hostChunk) {
	if d.chunks.bytes+c.size > keepChunkBytes {
		d.api.DestroyBuffer(c.buf)
		d.api.FreeMemory(c.mem)
		return
	}
	d.chunks.bytes += c.size
	d.chunks.free[c.kind] = append(d.chunks.free[c.kind], c)
}

// bytes returns n bytes of c at offset off as a slice.
func (c *hostChunk) bytes(off, n uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(c.ptr, off)), n)
}

// newBatch makes the objects of a batch.
func (d *device) newBatch() (*batch, error) {
	b := &batch{}
	var err error
	if b.pool, err = d.api.CreateCommandPool(d.family); err != nil {
		return nil, err
	}
	if b.cmd, err = d.api.AllocateCommandBuffer(b.pool); err != nil {
		return nil, err
	}
	if b.fence, err = d.api.CreateFence(); err != nil {
		return nil, err
	}
	if b.dpool, err = d.api.CreateDescriptorPool(batchSets, batchSets*batchBindings); err != nil {
		return nil, err
	}
	return b, nil
}

// current returns the batch being recorded, beginning one if needed.
// Called with d.mu held.
func (d *device) current() (*batch, error) {
	if err := d.failed(); err != nil {
		return nil, err
	}
	if d.cur != nil {
		return d.cur, nil
	}
	var b *batch
	if n := len(d.free); n > 0 {
		b = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		var err error
		if b, err = d.newBatch(); err != nil {
			return nil, d.fail(err)
		}
	}
	if err := d.api.BeginCommandBuffer(b.cmd); err != nil {
		return nil, d.fail(err)
	}
	p, err := d.getChunk(chunkParams, paramsChunk)
	if err != nil {
		return nil, d.fail(err)
	}
	b.params = p
	b.chunks = append(b.chunks, p)
	b.serial = d.serial
	d.serial++
	d.cur = b
	return b, nil
}

// submitLocked ends and submits the current batch (if any).
func (d *device) submitLocked() error {
	b := d.cur
	if b == nil {
		return d.failed()
	}
	d.cur = nil
	// Make every write of the batch visible to the host (reads of mapped
	// pages and staging buffers after the fence).
	d.api.CmdMemoryBarrier(b.cmd, vk.PipelineStageComputeShader|vk.PipelineStageTransfer, vk.PipelineStageHost,
		vk.AccessShaderWrite|vk.AccessTransferWrite, vk.AccessHostRead)
	if err := d.api.EndCommandBuffer(b.cmd); err != nil {
		return d.fail(err)
	}
	if err := d.api.QueueSubmit(d.queue, b.cmd, b.fence); err != nil {
		return d.fail(err)
	}
	d.inflight = append(d.inflight, b)
	if len(d.inflight) > maxInflight {
		return d.waitLocked(d.inflight[0])
	}
	return d.reapLocked()
}

// reapLocked recycles the completed batches at the front of the queue.
func (d *device) reapLocked() error {
	for len(d.inflight) > 0 {
		b := d.inflight[0]
		ok, err := d.api.FenceSignalled(b.fence)
		if err != nil {
			return d.fail(err)
		}
		if !ok {
			return nil
		}
		d.recycleLocked(b)
	}
	return nil
}

// waitLocked waits for batch b (and every batch before it) to complete.
func (d *device) waitLocked(b *batch) error {
	for len(d.inflight) > 0 {
		first := d.inflight[0]
		for {
			ok, err := d.api.WaitForFence(first.fence, uint64(time.Second))
			if err != nil {
				return d.fail(err)
			}
			if ok {
				break
			}
		}
		d.recycleLocked(first)
		if first == b {
			break
		}
	}
	return nil
}

// recycleLocked resets the completed batch at the front of the queue.
func (d *device) recycleLocked(b *batch) {
	d.inflight = d.inflight[1:]
	d.done = b.serial + 1
	_ = d.api.ResetFence(b.fence)
	_ = d.api.ResetDescriptorPool(b.dpool)
	for _, c := range b.chunks {
		d.putChunk(c)
	}
	clear(b.chunks)
	b.chunks = b.chunks[:0]
	b.params, b.staging = nil, nil
	b.sets, b.dispatches, b.bytes = 0, 0, 0
	d.free = append(d.free, b)
}

// flush submits the current batch without waiting.
func (d *device) flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.submitLocked()
}

// waitIdle submits the current batch and waits for every batch.
func (d *device) waitIdle() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waitIdleLocked()
}

func (d *device) waitIdleLocked() error {
	if err := d.failed(); err != nil {
		return err
	}
	if err := d.submitLocked(); err != nil {
		return err
	}
	if n := len(d.inflight); n > 0 {
		if err := d.waitLocked(d.inflight[n-1]); err != nil {
			return err
		}
	}
	return d.failed()
}

// fail turns a Vulkan error into the error the backend reports. A lost
// device is sticky: every later operation fails with the same error,
// which wraps backend.ErrExecution.
func (d *device) fail(err error) error {
	var ve *vk.Error
	if errors.As(err, &ve) && ve.DeviceLost() {
		e := fmt.Errorf("%s: %w: %w (the device is unusable until the process restarts)", d.adapter.Name, backend.ErrExecution, err)
		d.fatal.CompareAndSwap(nil, &e)
		return *d.fatal.Load()
	}
	return memErr(err)
}

// paramsLocked copies words into the current batch's parameter chunk and
// returns their binding, submitting the batch first when the chunk is
// full (b is then the new current batch).
func (d *device) paramsLocked(b **batch, words []uint32) (binding, error) {
	n := uint64(4 * max(len(words), 1))
	c := (*b).params
	off := roundUp(c.used, d.offsetAlign)
	if off+n > c.size {
		if err := d.submitLocked(); err != nil {
			return binding{}, err
		}
		nb, err := d.current()
		if err != nil {
			return binding{}, err
		}
		*b = nb
		c = nb.params
		off = 0
	}
	if len(words) > 0 {
		copy(unsafe.Slice((*uint32)(unsafe.Add(c.ptr, off)), len(words)), words)
	}
	c.used = off + n
	return binding{buf: c.buf, off: off, bytes: n}, nil
}
