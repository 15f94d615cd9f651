package data

import "fmt"

// Subset returns the view of ds holding its examples lo..hi-1, renumbered
// from 0; it shares ds's storage. Use it to train on the first N examples
// (Subset(ds, 0, N)) or to split off a validation set. It panics unless
// 0 <= lo <= hi <= ds.Len(), like slicing.
func Subset(ds Dataset, lo, hi int) Dataset {
	if lo < 0 || hi < lo || hi > ds.Len() {
		panic(fmt.Sprintf("data: Subset [%d:%d] out of range for a dataset of %d examples", lo, hi, ds.Len()))
	}
	return &subset{ds: ds, lo: lo, n: hi - lo}
}

// subset is the view returned by Subset.
type subset struct {
	ds    Dataset
	lo, n int
}

func (s *subset) Len() int { return s.n }

func (s *subset) Example(i int) ([]float32, int) {
	s.check(i)
	return s.ds.Example(s.lo + i)
}

// ExampleInto forwards to the underlying dataset's ExampleInto when it has
// one.
func (s *subset) ExampleInto(dst []float32, i int) int {
	s.check(i)
	if w, ok := s.ds.(ExampleWriter); ok {
		return w.ExampleInto(dst, s.lo+i)
	}
	img, lbl := s.ds.Example(s.lo + i)
	if len(img) != len(dst) {
		panic(fmt.Sprintf("data: Subset: example %d has %d values, want %d", s.lo+i, len(img), len(dst)))
	}
	copy(dst, img)
	return lbl
}

func (s *subset) check(i int) {
	if i < 0 || i >= s.n {
		panic(fmt.Sprintf("data: Subset: index %d out of range [0,%d)", i, s.n))
	}
}
