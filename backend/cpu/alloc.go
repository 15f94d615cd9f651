package cpu

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
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
// largest class, are plain make calls too. The free lists hold at most
// maxCached bytes; a buffer that would exceed it is left to the collector.
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

// pool is the allocator of one element type.
type pool[T float32 | float64] struct {
	a     *allocator
	lists [numClass]freeList[T]
	fins  [numClass]func(*T)
}

// allocator owns the free lists of every element type and their counters.
type allocator struct {
	f32       pool[float32]
	f64       pool[float64]
	maxCached int64
	disabled  atomic.Bool
	cached    atomic.Int64 // bytes on the free lists
	live      atomic.Int64 // bytes handed out and not yet finalized
	nlive     atomic.Int64 // buffers handed out and not yet finalized
	reserved  atomic.Int64 // bytes of every pooled buffer in existence
	hits      atomic.Int64
	misses    atomic.Int64
	forcedGC  atomic.Int64 // collections started by reclaim
	liveAtGC  atomic.Int64 // live bytes after the last reclaim
}

// newAllocator returns an allocator whose free lists hold at most
// maxCached bytes.
func newAllocator(maxCached int64) *allocator {
	a := &allocator{maxCached: maxCached}
	initPool(&a.f32, a)
	initPool(&a.f64, a)
	return a
}

func initPool[T float32 | float64](p *pool[T], a *allocator) {
	p.a = a
	for c := range p.fins {
		p.fins[c] = func(first *T) { p.release(c, first) }
	}
}

// get returns a buffer of n elements with unspecified contents.
func (p *pool[T]) get(n int) []T {
	c, size, ok := pooledClass(n)
	if !ok || p.a.disabled.Load() {
		return make([]T, n)
	}
	var z T
	bytes := int64(size) * int64(unsafe.Sizeof(z))
	buf := p.pop(c)
	if buf == nil && bytes >= reclaimMin && p.a.reclaimDue() {
		buf = p.reclaim(c)
	}
	if buf != nil {
		p.a.cached.Add(-bytes)
		p.a.hits.Add(1)
	} else {
		buf = make([]T, size)
		p.a.reserved.Add(bytes)
		p.a.misses.Add(1)
	}
	p.a.live.Add(bytes)
	p.a.nlive.Add(1)
	runtime.SetFinalizer(&buf[0], p.fins[c])
	return buf[:n]
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
	return buf
}

// Large buffers are reclaimed eagerly. Their finalizers run only after a
// collection, and the collector paces itself on the whole heap (free lists
// included), so a loop of large ops would otherwise allocate fresh memory
// (zeroed, often page-faulted) for several ops per cycle. When a request of
// at least reclaimMin bytes misses and the bytes handed out have grown by
// reclaimGrowth (or by the live bytes found at the last reclaim, if more)
// since the last reclaim, reclaim runs a collection, which on a heap of
// float buffers costs little next to zeroing the buffer, and waits briefly
// for the finalizers to refill the lists. reclaimGrowth is small enough
// that a loop of 4 MiB products (1024² float32) faults in fresh memory for
// its first four outputs only, not sixteen (over 50 such calls that was a
// 5–6 % difference in the median time); loops whose live set is larger
// than that are paced by the live bytes instead.
const (
	reclaimMin    = 1 << 20
	reclaimGrowth = 16 << 20
)

// reclaimDue reports whether enough bytes were handed out since the last
// reclaim to make a collection worthwhile.
func (a *allocator) reclaimDue() bool {
	base := a.liveAtGC.Load()
	return a.live.Load()-base >= max(reclaimGrowth, base)
}

// reclaim collects garbage and gives the finalizers up to about 100
// scheduling rounds to return buffers of class c.
func (p *pool[T]) reclaim(c int) []T {
	p.a.forcedGC.Add(1)
	runtime.GC()
	var buf []T
	for range 100 {
		runtime.Gosched()
		if buf = p.pop(c); buf != nil {
			break
		}
	}
	p.a.liveAtGC.Store(p.a.live.Load())
	return buf
}

// release is the finalizer of a buffer of class c: it puts the buffer on
// its free list, or drops it when the lists are full or pooling is off.
func (p *pool[T]) release(c int, first *T) {
	size := classSize(c)
	var z T
	bytes := int64(size) * int64(unsafe.Sizeof(z))
	p.a.live.Add(-bytes)
	p.a.nlive.Add(-1)
	if p.a.disabled.Load() || p.a.cached.Load()+bytes > p.a.maxCached {
		p.a.reserved.Add(-bytes)
		return
	}
	p.a.cached.Add(bytes)
	l := &p.lists[c]
	l.mu.Lock()
	l.bufs = append(l.bufs, unsafe.Slice(first, size))
	l.mu.Unlock()
}

// drop empties the free lists, leaving their buffers to the collector.
func (p *pool[T]) drop() {
	var z T
	for c := range p.lists {
		l := &p.lists[c]
		l.mu.Lock()
		n := int64(len(l.bufs)) * int64(classSize(c)) * int64(unsafe.Sizeof(z))
		l.bufs = nil
		l.mu.Unlock()
		p.a.cached.Add(-n)
		p.a.reserved.Add(-n)
	}
}

// classSize is the capacity in elements of class c.
func classSize(c int) int {
	e, step := c/4, c%4+1
	return 1<<e + step*(1<<e)/4
}

// cleanup drops every cached buffer.
func (a *allocator) cleanup() {
	a.f32.drop()
	a.f64.drop()
}
