package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindMaxPool2d, (*Backend).maxPool2d, poolDType)
	kernels.Set(ir.KindMaxPool2dGrad, (*Backend).maxPool2dGrad, poolDType)
}

// poolDType reports whether the max-pooling kernels run dt: F32, Flex32 and
// F64 (the other dtypes are lowered with the kinds' decompositions).
func poolDType(dt backend.DType) bool { return isF32(dt) || dt == backend.F64 }

// maxPool2d returns the maximum over each window of In[0] x [N, C, H, W]
// (F32, Flex32 or F64, any layout) under op.Attrs.Pool, giving op.Shape
// [N, C, Ho, Wo] in x's dtype (PyTorch's max_pool2d without ceil mode;
// padding reads -Inf, the first NaN of a window propagates, ties keep the
// first tap), bit for bit the decomposition of ir.KindMaxPool2d. One
// direct loop per N·C plane, the planes spread over the worker pool.
// Other operands are lowered with the decomposition.
func (be *Backend) maxPool2d(op ir.Op) ir.Outputs {
	if out := maxPoolT(op, be.f32, maxTapF32); out != nil {
		return ir.One(out)
	}
	if out := maxPoolT(op, be.f64, maxTapF64); out != nil {
		return ir.One(out)
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

func maxPoolT[T float](op ir.Op, alloc func(int) []T, tap func(best, data []T, idx, step int) bool) ir.Tensor {
	x, ok := view[T](op.In[0])
	if !ok {
		return nil
	}
	g := newPoolGeom(x.Shape, [2]int{op.Shape[2], op.Shape[3]}, op.Attrs.Pool)
	out := alloc(numel(op.Shape))
	xv := view4[T]{x.Data, x.Offset, [4]int(x.Strides)}
	if o32, ok := any(out).([]float32); !ok || !maxPool2Fwd(o32, any(xv).(view4[float32]), g) {
		maxPoolFwd(out, xv, g, tap)
	}
	return wrap(op.DType, op.Shape, out)
}

// maxPool2dGrad returns the gradient op.Shape [N, C, H, W] with respect to
// x = In[0] of y = MaxPool2d(x) (In[1]) for the output gradient g (In[2];
// all three F32, Flex32 or F64 of one dtype, any layout): each window's g
// goes whole to its selected tap, the first in kernel order equal to its
// maximum (the first NaN of a NaN window), as PyTorch's max_pool2d; the
// per-offset contributions are summed in the order of the decomposition
// of ir.KindMaxPool2dGrad, so the result is bit-identical to it. Per
// plane: one pass over the windows for the selected taps, then one
// scatter per kernel offset into the output, the planes spread over the
// worker pool. Other operands are lowered with the decomposition.
func (be *Backend) maxPool2dGrad(op ir.Op) ir.Outputs {
	if out := maxPoolGradT(op, be.f32); out != nil {
		return ir.One(out)
	}
	if out := maxPoolGradT(op, be.f64); out != nil {
		return ir.One(out)
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

func maxPoolGradT[T float](op ir.Op, alloc func(int) []T) ir.Tensor {
	x, ok0 := view[T](op.In[0])
	y, ok1 := view[T](op.In[1])
	g, ok2 := view[T](op.In[2])
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	geo := newPoolGeom(x.Shape, [2]int{y.Shape[2], y.Shape[3]}, op.Attrs.Pool)
	out := alloc(numel(op.Shape))
	xv, yv, gv := view4[T]{x.Data, x.Offset, [4]int(x.Strides)}, view4[T]{y.Data, y.Offset, [4]int(y.Strides)},
		view4[T]{g.Data, g.Offset, [4]int(g.Strides)}
	if o32, ok := any(out).([]float32); !ok ||
		!maxPool2Bwd(o32, any(xv).(view4[float32]), any(yv).(view4[float32]), any(gv).(view4[float32]), geo) {
		maxPoolBwd(out, xv, yv, gv, geo)
	}
	return wrap(op.DType, op.Shape, out)
}

// view4 is a rank-4 view: element (n, c, h, w) is
// data[off + n·st[0] + c·st[1] + h·st[2] + w·st[3]].
type view4[T float32 | float64] struct {
	data []T
	off  int
	st   [4]int
}

// plane returns the offset of plane p = n·C + c.
func (s view4[T]) plane(p, c int) int { return s.off + (p/c)*s.st[0] + (p%c)*s.st[1] }

// poolGeom is the geometry of one pooling: sizes, strides, and per kernel
// column j the range [woLo[j], woHi[j]) of output columns whose tap j
// reads inside x (column wo·sW + j·dW − pW), the others reading padding.
type poolGeom struct {
	n, c, h, w, ho, wo, kh, kw int
	sH, sW, pH, pW, dH, dW     int
	woLo, woHi                 []int
	rowCov, colCov             []int // how many kernel rows (columns) reach input row h (column w)
}

// newPoolGeom returns the geometry of pooling x of shape [N, C, H, W] to
// the output size out [Ho, Wo] under o.
func newPoolGeom(shape []int, out [2]int, o backend.PoolOptions) *poolGeom {
	g := &poolGeom{n: shape[0], c: shape[1], h: shape[2], w: shape[3], ho: out[0], wo: out[1],
		kh: o.Kernel[0], kw: o.Kernel[1], sH: o.Stride[0], sW: o.Stride[1],
		pH: o.Padding[0], pW: o.Padding[1], dH: o.Dilation[0], dW: o.Dilation[1]}
	g.woLo, g.woHi = make([]int, g.kw), make([]int, g.kw)
	for j := range g.kw {
		g.woLo[j], g.woHi[j] = tapRange(g.wo, g.w, g.sW, j*g.dW-g.pW)
	}
	g.rowCov = coverage(g.ho, g.kh, g.h, g.sH, g.pH, g.dH)
	g.colCov = coverage(g.wo, g.kw, g.w, g.sW, g.pW, g.dW)
	return g
}

// tapRange returns the outputs o in [0, out) with 0 <= o·stride + off < in
// as [lo, hi) (empty when lo >= hi).
func tapRange(out, in, stride, off int) (lo, hi int) {
	for lo < out && lo*stride+off < 0 {
		lo++
	}
	hi = out
	for hi > lo && (hi-1)*stride+off >= in {
		hi--
	}
	return lo, max(lo, hi)
}

// coverage returns, along one spatial axis of size in, how many kernel
// offsets' strided views reach each input index (each view reaches an
// index at most once).
func coverage(out, k, in, stride, pad, dil int) []int {
	cov := make([]int, in)
	for i := range k {
		for o := range out {
			if p := o*stride + i*dil - pad; p >= 0 && p < in {
				cov[p]++
			}
		}
	}
	return cov
}

// poolGrain returns how many planes of about per elements each make a task
// worth handing to the pool.
func poolGrain(per int) int { return max(1, serialElems/max(per, 1)) }

// maxPoolFwd writes the pooled planes of x into out ([N·C, Ho, Wo]). Per
// output row it visits the taps in kernel order, each tap updating the
// whole row, so every window sees its taps in the composition's order;
// tap updates the row with one tap (see maxTapF32) and a row whose taps
// held a NaN is redone with the exact NaN rule.
func maxPoolFwd[T float32 | float64](out []T, x view4[T], g *poolGeom, tap func(best, data []T, idx, step int) bool) {
	neg := T(math.Inf(-1))
	sh, sw := x.st[2], x.st[3]
	step := g.sW * sw
	workers.ParallelGrain(g.n*g.c, poolGrain(g.h*g.w), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			base := x.plane(p, g.c)
			for ho := range g.ho {
				best := out[(p*g.ho+ho)*g.wo : (p*g.ho+ho+1)*g.wo]
				first, nan := true, false
				for i := range g.kh {
					r := ho*g.sH + i*g.dH - g.pH
					if r < 0 || r >= g.h {
						if first {
							fill(best, neg) // a padding row starts at -Inf
							first = false
						}
						continue // later padding taps never win
					}
					for j := range g.kw {
						wlo, whi := g.woLo[j], g.woHi[j]
						idx := base + r*sh + (wlo*g.sW+j*g.dW-g.pW)*sw
						if first {
							fill(best[:wlo], neg)
							fill(best[whi:], neg)
							for wo := wlo; wo < whi; wo++ {
								v := x.data[idx]
								best[wo] = v
								nan = nan || v != v
								idx += step
							}
							first = false
							continue
						}
						if wlo < whi && tap(best[wlo:whi], x.data, idx, step) {
							nan = true
						}
					}
				}
				if nan {
					maxRowExact(best, x, base, ho, g)
				}
			}
		}
	})
}

// maxTapF32 sets best[k] to data[idx + k·step] where that is greater, and
// reports whether any of those was NaN (which it does not propagate).
// Ties keep best (the earlier tap). The select is branch-free.
func maxTapF32(best, data []float32, idx, step int) bool {
	nan := false
	for k, b := range best {
		v := data[idx]
		vb, bb := math.Float32bits(v), math.Float32bits(b)
		if v > b {
			bb = vb
		}
		best[k] = math.Float32frombits(bb)
		nan = nan || v != v
		idx += step
	}
	return nan
}

// maxTapF64 is maxTapF32 for float64.
func maxTapF64(best, data []float64, idx, step int) bool {
	nan := false
	for k, b := range best {
		v := data[idx]
		vb, bb := math.Float64bits(v), math.Float64bits(b)
		if v > b {
			bb = vb
		}
		best[k] = math.Float64frombits(bb)
		nan = nan || v != v
		idx += step
	}
	return nan
}

// maxRowExact recomputes output row ho of the plane at base window by
// window, taps in kernel order: the first tap starts, a NaN replaces a
// number and then stays, ties keep the earlier tap (flex's Reduce).
func maxRowExact[T float32 | float64](best []T, x view4[T], base, ho int, g *poolGeom) {
	neg := T(math.Inf(-1))
	for wo := range g.wo {
		var m T
		first := true
		for i := range g.kh {
			r := ho*g.sH + i*g.dH - g.pH
			for j := range g.kw {
				c := wo*g.sW + j*g.dW - g.pW
				v := neg
				if r >= 0 && r < g.h && c >= 0 && c < g.w {
					v = x.data[base+r*x.st[2]+c*x.st[3]]
				}
				if first || v > m || (v != v && m == m) {
					m, first = v, false
				}
			}
		}
		best[wo] = m
	}
}

// fill sets every element of s to v.
func fill[T float32 | float64](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// selectTap returns the tap i·kW + j of window (ho, wo) of the plane at
// xb that receives the window's gradient: the first in row-major kernel
// order equal to the window's maximum m, or the first NaN when m is NaN
// (padding taps read neg, -Inf), as decomposeMaxPool2dGrad selects.
func selectTap[T float32 | float64](x view4[T], xb int, m T, ho, wo int, g *poolGeom, neg T) int32 {
	nan := m != m
	for i := range g.kh {
		r := ho*g.sH + i*g.dH - g.pH
		for j := range g.kw {
			c := wo*g.sW + j*g.dW - g.pW
			v := neg
			if r >= 0 && r < g.h && c >= 0 && c < g.w {
				v = x.data[xb+r*x.st[2]+c*x.st[3]]
			}
			if v == m || (nan && v != v) {
				return int32(i*g.kw + j)
			}
		}
	}
	return -1
}

// maxPoolBwd writes the gradient planes into out ([N·C, H, W]).
func maxPoolBwd[T float32 | float64](out []T, x, y, gr view4[T], g *poolGeom) {
	if g.kh*g.kw > 1 && g.sH == g.kh && g.sW == g.kw && g.pH == 0 && g.pW == 0 && g.dH == 1 && g.dW == 1 {
		maxPoolBwdTiled(out, x, y, gr, g)
		return
	}
	maxPoolBwdGeneral(out, x, y, gr, g)
}

// maxPoolBwdGeneral is maxPoolBwd for any geometry.
func maxPoolBwdGeneral[T float32 | float64](out []T, x, y, gr view4[T], g *poolGeom) {
	neg := T(math.Inf(-1))
	negZero := T(math.Copysign(0, -1))
	nOut := g.ho * g.wo
	colPart := make([]bool, g.w) // column reached by fewer than kW kernel columns
	for c, n := range g.colCov {
		colPart[c] = n < g.kw
	}
	workers.ParallelGrain(g.n*g.c, poolGrain(g.h*g.w), func(lo, hi int) {
		qs := make([]T, nOut)      // each window's g
		sel := make([]int32, nOut) // each window's selected tap i·kW + j
		for p := lo; p < hi; p++ {
			xb, yb, gb := x.plane(p, g.c), y.plane(p, g.c), gr.plane(p, g.c)
			for ho := range g.ho {
				for wo := range g.wo {
					m := y.data[yb+ho*y.st[2]+wo*y.st[3]]
					qs[ho*g.wo+wo] = gr.data[gb+ho*gr.st[2]+wo*gr.st[3]]
					sel[ho*g.wo+wo] = selectTap(x, xb, m, ho, wo, g, neg)
				}
			}
			// One scatter per kernel offset, from the last to the first,
			// as the composed gradient adds the views' gradients. An
			// element every view reaches starts at -0, the identity of
			// the first addition; one some view misses had +0 added at
			// some point, which only turns a final -0 into +0, as
			// starting at +0 does.
			dst := out[p*g.h*g.w : (p+1)*g.h*g.w]
			for r := range g.h {
				row := dst[r*g.w : (r+1)*g.w]
				if g.rowCov[r] < g.kh {
					clear(row)
					continue
				}
				for c, part := range colPart {
					row[c] = negZero
					if part {
						row[c] = 0
					}
				}
			}
			for i := g.kh - 1; i >= 0; i-- {
				for j := g.kw - 1; j >= 0; j-- {
					wlo, whi := g.woLo[j], g.woHi[j]
					if wlo >= whi {
						continue
					}
					c0 := wlo*g.sW + j*g.dW - g.pW
					for ho := range g.ho {
						r := ho*g.sH + i*g.dH - g.pH
						if r < 0 || r >= g.h {
							continue
						}
						row := dst[r*g.w+c0:]
						sr, qr := sel[ho*g.wo+wlo:ho*g.wo+whi], qs[ho*g.wo+wlo:ho*g.wo+whi]
						k := int32(i*g.kw + j)
						for n, t := range sr {
							var v T // +0 for a tap that is not selected
							if t == k {
								v = qr[n]
							}
							row[n*g.sW] += v
						}
					}
				}
			}
		}
	})
}

// maxPoolBwdTiled is maxPoolBwd for windows that tile the input without
// overlap, padding or dilation (stride = kernel, the common 2×2 pooling),
// with more than one tap: each input element is reached by one tap of one
// window at most, so it is +0 plus that window's g when the tap is the
// window's selected one and +0 otherwise (+0 + −0 = +0, as the
// composition's sum of full-size terms gives), and +0 where no window
// reaches.
func maxPoolBwdTiled[T float32 | float64](out []T, x, y, gr view4[T], g *poolGeom) {
	kh, kw, w := g.kh, g.kw, g.w
	xd, xh, xw := x.data, x.st[2], x.st[3]
	yd, yh, yw := y.data, y.st[2], y.st[3]
	gd, gh, gw := gr.data, gr.st[2], gr.st[3]
	workers.ParallelGrain(g.n*g.c, poolGrain(g.h*g.w), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			xb, yb, gb := x.plane(p, g.c), y.plane(p, g.c), gr.plane(p, g.c)
			dst := out[p*g.h*w : (p+1)*g.h*w]
			clear(dst)
			for ho := range g.ho {
				for wo := range g.wo {
					// The selected tap: the first in kernel order equal to
					// the window's maximum, or NaN when the maximum is NaN
					// (selectTap's rule, without padding to test).
					m := yd[yb+ho*yh+wo*yw]
					nan := m != m
					base := xb + ho*kh*xh + wo*kw*xw
					r, c := -1, 0
				taps:
					for i := range kh {
						row := base + i*xh
						for j := range kw {
							if v := xd[row+j*xw]; v == m || (nan && v != v) {
								r, c = ho*kh+i, wo*kw+j
								break taps
							}
						}
					}
					if r >= 0 {
						dst[r*w+c] += gd[gb+ho*gh+wo*gw]
					}
				}
			}
		}
	})
}
