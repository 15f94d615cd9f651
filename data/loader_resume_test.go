package data

import (
	"context"
	"testing"
)

// TestLoaderIterFrom checks that IterFrom(e, k) yields the batches of
// Iter(e) from batch k on, shuffled and not, with and without DropLast
// and prefetching, and nothing at or past the end.
func TestLoaderIterFrom(t *testing.T) {
	const n, bs = 23, 5
	ds := seqDataset{n, 3}
	for _, opts := range []LoaderOptions{
		{}, {Shuffle: true, Seed: 7}, {Shuffle: true, Seed: 7, DropLast: true}, {Shuffle: true, Seed: 8, Prefetch: NoPrefetch},
	} {
		l := NewLoader(ds, bs, opts)
		for epoch := range 2 {
			full := collect(l, epoch)
			for k := 0; k <= l.Len()+2; k++ {
				it := l.IterFrom(context.Background(), epoch, k)
				var got []Batch
				for it.Next() {
					got = append(got, it.Batch())
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				it.Close()
				want := full[min(k, len(full)):]
				if len(got) != len(want) {
					t.Fatalf("%+v epoch %d from %d: %d batches, want %d", opts, epoch, k, len(got), len(want))
				}
				for i := range got {
					checkBatch(t, got[i], want[i].Indices, 3)
				}
			}
		}
		l.Close()
	}
	l := NewLoader(ds, bs, LoaderOptions{})
	defer l.Close()
	if it := l.IterFrom(context.Background(), 0, 1<<62); it.Next() {
		t.Fatal("a batch far past the end yielded one")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a negative batch did not panic")
		}
	}()
	l.IterFrom(context.Background(), 0, -1)
}
