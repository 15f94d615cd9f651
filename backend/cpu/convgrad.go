package cpu

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindConv2dWeightGrad, (*Backend).conv2dWeightGrad, backend.DType.IsFloat)
}

// conv2dWeightGrad returns the weight gradient op.Shape [Cout, Cin/groups,
// kH, kW] of Conv2d(x, w, op.Attrs.Conv) for x = In[0] and the output
// gradient In[1] [N, Cout, Ho, Wo] (PyTorch's conv2d grad_weight; see
// ir.KindConv2dWeightGrad). Per group it is one product
// gradOut [Cout/groups, N·Ho·Wo] × unfold.Im2col(x)ᵀ [N·Ho·Wo, Cin/groups·kH·kW]:
// the images are split into at most wgradMaxSegments contiguous ranges of
// whole batches of images (about gradDepth columns deep), a number that
// depends only on the shapes, each accumulating into its own partial
// gradient with one GEMM per batch, and the partial gradients are then
// added in range order, so results do not depend on the worker count or
// scheduling. F32, Flex32 and F64 compute in their own precision; F16 and BF16
// compute in float32 and round once. Operands that are not host tensors
// are lowered with the kind's decomposition.
func (be *Backend) conv2dWeightGrad(op ir.Op) ir.Outputs {
	x, g := op.In[0], op.In[1]
	o, ws := op.Attrs.Conv, [4]int(op.Shape)
	switch dt := x.DType(); dt {
	case backend.F32, backend.Flex32:
		if out := be.directWeightGrad(x, g, ws, o, dt, op.Shape); out != nil {
			return ir.One(out)
		}
		if out := weightGradT(x, g, ws, o, dt, op.Shape, be.f32, &scratchF32, gemm.Sgemm); out != nil {
			return ir.One(out)
		}
	case backend.F64:
		if out := weightGradT(x, g, ws, o, dt, op.Shape, be.f64, &scratchF64, gemm.Dgemm); out != nil {
			return ir.One(out)
		}
	case backend.F16, backend.BF16:
		xf, gf := ir.Cast(be.flex, x, backend.F32), ir.Cast(be.flex, g, backend.F32)
		if out := be.directWeightGrad(xf, gf, ws, o, backend.F32, op.Shape); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
		if out := weightGradT(xf, gf, ws, o, backend.F32, op.Shape, be.f32, &scratchF32, gemm.Sgemm); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// gradDepth is the product depth (images × Ho·Wo) a weight-gradient GEMM
// aims for: enough for the micro-kernel to amortize loading and storing its
// accumulator tile, small enough that the column matrix stays in L2.
const gradDepth = 256

// weightGradT is the float kernel of conv2dWeightGrad with output dtype
// dt and shape shape (ws), or nil when an operand is not a host tensor of
// element type T.
func weightGradT[T float](xt, gt ir.Tensor, ws [4]int, o backend.ConvOptions, dt ir.DType, shape []int,
	alloc func(int) []T, scratch *sync.Pool, mm gemmFunc[T]) ir.Tensor {
	x, ok1 := view[T](xt)
	gy, ok2 := view[T](gt)
	if !ok1 || !ok2 {
		return nil
	}
	xs, gs := x.Shape, gy.Shape
	n, cin, h, wid := xs[0], xs[1], xs[2], xs[3]
	cout, ho, wo := gs[1], gs[2], gs[3]
	groups := o.Groups
	ipg, opg := cin/groups, cout/groups
	g := unfold.GeomOf(ws[2], ws[3], o)
	kk := ipg * g.Kh * g.Kw
	hw, ohw := h*wid, ho*wo
	total := numel(ws[:])
	out := alloc(total)
	if total == 0 {
		return wrap(dt, shape, out)
	}
	if n == 0 || ohw == 0 || kk == 0 {
		clear(out)
		return wrap(dt, shape, out)
	}
	xd, gd := dense(x, alloc), dense(gy, alloc)
	nb := min(n, max(1, gradDepth/ohw)) // images per GEMM
	direct := g.Pointwise() && ho == h && wo == wid

	// run accumulates the gradient of images [i0, i1) into part.
	run := func(i0, i1 int, part []T) {
		cb := getScratch[T](scratch, kk*nb*ohw)
		defer scratch.Put(cb)
		ab := getScratch[T](scratch, opg*nb*ohw)
		defer scratch.Put(ab)
		col, abuf := *cb, *ab
		beta := T(0)
		for b0 := i0; b0 < i1; b0 += nb {
			b1 := min(b0+nb, i1)
			depth := (b1 - b0) * ohw
			for gr := range groups {
				var a, c []T
				lda, ldc := depth, depth
				if b1-b0 == 1 {
					a, lda = gd[(b0*cout+gr*opg)*ohw:(b0*cout+(gr+1)*opg)*ohw], ohw
				} else {
					a = abuf[:opg*depth]
					for i := b0; i < b1; i++ {
						src := gd[(i*cout+gr*opg)*ohw:]
						for r := range opg {
							copy(a[r*depth+(i-b0)*ohw:r*depth+(i-b0+1)*ohw], src[r*ohw:(r+1)*ohw])
						}
					}
				}
				if direct && b1-b0 == 1 {
					c, ldc = xd[(b0*cin+gr*ipg)*hw:(b0*cin+(gr+1)*ipg)*hw], hw
				} else {
					c = col[:kk*depth]
					for i := b0; i < b1; i++ {
						src := xd[(i*cin+gr*ipg)*hw : (i*cin+(gr+1)*ipg)*hw]
						unfold.Im2colLD(src, ipg, h, wid, g, ho, wo, c[(i-b0)*ohw:], depth)
					}
				}
				mm(false, true, opg, kk, depth, 1, a, lda, c, ldc, beta, part[gr*opg*kk:(gr+1)*opg*kk], kk)
			}
			beta = 1
		}
	}

	// Whole batches per task, as many tasks as the shapes give (not as
	// the workers: the split sets the rounding).
	batches := (n + nb - 1) / nb
	tasks := min(wgradMaxSegments, batches)
	if tasks == 1 {
		run(0, n, out)
		return wrap(dt, shape, out)
	}
	parts := make([][]T, tasks)
	parts[0] = out
	for t := 1; t < tasks; t++ {
		parts[t] = alloc(total)
	}
	workers.ParallelFor(tasks, func(t int) {
		run(min(n, t*batches/tasks*nb), min(n, (t+1)*batches/tasks*nb), parts[t])
	})
	for t := 1; t < tasks; t++ {
		p := parts[t]
		for i := range out {
			out[i] += p[i]
		}
	}
	return wrap(dt, shape, out)
}
