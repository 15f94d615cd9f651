package cuda

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
)

// fakeMemory hands out disjoint address ranges and tracks live bytes,
// with an optional capacity.
type fakeMemory struct {
	mu       sync.Mutex
	next     uint64
	live     map[uint64]uint64
	capacity uint64
	allocs   int
	syncs    int
}

func newFake(capacity uint64) *fakeMemory {
	return &fakeMemory{next: 1 << 40, live: map[uint64]uint64{}, capacity: capacity}
}

func (f *fakeMemory) used() uint64 {
	var n uint64
	for _, s := range f.live {
		n += s
	}
	return n
}

func (f *fakeMemory) alloc(n uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.capacity != 0 && f.used()+n > f.capacity {
		return 0, backend.ErrOutOfMemory
	}
	p := f.next
	f.next += roundUp(n, 4096) + 4096
	f.live[p] = n
	f.allocs++
	return p, nil
}

func (f *fakeMemory) free(p uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.live[p]; !ok {
		panic("fake: double free")
	}
	delete(f.live, p)
}

func (f *fakeMemory) synchronize() { f.mu.Lock(); f.syncs++; f.mu.Unlock() }

func (f *fakeMemory) info() (uint64, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.capacity - f.used(), f.capacity
}

func u64(v uint64) *uint64 { return &v }

// checkDisjoint fails if two live blocks overlap or a block leaves its page.
func checkDisjoint(t *testing.T, blocks []*block) {
	t.Helper()
	type iv struct{ lo, hi uint64 }
	seen := make([]iv, 0, len(blocks))
	for _, b := range blocks {
		if b.ptr%sliceAlign != 0 {
			t.Fatalf("block at %#x not %d-aligned", b.ptr, sliceAlign)
		}
		if b.page != nil && (b.ptr < b.page.ptr || b.ptr+b.rounded > b.page.ptr+b.page.size) {
			t.Fatalf("block [%#x,+%d) outside its page [%#x,+%d)", b.ptr, b.rounded, b.page.ptr, b.page.size)
		}
		for _, s := range seen {
			if b.ptr < s.hi && s.lo < b.ptr+b.size {
				t.Fatalf("blocks overlap: [%#x,%#x) and [%#x,%#x)", b.ptr, b.ptr+b.size, s.lo, s.hi)
			}
		}
		seen = append(seen, iv{b.ptr, b.ptr + b.size})
	}
}

func TestAllocatorSlicesAndUsage(t *testing.T) {
	mem := newFake(0)
	a := newAllocator(mem, nil)
	if err := a.install(backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u64(64 << 10)}})); err != nil {
		t.Fatal(err)
	}
	sizes := []uint64{1, 255, 256, 257, 1000, 64 << 10}
	var blocks []*block
	var want, pad uint64
	for _, s := range sizes {
		b, err := a.alloc(s, false)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
		want += s
		pad += roundUp(s, 256) - s
	}
	checkDisjoint(t, blocks)
	u := a.usage()
	// All fit in one 1 MiB page: 256+256+256+512+1024+65536 bytes.
	if u.NumberAllocs != 6 || u.BytesInUse != want || u.BytesPadding != pad || u.BytesReserved != 1<<20 {
		t.Fatalf("usage %+v, want 6 allocs, %d in use, %d padding, %d reserved", u, want, pad, 1<<20)
	}
	for _, b := range blocks {
		a.free(b)
	}
	if u := a.usage(); u.NumberAllocs != 0 || u.BytesInUse != 0 || u.BytesPadding != 0 {
		t.Fatalf("after free: %+v", u)
	}
	// The page is one free segment again: a page-sized... largest slice fits.
	pg := a.pools[0].pages[0]
	if segs := pg.segments(); len(segs) != 1 || !segs[0].free || segs[0].size != pg.size || pg.used != 0 {
		t.Fatalf("page not coalesced: %+v", segs)
	}
	r := a.report()
	if len(r) != 1 || r[0].Pages != 1 || r[0].PagesPeak != 1 || r[0].LargestAlloc != 64<<10 || r[0].PageSize != 1<<20 {
		t.Fatalf("report %+v", r)
	}
}

func TestAllocatorRandomReuse(t *testing.T) {
	mem := newFake(0)
	a := newAllocator(mem, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var live []*block
	for i := 0; i < 4000; i++ {
		if len(live) > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(len(live))
			a.free(live[j])
			live = append(live[:j], live[j+1:]...)
			continue
		}
		// Mostly small, some medium, a few above every pool (exclusive pages).
		var s uint64
		switch r := rng.IntN(100); {
		case r < 80:
			s = uint64(1 + rng.IntN(100000))
		case r < 98:
			s = uint64(1<<20 + rng.IntN(8<<20))
		default:
			s = uint64(64<<20 + rng.IntN(32<<20))
		}
		b, err := a.alloc(s, false)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, b)
		if i%500 == 0 {
			checkDisjoint(t, live)
		}
	}
	checkDisjoint(t, live)
	var want uint64
	for _, b := range live {
		want += b.size
	}
	if u := a.usage(); u.BytesInUse != want || u.NumberAllocs != uint64(len(live)) {
		t.Fatalf("usage %+v, want %d bytes in %d allocs", u, want, len(live))
	}
	for _, b := range live {
		a.free(b)
	}
	reserved := a.usage().BytesReserved
	if mem.used() != reserved {
		t.Fatalf("reserved %d, device holds %d", reserved, mem.used())
	}
	a.cleanup()
	if u := a.usage(); u.BytesReserved != 0 || mem.used() != 0 || len(mem.live) != 0 {
		t.Fatalf("after cleanup: %+v, device holds %d", u, mem.used())
	}
}

func TestAllocatorFlatAcrossCycles(t *testing.T) {
	mem := newFake(0)
	a := newAllocator(mem, nil)
	var reserved uint64
	for cycle := 0; cycle < 2000; cycle++ {
		var bs []*block
		for _, s := range []uint64{4 << 10, 300 << 10, 3 << 20, 20 << 20, 100 << 20} {
			b, err := a.alloc(s, false)
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		for _, b := range bs {
			a.free(b)
		}
		r := a.usage().BytesReserved
		if cycle == 0 {
			reserved = r
		} else if r != reserved {
			t.Fatalf("cycle %d: reserved %d, was %d after the first cycle", cycle, r, reserved)
		}
	}
	// One page of each preset pool (4 KiB and 300 KiB share the first) and
	// one exclusive page for 100 MiB.
	if mem.allocs != 4 {
		t.Fatalf("%d device allocations over 2000 cycles, want 4", mem.allocs)
	}
}

func TestAllocatorPersistent(t *testing.T) {
	mem := newFake(0)
	a := newAllocator(mem, nil)
	p, err := a.alloc(1000, true)
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.alloc(1000, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.kind != kindPersistent || d.kind != kindSliced {
		t.Fatalf("kinds %v %v", p.kind, d.kind)
	}
	// Persistent memory does not block a layout change; dynamic memory does.
	err = a.install(backend.Preset())
	var inUse *backend.PoolsInUseError
	if !errors.As(err, &inUse) || inUse.BytesInUse != 1000 {
		t.Fatalf("install with a live dynamic block: %v", err)
	}
	a.free(d)
	if err := a.install(backend.Preset()); err != nil {
		t.Fatalf("install with only persistent memory live: %v", err)
	}
	a.free(p)
	q, _ := a.alloc(900, true)
	if q.ptr != p.ptr {
		t.Fatalf("freed persistent page not reused: %#x vs %#x", q.ptr, p.ptr)
	}
}

func TestAllocatorInstallErrorsKeepLayout(t *testing.T) {
	a := newAllocator(newFake(0), nil)
	before := a.report()
	bad := []backend.MemoryPoolLayout{
		backend.Sliced(nil),
		backend.Sliced([]backend.SlicedPool{{PageSize: 0}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: 1000}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u64(2 << 20)}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, Pages: u64(0)}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u64(0)}}),
		{Kind: 99},
	}
	for _, l := range bad {
		var inv *backend.InvalidLayoutError
		if err := a.install(l); !errors.As(err, &inv) {
			t.Errorf("layout %+v: got %v, want *InvalidLayoutError", l, err)
		}
	}
	after := a.report()
	if len(after) != len(before) || after[0].PageSize != before[0].PageSize {
		t.Fatalf("layout changed by failed installs: %+v -> %+v", before, after)
	}
	b, _ := a.alloc(10, false)
	var inUse *backend.PoolsInUseError
	if err := a.install(backend.Direct()); !errors.As(err, &inUse) || inUse.BytesInUse != 10 {
		t.Fatalf("got %v, want PoolsInUse{10}", err)
	}
	if r := a.report(); len(r) != len(before) {
		t.Fatalf("layout changed by a refused install")
	}
	a.free(b)
}

func TestAllocatorCappedCycle(t *testing.T) {
	mem := newFake(0)
	a := newAllocator(mem, nil)
	grow := []backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u64(256 << 10)}}
	if err := a.install(backend.Sliced(grow)); err != nil {
		t.Fatal(err)
	}
	workload := func() error {
		var bs []*block
		for i := 0; i < 10; i++ {
			b, err := a.alloc(200<<10, false)
			if err != nil {
				return err
			}
			bs = append(bs, b)
		}
		for _, b := range bs {
			a.free(b)
		}
		return nil
	}
	if err := workload(); err != nil {
		t.Fatal(err)
	}
	peak := a.report()[0].PagesPeak
	if peak != 2 { // 5 slices of 200 KiB per 1 MiB page
		t.Fatalf("peak %d pages, want 2", peak)
	}
	capped := []backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u64(256 << 10), Pages: &peak}}
	if err := a.install(backend.Sliced(capped)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := workload(); err != nil {
			t.Fatalf("capped rerun %d: %v", i, err)
		}
	}
	if r := a.report()[0]; r.Pages != peak || r.PagesPeak != peak {
		t.Fatalf("capped pool grew: %+v", r)
	}
	// One more slice than the cap holds fails with ErrOutOfMemory.
	var bs []*block
	var err error
	for i := 0; i < 16 && err == nil; i++ {
		var b *block
		b, err = a.alloc(200<<10, false)
		bs = append(bs, b)
	}
	if !errors.Is(err, backend.ErrOutOfMemory) || !errors.Is(err, errPoolFull) {
		t.Fatalf("over the cap: %v", err)
	}
}

func TestAllocatorOutOfMemory(t *testing.T) {
	mem := newFake(128 << 20)
	gcs := 0
	var a *allocator
	var held *block
	// The GC hook stands in for the Go collector returning a dead buffer.
	a = newAllocator(mem, func() {
		gcs++
		if held != nil {
			a.free(held)
			held = nil
		}
	})
	var err error
	if held, err = a.alloc(80<<20, false); err != nil {
		t.Fatal(err)
	}
	// Needs a second 80 MiB exclusive page: fits only after the "GC" frees
	// the first, whose page is then reused.
	b, err := a.alloc(80<<20, false)
	if err != nil {
		t.Fatalf("alloc after GC: %v", err)
	}
	if gcs == 0 {
		t.Fatal("no collection before failing")
	}
	_, err = a.alloc(80<<20, false)
	if !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("got %v, want ErrOutOfMemory", err)
	}
	a.free(b)
}

func TestAllocatorConcurrent(t *testing.T) {
	a := newAllocator(newFake(0), nil)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := 0; i < 500; i++ {
				b, err := a.alloc(uint64(1+rng.IntN(1<<20)), rng.IntN(10) == 0)
				if err != nil {
					t.Error(err)
					return
				}
				a.free(b)
			}
		}(uint64(g))
	}
	wg.Wait()
	if u := a.usage(); u.NumberAllocs != 0 || u.BytesInUse != 0 {
		t.Fatalf("usage after concurrent alloc/free: %+v", u)
	}
}

func TestReshapeStrides(t *testing.T) {
	cases := []struct {
		shape, strides, newShape, want []int
		ok                             bool
	}{
		{[]int{2, 3}, []int{3, 1}, []int{6}, []int{1}, true},
		{[]int{2, 3}, []int{1, 2}, []int{6}, nil, false}, // transposed
		{[]int{2, 3, 4}, []int{12, 4, 1}, []int{6, 4}, []int{4, 1}, true},
		{[]int{2, 3, 4}, []int{1, 8, 2}, []int{2, 12}, []int{1, 2}, true}, // inner run contiguous
		{[]int{2, 3, 4}, []int{1, 8, 2}, []int{6, 4}, nil, false},
		{[]int{4, 2}, []int{4, 1}, []int{2, 2, 2}, []int{8, 4, 1}, true}, // sliced rows
		{[]int{3, 1}, []int{1, 1}, []int{1, 3}, []int{3, 1}, true},
		{[]int{}, []int{}, []int{1, 1}, []int{1, 1}, true},
		{[]int{2, 3}, []int{0, 1}, []int{6}, nil, false}, // expanded
		{[]int{2, 3}, []int{0, 1}, []int{2, 3, 1}, []int{0, 1, 1}, true},
	}
	for _, c := range cases {
		got, ok := reshapeStrides(c.shape, c.strides, c.newShape)
		if ok != c.ok || (ok && !slices.Equal(got, c.want)) {
			t.Errorf("reshape %v/%v -> %v: got %v %v, want %v %v", c.shape, c.strides, c.newShape, got, ok, c.want, c.ok)
		}
	}
}

func TestMatLayoutAndBatchStride(t *testing.T) {
	if cm, ld, ok := matLayout(3, 4, 4, 1); !ok || cm || ld != 4 {
		t.Errorf("row-major: %v %d %v", cm, ld, ok)
	}
	if cm, ld, ok := matLayout(3, 4, 1, 5); !ok || !cm || ld != 5 {
		t.Errorf("column-major: %v %d %v", cm, ld, ok)
	}
	if _, _, ok := matLayout(3, 4, 0, 1); ok {
		t.Error("stride-0 rows accepted")
	}
	if _, _, ok := matLayout(3, 4, -4, 1); ok {
		t.Error("negative stride accepted")
	}
	if s, ok := batchStride([]int{2, 3}, []int{36, 12}); !ok || s != 12 {
		t.Errorf("contiguous batch: %d %v", s, ok)
	}
	if s, ok := batchStride([]int{2, 3}, []int{0, 0}); !ok || s != 0 {
		t.Errorf("broadcast batch: %d %v", s, ok)
	}
	if _, ok := batchStride([]int{2, 3}, []int{12, 0}); ok {
		t.Error("mixed broadcast batch accepted")
	}
	if s, ok := batchStride([]int{1, 5, 1}, []int{99, 7, 3}); !ok || s != 7 {
		t.Errorf("size-1 axes: %d %v", s, ok)
	}
}

// checkPage verifies a page's invariants: segments cover it in order
// without gaps, no two free segments are adjacent, every free segment sits
// at its recorded position of the right bin and the bins hold nothing
// else, and used counts the allocated bytes.
func checkPage(t *testing.T, p *page) {
	t.Helper()
	var off, used uint64
	nfree := 0
	var prev *segment
	for s := p.first; s != nil; s = s.next {
		if s.off != off || s.size == 0 || s.prev != prev {
			t.Fatalf("segment [%d,+%d) breaks the cover at %d", s.off, s.size, off)
		}
		if s.free {
			nfree++
			if prev != nil && prev.free {
				t.Fatalf("adjacent free segments at %d", s.off)
			}
			if l := p.bins[binOf(s.size)]; s.pos >= len(l) || l[s.pos] != s {
				t.Fatalf("free segment [%d,+%d) not in bin %d", s.off, s.size, binOf(s.size))
			}
		} else {
			used += s.size
		}
		off += s.size
		prev = s
	}
	binned := 0
	for _, l := range p.bins {
		binned += len(l)
	}
	if off != p.size || used != p.used || binned != nfree {
		t.Fatalf("cover %d of %d, used %d (page says %d), %d binned for %d free", off, p.size, used, p.used, binned, nfree)
	}
}

// Random takes and gives on one page keep the invariants, never hand out
// overlapping bytes (checked against a byte map of the page), and take
// fails only when no free segment is large enough.
func TestPageBinsRandom(t *testing.T) {
	const size = 1 << 20
	p := newPage(0, size)
	owner := make([]int, size/sliceAlign) // granule -> allocation id + 1
	var live []*segment
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 1; i <= 20000; i++ {
		if len(live) > 0 && rng.IntN(5) < 2 {
			j := rng.IntN(len(live))
			a := live[j]
			for g := a.off / sliceAlign; g < (a.off+a.size)/sliceAlign; g++ {
				owner[g] = 0
			}
			p.give(a)
			live = append(live[:j], live[j+1:]...)
		} else {
			n := roundUp(uint64(1+rng.IntN(6000)), sliceAlign)
			if rng.IntN(50) == 0 {
				n = roundUp(uint64(rng.IntN(200000)+1), sliceAlign)
			}
			s, ok := p.take(n)
			if !ok {
				largest := uint64(0)
				for _, seg := range p.segments() {
					if seg.free {
						largest = max(largest, seg.size)
					}
				}
				if largest >= n {
					t.Fatalf("take(%d) failed with a free segment of %d", n, largest)
				}
				continue
			}
			if s.size != n || s.off%sliceAlign != 0 || s.off+n > size {
				t.Fatalf("take(%d) gave [%d,+%d)", n, s.off, s.size)
			}
			for g := s.off / sliceAlign; g < (s.off+n)/sliceAlign; g++ {
				if owner[g] != 0 {
					t.Fatalf("granule %d handed out twice", g)
				}
				owner[g] = i
			}
			live = append(live, s)
		}
		if i%997 == 0 {
			checkPage(t, p)
		}
	}
	for _, a := range live {
		p.give(a)
	}
	checkPage(t, p)
	if segs := p.segments(); len(segs) != 1 || !segs[0].free {
		t.Fatalf("page not coalesced after freeing everything: %d segments", len(segs))
	}
}
