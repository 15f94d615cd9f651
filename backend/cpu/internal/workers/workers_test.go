package workers

import (
	"sync"
	"sync/atomic"
	"testing"
)

// checkCover asserts that the chunks reported to Parallel cover [0, n)
// exactly once, each element written by one chunk.
func checkCover(t *testing.T, n, grain int) {
	t.Helper()
	hits := make([]int32, n)
	var calls atomic.Int32
	ParallelGrain(n, grain, func(lo, hi int) {
		calls.Add(1)
		if lo >= hi || lo < 0 || hi > n {
			t.Errorf("n=%d grain=%d: bad chunk [%d,%d)", n, grain, lo, hi)
			return
		}
		if hi-lo < min(max(grain, 1), n) {
			t.Errorf("n=%d grain=%d: chunk [%d,%d) below grain", n, grain, lo, hi)
		}
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&hits[i], 1)
		}
	})
	for i, h := range hits {
		if h != 1 {
			t.Fatalf("n=%d grain=%d: element %d covered %d times", n, grain, i, h)
		}
	}
	if c := int(calls.Load()); c > Workers() {
		t.Errorf("n=%d grain=%d: %d chunks > %d workers", n, grain, c, Workers())
	}
}

func TestParallelCovers(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
		for _, g := range []int{0, 1, 3, 64, 5000} {
			checkCover(t, n, g)
		}
	}
	// Parallel is ParallelGrain with grain 1.
	sum := make([]int64, 10)
	Parallel(len(sum), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sum[i] = int64(i * i)
		}
	})
	for i, v := range sum {
		if v != int64(i*i) {
			t.Fatalf("Parallel: sum[%d] = %d, want %d", i, v, i*i)
		}
	}
}

func TestParallelForEachTaskOnce(t *testing.T) {
	for _, tasks := range []int{0, 1, 2, 5, 64, 999} {
		hits := make([]int32, tasks)
		ParallelFor(tasks, func(i int) { atomic.AddInt32(&hits[i], 1) })
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("tasks=%d: task %d ran %d times", tasks, i, h)
			}
		}
	}
}

// TestConcurrentAndNested runs many callers at once, each of whose tasks
// starts a nested ParallelFor, and checks every inner task ran exactly once
// (a deadlock fails the test by timeout).
func TestConcurrentAndNested(t *testing.T) {
	const callers, outer, inner = 16, 8, 37
	var wg sync.WaitGroup
	counts := make([][]int32, callers)
	for c := range callers {
		counts[c] = make([]int32, outer*inner)
		wg.Go(func() {
			for range 5 {
				ParallelFor(outer, func(o int) {
					Parallel(inner, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							atomic.AddInt32(&counts[c][o*inner+i], 1)
						}
					})
				})
			}
		})
	}
	wg.Wait()
	for c := range callers {
		for i, h := range counts[c] {
			if h != 5 {
				t.Fatalf("caller %d: element %d counted %d times, want 5", c, i, h)
			}
		}
	}
}

func TestWorkersPositive(t *testing.T) {
	if Workers() < 1 {
		t.Fatalf("Workers() = %d", Workers())
	}
}
