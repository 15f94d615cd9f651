package data

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// TestLoaderPrefetchSameBatches checks that every prefetch depth and no
// prefetching give byte-identical batches in the same order, shuffled and
// not, with and without DropLast.
func TestLoaderPrefetchSameBatches(t *testing.T) {
	for _, ds := range []Dataset{seqDataset{37, 5}, wideDataset{29}} {
		for _, opts := range []LoaderOptions{{}, {Shuffle: true, Seed: 5}, {Shuffle: true, Seed: 6, DropLast: true}} {
			var ref []Batch
			for _, prefetch := range []int{NoPrefetch, 1, 2, 16} {
				o := opts
				o.Prefetch = prefetch
				l := NewLoader(ds, 4, o)
				var got []Batch
				for e := range 2 {
					got = append(got, collect(l, e)...)
				}
				l.Close()
				if ref == nil {
					ref = got
					continue
				}
				if len(got) != len(ref) {
					t.Fatalf("%T %+v: %d batches, without prefetch %d", ds, o, len(got), len(ref))
				}
				for k := range got {
					g, r := got[k], ref[k]
					if !bytes.Equal(g.Features.Bytes, r.Features.Bytes) || !bytes.Equal(g.Targets.Bytes, r.Targets.Bytes) ||
						!slices.Equal(g.Indices, r.Indices) || !slices.Equal(g.Features.Shape, r.Features.Shape) || !slices.Equal(g.Targets.Shape, r.Targets.Shape) {
						t.Fatalf("%T %+v: batch %d differs from the one without prefetch", ds, o, k)
					}
				}
			}
		}
	}
}

// TestLoaderOtherDTypes checks batches of F64 features [2 3] and F32
// targets [2] against values computed from the definition.
func TestLoaderOtherDTypes(t *testing.T) {
	l := NewLoader(wideDataset{7}, 3, LoaderOptions{Shuffle: true, Seed: 2})
	defer l.Close()
	perm := Permutation(7, 2, 0)
	k := 0
	for b := range l.Epoch(0) {
		if b.Images != nil || b.Labels != nil {
			t.Fatal("Images and Labels set for F64 features and F32 targets")
		}
		if fmt.Sprint(b.Features.Shape, b.Features.DType, b.Targets.Shape, b.Targets.DType) != fmt.Sprint([]int{b.Size, 2, 3}, ember.F64, []int{b.Size, 2}, ember.F32) {
			t.Fatalf("shapes %v %v %v %v", b.Features.Shape, b.Features.DType, b.Targets.Shape, b.Targets.DType)
		}
		f, y := b.Features.Float64s(), b.Targets.Float32s()
		for r := range b.Size {
			i := perm[k]
			for j := range 6 {
				if f[6*r+j] != float64(i)+float64(j)/8 {
					t.Fatalf("example %d feature %d = %v", i, j, f[6*r+j])
				}
			}
			if y[2*r] != float32(-i) || y[2*r+1] != float32(2*i) {
				t.Fatalf("example %d targets %v", i, y[2*r:2*r+2])
			}
			k++
		}
	}
	if k != 7 {
		t.Fatalf("%d examples", k)
	}
}

// TestLoaderDropLastSizes checks the batch sizes and Len for several
// dataset and batch sizes.
func TestLoaderDropLastSizes(t *testing.T) {
	for _, c := range []struct{ n, batch int }{{10, 3}, {9, 3}, {2, 3}, {1, 1}, {64, 16}, {65, 16}} {
		for _, drop := range []bool{false, true} {
			l := NewLoader(seqDataset{c.n, 1}, c.batch, LoaderOptions{DropLast: drop, Shuffle: true, Seed: 1})
			var sizes []int
			for b := range l.Epoch(0) {
				sizes = append(sizes, b.Size)
			}
			l.Close()
			var want []int
			for left := c.n; left > 0; left -= c.batch {
				if left < c.batch && drop {
					break
				}
				want = append(want, min(left, c.batch))
			}
			if !slices.Equal(sizes, want) || l.Len() != len(want) {
				t.Errorf("n %d batch %d drop %v: sizes %v (Len %d), want %v", c.n, c.batch, drop, sizes, l.Len(), want)
			}
		}
	}
}

// TestLoaderDevice checks that with a device every batch carries tensors
// holding exactly its host arrays.
func TestLoaderDevice(t *testing.T) {
	dev := ember.Flex()
	for _, ds := range []Dataset{seqDataset{11, 4}, wideDataset{5}} {
		l := NewLoader(ds, 4, LoaderOptions{Device: dev, Shuffle: true, Seed: 9})
		n := 0
		for b := range l.Epoch(0) {
			if b.X == nil || b.Y == nil {
				t.Fatal("no tensors")
			}
			x, y := b.X.Data(), b.Y.Data()
			if !bytes.Equal(x.Bytes, b.Features.Bytes) || !slices.Equal(x.Shape, b.Features.Shape) || x.DType != b.Features.DType ||
				!bytes.Equal(y.Bytes, b.Targets.Bytes) || !slices.Equal(y.Shape, b.Targets.Shape) || y.DType != b.Targets.DType {
				t.Fatalf("%T: tensors %v %v differ from the batch arrays", ds, b.X, b.Y)
			}
			n += b.Size
		}
		l.Close()
		if n != ds.Len() {
			t.Fatalf("%d examples", n)
		}
	}
	l := NewLoader(seqDataset{3, 2}, 2, LoaderOptions{})
	defer l.Close()
	for b := range l.Epoch(0) {
		if b.X != nil || b.Y != nil {
			t.Fatal("tensors without a device")
		}
	}
}

// TestLoaderNoPrefetchStops checks that an iteration without prefetching
// ends on its context and on Loader.Close, and starts no goroutine.
func TestLoaderNoPrefetchStops(t *testing.T) {
	base := runtime.NumGoroutine()
	l := NewLoader(seqDataset{20, 1}, 2, LoaderOptions{Prefetch: NoPrefetch})
	ctx, cancel := context.WithCancel(context.Background())
	it := l.Iter(ctx, 0)
	it2 := l.Iter(context.Background(), 0)
	if !it.Next() || !it2.Next() {
		t.Fatal("no first batch")
	}
	if runtime.NumGoroutine() > base {
		t.Fatal("an iteration without prefetching started a goroutine")
	}
	cancel()
	if it.Next() || !errors.Is(it.Err(), context.Canceled) {
		t.Fatalf("after cancel: Err %v", it.Err())
	}
	l.Close()
	if it2.Next() || !errors.Is(it2.Err(), ErrClosed) {
		t.Fatalf("after Close: Err %v", it2.Err())
	}
	it.Close()
	it2.Close()
	waitGoroutines(t, base)
}

func TestPickAndRandomSplit(t *testing.T) {
	ds := seqDataset{50, 2}
	p := Pick(ds, []int{7, 3, 3, 49})
	b := collect(NewLoader(p, 10, LoaderOptions{}), 0)
	b[0].Indices = []int{7, 3, 3, 49}
	checkBatch(t, b[0], []int{7, 3, 3, 49}, 2)

	rest, held := RandomSplit(ds, 0.3, 4)
	if rest.Len() != 35 || held.Len() != 15 {
		t.Fatalf("split sizes %d and %d, want 35 and 15", rest.Len(), held.Len())
	}
	perm := Permutation(50, 4, 0)
	want := slices.Clone(perm[:15])
	slices.Sort(want)
	seen := map[int]bool{}
	for k, part := range []Dataset{held, rest} {
		for i := range part.Len() {
			_, y, err := Example(part, i)
			if err != nil {
				t.Fatal(err)
			}
			// Labels identify examples modulo 10; the full check is on
			// the picked indices.
			idx := part.(*picked).idx[i]
			if k == 0 && idx != want[i] {
				t.Fatalf("held-out example %d is %d, want %d", i, idx, want[i])
			}
			if y.Int64s()[0] != int64((7*idx+3)%10) || seen[idx] {
				t.Fatalf("example %d: label %v, seen %v", idx, y.Int64s(), seen[idx])
			}
			seen[idx] = true
		}
	}
	if len(seen) != 50 {
		t.Fatalf("the parts hold %d distinct examples, want 50", len(seen))
	}
	r2, h2 := RandomSplit(ds, 0.3, 4)
	if !slices.Equal(r2.(*picked).idx, rest.(*picked).idx) || !slices.Equal(h2.(*picked).idx, held.(*picked).idx) {
		t.Fatal("the same seed gave another split")
	}
	for _, f := range []float64{-0.1, 1.5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RandomSplit fraction %v did not panic", f)
				}
			}()
			RandomSplit(ds, f, 1)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Pick out of range did not panic")
			}
		}()
		Pick(ds, []int{50})
	}()
}
