package cpu

import "unsafe"

// The AVX2/FMA row kernels of softmax_amd64.s; n is a multiple of 8.

//go:noescape
func smaxMaxF32(x *float32, n int) float32

//go:noescape
func smaxExpSumF32(o, x *float32, n int, m float32, pf int) float64

//go:noescape
func smaxExpSumOnlyF32(x *float32, n int, m float32, pf int) float64

//go:noescape
func smaxExpSubF32(o, x, m *float32, n int)

//go:noescape
func normSumF32(x *float32, n int) float64

//go:noescape
func normSqDevSumF32(x *float32, n int, mean float32, pf int) float64

//go:noescape
func normDotF32(a, b *float32, n int) float64

// rowVec selects the AVX2 row kernels (with FMA); without, the portable
// loops of softmax.go run.
var rowVec = hasAVX2

// rowVec8 is the part of an n-element row the AVX2 kernels take: n rounded
// down to a multiple of 8, or 0 without them.
func rowVec8(n int) int {
	if !rowVec {
		return 0
	}
	return n &^ 7
}

// rowMax32 is the largest element of x (-Inf for an empty x); where x
// holds NaN the result is unspecified (callers compute NaN from the NaN
// element itself).
func rowMax32(x []float32) float32 {
	m := rowVec8(len(x))
	if m == 0 {
		return rowMaxGo(x, rowNegInf32)
	}
	return rowMaxGo(x[m:], smaxMaxF32(&x[0], m))
}

// expSum32 sets o[i] = e^(x[i]−m) (expF32's accuracy) and returns their
// float64 sum; o nil only sums. It prefetches the len(x) elements after x
// (the next row of a row-wise caller).
func expSum32(o, x []float32, m float32) float64 {
	k := rowVec8(len(x))
	var s float64
	if k > 0 {
		if o != nil {
			s = smaxExpSumF32(&o[0], &x[0], k, m, 4*len(x))
		} else {
			s = smaxExpSumOnlyF32(&x[0], k, m, 4*len(x))
		}
	}
	if o != nil {
		o = o[k:]
	}
	return s + expSumGo(o, x[k:], m)
}

// expSub32 sets o[i] = e^(x[i]−m[i]).
func expSub32(o, x, m []float32) {
	k := rowVec8(len(o))
	if k > 0 {
		smaxExpSubF32(&o[0], &x[0], &m[0], k)
	}
	expSubGo(o[k:], x[k:len(o)], m[k:len(o)])
}

// rowSum32 is the float64 sum of x.
func rowSum32(x []float32) float64 {
	k := rowVec8(len(x))
	var s float64
	if k > 0 {
		s = normSumF32(&x[0], k)
	}
	return s + rowSumGo(x[k:])
}

// rowSqDevSum32 is the float64 sum of float32((x[i]−mean)²), the difference
// and the square each rounded to float32; it prefetches as expSum32.
func rowSqDevSum32(x []float32, mean float32) float64 {
	k := rowVec8(len(x))
	var s float64
	if k > 0 {
		s = normSqDevSumF32(&x[0], k, mean, 4*len(x))
	}
	return s + sqDevSumGo(x[k:], mean)
}

// rowDot32 is the float64 sum of the float32 products a[i]·b[i].
func rowDot32(a, b []float32) float64 {
	k := rowVec8(len(a))
	var s float64
	if k > 0 {
		s = normDotF32(&a[0], &b[0], k)
	}
	return s + rowDotGo(a[k:], b[k:len(a)])
}

//go:noescape
func smaxScaleF32(o, e *float32, n int, r float32, nt bool)

//go:noescape
func smaxShiftF32(o, x *float32, n int, m, ls float32, nt bool)

//go:noescape
func smaxGradF32(o, y, gr *float32, n int, d float32, pf int, nt bool)

//go:noescape
func smaxLogGradF32(o, y, gr *float32, n int, s float32, pf int, nt bool)

//go:noescape
func normApplyF32(o, x, w, b *float32, n int, mean, rstd float32, wstep, bstep int, nt bool)

//go:noescape
func normGradSumsF32(xh, gh, x, gr, w *float32, n int, mean, rstd float32, wstep, pf int) (sa, sb float64)

//go:noescape
func normGradApplyF32(o, xh, gh *float32, n int, a, b, rstd float32, nt bool)

// streamRow reports whether an output row o of a large output (nt) may be
// written with non-temporal stores: its start is 32-byte aligned.
func streamRow(o []float32, nt bool) bool {
	return nt && len(o) > 0 && uintptr(unsafe.Pointer(&o[0]))%32 == 0
}

// scaleOut sets o[i] = e[i]·r.
func scaleOut(o, e []float32, r float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		smaxScaleF32(&o[0], &e[0], k, r, streamRow(o, nt))
	}
	rowScaleGo(o[k:], e[k:len(o)], r)
}

// shiftOut sets o[i] = (x[i] − m) − ls.
func shiftOut(o, x []float32, m, ls float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		smaxShiftF32(&o[0], &x[0], k, m, ls, streamRow(o, nt))
	}
	rowShiftGo(o[k:], x[k:len(o)], m, ls)
}

// softmaxGradOut sets o[i] = y[i]·(g[i] − d), prefetching the len(o)
// elements after y and g (the next row).
func softmaxGradOut(o, y, g []float32, d float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		smaxGradF32(&o[0], &y[0], &g[0], k, d, 4*len(o), streamRow(o, nt))
	}
	softmaxGradGo(o[k:], y[k:len(o)], g[k:len(o)], d)
}

// logSoftmaxGradOut sets o[i] = g[i] − e^y[i]·s, prefetching as
// softmaxGradOut.
func logSoftmaxGradOut(o, y, g []float32, s float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		smaxLogGradF32(&o[0], &y[0], &g[0], k, s, 4*len(o), streamRow(o, nt))
	}
	logSoftmaxGradGo(o[k:], y[k:len(o)], g[k:len(o)], s)
}

// normOut sets o[i] = ((x[i] − mean)·rstd)·w[i] + b[i], without the
// multiplication for a nil w and the addition for a nil b.
func normOut(o, x, w, b []float32, mean, rstd float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		wp, ws := &normOnes[0], 0
		if w != nil {
			wp, ws = &w[0], 32
		}
		bp, bs := &normNegZeros[0], 0
		if b != nil {
			bp, bs = &b[0], 32
		}
		normApplyF32(&o[0], &x[0], wp, bp, k, mean, rstd, ws, bs, streamRow(o, nt))
	}
	if w != nil {
		w = w[k:]
	}
	if b != nil {
		b = b[k:]
	}
	normOutGo(o[k:], x[k:len(o)], w, b, mean, rstd)
}

// normGradSums sets xh[i] = (x[i] − mean)·rstd and gh[i] = g[i]·w[i]
// (g[i] for a nil w) and returns the float64 sums of gh[i] and of the
// float32 products gh[i]·xh[i]; it prefetches the len(xh) elements
// after g (the next row).
func normGradSums(xh, gh, x, g, w []float32, mean, rstd float32) (sa, sb float64) {
	k := rowVec8(len(xh))
	if k > 0 {
		wp, ws := &normOnes[0], 0
		if w != nil {
			wp, ws = &w[0], 32
		}
		sa, sb = normGradSumsF32(&xh[0], &gh[0], &x[0], &g[0], wp, k, mean, rstd, ws, 4*len(xh))
	}
	if w != nil {
		w = w[k:]
	}
	ta, tb := normGradSumsGo(xh[k:], gh[k:len(xh)], x[k:len(xh)], g[k:len(xh)], w, mean, rstd)
	return sa + ta, sb + tb
}

// normGradOut sets o[i] = ((gh[i] − a) − xh[i]·b)·rstd.
func normGradOut(o, xh, gh []float32, a, b, rstd float32, nt bool) {
	k := rowVec8(len(o))
	if k > 0 {
		normGradApplyF32(&o[0], &xh[0], &gh[0], k, a, b, rstd, streamRow(o, nt))
	}
	normGradOutGo(o[k:], xh[k:len(o)], gh[k:len(o)], a, b, rstd)
}

//go:noescape
func smaxExpSumScaleF32(e, x *float32, n int, m float32, pf int, o, ep *float32, r float32, nt bool) float64

//go:noescape
func smaxExpSumShiftF32(x *float32, n int, m float32, pf int, o, xp *float32, mp, lsp float32, nt bool) float64

// expSumScale32 is expSum32(e, x, m) together with scaleOut(o, ep, r,
// nt) for o, ep of x's length (the previous row's output), in one pass.
func expSumScale32(e, x []float32, m float32, o, ep []float32, r float32, nt bool) float64 {
	k := rowVec8(len(x))
	var s float64
	if k > 0 {
		s = smaxExpSumScaleF32(&e[0], &x[0], k, m, 4*len(x), &o[0], &ep[0], r, streamRow(o, nt))
	}
	rowScaleGo(o[k:len(x)], ep[k:len(x)], r)
	return s + expSumGo(e[k:len(x)], x[k:], m)
}

// expSumShift32 is expSum32(nil, x, m) together with shiftOut(o, xp, mp,
// lsp, nt) for o, xp of x's length (the previous row's output), in one
// pass.
func expSumShift32(x []float32, m float32, o, xp []float32, mp, lsp float32, nt bool) float64 {
	k := rowVec8(len(x))
	var s float64
	if k > 0 {
		s = smaxExpSumShiftF32(&x[0], k, m, 4*len(x), &o[0], &xp[0], mp, lsp, streamRow(o, nt))
	}
	rowShiftGo(o[k:len(x)], xp[k:len(x)], mp, lsp)
	return s + expSumGo(nil, x[k:], m)
}
