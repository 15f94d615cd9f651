//go:build !amd64

package cpu

// adamF32Vec takes no elements: the scalar loop runs them all.
func adamF32Vec(po, mo, vo, p, g, m, v []float32, c *[9]float32, mode int) int { return 0 }

// adamF64Vec takes no elements: the scalar loop runs them all.
func adamF64Vec(po, mo, vo, p, g, m, v []float64, c *[9]float64, mode int) int { return 0 }

// sgdF32Vec takes no elements: the scalar loop runs them all.
func sgdF32Vec(po, bo, p, g, b []float32, c *[3]float32, mode int) int { return 0 }

// sgdF64Vec takes no elements: the scalar loop runs them all.
func sgdF64Vec(po, bo, p, g, b []float64, c *[3]float64, mode int) int { return 0 }

// transposeTile sets dst[i*ds+j] = src[j*ss+i] for i < rows, j < cols.
func transposeTile[T float](dst []T, ds int, src []T, ss, rows, cols int) {
	transposeEdges(dst, ds, src, ss, rows, cols, 0, 0)
}
