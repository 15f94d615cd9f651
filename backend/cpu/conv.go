package cpu

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/backend/internal/unfold"
)

// Conv2d convolves x [N, Cin, H, W] with w [Cout, Cin/groups, kH, kW]
// (PyTorch's conv2d: a cross-correlation with zero padding, no bias),
// giving [N, Cout, Ho, Wo] with Ho = (H + 2·pad − dilation·(kH−1) − 1)/stride + 1
// (likewise Wo). F32, Flex32 and F64 run im2col and the SIMD GEMM per
// image and group; F16 and BF16 compute in float32 and round once (as
// flex); integer and Bool convolutions run on flex.
func (be *Backend) Conv2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return be.convolve(flex.AsTensor(x), flex.AsTensor(w), opts, false)
}

// ConvTranspose2d is the adjoint of Conv2d with the same options
// (PyTorch's conv_transpose2d, no bias): x [N, Cin, H, W] and
// w [Cin, Cout/groups, kH, kW] give [N, Cout, Ho, Wo] with
// Ho = (H−1)·stride − 2·pad + dilation·(kH−1) + outputPadding + 1. Each
// image and group is one GEMM (Wᵀ·x) followed by a col2im scatter. Dtypes
// are handled as in Conv2d.
func (be *Backend) ConvTranspose2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return be.convolve(flex.AsTensor(x), flex.AsTensor(w), opts, true)
}

func (be *Backend) convolve(x, w *flex.Tensor, o backend.ConvOptions, transpose bool) backend.Tensor {
	o = o.WithDefaults()
	switch dt := x.DType(); dt {
	case backend.F32, backend.Flex32:
		return convT(x, w, o, transpose, be.f32, &scratchF32, gemm.Sgemm, newF32(dt))
	case backend.F64:
		return convT(x, w, o, transpose, be.f64, &scratchF64, gemm.Dgemm, flex.NewFloat64)
	case backend.F16, backend.BF16:
		xf := be.Backend.Cast(x, backend.F32).(*flex.Tensor)
		wf := be.Backend.Cast(w, backend.F32).(*flex.Tensor)
		out := convT(xf, wf, o, transpose, be.f32, &scratchF32, gemm.Sgemm, newF32(backend.F32))
		return be.Backend.Cast(out, dt)
	}
	if transpose {
		return be.Backend.ConvTranspose2d(x, w, o)
	}
	return be.Backend.Conv2d(x, w, o)
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

// convShape returns the output shape of a convolution.
func convShape(xs, ws []int, o backend.ConvOptions, transpose bool) [4]int {
	out := [4]int{xs[0], ws[0], 0, 0}
	if transpose {
		out[1] = ws[1] * o.Groups
	}
	for i := range 2 {
		k := o.Dilation[i]*(ws[2+i]-1) + 1
		if transpose {
			out[2+i] = (xs[2+i]-1)*o.Stride[i] - 2*o.Padding[i] + k + o.OutputPadding[i]
		} else {
			out[2+i] = (xs[2+i]+2*o.Padding[i]-k)/o.Stride[i] + 1
		}
	}
	return out
}

// dense returns t's elements in row-major order: its storage when
// contiguous, else a copy.
func dense[T float32 | float64](t *flex.Tensor, alloc func(int) []T) []T {
	if d, ok := contiguous[T](t); ok {
		return d
	}
	d, st, off := strided[T](t)
	c := alloc(numel(t.Shape()))
	gather(c, d, t.Shape(), st, off)
	return c
}

// convByImage selects how convolutions use the workers: true splits the
// images of a batch over the workers, each running single-threaded GEMMs;
// false runs the images in turn with every worker inside each GEMM.
// Batches smaller than the worker count always split inside the GEMM.
var convByImage = true

func convT[T float32 | float64](x, w *flex.Tensor, o backend.ConvOptions, transpose bool,
	alloc func(int) []T, scratch *sync.Pool, mm gemmFunc[T], wrap func([]int, []T) *flex.Tensor) *flex.Tensor {
	xs, ws := x.Shape(), w.Shape()
	os := convShape(xs, ws, o, transpose)
	total := numel(os[:])
	out := alloc(total)
	if total == 0 {
		return wrap(os[:], out)
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
	return wrap(os[:], out)
}
