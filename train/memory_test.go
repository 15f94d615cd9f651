package train

import (
	"context"
	"runtime"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// heapInuse returns HeapInuse after two collections (the second empties
// the sync.Pool victim caches the first one moved scratch buffers into).
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestMemoryStable trains the MLP for 500 steps of 16 examples and checks
// that the live heap does not grow between step 100 and step 500: every
// step's autodiff graph, gradients and replaced parameters must be
// collectable. The allowance is 5 % plus 1 MiB; the absolute part covers
// what legitimately varies between two measurements of a heap of only
// 2–3 MiB: the loader's prefetched batches (up to 3 × 16 × 784 × 4 B ≈
// 150 KiB in flight), the growing StepLosses slice (≤ 4 KiB) and heap
// spans left partly occupied after a collection (the measurements differ
// by up to 0.3 MiB either way). It still catches any leak of 3 KiB or more
// per step over the 400 steps; keeping one step's graph alone would retain
// the batch (50 KiB) and activations.
func TestMemoryStable(t *testing.T) {
	const steps, batch = 500, 16
	all := newSynthetic(steps*batch + 16)
	// Adam's elementwise update of the 101,770 parameters dominates a
	// step under the race detector (about 34 s for the whole test on two
	// cores, against 15 s with SGD). SGD with momentum exercises the same
	// mechanisms a leak would come from: a fresh parameter leaf per step,
	// per-parameter optimizer state, the step's graph and gradients.
	optimizer := "adam"
	if raceEnabled {
		optimizer = "sgd"
	}
	var at100, at500 uint64
	cfg := Config{
		Device:    ember.Flex(),
		Batch:     batch,
		Seed:      1,
		Optimizer: optimizer,
		Train:     data.Subset(all, 0, steps*batch),
		Test:      data.Subset(all, steps*batch, steps*batch+16),
		OnStep: func(step int, _ float64) {
			switch step {
			case 100:
				at100 = heapInuse()
			case steps:
				at500 = heapInuse()
			}
		},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.StepLosses) != steps || at100 == 0 || at500 == 0 {
		t.Fatalf("%d steps, measurements %d and %d", len(res.StepLosses), at100, at500)
	}
	limit := at100 + at100/20 + 1<<20
	t.Logf("HeapInuse: step 100 %.2f MiB, step 500 %.2f MiB (limit %.2f MiB)",
		float64(at100)/(1<<20), float64(at500)/(1<<20), float64(limit)/(1<<20))
	if at500 > limit {
		t.Fatalf("HeapInuse grew from %d B at step 100 to %d B at step 500 (limit %d B)", at100, at500, limit)
	}
}
