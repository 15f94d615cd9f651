package cpu

import (
	"github.com/emberml/ember/backend"
)

var _ backend.MemoryManager = (*Backend)(nil)

// MemoryPersistentAllocations runs f. Host memory has no separate
// persistent pool: parameters are ordinary buffers.
func (be *Backend) MemoryPersistentAllocations(f func()) { f() }

// MemoryCleanup drops every buffer on the allocator's free lists, leaving
// them to the garbage collector.
func (be *Backend) MemoryCleanup() { be.alloc.cleanup() }

// MemoryInstallPools replaces the recycling allocator's layout: Direct
// turns it off (every output is a fresh Go allocation), Preset turns it
// back on with its size classes outside any pool, and Sliced groups the
// size classes into pools of pages (a buffer goes to the first pool whose
// MaxSlice holds its size class's bytes; larger ones stay outside every
// pool). A pool capped at Pages pages that is full drops its cached
// buffers of other sizes, collects garbage, and then fails the allocation
// with backend.ErrOutOfMemory rather than grow. Buffers below 1024
// elements are plain Go allocations in every layout. The cached buffers
// of the layout replaced are dropped; buffers still live under it are
// left to the garbage collector when they die, so installing never fails
// with *backend.PoolsInUseError. A malformed layout returns a
// *backend.InvalidLayoutError and leaves the layout in force unchanged.
func (be *Backend) MemoryInstallPools(layout backend.MemoryPoolLayout) error {
	if err := layout.Validate(1); err != nil {
		return err
	}
	switch layout.Kind {
	case backend.LayoutDirect:
		be.alloc.install(nil, true)
	case backend.LayoutPreset:
		be.alloc.install(nil, false)
	default:
		be.alloc.install(layout.Pools, false)
	}
	return nil
}

// MemoryPoolReport lists the sliced pools of the layout in force, in
// install order (none under Preset or Direct): PageSize, Pages (the pages
// that hold the bytes of the pool's buffers now, live or cached),
// PagesPeak and LargestAlloc (requested bytes) since the layout was
// installed; always true.
func (be *Backend) MemoryPoolReport() ([]backend.SlicedPoolReport, bool) {
	return be.alloc.report(), true
}

// MemoryPoolUsage reports the recycling allocator: NumberAllocs and
// BytesInUse count the pooled buffers handed out whose finalizers have not
// run yet (some may already be garbage), BytesPadding is 0 (the size-class
// rounding is counted in use), and BytesReserved adds the bytes on the
// free lists of the layout in force. Buffers below 1024 elements are
// plain Go allocations and not counted; always true.
func (be *Backend) MemoryPoolUsage() (backend.MemoryPoolUsage, bool) {
	return be.alloc.usage(), true
}

// Staging does nothing: host data needs no preparation.
func (be *Backend) Staging(data ...*backend.TensorData) {}
