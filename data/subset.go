package data

import (
	"fmt"
	"math"
	"slices"
)

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

func (s *subset) Len() int       { return s.n }
func (s *subset) Schema() Schema { return s.ds.Schema() }

func (s *subset) Gather(indices []int, features, targets []byte) error {
	mapped := make([]int, len(indices))
	for k, i := range indices {
		if i < 0 || i >= s.n {
			panic(fmt.Sprintf("data: Subset: index %d out of range [0,%d)", i, s.n))
		}
		mapped[k] = s.lo + i
	}
	return s.ds.Gather(mapped, features, targets)
}

// Pick returns the view of ds whose example k is ds's example indices[k]
// (torch.utils.data.Subset); indices is copied and may repeat examples.
// It panics if an index is outside [0, ds.Len()).
func Pick(ds Dataset, indices []int) Dataset {
	n := ds.Len()
	for _, i := range indices {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("data: Pick: index %d out of range for a dataset of %d examples", i, n))
		}
	}
	return &picked{ds: ds, idx: slices.Clone(indices)}
}

// picked is the view returned by Pick.
type picked struct {
	ds  Dataset
	idx []int
}

func (p *picked) Len() int       { return len(p.idx) }
func (p *picked) Schema() Schema { return p.ds.Schema() }

func (p *picked) Gather(indices []int, features, targets []byte) error {
	mapped := make([]int, len(indices))
	for k, i := range indices {
		if i < 0 || i >= len(p.idx) {
			panic(fmt.Sprintf("data: Pick: index %d out of range [0,%d)", i, len(p.idx)))
		}
		mapped[k] = p.idx[i]
	}
	return p.ds.Gather(mapped, features, targets)
}

// RandomSplit splits ds into two disjoint views that together hold every
// example once: held holds round(fraction·n) examples chosen at random,
// rest the others, each in ds's order. The choice is the first
// round(fraction·n) entries of Permutation(n, seed, 0), so the same seed
// gives the same split on every run. It panics unless 0 <= fraction <= 1.
func RandomSplit(ds Dataset, fraction float64, seed uint64) (rest, held Dataset) {
	if !(fraction >= 0 && fraction <= 1) {
		panic(fmt.Sprintf("data: RandomSplit: fraction %v outside [0, 1]", fraction))
	}
	n := ds.Len()
	k := int(math.Round(fraction * float64(n)))
	perm := Permutation(n, seed, 0)
	h, r := slices.Clone(perm[:k]), slices.Clone(perm[k:])
	slices.Sort(h)
	slices.Sort(r)
	return &picked{ds: ds, idx: r}, &picked{ds: ds, idx: h}
}
