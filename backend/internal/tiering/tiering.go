// Package tiering is the policy of tiered compilation as JIT compilers
// apply it (HotSpot's interpreter and C1/C2 tiers, V8's Ignition and
// TurboFan): work whose fast form must be compiled first runs in a slow
// form that is always available until it has been seen Threshold times;
// then its compilation is queued to a small pool of background workers,
// and the fast form is used once it is built. The caller never waits for
// a compilation, the same key is never built twice at once, and the work
// outstanding is bounded (Workers builds running, Queue waiting).
//
// The backends use it for the kernels of fused elementwise programs
// (backend/cuda: NVRTC takes milliseconds to seconds per kernel, while
// the same program runs op by op on kernels already built).
package tiering

import (
	"fmt"
	"sync"
)

// Defaults of Options' zero fields.
const (
	// DefaultThreshold is the number of sightings after which a key is
	// compiled: a key seen once (a one-off program) never is.
	DefaultThreshold = 2
	// DefaultQueue bounds the builds waiting for a worker.
	DefaultQueue = 64
	// DefaultMaxCold bounds the keys counted but not yet queued.
	DefaultMaxCold = 4096
)

// Options configure a Policy.
type Options struct {
	// Threshold is the number of Get calls of a key (sightings) that
	// queue its build: the Threshold-th sighting queues it. 0 means
	// DefaultThreshold; 1 queues a build at the first sighting.
	Threshold int
	// Workers is the number of builds that run at once, each on a
	// goroutine of its own that exits when the queue is empty. 0 means 1.
	Workers int
	// Queue bounds the builds waiting for a worker. A key that reaches
	// the threshold while the queue is full is not queued; its next
	// sighting tries again. 0 means DefaultQueue.
	Queue int
	// MaxCold bounds the keys that have been seen but not queued (cold
	// keys): when a new key would exceed it, every cold key is forgotten
	// and counts from zero again, so a stream of keys that never repeat
	// holds bounded memory. 0 means DefaultMaxCold.
	MaxCold int
}

// Stats count a Policy's work since it was made (monotonic).
type Stats struct {
	// Sightings counts the Get calls that found no built value (the
	// caller ran the slow form).
	Sightings int64
	// Queued counts the builds queued.
	Queued int64
	// QueueFull counts the keys that reached the threshold while the
	// queue was full (each such sighting once).
	QueueFull int64
	// Built counts the builds that succeeded; Failed those that returned
	// an error or panicked.
	Built, Failed int64
	// Forgotten counts the cold keys dropped to keep within MaxCold.
	Forgotten int64
}

// state is where a key is in its life.
type state uint8

const (
	cold     state = iota // seen, not queued
	queued                // waiting for a worker
	building              // a worker runs its build
	ready                 // built: Get returns its value
	failed                // its build failed: the next Get returns the error
)

// entry is one key's record.
type entry[V any] struct {
	state state
	seen  int
	build func() (V, error)
	v     V
	err   error
}

// Policy is the tiered-compilation policy over keys K whose built values
// are V. The zero Policy is not usable; make one with New. It is safe for
// concurrent use.
type Policy[K comparable, V any] struct {
	opts Options

	mu      sync.Mutex
	idle    sync.Cond // signalled when no build is queued or running
	keys    map[K]*entry[V]
	cold    int // keys in state cold
	queue   []K // keys in state queued, oldest first
	running int // workers running
	builds  int // keys in state building
	stats   Stats
}

// New returns a Policy with opts (zero fields take their defaults).
func New[K comparable, V any](opts Options) *Policy[K, V] {
	if opts.Threshold <= 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.MaxCold <= 0 {
		opts.MaxCold = DefaultMaxCold
	}
	p := &Policy[K, V]{opts: opts, keys: make(map[K]*entry[V])}
	p.idle.L = &p.mu
	return p
}

// Options returns the options in effect (defaults filled in).
func (p *Policy[K, V]) Options() Options { return p.opts }

// Get returns key's built value with ok true once its build has
// succeeded. Otherwise it records a sighting of key and returns ok false:
// the caller runs the slow form. The sighting that brings key to the
// threshold queues build (a later sighting's build is not used while one
// is queued or running), which a worker runs without any lock held; a
// full queue leaves key at the threshold, so that its next sighting
// tries again.
//
// A failed build (an error, or a panic, which becomes an error naming
// key) is returned once, as err, by the next Get of key, and key starts
// cold again: a later build is tried after Threshold more sightings.
func (p *Policy[K, V]) Get(key K, build func() (V, error)) (v V, ok bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.keys[key]
	if e == nil {
		if p.cold >= p.opts.MaxCold {
			p.forgetCold()
		}
		e = &entry[V]{}
		p.keys[key] = e
		p.cold++
	}
	switch e.state {
	case ready:
		return e.v, true, nil
	case failed:
		err = e.err
		*e = entry[V]{} // cold again
		p.cold++
		return v, false, err
	case queued, building:
		p.stats.Sightings++
		return v, false, nil
	}
	p.stats.Sightings++
	if e.seen < p.opts.Threshold {
		e.seen++
	}
	if e.seen < p.opts.Threshold {
		return v, false, nil
	}
	if len(p.queue) >= p.opts.Queue {
		p.stats.QueueFull++
		return v, false, nil
	}
	e.state, e.build = queued, build
	p.cold--
	p.queue = append(p.queue, key)
	p.stats.Queued++
	if p.running < p.opts.Workers {
		p.running++
		go p.work()
	}
	return v, false, nil
}

// forgetCold drops every cold key. p.mu must be held.
func (p *Policy[K, V]) forgetCold() {
	for k, e := range p.keys {
		if e.state == cold {
			delete(p.keys, k)
			p.stats.Forgotten++
		}
	}
	p.cold = 0
}

// work runs queued builds until the queue is empty.
func (p *Policy[K, V]) work() {
	p.mu.Lock()
	for len(p.queue) > 0 {
		key := p.queue[0]
		p.queue[0] = *new(K)
		p.queue = p.queue[1:]
		e := p.keys[key]
		build := e.build
		e.state, e.build = building, nil
		p.builds++
		p.mu.Unlock()
		v, err := runBuild(key, build)
		p.mu.Lock()
		p.builds--
		if err != nil {
			e.state, e.err = failed, err
			p.stats.Failed++
		} else {
			e.state, e.v = ready, v
			p.stats.Built++
		}
	}
	p.queue = nil // let the backing array go
	p.running--
	if p.running == 0 {
		p.idle.Broadcast()
	}
	p.mu.Unlock()
}

// runBuild runs build, turning a panic into an error naming key.
func runBuild[K comparable, V any](key K, build func() (V, error)) (v V, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("tiering: build of %v panicked: %w", key, e)
			} else {
				err = fmt.Errorf("tiering: build of %v panicked: %v", key, r)
			}
		}
	}()
	return build()
}

// Wait blocks until no build is queued or running (builds that sightings
// queue meanwhile are waited for too).
func (p *Policy[K, V]) Wait() {
	p.mu.Lock()
	for p.running > 0 {
		p.idle.Wait()
	}
	p.mu.Unlock()
}

// Pending returns the number of builds queued or running.
func (p *Policy[K, V]) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue) + p.builds
}

// Stats returns a copy of the counters.
func (p *Policy[K, V]) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
