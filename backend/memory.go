package backend

import "fmt"

// SlicedPool describes one dynamic memory pool of a device allocator: pages
// of PageSize bytes, at most Pages of them (nil: grow without limit), each
// page carved into slices of at most MaxSlice bytes (nil: PageSize). An
// allocation goes to the first pool, in install order, whose MaxSlice
// accepts its size. The model is Burn's (cubecl's) sliced memory pools.
type SlicedPool struct {
	PageSize uint64
	Pages    *uint64
	MaxSlice *uint64
}

// MemoryPoolLayoutKind says which kind of layout a MemoryPoolLayout is.
type MemoryPoolLayoutKind uint8

// The layout kinds.
const (
	// LayoutSliced: the pools listed in Pools.
	LayoutSliced MemoryPoolLayoutKind = iota + 1
	// LayoutDirect: every allocation is its own device allocation (no pooling).
	LayoutDirect
	// LayoutPreset: the backend's default layout.
	LayoutPreset
)

// MemoryPoolLayout is a device allocator's layout: Sliced(pools), Direct or
// the backend's Preset.
type MemoryPoolLayout struct {
	Kind  MemoryPoolLayoutKind
	Pools []SlicedPool
}

// Sliced returns a layout of the given pools, in order.
func Sliced(pools []SlicedPool) MemoryPoolLayout {
	return MemoryPoolLayout{Kind: LayoutSliced, Pools: append([]SlicedPool(nil), pools...)}
}

// Direct returns the layout without pooling.
func Direct() MemoryPoolLayout { return MemoryPoolLayout{Kind: LayoutDirect} }

// Preset returns the backend's default layout.
func Preset() MemoryPoolLayout { return MemoryPoolLayout{Kind: LayoutPreset} }

// SlicedPoolReport describes one dynamic pool: its page size in bytes, the
// pages it holds now, the most it ever held, and the largest allocation it
// served (bytes).
type SlicedPoolReport struct {
	PageSize     uint64
	Pages        uint64
	PagesPeak    uint64
	LargestAlloc uint64
}

// MemoryPoolUsage sums a device allocator's state: live allocations,
// bytes they use, bytes lost to padding/alignment, and bytes reserved from
// the device.
type MemoryPoolUsage struct {
	NumberAllocs  uint64
	BytesInUse    uint64
	BytesPadding  uint64
	BytesReserved uint64
}

// PoolsInUseError: the layout cannot change while allocations are live;
// retry at a quiescent point.
type PoolsInUseError struct{ BytesInUse uint64 }

// Error says how many bytes are in use.
func (e *PoolsInUseError) Error() string {
	return fmt.Sprintf("memory pools in use (%d bytes): retry at a quiescent point", e.BytesInUse)
}

// StreamUnavailableError: the allocator's stream is not available.
type StreamUnavailableError struct{}

// Error says the stream is unavailable.
func (e *StreamUnavailableError) Error() string { return "memory pools: stream unavailable" }

// UnsupportedError: the backend does not manage memory pools.
type UnsupportedError struct{ Backend string }

// Error names the backend that lacks the feature.
func (e *UnsupportedError) Error() string {
	if e.Backend == "" {
		return "not supported by this backend"
	}
	return fmt.Sprintf("not supported by the %s backend", e.Backend)
}

// InvalidLayoutError: the layout is malformed (zero page size, max slice
// larger than the page, ...).
type InvalidLayoutError struct{ Reason string }

// Error gives the reason the layout is invalid.
func (e *InvalidLayoutError) Error() string { return "invalid memory pool layout: " + e.Reason }

// MemoryManager is implemented by backends with a managed device allocator
// (SPEC-device.md "Memory"). The root package finds it with As, through
// any decorators; on a backend without it the root's Device memory
// methods do nothing, report false or return an *UnsupportedError.
type MemoryManager interface {
	// MemoryPersistentAllocations runs f with allocations going to the
	// persistent pool (model parameters), outside every dynamic pool.
	MemoryPersistentAllocations(f func())
	// MemoryCleanup releases cached, unused memory (no amount guaranteed).
	MemoryCleanup()
	// MemoryInstallPools replaces the dynamic pools; on error the layout in
	// force is unchanged. Errors: *PoolsInUseError, *StreamUnavailableError,
	// *UnsupportedError, *InvalidLayoutError.
	MemoryInstallPools(layout MemoryPoolLayout) error
	// MemoryPoolReport lists the dynamic pools in install order.
	MemoryPoolReport() ([]SlicedPoolReport, bool)
	// MemoryPoolUsage sums the allocator's state.
	MemoryPoolUsage() (MemoryPoolUsage, bool)
	// Staging prepares host data for fast transfer (pinned memory on CUDA);
	// it may replace each data's Bytes with a buffer it owns.
	Staging(data ...*TensorData)
}
