package cuda

import (
	"runtime"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/ir"
)

// BenchmarkCtxSetCurrent is the cost of making the context current (paid
// by every entry point, see enter).
func BenchmarkCtxSetCurrent(bb *testing.B) {
	b := gpu(bb)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for bb.Loop() {
		if err := cu.CtxSetCurrent(b.ctx); err != nil {
			bb.Fatal(err)
		}
	}
}

// BenchmarkEnter is enter's full cost: thread lock, context, unlock.
func BenchmarkEnter(bb *testing.B) {
	b := gpu(bb)
	for bb.Loop() {
		b.enter()()
	}
}

// BenchmarkLaunchEmpty is the host cost of queueing an empty kernel.
func BenchmarkLaunchEmpty(bb *testing.B) {
	b := gpu(bb)
	k := b.Kernel("ember_stats_empty", statsSource)
	one := [3]uint32{1, 1, 1}
	for bb.Loop() {
		b.Launch(k, one, one, 0)
	}
	_ = b.Sync()
}

// BenchmarkLaunchArgs queues a kernel with five arguments (packing included).
func BenchmarkLaunchArgs(bb *testing.B) {
	b := gpu(bb)
	k := b.Kernel("ember_fill_u64", fillSource)
	x := b.Empty([]int{256}, backend.I64)
	for bb.Loop() {
		b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{256, 1, 1}, 0, x, uint64(256), uint64(7))
	}
	_ = b.Sync()
}

// BenchmarkEmptyRelease is one pooled allocation and eager release.
func BenchmarkEmptyRelease(bb *testing.B) {
	b := gpu(bb)
	for bb.Loop() {
		b.Release(b.Empty([]int{1024}, backend.F32))
	}
}

// BenchmarkFullGC is one pooled allocation returned by the garbage collector.
func BenchmarkFullGC(bb *testing.B) {
	b := gpu(bb)
	for bb.Loop() {
		_ = ir.Full(b, []int{1 << 18}, backend.F32, 1)
	}
	_ = b.Sync()
}

// BenchmarkRawLaunch is cuLaunchKernel alone (thread locked, context
// current, no argument packing): the driver's share of Launch.
func BenchmarkRawLaunch(bb *testing.B) {
	b := gpu(bb)
	k := b.Kernel("ember_stats_empty", statsSource)
	one := [3]uint32{1, 1, 1}
	defer b.enter()()
	for bb.Loop() {
		if err := cu.LaunchKernel(k.fn, one, one, 0, b.stream, nil); err != nil {
			bb.Fatal(err)
		}
	}
	_ = cu.StreamSynchronize(b.stream)
}
