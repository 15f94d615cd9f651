//go:build !amd64

package cpu

// accumulateRowsVec takes no lanes: the scalar loop runs them all.
func accumulateRowsVec(prod bool, acc []float64, x []float32, rows, stride int) int { return 0 }

// extremeRowsVec takes no lanes: the scalar loop runs them all.
func extremeRowsVec(isMax bool, best, x []float32, rows, stride int) int { return 0 }
