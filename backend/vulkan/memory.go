//go:build linux && (amd64 || arm64)

package vulkan

import "github.com/emberml/ember/backend"

// MemoryPersistentAllocations runs f with new buffers going to the
// persistent pool (model parameters): each gets a page of its own, outside
// the dynamic pools, reused by a later persistent request of similar size
// once freed. Allocations made concurrently by other goroutines during f
// go there too.
func (b *Backend) MemoryPersistentAllocations(f func()) {
	b.d.persistent.Add(1)
	defer b.d.persistent.Add(-1)
	f()
}

// MemoryCleanup releases every cached page that holds no live allocation
// (after a garbage collection, so that dead tensors return theirs first).
func (b *Backend) MemoryCleanup() {
	collectGarbage()
	b.d.alloc.cleanup()
}

// MemoryInstallPools replaces the dynamic pools with layout: Sliced pools
// (an allocation goes to the first pool whose MaxSlice accepts its size;
// larger ones get pages of their own), Direct (every buffer is its own
// VkDeviceMemory) or Preset (8 MiB pages for slices up to 1 MiB, 64 MiB
// pages up to 16 MiB, 256 MiB pages up to 64 MiB, as the cuda backend).
// Page sizes must be multiples of 256 bytes. Errors:
// *backend.InvalidLayoutError, and *backend.PoolsInUseError while dynamic
// buffers are live (checked after a garbage collection; the persistent
// pool does not count). On error the layout in force is unchanged. A
// capped pool (Pages set) that is full makes allocations fail with
// backend.ErrOutOfMemory rather than grow.
func (b *Backend) MemoryInstallPools(layout backend.MemoryPoolLayout) error {
	return b.d.alloc.install(layout)
}

// MemoryPoolReport lists the dynamic sliced pools in install order with
// PageSize, Pages, PagesPeak (since the layout was installed) and
// LargestAlloc (bytes); always true.
func (b *Backend) MemoryPoolReport() ([]backend.SlicedPoolReport, bool) {
	return b.d.alloc.report(), true
}

// MemoryPoolUsage returns the live buffers, their bytes, the bytes lost to
// 256-byte rounding and page reuse, and all bytes reserved from the device
// (every pool, persistent included); always true.
func (b *Backend) MemoryPoolUsage() (backend.MemoryPoolUsage, bool) {
	return b.d.alloc.usage(), true
}

// Staging does nothing: uploads already go through host-visible staging
// buffers of the device.
func (b *Backend) Staging(data ...*backend.TensorData) {}
