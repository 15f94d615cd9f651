package cpu

import (
	"errors"
	"runtime"
	"testing"

	"github.com/emberml/ember/backend"
)

// waitCached collects garbage until the finalizers have put at least want
// bytes on the free lists (or gives up after a few rounds).
func waitCached(be *Backend, want int64) {
	for range 50 {
		runtime.GC()
		runtime.Gosched()
		if be.alloc.cachedBytes() >= want {
			return
		}
	}
}

// The buffers of these tests: 100000 float32 elements fall in the class
// of 65536 + 3·16384 = 114688 elements, 458752 bytes.
const (
	cycleElems = 100000
	cycleBytes = 114688 * 4
	mib        = 1 << 20
)

// TestSlicedPoolsReport installs a growable sliced layout and checks the
// report and the usage against the bytes of three live buffers: 3·458752
// = 1376256 bytes, two 1 MiB pages.
func TestSlicedPoolsReport(t *testing.T) {
	be := newTestBackend()
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{{PageSize: mib}})); err != nil {
		t.Fatal(err)
	}
	if _, size := classOf(cycleElems); size*4 != cycleBytes {
		t.Fatalf("class of %d elements holds %d, want %d", cycleElems, size, cycleBytes/4)
	}
	bufs := [][]float32{be.f32(cycleElems), be.f32(cycleElems), be.f32(cycleElems)}
	rep, ok := be.MemoryPoolReport()
	want := backend.SlicedPoolReport{PageSize: mib, Pages: 2, PagesPeak: 2, LargestAlloc: cycleElems * 4}
	if !ok || len(rep) != 1 || rep[0] != want {
		t.Fatalf("report %+v, %v; want [%+v]", rep, ok, want)
	}
	u, ok := be.MemoryPoolUsage()
	wantU := backend.MemoryPoolUsage{NumberAllocs: 3, BytesInUse: 3 * cycleBytes, BytesReserved: 3 * cycleBytes}
	if !ok || u != wantU {
		t.Fatalf("usage %+v, want %+v", u, wantU)
	}
	runtime.KeepAlive(bufs)
	bufs = nil
	waitCached(be, 3*cycleBytes)
	u, _ = be.MemoryPoolUsage()
	rep, _ = be.MemoryPoolReport()
	if u.BytesInUse != 0 || u.BytesReserved != 3*cycleBytes || rep[0].Pages != 2 {
		t.Fatalf("after the buffers died: usage %+v, report %+v; want 0 in use, %d reserved on 2 pages", u, rep, 3*cycleBytes)
	}
	be.MemoryCleanup()
	u, _ = be.MemoryPoolUsage()
	rep, _ = be.MemoryPoolReport()
	if u.BytesReserved != 0 || rep[0].Pages != 0 || rep[0].PagesPeak != 2 {
		t.Fatalf("after cleanup: usage %+v, report %+v", u, rep)
	}
	// Preset and Direct have no sliced pools.
	if err := be.MemoryInstallPools(backend.Preset()); err != nil {
		t.Fatal(err)
	}
	if rep, ok := be.MemoryPoolReport(); !ok || len(rep) != 0 {
		t.Fatalf("preset report %+v, %v", rep, ok)
	}
}

// TestSlicedPoolsCycle runs the cycle: a workload that keeps three
// buffers live at once under a growable layout, then the same layout
// capped at the PagesPeak it reported, then capped at the 2 pages of the
// live set; the capped reruns must not grow past their caps, and a fifth
// live buffer (5·458752 bytes > 2 MiB) fails with ErrOutOfMemory.
func TestSlicedPoolsCycle(t *testing.T) {
	be := newTestBackend()
	work := func() {
		for range 40 {
			a, b, c := be.f32(cycleElems), be.f32(cycleElems), be.f32(cycleElems)
			a[0], b[0], c[0] = 1, 2, 3
			runtime.KeepAlive(a)
			runtime.KeepAlive(b)
			runtime.KeepAlive(c)
		}
	}
	grow := backend.SlicedPool{PageSize: mib}
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{grow})); err != nil {
		t.Fatal(err)
	}
	work()
	rep, _ := be.MemoryPoolReport()
	peak := rep[0].PagesPeak
	if peak < 2 {
		t.Fatalf("growable run: peak %d pages, want at least the 2 of the live set", peak)
	}
	capped := grow
	capped.Pages = &peak
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{capped})); err != nil {
		t.Fatal(err)
	}
	work()
	rep, _ = be.MemoryPoolReport()
	if rep[0].Pages > peak || rep[0].PagesPeak > peak {
		t.Fatalf("rerun capped at the peak grew: %+v (cap %d)", rep[0], peak)
	}
	capped.Pages = new(uint64)
	*capped.Pages = 2 // the live set; below the growable run's peak when garbage waited for a collection
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{capped})); err != nil {
		t.Fatal(err)
	}
	work()
	rep, _ = be.MemoryPoolReport()
	if rep[0].Pages > 2 || rep[0].PagesPeak > 2 {
		t.Fatalf("capped run grew: %+v (cap 2, growable peak %d)", rep[0], peak)
	}
	u, _ := be.MemoryPoolUsage()
	if u.BytesReserved > 2*mib {
		t.Fatalf("capped run reserves %d bytes, cap %d", u.BytesReserved, 2*mib)
	}
	keep := [][]float32{be.f32(cycleElems), be.f32(cycleElems), be.f32(cycleElems), be.f32(cycleElems)}
	func() {
		defer func() {
			err, _ := recover().(error)
			if !errors.Is(err, backend.ErrOutOfMemory) {
				t.Fatalf("a fifth live buffer in a full capped pool: %v, want ErrOutOfMemory", err)
			}
		}()
		keep = append(keep, be.f32(cycleElems))
	}()
	runtime.KeepAlive(keep)
}

// TestInstallPoolsInvalid checks that malformed layouts are refused and
// leave the layout in force.
func TestInstallPoolsInvalid(t *testing.T) {
	be := newTestBackend()
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{{PageSize: mib}})); err != nil {
		t.Fatal(err)
	}
	zero, big := uint64(0), uint64(2*mib)
	for _, l := range []backend.MemoryPoolLayout{
		backend.Sliced(nil),
		backend.Sliced([]backend.SlicedPool{{PageSize: 0}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: mib, Pages: &zero}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: mib, MaxSlice: &zero}}),
		backend.Sliced([]backend.SlicedPool{{PageSize: mib, MaxSlice: &big}}),
		{Kind: 99},
	} {
		var inv *backend.InvalidLayoutError
		if err := be.MemoryInstallPools(l); !errors.As(err, &inv) {
			t.Errorf("%+v: %v, want an *InvalidLayoutError", l, err)
		}
	}
	if rep, _ := be.MemoryPoolReport(); len(rep) != 1 || rep[0].PageSize != mib {
		t.Fatalf("layout changed by a refused install: %+v", rep)
	}
}

// TestSlicedPoolsMaxSlice checks routing: a buffer goes to the first pool
// whose MaxSlice holds its class's bytes; larger ones stay outside.
func TestSlicedPoolsMaxSlice(t *testing.T) {
	be := newTestBackend()
	small := uint64(64 << 10)
	if err := be.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{
		{PageSize: mib, MaxSlice: &small}, {PageSize: mib}})); err != nil {
		t.Fatal(err)
	}
	a := be.f32(8192)       // 32768 bytes: the first pool
	b := be.f32(cycleElems) // 458752 bytes: the second
	c := be.f32(1 << 20)    // 4 MiB: outside both
	rep, _ := be.MemoryPoolReport()
	if rep[0].LargestAlloc != 32768 || rep[0].Pages != 1 || rep[1].LargestAlloc != cycleElems*4 || rep[1].Pages != 1 {
		t.Fatalf("report %+v", rep)
	}
	u, _ := be.MemoryPoolUsage()
	if want := uint64(32768 + cycleBytes + 4*mib); u.BytesInUse != want || u.NumberAllocs != 3 {
		t.Fatalf("usage %+v, want %d bytes in 3 buffers", u, want)
	}
	runtime.KeepAlive([][]float32{a, b, c})
}

// TestCacheFollowsWorkingSet churns garbage buffers whose live set is one
// buffer: the bytes reserved stay within reclaimGrowth of it instead of
// filling the free lists' upper bound, and a class the workload stopped
// using (50 cached buffers) is emptied by the third reclaim: a class keeps
// the peak of the epoch a reclaim ends and of the one before it.
func TestCacheFollowsWorkingSet(t *testing.T) {
	be := newTestBackend()
	old := make([][]float32, 50)
	for i := range old {
		old[i] = be.f32(8192) // 32 KiB each
	}
	runtime.KeepAlive(old)
	old = nil
	waitCached(be, 50*32768)
	c, _ := classOf(8192)
	if n := be.alloc.cur.Load().f32.cached[c].Load(); n != 50 {
		t.Fatalf("%d buffers of the first class cached, want 50", n)
	}
	var maxReserved uint64
	// At least 256 MiB handed out in 64 KiB buffers, one live at a time,
	// and on until three reclaims ran (the collector's own cycles return
	// buffers too, so the reclaims a number of bytes needs varies).
	for i := 0; i < 4000 || be.alloc.forcedGC.Load() < 3 && i < 64000; i++ {
		b := be.f32(16384)
		b[0] = 1
		if i%100 == 0 {
			u, _ := be.MemoryPoolUsage()
			maxReserved = max(maxReserved, u.BytesReserved)
		}
	}
	// A reclaim is due once the bytes handed out exceed those live at the
	// last one by reclaimGrowth; those may still count garbage whose
	// finalizers had not run, hence 2·reclaimGrowth. The finalizers run on
	// one goroutine, which under the race detector on a loaded machine
	// lags the loop by up to two more steps of buffers (measured: up to
	// 52 MiB reserved in 60 runs beside two busy loops on 2 cores), hence
	// 4·reclaimGrowth next to the 50 cached buffers of the first class,
	// still a quarter of the free lists' upper bound (DefaultMaxCached).
	if bound := uint64(4*reclaimGrowth + 50*32768); maxReserved > bound {
		t.Errorf("reserved up to %d bytes for a live set of one 64 KiB buffer, want at most %d", maxReserved, bound)
	}
	if be.alloc.forcedGC.Load() < 3 {
		t.Fatalf("%d reclaims after 4 GiB handed out, want at least 3", be.alloc.forcedGC.Load())
	}
	if n := be.alloc.cur.Load().f32.cached[c].Load(); n != 0 {
		t.Errorf("%d buffers of the unused class still cached", n)
	}
}

// TestReclaimPacesLargeBuffers churns 8 MiB buffers, one live at a time:
// the allocator collects at most once per reclaimBuffers of them (not
// once per 16 MiB step, every other buffer) and reserves at most two
// steps of them.
func TestReclaimPacesLargeBuffers(t *testing.T) {
	be := newTestBackend()
	const elems = 2 << 20 // 8 MiB of float32, a class of its own
	const n = 40
	var maxReserved uint64
	for range n {
		b := be.f32(elems)
		b[0] = 1
		u, _ := be.MemoryPoolUsage()
		maxReserved = max(maxReserved, u.BytesReserved)
	}
	gcs := be.alloc.forcedGC.Load()
	if gcs > n/reclaimBuffers+1 || gcs < 2 {
		t.Errorf("%d collections for %d buffers, want between 2 and %d", gcs, n, n/reclaimBuffers+1)
	}
	if bound := uint64(2*reclaimBuffers*elems*4 + elems*4); maxReserved > bound {
		t.Errorf("reserved up to %d bytes, want at most %d", maxReserved, bound)
	}
	t.Logf("%d collections, up to %d MiB reserved", gcs, maxReserved>>20)
}

// MemoryCleanup forgets the large buffers of earlier work: small buffers
// handed out after it are paced by the 16 MiB step again, not by four of
// the large buffers handed out before it.
func TestCleanupResetsReclaimPacing(t *testing.T) {
	be := newTestBackend()
	big := be.f32(8 << 20) // 32 MiB: a step of four would be 128 MiB
	big[0] = 1
	be.MemoryCleanup()
	if be.alloc.largest.Load() != 0 || be.alloc.largestPrev.Load() != 0 {
		t.Fatalf("largest buffers remembered after MemoryCleanup: %d, %d", be.alloc.largest.Load(), be.alloc.largestPrev.Load())
	}
	before := be.alloc.forcedGC.Load()
	const elems = 64 << 10 // 256 KiB
	for range 4 * (reclaimGrowth / (elems * 4)) {
		b := be.f32(elems)
		b[0] = 1
	}
	if got := be.alloc.forcedGC.Load() - before; got == 0 {
		t.Errorf("no collection while handing out %d MiB of small buffers after MemoryCleanup", 4*reclaimGrowth>>20)
	}
	_ = big
}
