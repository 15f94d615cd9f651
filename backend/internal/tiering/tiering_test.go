package tiering

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// counted returns a build of key's value (its square) that counts its
// runs in n.
func counted(n *atomic.Int64, key int) func() (int, error) {
	return func() (int, error) {
		n.Add(1)
		return key * key, nil
	}
}

func TestThreshold(t *testing.T) {
	for _, th := range []int{1, 2, 5} {
		p := New[int, int](Options{Threshold: th})
		var runs atomic.Int64
		for i := 1; i < th; i++ {
			if _, ok, err := p.Get(7, counted(&runs, 7)); ok || err != nil {
				t.Fatalf("threshold %d: sighting %d: ok %v err %v", th, i, ok, err)
			}
		}
		p.Wait()
		if runs.Load() != 0 || p.Stats().Queued != 0 {
			t.Fatalf("threshold %d: built after %d sightings (%d runs, %+v)", th, th-1, runs.Load(), p.Stats())
		}
		// The threshold-th sighting queues the build but still declines.
		if _, ok, _ := p.Get(7, counted(&runs, 7)); ok {
			t.Fatalf("threshold %d: the sighting that queues the build returned a value", th)
		}
		p.Wait()
		v, ok, err := p.Get(7, counted(&runs, 7))
		if !ok || err != nil || v != 49 {
			t.Fatalf("threshold %d: after the build: %v %v %v, want 49 true nil", th, v, ok, err)
		}
		if runs.Load() != 1 {
			t.Fatalf("threshold %d: %d builds, want 1", th, runs.Load())
		}
		st := p.Stats()
		if st.Sightings != int64(th) || st.Queued != 1 || st.Built != 1 || st.Failed != 0 {
			t.Errorf("threshold %d: stats %+v", th, st)
		}
	}
	if got := New[int, int](Options{}).Options(); got.Threshold != DefaultThreshold || got.Workers != 1 ||
		got.Queue != DefaultQueue || got.MaxCold != DefaultMaxCold {
		t.Errorf("defaults %+v", got)
	}
}

// TestNoDuplicateBuilds: while a key's build runs, its sightings neither
// block nor queue it again.
func TestNoDuplicateBuilds(t *testing.T) {
	p := New[string, int](Options{Threshold: 1, Workers: 4})
	release := make(chan struct{})
	var runs atomic.Int64
	slow := func() (int, error) {
		runs.Add(1)
		<-release
		return 3, nil
	}
	for range 100 {
		if _, ok, err := p.Get("k", slow); ok || err != nil {
			t.Fatalf("Get during the build: %v %v", ok, err)
		}
	}
	if n := p.Pending(); n != 1 {
		t.Errorf("%d builds pending, want 1", n)
	}
	close(release)
	p.Wait()
	if v, ok, _ := p.Get("k", slow); !ok || v != 3 {
		t.Fatalf("after the build: %v %v", v, ok)
	}
	if runs.Load() != 1 {
		t.Errorf("%d builds of one key, want 1", runs.Load())
	}
	if st := p.Stats(); st.Queued != 1 || st.Sightings != 100 {
		t.Errorf("stats %+v, want 1 queued and 100 sightings", st)
	}
}

// TestBoundedQueueAndWorkers: at most Workers builds run and Queue wait;
// a key that reaches the threshold on a full queue is queued by a later
// sighting once there is room.
func TestBoundedQueueAndWorkers(t *testing.T) {
	const workers, queue = 2, 3
	p := New[int, int](Options{Threshold: 1, Workers: workers, Queue: queue})
	release := make(chan struct{})
	var running, peak, runs atomic.Int64
	started := make(chan struct{}, 100)
	build := func(k int) func() (int, error) {
		return func() (int, error) {
			n := running.Add(1)
			for {
				m := peak.Load()
				if n <= m || peak.CompareAndSwap(m, n) {
					break
				}
			}
			runs.Add(1)
			started <- struct{}{}
			<-release
			running.Add(-1)
			return -k, nil
		}
	}
	// The first two keys are taken by the workers, the next three wait.
	for k := range workers + queue {
		p.Get(k, build(k))
		if k < workers {
			<-started // its worker holds it
		}
	}
	if n := p.Pending(); n != workers+queue {
		t.Fatalf("%d pending, want %d", n, workers+queue)
	}
	// The queue is full: key 100 reaches the threshold but is not queued.
	p.Get(100, build(100))
	p.Get(100, build(100))
	if st := p.Stats(); st.Queued != workers+queue || st.QueueFull != 2 {
		t.Fatalf("on a full queue: %+v", st)
	}
	close(release)
	p.Wait()
	if peak.Load() > workers {
		t.Errorf("%d builds ran at once, want at most %d", peak.Load(), workers)
	}
	if runs.Load() != workers+queue {
		t.Errorf("%d builds, want %d", runs.Load(), workers+queue)
	}
	// Key 100 is still hot: its next sighting queues it.
	p.Get(100, build(100))
	p.Wait()
	if v, ok, _ := p.Get(100, nil); !ok || v != -100 {
		t.Errorf("key 100 after a later sighting: %v %v", v, ok)
	}
}

// TestFailedBuild: a build's error (or panic) reaches the next Get of its
// key once, and the key is cold again.
func TestFailedBuild(t *testing.T) {
	p := New[int, int](Options{Threshold: 1})
	boom := errors.New("boom")
	var runs atomic.Int64
	fail := func() (int, error) { runs.Add(1); return 0, boom }
	p.Get(1, fail)
	p.Wait()
	_, ok, err := p.Get(1, fail)
	if ok || !errors.Is(err, boom) {
		t.Fatalf("after a failed build: ok %v err %v, want the build's error", ok, err)
	}
	// Reported once: the key is cold again, and the next sighting (the
	// threshold is 1) queues another build instead of reporting.
	if _, ok, err = p.Get(1, fail); ok || err != nil {
		t.Fatalf("the sighting after the report: ok %v err %v, want a plain decline", ok, err)
	}
	p.Wait()
	if runs.Load() != 2 {
		t.Fatalf("%d builds, want 2 (one per queueing sighting)", runs.Load())
	}

	q := New[int, int](Options{Threshold: 1})
	q.Get(2, func() (int, error) { panic("bad source") })
	q.Wait()
	if _, ok, err := q.Get(2, nil); ok || err == nil || !strings.Contains(err.Error(), "bad source") {
		t.Fatalf("a panicking build: ok %v err %v", ok, err)
	}
	if st := q.Stats(); st.Failed != 1 || st.Built != 0 {
		t.Errorf("stats %+v", st)
	}
	// Cold again: it takes a new sighting to queue a build.
	q.Get(2, func() (int, error) { return 5, nil })
	q.Wait()
	if v, ok, err := q.Get(2, nil); !ok || err != nil || v != 5 {
		t.Errorf("rebuilt after a failure: %v %v %v", v, ok, err)
	}
}

// TestErrorReportedOnce checks the exact sequence of a failing key with
// threshold 2: two sightings queue, the next Get reports the error, two
// more sightings queue again.
func TestErrorReportedOnce(t *testing.T) {
	p := New[int, int](Options{Threshold: 2})
	boom := errors.New("boom")
	var runs atomic.Int64
	fail := func() (int, error) { runs.Add(1); return 0, boom }
	var errs int
	for i := range 6 {
		_, ok, err := p.Get(1, fail)
		if ok {
			t.Fatalf("call %d returned a value", i)
		}
		if err != nil {
			errs++
		}
		p.Wait()
	}
	// Calls: sight, queue+fail, report, sight, queue+fail, report.
	if errs != 2 || runs.Load() != 2 {
		t.Errorf("%d errors reported and %d builds over 6 calls, want 2 and 2", errs, runs.Load())
	}
}

// TestMaxCold: keys that never repeat are forgotten in bulk, keeping the
// record bounded; a forgotten key counts from zero.
func TestMaxCold(t *testing.T) {
	p := New[int, int](Options{Threshold: 2, MaxCold: 8})
	for k := range 100 {
		p.Get(k, nil)
		p.mu.Lock()
		n := len(p.keys)
		p.mu.Unlock()
		if n > 8 {
			t.Fatalf("%d keys recorded after %d distinct keys, want at most 8", n, k+1)
		}
	}
	if st := p.Stats(); st.Forgotten < 90 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	// Key 0 was forgotten: one more sighting does not reach threshold 2.
	p.Get(0, func() (int, error) { return 1, nil })
	p.Wait()
	if p.Stats().Queued != 0 {
		t.Error("a forgotten key kept its count")
	}
	// Queued and built keys are never forgotten.
	q := New[int, int](Options{Threshold: 1, MaxCold: 2})
	q.Get(-1, func() (int, error) { return 42, nil })
	q.Wait()
	for k := range 50 {
		q.Get(k*1000+1, func() (int, error) { return 0, errors.New("x") })
	}
	q.Wait()
	if v, ok, _ := q.Get(-1, nil); !ok || v != 42 {
		t.Errorf("a built key was forgotten: %v %v", v, ok)
	}
}

// TestConcurrent hammers one policy from many goroutines over a small key
// space (run with -race): each key is built at most once, every key seen
// Threshold times is built, and the values are right.
func TestConcurrent(t *testing.T) {
	const keys, goroutines, calls = 40, 16, 2000
	p := New[int, string](Options{Threshold: 3, Workers: 3, Queue: 8})
	var builds [keys]atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range calls {
				k := r.IntN(keys)
				v, ok, err := p.Get(k, func() (string, error) {
					builds[k].Add(1)
					return fmt.Sprint("k", k), nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if ok && v != fmt.Sprint("k", k) {
					t.Errorf("key %d: value %q", k, v)
					return
				}
			}
		})
	}
	wg.Wait()
	p.Wait()
	for k := range keys {
		if n := builds[k].Load(); n > 1 {
			t.Errorf("key %d built %d times", k, n)
		}
		// Every key was seen far more often than the threshold; one more
		// sighting queues any that found the queue full.
		p.Get(k, func() (string, error) { builds[k].Add(1); return fmt.Sprint("k", k), nil })
	}
	p.Wait()
	for k := range keys {
		if v, ok, _ := p.Get(k, nil); !ok || v != fmt.Sprint("k", k) {
			t.Errorf("key %d not built: %q %v", k, v, ok)
		}
		if n := builds[k].Load(); n != 1 {
			t.Errorf("key %d built %d times, want 1", k, n)
		}
	}
	if st := p.Stats(); st.Built != keys || st.Queued != keys {
		t.Errorf("stats %+v, want %d built and queued", st, keys)
	}
}
