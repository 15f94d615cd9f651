package data

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
)

// DefaultPrefetch is the number of batches a Loader prepares ahead when
// LoaderOptions.Prefetch is zero.
const DefaultPrefetch = 2

// ErrClosed is reported by Iterator.Err when iteration stopped because
// the Loader was closed.
var ErrClosed = errors.New("data: loader closed")

// LoaderOptions configures a Loader. The zero value is valid: examples in
// dataset order, a final partial batch kept, DefaultPrefetch batches of
// read-ahead.
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
	// ready ahead of the consumer; 0 means DefaultPrefetch. Negative
	// values panic in NewLoader.
	Prefetch int
}

// Batch is a mini-batch of examples, independent of any device: the
// caller turns it into tensors (e.g. an [Size, 784] float32 tensor and a
// [Size] int64 tensor for MNIST). Every Batch has freshly allocated
// slices the caller may keep.
type Batch struct {
	// Images holds the Size images back to back, row-major:
	// Size*ExampleSize float32 values, example k at
	// Images[k*ExampleSize:(k+1)*ExampleSize].
	Images []float32
	// Labels holds the Size labels.
	Labels []int64
	// Size is the number of examples, 1..batch size.
	Size int
	// Indices holds the dataset index of each example.
	Indices []int
}

// Loader cuts a Dataset into mini-batches, optionally shuffled, assembled
// by a background goroutine that stays Prefetch batches ahead of the
// consumer (in the manner of PyTorch's DataLoader with one worker). A
// Loader may run any number of epochs, one after another or at once; each
// iteration owns one goroutine, which ends when the iteration is
// exhausted, broken out of, or closed, or when the Loader is closed.
type Loader struct {
	ds          Dataset
	batchSize   int
	opts        LoaderOptions
	exampleSize int

	mu     sync.Mutex
	closed bool
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// NewLoader returns a Loader over ds producing batches of batchSize
// examples. It reads example 0 once to learn the image length, so every
// example of ds must have that length. It panics if batchSize < 1 or
// opts.Prefetch < 0.
func NewLoader(ds Dataset, batchSize int, opts LoaderOptions) *Loader {
	if batchSize < 1 {
		panic(fmt.Sprintf("data: NewLoader: batch size %d, want >= 1", batchSize))
	}
	if opts.Prefetch < 0 {
		panic(fmt.Sprintf("data: NewLoader: Prefetch %d, want >= 0", opts.Prefetch))
	}
	if opts.Prefetch == 0 {
		opts.Prefetch = DefaultPrefetch
	}
	l := &Loader{ds: ds, batchSize: batchSize, opts: opts}
	if ds.Len() > 0 {
		img, _ := ds.Example(0)
		l.exampleSize = len(img)
	}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	return l
}

// BatchSize returns the batch size given to NewLoader.
func (l *Loader) BatchSize() int { return l.batchSize }

// ExampleSize returns the number of float32 values per image (784 for
// MNIST), 0 for an empty dataset.
func (l *Loader) ExampleSize() int { return l.exampleSize }

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
// Iter to learn why. A panic in the dataset's Example is re-raised in the
// loop's goroutine. It panics if epoch < 0.
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
	}
}

// Iter starts iterating the batches of epoch (counted from 0) and returns
// the cursor:
//
//	it := l.Iter(ctx, e)
//	defer it.Close()
//	for it.Next() { b := it.Batch(); ... }
//	if err := it.Err(); err != nil { ... } // ctx's cause or ErrClosed
//
// Iteration stops early when ctx is done or the Loader is closed. The
// background goroutine exits when iteration ends or Close is called;
// always call Close if the loop may stop before Next returns false. It
// panics if epoch < 0.
func (l *Loader) Iter(ctx context.Context, epoch int) *Iterator {
	order := l.Order(epoch)
	l.mu.Lock()
	defer l.mu.Unlock()
	ictx, cancel := context.WithCancelCause(ctx)
	it := &Iterator{ctx: ictx, cancel: cancel, ch: make(chan result, l.opts.Prefetch), done: make(chan struct{})}
	if l.closed {
		cancel(ErrClosed)
		close(it.ch)
		close(it.done)
		return it
	}
	// Propagate a Loader.Close to this iteration.
	stop := context.AfterFunc(l.ctx, func() { cancel(context.Cause(l.ctx)) })
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

// result is what the producer sends: a batch, or a panic to re-raise.
type result struct {
	batch    Batch
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
		end := min(start+l.batchSize, len(order))
		if end-start < l.batchSize && l.opts.DropLast {
			return
		}
		if ctx.Err() != nil {
			return
		}
		b := l.assemble(order[start:end])
		select {
		case ch <- result{batch: b}:
		case <-ctx.Done():
			return
		}
	}
}

// assemble builds the batch of the given dataset indices.
func (l *Loader) assemble(idx []int) Batch {
	es := l.exampleSize
	b := Batch{
		Images:  make([]float32, len(idx)*es),
		Labels:  make([]int64, len(idx)),
		Size:    len(idx),
		Indices: append([]int(nil), idx...),
	}
	w, fast := l.ds.(ExampleWriter)
	for k, i := range idx {
		dst := b.Images[k*es : (k+1)*es]
		var lbl int
		if fast {
			lbl = w.ExampleInto(dst, i)
		} else {
			img, label := l.ds.Example(i)
			if len(img) != es {
				panic(fmt.Sprintf("data: Loader: example %d has %d values, example 0 has %d", i, len(img), es))
			}
			copy(dst, img)
			lbl = label
		}
		b.Labels[k] = int64(lbl)
	}
	return b
}

// Iterator is a cursor over the batches of one epoch, returned by
// Loader.Iter. Next, Batch and Err are for one goroutine at a time; Close
// may be called from any goroutine.
type Iterator struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	ch     chan result
	done   chan struct{}
	cur    Batch
	once   sync.Once
}

// Next advances to the next batch and reports whether there is one. It
// returns false at the end of the epoch, after Close, when the Iter
// context is done or when the Loader is closed. If the dataset panicked
// while the batch was assembled, Next re-raises that panic.
func (it *Iterator) Next() bool {
	if it.ctx.Err() != nil {
		it.cur = Batch{}
		return false
	}
	r, ok := <-it.ch
	if !ok || it.ctx.Err() != nil {
		it.cur = Batch{}
		it.Close()
		return false
	}
	if r.panicked {
		it.Close()
		panic(r.panicVal)
	}
	it.cur = r.batch
	return true
}

// Batch returns the batch Next advanced to (the zero Batch before the
// first Next or after Next returned false).
func (it *Iterator) Batch() Batch { return it.cur }

// Err returns why iteration stopped early: the Iter context's cause (e.g.
// context.Canceled), or ErrClosed when the Loader was closed. It returns
// nil while iterating, after a complete epoch, and after the Iterator's
// own Close.
func (it *Iterator) Err() error {
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
	it.once.Do(func() { it.cancel(errIteratorClosed) })
	<-it.done
}
