//go:build linux && (amd64 || arm64)

package vulkan

import (
	"math/bits"
)

// sliceAlign is the alignment and rounding granule of every slice (bytes):
// cuMemAlloc's own alignment, enough for 16-byte vector loads.
const sliceAlign = 256

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

// segment is a run of bytes of one page, free or holding one allocation.
// The segments of a page form a list ordered by offset that covers it
// exactly; a free segment also sits in its page's size bin.
type segment struct {
	off, size  uint64
	free       bool
	prev, next *segment
	pos        int // index in the page's bin while free
}

// numBins is the number of free-segment bins of a page: bin i holds free
// segments of [2^i, 2^(i+1)) granules of sliceAlign bytes.
const numBins = 64

// binScan bounds the best-fit search inside a request's own bin before
// larger bins are tried.
const binScan = 16

// page is one device allocation of a pool, carved into segments. Free
// segments are binned by size (powers of two), so that a request finds a
// fitting segment without walking the page: a page can hold tens of
// thousands of small slices, most of them waiting for the garbage
// collector to return them.
type page struct {
	ptr, size uint64
	first     *segment
	bins      [numBins][]*segment
	used      uint64 // bytes in non-free segments
	spare     []*segment
}

func newPage(ptr, size uint64) *page {
	p := &page{ptr: ptr, size: size}
	p.first = &segment{off: 0, size: size}
	p.release(p.first)
	return p
}

func binOf(size uint64) int { return bits.Len64(size/sliceAlign) - 1 }

// release marks s free and puts it in its bin.
func (p *page) release(s *segment) {
	s.free = true
	b := binOf(s.size)
	s.pos = len(p.bins[b])
	p.bins[b] = append(p.bins[b], s)
}

// unbin takes the free segment s out of its bin.
func (p *page) unbin(s *segment) {
	b := binOf(s.size)
	l := p.bins[b]
	last := l[len(l)-1]
	l[s.pos] = last
	last.pos = s.pos
	l[len(l)-1] = nil
	p.bins[b] = l[:len(l)-1]
	s.free = false
}

func (p *page) newSegment() *segment {
	if n := len(p.spare); n > 0 {
		s := p.spare[n-1]
		p.spare = p.spare[:n-1]
		return s
	}
	return new(segment)
}

// find returns a free segment of at least size bytes, or nil: the best fit
// among the last binScan entries of size's own bin, else the smallest of
// a few entries of the first non-empty larger bin, else the best fit of
// the whole own bin.
func (p *page) find(size uint64) *segment {
	b := binOf(size)
	var best *segment
	l := p.bins[b]
	for i := len(l) - 1; i >= 0 && i >= len(l)-binScan; i-- {
		if s := l[i]; s.size >= size && (best == nil || s.size < best.size) {
			best = s
			if s.size == size {
				return s
			}
		}
	}
	if best != nil {
		return best
	}
	for nb := b + 1; nb < numBins; nb++ {
		l := p.bins[nb]
		for i := len(l) - 1; i >= 0 && i >= len(l)-binScan; i-- {
			if best == nil || l[i].size < best.size {
				best = l[i]
			}
		}
		if best != nil {
			return best
		}
	}
	for i := len(l) - 1 - binScan; i >= 0; i-- {
		if s := l[i]; s.size >= size && (best == nil || s.size < best.size) {
			best = s
		}
	}
	return best
}

// take carves size bytes (a multiple of sliceAlign) out of a free segment
// that holds them and returns the allocated segment, or false.
func (p *page) take(size uint64) (*segment, bool) {
	if p.size-p.used < size {
		return nil, false
	}
	s := p.find(size)
	if s == nil {
		return nil, false
	}
	p.unbin(s)
	if s.size > size {
		rest := p.newSegment()
		*rest = segment{off: s.off + size, size: s.size - size, prev: s, next: s.next}
		if s.next != nil {
			s.next.prev = rest
		}
		s.next = rest
		s.size = size
		p.release(rest)
	}
	p.used += size
	return s, true
}

// give frees the allocated segment s and merges it with free neighbours.
func (p *page) give(s *segment) {
	if s == nil || s.free {
		panic("vulkan: allocator: freeing an unknown or free slice")
	}
	p.used -= s.size
	if n := s.next; n != nil && n.free {
		p.unbin(n)
		s.size += n.size
		s.next = n.next
		if n.next != nil {
			n.next.prev = s
		}
		p.recycle(n)
	}
	if pr := s.prev; pr != nil && pr.free {
		p.unbin(pr)
		pr.size += s.size
		pr.next = s.next
		if s.next != nil {
			s.next.prev = pr
		}
		p.recycle(s)
		s = pr
	}
	p.release(s)
}

// recycle keeps a merged-away segment for reuse (a few hundred at most).
func (p *page) recycle(s *segment) {
	if len(p.spare) < 256 {
		*s = segment{}
		p.spare = append(p.spare, s)
	}
}

// segments lists the page's segments in offset order (for tests).
func (p *page) segments() []segment {
	var out []segment
	for s := p.first; s != nil; s = s.next {
		out = append(out, segment{off: s.off, size: s.size, free: s.free})
	}
	return out
}

// slicedPool is one dynamic pool: pages of pageSize bytes (at most
// maxPages, 0 = no limit) carved into slices of at most maxSlice bytes.
type slicedPool struct {
	pageSize, maxPages, maxSlice uint64
	pages                        []*page
	peak, largest                uint64
}

// exclusivePool holds pages that each serve one allocation (the persistent
// pool, and allocations larger than every sliced pool accepts). A free page
// is reused for a request between half its size and its size.
type exclusivePool struct {
	granule uint64
	pages   []*page // every page, free or not
}

func (e *exclusivePool) find(size uint64) *page {
	var best *page
	for _, p := range e.pages {
		if p.used == 0 && p.size >= size && p.size/2 <= size && (best == nil || p.size < best.size) {
			best = p
		}
	}
	return best
}
