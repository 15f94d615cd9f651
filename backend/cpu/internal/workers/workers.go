// Package workers is the persistent goroutine pool of the CPU backend.
//
// The pool is started once, on first use, with runtime.GOMAXPROCS(0) − 1
// goroutines; the goroutine calling Parallel, ParallelGrain or ParallelFor is
// the remaining worker and always takes part in its own call. Work is split
// into tasks claimed with an atomic counter, so a call never waits for a task
// that nobody is running: the caller claims every task the pool has not
// started yet. This makes the functions safe for any number of concurrent
// callers and for nested calls (a task that itself calls Parallel), which
// can never deadlock — at worst nested work runs inline on the calling
// goroutine.
//
// A panic in a task does not escape on the goroutine that ran it: it is
// recovered, the call's remaining tasks are skipped, and once every task
// already started has returned, the calling goroutine panics again with the
// first recovered value. Callers can therefore recover it (as ember.Try
// does), and the pool stays usable.
package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool is a set of worker goroutines serving parallel calls. The process
// uses one, defaultPool; tests build pools of other sizes with newPool.
type pool struct {
	size    int       // number of workers including the caller
	jobs    chan *job // invitations to help with a job
	running sync.WaitGroup
}

// defaultPool returns the process-wide pool, started on the first call with
// runtime.GOMAXPROCS(0) workers.
var defaultPool = sync.OnceValue(func() *pool {
	return newPool(runtime.GOMAXPROCS(0))
})

// newPool starts a pool of size workers (at least 1): size − 1 goroutines
// plus the goroutine of each call.
func newPool(size int) *pool {
	p := &pool{size: max(1, size)}
	p.jobs = make(chan *job, 4*p.size)
	p.running.Add(p.size - 1)
	for range p.size - 1 {
		go p.worker()
	}
	return p
}

// close stops the goroutines of p once they have served every invitation
// already queued, and returns when they have exited. p must not be used
// afterwards. The process-wide pool is never closed.
func (p *pool) close() {
	close(p.jobs)
	p.running.Wait()
}

// job is one call of parallelFor: tasks [0, n) claimed through next.
type job struct {
	f     func(task int)
	n     int64
	next  atomic.Int64
	left  atomic.Int64 // tasks not finished yet
	wg    sync.WaitGroup
	fault atomic.Pointer[taskPanic] // first panic of a task, nil if none
}

// taskPanic holds the value a task panicked with.
type taskPanic struct{ value any }

// spinFor is how long an idle worker, or a caller waiting for the last
// tasks of its call, polls before blocking. Blocking parks the OS thread,
// and waking a parked thread (on virtual machines, an idle virtual CPU)
// costs tens to hundreds of microseconds, as much as a whole small
// product; back-to-back parallel calls, as in a blocked matrix product,
// find the pool awake. The gaps between the parallel calls of an eager
// training step (autodiff bookkeeping, the optimizer's small ops, queueing
// fused ops) are mostly under 400 µs: in the MNIST CNN's step about 16
// calls, of whose gaps a third were 50–200 µs and one in fifteen 200–400
// µs, so a 50 µs spin parked and woke the pool about five times a step
// (the step took 11.0–11.4 ms against 9.3–9.9 ms with 300 µs, less CPU
// time too). Longer spins (1–2 ms, which span the allocator's collections)
// measured no better: a spinning worker holds the processor the
// collector's mark workers would use.
const spinFor = 300 * time.Microsecond

// worker runs jobs from the queue until the pool is closed.
func (p *pool) worker() {
	defer p.running.Done()
	for {
		var j *job
		var ok bool
		select {
		case j, ok = <-p.jobs:
		default:
			j, ok = p.spinReceive()
		}
		if !ok {
			return
		}
		j.run()
	}
}

// spinReceive polls the job queue for spinFor, or until Park is called,
// then blocks on it. ok is false when the queue is closed.
func (p *pool) spinReceive() (j *job, ok bool) {
	deadline := time.Now().Add(spinFor)
	parks := parkCalls.Load()
	for i := 0; ; i++ {
		select {
		case j, ok = <-p.jobs:
			return j, ok
		default:
		}
		if i%16 == 15 && (parkCalls.Load() != parks || time.Now().After(deadline)) {
			j, ok = <-p.jobs
			return j, ok
		}
	}
}

// parkCalls counts the calls of Park.
var parkCalls atomic.Int64

// Park asks the goroutines of the pool that are polling for work to block
// now instead of at the end of their spin; the next parallel call wakes
// them. The cpu allocator calls it before forcing a collection: a worker
// spinning through the collection first delays its stop-the-world phase
// (sweep termination: 0.15–0.21 ms on average on the MNIST CNN's training
// step, 0.08–0.11 after Park) and then holds the processor the mark workers
// would use (mark 0.39–0.46 ms, 0.32–0.39 after Park): 0.1–0.15 ms less
// of a pause that blocks the step, though within the noise of whole-step
// timings on a shared machine.
func Park() { parkCalls.Add(1) }

// run claims and executes tasks of j until none is left. Once a task has
// panicked, the tasks claimed afterwards are skipped (counted as finished
// without calling f).
func (j *job) run() {
	for {
		t := j.next.Add(1) - 1
		if t >= j.n {
			return
		}
		if j.fault.Load() == nil {
			j.runTask(int(t))
		}
		j.left.Add(-1)
		j.wg.Done()
	}
}

// runTask calls f(t), recovering a panic and recording it if it is the
// job's first.
func (j *job) runTask(t int) {
	defer func() {
		// Since Go 1.21 panic(nil) recovers as *runtime.PanicNilError, so
		// a nil r means no panic.
		if r := recover(); r != nil {
			j.fault.CompareAndSwap(nil, &taskPanic{value: r})
		}
	}()
	j.f(t)
}

// wait returns when every task of j has finished, spinning for spinFor
// before blocking.
func (j *job) wait() {
	deadline := time.Now().Add(spinFor)
	for i := 0; j.left.Load() > 0; i++ {
		if i%16 == 15 && time.Now().After(deadline) {
			break
		}
	}
	j.wg.Wait()
}

// Workers returns the number of goroutines that share a parallel call: the
// pool goroutines plus the caller, i.e. runtime.GOMAXPROCS(0) as seen when
// the pool was started (on the first call into this package). It is ≥ 1.
func Workers() int {
	return defaultPool().size
}

// ParallelFor calls f(task) once for every task in [0, tasks), spreading the
// calls over the pool and the calling goroutine, and returns when all have
// returned. Tasks are handed out dynamically in increasing order, so uneven
// tasks balance themselves; f must be safe to call concurrently for
// different tasks. With tasks ≤ 1 or a single worker everything runs inline.
// tasks ≤ 0 does nothing.
//
// If f panics, the tasks not yet started are skipped, and after the tasks
// already running have returned ParallelFor panics in the calling goroutine
// with the value of the first panic (the stack of the original panic is not
// kept). f must not call runtime.Goexit (so neither testing.T.FailNow nor
// Fatal): on a pool goroutine that would leave the call waiting forever.
func ParallelFor(tasks int, f func(task int)) {
	defaultPool().parallelFor(tasks, f)
}

// parallelFor is ParallelFor on p.
func (p *pool) parallelFor(tasks int, f func(task int)) {
	if tasks <= 0 {
		return
	}
	if tasks == 1 || p.size == 1 {
		for t := range tasks {
			f(t)
		}
		return
	}
	j := &job{f: f, n: int64(tasks)}
	j.wg.Add(tasks)
	j.left.Store(int64(tasks))
	// Invite up to tasks−1 helpers; when the queue is full (the pool is busy
	// with other calls) the caller simply does more of the work itself.
invite:
	for range min(tasks, p.size) - 1 {
		select {
		case p.jobs <- j:
		default:
			break invite
		}
	}
	j.run()
	j.wait()
	if fp := j.fault.Load(); fp != nil {
		panic(fp.value)
	}
}

// Parallel splits [0, n) into at most Workers() contiguous chunks of nearly
// equal size and calls f(lo, hi) for each chunk on the pool, the caller
// included; it returns when every chunk is done. It is ParallelGrain with a
// grain of 1: use ParallelGrain when single elements are too cheap to be
// worth a goroutine hand-off. n ≤ 0 does nothing. A panic in f is raised
// again in the calling goroutine, as for ParallelFor.
func Parallel(n int, f func(lo, hi int)) {
	defaultPool().parallelGrain(n, 1, f)
}

// ParallelGrain is Parallel with chunks of at least grain elements (except
// when n < grain): [0, n) is split into min(Workers(), n/grain) contiguous
// chunks, so a call with n < 2·grain, or with one worker, runs f(0, n)
// inline. grain < 1 is taken as 1. A panic in f is raised again in the
// calling goroutine, as for ParallelFor.
func ParallelGrain(n, grain int, f func(lo, hi int)) {
	defaultPool().parallelGrain(n, grain, f)
}

// parallelGrain is ParallelGrain on p.
func (p *pool) parallelGrain(n, grain int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := min(p.size, n/grain)
	if chunks <= 1 {
		f(0, n)
		return
	}
	p.parallelFor(chunks, func(c int) {
		f(c*n/chunks, (c+1)*n/chunks)
	})
}
