package flex

import (
	"runtime"
	"sync"
)

// parallelMin is the element count from which loops are split across
// goroutines.
const parallelMin = 1 << 16

// workers is the number of goroutines a loop over n elements uses.
func workers(n int) int {
	if n < parallelMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/(parallelMin/4)))
}

// parallelFor calls fn on disjoint chunks [lo, hi) covering [0, n), in
// parallel when n is large; nothing when n is 0.
func parallelFor(n int, fn func(lo, hi int)) {
	if n > 0 {
		parallelChunks(n, workers(n), fn)
	}
}

// iter walks several strided operands over one shape row by row. Axes of
// size 1 are dropped and adjacent axes that are contiguous for every
// operand are merged, so a contiguous tensor is one long row.
type iter struct {
	shape   []int   // rank >= 1 after coalescing
	strides [][]int // per operand, over shape
	base    []int   // per operand starting offset
	empty   bool
}

// newIter builds an iterator over shape for operands with the given
// starting offsets and strides.
func newIter(shape []int, base []int, strides ...[]int) *iter {
	it := &iter{base: base, strides: make([][]int, len(strides))}
	for _, s := range shape {
		if s == 0 {
			it.empty = true
		}
	}
	for d, s := range shape {
		if s == 1 {
			continue
		}
		last := len(it.shape) - 1
		merge := last >= 0
		for k := range strides {
			if merge && it.strides[k][last] != strides[k][d]*s {
				merge = false
			}
		}
		if merge {
			it.shape[last] *= s
			for k := range strides {
				it.strides[k][last] = strides[k][d]
			}
			continue
		}
		it.shape = append(it.shape, s)
		for k := range strides {
			it.strides[k] = append(it.strides[k], strides[k][d])
		}
	}
	if len(it.shape) == 0 {
		it.shape = []int{1}
		for k := range strides {
			it.strides[k] = []int{0}
		}
	}
	return it
}

// step is operand k's stride along a row.
func (it *iter) step(k int) int { return it.strides[k][len(it.shape)-1] }

// rows calls fn(offs, n) for every row of the innermost axis (or a chunk of
// it), where offs holds each operand's offset of the row's first element
// and n its length. fn runs concurrently for large shapes and must not
// modify offs or write outside the row's elements.
func (it *iter) rows(fn func(offs []int, n int)) {
	if it.empty {
		return
	}
	r := len(it.shape)
	inner := it.shape[r-1]
	total := numel(it.shape)
	nrows := total / inner
	w := workers(total)
	if nrows == 1 {
		// one row: split it into chunks
		parallelChunks(inner, w, func(lo, hi int) {
			offs := make([]int, len(it.base))
			for k := range offs {
				offs[k] = it.base[k] + lo*it.strides[k][r-1]
			}
			fn(offs, hi-lo)
		})
		return
	}
	parallelChunks(nrows, min(w, nrows), func(lo, hi int) {
		nk := len(it.base)
		offs := make([]int, nk)
		idx := make([]int, r-1)
		rem := lo
		for d := r - 2; d >= 0; d-- {
			idx[d] = rem % it.shape[d]
			rem /= it.shape[d]
		}
		for k := 0; k < nk; k++ {
			offs[k] = it.base[k]
			for d := 0; d < r-1; d++ {
				offs[k] += idx[d] * it.strides[k][d]
			}
		}
		for row := lo; row < hi; row++ {
			fn(offs, inner)
			for d := r - 2; d >= 0; d-- {
				idx[d]++
				for k := 0; k < nk; k++ {
					offs[k] += it.strides[k][d]
				}
				if idx[d] < it.shape[d] {
					break
				}
				for k := 0; k < nk; k++ {
					offs[k] -= it.strides[k][d] * it.shape[d]
				}
				idx[d] = 0
			}
		}
	})
}

// parallelChunks splits [0, n) into w chunks run concurrently (w <= 1:
// one call on this goroutine).
func parallelChunks(n, w int, fn func(lo, hi int)) {
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for c := 0; c < w; c++ {
		lo, hi := n*c/w, n*(c+1)/w
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
