//go:build !amd64

package cpu

// rowVec reports whether vector row kernels run: never here (the portable
// loops of softmax.go do).
var rowVec = false

// rowMax32 is the largest element of x (-Inf for an empty x); where x
// holds NaN the result is unspecified (callers compute NaN from the NaN
// element itself).
func rowMax32(x []float32) float32 { return rowMaxGo(x, rowNegInf32) }

// expSum32 sets o[i] = e^(x[i]−m) (expF32) and returns their float64 sum;
// o nil only sums.
func expSum32(o, x []float32, m float32) float64 { return expSumGo(o, x, m) }

// expSub32 sets o[i] = e^(x[i]−m[i]).
func expSub32(o, x, m []float32) { expSubGo(o, x[:len(o)], m[:len(o)]) }

// rowSum32 is the float64 sum of x.
func rowSum32(x []float32) float64 { return rowSumGo(x) }

// rowSqDevSum32 is the float64 sum of float32((x[i]−mean)²).
func rowSqDevSum32(x []float32, mean float32) float64 { return sqDevSumGo(x, mean) }

// rowDot32 is the float64 sum of the float32 products a[i]·b[i].
func rowDot32(a, b []float32) float64 { return rowDotGo(a, b[:len(a)]) }

// scaleOut sets o[i] = e[i]·r.
func scaleOut(o, e []float32, r float32, _ bool) { rowScaleGo(o, e[:len(o)], r) }

// shiftOut sets o[i] = (x[i] − m) − ls.
func shiftOut(o, x []float32, m, ls float32, _ bool) { rowShiftGo(o, x[:len(o)], m, ls) }

// softmaxGradOut sets o[i] = y[i]·(g[i] − d).
func softmaxGradOut(o, y, g []float32, d float32, _ bool) {
	softmaxGradGo(o, y[:len(o)], g[:len(o)], d)
}

// logSoftmaxGradOut sets o[i] = g[i] − e^y[i]·s.
func logSoftmaxGradOut(o, y, g []float32, s float32, _ bool) {
	logSoftmaxGradGo(o, y[:len(o)], g[:len(o)], s)
}

// normOut sets o[i] = ((x[i] − mean)·rstd)·w[i] + b[i], without the
// multiplication for a nil w and the addition for a nil b.
func normOut(o, x, w, b []float32, mean, rstd float32, _ bool) {
	normOutGo(o, x[:len(o)], w, b, mean, rstd)
}

// normGradSums sets xh[i] = (x[i] − mean)·rstd and gh[i] = g[i]·w[i]
// (g[i] for a nil w) and returns the float64 sums of gh[i] and of the
// float32 products gh[i]·xh[i].
func normGradSums(xh, gh, x, g, w []float32, mean, rstd float32) (sa, sb float64) {
	return normGradSumsGo(xh, gh[:len(xh)], x[:len(xh)], g[:len(xh)], w, mean, rstd)
}

// normGradOut sets o[i] = ((gh[i] − a) − xh[i]·b)·rstd.
func normGradOut(o, xh, gh []float32, a, b, rstd float32, _ bool) {
	normGradOutGo(o, xh[:len(o)], gh[:len(o)], a, b, rstd)
}

// expSumScale32 is expSum32(e, x, m) together with scaleOut(o, ep, r).
func expSumScale32(e, x []float32, m float32, o, ep []float32, r float32, _ bool) float64 {
	rowScaleGo(o[:len(x)], ep[:len(x)], r)
	return expSumGo(e[:len(x)], x, m)
}

// expSumShift32 is expSum32(nil, x, m) together with shiftOut(o, xp, mp,
// lsp).
func expSumShift32(x []float32, m float32, o, xp []float32, mp, lsp float32, _ bool) float64 {
	rowShiftGo(o[:len(x)], xp[:len(x)], mp, lsp)
	return expSumGo(nil, x, m)
}
