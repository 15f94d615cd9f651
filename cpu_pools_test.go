package ember_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// cpuTrain runs n training steps of the MNIST MLP (mlpSteps) on cpu.
func cpuTrain(t *testing.T, n int, after func(step int)) {
	t.Helper()
	mlpSteps(t, ember.CPU().Autodiff(), n, after)
}

// mlpSteps runs n training steps of the MNIST MLP (784-128-10, batch 64,
// Adam) on the autodiff device ad, one random batch made on its inner
// device, calls after with each step's number and syncs the device.
func mlpSteps(t *testing.T, ad ember.Device, n int, after func(step int)) {
	t.Helper()
	dev := ad.Inner()
	model := train.NewMLP(ad)
	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{})
	x := ember.Randn([]int{64, 1, 28, 28}, dev)
	y := ember.RandomDType([]int{64}, ember.Uniform(0, 10), ember.I64, dev)
	for i := 1; i <= n; i++ {
		loss := nn.CrossEntropy(model.Forward(x.ToDevice(ad)), y)
		opt.Step(loss.Backward())
		if after != nil {
			after(i)
		}
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
}

// restoreCPUPreset puts the preset layout back on cpu when the test ends.
func restoreCPUPreset(t *testing.T) {
	t.Cleanup(func() {
		if err := ember.CPU().MemoryInstallPools(ember.Preset()); err != nil {
			t.Errorf("restoring the preset layout: %v", err)
		}
	})
}

// The install-pools cycle of the package documentation (section Devices)
// on cpu: install a growable sliced layout, train, read PagesPeak, install
// the same layout capped at the peak, and train again without growth
// (pages and reserved bytes within the cap).
func TestCPUInstallPoolsCycle(t *testing.T) {
	dev := ember.CPU()
	restoreCPUPreset(t)
	const page = 1 << 20
	growable := ember.SlicedPool{PageSize: page}
	if err := dev.MemoryInstallPools(ember.Sliced([]ember.SlicedPool{growable})); err != nil {
		t.Fatalf("install growable layout: %v", err)
	}
	cpuTrain(t, 60, nil)
	rep, ok := dev.MemoryPoolReport()
	if !ok || len(rep) != 1 || rep[0].PageSize != page || rep[0].PagesPeak == 0 {
		t.Fatalf("report after the growable run: %+v, %v", rep, ok)
	}
	// The largest buffer of the MLP is the first layer's weight, its
	// gradient and Adam's moments: 784·128 float32, 401408 bytes.
	if rep[0].LargestAlloc != 784*128*4 {
		t.Errorf("largest allocation %d bytes, want %d", rep[0].LargestAlloc, 784*128*4)
	}
	peak := rep[0].PagesPeak
	capped := growable
	capped.Pages = &peak
	if err := dev.MemoryInstallPools(ember.Sliced([]ember.SlicedPool{capped})); err != nil {
		t.Fatalf("install capped layout (%d pages): %v", peak, err)
	}
	var maxReserved uint64
	cpuTrain(t, 60, func(int) {
		u, ok := dev.MemoryPoolUsage()
		if !ok {
			t.Fatal("cpu does not report MemoryPoolUsage")
		}
		maxReserved = max(maxReserved, u.BytesReserved)
	})
	rep, _ = dev.MemoryPoolReport()
	t.Logf("pages peak: growable run %d, capped run %d; reserved at most %d bytes in the capped run", peak, rep[0].PagesPeak, maxReserved)
	if rep[0].Pages > peak || rep[0].PagesPeak > peak {
		t.Errorf("capped pool grew: %+v, cap %d pages", rep[0], peak)
	}
	// Buffers of the growable run still live when the capped one starts
	// count as reserved until they are collected; after a collection only
	// the capped pool's bytes remain.
	runtime.GC()
	runtime.GC()
	if u, _ := dev.MemoryPoolUsage(); u.BytesReserved > peak*page {
		t.Errorf("capped run reserves %d bytes, more than its %d pages of %d bytes", u.BytesReserved, peak, page)
	}
}

// TestCPUReservedFollowsWorkingSet trains the MLP (live set about 1.4 MB)
// with the preset layout: the bytes reserved stay within the allocator's
// collection pacing of the live set (twice its 16 MiB reclaim step plus
// the live set) instead of growing towards the 256 MiB bound of the free
// lists.
func TestCPUReservedFollowsWorkingSet(t *testing.T) {
	dev := ember.CPU()
	restoreCPUPreset(t)
	// Tensors of earlier tests in this process are collected and their
	// buffers' finalizers allowed to run first, so that only this run's
	// buffers count.
	settleCPU(dev)
	if err := dev.MemoryInstallPools(ember.Preset()); err != nil {
		t.Fatal(err)
	}
	dev.MemoryCleanup()
	var maxReserved uint64
	cpuTrain(t, 400, func(step int) {
		u, _ := dev.MemoryPoolUsage()
		maxReserved = max(maxReserved, u.BytesReserved)
	})
	const bound = 2*16<<20 + 4<<20
	t.Logf("reserved at most %d bytes", maxReserved)
	if maxReserved > bound {
		t.Errorf("reserved up to %d bytes for a live set of about 1.4 MB, want at most %d", maxReserved, bound)
	}
}

// settleCPU collects garbage until the cpu allocator's bytes in use stop
// falling (the finalizers of dead buffers have run), for at most 2 s.
func settleCPU(dev ember.Device) {
	last := ^uint64(0)
	for i := 0; i < 200; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		u, _ := dev.MemoryPoolUsage()
		if u.BytesInUse >= last {
			return
		}
		last = u.BytesInUse
	}
}
