package fusion

import (
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
	"github.com/petermattis/goid"
)

// DefaultMaxNodes is the number of pending nodes at which a stream is
// drained without being asked (Options.MaxNodes' default).
const DefaultMaxNodes = 256

// DefaultMaxProgramOps is the most ops (nodes other than constants) of
// one fused program (Options.MaxProgramOps' default): longer groups are
// cut into several programs.
const DefaultMaxProgramOps = 64

// DefaultMaxSinkBytes is the size of a stream's unread results at which
// it is drained without being asked (Options.MaxSinkBytes' default).
const DefaultMaxSinkBytes = 1 << 30

// Options configure a fusion Backend.
type Options struct {
	// MaxNodes bounds a stream's pending nodes: reaching it drains the
	// stream. 0 means DefaultMaxNodes.
	MaxNodes int
	// MaxSinkBytes bounds the bytes of a stream's pending sinks (the
	// nodes no other pending node reads, each of which a drain must
	// allocate): reaching it drains the stream, so a loop that makes and
	// drops large results holds at most about this much at once, as it
	// would run eagerly. 0 means DefaultMaxSinkBytes.
	MaxSinkBytes int64
	// MaxProgramOps bounds the ops of one fused program: a group of more
	// ops of one shape runs as consecutive programs of at most this many,
	// each writing the values a later one reads. Long programs take long
	// to compile on backends that generate code (NVRTC's time grows with
	// the kernel's length), and a drain of a loop's ops then gives
	// programs of a few signatures, compiled once, instead of one
	// signature per length. 0 means DefaultMaxProgramOps.
	MaxProgramOps int
}

// Backend is the fusion decorator around a base backend that implements
// backend.Fuser (see the package doc). It is safe for concurrent use.
type Backend struct {
	inner      backend.Backend
	fuser      backend.Fuser
	maxNodes   int
	maxSink    int64
	maxProgram int

	// mu guards the streams, the flights and every Tensor's state.
	mu      sync.Mutex
	streams map[int64]*stream
	flights map[*flight]struct{}

	stats Stats
}

// Stats count the decorator's work since it was made (monotonic).
type Stats struct {
	// Nodes is the number of elementwise ops queued.
	Nodes atomic.Int64
	// Programs is the number of fused programs run (two or more nodes in
	// one pass).
	Programs atomic.Int64
	// Single is the number of groups of one node, run as that op alone.
	Single atomic.Int64
	// Declined is the number of programs the base backend declined, run
	// op by op (a layout it does not take, or a program whose kernel it
	// has not compiled yet: see backend.Fuser).
	Declined atomic.Int64
	// Flushes is the number of times a stream was drained.
	Flushes atomic.Int64
	// Recomputed is the number of recipes (intermediates a drain did not
	// write) computed on their own because a later use needed them.
	Recomputed atomic.Int64
}

// stream is one goroutine's queue of pending nodes, in creation order
// (a topological order).
type stream struct {
	nodes []*Tensor
	// sinkBytes is the size of the nodes no other node of the stream
	// reads (yet).
	sinkBytes int64
}

// flight is one drained stream being computed: its nodes wait on done.
type flight struct {
	done chan struct{}
}

var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.Wrapper       = (*Backend)(nil)
	_ backend.MemoryManager = (*Backend)(nil)
)

// New wraps inner, whose decorator chain must hold a backend.Fuser (found
// with backend.As); ok is false, and inner is returned unwrapped, when it
// has none.
func New(inner backend.Backend, opts Options) (b backend.Backend, ok bool) {
	f, ok := backend.As[backend.Fuser](inner)
	if !ok {
		return inner, false
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = DefaultMaxNodes
	}
	if opts.MaxSinkBytes <= 0 {
		opts.MaxSinkBytes = DefaultMaxSinkBytes
	}
	if opts.MaxProgramOps <= 0 {
		opts.MaxProgramOps = DefaultMaxProgramOps
	}
	return &Backend{
		inner:      inner,
		fuser:      f,
		maxNodes:   opts.MaxNodes,
		maxSink:    opts.MaxSinkBytes,
		maxProgram: opts.MaxProgramOps,
		streams:    make(map[int64]*stream),
		flights:    make(map[*flight]struct{}),
	}, true
}

// Stats returns the decorator's counters.
func (b *Backend) Stats() *Stats { return &b.stats }

// Unwrap returns the wrapped backend.
func (b *Backend) Unwrap() backend.Backend { return b.inner }

// ID identifies the device (the wrapped backend's).
func (b *Backend) ID() backend.DeviceID { return b.inner.ID() }

// Supports reports what the wrapped backend supports (the fused kinds are
// base kinds, which every backend runs), and the optimizer kinds
// (AdamStep, SGDStep), whose decomposition Exec runs itself.
func (b *Backend) Supports(k ir.Kind, dt ir.DType) bool {
	return b.inner.Supports(k, dt) || ownDecomposition(k)
}

// ownDecomposition reports whether Exec lowers k itself when the wrapped
// backend lacks it: the optimizer steps, whose decompositions are
// elementwise chains with several outputs that also feed the chain (the
// new moments), which the sink rule alone would not write.
func ownDecomposition(k ir.Kind) bool {
	return k.Valid() && ir.SpecOf(k).Group == ir.GroupOptimizer && ir.SpecOf(k).Decompose != nil
}

// SupportsDType reports what the wrapped backend supports.
func (b *Backend) SupportsDType(dt backend.DType) bool { return b.inner.SupportsDType(dt) }

// Exec queues an elementwise op the base backend fuses (returning a lazy
// *Tensor) and runs any other op on the wrapped backend once the fusion
// tensors among its inputs are computed.
func (b *Backend) Exec(op ir.Op) ir.Outputs {
	if b.fusable(&op) {
		return ir.One(b.enqueue(&op))
	}
	if ownDecomposition(op.Kind) && !b.inner.Supports(op.Kind, op.KeyDType()) {
		outs := ir.SpecOf(op.Kind).Decompose(op, b)
		b.mu.Lock()
		for _, o := range outs {
			if t, ok := o.(*Tensor); ok && t.st != nil {
				t.want = true
			}
		}
		b.mu.Unlock()
		return outs
	}
	b.resolveInputs(&op)
	return b.inner.Exec(op)
}

// fusable reports whether op is queued rather than run.
func (b *Backend) fusable(op *ir.Op) bool {
	if !ir.Fusable(op.Kind) {
		return false
	}
	n := ir.FusedNode{Kind: op.Kind, Sub: op.Sub, DType: op.DType}
	return b.fuser.FusesNode(&n, op.KeyDType())
}

// resolveInputs replaces the fusion tensors among op's inputs by their
// computed values.
func (b *Backend) resolveInputs(op *ir.Op) {
	for i, x := range op.In {
		if t, ok := x.(*Tensor); ok {
			op.In[i] = b.need(t)
		}
	}
	copied := false
	for i, x := range op.Xs {
		if t, ok := x.(*Tensor); ok {
			if !copied {
				op.Xs = append([]ir.Tensor(nil), op.Xs...) // never modify the caller's slice
				copied = true
			}
			op.Xs[i] = b.need(t)
		}
	}
}

// Inner returns the wrapped backend's tensor for x: x itself when it is
// not a fusion tensor, else its value, computed first when pending.
func (b *Backend) Inner(x backend.Tensor) backend.Tensor {
	if t, ok := x.(*Tensor); ok {
		return b.need(t)
	}
	return x
}

// FromData copies data onto the device (the wrapped backend's tensor).
func (b *Backend) FromData(data *backend.TensorData) backend.Tensor { return b.inner.FromData(data) }

// ToData computes x if it is pending and copies it to the host.
func (b *Backend) ToData(x backend.Tensor) (*backend.TensorData, error) {
	return b.inner.ToData(b.Inner(x))
}

// Flush drains every stream (their programs are dispatched; on an
// asynchronous backend nothing waits for them) and flushes the wrapped
// backend.
func (b *Backend) Flush() {
	b.drainAll()
	b.inner.Flush()
}

// Sync drains every stream, waits for the programs other goroutines are
// running, and syncs the wrapped backend.
func (b *Backend) Sync() error {
	b.drainAll()
	b.waitFlights()
	return b.inner.Sync()
}

// Seed drains every stream and re-seeds the wrapped backend.
func (b *Backend) Seed(seed uint64) {
	b.drainAll()
	b.inner.Seed(seed)
}

// drainAll drains every stream that has pending nodes now (streams that
// goroutines start meanwhile are theirs to drain).
func (b *Backend) drainAll() {
	b.mu.Lock()
	ss := make([]*stream, 0, len(b.streams))
	for _, s := range b.streams {
		ss = append(ss, s)
	}
	b.mu.Unlock()
	for _, s := range ss {
		b.drain(s, nil)
	}
}

// waitFlights waits for every program running now.
func (b *Backend) waitFlights() {
	b.mu.Lock()
	fs := make([]*flight, 0, len(b.flights))
	for f := range b.flights {
		fs = append(fs, f)
	}
	b.mu.Unlock()
	for _, f := range fs {
		<-f.done
	}
}

// MemoryPersistentAllocations drains every stream, then runs f with the
// wrapped backend's persistent allocations, draining again before the
// window closes, so that a pending node is computed on the side of the
// window where it was made. Without a memory manager below, f just runs.
func (b *Backend) MemoryPersistentAllocations(f func()) {
	b.drainAll()
	mm, ok := backend.As[backend.MemoryManager](b.inner)
	if !ok {
		f()
		b.drainAll()
		return
	}
	mm.MemoryPersistentAllocations(func() {
		defer b.drainAll()
		f()
	})
}

// MemoryCleanup drains every stream and releases the wrapped backend's
// cached memory.
func (b *Backend) MemoryCleanup() {
	b.drainAll()
	if mm, ok := backend.As[backend.MemoryManager](b.inner); ok {
		mm.MemoryCleanup()
	}
}

// MemoryInstallPools drains every stream and installs the pools on the
// wrapped backend (an *UnsupportedError without a memory manager).
func (b *Backend) MemoryInstallPools(layout backend.MemoryPoolLayout) error {
	b.drainAll()
	mm, ok := backend.As[backend.MemoryManager](b.inner)
	if !ok {
		return &backend.UnsupportedError{Backend: b.ID().Type}
	}
	return mm.MemoryInstallPools(layout)
}

// MemoryPoolReport is the wrapped backend's.
func (b *Backend) MemoryPoolReport() ([]backend.SlicedPoolReport, bool) {
	if mm, ok := backend.As[backend.MemoryManager](b.inner); ok {
		return mm.MemoryPoolReport()
	}
	return nil, false
}

// MemoryPoolUsage is the wrapped backend's, after draining every stream.
func (b *Backend) MemoryPoolUsage() (backend.MemoryPoolUsage, bool) {
	b.drainAll()
	if mm, ok := backend.As[backend.MemoryManager](b.inner); ok {
		return mm.MemoryPoolUsage()
	}
	return backend.MemoryPoolUsage{}, false
}

// Staging is the wrapped backend's (nothing without a memory manager).
func (b *Backend) Staging(data ...*backend.TensorData) {
	if mm, ok := backend.As[backend.MemoryManager](b.inner); ok {
		mm.Staging(data...)
	}
}

// streamOf returns the calling goroutine's stream, made when absent.
// b.mu must be held.
func (b *Backend) streamOf() *stream {
	id := goid.Get()
	s := b.streams[id]
	if s == nil {
		s = &stream{}
		b.streams[id] = s
	}
	return s
}
