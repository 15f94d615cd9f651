package data

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/emberml/ember"
)

// seqDataset is a synthetic dataset: example i has F32 features [size]
// with feature j equal to pixel(i, j) and an I64 label (7i+3) mod 10.
type seqDataset struct{ n, size int }

func pixel(i, j int) float32 { return 0.5 + float32(i) + float32(j)/1024 }

func (d seqDataset) Len() int { return d.n }
func (d seqDataset) Schema() Schema {
	return Schema{Features: Field{Shape: []int{d.size}, DType: ember.F32}, Targets: Field{Shape: []int{}, DType: ember.I64}}
}
func (d seqDataset) Gather(idx []int, f, t []byte) error {
	checkGather("seqDataset", d.Schema(), d.n, idx, f, t)
	for k, i := range idx {
		for j := range d.size {
			binary.LittleEndian.PutUint32(f[4*(k*d.size+j):], math.Float32bits(pixel(i, j)))
		}
		binary.LittleEndian.PutUint64(t[8*k:], uint64((7*i+3)%10))
	}
	return nil
}

// wideDataset has F64 features [2 3] equal to i + j/8 and F32 targets
// [2] equal to (−i, 2i): another dtype and rank than seqDataset.
type wideDataset struct{ n int }

func (d wideDataset) Len() int { return d.n }
func (d wideDataset) Schema() Schema {
	return Schema{Features: Field{Shape: []int{2, 3}, DType: ember.F64}, Targets: Field{Shape: []int{2}, DType: ember.F32}}
}
func (d wideDataset) Gather(idx []int, f, t []byte) error {
	checkGather("wideDataset", d.Schema(), d.n, idx, f, t)
	for k, i := range idx {
		for j := range 6 {
			binary.LittleEndian.PutUint64(f[8*(6*k+j):], math.Float64bits(float64(i)+float64(j)/8))
		}
		binary.LittleEndian.PutUint32(t[8*k:], math.Float32bits(float32(-i)))
		binary.LittleEndian.PutUint32(t[8*k+4:], math.Float32bits(float32(2*i)))
	}
	return nil
}

// checkBatch verifies b holds exactly the seqDataset examples idx, values
// computed independently from pixel().
func checkBatch(t *testing.T, b Batch, idx []int, size int) {
	t.Helper()
	if b.Size != len(idx) || len(b.Labels) != len(idx) || len(b.Images) != len(idx)*size || len(b.Indices) != len(idx) {
		t.Fatalf("batch sizes: Size %d labels %d images %d indices %d, want %d examples of %d", b.Size, len(b.Labels), len(b.Images), len(b.Indices), len(idx), size)
	}
	if fmt.Sprint(b.Features.Shape, b.Features.DType, b.Targets.Shape, b.Targets.DType) != fmt.Sprint([]int{len(idx), size}, ember.F32, []int{len(idx)}, ember.I64) {
		t.Fatalf("batch arrays %v %v and %v %v", b.Features.Shape, b.Features.DType, b.Targets.Shape, b.Targets.DType)
	}
	fs, ls := b.Features.Float32s(), b.Targets.Int64s()
	for k, i := range idx {
		if b.Indices[k] != i || b.Labels[k] != int64((7*i+3)%10) || ls[k] != b.Labels[k] {
			t.Fatalf("example %d: index %d label %d (array %d), want %d and %d", k, b.Indices[k], b.Labels[k], ls[k], i, (7*i+3)%10)
		}
		for j := range size {
			if got := b.Images[k*size+j]; got != pixel(i, j) || fs[k*size+j] != got {
				t.Fatalf("example %d (index %d) pixel %d = %v (array %v), want %v", k, i, j, got, fs[k*size+j], pixel(i, j))
			}
		}
	}
}

func collect(l *Loader, epoch int) []Batch {
	var out []Batch
	for b := range l.Epoch(epoch) {
		out = append(out, b)
	}
	return out
}

func TestLoaderSequential(t *testing.T) {
	for _, prefetch := range []int{1, NoPrefetch} {
		ds := seqDataset{10, 6}
		for _, drop := range []bool{false, true} {
			l := NewLoader(ds, 4, LoaderOptions{DropLast: drop, Prefetch: prefetch})
			want := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}
			if drop {
				want = want[:2]
			}
			if l.Len() != len(want) || l.BatchSize() != 4 || l.ExampleSize() != 6 {
				t.Fatalf("Len %d BatchSize %d ExampleSize %d", l.Len(), l.BatchSize(), l.ExampleSize())
			}
			for epoch := range 2 {
				got := collect(l, epoch)
				if len(got) != len(want) {
					t.Fatalf("drop=%v: %d batches, want %d", drop, len(got), len(want))
				}
				for k := range got {
					checkBatch(t, got[k], want[k], 6)
				}
			}
			l.Close()
		}
	}
}

func TestLoaderShuffle(t *testing.T) {
	const n, bs = 23, 5
	ds := seqDataset{n, 3}
	opts := LoaderOptions{Shuffle: true, Seed: 99}
	l1, l2 := NewLoader(ds, bs, opts), NewLoader(ds, bs, opts)
	defer l1.Close()
	defer l2.Close()
	var orders [][]int
	for epoch := range 3 {
		perm := Permutation(n, 99, epoch)
		b1, b2 := collect(l1, epoch), collect(l2, epoch)
		if len(b1) != 5 || len(b2) != 5 {
			t.Fatalf("epoch %d: %d and %d batches, want 5", epoch, len(b1), len(b2))
		}
		var order []int
		for k := range b1 {
			want := perm[k*bs : min((k+1)*bs, n)]
			checkBatch(t, b1[k], want, 3)
			checkBatch(t, b2[k], want, 3) // same seed, same order
			order = append(order, b1[k].Indices...)
		}
		seen := make([]bool, n)
		for _, i := range order {
			if seen[i] {
				t.Fatalf("epoch %d visits %d twice: %v", epoch, i, order)
			}
			seen[i] = true
		}
		orders = append(orders, order)
	}
	if fmt.Sprint(orders[0]) == fmt.Sprint(orders[1]) || fmt.Sprint(orders[1]) == fmt.Sprint(orders[2]) {
		t.Fatalf("epochs repeat an order: %v", orders)
	}
	other := NewLoader(ds, bs, LoaderOptions{Shuffle: true, Seed: 100})
	defer other.Close()
	if fmt.Sprint(other.Order(0)) == fmt.Sprint(orders[0]) {
		t.Fatal("different seeds gave the same order")
	}
}

func TestLoaderEmpty(t *testing.T) {
	l := NewLoader(seqDataset{0, 4}, 3, LoaderOptions{Shuffle: true})
	defer l.Close()
	if l.Len() != 0 || l.ExampleSize() != 4 || len(collect(l, 0)) != 0 {
		t.Fatal("empty dataset should give no batches")
	}
}

func TestLoaderPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	mustPanic("batch 0", func() { NewLoader(seqDataset{3, 1}, 0, LoaderOptions{}) })
	mustPanic("prefetch -2", func() { NewLoader(seqDataset{3, 1}, 1, LoaderOptions{Prefetch: -2}) })
	mustPanic("bad dtype", func() { NewLoader(badSchema{}, 1, LoaderOptions{}) })
	l := NewLoader(seqDataset{3, 1}, 1, LoaderOptions{})
	defer l.Close()
	mustPanic("epoch -1", func() { l.Epoch(-1) })
}

// badSchema has an invalid features dtype.
type badSchema struct{ seqDataset }

func (badSchema) Schema() Schema { return Schema{Targets: Field{DType: ember.I64}} }

// panicDataset panics on one index and returns an error on another.
type panicDataset struct {
	seqDataset
	bad      int
	failAt   int
	panicVal any
}

var errBroken = errors.New("broken file")

func (d panicDataset) Gather(idx []int, f, t []byte) error {
	for _, i := range idx {
		if i == d.bad {
			panic(d.panicVal)
		}
		if i == d.failAt {
			return errBroken
		}
	}
	return d.seqDataset.Gather(idx, f, t)
}

func TestLoaderPanicReachesConsumer(t *testing.T) {
	base := runtime.NumGoroutine()
	sentinel := errors.New("broken example")
	for _, prefetch := range []int{0, NoPrefetch} {
		l := NewLoader(panicDataset{seqDataset{10, 2}, 5, -1, sentinel}, 2, LoaderOptions{Prefetch: prefetch})
		got := func() (r any) {
			defer func() { r = recover() }()
			for range l.Epoch(0) {
			}
			return nil
		}()
		if got != sentinel {
			t.Fatalf("prefetch %d: recovered %v, want %v", prefetch, got, sentinel)
		}
		l.Close()
	}
	waitGoroutines(t, base)
}

// TestLoaderGatherError checks that an error from Gather ends the epoch
// after the batches before it, is reported by Err, and panics out of an
// Epoch loop.
func TestLoaderGatherError(t *testing.T) {
	base := runtime.NumGoroutine()
	for _, prefetch := range []int{1, 3, NoPrefetch} {
		l := NewLoader(panicDataset{seqDataset{10, 2}, -1, 7, nil}, 3, LoaderOptions{Prefetch: prefetch})
		it := l.Iter(context.Background(), 0)
		n := 0
		for it.Next() {
			checkBatch(t, it.Batch(), []int{3 * n, 3*n + 1, 3*n + 2}, 2)
			n++
		}
		if n != 2 || !errors.Is(it.Err(), errBroken) {
			t.Fatalf("prefetch %d: %d batches, Err %v; want 2 and %v", prefetch, n, it.Err(), errBroken)
		}
		it.Close()
		got := func() (r any) {
			defer func() { r = recover() }()
			for range l.Epoch(0) {
			}
			return nil
		}()
		if got != errBroken {
			t.Fatalf("prefetch %d: Epoch panicked with %v, want %v", prefetch, got, errBroken)
		}
		l.Close()
	}
	waitGoroutines(t, base)
}

// waitGoroutines fails unless the goroutine count returns to base. The
// loop allows the runtime to retire goroutines that have already
// returned; it bounds the wait, it does not time the code under test.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	for range 500 {
		if runtime.NumGoroutine() <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
}

func TestLoaderNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	l := NewLoader(seqDataset{100, 8}, 1, LoaderOptions{Shuffle: true, Prefetch: 1})

	// Break out of a range loop: its goroutine is gone when the loop ends.
	for b := range l.Epoch(0) {
		if b.Size != 1 {
			t.Fatal("bad batch")
		}
		break
	}
	waitGoroutines(t, base)

	// A cursor abandoned mid-epoch (producer blocked on a full channel)
	// and one never advanced, both ended by Loader.Close.
	it1 := l.Iter(context.Background(), 1)
	if !it1.Next() {
		t.Fatal("no first batch")
	}
	it2 := l.Iter(context.Background(), 2)
	if runtime.NumGoroutine() <= base {
		t.Fatal("iterators should run background goroutines")
	}
	l.Close()
	waitGoroutines(t, base)
	if it1.Next() || !errors.Is(it1.Err(), ErrClosed) || !errors.Is(it2.Err(), ErrClosed) {
		t.Fatalf("after Close: Err %v and %v, want ErrClosed", it1.Err(), it2.Err())
	}
	it1.Close()
	it2.Close()

	// A closed Loader yields nothing.
	it3 := l.Iter(context.Background(), 0)
	if it3.Next() || !errors.Is(it3.Err(), ErrClosed) {
		t.Fatalf("iterating a closed loader: Err %v", it3.Err())
	}
	if len(collect(l, 0)) != 0 {
		t.Fatal("Epoch of a closed loader yielded batches")
	}
	l.Close() // idempotent
	waitGoroutines(t, base)
}

func TestIteratorContextAndErr(t *testing.T) {
	base := runtime.NumGoroutine()
	l := NewLoader(seqDataset{50, 2}, 4, LoaderOptions{})
	defer l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	it := l.Iter(ctx, 0)
	if !it.Next() {
		t.Fatal("no first batch")
	}
	checkBatch(t, it.Batch(), []int{0, 1, 2, 3}, 2)
	cancel()
	if it.Next() || !errors.Is(it.Err(), context.Canceled) {
		t.Fatalf("after cancel: Err = %v, want context.Canceled", it.Err())
	}
	if it.Batch().Size != 0 {
		t.Fatal("Batch after the end should be zero")
	}
	it.Close()

	// A complete epoch ends without error and with every example once.
	it = l.Iter(context.Background(), 0)
	seen := 0
	for it.Next() {
		seen += it.Batch().Size
	}
	if seen != 50 || it.Err() != nil {
		t.Fatalf("complete epoch: %d examples, Err %v", seen, it.Err())
	}
	it.Close()

	// Closing an iterator early is not an error.
	it = l.Iter(context.Background(), 0)
	it.Close()
	if it.Next() || it.Err() != nil {
		t.Fatalf("after own Close: Err %v, want nil", it.Err())
	}
	waitGoroutines(t, base)
}

// TestLoaderConcurrentEpochs runs several epochs at once (meant for -race).
func TestLoaderConcurrentEpochs(t *testing.T) {
	l := NewLoader(seqDataset{40, 5}, 7, LoaderOptions{Shuffle: true, Seed: 3})
	defer l.Close()
	errs := make(chan error, 4)
	for e := range 4 {
		go func() {
			perm := Permutation(40, 3, e)
			k := 0
			for b := range l.Epoch(e) {
				for _, i := range b.Indices {
					if i != perm[k] {
						errs <- fmt.Errorf("epoch %d position %d: index %d, want %d", e, k, i, perm[k])
						return
					}
					k++
				}
			}
			if k != 40 {
				errs <- fmt.Errorf("epoch %d: %d examples", e, k)
				return
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestSubset(t *testing.T) {
	for _, ds := range []Dataset{seqDataset{10, 3}, Pick(seqDataset{10, 3}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})} {
		s := Subset(ds, 2, 6)
		if s.Len() != 4 {
			t.Fatalf("Len = %d", s.Len())
		}
		b := collect(NewLoader(s, 4, LoaderOptions{}), 0)
		if len(b) != 1 {
			t.Fatalf("%d batches", len(b))
		}
		if fmt.Sprint(b[0].Indices) != "[0 1 2 3]" {
			t.Fatalf("Indices = %v, want subset indices 0..3", b[0].Indices)
		}
		b[0].Indices = []int{2, 3, 4, 5} // which are ds's examples 2..5
		checkBatch(t, b[0], []int{2, 3, 4, 5}, 3)
		f, l, err := Example(s, 3)
		if err != nil || l.Int64s()[0] != (7*5+3)%10 || f.Float32s()[1] != pixel(5, 1) || len(f.Shape) != 1 || len(l.Shape) != 0 {
			t.Fatalf("Example(3) = %v, %v, %v", f, l, err)
		}
	}
	for _, bad := range [][2]int{{-1, 2}, {3, 2}, {0, 11}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Subset(%v) did not panic", bad)
				}
			}()
			Subset(seqDataset{10, 1}, bad[0], bad[1])
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Example 4 of a Subset of 4 did not panic")
			}
		}()
		Example(Subset(seqDataset{10, 1}, 2, 6), 4)
	}()
}
