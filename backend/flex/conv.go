package flex

import (
	"runtime"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/unfold"
)

// conv2dF32 computes PyTorch's conv2d (a cross-correlation) in float32:
// x [N, Cin, H, W] and w [Cout, Cin/groups, kH, kW], both contiguous, give
// out [N, Cout, Ho, Wo] (contiguous, overwritten) with
//
//	out[n, co, oy, ox] = Σ_{ci, ky, kx} x[n, g·Cin/groups + ci, oy·sH − pH + ky·dH, ox·sW − pW + kx·dW] · w[co, ci, ky, kx]
//
// where g = co / (Cout/groups) and x is zero outside the image (zero
// padding). Stride, Padding, Dilation and Groups come from opts
// (OutputPadding is ignored); the shapes must agree with them
// (Ho = (H + 2pH − dH(kH−1) − 1)/sH + 1, likewise Wo). Each image and group is
// an im2col followed by one GEMM; images run in parallel.
func conv2dF32(x []float32, xShape [4]int, w []float32, wShape [4]int, opts backend.ConvOptions, out []float32, outShape [4]int) {
	conv2d(x, xShape, w, wShape, opts, out, outShape)
}

// conv2dF64 is conv2dF32 for float64.
func conv2dF64(x []float64, xShape [4]int, w []float64, wShape [4]int, opts backend.ConvOptions, out []float64, outShape [4]int) {
	conv2d(x, xShape, w, wShape, opts, out, outShape)
}

// convTranspose2dF32 computes PyTorch's conv_transpose2d in float32, the
// adjoint of conv2d with the same options: x [N, Cin, H, W] and
// w [Cin, Cout/groups, kH, kW] give out [N, Cout, Ho, Wo] (contiguous,
// overwritten) with
//
//	out[n, g·Cout/groups + co, iy·sH − pH + ky·dH, ix·sW − pW + kx·dW] += x[n, ci, iy, ix] · w[ci, co, ky, kx]
//
// for g = ci / (Cin/groups), dropping positions outside the output, where
// Ho = (H−1)·sH − 2pH + dH(kH−1) + opH + 1 (opH = OutputPadding[0]), likewise
// Wo. Each image and group is one GEMM followed by a col2im scatter; images
// run in parallel.
func convTranspose2dF32(x []float32, xShape [4]int, w []float32, wShape [4]int, opts backend.ConvOptions, out []float32, outShape [4]int) {
	convTranspose2d(x, xShape, w, wShape, opts, out, outShape)
}

// convTranspose2dF64 is convTranspose2dF32 for float64.
func convTranspose2dF64(x []float64, xShape [4]int, w []float64, wShape [4]int, opts backend.ConvOptions, out []float64, outShape [4]int) {
	convTranspose2d(x, xShape, w, wShape, opts, out, outShape)
}

// forImages runs body(i0, i1, serial) over consecutive image ranges covering
// [0, n). With several goroutines each gets a range and serial is true (the
// body must then not start goroutines of its own); a single range [0, n)
// is run with serial false when the work (multiply-adds per image, macs)
// is too small to split or there are fewer images than processors.
func forImages(n, macs int, body func(i0, i1 int, serial bool)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n*macs < gemmParallelMin {
		body(0, n, false)
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < workers; t++ {
		i0, i1 := t*n/workers, (t+1)*n/workers
		wg.Go(func() { body(i0, i1, true) })
	}
	wg.Wait()
}

func conv2d[T kernelFloat](x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, out []T, os [4]int) {
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	cout, ipg := ws[0], ws[1]
	ho, wo := os[2], os[3]
	groups := max(o.Groups, 1)
	opg := cout / groups
	g := unfold.GeomOf(ws[2], ws[3], o)
	kk := ipg * g.Kh * g.Kw // GEMM depth
	hw, ohw := h*wd, ho*wo
	if n == 0 || cout == 0 || ohw == 0 {
		return
	}
	forImages(n, cout*ohw*kk, func(i0, i1 int, serial bool) {
		var colBuf *[]T
		if !g.Pointwise() {
			colBuf = getBuf[T](bufCol, kk*ohw)
			defer putBuf(bufCol, colBuf)
		}
		for i := i0; i < i1; i++ {
			for gr := 0; gr < groups; gr++ {
				src := x[(i*cin+gr*ipg)*hw : (i*cin+(gr+1)*ipg)*hw]
				col := src
				if colBuf != nil {
					col = *colBuf
					unfold.Im2col(src, ipg, h, wd, g, ho, wo, col)
				}
				wg := w[gr*opg*kk : (gr+1)*opg*kk]
				dst := out[(i*cout+gr*opg)*ohw : (i*cout+(gr+1)*opg)*ohw]
				if serial {
					gemmSerial(false, false, opg, ohw, kk, wg, kk, col, ohw, dst, ohw, false)
				} else {
					gemm(false, false, opg, ohw, kk, wg, kk, col, ohw, dst, ohw, false)
				}
			}
		}
	})
}

func convTranspose2d[T kernelFloat](x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, out []T, os [4]int) {
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	opg := ws[1]
	cout, ho, wo := os[1], os[2], os[3]
	groups := max(o.Groups, 1)
	ipg := cin / groups
	g := unfold.GeomOf(ws[2], ws[3], o)
	kk := opg * g.Kh * g.Kw // rows of the column matrix
	hw, ohw := h*wd, ho*wo
	if n == 0 || cout == 0 || ohw == 0 {
		return
	}
	// The column matrix lives on the input grid (H×W); col2im scatters it
	// into the output image, the "image" of the adjoint im2col.
	direct := g.Pointwise() && ho == h && wo == wd
	forImages(n, kk*hw*ipg*groups, func(i0, i1 int, serial bool) {
		var colBuf *[]T
		if !direct {
			colBuf = getBuf[T](bufCol, kk*hw)
			defer putBuf(bufCol, colBuf)
		}
		for i := i0; i < i1; i++ {
			for gr := 0; gr < groups; gr++ {
				src := x[(i*cin+gr*ipg)*hw : (i*cin+(gr+1)*ipg)*hw]
				wg := w[gr*ipg*kk : (gr+1)*ipg*kk]
				dst := out[(i*cout+gr*opg)*ohw : (i*cout+(gr+1)*opg)*ohw]
				col := dst
				if !direct {
					col = *colBuf
				}
				if serial {
					gemmSerial(true, false, kk, hw, ipg, wg, kk, src, hw, col, hw, false)
				} else {
					gemm(true, false, kk, hw, ipg, wg, kk, src, hw, col, hw, false)
				}
				if !direct {
					clear(dst)
					unfold.Col2im(col, opg, ho, wo, g, h, wd, dst)
				}
			}
		}
	})
}
