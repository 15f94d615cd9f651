package workers

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// poolSizes are the pool sizes the tests run on, whatever the machine's
// GOMAXPROCS: inline only, one helper goroutine, and more workers than a
// small machine has cores.
var poolSizes = []int{1, 2, 8}

// testPool starts a pool of size workers that is closed when t ends.
func testPool(t *testing.T, size int) *pool {
	t.Helper()
	p := newPool(size)
	t.Cleanup(p.close)
	return p
}

// forEachPool runs fn as a subtest on a fresh pool of each size in poolSizes.
func forEachPool(t *testing.T, fn func(t *testing.T, p *pool)) {
	for _, size := range poolSizes {
		t.Run(fmt.Sprintf("workers=%d", size), func(t *testing.T) {
			fn(t, testPool(t, size))
		})
	}
}

// checkCover asserts that the chunks reported to parallelGrain on p cover
// [0, n) exactly once, each element written by one chunk, and that there
// are at most p.size chunks, each of at least min(grain, n) elements.
func checkCover(t *testing.T, p *pool, n, grain int) {
	t.Helper()
	hits := make([]int32, n)
	var calls atomic.Int32
	p.parallelGrain(n, grain, func(lo, hi int) {
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
	if c := int(calls.Load()); c > p.size {
		t.Errorf("n=%d grain=%d: %d chunks > %d workers", n, grain, c, p.size)
	}
}

// checkEachTaskOnce asserts that parallelFor on p runs every task of
// [0, tasks) exactly once.
func checkEachTaskOnce(t *testing.T, p *pool, tasks int) {
	t.Helper()
	hits := make([]int32, tasks)
	p.parallelFor(tasks, func(i int) { atomic.AddInt32(&hits[i], 1) })
	for i, h := range hits {
		if h != 1 {
			t.Fatalf("tasks=%d: task %d ran %d times", tasks, i, h)
		}
	}
}

func TestParallelCovers(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
			for _, g := range []int{0, 1, 3, 64, 5000} {
				checkCover(t, p, n, g)
			}
		}
	})
}

// TestPackageFunctions checks the exported functions, which use the
// process-wide pool, against values computed inline.
func TestPackageFunctions(t *testing.T) {
	if Workers() < 1 {
		t.Fatalf("Workers() = %d", Workers())
	}
	sq := make([]int64, 10)
	Parallel(len(sq), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sq[i] = int64(i * i)
		}
	})
	for i, v := range sq {
		if v != int64(i*i) {
			t.Fatalf("Parallel: sq[%d] = %d, want %d", i, v, i*i)
		}
	}
	cube := make([]int64, 1000)
	ParallelGrain(len(cube), 64, func(lo, hi int) {
		if hi-lo < 64 {
			t.Errorf("ParallelGrain: chunk [%d,%d) below grain 64", lo, hi)
		}
		for i := lo; i < hi; i++ {
			cube[i] = int64(i * i * i)
		}
	})
	for i, v := range cube {
		if v != int64(i*i*i) {
			t.Fatalf("ParallelGrain: cube[%d] = %d, want %d", i, v, i*i*i)
		}
	}
	hits := make([]int32, 999)
	ParallelFor(len(hits), func(i int) { atomic.AddInt32(&hits[i], int32(i+1)) })
	for i, h := range hits {
		if h != int32(i+1) {
			t.Fatalf("ParallelFor: task %d added %d, want %d", i, h, i+1)
		}
	}
}

func TestParallelForEachTaskOnce(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		for _, tasks := range []int{0, 1, 2, 5, 64, 999} {
			checkEachTaskOnce(t, p, tasks)
		}
	})
}

// TestConcurrentAndNested runs many callers at once, each of whose tasks
// starts a nested parallel call on the same pool, and checks every inner
// task ran exactly once (a deadlock fails the test by timeout).
func TestConcurrentAndNested(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		const callers, outer, inner, rounds = 16, 8, 37, 5
		var wg sync.WaitGroup
		counts := make([][]int32, callers)
		for c := range callers {
			counts[c] = make([]int32, outer*inner)
			wg.Go(func() {
				for range rounds {
					p.parallelFor(outer, func(o int) {
						p.parallelGrain(inner, 1, func(lo, hi int) {
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
				if h != rounds {
					t.Fatalf("caller %d: element %d counted %d times, want %d", c, i, h, rounds)
				}
			}
		}
	})
}

// TestParkBetweenCalls calls Park while the workers spin after a call and
// concurrently with calls, and checks that every later call still runs
// each task exactly once (a worker left blocked for good fails the test by
// timeout, its invitation never served).
func TestParkBetweenCalls(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		for range 50 {
			checkEachTaskOnce(t, p, 64)
			Park()
			checkEachTaskOnce(t, p, 7)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					Park()
				}
			}
		}()
		for range 200 {
			checkEachTaskOnce(t, p, 33)
		}
		close(stop)
		<-done
	})
}
