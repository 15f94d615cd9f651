package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindExtremumGrad, (*Backend).extremumGrad, backend.DType.IsFloat)
}

// extremumGrad returns the gradient of a Max or Min reduction of x = In[0]
// along op.Axis, whose result is y = In[1], for the output gradient
// g = In[2] (y and g keep the axis as 1): each element equal to the lane's
// result gets g/count (count = the lane's number of such elements, ties
// sharing evenly as in PyTorch's amax/amin backward), the others 0; see
// ir.KindExtremumGrad. Contiguous F32/Flex32 operands take one fused pass
// (count, then q = g/count and q·mask, the same float32 operations as the
// decomposition, so the results are identical), in parallel over lanes;
// other dtypes and layouts are lowered with the decomposition
// Mul(Div(g, Sum(Cast(Eq(x, y)))), Cast(Eq(x, y))) on this backend.
func (be *Backend) extremumGrad(op ir.Op) ir.Outputs {
	if isF32(op.DType) {
		if out := be.extremumGradF32(&op); out != nil {
			return ir.One(out)
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

func (be *Backend) extremumGradF32(op *ir.Op) ir.Tensor {
	x, ok0 := host.Float32(op.In[0])
	y, ok1 := host.Float32(op.In[1])
	g, ok2 := host.Float32(op.In[2])
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	xd, ok0 := x.Contiguous()
	yd, ok1 := y.Contiguous()
	gd, ok2 := g.Contiguous()
	if !ok0 || !ok1 || !ok2 || len(xd) == 0 {
		return nil
	}
	shape, axis := op.Shape, op.Axis
	out := be.f32(len(xd))
	extremumGrad(out, xd, yd, gd, numel(shape[:axis]), shape[axis], numel(shape[axis+1:]))
	return host.NewFloat32(op.DType, shape, out)
}

// extremumGrad computes the extremum gradient on contiguous data viewed as
// [outer, r, inner] (x, out) and [outer, 1, inner] (y, g).
func extremumGrad(out, x, y, g []float32, outer, r, inner int) {
	grain := max(1, serialElems/max(r*inner, 1))
	workers.ParallelGrain(outer, grain, func(lo, hi int) {
		if inner == 1 {
			for o := lo; o < hi; o++ {
				xs, os, m := x[o*r:(o+1)*r], out[o*r:(o+1)*r], y[o]
				var n uint32
				for _, v := range xs {
					n += eq01(v, m)
				}
				q := g[o] / float32(n)
				for k, v := range xs {
					os[k] = q * float32(eq01(v, m))
				}
			}
			return
		}
		cnt := make([]float32, inner)
		for o := lo; o < hi; o++ {
			ys, gs := y[o*inner:(o+1)*inner], g[o*inner:(o+1)*inner]
			clear(cnt)
			for k := range r {
				for j, v := range x[(o*r+k)*inner : (o*r+k+1)*inner] {
					if v == ys[j] {
						cnt[j]++
					}
				}
			}
			for j := range cnt {
				cnt[j] = gs[j] / cnt[j]
			}
			for k := range r {
				os := out[(o*r+k)*inner : (o*r+k+1)*inner]
				for j, v := range x[(o*r+k)*inner : (o*r+k+1)*inner] {
					var e float32
					if v == ys[j] {
						e = 1
					}
					os[j] = cnt[j] * e
				}
			}
		}
	})
}

// eq01 is 1 when a == b, else 0 (0 when either is NaN), without a branch.
func eq01(a, b float32) uint32 {
	var e uint32
	if a == b {
		e = 1
	}
	return e
}
