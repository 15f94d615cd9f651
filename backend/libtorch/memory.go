//go:build libtorch && cgo

package libtorch

/*
#include "shim.h"
*/
import "C"

import "github.com/emberml/ember/backend"

// The backend's memory contract (backend.MemoryManager) over the shim's
// caching CPU allocator, which serves every ATen CPU allocation of the
// process once a libtorch backend is open: freed blocks of 1 MiB and more
// are kept by size class (up to 1 GiB) and reused, so that a new large
// tensor does not pay page faults over all its memory.

var _ backend.MemoryManager = (*Backend)(nil)

// MemoryPersistentAllocations runs f: the allocator has no separate
// persistent pool.
func (b *Backend) MemoryPersistentAllocations(f func()) { f() }

// MemoryCleanup frees the cached blocks.
func (b *Backend) MemoryCleanup() { C.lt_cache_release() }

// MemoryInstallPools selects the allocator's layout: Preset caches freed
// blocks (the default), Direct returns every block to the C library at
// once. Sliced layouts are an *backend.UnsupportedError; a malformed
// layout is an *backend.InvalidLayoutError.
func (b *Backend) MemoryInstallPools(layout backend.MemoryPoolLayout) error {
	if err := layout.Validate(0); err != nil {
		return err
	}
	switch layout.Kind {
	case backend.LayoutPreset:
		C.lt_cache_set(1)
	case backend.LayoutDirect:
		C.lt_cache_set(0)
	default:
		return &backend.UnsupportedError{Backend: "libtorch"}
	}
	return nil
}

// MemoryPoolReport reports false: the allocator has no sliced pools.
func (b *Backend) MemoryPoolReport() ([]backend.SlicedPoolReport, bool) { return nil, false }

// MemoryPoolUsage sums the allocator's state: the live blocks, the bytes
// of their size classes, the rounding above the bytes asked for, and the
// bytes held from the C library (live and cached blocks).
func (b *Backend) MemoryPoolUsage() (backend.MemoryPoolUsage, bool) {
	var live, inUse, requested, cached C.int64_t
	C.lt_cache_stats(&live, &inUse, &requested, &cached)
	return backend.MemoryPoolUsage{
		NumberAllocs:  uint64(live),
		BytesInUse:    uint64(inUse),
		BytesPadding:  uint64(inUse - requested),
		BytesReserved: uint64(inUse + cached),
	}, true
}

// Staging does nothing: host data is copied as it is.
func (b *Backend) Staging(data ...*backend.TensorData) {}
