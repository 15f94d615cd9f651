package cpu

import "github.com/emberml/ember/backend/cpu/internal/workers"

// Broadcast operands of the elementwise fast paths. A contiguous operand
// broadcast to an output of n elements reads, for output index i:
//
//	full:     data[i]           (same shape as the output)
//	periodic: data[i % p]       (shape is a suffix of the output's: a bias row)
//	repeat:   data[i / p]       (shape is a prefix, then size-1 axes: a column, or a scalar with p = n)
//	middle:   data[(i / q) % p] (size-1 axes, some of the output's axes, size-1 axes: a per-channel bias [1, C, 1, 1])
//
// Any other broadcast (two or more separate runs of broadcast axes among
// the operand's own) falls back to flex.
type bmode uint8

const (
	bFull bmode = iota
	bPeriodic
	bRepeat
	bMiddle
)

// bview is one operand of an elementwise fast path.
type bview[T any] struct {
	data []T
	mode bmode
	p    int
	q    int // bMiddle: output elements per data element
}

// classify describes contiguous data of shape as broadcast to out, or
// returns false when the broadcast is not one of the three modes.
func classify[T any](data []T, shape, out []int) (bview[T], bool) {
	n := numel(out)
	m := len(data)
	switch {
	case m == n:
		return bview[T]{data: data, mode: bFull}, true
	case m == 1:
		return bview[T]{data: data, mode: bRepeat, p: n}, true
	}
	r := len(out)
	padded := make([]int, r)
	for i := range padded {
		padded[i] = 1
	}
	copy(padded[r-len(shape):], shape)
	first, last := -1, -1
	for i, s := range padded {
		if s != 1 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	// periodic: ones, then the output's trailing axes
	per := true
	for i := first; i < r; i++ {
		if padded[i] != out[i] {
			per = false
			break
		}
	}
	if per {
		return bview[T]{data: data, mode: bPeriodic, p: numel(out[first:])}, true
	}
	// middle (repeat when first is 0): ones, the output's axes, then ones
	for i := first; i <= last; i++ {
		if padded[i] != out[i] {
			return bview[T]{}, false
		}
	}
	q := numel(out[last+1:])
	if first == 0 {
		return bview[T]{data: data, mode: bRepeat, p: q}, true
	}
	return bview[T]{data: data, mode: bMiddle, p: m, q: q}, true
}

// end returns where the run of output indices starting at i in which v
// reads contiguously (or a single scalar) ends, capped at hi.
func (v *bview[T]) end(i, hi int) int {
	switch v.mode {
	case bFull:
		return hi
	case bMiddle:
		return min(hi, (i/v.q+1)*v.q)
	}
	return min(hi, (i/v.p+1)*v.p)
}

// at returns v's elements for output indices [i, j) within one run: a
// slice, or (scalar true) the single element repeated.
func (v *bview[T]) at(i, j int) (s []T, x T, scalar bool) {
	switch v.mode {
	case bFull:
		return v.data[i:j], x, false
	case bPeriodic:
		o := i % v.p
		return v.data[o : o+j-i], x, false
	case bMiddle:
		return nil, v.data[(i/v.q)%v.p], true
	}
	return nil, v.data[i/v.p], true
}

// Parallel split of elementwise work: chunks of chunkElems elements (256
// KiB of float32, half a core's L2) handed to the worker pool; outputs
// below serialElems elements run on the calling goroutine.
const (
	chunkElems  = 1 << 16
	serialElems = 1 << 15
)

// ntMin is the output size (elements) from which additions stream their
// results past the caches (non-temporal stores): such outputs do not fit
// in the caches anyway, and streaming saves reading them in first.
const ntMin = 1 << 22

// forChunks calls f over [0, n) in cache-sized chunks, in parallel on the
// worker pool when n is large.
func forChunks(n int, f func(lo, hi int)) {
	if n < serialElems {
		if n > 0 {
			f(0, n)
		}
		return
	}
	chunk := chunkElems
	if w := workers.Workers(); n < chunk*w {
		chunk = (n + w - 1) / w
	}
	tasks := (n + chunk - 1) / chunk
	workers.ParallelFor(tasks, func(t int) {
		f(t*chunk, min(n, (t+1)*chunk))
	})
}
