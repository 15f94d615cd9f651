package cpu

import (
	"math"

	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindLayerNorm, (*Backend).norm, normDType)
	kernels.Set(ir.KindRMSNorm, (*Backend).norm, normDType)
	kernels.Set(ir.KindLayerNormGrad, (*Backend).normGrad, normDType)
	kernels.Set(ir.KindRMSNormGrad, (*Backend).normGrad, normDType)
}

// normRows is the row geometry of a normalization: rows of n elements
// (the normalized trailing axes from op.Axis on), and the statistics in
// the decomposition's float32 rounding order.
type normRows struct {
	rows, n int
	eps     float64
	rms     bool
}

func newNormRows(op *ir.Op) normRows {
	s := op.In[0].Shape()
	n := numel(s[op.Axis:])
	return normRows{rows: numel(s[:op.Axis]), n: n, eps: op.Scalars[0],
		rms: op.Kind == ir.KindRMSNorm || op.Kind == ir.KindRMSNormGrad}
}

// stats32 returns the row's mean (0 for RMSNorm) and 1/√(var + eps)
// (mean square for RMSNorm): each sum in float64 rounded to float32,
// divided by float32(n), eps converted to float32 and the reciprocal
// square root computed in float64 and rounded once, as the decomposition's
// ops round.
func (nr normRows) stats32(x []float32) (mean, rstd float32) {
	fn := float32(nr.n)
	if !nr.rms {
		mean = float32(rowSum32(x)) / fn
	}
	v := float32(rowSqDevSum32(x, mean)) / fn
	return mean, float32(1 / math.Sqrt(float64(v+float32(nr.eps))))
}

func (nr normRows) stats64(x []float64) (mean, rstd float64) {
	fn := float64(nr.n)
	if !nr.rms {
		s := 0.0
		for _, v := range x {
			s += v
		}
		mean = s / fn
	}
	q := 0.0
	for _, v := range x {
		d := v - mean
		q += d * d
	}
	return mean, 1 / math.Sqrt(q/fn+nr.eps)
}

// norm runs LayerNorm and RMSNorm of x = In[0] over its axes from op.Axis
// on, with the optional weight (In[1]) and bias (In[2], LayerNorm) (see
// ir.KindLayerNorm), operands of any layout: per row of the normalized
// elements, one read from memory for the float64 sum, the squared
// deviations from the float32 mean summed in float64 while the row is in
// cache, and one pass writing ((x − mean)·rstd)·weight + bias (streamed as
// in softmax). Every float32 operation rounds as the decomposition's op
// does and the sums are more accurate (one float64 sum where the
// decomposition sums each normalized axis in turn), so F32 results equal
// the decomposition's for one normalized axis except where a last-bit
// difference of a sum changes the float32 mean or variance (a few ulp),
// and stay within a few ulp of it for several. F64 runs the same steps in
// float64. Empty tensors and other operands go through the decomposition.
func (be *Backend) norm(op ir.Op) ir.Outputs {
	nr := newNormRows(&op)
	if nr.rows*nr.n > 0 {
		if x, w, b, ok := normInputs32(be, &op, 1, 2); ok {
			out := be.f32(len(x))
			norm32(out, x, w, b, nr)
			return ir.One(host.NewFloat32(op.DType, op.Shape, out))
		}
		if x, w, b, ok := normInputs64(be, &op, 1, 2); ok {
			out := be.f64(len(x))
			norm64(out, x, w, b, nr)
			return ir.One(host.NewFloat64(op.Shape, out))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// normInputs32 returns the row-major float32 elements of op's x (In[0])
// and of its inputs wi and bi when present (nil when absent; bi is
// ignored for kinds with fewer inputs).
func normInputs32(be *Backend, op *ir.Op, wi, bi int) (x, w, b []float32, ok bool) {
	return normInputs(op, wi, bi, be.f32)
}

func normInputs64(be *Backend, op *ir.Op, wi, bi int) (x, w, b []float64, ok bool) {
	return normInputs(op, wi, bi, be.f64)
}

func normInputs[T float](op *ir.Op, wi, bi int, alloc func(int) []T) (x, w, b []T, ok bool) {
	if x, ok = rowMajorData(op.In[0], alloc); !ok {
		return nil, nil, nil, false
	}
	get := func(i int) ([]T, bool) {
		if i >= op.NumInputs() || op.In[i] == nil {
			return nil, true
		}
		return rowMajorData(op.In[i], alloc)
	}
	if w, ok = get(wi); !ok {
		return nil, nil, nil, false
	}
	if b, ok = get(bi); !ok {
		return nil, nil, nil, false
	}
	return x, w, b, true
}

func norm32(o, x, w, b []float32, nr normRows) {
	n := nr.n
	nt := streamOut(len(o))
	laneRows(axisLanes{outer: nr.rows, n: n, inner: 1}, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			os, xs := o[r*n:(r+1)*n], x[r*n:(r+1)*n]
			mean, rstd := nr.stats32(xs)
			normOut(os, xs, w, b, mean, rstd, nt)
		}
	})
}

func norm64(o, x, w, b []float64, nr normRows) {
	n := nr.n
	laneRows(axisLanes{outer: nr.rows, n: n, inner: 1}, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			os, xs := o[r*n:(r+1)*n], x[r*n:(r+1)*n]
			mean, rstd := nr.stats64(xs)
			for i, v := range xs {
				y := (v - mean) * rstd
				if w != nil {
					y *= w[i]
				}
				if b != nil {
					y += b[i]
				}
				os[i] = y
			}
		}
	})
}

// normGrad runs LayerNormGrad and RMSNormGrad of x = In[0], the optional
// weight In[1] and g = In[2] (see ir.KindLayerNormGrad): per row the
// statistics as in norm, one pass writing x̂ = (x − mean)·rstd and
// ĝ = g·weight to row buffers with the float64 sums Σĝ and Σĝ·x̂, and one
// writing rstd·((ĝ − Σĝ/n) − x̂·(Σĝ·x̂/n)) (streamed as in softmax), each
// float32 operation rounding as the decomposition's does (within a few
// ulp of it, relative to the row's largest |term|). F64 runs the same
// steps in float64. Empty tensors and other operands go through the
// decomposition.
func (be *Backend) normGrad(op ir.Op) ir.Outputs {
	nr := newNormRows(&op)
	if nr.rows*nr.n > 0 {
		if x, w, g, ok := normInputs32(be, &op, 1, 2); ok {
			out := be.f32(len(x))
			normGrad32(out, x, w, g, nr)
			return ir.One(host.NewFloat32(op.DType, op.Shape, out))
		}
		if x, w, g, ok := normInputs64(be, &op, 1, 2); ok {
			out := be.f64(len(x))
			normGrad64(out, x, w, g, nr)
			return ir.One(host.NewFloat64(op.Shape, out))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

func normGrad32(o, x, w, g []float32, nr normRows) {
	n := nr.n
	fn := float32(n)
	nt := streamOut(len(o))
	laneRows(axisLanes{outer: nr.rows, n: n, inner: 1}, func(lo, hi int) {
		xh, gh := make([]float32, n), make([]float32, n)
		for r := lo; r < hi; r++ {
			os, xs, gs := o[r*n:(r+1)*n], x[r*n:(r+1)*n], g[r*n:(r+1)*n]
			mean, rstd := nr.stats32(xs)
			sa, sb := normGradSums(xh, gh, xs, gs, w, mean, rstd)
			var a float32
			if !nr.rms {
				a = float32(sa) / fn
			}
			normGradOut(os, xh, gh, a, float32(sb)/fn, rstd, nt)
		}
	})
}

func normGrad64(o, x, w, g []float64, nr normRows) {
	n := nr.n
	fn := float64(n)
	laneRows(axisLanes{outer: nr.rows, n: n, inner: 1}, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			os, xs, gs := o[r*n:(r+1)*n], x[r*n:(r+1)*n], g[r*n:(r+1)*n]
			mean, rstd := nr.stats64(xs)
			var sa, sb float64
			for i, v := range xs {
				gh := gs[i]
				if w != nil {
					gh *= w[i]
				}
				sa += gh
				sb += gh * ((v - mean) * rstd)
			}
			a, b := sa/fn, sb/fn
			if nr.rms {
				a = 0
			}
			for i, v := range xs {
				gh := gs[i]
				if w != nil {
					gh *= w[i]
				}
				os[i] = rstd * ((gh - a) - ((v-mean)*rstd)*b)
			}
		}
	})
}
