//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
	"github.com/emberml/ember/ir"
)

// Adapters are listed with a kind, an index per kind, a name and memory;
// every usable one opens by its DeviceID under both type names, and the
// two share the adapter's device.
func TestAdaptersOpen(t *testing.T) {
	as, err := Adapters()
	if err != nil {
		t.Skipf("no Vulkan: %v", err)
	}
	if len(as) == 0 {
		t.Skip("the loader lists no adapter")
	}
	for _, a := range as {
		if a.Name == "" || a.Kind == "" || a.Index < 0 {
			t.Errorf("adapter %+v lacks a name, kind or index", a)
		}
		if a.Unusable != nil {
			t.Logf("%s:%d %s: unusable: %v", a.Kind, a.Index, a.Name, a.Unusable)
			continue
		}
		if a.Memory == 0 {
			t.Errorf("%s reports no device-local memory", a.Name)
		}
		v, err := driver{typ: "vulkan"}.Open(a.ID("vulkan"))
		if err != nil {
			t.Fatalf("open %v: %v", a.ID("vulkan"), err)
		}
		w, err := driver{typ: "wgpu"}.Open(a.ID("wgpu"))
		if err != nil {
			t.Fatalf("open %v: %v", a.ID("wgpu"), err)
		}
		if v.(*Backend).d != w.(*Backend).d {
			t.Errorf("vulkan and wgpu backends of %s do not share the device", a.Name)
		}
		if v.ID() != a.ID("vulkan") || w.ID() != a.ID("wgpu") {
			t.Errorf("IDs %v, %v", v.ID(), w.ID())
		}
		info := v.(*Backend).DeviceInfo()
		if info.Name != a.Name || info.MemoryBytes != a.Memory {
			t.Errorf("DeviceInfo %+v, adapter %s %d", info, a.Name, a.Memory)
		}
	}
	ids := driver{typ: "vulkan"}.Devices()
	if len(ids) == 0 {
		t.Error("Devices lists no adapter although one is usable")
	}
}

// Existing, an index past the adapters of a kind and an unknown kind are
// refused with errors wrapping ErrBackendUnavailable that say why.
func TestOpenErrors(t *testing.T) {
	if _, err := Adapters(); err != nil {
		t.Skipf("no Vulkan: %v", err)
	}
	for id, frag := range map[backend.DeviceID]string{
		{Type: "vulkan", Kind: "existing", Index: 3}:  "Existing(3) is not supported",
		{Type: "vulkan", Kind: "discrete", Index: 99}: "no discrete adapter with index 99",
		{Type: "wgpu", Kind: "virtual", Index: 7}:     "no virtual adapter with index 7",
	} {
		_, err := driver{typ: id.Type}.Open(id)
		if err == nil || !errors.Is(err, backend.ErrBackendUnavailable) || !strings.Contains(err.Error(), frag) {
			t.Errorf("open %v: %v, want an error wrapping ErrBackendUnavailable containing %q", id, err, frag)
		}
	}
}

// A software adapter ranks below the cpu backend (priority 20) for
// DefaultDevice; hardware adapters rank above it.
func TestDevicePriority(t *testing.T) {
	dr := driver{typ: "vulkan"}
	if p := dr.DevicePriority(backend.DeviceID{Type: "vulkan", Kind: "cpu"}); p >= 20 {
		t.Errorf("software adapter priority %d, want below the cpu backend's 20", p)
	}
	for _, k := range []string{"discrete", "integrated", "virtual"} {
		if p := dr.DevicePriority(backend.DeviceID{Type: "vulkan", Kind: k}); p <= 20 {
			t.Errorf("%s adapter priority %d, want above the cpu backend's 20", k, p)
		}
	}
}

// More operations than one batch holds, recorded from several goroutines
// at once, and uploads larger than a staging chunk all complete in order.
func TestBatchesConcurrent(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(31, 32))
	big := nonZero(rng, []int{3 << 20}, backend.F32) // 12 MiB: more than a staging chunk
	x, fx := pair(b, big, layouts[0], []int{3 << 20})
	same(t, b, unaryOn(b, ir.OpNeg, x), unaryOn(flexRef, ir.OpNeg, fx), "12 MiB upload")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := ir.Full(b, []int{64}, backend.I64, 1)
			acc := ir.Full(b, []int{64}, backend.I64, float64(g))
			for range 3 * batchDispatches / 2 {
				acc = ir.Add(b, acc, one)
			}
			d, err := b.ToData(acc)
			if err != nil {
				errs <- err
				return
			}
			for _, v := range d.Int64s() {
				if v != int64(g+3*batchDispatches/2) {
					errs <- errors.New("a chain of additions lost or reordered work")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}

// The memory contract: usage counts live buffers, a growable layout's
// peak can be installed as a cap and the workload runs again without
// growth, installing pools while buffers are live fails with
// PoolsInUseError, and an invalid layout is refused.
func TestMemoryPools(t *testing.T) {
	b := testBackend(t)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	collectGarbage()
	u := func(v uint64) *uint64 { return &v }
	grow := backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u(64 << 10)}, {PageSize: 16 << 20}})
	if err := b.MemoryInstallPools(grow); err != nil {
		t.Skipf("buffers of other tests are live: %v", err)
	}
	defer func() { collectGarbage(); _ = b.MemoryInstallPools(backend.Preset()) }()
	work := func() {
		rng := rand.New(rand.NewPCG(1, 1))
		var keep []backend.Tensor
		for i := range 40 {
			x := b.FromData(nonZero(rng, []int{1000 + 100*i}, backend.F32))
			keep = append(keep, ir.Unary(b, ir.OpExp, x))
		}
		if err := b.Sync(); err != nil {
			t.Fatal(err)
		}
		use, ok := b.MemoryPoolUsage()
		if !ok || use.NumberAllocs < 80 || use.BytesInUse == 0 || use.BytesReserved < use.BytesInUse {
			t.Errorf("usage %+v with 80 live buffers", use)
		}
		if err := b.MemoryInstallPools(backend.Preset()); !errors.As(err, new(*backend.PoolsInUseError)) {
			t.Errorf("installing pools with live buffers: %v, want a PoolsInUseError", err)
		}
		runtime.KeepAlive(keep)
	}
	work()
	rep, _ := b.MemoryPoolReport()
	if len(rep) != 2 || rep[0].PagesPeak == 0 || rep[0].LargestAlloc == 0 {
		t.Fatalf("report %+v", rep)
	}
	collectGarbage()
	capped := backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u(64 << 10), Pages: u(rep[0].PagesPeak)}, {PageSize: 16 << 20, Pages: u(max(rep[1].PagesPeak, 1))}})
	if err := b.MemoryInstallPools(capped); err != nil {
		t.Fatal(err)
	}
	work()
	rep2, _ := b.MemoryPoolReport()
	if rep2[0].PagesPeak > rep[0].PagesPeak {
		t.Errorf("capped pool grew: %+v after %+v", rep2, rep)
	}
	bad := backend.Sliced([]backend.SlicedPool{{PageSize: 100}})
	if err := b.MemoryInstallPools(bad); !errors.As(err, new(*backend.InvalidLayoutError)) {
		t.Errorf("page size 100: %v, want an InvalidLayoutError", err)
	}
}

// A tensor larger than one storage-buffer binding is refused with an
// error wrapping ErrOutOfMemory that names the limit.
func TestBindingLimit(t *testing.T) {
	b := testBackend(t)
	_, err := b.d.newBuffer(b.d.maxRange+1, false)
	if err == nil || !errors.Is(err, backend.ErrOutOfMemory) || !strings.Contains(err.Error(), "maxStorageBufferRange") {
		t.Errorf("a buffer above maxStorageBufferRange: %v", err)
	}
}

// PerformanceStats measures FMA throughput, GEMM throughput, bandwidth and
// launch latency, and marks the keys it does not measure.
func TestPerformanceStats(t *testing.T) {
	b := testBackend(t)
	keys := []backend.ThroughputKey{{Mode: backend.ModeMemory}, {Mode: backend.ModeMemoryRead}, {Mode: backend.ModeMemoryWrite},
		{Mode: backend.ModeComputeDirect, DType: backend.F32}, {Mode: backend.ModeComputeDirect, DType: backend.F64},
		{Mode: backend.ModeComputeCMMA, DType: backend.F32, M: 256, N: 256, K: 256}, {Mode: backend.ModeLaunch},
		{Mode: backend.ModeComputeCMMA, DType: backend.F16, M: 16, N: 16, K: 16},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessRandom, Bytes: 1 << 20}}
	st := b.PerformanceStats(keys)
	for i, s := range st[:7] {
		if s.Err != nil || (s.Value <= 0 && s.Latency <= 0) {
			t.Errorf("key %d: %v", i, s)
		}
	}
	for _, s := range st[7:] {
		if s.Err == nil {
			t.Errorf("%v: measured, but the backend has no kernel for it", s)
		}
	}
	for _, s := range st {
		t.Log(s)
	}
}

// testBackend returns the backend of the default Vulkan adapter, or skips
// the test where none can run.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	b, err := driver{typ: "vulkan"}.Open(backend.DeviceID{Type: "vulkan", Kind: "default"})
	if err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	return b.(*Backend)
}

// A lost device is sticky: after VK_ERROR_DEVICE_LOST every Sync and
// read returns the same error wrapping ErrExecution, and operations panic
// with it. (The loss is simulated on a device of its own.)
func TestDeviceLostIsSticky(t *testing.T) {
	a := testBackend(t).d.adapter
	d, err := newDevice(a)
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{id: backend.DeviceID{Type: "vulkan", Kind: a.Kind, Index: a.Index}, d: d}
	x := b.FromData(fromF64([]int{4}, backend.F32, func() float64 { return 1 }))
	lost := d.fail(&vk.Error{Call: "vkQueueSubmit", Result: vk.ErrorDeviceLost})
	if !errors.Is(lost, backend.ErrExecution) {
		t.Fatalf("device loss: %v, want an error wrapping ErrExecution", lost)
	}
	for i := range 2 {
		if err := b.Sync(); !errors.Is(err, backend.ErrExecution) || !strings.Contains(err.Error(), "VK_ERROR_DEVICE_LOST") {
			t.Errorf("Sync %d after the loss: %v", i, err)
		}
	}
	if _, err := b.ToData(x); !errors.Is(err, backend.ErrExecution) {
		t.Errorf("ToData after the loss: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !errors.Is(r.(error), backend.ErrExecution) {
				t.Errorf("an op after the loss panicked with %v, want the device error", r)
			}
		}()
		ir.Unary(b, ir.OpNeg, x)
	}()
}

// After new pipelines, Sync saves the driver's pipeline cache under the
// user cache directory, named by the adapter's pipelineCacheUUID, and a
// new device starts from it.
func TestPipelineCacheSaved(t *testing.T) {
	b := testBackend(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("EMBER_VULKAN_CACHE", "")
	b.d.mu.Lock()
	b.d.cacheDirty, b.d.cacheSaved = true, time.Time{}
	b.d.mu.Unlock()
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	f := cacheFile(b.d.adapter)
	st, err := os.Stat(f)
	if err != nil || st.Size() == 0 {
		t.Fatalf("pipeline cache %s after Sync: %v", f, err)
	}
	if data := loadPipelineCache(b.d.adapter); len(data) != int(st.Size()) {
		t.Errorf("loadPipelineCache read %d bytes of %d", len(data), st.Size())
	}
}

// A batch whose dispatches bind batchBytes is submitted at once, so the
// device runs large operations while the next ones are recorded; small
// ones wait in the batch for more.
func TestLargeWorkSubmitsEarly(t *testing.T) {
	b := testBackend(t)
	old := batchBytes
	batchBytes = 1 << 20
	defer func() { batchBytes = old }()
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	recorded := func() bool {
		b.d.mu.Lock()
		defer b.d.mu.Unlock()
		return b.d.cur != nil
	}
	small := ir.Full(b, []int{16}, backend.F32, 1)
	ir.Add(b, small, small)
	if !recorded() {
		t.Error("a small op was submitted at once")
	}
	big := ir.Full(b, []int{1 << 18}, backend.F32, 1)
	ir.Add(b, big, big)
	if recorded() {
		t.Error("an op binding 3 MiB (above a batch's 1 MiB) stayed in the batch")
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}
