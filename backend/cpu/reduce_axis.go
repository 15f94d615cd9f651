package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
)

// axisCols is the widest column block one task of a reduction along a
// non-last axis accumulates: 2048 lanes, whose float64 accumulators (16
// KiB) stay in the L1 cache while the rows stream past, each row's part a
// contiguous 8 KiB run that the hardware prefetchers follow.
const axisCols = 2048

// reduceAxis reduces src, contiguous of shape [outer, r, inner] with
// r ≥ 1 and inner > 1, along r into out [outer, inner] with Sum, Prod,
// Max or Min. Each output lane sees its r inputs in order, as flex's
// loops do, so the results are flex's bit for bit: sums and products
// accumulate in float64 from 0 and 1, Max and Min start from the first
// row and take a later element when it is greater (less), or when it is
// NaN and the lane holds none, so the first NaN stays and ties keep the
// earlier element. Whole rows are accumulated at a time (contiguous,
// vectorized with AVX2 where the CPU has it), in column blocks of at most
// axisCols lanes that the worker pool shares with the outer index.
func reduceAxis(op backend.ReduceOp, out, src []float32, outer, r, inner int) {
	nb := (inner + axisCols - 1) / axisCols
	if w := workers.Workers(); outer*nb < w && inner >= 16*w {
		// Enough columns for a block per worker, in whole vectors.
		nb = w
	}
	cols := (inner + nb - 1) / nb
	if nb > 1 {
		cols = (cols + 15) &^ 15
	}
	nb = (inner + cols - 1) / cols
	task := func(t int) {
		o, b := t/nb, t%nb
		lo, hi := b*cols, min(inner, (b+1)*cols)
		x := src[o*r*inner+lo:]
		dst := out[o*inner+lo : o*inner+hi]
		switch op {
		case backend.ReduceSum, backend.ReduceProd:
			var acc [axisCols]float64
			a := acc[:hi-lo]
			init := 0.0
			if op == backend.ReduceProd {
				init = 1
			}
			for i := range a {
				a[i] = init
			}
			accumulateRows(op, a, x, r, inner)
			for i, v := range a {
				dst[i] = float32(v)
			}
		default:
			copy(dst, x[:hi-lo])
			if r > 1 {
				extremeRows(op == backend.ReduceMax, dst, x[inner:], r-1, inner)
			}
		}
	}
	tasks := outer * nb
	if outer*r*inner < serialElems || tasks == 1 {
		for t := range tasks {
			task(t)
		}
		return
	}
	workers.ParallelFor(tasks, task)
}

// accumulateRows adds (ReduceSum) or multiplies (ReduceProd) into each
// acc[i] the rows elements x[j*stride+i], j = 0, 1, ..., rows−1, in that
// order, in float64.
func accumulateRows(op backend.ReduceOp, acc []float64, x []float32, rows, stride int) {
	if rows == 0 || len(acc) == 0 {
		return
	}
	n := len(acc)
	_ = x[(rows-1)*stride+n-1]
	m := accumulateRowsVec(op == backend.ReduceProd, acc, x, rows, stride)
	if m == n {
		return
	}
	a := acc[m:]
	for j := range rows {
		row := x[j*stride+m : j*stride+n]
		if op == backend.ReduceSum {
			for i, v := range row {
				a[i] += float64(v)
			}
		} else {
			for i, v := range row {
				a[i] *= float64(v)
			}
		}
	}
}

// extremeRows folds into each best[i] the rows elements x[j*stride+i],
// j = 0, 1, ..., rows−1, in that order: an element replaces best[i] when
// it is greater (isMax) or less, or when it is NaN and best[i] is not.
func extremeRows(isMax bool, best, x []float32, rows, stride int) {
	if rows == 0 || len(best) == 0 {
		return
	}
	n := len(best)
	_ = x[(rows-1)*stride+n-1]
	m := extremeRowsVec(isMax, best, x, rows, stride)
	if m == n {
		return
	}
	b := best[m:]
	for j := range rows {
		row := x[j*stride+m : j*stride+n]
		for i, v := range row {
			if c := b[i]; c == c && (v != v || (isMax && v > c) || (!isMax && v < c)) {
				b[i] = v
			}
		}
	}
}
