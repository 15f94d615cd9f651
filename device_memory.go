package ember

import (
	"github.com/emberml/ember/backend"
)

// Memory-pool and throughput types, shared with package backend.
type (
	// SlicedPool is one dynamic pool: PageSize bytes per page, Pages (nil:
	// grow), MaxSlice (nil: page size).
	SlicedPool = backend.SlicedPool
	// MemoryPoolLayout is Sliced(pools), Direct() or Preset().
	MemoryPoolLayout = backend.MemoryPoolLayout
	// SlicedPoolReport is PageSize, Pages, PagesPeak and LargestAlloc of one pool.
	SlicedPoolReport = backend.SlicedPoolReport
	// MemoryPoolUsage is NumberAllocs, BytesInUse, BytesPadding, BytesReserved.
	MemoryPoolUsage = backend.MemoryPoolUsage
	// PoolsInUseError: live allocations prevent a layout change (BytesInUse).
	PoolsInUseError = backend.PoolsInUseError
	// StreamUnavailableError: the allocator's stream is unavailable.
	StreamUnavailableError = backend.StreamUnavailableError
	// UnsupportedError: the backend does not manage memory pools.
	UnsupportedError = backend.UnsupportedError
	// InvalidLayoutError: the layout is malformed (Reason).
	InvalidLayoutError = backend.InvalidLayoutError
	// ThroughputKey is one micro-benchmark (see ComputeDirect, Memory, Launch, ...).
	ThroughputKey = backend.ThroughputKey
	// ThroughputStat is a measured rate; its String prints an aligned row.
	ThroughputStat = backend.ThroughputStat
	// AccessPattern orders a working-set measurement.
	AccessPattern = backend.AccessPattern
)

// The access patterns of MemoryWorkingSet.
const (
	AccessSequential = backend.AccessSequential
	AccessRandom     = backend.AccessRandom
)

// Sliced returns a layout of the given pools, in order.
func Sliced(pools []SlicedPool) MemoryPoolLayout { return backend.Sliced(pools) }

// Direct returns the layout without pooling.
func Direct() MemoryPoolLayout { return backend.Direct() }

// Preset returns the backend's default layout.
func Preset() MemoryPoolLayout { return backend.Preset() }

// ComputeDirect measures arithmetic in dt on the general-purpose units (FLOP/s, FMA = 2).
func ComputeDirect(dt DType) ThroughputKey {
	return ThroughputKey{Mode: backend.ModeComputeDirect, DType: dt}
}

// ComputeCMMA measures matrix units (tensor cores) on an m×n×k tile in dt (FLOP/s).
func ComputeCMMA(dt DType, m, n, k int) ThroughputKey {
	return ThroughputKey{Mode: backend.ModeComputeCMMA, DType: dt, M: m, N: n, K: k}
}

// Memory measures copy bandwidth (bytes read + written per second).
func Memory() ThroughputKey { return ThroughputKey{Mode: backend.ModeMemory} }

// MemoryRead measures read bandwidth (bytes/s).
func MemoryRead() ThroughputKey { return ThroughputKey{Mode: backend.ModeMemoryRead} }

// MemoryWrite measures write bandwidth (bytes/s).
func MemoryWrite() ThroughputKey { return ThroughputKey{Mode: backend.ModeMemoryWrite} }

// MemoryWorkingSet measures bandwidth over a working set of the given bytes.
func MemoryWorkingSet(access AccessPattern, bytes uint64) ThroughputKey {
	return ThroughputKey{Mode: backend.ModeMemoryWorkingSet, Access: access, Bytes: bytes}
}

// Launch measures the time per kernel launch / op dispatch.
func Launch() ThroughputKey { return ThroughputKey{Mode: backend.ModeLaunch} }

func (d Device) memory() (backend.MemoryManager, error) {
	st, err := d.tryStack(false)
	if err != nil {
		return nil, err
	}
	mm, ok := backend.As[backend.MemoryManager](st.top)
	if !ok {
		return nil, &UnsupportedError{Backend: d.ID().Type}
	}
	return mm, nil
}

// MemoryPersistentAllocations runs f with the device's allocations going to
// the persistent pool (for model parameters), outside every dynamic pool.
// On backends without a managed allocator it just runs f.
func (d Device) MemoryPersistentAllocations(f func()) {
	if mm, err := d.memory(); err == nil {
		mm.MemoryPersistentAllocations(f)
		return
	}
	f()
}

// MemoryPersistent is MemoryPersistentAllocations returning f's value.
func MemoryPersistent[T any](d Device, f func() T) T {
	var v T
	d.MemoryPersistentAllocations(func() { v = f() })
	return v
}

// MemoryCleanup releases cached, unused device memory; no amount is
// guaranteed (a no-op on backends without a managed allocator).
func (d Device) MemoryCleanup() {
	if mm, err := d.memory(); err == nil {
		mm.MemoryCleanup()
	}
}

// MemoryInstallPools replaces the device's dynamic memory pools. Errors:
// *PoolsInUseError (retry at a quiescent point), *StreamUnavailableError,
// *UnsupportedError (the backend has no managed allocator, e.g. Flex),
// *InvalidLayoutError, or the device's init error. On any error the layout
// in force is unchanged.
func (d Device) MemoryInstallPools(layout MemoryPoolLayout) error {
	mm, err := d.memory()
	if err != nil {
		return err
	}
	return mm.MemoryInstallPools(layout)
}

// MemoryPoolReport lists the dynamic pools (PageSize, Pages, PagesPeak,
// LargestAlloc) in install order; false where the backend does not report.
func (d Device) MemoryPoolReport() ([]SlicedPoolReport, bool) {
	mm, err := d.memory()
	if err != nil {
		return nil, false
	}
	return mm.MemoryPoolReport()
}

// MemoryPoolUsage sums the allocator's state; false where the backend does not report.
func (d Device) MemoryPoolUsage() (MemoryPoolUsage, bool) {
	mm, err := d.memory()
	if err != nil {
		return MemoryPoolUsage{}, false
	}
	return mm.MemoryPoolUsage()
}

// Staging prepares host data for fast transfer to the device (pinned host
// memory on CUDA); a no-op elsewhere.
func (d Device) Staging(data ...*TensorData) {
	if mm, err := d.memory(); err == nil {
		mm.Staging(data...)
	}
}

// PerformanceStats runs a micro-benchmark per key, in order, and returns
// the measured rates. Keys the device cannot measure (or every key, on a
// backend without statistics) come back with Err set; an unusable device
// sets its init error on every key.
func (d Device) PerformanceStats(keys []ThroughputKey) []ThroughputStat {
	st, err := d.tryStack(false)
	if err == nil {
		if ps, ok := backend.As[backend.PerformanceStater](st.top); ok {
			return ps.PerformanceStats(keys)
		}
		err = &UnsupportedError{Backend: d.ID().Type}
	}
	out := make([]ThroughputStat, len(keys))
	for i, k := range keys {
		out[i] = ThroughputStat{Key: k, Err: err}
	}
	return out
}
