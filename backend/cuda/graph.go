package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

var (
	_ backend.GraphRecorder = (*Backend)(nil)
	_ backend.DeviceGraph   = (*DeviceGraph)(nil)
)

// ErrRecording is wrapped by the errors of the calls that would wait for
// the device (Sync, ToData) or launch a graph while the backend records
// one, and by BeginGraph's while a recording is under way.
var ErrRecording = errors.New("the device is recording a graph")

// BeginGraph starts recording the work queued on the backend's stream into
// a CUDA graph (cuStreamBeginCapture_v2 in relaxed mode, so that the
// goroutine may move between OS threads): until EndGraph, Exec, ExecFused,
// CopyInto and the kernels launched through Launch are recorded, not run
// (backend.GraphRecorder). Before the capture starts, BeginGraph creates
// the cuBLAS handle when libcublas is present and the indexing kernels'
// status word, and releases the cached pages of the backend's pools that
// hold no live tensor (as MemoryCleanup), so that the graph's own memory
// can take their place.
//
// Memory: every buffer allocated while recording comes from an allocator
// of the graph's own (the preset layout, whatever MemoryInstallPools set)
// and returns there when its tensor is dropped, at any later time, so no
// work outside the graph is ever given it. While recording, a buffer the
// recording dropped may be reused by later recorded work (the graph runs
// its work in recording order). The graph's allocator never gives a page
// back before the graph is closed, not even when the device is out of
// memory; an allocation it cannot serve fails as Exec does. Buffers made
// before the recording that the ops recorded through Exec take as inputs,
// or that CopyInto reads or writes (a model's parameters, NewStatic
// tensors), are kept by the graph until it is closed, and Release leaves
// them to the garbage collector meanwhile; the operands of kernels
// launched directly with Launch are the caller's to keep.
// MemoryPoolUsage counts the graphs' memory; MemoryPoolReport lists the
// backend's own pools only.
//
// While recording, the values of random ops are fixed when they are
// recorded: every launch draws the same numbers. Sync returns an error
// wrapping ErrRecording; cuStreamSynchronize and cuMemFree, which would
// invalidate the capture, are held back by the allocator until the
// capture ends. Only the recording goroutine may queue work.
//
// BeginGraph returns an error wrapping backend.ErrGraphsUnsupported when
// the driver lacks the graph entry points, one wrapping ErrRecording when
// a recording is under way, the sticky fault of a failed device, or the
// driver's error.
func (b *Backend) BeginGraph() error {
	if err := cu.GraphsAvailable(); err != nil {
		return fmt.Errorf("%v: BeginGraph: %w: %w", b.id, backend.ErrGraphsUnsupported, err)
	}
	if err := b.failed(); err != nil {
		return err
	}
	b.graphMu.Lock()
	defer b.graphMu.Unlock()
	if b.rec.Load() != nil {
		return fmt.Errorf("%v: BeginGraph: %w (EndGraph ends it)", b.id, ErrRecording)
	}
	if err := b.prepareRecording(); err != nil {
		return err
	}
	r := &recording{
		alloc:  newGraphAllocator(&cuMemory{ctx: b.ctx, stream: b.stream, gate: &b.gate}, collectGarbage),
		pinned: map[*Buffer]struct{}{},
	}
	exit, err := b.enterErr()
	if err != nil {
		return err
	}
	defer exit()
	b.rec.Store(r)
	if err := b.gate.begin(func() error { return cu.StreamBeginCapture(b.stream, cu.CaptureModeRelaxed) }); err != nil {
		b.rec.Store(nil)
		return b.failf(err, "BeginGraph: starting the stream capture")
	}
	b.alloc.adopt(r.alloc)
	return nil
}

// prepareRecording does, before a capture, what would otherwise happen at
// the first use inside it: the status word and the cuBLAS handle (its
// absence is left to the first matmul to report), and the release of the
// pools' unused pages.
func (b *Backend) prepareRecording() (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	b.statusWord()
	func() {
		defer func() {
			if r := recover(); r != nil && (b.blasErr == nil || r != any(b.blasErr)) {
				panic(r)
			}
		}()
		b.cublasHandle()
	}()
	collectGarbage()
	b.alloc.cleanup()
	return nil
}

// EndGraph ends the recording that BeginGraph started
// (cuStreamEndCapture) and returns the recorded work as a *DeviceGraph
// ready to launch (cuGraphInstantiateWithFlags). The capture is ended
// whatever happened while recording; the device records no more
// afterwards. It fails, returning no graph, when an op panicked while
// recording (the error wraps the op's), when an illegal driver call
// invalidated the capture, when instantiation fails, and when the device
// is not recording. After a failure the recording's memory is given back
// as its tensors are dropped.
func (b *Backend) EndGraph() (backend.DeviceGraph, error) {
	b.graphMu.Lock()
	defer b.graphMu.Unlock()
	r := b.rec.Load()
	if r == nil {
		return nil, fmt.Errorf("%v: EndGraph: the device is not recording a graph", b.id)
	}
	unlock := b.lockCtx() // even after a sticky fault: the capture must end
	var g cu.Graph
	var endErr error
	b.gate.end(func() {
		g, endErr = cu.StreamEndCapture(b.stream)
		b.rec.Store(nil)
	})
	st := &graphState{b: b, alloc: r.alloc, pinned: r.pinned, host: r.host}
	fail := func(err error) (backend.DeviceGraph, error) {
		if g != 0 {
			_ = cu.GraphDestroy(g)
		}
		unlock()
		_ = st.release()
		return nil, err
	}
	r.mu.Lock()
	opErr := r.err
	r.mu.Unlock()
	switch {
	case opErr != nil && endErr != nil:
		return fail(fmt.Errorf("%v: EndGraph: recording failed: %w (ending the capture: %v)", b.id, opErr, endErr))
	case opErr != nil:
		return fail(fmt.Errorf("%v: EndGraph: recording failed: %w", b.id, opErr))
	case endErr != nil:
		return fail(b.failf(endErr, "EndGraph: ending the stream capture (a call the capture forbids invalidates it)"))
	case b.failed() != nil:
		return fail(b.failed())
	}
	exec, err := cu.GraphInstantiate(g, 0)
	_ = cu.GraphDestroy(g)
	g = 0
	if err != nil {
		return fail(b.failf(err, "EndGraph: instantiating the graph"))
	}
	unlock()
	st.exec = exec
	dg := &DeviceGraph{b: b, st: st}
	dg.cleanup = runtime.AddCleanup(dg, func(s *graphState) { _ = s.release() }, st)
	return dg, nil
}

// NewStatic returns a new contiguous tensor of shape and dt with
// unspecified contents from the backend's own pools, outside every
// graph's memory, even while recording (backend.GraphRecorder): the
// tensors a graph's inputs are copied into before a launch (CopyInto) and
// its results are copied to. It panics with an error wrapping
// backend.ErrOutOfMemory when the device is full.
func (b *Backend) NewStatic(shape []int, dt backend.DType) backend.Tensor {
	s := append([]int(nil), shape...)
	n := uint64(backend.NumElements(s)) * uint64(dt.Size())
	buf := b.newBufferIn(b.alloc, b.rec.Load(), n)
	buf.static = true
	return &Tensor{buf: buf, shape: s, strides: layout.RowMajorStrides(s), dtype: dt}
}

// CopyInto copies src (any layout: cuMemcpyDtoDAsync when contiguous, the
// strided copy kernel otherwise) into dst, a contiguous tensor whose
// buffer NewStatic made, of src's shape and dtype (backend.GraphRecorder).
// The copy is queued on the stream, or recorded while the backend records
// a graph. It returns an error naming the device, the shapes and the
// dtypes when they differ, when dst is not from NewStatic or not
// contiguous, when an operand is not a tensor of this backend (wrapping
// backend.ErrInvalidDevice), and the driver's error when the copy cannot
// be queued.
func (b *Backend) CopyInto(dst, src backend.Tensor) (err error) {
	d, ok := dst.(*Tensor)
	if !ok {
		return fmt.Errorf("%v: CopyInto: %w: dst is a %T, not a tensor of the cuda backend", b.id, backend.ErrInvalidDevice, dst)
	}
	s, ok := src.(*Tensor)
	if !ok {
		return fmt.Errorf("%v: CopyInto: %w: src is a %T, not a tensor of the cuda backend", b.id, backend.ErrInvalidDevice, src)
	}
	if d.buf == nil || !d.buf.static {
		return fmt.Errorf("%v: CopyInto: dst (%v %v) was not made by NewStatic", b.id, d.dtype, d.shape)
	}
	if d.dtype != s.dtype || !slices.Equal(d.shape, s.shape) {
		return fmt.Errorf("%v: CopyInto: src is %v %v but dst is %v %v (shape and dtype must match)", b.id, s.dtype, s.shape, d.dtype, d.shape)
	}
	if !d.IsContiguous() {
		return fmt.Errorf("%v: CopyInto: dst (%v %v, strides %v) is not contiguous", b.id, d.dtype, d.shape, d.strides)
	}
	if err := b.failed(); err != nil {
		return err
	}
	n := uint64(d.NumElements()) * uint64(d.dtype.Size())
	if n == 0 {
		return nil
	}
	r := b.rec.Load()
	if r != nil {
		r.pin(d)
		r.pin(s)
	}
	defer func() {
		if p := recover(); p != nil {
			e, ok := p.(error)
			if !ok {
				e = fmt.Errorf("%v: CopyInto %v %v: %v", b.id, s.dtype, s.shape, p)
			}
			if r != nil {
				r.setErr(e)
			}
			err = e
		}
	}()
	if s.buf == d.buf {
		if s.IsContiguous() && s.Ptr() == d.Ptr() {
			return nil
		}
		s = b.stridedCopy(s) // src overlaps dst: copy it out first
	}
	if s.IsContiguous() {
		exit := b.enter()
		e := cu.MemcpyDtoDAsync(d.Ptr(), s.Ptr(), n, b.stream)
		exit()
		if e != nil {
			err := b.failf(e, "CopyInto %v %v", s.dtype, s.shape)
			if r != nil {
				r.setErr(err)
			}
			return err
		}
	} else {
		b.stridedCopyInto(d, s)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(d)
	return nil
}

// stridedCopy returns a new contiguous copy of t (any layout).
func (b *Backend) stridedCopy(t *Tensor) *Tensor {
	out := b.emptyOf(slices.Clone(t.shape), t.dtype)
	b.stridedCopyInto(out, t)
	return out
}

// stridedCopyInto copies src into the contiguous dst of its shape and
// dtype with the strided copy kernel.
func (b *Backend) stridedCopyInto(dst, src *Tensor) {
	if copyStrided == nil {
		panic(fmt.Errorf("%v: CopyInto: no strided copy kernel is registered", b.id))
	}
	copyStrided(b, dst, src)
}

// DeviceGraph is a CUDA graph recorded by BeginGraph and EndGraph
// (backend.DeviceGraph): an instantiated cuGraphExec, the memory of the
// tensors made while it was recorded, and references to the buffers made
// before that its recorded ops and copies use (see BeginGraph). It is
// safe for concurrent use. A graph that becomes unreachable without Close
// is closed by the garbage collector.
type DeviceGraph struct {
	b       *Backend
	mu      sync.Mutex
	st      *graphState // nil once closed
	cleanup runtime.Cleanup
}

// graphState is what a DeviceGraph owns and Close releases.
type graphState struct {
	b      *Backend
	exec   cu.GraphExec // 0 for a failed recording
	alloc  *allocator
	pinned map[*Buffer]struct{}
	host   []unsafe.Pointer
}

// Launch queues one run of the graph on the backend's stream
// (cuGraphLaunch) and returns at once: its results are read as any
// queued work's, after the launch in stream order (ToData, Sync, ops
// queued later); faults surface at the next Sync. Inputs are read from
// the NewStatic tensors at the time the launch runs, so CopyInto calls
// queued before Launch feed it. Launch returns an error after Close,
// while the backend records a graph (wrapping ErrRecording), with the
// sticky fault of a failed device, or with the driver's error.
func (g *DeviceGraph) Launch() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.b
	if g.st == nil {
		return fmt.Errorf("%v: launching a device graph: the graph is closed", b.id)
	}
	if err := b.notRecording("launching a device graph"); err != nil {
		return err
	}
	exit, err := b.enterErr()
	if err != nil {
		return err
	}
	defer exit()
	if err := cu.GraphLaunch(g.st.exec, b.stream); err != nil {
		return b.failf(err, "launching a device graph")
	}
	return nil
}

// Close destroys the executable graph (launches already queued still
// complete), drops its references to buffers made before the recording,
// and gives back the memory of the tensors made while recording: the
// pages that hold no live tensor now, the others when their last tensor
// is dropped. Tensors made while recording must not be read afterwards.
// Close is idempotent; it returns the driver's error from destroying the
// graph, if any.
func (g *DeviceGraph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st == nil {
		return nil
	}
	g.cleanup.Stop()
	err := g.st.release()
	g.st = nil
	return err
}

// release destroys the executable, unpins the buffers, closes the
// allocator and frees the page-locked copies, once the stream is past the
// launches queued so far (and not while a capture is under way).
func (s *graphState) release() error {
	b := s.b
	var err error
	if s.exec != 0 {
		unlock := b.lockCtx()
		if e := cu.GraphExecDestroy(s.exec); e != nil {
			err = b.failf(e, "closing a device graph")
		}
		unlock()
		s.exec = 0
	}
	for buf := range s.pinned {
		buf.pins.Add(-1)
	}
	s.pinned = nil
	s.alloc.close()
	for _, p := range s.host {
		b.gate.whenIdle(func() {
			defer b.lockCtx()()
			_ = cu.StreamSynchronize(b.stream)
			_ = cu.MemFreeHost(p)
		})
	}
	s.host = nil
	return err
}

// recording is the state of a graph being recorded: its allocator, the
// first failure of an op, the buffers made before the recording that the
// recorded work uses (pinned), and the page-locked host copies the graph
// uploads from at every launch.
type recording struct {
	alloc  *allocator
	mu     sync.Mutex
	err    error
	pinned map[*Buffer]struct{}
	host   []unsafe.Pointer
}

// setErr records err as the recording's failure unless one came first.
func (r *recording) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// pin keeps t's buffer for the graph when it was not allocated by the
// recording (until the graph is closed).
func (r *recording) pin(t *Tensor) {
	if t == nil || t.buf == nil || t.buf.a == r.alloc || t.buf.blk == nil || t.buf.blk.size == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pinned[t.buf]; !ok {
		r.pinned[t.buf] = struct{}{}
		t.buf.pins.Add(1)
	}
}

// execRecorded is Exec while recording: it pins the op's inputs and
// records a panic of the op as the recording's failure before passing it
// on.
func (b *Backend) execRecorded(r *recording, op ir.Op) ir.Outputs {
	for _, x := range op.In {
		if t, ok := x.(*Tensor); ok {
			r.pin(t)
		}
	}
	for _, x := range op.Xs {
		if t, ok := x.(*Tensor); ok {
			r.pin(t)
		}
	}
	defer r.recordPanic("op " + op.Name())
	return kernels.Exec(b, op)
}

// recordPanic, deferred by an entry point that queues work while
// recording, records a panic of what as the recording's failure and
// passes the panic on.
func (r *recording) recordPanic(what string) {
	if p := recover(); p != nil {
		if e, ok := p.(error); ok {
			r.setErr(fmt.Errorf("%s: %w", what, e))
		} else {
			r.setErr(fmt.Errorf("%s: %v", what, p))
		}
		panic(p)
	}
}

// uploadRecorded records the upload of src into t (contiguous, len(src)
// bytes) while the backend records a graph and reports true; it reports
// false, doing nothing, otherwise. The bytes are copied to page-locked
// memory that the graph owns, and every launch copies them from there,
// so the caller's slice may change or die at once. It panics as FromData
// does on a driver error.
func (b *Backend) uploadRecorded(t *Tensor, src []byte) bool {
	r := b.rec.Load()
	if r == nil || len(src) == 0 {
		return false
	}
	defer b.enter()()
	p, err := cu.MemHostAlloc(uint64(len(src)), 0)
	if err != nil {
		e := b.fail(err)
		r.setErr(e)
		panic(e)
	}
	copy(unsafe.Slice((*byte)(p), len(src)), src)
	r.mu.Lock()
	r.host = append(r.host, p)
	r.mu.Unlock()
	if err := cu.MemcpyHtoDAsync(t.Ptr(), p, uint64(len(src)), b.stream); err != nil {
		e := b.fail(err)
		r.setErr(e)
		panic(e)
	}
	runtime.KeepAlive(t)
	return true
}

// notRecording returns nil, or an error wrapping ErrRecording naming the
// device and what while the backend records a graph.
func (b *Backend) notRecording(what string) error {
	if b.rec.Load() == nil {
		return nil
	}
	return fmt.Errorf("%v: %s: %w (EndGraph ends it)", b.id, what, ErrRecording)
}

// enterErr is enter returning the sticky fault or the driver's error
// instead of panicking.
func (b *Backend) enterErr() (func(), error) {
	if err := b.failed(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	if err := cu.CtxSetCurrent(b.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, b.fail(err)
	}
	return runtime.UnlockOSThread, nil
}

// lockCtx locks the goroutine to its thread and makes the context current
// there, even after a sticky fault (for the calls that end a capture or
// destroy a graph).
func (b *Backend) lockCtx() func() {
	runtime.LockOSThread()
	_ = cu.CtxSetCurrent(b.ctx)
	return runtime.UnlockOSThread
}

// captureGate orders the driver calls that a stream capture forbids
// (cuStreamSynchronize on the stream, cuMemFree, cuMemFreeHost after a
// synchronization) against the start and end of a capture: they run when
// no capture is under way, holding the gate so that none starts
// meanwhile. The zero value is ready; a nil gate never captures.
type captureGate struct {
	mu        sync.Mutex
	capturing bool
	deferred  []func()
}

// ifIdle runs f and reports true when no capture is under way; it reports
// false without running f otherwise.
func (g *captureGate) ifIdle(f func()) bool {
	if g == nil {
		f()
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.capturing {
		return false
	}
	f()
	return true
}

// whenIdle runs f now when no capture is under way, else when the capture
// ends.
func (g *captureGate) whenIdle(f func()) {
	if g == nil {
		f()
		return
	}
	g.mu.Lock()
	if g.capturing {
		g.deferred = append(g.deferred, f)
		g.mu.Unlock()
		return
	}
	defer g.mu.Unlock()
	f()
}

// begin runs start (which begins the capture) and marks the gate
// capturing when it succeeds.
func (g *captureGate) begin(start func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.capturing {
		return ErrRecording
	}
	if err := start(); err != nil {
		return err
	}
	g.capturing = true
	return nil
}

// end runs stop (which ends the capture), marks the gate idle and then
// runs the calls held back meanwhile.
func (g *captureGate) end(stop func()) {
	g.mu.Lock()
	stop()
	g.capturing = false
	held := g.deferred
	g.deferred = nil
	g.mu.Unlock()
	for _, f := range held {
		g.whenIdle(f)
	}
}
