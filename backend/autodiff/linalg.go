package autodiff

import (
	"github.com/emberml/ember/backend"
	"slices"
)

// Matmul records the gradients g·bᵀ for a and aᵀ·g for b (transposes by
// Permute of the last two axes), each summed over the batch axes that
// broadcasting added or stretched, back to the operand's shape.
func (b *Backend) Matmul(x, y backend.Tensor) backend.Tensor {
	return b.record(op{prim: PrimMatmul, needIn: 3,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Matmul(in[0], in[1]) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			out := make([]backend.Tensor, 2)
			if s.wants(0) {
				out[0] = b.sumTo(b.inner.Matmul(g, b.transpose(s.in(1))), s.inShape(0))
			}
			if s.wants(1) {
				out[1] = b.sumTo(b.inner.Matmul(b.transpose(s.in(0)), g), s.inShape(1))
			}
			return out
		},
	}, x, y)
}

// transpose swaps the last two axes.
func (b *Backend) transpose(t backend.Tensor) backend.Tensor {
	r := len(t.Shape())
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	axes[r-1], axes[r-2] = r-2, r-1
	return b.inner.Permute(t, axes)
}

var swap01 = []int{1, 0, 2, 3}

// Conv2d records the gradients of PyTorch's conv2d: for x,
// ConvTranspose2d(g, w) with the same stride, padding, dilation and groups
// and the output padding that restores x's height and width; for w, per
// group, conv2d(xᵀ, gᵀ) with N as the channel axis and stride and dilation
// swapped, narrowed to the kernel size and permuted to [Cout, Cin/groups,
// kH, kW] — or, when the inner backend implements
// backend.Conv2dWeightGrader, its Conv2dWeightGrad.
func (b *Backend) Conv2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return b.record(op{prim: PrimConv2d, needIn: 3,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Conv2d(in[0], in[1], opts) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			out := make([]backend.Tensor, 2)
			xs, ws, gs := s.inShape(0), s.inShape(1), g.Shape()
			if s.wants(0) {
				t := opts
				t.OutputPadding = [2]int{}
				for i := 0; i < 2; i++ {
					full := (gs[2+i]-1)*opts.Stride[i] - 2*opts.Padding[i] + opts.Dilation[i]*(ws[2+i]-1) + 1
					t.OutputPadding[i] = xs[2+i] - full
				}
				out[0] = b.inner.ConvTranspose2d(g, s.in(1), t)
			}
			if s.wants(1) {
				// grad w[co, ci, kh, kw] = Σ_{n,ho,wo} g[n,co,ho,wo]·x[n,ci,ho·s+kh·d-p, ...]
				if wg, ok := b.inner.(backend.Conv2dWeightGrader); ok {
					out[1] = wg.Conv2dWeightGrad(s.in(0), g, [4]int(ws), opts)
				} else {
					out[1] = b.groupedWeightGrad(s.in(0), g, opts, ws[2:], false)
				}
			}
			return out
		},
	}, x, w)
}

// ConvTranspose2d records the gradients of PyTorch's conv_transpose2d: for
// x, Conv2d(g, w) with the same options (narrowed to x's size when the
// output padding added rows); for w, per group, conv2d(gᵀ, xᵀ) with stride
// and dilation swapped, narrowed to the kernel and permuted to
// [Cin, Cout/groups, kH, kW] — or the inner backend's Conv2dWeightGrad(g,
// x) when it implements backend.Conv2dWeightGrader.
func (b *Backend) ConvTranspose2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return b.record(op{prim: PrimConvTranspose2d, needIn: 3,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.ConvTranspose2d(in[0], in[1], opts) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			out := make([]backend.Tensor, 2)
			xs, ws := s.inShape(0), s.inShape(1)
			if s.wants(0) {
				t := opts
				t.OutputPadding = [2]int{}
				gx := b.inner.Conv2d(g, s.in(1), t)
				out[0] = b.narrow(gx, xs)
			}
			if s.wants(1) {
				// grad w[ci, co, kh, kw] = Σ_{n,h,w} x[n,ci,h,w]·g[n,co,h·s+kh·d-p, ...]:
				// the weight gradient of Conv2d(g, w) for the output gradient x.
				if wg, ok := b.inner.(backend.Conv2dWeightGrader); ok {
					out[1] = wg.Conv2dWeightGrad(g, s.in(0), [4]int(ws), opts)
				} else {
					out[1] = b.groupedWeightGrad(s.in(0), g, opts, ws[2:], true)
				}
			}
			return out
		},
	}, x, w)
}

// groupedWeightGrad computes a convolution's weight gradient group by
// group (Slice along channels, Cat of the results along axis 0). For
// conv2d (transposed false) each group's result is [Cout/G, Cin/G, kH, kW];
// for conv_transpose2d it is [Cin/G, Cout/G, kH, kW].
func (b *Backend) groupedWeightGrad(x, g backend.Tensor, opts backend.ConvOptions, kernel []int, transposed bool) backend.Tensor {
	groups := max(opts.Groups, 1)
	if groups == 1 {
		return b.weightGrad(x, g, opts, kernel, transposed)
	}
	xc, gc := x.Shape()[1]/groups, g.Shape()[1]/groups
	parts := make([]backend.Tensor, groups)
	for j := range parts {
		xj := b.channels(x, j*xc, (j+1)*xc)
		gj := b.channels(g, j*gc, (j+1)*gc)
		parts[j] = b.weightGrad(xj, gj, opts, kernel, transposed)
	}
	return b.inner.Cat(parts, 0)
}

// weightGrad is the single-group weight gradient: the batch axis becomes
// the channel axis of a convolution whose kernel is the other operand, with
// stride and dilation swapped.
func (b *Backend) weightGrad(x, g backend.Tensor, opts backend.ConvOptions, kernel []int, transposed bool) backend.Tensor {
	xt := b.inner.Permute(x, swap01) // [Cx, N, H, W]
	gt := b.inner.Permute(g, swap01) // [Cg, N, Ho, Wo]
	t := backend.ConvOptions{Stride: opts.Dilation, Padding: opts.Padding, Dilation: opts.Stride, Groups: 1}
	var r backend.Tensor
	if transposed {
		r = b.inner.Conv2d(gt, xt, t) // [Cout, Cin, kH', kW']
	} else {
		r = b.inner.Conv2d(xt, gt, t) // [Cin, Cout, kH', kW']
	}
	rs := r.Shape()
	r = b.narrow(r, []int{rs[0], rs[1], kernel[0], kernel[1]})
	return b.inner.Permute(r, swap01)
}

// channels slices axis 1 of a rank-4 tensor to [lo, hi).
func (b *Backend) channels(t backend.Tensor, lo, hi int) backend.Tensor {
	rs := fullRanges(t.Shape())
	rs[1] = backend.Range{Start: lo, End: hi, Step: 1}
	return b.inner.Slice(t, rs)
}

// narrow slices t to its leading shape (each axis from 0), a no-op when the
// shapes agree.
func (b *Backend) narrow(t backend.Tensor, shape []int) backend.Tensor {
	if slices.Equal(t.Shape(), shape) {
		return t
	}
	return b.inner.Slice(t, fullRanges(shape))
}

// fullRanges selects every element of shape.
func fullRanges(shape []int) []backend.Range {
	rs := make([]backend.Range, len(shape))
	for i, n := range shape {
		rs[i] = backend.Range{Start: 0, End: n, Step: 1}
	}
	return rs
}
