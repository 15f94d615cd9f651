package cpu

//go:noescape
func maxPool2F32AVX2(out, x *float32, rows, w int)

//go:noescape
func maxPool2GradF32AVX2(out, x, y, gy *float32, rows, w int)

// hasPool2 selects the AVX2 kernels of pool2_amd64.s.
var hasPool2 = hasAVX2

// maxPool2Rows pools rows row pairs of x (w floats each, w a multiple of
// 8) into out (rows·w/2 floats) with the AVX2 kernel.
func maxPool2Rows(out, x []float32, rows, w int) {
	if rows == 0 {
		return
	}
	_ = out[rows*w/2-1]
	_ = x[2*rows*w-1]
	maxPool2F32AVX2(&out[0], &x[0], rows, w)
}

// maxPool2GradRows is maxPool2Rows's gradient for maxima y and output
// gradients g (rows·w/2 floats each) into out (2·rows·w floats).
func maxPool2GradRows(out, x, y, g []float32, rows, w int) {
	if rows == 0 {
		return
	}
	_ = out[2*rows*w-1]
	_ = x[2*rows*w-1]
	_ = y[rows*w/2-1]
	_ = g[rows*w/2-1]
	maxPool2GradF32AVX2(&out[0], &x[0], &y[0], &g[0], rows, w)
}
