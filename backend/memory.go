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

// Validate returns an *InvalidLayoutError for a malformed layout: pools
// given with Direct or Preset, an unknown kind, a Sliced layout without
// pools, or a pool with a zero page size, a page size that is not a
// multiple of align bytes (align 0 or 1: any), zero pages, a zero max
// slice or a max slice above its page size. Backends call it before
// installing l.
func (l MemoryPoolLayout) Validate(align uint64) error {
	bad := func(f string, args ...any) error {
		return &InvalidLayoutError{Reason: fmt.Sprintf(f, args...)}
	}
	switch l.Kind {
	case LayoutDirect, LayoutPreset:
		if len(l.Pools) != 0 {
			return bad("%d pools given with a direct or preset layout", len(l.Pools))
		}
		return nil
	case LayoutSliced:
	default:
		return bad("unknown layout kind %d", l.Kind)
	}
	if len(l.Pools) == 0 {
		return bad("a sliced layout needs at least one pool")
	}
	for i, p := range l.Pools {
		switch {
		case p.PageSize == 0:
			return bad("pool %d: zero page size", i)
		case align > 1 && p.PageSize%align != 0:
			return bad("pool %d: page size %d is not a multiple of %d bytes", i, p.PageSize, align)
		case p.Pages != nil && *p.Pages == 0:
			return bad("pool %d: zero pages", i)
		case p.MaxSlice != nil && *p.MaxSlice == 0:
			return bad("pool %d: zero max slice", i)
		case p.MaxSlice != nil && *p.MaxSlice > p.PageSize:
			return bad("pool %d: max slice %d larger than the page size %d", i, *p.MaxSlice, p.PageSize)
		}
	}
	return nil
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

// MemoryManager is implemented by backends with a managed device allocator:
// a persistent pool for model parameters and dynamic pools that the
// program can replace (sized from their peak use), report on and release.
// It backs the memory methods of package ember's Device, whose
// documentation (section Devices) states the contract. The root package
// finds it with As, through any decorators; on a backend without it the
// root's Device memory methods do nothing, report false or return an
// *UnsupportedError.
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
