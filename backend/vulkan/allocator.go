//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"fmt"
	"sync"

	"github.com/emberml/ember/backend"
)

// deviceMemory is what the allocator draws pages from: VkDeviceMemory
// with a VkBuffer over it on a device, a fake in tests.
type deviceMemory interface {
	// alloc returns bytes of device memory, or an error wrapping
	// backend.ErrOutOfMemory when the device has too little.
	alloc(bytes uint64) (uint64, error)
	// free returns a page; synchronize was called since the memory was last used.
	free(ptr uint64)
	// synchronize waits until queued device work is done (before pages are freed).
	synchronize()
	// info returns the device's free and total bytes.
	info() (free, total uint64)
}

// blockKind says where a block lives.
type blockKind uint8

const (
	kindSliced blockKind = iota + 1
	kindPersistent
	kindLarge
	kindDirect
)

// block is one allocation handed out by the allocator: ptr is its device
// address, size the bytes asked for, rounded the bytes it occupies.
type block struct {
	ptr, size, rounded uint64
	kind               blockKind
	pool               *slicedPool
	ex                 *exclusivePool
	page               *page
	seg                *segment // the slice of a sliced block
	freed              bool
}

// Defaults of the preset layout and of the garbage-collection trigger.
const (
	largeGranule = 2 << 20   // page rounding for allocations above every pool's MaxSlice
	gcMinBytes   = 256 << 20 // allocate at least this much before forcing a GC to avoid growth
)

// gcDueLocked reports whether enough was allocated since the last collection to
// force one instead of growing: half the reserved bytes, at least
// gcMinBytes. A smaller share makes every big fresh output (a 1 GiB sum, a
// 128 MiB product) or a training step's ~100 MiB of temporaries pay a
// collection (bench/NOTES.md "CUDA performance", measured for the cuda backend whose
// allocator this is); a larger one, or none,
// lets the reserve grow with every allocation that the collector would
// have returned.
func (a *allocator) gcDueLocked() bool {
	return a.gc != nil && a.sinceGC >= max(gcMinBytes, a.reservedLocked()/2)
}

// presetPools is the default layout: small, medium and big slices; larger
// requests get pages of their own.
func presetPools() []backend.SlicedPool {
	u := func(v uint64) *uint64 { return &v }
	return []backend.SlicedPool{
		{PageSize: 8 << 20, MaxSlice: u(1 << 20)},
		{PageSize: 64 << 20, MaxSlice: u(16 << 20)},
		{PageSize: 256 << 20, MaxSlice: u(64 << 20)},
	}
}

// allocator is the caching device allocator behind the backend's
// backend.MemoryManager: dynamic sliced pools (first pool whose MaxSlice
// accepts the size), an exclusive-page pool for larger requests, a
// persistent pool, or direct allocations. It is safe for concurrent use.
type allocator struct {
	mu         sync.Mutex
	mem        deviceMemory
	gc         func() // runs the Go GC and waits for buffer cleanups; may be nil
	direct     bool
	pools      []*slicedPool
	large      exclusivePool
	persistent exclusivePool

	numAllocs, inUse, padding uint64
	dynInUse                  uint64 // bytes in use outside the persistent pool
	directReserved            uint64
	sinceGC                   uint64
}

func newAllocator(mem deviceMemory, gc func()) *allocator {
	a := &allocator{mem: mem, gc: gc,
		large: exclusivePool{granule: largeGranule}, persistent: exclusivePool{granule: sliceAlign}}
	a.pools = buildPools(presetPools())
	return a
}

func buildPools(cfg []backend.SlicedPool) []*slicedPool {
	out := make([]*slicedPool, len(cfg))
	for i, c := range cfg {
		p := &slicedPool{pageSize: c.PageSize, maxSlice: c.PageSize}
		if c.Pages != nil {
			p.maxPages = *c.Pages
		}
		if c.MaxSlice != nil {
			p.maxSlice = *c.MaxSlice
		}
		out[i] = p
	}
	return out
}

// errPoolFull: a capped pool has no room and may not grow.
var errPoolFull = errors.New("capped memory pool is full")

// alloc returns a block of at least size bytes. persistent sends it to the
// persistent pool. Before growing a pool it forces a garbage collection when
// enough was allocated since the last one (so that dead tensors return
// their slices); when the device is out of memory it releases cached pages,
// collects and retries, then fails with an error wrapping
// backend.ErrOutOfMemory that gives the requested and the free bytes.
func (a *allocator) alloc(size uint64, persistent bool) (*block, error) {
	if size == 0 {
		return &block{kind: kindDirect, freed: false}, nil
	}
	r := roundUp(size, sliceAlign)
	a.mu.Lock()
	if b := a.fit(size, r, persistent); b != nil {
		a.mu.Unlock()
		return b, nil
	}
	if a.gcDueLocked() {
		a.sinceGC = 0
		a.mu.Unlock()
		a.gc()
		a.mu.Lock()
		if b := a.fit(size, r, persistent); b != nil {
			a.mu.Unlock()
			return b, nil
		}
	}
	b, err := a.grow(size, r, persistent)
	if err == nil {
		a.mu.Unlock()
		return b, nil
	}
	if !errors.Is(err, backend.ErrOutOfMemory) && !errors.Is(err, errPoolFull) {
		a.mu.Unlock()
		return nil, err // a driver failure, not a lack of memory
	}
	// Out of memory or a capped pool is full: release, collect, retry.
	a.releaseUnusedLocked()
	a.sinceGC = 0
	a.mu.Unlock()
	if a.gc != nil {
		a.gc()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.fit(size, r, persistent); b != nil {
		return b, nil
	}
	a.releaseUnusedLocked() // pages emptied by the collection just run
	if b, err = a.grow(size, r, persistent); err == nil {
		return b, nil
	}
	free, total := a.mem.info()
	if !errors.Is(err, backend.ErrOutOfMemory) {
		err = fmt.Errorf("%w: %w", backend.ErrOutOfMemory, err)
	}
	return nil, fmt.Errorf("vulkan: allocating %d bytes (free %d of %d, reserved %d): %w",
		size, free, total, a.reservedLocked(), err)
}

// fit places the request in existing free space, or returns nil.
func (a *allocator) fit(size, r uint64, persistent bool) *block {
	switch {
	case persistent:
		return a.fitExclusive(&a.persistent, kindPersistent, size, r)
	case a.direct:
		return nil
	}
	if sp := a.poolFor(size); sp != nil {
		for _, pg := range sp.pages {
			if pg.size-pg.used < r {
				continue
			}
			if sg, ok := pg.take(r); ok {
				return a.account(&block{ptr: pg.ptr + sg.off, size: size, rounded: r, kind: kindSliced, pool: sp, page: pg, seg: sg})
			}
		}
		return nil
	}
	return a.fitExclusive(&a.large, kindLarge, size, r)
}

func (a *allocator) fitExclusive(e *exclusivePool, k blockKind, size, r uint64) *block {
	pg := e.find(roundUp(r, e.granule))
	if pg == nil {
		return nil
	}
	pg.used = pg.size
	return a.account(&block{ptr: pg.ptr, size: size, rounded: pg.size, kind: k, ex: e, page: pg})
}

// grow takes a new page from the device for the request.
func (a *allocator) grow(size, r uint64, persistent bool) (*block, error) {
	switch {
	case persistent:
		return a.growExclusive(&a.persistent, kindPersistent, size, r)
	case a.direct:
		ptr, err := a.mem.alloc(r)
		if err != nil {
			return nil, err
		}
		a.directReserved += r
		return a.account(&block{ptr: ptr, size: size, rounded: r, kind: kindDirect}), nil
	}
	sp := a.poolFor(size)
	if sp == nil {
		return a.growExclusive(&a.large, kindLarge, size, r)
	}
	if sp.maxPages != 0 && uint64(len(sp.pages)) >= sp.maxPages {
		return nil, fmt.Errorf("%w (page size %d, %d pages)", errPoolFull, sp.pageSize, sp.maxPages)
	}
	ptr, err := a.mem.alloc(sp.pageSize)
	if err != nil {
		return nil, err
	}
	pg := newPage(ptr, sp.pageSize)
	sp.pages = append(sp.pages, pg)
	sp.peak = max(sp.peak, uint64(len(sp.pages)))
	sg, _ := pg.take(r)
	return a.account(&block{ptr: ptr + sg.off, size: size, rounded: r, kind: kindSliced, pool: sp, page: pg, seg: sg}), nil
}

func (a *allocator) growExclusive(e *exclusivePool, k blockKind, size, r uint64) (*block, error) {
	n := roundUp(r, e.granule)
	ptr, err := a.mem.alloc(n)
	if err != nil {
		return nil, err
	}
	pg := &page{ptr: ptr, size: n, used: n}
	e.pages = append(e.pages, pg)
	return a.account(&block{ptr: ptr, size: size, rounded: n, kind: k, ex: e, page: pg}), nil
}

// poolFor is the first sliced pool whose MaxSlice accepts size.
func (a *allocator) poolFor(size uint64) *slicedPool {
	for _, p := range a.pools {
		if size <= p.maxSlice {
			return p
		}
	}
	return nil
}

func (a *allocator) account(b *block) *block {
	a.numAllocs++
	a.inUse += b.size
	a.padding += b.rounded - b.size
	a.sinceGC += b.rounded
	if b.kind != kindPersistent {
		a.dynInUse += b.size
	}
	if b.pool != nil {
		b.pool.largest = max(b.pool.largest, b.size)
	}
	return b
}

// free returns b to its pool (a direct block to the device). Freeing a
// block twice is a no-op.
func (a *allocator) free(b *block) {
	if b.size == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.freed {
		return
	}
	b.freed = true
	a.numAllocs--
	a.inUse -= b.size
	a.padding -= b.rounded - b.size
	if b.kind != kindPersistent {
		a.dynInUse -= b.size
	}
	switch b.kind {
	case kindSliced:
		b.page.give(b.seg)
	case kindPersistent, kindLarge:
		b.page.used = 0
	case kindDirect:
		a.mem.synchronize()
		a.mem.free(b.ptr)
		a.directReserved -= b.rounded
	}
}

// releaseUnusedLocked frees every page that holds no allocation.
func (a *allocator) releaseUnusedLocked() {
	synced := false
	release := func(pages []*page) []*page {
		kept := pages[:0]
		for _, pg := range pages {
			if pg.used != 0 {
				kept = append(kept, pg)
				continue
			}
			if !synced {
				a.mem.synchronize()
				synced = true
			}
			a.mem.free(pg.ptr)
		}
		clear(pages[len(kept):])
		return kept
	}
	for _, sp := range a.pools {
		sp.pages = release(sp.pages)
	}
	a.large.pages = release(a.large.pages)
	a.persistent.pages = release(a.persistent.pages)
}

// cleanup releases cached pages that hold no allocation.
func (a *allocator) cleanup() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseUnusedLocked()
}

func (a *allocator) reservedLocked() uint64 {
	n := a.directReserved
	for _, sp := range a.pools {
		n += uint64(len(sp.pages)) * sp.pageSize
	}
	for _, e := range []*exclusivePool{&a.large, &a.persistent} {
		for _, pg := range e.pages {
			n += pg.size
		}
	}
	return n
}

// usage sums the allocator's state.
func (a *allocator) usage() backend.MemoryPoolUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return backend.MemoryPoolUsage{NumberAllocs: a.numAllocs, BytesInUse: a.inUse,
		BytesPadding: a.padding, BytesReserved: a.reservedLocked()}
}

// report lists the sliced pools in install order (none in the direct layout).
func (a *allocator) report() []backend.SlicedPoolReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]backend.SlicedPoolReport, len(a.pools))
	for i, sp := range a.pools {
		out[i] = backend.SlicedPoolReport{PageSize: sp.pageSize, Pages: uint64(len(sp.pages)),
			PagesPeak: sp.peak, LargestAlloc: sp.largest}
	}
	return out
}

// install replaces the dynamic pools. It fails with *InvalidLayoutError
// or, while dynamic allocations are live (after a garbage collection to
// return dead tensors), *PoolsInUseError; the layout is then unchanged.
func (a *allocator) install(l backend.MemoryPoolLayout) error {
	if err := l.Validate(sliceAlign); err != nil {
		return err
	}
	a.mu.Lock()
	if a.dynInUse != 0 && a.gc != nil {
		a.mu.Unlock()
		a.gc()
		a.mu.Lock()
	}
	defer a.mu.Unlock()
	if a.dynInUse != 0 {
		return &backend.PoolsInUseError{BytesInUse: a.dynInUse}
	}
	// Every dynamic page is free: give them back.
	a.mem.synchronize()
	for _, sp := range a.pools {
		for _, pg := range sp.pages {
			a.mem.free(pg.ptr)
		}
	}
	for _, pg := range a.large.pages {
		a.mem.free(pg.ptr)
	}
	a.large.pages = nil
	a.direct = l.Kind == backend.LayoutDirect
	switch l.Kind {
	case backend.LayoutSliced:
		a.pools = buildPools(l.Pools)
	case backend.LayoutPreset:
		a.pools = buildPools(presetPools())
	default:
		a.pools = nil
	}
	return nil
}
