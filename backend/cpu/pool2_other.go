//go:build !amd64

package cpu

// hasPool2 is false: no 2×2 pooling kernels on this architecture.
const hasPool2 = false

func maxPool2Rows(out, x []float32, rows, w int)           { panic("cpu: no maxPool2Rows") }
func maxPool2GradRows(out, x, y, g []float32, rows, w int) { panic("cpu: no maxPool2GradRows") }
