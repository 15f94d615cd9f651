package cpu

// The AVX2 loops of reduce_amd64.s over rows rows of n lanes (n a
// multiple of 8), the rows stride elements apart: each lane folds its
// elements in row order, so the results are those of the scalar loops.

// sumRowsF32AVX2 sets acc[i] += float64(x[j*stride+i]) for j = 0, 1, ....
//
//go:noescape
func sumRowsF32AVX2(acc *float64, x *float32, n, rows, stride int)

// prodRowsF32AVX2 sets acc[i] *= float64(x[j*stride+i]) for j = 0, 1, ....
//
//go:noescape
func prodRowsF32AVX2(acc *float64, x *float32, n, rows, stride int)

// maxRowsF32AVX2 replaces acc[i] by x[j*stride+i], for j = 0, 1, ...,
// when that is greater, or NaN while acc[i] is not.
//
//go:noescape
func maxRowsF32AVX2(acc, x *float32, n, rows, stride int)

// minRowsF32AVX2 is maxRowsF32AVX2 with less for greater.
//
//go:noescape
func minRowsF32AVX2(acc, x *float32, n, rows, stride int)

// accumulateRowsVec runs the sum (or, when prod, the product) of rows
// rows into acc on the lanes the AVX2 loop takes, a multiple of 8 from
// the start (none without AVX2), and returns their number. The caller
// has checked that x holds the rows.
func accumulateRowsVec(prod bool, acc []float64, x []float32, rows, stride int) int {
	m := len(acc) &^ 7
	if !hasAVX2 || m == 0 {
		return 0
	}
	if prod {
		prodRowsF32AVX2(&acc[0], &x[0], m, rows, stride)
	} else {
		sumRowsF32AVX2(&acc[0], &x[0], m, rows, stride)
	}
	return m
}

// extremeRowsVec is accumulateRowsVec for the max (isMax) or min fold
// into best.
func extremeRowsVec(isMax bool, best, x []float32, rows, stride int) int {
	m := len(best) &^ 7
	if !hasAVX2 || m == 0 {
		return 0
	}
	if isMax {
		maxRowsF32AVX2(&best[0], &x[0], m, rows, stride)
	} else {
		minRowsF32AVX2(&best[0], &x[0], m, rows, stride)
	}
	return m
}
