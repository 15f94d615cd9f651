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
package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool is the process-wide worker pool.
var pool struct {
	once sync.Once
	size int       // number of workers including the caller
	jobs chan *job // invitations to help with a job
}

// job is one call of ParallelFor: tasks [0, n) claimed through next.
type job struct {
	f    func(task int)
	n    int64
	next atomic.Int64
	left atomic.Int64 // tasks not finished yet
	wg   sync.WaitGroup
}

// start launches the pool goroutines (once).
func start() {
	pool.once.Do(func() {
		pool.size = max(1, runtime.GOMAXPROCS(0))
		pool.jobs = make(chan *job, 4*pool.size)
		for range pool.size - 1 {
			go worker()
		}
	})
}

// spinFor is how long an idle worker, or a caller waiting for the last
// tasks of its call, polls before blocking. Blocking parks the OS thread,
// and waking a parked thread (on virtual machines, an idle virtual CPU)
// costs tens of microseconds, as much as a whole small product; back-to-back
// parallel calls, as in a blocked matrix product, find the pool awake.
const spinFor = 50 * time.Microsecond

// worker runs jobs from the queue until the program exits.
func worker() {
	for {
		var j *job
		select {
		case j = <-pool.jobs:
		default:
			j = spinReceive()
		}
		j.run()
	}
}

// spinReceive polls the job queue for spinFor, then blocks on it.
func spinReceive() *job {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		select {
		case j := <-pool.jobs:
			return j
		default:
		}
		if i%16 == 15 && time.Now().After(deadline) {
			return <-pool.jobs
		}
	}
}

// run claims and executes tasks of j until none is left.
func (j *job) run() {
	for {
		t := j.next.Add(1) - 1
		if t >= j.n {
			return
		}
		j.f(int(t))
		j.left.Add(-1)
		j.wg.Done()
	}
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
	start()
	return pool.size
}

// ParallelFor calls f(task) once for every task in [0, tasks), spreading the
// calls over the pool and the calling goroutine, and returns when all have
// returned. Tasks are handed out dynamically in increasing order, so uneven
// tasks balance themselves; f must be safe to call concurrently for
// different tasks. With tasks ≤ 1 or a single worker everything runs inline.
// tasks ≤ 0 does nothing. A panic in f on a pool goroutine crashes the
// program, as for any goroutine.
func ParallelFor(tasks int, f func(task int)) {
	if tasks <= 0 {
		return
	}
	start()
	if tasks == 1 || pool.size == 1 {
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
	for range min(tasks, pool.size) - 1 {
		select {
		case pool.jobs <- j:
		default:
			break invite
		}
	}
	j.run()
	j.wait()
}

// Parallel splits [0, n) into at most Workers() contiguous chunks of nearly
// equal size and calls f(lo, hi) for each chunk on the pool, the caller
// included; it returns when every chunk is done. It is ParallelGrain with a
// grain of 1: use ParallelGrain when single elements are too cheap to be
// worth a goroutine hand-off. n ≤ 0 does nothing.
func Parallel(n int, f func(lo, hi int)) {
	ParallelGrain(n, 1, f)
}

// ParallelGrain is Parallel with chunks of at least grain elements (except
// when n < grain): [0, n) is split into min(Workers(), n/grain) contiguous
// chunks, so a call with n < 2·grain, or with one worker, runs f(0, n)
// inline. grain < 1 is taken as 1.
func ParallelGrain(n, grain int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := min(Workers(), n/grain)
	if chunks <= 1 {
		f(0, n)
		return
	}
	ParallelFor(chunks, func(c int) {
		f(c*n/chunks, (c+1)*n/chunks)
	})
}
