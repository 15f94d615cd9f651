package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindSoftmax, (*Backend).softmax, normDType)
	kernels.Set(ir.KindLogSoftmax, (*Backend).softmax, normDType)
	kernels.Set(ir.KindLogSumExp, (*Backend).logSumExp, normDType)
	kernels.Set(ir.KindSoftmaxGrad, (*Backend).softmaxGrad, normDType)
	kernels.Set(ir.KindLogSoftmaxGrad, (*Backend).softmaxGrad, normDType)
}

// normDType reports whether the softmax and normalization kernels run dt:
// F32, Flex32 and F64 (the other dtypes are lowered with the kinds'
// decompositions).
func normDType(dt backend.DType) bool { return isF32(dt) || dt == backend.F64 }

var rowNegInf32 = float32(math.Inf(-1))

// axisLanes is the geometry of a computation along one axis of a row-major
// tensor viewed as [outer, n, inner]: lane (o, j) holds the n elements
// o·n·inner + k·inner + j.
type axisLanes struct{ outer, n, inner int }

func axisLanesOf(shape []int, axis int) axisLanes {
	return axisLanes{numel(shape[:axis]), shape[axis], numel(shape[axis+1:])}
}

func (g axisLanes) total() int { return g.outer * g.n * g.inner }

// laneBlock is the number of adjacent lanes (inner positions) a task of
// an inner > 1 computation takes: their elements along the axis are
// contiguous runs of laneBlock values.
const laneBlock = 256

// laneRows calls f over row ranges [lo, hi) of g (inner = 1) in parallel.
func laneRows(g axisLanes, f func(lo, hi int)) {
	workers.ParallelGrain(g.outer, max(1, serialElems/max(g.n, 1)), f)
}

// laneBlocks calls f(o, j0, j1) for lane blocks (o, [j0, j1)) of g (inner >
// 1), laneBlock lanes at most, in parallel.
func laneBlocks(g axisLanes, f func(o, j0, j1 int)) {
	per := (g.inner + laneBlock - 1) / laneBlock
	grain := max(1, serialElems/max(g.n*min(g.inner, laneBlock), 1))
	workers.ParallelGrain(g.outer*per, grain, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o, c := t/per, t%per
			f(o, c*laneBlock, min(g.inner, (c+1)*laneBlock))
		}
	})
}

// eachLane calls f(base, stride) for every lane of g (its elements are
// base + k·stride), in parallel.
func eachLane(g axisLanes, f func(base, stride int)) {
	workers.ParallelGrain(g.outer*g.inner, max(1, serialElems/max(g.n, 1)), func(lo, hi int) {
		for l := lo; l < hi; l++ {
			o, j := l/g.inner, l%g.inner
			f(o*g.n*g.inner+j, g.inner)
		}
	})
}

// rowMajorData returns the elements of t, a float host tensor storing T, in
// row-major order: its own storage when it is contiguous, else a copy in
// a buffer from alloc. ok is false for another tensor.
func rowMajorData[T float](t ir.Tensor, alloc func(int) []T) ([]T, bool) {
	v, ok := view[T](t)
	if !ok {
		return nil, false
	}
	if d, ok := v.Contiguous(); ok {
		return d, true
	}
	d := alloc(numel(v.Shape))
	copyRowMajor(d, v)
	return d, true
}

// copyRowMajor copies the elements of v into dst in row-major order.
func copyRowMajor[T float](dst []T, v host.View[T]) {
	r := len(v.Shape)
	if len(dst) == 0 {
		return
	}
	if r == 0 {
		dst[0] = v.Data[v.Offset]
		return
	}
	idx := make([]int, r)
	last, ls := v.Shape[r-1], v.Strides[r-1]
	off := v.Offset
	for i := 0; i < len(dst); i += last {
		p := off
		for j := range dst[i : i+last] {
			dst[i+j] = v.Data[p]
			p += ls
		}
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			off += v.Strides[a]
			if idx[a] < v.Shape[a] {
				break
			}
			off -= v.Strides[a] * v.Shape[a]
			idx[a] = 0
		}
	}
}

// softmax runs Softmax and LogSoftmax of x = In[0] along op.Axis (see
// ir.KindSoftmax): F32/Flex32 and F64 operands of any layout (a strided x
// is copied to row-major order first), other operands and empty tensors
// through the decomposition on this backend. Along the last axis each row
// is read from memory once: its maximum m, then, from cache, e^(x−m) with
// AVX2/FMA (EXP8, within 1 ulp of e^x) into a row buffer with their
// float64 sum Σ (prefetching the next row), then the output e·float32(1/Σ)
// in the same pass as the next row's exponentials (softmaxRows32);
// log-softmax skips the buffer and writes (x − m) − float32(log
// float32(Σ)) in the decomposition's rounding order. Outputs of streamMin
// elements or more are written with non-temporal stores. Along another axis, blocks of
// laneBlock adjacent lanes run the same steps. Rows and blocks are spread
// over the worker pool. F32 softmax is within 6 units of roundoff (2^-24)
// of the exact softmax of the float32-shifted inputs x − m (which the
// decomposition rounds alike), log-softmax within 4 units of |result| +
// |log Σ| + 1; the decomposition's NaN lanes (holding NaN or +Inf, or only
// -Inf) are NaN here too. F64 uses math.Exp, math.Log and division.
func (be *Backend) softmax(op ir.Op) ir.Outputs {
	log := op.Kind == ir.KindLogSoftmax
	g := axisLanesOf(op.In[0].Shape(), op.Axis)
	if g.total() > 0 {
		if x, ok := rowMajorData(op.In[0], be.f32); ok {
			out := be.f32(len(x))
			softmax32(out, x, g, log)
			return ir.One(host.NewFloat32(op.DType, op.Shape, out))
		}
		if x, ok := rowMajorData(op.In[0], be.f64); ok {
			out := be.f64(len(x))
			softmax64(out, x, g, log)
			return ir.One(host.NewFloat64(op.Shape, out))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// logSum32 is float32(log(float32(s))): the decomposition's Log of its
// float32 Sum.
func logSum32(s float64) float32 { return float32(math.Log(float64(float32(s)))) }

func softmax32(o, x []float32, g axisLanes, log bool) {
	n := g.n
	if g.inner == 1 {
		nt := streamOut(len(o))
		laneRows(g, func(lo, hi int) { softmaxRows32(o, x, n, lo, hi, log, nt) })
		return
	}
	laneBlocks(g, func(oo, j0, j1 int) {
		w := j1 - j0
		m := laneMax32(x, g, oo, j0, j1)
		s := make([]float64, w)
		for k := range n {
			i := (oo*n+k)*g.inner + j0
			e := o[i : i+w]
			expSub32(e, x[i:i+w], m)
			for j, v := range e {
				s[j] += float64(v)
			}
		}
		c := make([]float32, w)
		for j, v := range s {
			if log {
				c[j] = logSum32(v)
			} else {
				c[j] = float32(1 / v)
			}
		}
		for k := range n {
			i := (oo*n+k)*g.inner + j0
			if log {
				fusedVV(backend.OpSub, o[i:i+w], x[i:i+w], m)
				fusedVV(backend.OpSub, o[i:i+w], o[i:i+w], c)
			} else {
				fusedVV(backend.OpMul, o[i:i+w], o[i:i+w], c)
			}
		}
	})
}

// softmaxRows32 computes softmax or log-softmax of the contiguous rows
// [lo, hi) of x (rows of n) into o, nt selecting streaming stores. Row r's
// exponentials and their sum are computed in one pass with row r−1's
// output (expSumScale32, expSumShift32), so that the stores of one row
// overlap the arithmetic of the next; softmax keeps the exponentials of
// two rows in buffers.
func softmaxRows32(o, x []float32, n, lo, hi int, log, nt bool) {
	var bufs [2][]float32
	if !log {
		bufs = [2][]float32{make([]float32, n), make([]float32, n)}
	}
	var prevO, prevE, prevX []float32 // the previous row's output, exponentials and input
	var prevM, prevC float32          // and its maximum and 1/Σ (softmax) or log Σ
	for r := lo; r < hi; r++ {
		xs := x[r*n : (r+1)*n]
		m := rowMax32(xs)
		var s float64
		e := bufs[r&1]
		switch {
		case prevO == nil:
			s = expSum32(e, xs, m)
		case log:
			s = expSumShift32(xs, m, prevO, prevX, prevM, prevC, nt)
		default:
			s = expSumScale32(e, xs, m, prevO, prevE, prevC, nt)
		}
		prevO, prevE, prevX, prevM = o[r*n:(r+1)*n], e, xs, m
		if log {
			prevC = logSum32(s)
		} else {
			prevC = float32(1 / s)
		}
	}
	switch {
	case prevO == nil:
	case log:
		shiftOut(prevO, prevX, prevM, prevC, nt)
	default:
		scaleOut(prevO, prevE, prevC, nt)
	}
}

// streamMin is the output size (elements) from which the row kernels
// write their results with non-temporal stores: outputs of 16 MiB and
// more. Such an output is rarely in the caches when a kernel writes it:
// Exec takes it from the allocator's free lists, which cycle through the
// outputs of several calls (they come back a collection later), so
// ordinary stores first read each line from memory. Measured through Exec
// on [4096, 1024] F32 (16 MiB) against PyTorch on a 2-vCPU VM whose L3
// held the operands (bench/NOTES.md): streaming took layer-norm from
// 0.63–0.72x to 0.91–1.10x and softmax from 0.94–1.06x to 1.03–1.09x; on
// an earlier VM it had measured 10 % slower there, so smaller outputs,
// which a cache keeps, take ordinary stores.
var streamMin = 1 << 22

// streamOut reports whether an output of n elements is streamed.
func streamOut(n int) bool { return n >= streamMin }

// laneMax32 returns the maxima of the lanes (oo, j0..j1) of x, NaN for a
// lane holding NaN.
func laneMax32(x []float32, g axisLanes, oo, j0, j1 int) []float32 {
	m := make([]float32, j1-j0)
	for j := range m {
		m[j] = rowNegInf32
	}
	for k := range g.n {
		i := (oo*g.n+k)*g.inner + j0
		for j, v := range x[i : i+len(m)] {
			if v > m[j] || v != v {
				m[j] = v
			}
		}
	}
	return m
}

func softmax64(o, x []float64, g axisLanes, log bool) {
	eachLane(g, func(base, st int) {
		end := base + g.n*st
		m := math.Inf(-1)
		for i := base; i < end; i += st {
			if v := x[i]; v > m || v != v {
				m = v
			}
		}
		s := 0.0
		for i := base; i < end; i += st {
			e := math.Exp(x[i] - m)
			s += e
			o[i] = e
		}
		if log {
			ls := math.Log(s)
			for i := base; i < end; i += st {
				o[i] = (x[i] - m) - ls
			}
			return
		}
		for i := base; i < end; i += st {
			o[i] /= s
		}
	})
}

// logSumExp runs LogSumExp of x = In[0] along op.Axis (see
// ir.KindLogSumExp): m + log Σ e^(x−m) with m the lane maximum, replaced
// by 0 where infinite, the sum computed as Softmax computes it (one read
// of each row from memory), within 4 units of roundoff of |result| + 1 of
// the exact value for F32; F64 with math.Exp and math.Log. Empty axes and
// other operands go through the decomposition.
func (be *Backend) logSumExp(op ir.Op) ir.Outputs {
	g := axisLanesOf(op.In[0].Shape(), op.Axis)
	if g.total() > 0 {
		if x, ok := rowMajorData(op.In[0], be.f32); ok {
			out := be.f32(g.outer * g.inner)
			logSumExp32(out, x, g)
			return ir.One(host.NewFloat32(op.DType, op.Shape, out))
		}
		if x, ok := rowMajorData(op.In[0], be.f64); ok {
			out := be.f64(g.outer * g.inner)
			logSumExp64(out, x, g)
			return ir.One(host.NewFloat64(op.Shape, out))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// finiteShift32 is m, or 0 where m is infinite (logsumexp's shift).
func finiteShift32(m float32) float32 {
	if math.IsInf(float64(m), 0) {
		return 0
	}
	return m
}

func logSumExp32(out, x []float32, g axisLanes) {
	n := g.n
	if g.inner == 1 {
		laneRows(g, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := x[r*n : (r+1)*n]
				m := finiteShift32(rowMax32(row))
				out[r] = logSum32(expSum32(nil, row, m)) + m
			}
		})
		return
	}
	laneBlocks(g, func(oo, j0, j1 int) {
		w := j1 - j0
		m := laneMax32(x, g, oo, j0, j1)
		for j, v := range m {
			m[j] = finiteShift32(v)
		}
		s := make([]float64, w)
		e := make([]float32, w)
		for k := range n {
			i := (oo*n+k)*g.inner + j0
			expSub32(e, x[i:i+w], m)
			for j, v := range e {
				s[j] += float64(v)
			}
		}
		for j, v := range s {
			out[oo*g.inner+j0+j] = logSum32(v) + m[j]
		}
	})
}

func logSumExp64(out, x []float64, g axisLanes) {
	eachLane(g, func(base, st int) {
		end := base + g.n*st
		m := math.Inf(-1)
		for i := base; i < end; i += st {
			if v := x[i]; v > m || v != v {
				m = v
			}
		}
		if math.IsInf(m, 0) {
			m = 0
		}
		s := 0.0
		for i := base; i < end; i += st {
			s += math.Exp(x[i] - m)
		}
		o, j := base/(g.n*g.inner), base%g.inner
		out[o*g.inner+j] = math.Log(s) + m
	})
}

// softmaxGrad runs SoftmaxGrad (y·(g − Σ g·y)) and LogSoftmaxGrad
// (g − e^y·Σ g) of y = In[0] and g = In[1] along op.Axis (see
// ir.KindSoftmaxGrad), any layout (a broadcast g is copied first): per
// row one float64 sum (of the float32 products g·y, or of g) and one pass
// writing the result in the decomposition's rounding order (streamed as
// in softmax), e^y by EXP8; F32 results are within 8 units of roundoff of
// |y|·(|g| + Σ|g·y|), respectively |g| + e^y·Σ|g|, of the exact formula.
// F64 as the decomposition with sequential sums. Empty tensors and other
// operands go through the decomposition.
func (be *Backend) softmaxGrad(op ir.Op) ir.Outputs {
	log := op.Kind == ir.KindLogSoftmaxGrad
	gm := axisLanesOf(op.In[0].Shape(), op.Axis)
	if gm.total() > 0 {
		y, ok0 := rowMajorData(op.In[0], be.f32)
		g, ok1 := rowMajorData(op.In[1], be.f32)
		if ok0 && ok1 {
			out := be.f32(len(y))
			softmaxGrad32(out, y, g, gm, log)
			return ir.One(host.NewFloat32(op.DType, op.Shape, out))
		}
		y64, ok0 := rowMajorData(op.In[0], be.f64)
		g64, ok1 := rowMajorData(op.In[1], be.f64)
		if ok0 && ok1 {
			out := be.f64(len(y64))
			softmaxGrad64(out, y64, g64, gm, log)
			return ir.One(host.NewFloat64(op.Shape, out))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

func softmaxGrad32(o, y, g []float32, gm axisLanes, log bool) {
	n := gm.n
	if gm.inner == 1 {
		nt := streamOut(len(o))
		laneRows(gm, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				os, ys, gs := o[r*n:(r+1)*n], y[r*n:(r+1)*n], g[r*n:(r+1)*n]
				if log {
					logSoftmaxGradOut(os, ys, gs, float32(rowSum32(gs)), nt)
				} else {
					softmaxGradOut(os, ys, gs, float32(rowDot32(gs, ys)), nt)
				}
			}
		})
		return
	}
	laneBlocks(gm, func(oo, j0, j1 int) {
		w := j1 - j0
		s := make([]float64, w)
		for k := range n {
			i := (oo*n+k)*gm.inner + j0
			if log {
				for j, v := range g[i : i+w] {
					s[j] += float64(v)
				}
				continue
			}
			for j, v := range g[i : i+w] {
				s[j] += float64(v * y[i+j])
			}
		}
		c := make([]float32, w)
		for j, v := range s {
			c[j] = float32(v)
		}
		zero := make([]float32, w)
		for k := range n {
			i := (oo*n+k)*gm.inner + j0
			os, ys, gs := o[i:i+w], y[i:i+w], g[i:i+w]
			if log {
				expSub32(os, ys, zero)
				fusedVV(backend.OpMul, os, os, c)
				fusedVV(backend.OpSub, os, gs, os)
				continue
			}
			fusedVV(backend.OpSub, os, gs, c)
			fusedVV(backend.OpMul, os, ys, os)
		}
	})
}

func softmaxGrad64(o, y, g []float64, gm axisLanes, log bool) {
	eachLane(gm, func(base, st int) {
		end := base + gm.n*st
		s := 0.0
		for i := base; i < end; i += st {
			if log {
				s += g[i]
			} else {
				s += g[i] * y[i]
			}
		}
		for i := base; i < end; i += st {
			if log {
				o[i] = g[i] - math.Exp(y[i])*s
			} else {
				o[i] = y[i] * (g[i] - s)
			}
		}
	})
}

// The portable row kernels: the scalar forms of softmax_amd64.s, for
// other architectures and the tails of rows.

// Cephes' expf constants: ln 2 split as expC1 + expC2 (expC1 has few
// bits, so fx·expC1 is exact), and the polynomial for e^r on
// [-ln2/2, ln2/2].
const (
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// expF32 is e^x in float32 arithmetic, the algorithm of EXP8 in
// softmax_amd64.s (Cephes' expf; the assembly fuses the multiply-adds):
// within 1 ulp of float32(math.Exp(x)) for results above 2^-126 (checked
// over [-104, 88.7] by TestExpF32Accuracy), subnormal results within
// 2^-149 plus 1 ulp of the next normal, NaN for NaN, 0 for x below
// -103.98 (as e^x rounds) and +Inf above 88.73.
func expF32(x float32) float32 {
	if !(x >= -110) {
		if x != x {
			return x
		}
		x = -110
	}
	if x > 89 {
		x = 89
	}
	fx := float32(math.RoundToEven(float64(float32(x * expLog2e))))
	r := float32(x - float32(fx*expC1))
	r = float32(r - float32(fx*expC2))
	p := float32(float32(float32(float32(float32(expP0*r+expP1)*r+expP2)*r+expP3)*r+expP4)*r + expP5)
	p = float32(float32(p*float32(r*r))+r) + 1
	n := int32(fx)
	n1 := n >> 1
	return p * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n-n1+127)<<23)
}

// rowMaxGo is the largest of m and the elements of x, NaN when one is.
func rowMaxGo(x []float32, m float32) float32 {
	for _, v := range x {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

func expSumGo(o, x []float32, m float32) float64 {
	s := 0.0
	for i, v := range x {
		e := expF32(v - m)
		if o != nil {
			o[i] = e
		}
		s += float64(e)
	}
	return s
}

func expSubGo(o, x, m []float32) {
	for i := range o {
		o[i] = expF32(x[i] - m[i])
	}
}

func rowSumGo(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func sqDevSumGo(x []float32, mean float32) float64 {
	s := 0.0
	for _, v := range x {
		d := v - mean
		s += float64(float32(d * d))
	}
	return s
}

func rowDotGo(a, b []float32) float64 {
	s := 0.0
	for i, v := range a {
		s += float64(float32(v * b[i]))
	}
	return s
}

// normOnes and normNegZeros stand in for an absent weight and bias in the
// vector loops: x·1 and x + (−0) are x for every float32 x (−0 and NaN
// included).
var (
	normOnes     = [8]float32{1, 1, 1, 1, 1, 1, 1, 1}
	normNegZeros = [8]float32{float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)),
		float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)),
		float32(math.Copysign(0, -1))}
)

func rowScaleGo(o, e []float32, r float32) {
	for i := range o {
		o[i] = e[i] * r
	}
}

func rowShiftGo(o, x []float32, m, ls float32) {
	for i := range o {
		o[i] = float32(x[i]-m) - ls
	}
}

func softmaxGradGo(o, y, g []float32, d float32) {
	for i := range o {
		o[i] = y[i] * float32(g[i]-d)
	}
}

func logSoftmaxGradGo(o, y, g []float32, s float32) {
	for i := range o {
		o[i] = g[i] - float32(expF32(y[i])*s)
	}
}

func normOutGo(o, x, w, b []float32, mean, rstd float32) {
	for i := range o {
		v := float32(x[i]-mean) * rstd
		if w != nil {
			v *= w[i]
		}
		if b != nil {
			v += b[i]
		}
		o[i] = v
	}
}

func normGradSumsGo(xh, gh, x, g, w []float32, mean, rstd float32) (sa, sb float64) {
	for i := range xh {
		xv := float32(x[i]-mean) * rstd
		gv := g[i]
		if w != nil {
			gv *= w[i]
		}
		xh[i], gh[i] = xv, gv
		sa += float64(gv)
		sb += float64(float32(gv * xv))
	}
	return sa, sb
}

func normGradOutGo(o, xh, gh []float32, a, b, rstd float32) {
	for i := range o {
		o[i] = float32(float32(gh[i]-a)-float32(xh[i]*b)) * rstd
	}
}
