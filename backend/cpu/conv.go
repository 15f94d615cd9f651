package cpu

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindConv2d, (*Backend).conv2d, nil)
	kernels.Set(ir.KindConvTranspose2d, (*Backend).convTranspose2d, nil)
}

// conv2d convolves In[0] x [N, Cin, H, W] with In[1] w [Cout, Cin/groups,
// kH, kW] under op.Attrs.Conv (PyTorch's conv2d: a cross-correlation with
// zero padding, no bias), giving op.Shape [N, Cout, Ho, Wo]. F32, Flex32
// and F64 run im2col and the SIMD GEMM per image and group; F16 and BF16
// compute in float32 and round once (as flex); integer and Bool
// convolutions run on flex.
func (be *Backend) conv2d(op ir.Op) ir.Outputs { return be.convolve(op, false) }

// convTranspose2d is the adjoint of conv2d with the same options
// (PyTorch's conv_transpose2d, no bias): x [N, Cin, H, W] and
// w [Cin, Cout/groups, kH, kW] give op.Shape [N, Cout, Ho, Wo]. Each image
// and group is one GEMM (Wᵀ·x) followed by a col2im scatter. Dtypes are
// handled as in conv2d.
func (be *Backend) convTranspose2d(op ir.Op) ir.Outputs { return be.convolve(op, true) }

func (be *Backend) convolve(op ir.Op, transpose bool) ir.Outputs {
	x, w, o := op.In[0], op.In[1], op.Attrs.Conv
	switch dt := x.DType(); dt {
	case backend.F32, backend.Flex32:
		if out := be.directConv(x, w, o, dt, op.Shape, transpose); out != nil {
			return ir.One(out)
		}
		if out := convT(x, w, o, dt, op.Shape, transpose, be.f32, &scratchF32, gemm.Sgemm); out != nil {
			return ir.One(out)
		}
	case backend.F64:
		if out := convT(x, w, o, dt, op.Shape, transpose, be.f64, &scratchF64, gemm.Dgemm); out != nil {
			return ir.One(out)
		}
	case backend.F16, backend.BF16:
		xf, wf := ir.Cast(be.flex, x, backend.F32), ir.Cast(be.flex, w, backend.F32)
		if out := be.directConv(xf, wf, o, backend.F32, op.Shape, transpose); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
		if out := convT(xf, wf, o, backend.F32, op.Shape, transpose, be.f32, &scratchF32, gemm.Sgemm); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
	}
	return be.flex.Exec(op)
}

// Column-matrix scratch buffers, reused across calls.
var scratchF32, scratchF64 sync.Pool

func getScratch[T float32 | float64](p *sync.Pool, n int) *[]T {
	if v := p.Get(); v != nil {
		if b := v.(*[]T); cap(*b) >= n {
			*b = (*b)[:n]
			return b
		}
	}
	s := make([]T, n)
	return &s
}

// dense returns the elements of t in row-major order: its storage when
// contiguous, else a copy.
func dense[T float](t host.View[T], alloc func(int) []T) []T {
	if d, ok := t.Contiguous(); ok {
		return d
	}
	c := alloc(numel(t.Shape))
	gather(c, t.Data, t.Shape, t.Strides, t.Offset)
	return c
}

// convByImage selects how convolutions use the workers: true splits the
// images of a batch over the workers, each running single-threaded GEMMs;
// false runs the images in turn with every worker inside each GEMM.
// Batches smaller than the worker count always split inside the GEMM.
var convByImage = true

// convT is the float kernel of convolve with output dtype dt and shape
// shape, or nil when an operand is not a host tensor of element type T.
func convT[T float](xt, wt ir.Tensor, o backend.ConvOptions, dt ir.DType, shape []int, transpose bool,
	alloc func(int) []T, scratch *sync.Pool, mm gemmFunc[T]) ir.Tensor {
	x, ok1 := view[T](xt)
	w, ok2 := view[T](wt)
	if !ok1 || !ok2 {
		return nil
	}
	xs, ws := x.Shape, w.Shape
	os := [4]int(shape)
	total := numel(shape)
	out := alloc(total)
	if total == 0 {
		return wrap(dt, shape, out)
	}
	xd, wd := dense(x, alloc), dense(w, alloc)
	n, cin, h, wid := xs[0], xs[1], xs[2], xs[3]
	cout, ho, wo := os[1], os[2], os[3]
	groups := o.Groups
	g := unfold.GeomOf(ws[2], ws[3], o)
	hw, ohw := h*wid, ho*wo

	var image func(i int, col []T)
	var colLen int
	if !transpose {
		ipg, opg := cin/groups, cout/groups
		kk := ipg * g.Kh * g.Kw
		if !g.Pointwise() {
			colLen = kk * ohw
		}
		image = func(i int, col []T) {
			for gr := range groups {
				src := xd[(i*cin+gr*ipg)*hw : (i*cin+(gr+1)*ipg)*hw]
				c := src
				if col != nil {
					c = col
					unfold.Im2col(src, ipg, h, wid, g, ho, wo, c)
				}
				dst := out[(i*cout+gr*opg)*ohw : (i*cout+(gr+1)*opg)*ohw]
				if kk == 0 {
					clear(dst)
					continue
				}
				mm(false, false, opg, ohw, kk, 1, wd[gr*opg*kk:(gr+1)*opg*kk], kk, c, ohw, 0, dst, ohw)
			}
		}
	} else {
		ipg, opg := cin/groups, cout/groups
		kk := opg * g.Kh * g.Kw
		direct := g.Pointwise() && ho == h && wo == wid
		if !direct {
			colLen = kk * hw
		}
		image = func(i int, col []T) {
			for gr := range groups {
				src := xd[(i*cin+gr*ipg)*hw : (i*cin+(gr+1)*ipg)*hw]
				dst := out[(i*cout+gr*opg)*ohw : (i*cout+(gr+1)*opg)*ohw]
				c := dst
				if col != nil {
					c = col
				}
				if ipg == 0 || hw == 0 {
					clear(c)
				} else {
					mm(true, false, kk, hw, ipg, 1, wd[gr*ipg*kk:(gr+1)*ipg*kk], kk, src, hw, 0, c, hw)
				}
				if col != nil {
					clear(dst)
					unfold.Col2im(c, opg, ho, wo, g, h, wid, dst)
				}
			}
		}
	}
	// Small images are batched: nb images side by side in one GEMM.
	batch := convBatch(xd, wd, out, xs, os, g, groups, transpose, mm)
	nb, cols := 1, ohw
	if transpose {
		cols = hw
	}
	if cols > 0 && batch != nil {
		nb = min(n, max(1, convCols/cols))
	}
	run := func(i0, i1 int) {
		if nb > 1 {
			cl, tl := batch.scratch(nb)
			cb, tb := getScratch[T](scratch, cl), getScratch[T](scratch, tl)
			defer scratch.Put(cb)
			defer scratch.Put(tb)
			for b0 := i0; b0 < i1; b0 += nb {
				batch.run(b0, min(i1, b0+nb), *cb, *tb)
			}
			return
		}
		var col []T
		if colLen > 0 {
			b := getScratch[T](scratch, colLen)
			defer scratch.Put(b)
			col = *b
		}
		for i := i0; i < i1; i++ {
			image(i, col)
		}
	}
	if nw := workers.Workers(); convByImage && n >= nw && nw > 1 {
		workers.ParallelFor(nw, func(t int) { run(t*n/nw, (t+1)*n/nw) })
	} else {
		run(0, n)
	}
	return wrap(dt, shape, out)
}
