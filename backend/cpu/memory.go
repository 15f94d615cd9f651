package cpu

import "github.com/emberml/ember/backend"

var _ backend.MemoryManager = (*Backend)(nil)

// MemoryPersistentAllocations runs f. Host memory has no separate
// persistent pool: parameters are ordinary buffers.
func (be *Backend) MemoryPersistentAllocations(f func()) { f() }

// MemoryCleanup drops every buffer on the allocator's free lists, leaving
// them to the garbage collector.
func (be *Backend) MemoryCleanup() { be.alloc.cleanup() }

// MemoryInstallPools switches the recycling allocator: Direct turns it off
// (every output is a fresh Go allocation, cached buffers are dropped),
// Preset turns it back on. Sliced layouts describe device page pools this
// backend does not have and return a *backend.UnsupportedError; the layout
// in force is then unchanged.
func (be *Backend) MemoryInstallPools(layout backend.MemoryPoolLayout) error {
	switch layout.Kind {
	case backend.LayoutDirect:
		be.alloc.disabled.Store(true)
		be.alloc.cleanup()
		return nil
	case backend.LayoutPreset:
		be.alloc.disabled.Store(false)
		return nil
	}
	return &backend.UnsupportedError{Backend: "cpu (sliced pools)"}
}

// MemoryPoolReport returns false: the allocator has size classes, not
// sliced pools.
func (be *Backend) MemoryPoolReport() ([]backend.SlicedPoolReport, bool) { return nil, false }

// MemoryPoolUsage reports the recycling allocator: NumberAllocs and
// BytesInUse count the buffers handed out whose finalizers have not run
// yet (some may already be garbage), BytesPadding is 0 (the size-class
// rounding is counted in use), and BytesReserved adds the bytes on the
// free lists.
func (be *Backend) MemoryPoolUsage() (backend.MemoryPoolUsage, bool) {
	a := be.alloc
	return backend.MemoryPoolUsage{
		NumberAllocs:  uint64(max(0, a.nlive.Load())),
		BytesInUse:    uint64(max(0, a.live.Load())),
		BytesReserved: uint64(max(0, a.reserved.Load())),
	}, true
}

// Staging does nothing: host data needs no preparation.
func (be *Backend) Staging(data ...*backend.TensorData) {}
