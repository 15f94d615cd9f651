package workers

import (
	"bytes"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// faultValue is a distinct panic value; tests compare recovered values by
// pointer identity.
type faultValue struct{ task int }

// catch calls f and returns the value it panicked with, or nil.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// goid returns the id of the calling goroutine, read from its stack header
// "goroutine N [".
func goid() int64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	id, err := strconv.ParseInt(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// barrierWait is how long a task waits for the other workers at a barrier
// before the test reports a missing worker; it only bounds a failing run.
const barrierWait = 30 * time.Second

// runOnEveryWorker calls p.parallelFor with p.size tasks that each wait
// until all p.size have started, so every worker of p, the caller included,
// runs exactly one task. Then each task calls f with its task index and
// whether it runs on the calling goroutine.
func runOnEveryWorker(t *testing.T, p *pool, f func(task int, onCaller bool)) {
	t.Helper()
	caller := goid()
	var arrived atomic.Int32
	all := make(chan struct{})
	p.parallelFor(p.size, func(task int) {
		if arrived.Add(1) == int32(p.size) {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(barrierWait):
			t.Errorf("workers=%d: only %d of %d workers took part", p.size, arrived.Load(), p.size)
		}
		f(task, goid() == caller)
	})
}

// TestPanicOnWorkerReachesCaller makes exactly one task panic on a pool
// goroutine (never the caller's) and checks the caller recovers that very
// value, the other tasks completed, and the pool then still runs every
// worker and computes later jobs correctly.
func TestPanicOnWorkerReachesCaller(t *testing.T) {
	for _, size := range []int{2, 8} {
		p := testPool(t, size)
		for round := range 3 {
			var raised atomic.Pointer[faultValue]
			var done, onCaller atomic.Int32
			r := catch(func() {
				runOnEveryWorker(t, p, func(task int, caller bool) {
					if caller {
						onCaller.Add(1)
					} else if v := (&faultValue{task: task}); raised.CompareAndSwap(nil, v) {
						panic(v)
					}
					done.Add(1)
				})
			})
			want := raised.Load()
			if want == nil {
				t.Fatalf("workers=%d round %d: no task ran on a pool goroutine", size, round)
			}
			if r != any(want) {
				t.Fatalf("workers=%d round %d: caller recovered %#v, want %#v", size, round, r, want)
			}
			if onCaller.Load() != 1 || done.Load() != int32(size-1) {
				t.Fatalf("workers=%d round %d: %d tasks on the caller, %d completed; want 1 and %d",
					size, round, onCaller.Load(), done.Load(), size-1)
			}
			// Every worker is still alive (the barrier needs all of them)
			// and later jobs are right.
			var later atomic.Int32
			runOnEveryWorker(t, p, func(int, bool) { later.Add(1) })
			if later.Load() != int32(size) {
				t.Fatalf("workers=%d round %d: later job ran %d of %d tasks", size, round, later.Load(), size)
			}
			checkEachTaskOnce(t, p, 999)
			checkCover(t, p, 1001, 3)
		}
	}
}

// TestPanicSkipsRemainingTasks checks, on each pool size, that after a
// task panics every task runs at most once, the panicking task ran, no task
// of the call runs after the caller has recovered, and the pool stays usable.
func TestPanicSkipsRemainingTasks(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		const tasks, bad = 5000, 17
		hits := make([]int32, tasks)
		r := catch(func() {
			p.parallelFor(tasks, func(i int) {
				atomic.AddInt32(&hits[i], 1)
				if i == bad {
					panic(faultValue{task: i})
				}
			})
		})
		if r != any(faultValue{task: bad}) {
			t.Fatalf("recovered %#v, want %#v", r, faultValue{task: bad})
		}
		snapshot := make([]int32, tasks)
		for i := range hits {
			snapshot[i] = atomic.LoadInt32(&hits[i])
			if snapshot[i] > 1 {
				t.Fatalf("task %d ran %d times", i, snapshot[i])
			}
		}
		if snapshot[bad] != 1 {
			t.Fatalf("panicking task ran %d times, want 1", snapshot[bad])
		}
		// Give any straggler a chance to run; the call is over, so none may.
		checkEachTaskOnce(t, p, 999)
		for i := range hits {
			if h := atomic.LoadInt32(&hits[i]); h != snapshot[i] {
				t.Fatalf("task %d ran after the call returned (%d → %d)", i, snapshot[i], h)
			}
		}
	})
}

// TestJobRunSkipsAfterPanic drives a job on one goroutine: tasks before the
// panicking one run, the rest are skipped but counted as finished, and the
// first panic value is kept.
func TestJobRunSkipsAfterPanic(t *testing.T) {
	const n, bad = 10, 3
	var ran [n]int
	j := &job{n: n, f: func(i int) {
		ran[i]++
		if i >= bad {
			panic(faultValue{task: i})
		}
	}}
	j.wg.Add(n)
	j.left.Store(n)
	j.run()
	j.wait()
	for i, c := range ran {
		if want := map[bool]int{true: 1, false: 0}[i <= bad]; c != want {
			t.Fatalf("task %d ran %d times, want %d", i, c, want)
		}
	}
	if j.left.Load() != 0 || j.next.Load() < n {
		t.Fatalf("left=%d next=%d after run, want 0 and ≥ %d", j.left.Load(), j.next.Load(), n)
	}
	if fp := j.fault.Load(); fp == nil || fp.value != any(faultValue{task: bad}) {
		t.Fatalf("recorded %#v, want %#v", fp, faultValue{task: bad})
	}
}

// TestPanicNested checks that a panic in a nested call's task crosses both
// levels and reaches the outermost caller with its value.
func TestPanicNested(t *testing.T) {
	forEachPool(t, func(t *testing.T, p *pool) {
		want := &faultValue{task: -1}
		r := catch(func() {
			p.parallelFor(8, func(o int) {
				p.parallelGrain(64, 1, func(lo, hi int) {
					if o == 5 && lo <= 40 && 40 < hi {
						panic(want)
					}
				})
			})
		})
		if r != any(want) {
			t.Fatalf("recovered %#v, want %#v", r, want)
		}
		checkCover(t, p, 100, 1)
	})
}

// TestPanicPackageFunctions checks the exported functions re-raise a task's
// panic value in the caller, whichever goroutine ran the task.
func TestPanicPackageFunctions(t *testing.T) {
	want := &faultValue{task: 7}
	calls := map[string]func(){
		"ParallelFor": func() {
			ParallelFor(64, func(i int) {
				if i == 7 {
					panic(want)
				}
			})
		},
		"Parallel": func() {
			Parallel(64, func(lo, hi int) {
				if lo <= 7 && 7 < hi {
					panic(want)
				}
			})
		},
		"ParallelGrain": func() {
			ParallelGrain(4096, 16, func(lo, hi int) {
				if lo <= 7 && 7 < hi {
					panic(want)
				}
			})
		},
	}
	for name, call := range calls {
		if r := catch(call); r != any(want) {
			t.Fatalf("%s: recovered %#v, want %#v", name, r, want)
		}
	}
}

// TestPanicNoGoroutineLeak checks that panicking calls leave no goroutine
// behind: once a pool that served them is closed, the goroutine count is
// back to what it was before the pool started.
func TestPanicNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	p := newPool(8)
	for round := range 20 {
		want := &faultValue{task: round}
		r := catch(func() {
			p.parallelFor(100, func(i int) {
				if i == round {
					panic(want)
				}
			})
		})
		if r != any(want) {
			t.Fatalf("round %d: recovered %#v, want %#v", round, r, want)
		}
	}
	checkEachTaskOnce(t, p, 999)
	p.close()
	// An exited goroutine may still be counted for a moment after close.
	deadline := time.Now().Add(barrierWait)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before the pool, %d after closing it", before, after)
	}
}

// TestJobKeepsFirstPanic checks that when several tasks of a job panic (as
// tasks running at the same time can), the value kept is the first one.
func TestJobKeepsFirstPanic(t *testing.T) {
	j := &job{n: 3, f: func(i int) { panic(faultValue{task: i}) }}
	for _, task := range []int{2, 0, 1} {
		j.runTask(task)
	}
	if fp := j.fault.Load(); fp == nil || fp.value != any(faultValue{task: 2}) {
		t.Fatalf("recorded %#v, want %#v", fp, faultValue{task: 2})
	}
}
