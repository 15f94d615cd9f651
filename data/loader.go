package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/emberml/ember"
)

// DefaultPrefetch is the number of batches a Loader prepares ahead when
// LoaderOptions.Prefetch is zero.
const DefaultPrefetch = 2

// NoPrefetch, as LoaderOptions.Prefetch, makes a Loader assemble each
// batch inside Iterator.Next, on the consumer's goroutine, with no
// background goroutine. The batches are the same as with prefetching.
const NoPrefetch = -1

// ErrClosed is reported by Iterator.Err when iteration stopped because
// the Loader was closed.
var ErrClosed = errors.New("data: loader closed")

// LoaderOptions configures a Loader. The zero value is valid: examples in
// dataset order, a final partial batch kept, DefaultPrefetch batches of
// read-ahead, host arrays only.
type LoaderOptions struct {
	// Shuffle visits the examples of each epoch in a pseudo-random order.
	// Epoch e uses the permutation Permutation(n, Seed, e), so the same
	// seed gives the same order sequence in every run, and each epoch a
	// different order.
	Shuffle bool
	// Seed selects the shuffle permutations; unused without Shuffle.
	Seed uint64
	// DropLast discards the final batch of an epoch when it has fewer
	// than the batch size examples (as PyTorch's DataLoader drop_last).
	DropLast bool
	// Prefetch is how many finished batches a background goroutine keeps
	// ready ahead of the consumer; 0 means DefaultPrefetch and NoPrefetch
	// assembles batches synchronously. Values below NoPrefetch panic in
	// NewLoader.
	Prefetch int
	// Device, when not the zero Device, is where every batch's Features
	// and Targets are also placed, as Batch.X and Batch.Y
	// (ember.FromData, dtypes kept), by the goroutine that assembles the
	// batch, so that the copy overlaps the consumer's work on the
	// previous batch.
	Device ember.Device
}

// Loader cuts a Dataset into mini-batches, optionally shuffled, assembled
// by a background goroutine that stays Prefetch batches ahead of the
// consumer (in the manner of PyTorch's DataLoader with one worker and
// pin-memory-style device copies). Each batch is one Gather call for its
// indices. A Loader may run any number of epochs, one after another or at
// once; each iteration owns one goroutine (none with NoPrefetch), which
// ends when the iteration is exhausted, broken out of, or closed, or when
// the Loader is closed. The batches, and their order, do not depend on
// Prefetch.
type Loader struct {
	ds        Dataset
	batchSize int
	opts      LoaderOptions
	schema    Schema

	mu     sync.Mutex
	closed bool
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// NewLoader returns a Loader over ds producing batches of batchSize
// examples. It reads ds's Schema once; every batch has its shapes. It
// panics if batchSize < 1, opts.Prefetch < NoPrefetch, or the schema is
// invalid (an invalid dtype, a negative size, sizes that overflow).
func NewLoader(ds Dataset, batchSize int, opts LoaderOptions) *Loader {
	if batchSize < 1 {
		panic(fmt.Sprintf("data: NewLoader: batch size %d, want >= 1", batchSize))
	}
	if opts.Prefetch < NoPrefetch {
		panic(fmt.Sprintf("data: NewLoader: Prefetch %d, want >= 0 or NoPrefetch", opts.Prefetch))
	}
	if opts.Prefetch == 0 {
		opts.Prefetch = DefaultPrefetch
	}
	l := &Loader{ds: ds, batchSize: batchSize, opts: opts, schema: ds.Schema()}
	l.schema.Features.Shape = slices.Clone(l.schema.Features.Shape)
	l.schema.Targets.Shape = slices.Clone(l.schema.Targets.Shape)
	if err := l.schema.check(max(ds.Len(), batchSize)); err != nil {
		panic("data: NewLoader: " + err.Error())
	}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	return l
}

// BatchSize returns the batch size given to NewLoader.
func (l *Loader) BatchSize() int { return l.batchSize }

// Schema returns the dataset's schema, read when the Loader was made.
func (l *Loader) Schema() Schema { return l.schema }

// ExampleSize returns the number of feature values per example, the size
// of Schema().Features (784 for MNIST).
func (l *Loader) ExampleSize() int { return l.schema.Features.Size() }

// Len returns the number of batches per epoch: ceil(n/batch), or
// floor(n/batch) with DropLast, where n is the dataset length.
func (l *Loader) Len() int {
	n := l.ds.Len()
	if l.opts.DropLast {
		return n / l.batchSize
	}
	return (n + l.batchSize - 1) / l.batchSize
}

// Order returns the order in which epoch visits the dataset's examples:
// 0..n-1 without Shuffle, else Permutation(n, Seed, epoch). It panics if
// epoch < 0.
func (l *Loader) Order(epoch int) []int {
	n := l.ds.Len()
	if l.opts.Shuffle {
		return Permutation(n, l.opts.Seed, epoch)
	}
	if epoch < 0 {
		panic(fmt.Sprintf("data: Loader.Order: epoch %d, want >= 0", epoch))
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

// Epoch returns the batches of epoch (counted from 0) as a range-over-func
// sequence:
//
//	for b := range l.Epoch(e) { ... }
//
// The background goroutine starts when the loop starts and has exited by
// the time the loop ends, however it ends (exhausted, break, return or a
// panic). If the Loader is closed meanwhile the loop just ends early; use
// Iter to learn why. A panic in the dataset's Gather is re-raised in the
// loop's goroutine, and an error Gather returns (or a failure to place a
// batch on LoaderOptions.Device) ends the loop with a panic carrying that
// error: use Iter to handle such errors as values. It panics if
// epoch < 0.
func (l *Loader) Epoch(epoch int) iter.Seq[Batch] {
	if epoch < 0 {
		panic(fmt.Sprintf("data: Loader.Epoch: epoch %d, want >= 0", epoch))
	}
	return func(yield func(Batch) bool) {
		it := l.Iter(context.Background(), epoch)
		defer it.Close()
		for it.Next() {
			if !yield(it.Batch()) {
				return
			}
		}
		if it.failed != nil {
			panic(it.failed)
		}
	}
}

// Iter starts iterating the batches of epoch (counted from 0) and returns
// the cursor:
//
//	it := l.Iter(ctx, e)
//	defer it.Close()
//	for it.Next() { b := it.Batch(); ... }
//	if err := it.Err(); err != nil { ... } // ctx's cause, ErrClosed or the dataset's error
//
// Iteration stops early when ctx is done, the Loader is closed, or the
// dataset's Gather returns an error. The background goroutine exits when
// iteration ends or Close is called; always call Close if the loop may
// stop before Next returns false. It panics if epoch < 0.
func (l *Loader) Iter(ctx context.Context, epoch int) *Iterator {
	return l.IterFrom(ctx, epoch, 0)
}

// IterFrom is Iter starting at batch number batch (counted from 0) of
// epoch: it yields the batches Iter would yield after skipping the first
// batch ones, without assembling those, so that training resumed from a
// checkpoint taken in the middle of an epoch sees the rest of that epoch
// exactly as the interrupted run would have (the shuffle order is a
// function of Seed and epoch alone). A batch at or past Len yields
// nothing. It panics if epoch or batch is negative.
func (l *Loader) IterFrom(ctx context.Context, epoch, batch int) *Iterator {
	if batch < 0 {
		panic(fmt.Sprintf("data: Loader.IterFrom: batch %d, want >= 0", batch))
	}
	order := l.Order(epoch)
	if batch > len(order)/l.batchSize {
		order = nil // past the end (checked before multiplying, which could overflow)
	} else {
		order = order[batch*l.batchSize:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ictx, cancel := context.WithCancelCause(ctx)
	it := &Iterator{ctx: ictx, cancel: cancel, done: make(chan struct{})}
	if l.closed {
		cancel(ErrClosed)
		close(it.done)
		return it
	}
	// Propagate a Loader.Close to this iteration.
	stop := context.AfterFunc(l.ctx, func() { cancel(context.Cause(l.ctx)) })
	if l.opts.Prefetch == NoPrefetch {
		it.sync = &syncBatches{l: l, order: order, stop: stop}
		close(it.done)
		return it
	}
	it.ch = make(chan result, l.opts.Prefetch)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer stop()
		defer close(it.done)
		defer close(it.ch)
		l.produce(ictx, order, it.ch)
	}()
	return it
}

// Close stops every iteration of the Loader (their Err reports ErrClosed)
// and waits until all its goroutines have exited. Later iterations yield
// nothing. Close is idempotent and safe to call from any goroutine.
func (l *Loader) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		l.cancel(ErrClosed)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// result is what the producer sends: a batch, an error that ends the
// epoch, or a panic to re-raise.
type result struct {
	batch    Batch
	err      error
	panicked bool
	panicVal any
}

// produce assembles the batches of order and sends them on ch until done
// or ctx is cancelled. A panic while assembling is sent to the consumer.
func (l *Loader) produce(ctx context.Context, order []int, ch chan<- result) {
	defer func() {
		if r := recover(); r != nil {
			select {
			case ch <- result{panicked: true, panicVal: r}:
			case <-ctx.Done():
			}
		}
	}()
	for start := 0; start < len(order); start += l.batchSize {
		idx, ok := l.batchIndices(order, start)
		if !ok || ctx.Err() != nil {
			return
		}
		b, err := l.assemble(idx)
		select {
		case ch <- result{batch: b, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// batchIndices returns the indices of the batch starting at position
// start of order, or false when that batch is a partial one DropLast
// discards.
func (l *Loader) batchIndices(order []int, start int) ([]int, bool) {
	end := min(start+l.batchSize, len(order))
	if end-start < l.batchSize && l.opts.DropLast {
		return nil, false
	}
	return order[start:end], true
}

// assemble builds the batch of the given dataset indices.
func (l *Loader) assemble(idx []int) (Batch, error) {
	s := l.schema
	n := len(idx)
	fb, images, _ := hostArray(s.Features.DType, n*s.Features.Size())
	tb, _, labels := hostArray(s.Targets.DType, n*s.Targets.Size())
	if err := l.ds.Gather(idx, fb, tb); err != nil {
		return Batch{}, err
	}
	b := Batch{
		Features: &ember.TensorData{Shape: append([]int{n}, s.Features.Shape...), DType: s.Features.DType, Bytes: fb},
		Targets:  &ember.TensorData{Shape: append([]int{n}, s.Targets.Shape...), DType: s.Targets.DType, Bytes: tb},
		Images:   images,
		Labels:   labels,
		Size:     n,
		Indices:  append([]int(nil), idx...),
	}
	if !littleEndian {
		if s.Features.DType == ember.F32 {
			b.Images = decodeFloat32s(fb)
		}
		if s.Targets.DType == ember.I64 {
			b.Labels = decodeInt64s(tb)
		}
	}
	if dev := l.opts.Device; !dev.IsZero() {
		err := ember.Try(func() {
			b.X = ember.FromData(b.Features, dev)
			b.Y = ember.FromData(b.Targets, dev)
		})
		if err != nil {
			return Batch{}, fmt.Errorf("data: Loader: placing a batch on %v: %w", dev, err)
		}
	}
	return b, nil
}

// syncBatches is the state of an iteration without prefetching.
type syncBatches struct {
	l     *Loader
	order []int
	pos   int
	stop  func() bool
}

// next assembles the next batch, or reports false at the end.
func (s *syncBatches) next() (Batch, bool, error) {
	if s.pos >= len(s.order) {
		return Batch{}, false, nil
	}
	idx, ok := s.l.batchIndices(s.order, s.pos)
	if !ok {
		return Batch{}, false, nil
	}
	s.pos += len(idx)
	b, err := s.l.assemble(idx)
	return b, err == nil, err
}

// Iterator is a cursor over the batches of one epoch, returned by
// Loader.Iter. Next, Batch and Err are for one goroutine at a time; Close
// may be called from any goroutine.
type Iterator struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	ch     chan result  // nil without prefetching
	sync   *syncBatches // nil with prefetching
	done   chan struct{}
	cur    Batch
	failed error // the dataset's or the device's error that ended the epoch
	once   sync.Once
}

// Next advances to the next batch and reports whether there is one. It
// returns false at the end of the epoch, after Close, when the Iter
// context is done, when the Loader is closed, and when the batch could
// not be assembled (Err says why). If the dataset panicked while the batch
// was assembled, Next re-raises that panic.
func (it *Iterator) Next() bool {
	if it.sync != nil && it.sync.l.ctx.Err() != nil {
		// The Loader was closed; its AfterFunc may not have run yet.
		it.cancel(context.Cause(it.sync.l.ctx))
	}
	if it.ctx.Err() != nil {
		it.cur = Batch{}
		it.Close()
		return false
	}
	var r result
	if it.sync != nil {
		var ok bool
		r.batch, ok, r.err = it.syncNext()
		if !ok && r.err == nil {
			it.cur = Batch{}
			it.Close()
			return false
		}
	} else {
		var ok bool
		r, ok = <-it.ch
		if !ok || it.ctx.Err() != nil {
			it.cur = Batch{}
			it.Close()
			return false
		}
	}
	if r.panicked {
		it.Close()
		panic(r.panicVal)
	}
	if r.err != nil {
		it.failed = r.err
		it.cur = Batch{}
		it.Close()
		return false
	}
	it.cur = r.batch
	return true
}

// syncNext assembles the next batch without prefetching; a panic of the
// dataset ends the iteration before it is re-raised.
func (it *Iterator) syncNext() (b Batch, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			it.Close()
			panic(r)
		}
	}()
	return it.sync.next()
}

// Batch returns the batch Next advanced to (the zero Batch before the
// first Next or after Next returned false).
func (it *Iterator) Batch() Batch { return it.cur }

// Err returns why iteration stopped early: the error the dataset's Gather
// returned or the failure to place a batch on LoaderOptions.Device, the
// Iter context's cause (e.g. context.Canceled), or ErrClosed when the
// Loader was closed. It returns nil while iterating, after a complete
// epoch, and after the Iterator's own Close.
func (it *Iterator) Err() error {
	if it.failed != nil {
		return it.failed
	}
	err := context.Cause(it.ctx)
	if errors.Is(err, errIteratorClosed) {
		return nil
	}
	return err
}

// errIteratorClosed is the cancellation cause set by Iterator.Close.
var errIteratorClosed = errors.New("data: iterator closed")

// Close stops the iteration and waits for its goroutine to exit. It is
// idempotent.
func (it *Iterator) Close() {
	it.once.Do(func() {
		it.cancel(errIteratorClosed)
		if it.sync != nil {
			it.sync.stop()
		}
	})
	<-it.done
}
