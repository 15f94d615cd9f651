//go:build libtorch && cgo

package libtorch

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The caching allocator reuses a freed large block (no new bytes
// reserved), frees it on MemoryCleanup and in Direct mode, and counts its
// live blocks; values in reused blocks are the new op's.
func TestCachingAllocator(t *testing.T) {
	n := 3 << 20 // 12 MiB of float32
	full := func(v float64) ir.Tensor {
		return exec(t, ir.Op{Kind: ir.KindFull, DType: backend.F32, Shape: []int{n}, Scalars: [2]float64{v}})[0]
	}
	collect(func() bool { return false }) // earlier tests' dead tensors release their blocks first
	before, _ := tb.MemoryPoolUsage()
	x := full(1)
	during, _ := tb.MemoryPoolUsage()
	if during.NumberAllocs != before.NumberAllocs+1 || during.BytesInUse < before.BytesInUse+uint64(4*n) {
		t.Fatalf("usage %+v after a 12 MiB tensor, %+v before", during, before)
	}
	x = nil
	collect(func() bool { u, _ := tb.MemoryPoolUsage(); return u.BytesInUse == before.BytesInUse })
	after, _ := tb.MemoryPoolUsage()
	if after.BytesInUse != before.BytesInUse || after.BytesReserved < during.BytesReserved {
		t.Fatalf("usage %+v after the tensor died, want %d bytes in use and its block cached", after, before.BytesInUse)
	}
	y := full(2)
	reused, _ := tb.MemoryPoolUsage()
	if reused.BytesReserved != after.BytesReserved {
		t.Errorf("a second 12 MiB tensor reserved %d bytes more: the cached block was not reused", reused.BytesReserved-after.BytesReserved)
	}
	for i, v := range values(t, tb, y)[:8] {
		if v != 2 {
			t.Fatalf("reused block [%d] = %v", i, v)
		}
	}
	runtime.KeepAlive(x)
	y = nil
	collect(func() bool { u, _ := tb.MemoryPoolUsage(); return u.BytesInUse == before.BytesInUse })
	tb.MemoryCleanup()
	if u, _ := tb.MemoryPoolUsage(); u.BytesReserved != u.BytesInUse {
		t.Errorf("after MemoryCleanup %d bytes reserved, %d in use", u.BytesReserved, u.BytesInUse)
	}
	if err := tb.MemoryInstallPools(backend.Direct()); err != nil {
		t.Fatal(err)
	}
	z := full(3)
	z = nil
	collect(func() bool { u, _ := tb.MemoryPoolUsage(); return u.BytesInUse == before.BytesInUse })
	if u, _ := tb.MemoryPoolUsage(); u.BytesReserved != u.BytesInUse {
		t.Errorf("direct layout cached %d bytes", u.BytesReserved-u.BytesInUse)
	}
	runtime.KeepAlive(z)
	if err := tb.MemoryInstallPools(backend.Preset()); err != nil {
		t.Fatal(err)
	}
	var ue *backend.UnsupportedError
	if err := tb.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20}})); !errors.As(err, &ue) {
		t.Errorf("sliced layout: %v, want an *UnsupportedError", err)
	}
}

// collect runs garbage collections until done reports true, or for 20
// collections: dead tensors' cleanups run after a collection, on their
// own goroutine.
func collect(done func() bool) {
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if done() {
			return
		}
	}
}
