//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
	"github.com/emberml/ember/ir"
)

// FromData copies host data onto the device: into a staging buffer, then
// with a copy command queued in the current batch (the host never writes
// tensor memory that queued work may still read). It panics with an error
// wrapping backend.ErrOutOfMemory when the device is full.
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor {
	t := b.empty("from_data", slices.Clone(data.Shape), data.DType)
	if len(data.Bytes) > 0 {
		b.must("from_data", b.d.upload(t.buf, 0, data.Bytes))
	}
	return t
}

// upload queues a copy of src into dst at byte offset off.
func (d *device) upload(dst *Buffer, off uint64, src []byte) error {
	n := uint64(len(src))
	d.mu.Lock()
	defer d.mu.Unlock()
	b, err := d.current()
	if err != nil {
		return err
	}
	c := b.staging
	if c == nil || c.used+n > c.size {
		if c, err = d.getChunk(chunkStaging, n); err != nil {
			return err
		}
		b.staging = c
		b.chunks = append(b.chunks, c)
	}
	at := c.used
	copy(c.bytes(at, n), src)
	c.used = roundUp(at+n, 16)
	bd := d.bind(dst)
	d.api.CmdCopyBuffer(b.cmd, c.buf, bd.buf, at, bd.off+off, n)
	d.api.CmdMemoryBarrier(b.cmd, vk.PipelineStageTransfer, vk.PipelineStageComputeShader|vk.PipelineStageTransfer,
		vk.AccessTransferWrite, vk.AccessShaderRead|vk.AccessShaderWrite|vk.AccessTransferRead|vk.AccessTransferWrite)
	b.dispatches++
	b.bytes += n
	if b.dispatches >= batchDispatches || b.bytes >= batchBytes {
		return d.submitLocked()
	}
	return nil
}

// download waits for the queued work and copies n bytes of src at byte
// offset off to the host: straight from the page where device memory is
// host-visible, through a staging buffer otherwise.
func (d *device) download(src *Buffer, off, n uint64) ([]byte, error) {
	out := make([]byte, n)
	if n == 0 {
		return out, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mapped {
		if err := d.waitIdleLocked(); err != nil {
			return nil, err
		}
		pg, poff := d.page(src.blk.ptr)
		copy(out, unsafe.Slice((*byte)(unsafe.Add(pg.ptr, poff+off)), n))
		return out, nil
	}
	b, err := d.current()
	if err != nil {
		return nil, err
	}
	c, err := d.getChunk(chunkStaging, n)
	if err != nil {
		return nil, err
	}
	bd := d.bind(src)
	d.api.CmdCopyBuffer(b.cmd, bd.buf, c.buf, bd.off+off, 0, n)
	if err := d.waitIdleLocked(); err != nil {
		d.putChunk(c)
		return nil, err
	}
	copy(out, c.bytes(0, n))
	d.putChunk(c)
	return out, nil
}

// ToData copies t to the host (contiguous, row-major), waiting for the
// work that computes it. A device failure is returned, not panicked.
func (b *Backend) ToData(x backend.Tensor) (td *backend.TensorData, err error) {
	t := tensorOf(x)
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			td, err = nil, e
		}
	}()
	if !t.IsContiguous() {
		t = b.contiguous(t)
	}
	size := uint64(storageSize(t.dtype))
	n := uint64(t.NumElements()) * size
	var bytes []byte
	if n == 0 {
		bytes = []byte{}
	} else {
		bytes, err = b.d.download(t.buf, uint64(t.offset)*size, n)
		if err != nil {
			return nil, fmt.Errorf("%v: to_data: %w", b.id, err)
		}
	}
	return ir.NewTensorData(slices.Clone(t.shape), t.dtype, bytes)
}
