package cpu

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
)

// The allocator recycles the output buffers of the backend's kernels.
//
// A buffer is handed out with a finalizer on its first element, which is
// the start of its allocation. Every view of a tensor (reshape, slice,
// permute, ...) points into that allocation, so the finalizer runs only
// once no tensor and no view uses the buffer; it then puts the buffer on a
// free list of its size class instead of letting the collector free it.
// The next request of that class takes it from the list, so a training
// loop that makes the same shapes step after step stops allocating new
// memory after its first collection, and collections become rarer.
//
// Size classes are quarter powers of two (a request is rounded up by at
// most 19 %). Requests below minPooled elements are plain make calls: they
// are cheap for the Go allocator, and tiny objects may share a memory block,
// which rules out finalizers. Requests above maxPooled elements, the
// largest class, are plain make calls too.
//
// The cache is sized by what the workload reuses, not by a fixed budget:
// a class keeps on its free list only as many buffers as were handed out
// at once during the last two reclaim epochs (see reclaim), so a class the
// workload stopped using is emptied one epoch later; and collections are
// paced by the allocator itself (reclaimDue), so the bytes handed out
// between two collections, and with them the buffers that come back, stay
// near the live set instead of following the collector's pacing over a
// heap that includes the free lists (which grows them step after step).
// maxCached stays as an upper bound of the free lists.
//
// A sliced layout (MemoryInstallPools) groups the size classes into pools
// of pages: a buffer of a class goes to the first pool whose MaxSlice
// holds the class's bytes, and a pool holds ceil(bytes / PageSize) pages
// for the bytes of its buffers, live or cached (every buffer is its own Go
// allocation, so the pages count memory and never fragment). A pool capped
// at Pages pages that has no room first drops cached buffers of its other
// classes, then collects garbage and waits for the finalizers, and then
// fails with backend.ErrOutOfMemory instead of growing. Each layout has
// its own free lists; a buffer handed out under an earlier layout is left
// to the collector when it comes back.
//
// The recycling needs a finalizer (runtime.SetFinalizer), not a cleanup
// (runtime.AddCleanup): a cleanup runs once the buffer's memory is about to
// be freed and cannot hand the buffer back, while a finalizer receives it
// and may put it on a free list. A cleanup attached to the tensor instead
// of the buffer would fire while views of the tensor still read the
// buffer.

const (
	minPooled = 1 << 10 // elements; smaller requests are not pooled
	numClass  = 4 * 37  // classes up to 2^37 elements
)

// maxPooled is the element count of the largest class (an int64, so that
// the constant also compiles where int has 32 bits).
const maxPooled int64 = 1 << 37

// pooledClass returns the size class of a request of n elements and its
// capacity, or false when n is not pooled (below minPooled or above
// maxPooled).
func pooledClass(n int) (class, size int, ok bool) {
	if n < minPooled || int64(n) > maxPooled {
		return 0, 0, false
	}
	class, size = classOf(n)
	return class, size, true
}

// classOf returns the size class of minPooled <= n <= maxPooled elements
// and its capacity in elements.
func classOf(n int) (int, int) {
	e := bits.Len(uint(n-1)) - 1 // 2^e < n <= 2^(e+1)
	if e < 2 {
		e = 2
	}
	base := 1 << e
	q := base / 4
	step := (n - base + q - 1) / q // 1..4 quarters above 2^e
	if step < 1 {
		step = 1
	}
	return e*4 + step - 1, base + step*q
}

// freeList is the stack of free buffers of one class and element type.
type freeList[T any] struct {
	mu   sync.Mutex
	bufs [][]T
}

// slicedPool is one pool of a sliced layout: pages of pageSize bytes, at
// most maxPages of them (0: no limit), for classes of at most maxSlice
// bytes. held counts the bytes of the pool's buffers in existence (live
// or cached).
type slicedPool struct {
	pageSize, maxPages, maxSlice uint64
	mu                           sync.Mutex
	held, peak, largest          uint64 // bytes, pages, bytes
}

// pagesFor is the page count that holds b bytes.
func (s *slicedPool) pagesFor(b uint64) uint64 { return (b + s.pageSize - 1) / s.pageSize }

// reserve accounts b more bytes to the pool, or returns false when a
// capped pool has no room for them.
func (s *slicedPool) reserve(b uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxPages != 0 && s.pagesFor(s.held+b) > s.maxPages {
		return false
	}
	s.held += b
	s.peak = max(s.peak, s.pagesFor(s.held))
	return true
}

// unreserve takes b bytes off the pool.
func (s *slicedPool) unreserve(b uint64) {
	s.mu.Lock()
	s.held -= b
	s.mu.Unlock()
}

// served records an allocation of b requested bytes.
func (s *slicedPool) served(b uint64) {
	s.mu.Lock()
	s.largest = max(s.largest, b)
	s.mu.Unlock()
}

// report describes the pool.
func (s *slicedPool) report() backend.SlicedPoolReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return backend.SlicedPoolReport{PageSize: s.pageSize, Pages: s.pagesFor(s.held), PagesPeak: s.peak, LargestAlloc: s.largest}
}

// poolLayout is the state of one installed layout: its pools (none for the
// preset size-class layout) and, per element type, its free lists.
type poolLayout struct {
	a      *allocator
	pools  []*slicedPool
	f32    pool[float32]
	f64    pool[float64]
	cached atomic.Int64 // bytes on the free lists
}

// pool is the allocator of one element type under one layout.
type pool[T float32 | float64] struct {
	l      *poolLayout
	lists  [numClass]freeList[T]
	fins   [numClass]func(*T)
	sp     [numClass]*slicedPool // each class's pool (nil: outside every pool)
	nlive  [numClass]atomic.Int64
	peak   [numClass]atomic.Int64 // most buffers of the class live at once, this epoch
	prev   [numClass]atomic.Int64 // the same, last epoch
	cached [numClass]atomic.Int64 // buffers on the class's free list
}

// allocator owns the installed layout and the counters of every buffer.
type allocator struct {
	cur         atomic.Pointer[poolLayout]
	maxCached   int64
	disabled    atomic.Bool
	live        atomic.Int64 // bytes handed out and not yet finalized
	nlive       atomic.Int64 // buffers handed out and not yet finalized
	hits        atomic.Int64
	misses      atomic.Int64
	largest     atomic.Int64 // the largest buffer handed out this epoch (bytes)
	largestPrev atomic.Int64 // the same, last epoch
	forcedGC    atomic.Int64 // collections started by reclaim
	liveAtGC    atomic.Int64 // live bytes after the last reclaim
	reclaiming  atomic.Bool
}

// newAllocator returns an allocator with the preset layout whose free
// lists hold at most maxCached bytes.
func newAllocator(maxCached int64) *allocator {
	a := &allocator{maxCached: maxCached}
	a.cur.Store(newLayout(a, nil))
	return a
}

// newLayout returns an empty layout of the given pools.
func newLayout(a *allocator, pools []*slicedPool) *poolLayout {
	l := &poolLayout{a: a, pools: pools}
	initPool(&l.f32, l)
	initPool(&l.f64, l)
	return l
}

func initPool[T float32 | float64](p *pool[T], l *poolLayout) {
	p.l = l
	var z T
	for c := range p.fins {
		p.fins[c] = func(first *T) { p.release(c, first) }
		bytes := uint64(classSize(c)) * uint64(unsafe.Sizeof(z))
		for _, s := range l.pools {
			if bytes <= s.maxSlice {
				p.sp[c] = s
				break
			}
		}
	}
}

// cachedBytes is the bytes on the current layout's free lists.
func (a *allocator) cachedBytes() int64 { return a.cur.Load().cached.Load() }

// getF32 returns a float32 buffer of n elements with unspecified contents.
func (a *allocator) getF32(n int) []float32 { return a.cur.Load().f32.get(n) }

// getF64 returns a float64 buffer of n elements with unspecified contents.
func (a *allocator) getF64(n int) []float64 { return a.cur.Load().f64.get(n) }

// get returns a buffer of n elements with unspecified contents.
func (p *pool[T]) get(n int) []T {
	a := p.l.a
	c, size, ok := pooledClass(n)
	if !ok || a.disabled.Load() {
		return make([]T, n)
	}
	var z T
	bytes := int64(size) * int64(unsafe.Sizeof(z))
	buf := p.pop(c)
	if buf == nil && a.reclaimDue() {
		buf = p.reclaim(c)
	}
	if buf == nil && p.sp[c] != nil && !p.sp[c].reserve(uint64(bytes)) {
		buf = p.makeRoom(c, uint64(bytes))
	}
	if buf != nil {
		a.hits.Add(1)
	} else {
		buf = make([]T, size)
		a.misses.Add(1)
	}
	if s := p.sp[c]; s != nil {
		s.served(uint64(n) * uint64(unsafe.Sizeof(z)))
	}
	a.live.Add(bytes)
	a.nlive.Add(1)
	for l := a.largest.Load(); bytes > l && !a.largest.CompareAndSwap(l, bytes); l = a.largest.Load() {
	}
	k := p.nlive[c].Add(1)
	for pk := p.peak[c].Load(); k > pk && !p.peak[c].CompareAndSwap(pk, k); pk = p.peak[c].Load() {
	}
	runtime.SetFinalizer(&buf[0], p.fins[c])
	return buf[:n]
}

// makeRoom finds room for a buffer of class c (bytes) in its full capped
// pool: it drops cached buffers of the pool's other classes, then collects
// garbage and waits for the finalizers, and returns a cached buffer of
// class c when one came back, or nil with the bytes reserved. It panics
// with backend.ErrOutOfMemory when the pool stays full.
func (p *pool[T]) makeRoom(c int, bytes uint64) []T {
	s := p.sp[c]
	for range 3 {
		if p.l.evict(s, bytes) {
			return nil
		}
		p.l.a.forcedGC.Add(1)
		workers.Park()
		runtime.GC()
		for range 100 {
			runtime.Gosched()
			if buf := p.pop(c); buf != nil {
				return buf
			}
			if s.reserve(bytes) {
				return nil
			}
		}
	}
	panic(fmt.Errorf("cpu: allocating %d bytes: pool of %d-byte pages full (%d pages): %w",
		bytes, s.pageSize, s.maxPages, backend.ErrOutOfMemory))
}

// evict drops cached buffers of pool s until it has room for bytes more,
// and reserves them; it reports whether it did.
func (l *poolLayout) evict(s *slicedPool, bytes uint64) bool {
	if s.reserve(bytes) {
		return true
	}
	for c := range numClass {
		if l.f32.sp[c] == s && l.f32.dropClass(c, 0) > 0 && s.reserve(bytes) {
			return true
		}
		if l.f64.sp[c] == s && l.f64.dropClass(c, 0) > 0 && s.reserve(bytes) {
			return true
		}
	}
	return false
}

// pop takes a buffer of class c from its free list, or returns nil.
func (p *pool[T]) pop(c int) []T {
	l := &p.lists[c]
	var buf []T
	l.mu.Lock()
	if k := len(l.bufs); k > 0 {
		buf = l.bufs[k-1]
		l.bufs[k-1] = nil
		l.bufs = l.bufs[:k-1]
	}
	l.mu.Unlock()
	if buf != nil {
		var z T
		p.l.cached.Add(-int64(len(buf)) * int64(unsafe.Sizeof(z)))
		p.cached[c].Add(-1)
	}
	return buf
}

// dropClass leaves all but keep of class c's cached buffers to the
// collector and returns how many it dropped.
func (p *pool[T]) dropClass(c int, keep int64) int64 {
	l := &p.lists[c]
	var z T
	l.mu.Lock()
	k := int64(len(l.bufs))
	if k <= keep {
		l.mu.Unlock()
		return 0
	}
	n := k - keep
	clear(l.bufs[keep:])
	l.bufs = l.bufs[:keep]
	l.mu.Unlock()
	bytes := n * int64(classSize(c)) * int64(unsafe.Sizeof(z))
	p.l.cached.Add(-bytes)
	p.cached[c].Add(-n)
	if s := p.sp[c]; s != nil {
		s.unreserve(uint64(bytes))
	}
	return n
}

// Buffers are reclaimed eagerly. Their finalizers run only after a
// collection, and the collector paces itself on the whole heap (free lists
// included), so a loop of large ops would otherwise allocate fresh memory
// (zeroed, often page-faulted) for several ops per cycle, and the buffers
// that come back after each collection would grow the free lists cycle
// after cycle. When a request misses and the bytes handed out have grown
// by reclaimGrowth (or by the live bytes found at the last reclaim, if
// more) since the last reclaim, reclaim runs a collection, which on a heap
// of float buffers costs little next to zeroing the buffers, and waits
// briefly for the finalizers to refill the lists. reclaimGrowth is small
// enough that a loop of 4 MiB products (1024² float32) faults in fresh
// memory for its first four outputs only, not sixteen (over 50 such calls
// that was a 5–6 % difference in the median time); loops whose live set
// is larger than that are paced by the live bytes instead.
const reclaimGrowth = 16 << 20

// reclaimDue reports whether enough bytes were handed out since the last
// reclaim to make a collection worthwhile: the step is reclaimGrowth, the
// live bytes found at the last reclaim if more, and reclaimBuffers of the
// largest buffers handed out in this epoch or the last if more still.
func (a *allocator) reclaimDue() bool {
	live, base := a.live.Load(), a.liveAtGC.Load()
	if live < base {
		// Buffers live at the last reclaim have died since (a large
		// workload ended): pace from what is live now.
		a.liveAtGC.CompareAndSwap(base, live)
		base = live
	}
	big := reclaimBuffers * max(a.largest.Load(), a.largestPrev.Load())
	return live-base >= max(reclaimGrowth, base, big)
}

// reclaimBuffers is the least number of buffers of the largest size in
// use that the allocator hands out between two collections. With a step
// of one or two such buffers (16 MiB outputs, as a [4096, 1024] float32
// softmax makes), a loop of ops collected garbage for every other op,
// and a collection costs milliseconds of waiting where the machine is
// loaded (its phases wait for every thread to be scheduled): a softmax
// through Exec took 7–8 ms, 2.9 ms with a step of four buffers (80 MiB
// reserved instead of 32), measured interleaved on a loaded 2-core
// machine. Collecting in the background instead did not help there: the
// collection then ran beside the kernels and slowed them as much.
const reclaimBuffers = 4

// reclaim collects garbage and gives the finalizers up to about 100
// scheduling rounds to return a buffer of class c and settle (one goroutine at a
// time; the others return nil). It then starts a new epoch: per class,
// the free list keeps only as many buffers as the most that were live at
// once in this epoch or the last, less those live now.
func (p *pool[T]) reclaim(c int) []T {
	a := p.l.a
	if !a.reclaiming.CompareAndSwap(false, true) {
		return nil
	}
	defer a.reclaiming.Store(false)
	a.forcedGC.Add(1)
	workers.Park()
	runtime.GC()
	var buf []T
	last, stable := a.live.Load(), 0
	for range 100 {
		runtime.Gosched()
		if buf == nil {
			buf = p.pop(c)
		}
		if now := a.live.Load(); now != last {
			last, stable = now, 0
		} else if stable++; buf != nil && stable >= 3 {
			break // the finalizers have settled
		}
	}
	a.liveAtGC.Store(a.live.Load())
	a.largestPrev.Store(a.largest.Swap(0))
	p.l.f32.newEpoch()
	p.l.f64.newEpoch()
	return buf
}

// newEpoch trims every free list to the recent peak of its class and
// starts counting the peak afresh.
func (p *pool[T]) newEpoch() {
	for c := range numClass {
		live := p.nlive[c].Load()
		pk := max(p.peak[c].Load(), p.prev[c].Load())
		p.dropClass(c, max(0, pk-live))
		p.prev[c].Store(p.peak[c].Load())
		p.peak[c].Store(live)
	}
}

// release is the finalizer of a buffer of class c: it puts the buffer on
// its free list, or drops it when pooling is off, its layout was
// replaced, the class already caches as many buffers as its recent peak
// or the lists are full.
func (p *pool[T]) release(c int, first *T) {
	a := p.l.a
	size := classSize(c)
	var z T
	bytes := int64(size) * int64(unsafe.Sizeof(z))
	a.live.Add(-bytes)
	a.nlive.Add(-1)
	live := p.nlive[c].Add(-1)
	pk := max(p.peak[c].Load(), p.prev[c].Load())
	if a.disabled.Load() || a.cur.Load() != p.l || live+p.cached[c].Load()+1 > pk ||
		p.l.cached.Load()+bytes > a.maxCached {
		if s := p.sp[c]; s != nil {
			s.unreserve(uint64(bytes))
		}
		return
	}
	p.l.cached.Add(bytes)
	p.cached[c].Add(1)
	l := &p.lists[c]
	l.mu.Lock()
	l.bufs = append(l.bufs, unsafe.Slice(first, size))
	l.mu.Unlock()
}

// drop empties the free lists, leaving their buffers to the collector.
func (p *pool[T]) drop() {
	for c := range numClass {
		p.dropClass(c, 0)
	}
}

// classSize is the capacity in elements of class c.
func classSize(c int) int {
	e, step := c/4, c%4+1
	return 1<<e + step*(1<<e)/4
}

// cleanup drops every cached buffer of the current layout and forgets the
// largest buffers of the current and last epochs, so that the collection
// step (reclaimDue) follows the work that comes next rather than large
// buffers handed out before the cleanup.
func (a *allocator) cleanup() {
	l := a.cur.Load()
	l.f32.drop()
	l.f64.drop()
	a.largest.Store(0)
	a.largestPrev.Store(0)
}

// install replaces the layout: pools (nil for the preset size classes),
// or the recycling turned off when direct. The free lists of the layout
// replaced are dropped; its live buffers are left to the collector when
// they come back.
func (a *allocator) install(pools []backend.SlicedPool, direct bool) {
	var sps []*slicedPool
	for _, p := range pools {
		s := &slicedPool{pageSize: p.PageSize, maxSlice: p.PageSize}
		if p.Pages != nil {
			s.maxPages = *p.Pages
		}
		if p.MaxSlice != nil {
			s.maxSlice = *p.MaxSlice
		}
		sps = append(sps, s)
	}
	old := a.cur.Swap(newLayout(a, sps))
	a.disabled.Store(direct)
	old.f32.drop()
	old.f64.drop()
}

// usage sums the allocator's state.
func (a *allocator) usage() backend.MemoryPoolUsage {
	live := max(0, a.live.Load())
	return backend.MemoryPoolUsage{
		NumberAllocs:  uint64(max(0, a.nlive.Load())),
		BytesInUse:    uint64(live),
		BytesReserved: uint64(live + max(0, a.cachedBytes())),
	}
}

// report lists the current layout's pools in install order.
func (a *allocator) report() []backend.SlicedPoolReport {
	l := a.cur.Load()
	out := make([]backend.SlicedPoolReport, len(l.pools))
	for i, s := range l.pools {
		out[i] = s.report()
	}
	return out
}
