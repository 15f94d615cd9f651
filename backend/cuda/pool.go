package cuda

import (
	"sort"
)

// sliceAlign is the alignment and rounding granule of every slice (bytes):
// cuMemAlloc's own alignment, enough for 16-byte vector loads.
const sliceAlign = 256

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

// segment is a run of bytes of one page, free or holding one allocation.
type segment struct {
	off, size uint64
	free      bool
}

// page is one device allocation of a pool, carved into segments ordered by
// offset that cover it exactly.
type page struct {
	ptr, size uint64
	segs      []segment
	used      uint64 // bytes in non-free segments
}

func newPage(ptr, size uint64) *page {
	return &page{ptr: ptr, size: size, segs: []segment{{0, size, true}}}
}

// take carves size bytes (a multiple of sliceAlign) out of the smallest free
// segment that holds them and returns the offset, or false.
func (p *page) take(size uint64) (uint64, bool) {
	best := -1
	for i, s := range p.segs {
		if s.free && s.size >= size && (best < 0 || s.size < p.segs[best].size) {
			best = i
			if s.size == size {
				break
			}
		}
	}
	if best < 0 {
		return 0, false
	}
	s := p.segs[best]
	p.segs[best] = segment{s.off, size, false}
	if s.size > size {
		p.segs = append(p.segs, segment{})
		copy(p.segs[best+2:], p.segs[best+1:])
		p.segs[best+1] = segment{s.off + size, s.size - size, true}
	}
	p.used += size
	return s.off, true
}

// give frees the segment at off and merges it with free neighbours.
func (p *page) give(off uint64) {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].off >= off })
	if i == len(p.segs) || p.segs[i].off != off || p.segs[i].free {
		panic("cuda: allocator: freeing an unknown or free slice")
	}
	p.used -= p.segs[i].size
	p.segs[i].free = true
	if i+1 < len(p.segs) && p.segs[i+1].free {
		p.segs[i].size += p.segs[i+1].size
		p.segs = append(p.segs[:i+1], p.segs[i+2:]...)
	}
	if i > 0 && p.segs[i-1].free {
		p.segs[i-1].size += p.segs[i].size
		p.segs = append(p.segs[:i], p.segs[i+1:]...)
	}
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
