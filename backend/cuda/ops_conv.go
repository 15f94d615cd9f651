package cuda

import (
	"encoding/binary"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindConv2d, (*Backend).conv2dKernel, nil)
	kernels.Set(ir.KindConvTranspose2d, (*Backend).convTranspose2dKernel, nil)
}

// convGeom is a 2-d convolution's geometry with defaults applied.
type convGeom struct {
	groups                         int
	kh, kw, sh, sw, ph, pw, dh, dw int
}

func geometry(w *Tensor, o backend.ConvOptions) convGeom {
	return convGeom{
		groups: max(o.Groups, 1),
		kh:     w.shape[2], kw: w.shape[3],
		sh: max(o.Stride[0], 1), sw: max(o.Stride[1], 1),
		ph: o.Padding[0], pw: o.Padding[1],
		dh: max(o.Dilation[0], 1), dw: max(o.Dilation[1], 1),
	}
}

// pointwise reports whether the kernel is 1×1 with unit stride and no
// padding: the column matrix is then the image itself.
func (g convGeom) pointwise() bool {
	return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0
}

// cvBlob encodes the C struct Cv of the convolution kernels.
func cvBlob(n, c, h, w int, g convGeom, ho, wo int, xst []int) []byte {
	vals := []int{n, c, h, w, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, ho, wo, 0, 0, 0, 0}
	copy(vals[14:], xst)
	buf := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(v)))
	}
	return buf
}

// conv2dKernel is the kernel of KindConv2d: op.In[0] convolved with
// op.In[1] under op.Attrs.Conv (see conv2d), giving op.Shape, on cuDNN
// when it takes the op (see dnnExec).
func (b *Backend) conv2dKernel(op ir.Op) ir.Outputs {
	x, w := tensorOf(op.In[0]), tensorOf(op.In[1])
	if out := b.dnnConv2d(x, w, op.Attrs.Conv, op.Shape); out != nil {
		return ir.One(out)
	}
	return ir.One(b.conv2d(x, w, op.Attrs.Conv, op.Shape))
}

// convTranspose2dKernel is the kernel of KindConvTranspose2d: the
// transposed convolution of op.In[0] with op.In[1] under op.Attrs.Conv
// (see convTranspose2d), giving op.Shape, on cuDNN when it takes the op
// (see dnnConvTranspose2d).
func (b *Backend) convTranspose2dKernel(op ir.Op) ir.Outputs {
	x, w := tensorOf(op.In[0]), tensorOf(op.In[1])
	if out := b.dnnConvTranspose2d(x, w, op.Attrs.Conv, op.Shape); out != nil {
		return ir.One(out)
	}
	return ir.One(b.convTranspose2d(x, w, op.Attrs.Conv, op.Shape))
}

// conv2d convolves xt [N, Cin, H, W] with wt [Cout, Cin/groups, kH, kW]
// (PyTorch's conv2d: a cross-correlation with zero padding, no bias),
// giving a contiguous tensor of shape [N, Cout, Ho, Wo] (the op's output
// shape, kept by the result): an im2col kernel builds the column matrix
// [N, groups, Cin/groups·kH·kW, Ho·Wo] (skipped for pointwise kernels) and
// one batched matmul multiplies it by the weights (cuBLAS for floats: F16
// and BF16 accumulate in float32; the integer kernel, wrapping, for
// integers). Bool is computed in I64 and tested for != 0, as backend/flex.
func (b *Backend) conv2d(xt, wt *Tensor, opts backend.ConvOptions, shape []int) *Tensor {
	if xt.dtype == backend.Bool {
		out := b.conv2d(b.cast(xt, backend.I64), b.cast(wt, backend.I64), opts, shape)
		return b.cast(out, backend.Bool)
	}
	g := geometry(wt, opts)
	n, cin, h, wd := xt.shape[0], xt.shape[1], xt.shape[2], xt.shape[3]
	cout, ipg := wt.shape[0], wt.shape[1]
	ho, wo := shape[2], shape[3]
	if backend.NumElements(shape) == 0 {
		return b.emptyOf(shape, xt.dtype)
	}
	kk, l := ipg*g.kh*g.kw, ho*wo
	if kk == 0 {
		return b.full(shape, xt.dtype, 0)
	}
	var col *Tensor
	if g.pointwise() {
		col = xt
	} else {
		col = b.Empty([]int{n, cin * g.kh * g.kw, l}, xt.dtype)
		name := "ember_im2col_" + bitsType(xt.dtype.Size())
		k := b.kernel(name, func() string {
			return render(im2colTmpl, convSpec{Name: name, T: bitsType(xt.dtype.Size())})
		})
		total := backend.NumElements(col.shape)
		b.Launch(k, grid1(total, blockSize), block1, 0, cvBlob(total, cin, h, wd, g, ho, wo, xt.strides), col.Ptr(), xt.Ptr())
	}
	opg := cout / g.groups
	var prod *Tensor
	if g.groups == 1 {
		// [Cout, kk] × [N, kk, L] → [N, Cout, L]
		prod = b.matmul(b.reshape(wt, []int{cout, kk}), b.reshape(col, []int{n, kk, l}), []int{n, cout, l})
	} else {
		// [1, G, Cout/G, kk] × [N, G, kk, L] → [N, G, Cout/G, L]
		prod = b.matmul(b.reshape(wt, []int{1, g.groups, opg, kk}), b.reshape(col, []int{n, g.groups, kk, l}), []int{n, g.groups, opg, l})
	}
	return b.reshape(prod, shape)
}

// convTranspose2d is the adjoint of conv2d with the same options
// (PyTorch's conv_transpose2d, no bias): xt [N, Cin, H, W] and wt [Cin,
// Cout/groups, kH, kW] give a contiguous tensor of shape [N, Cout, Ho, Wo]
// (the op's output shape, kept by the result) with
// Ho = (H−1)·stride − 2·pad + dilation·(kH−1) + outputPadding + 1. One
// batched matmul forms the columns wᵀ·x [N, groups, Cout/groups·kH·kW, H·W]
// and the col2im kernel sums them into the image (in gather form: no
// atomics, deterministic). Dtypes as conv2d.
func (b *Backend) convTranspose2d(xt, wt *Tensor, opts backend.ConvOptions, shape []int) *Tensor {
	if xt.dtype == backend.Bool {
		out := b.convTranspose2d(b.cast(xt, backend.I64), b.cast(wt, backend.I64), opts, shape)
		return b.cast(out, backend.Bool)
	}
	g := geometry(wt, opts)
	n, cin, h, wd := xt.shape[0], xt.shape[1], xt.shape[2], xt.shape[3]
	opg := wt.shape[1]
	cout, ipg := opg*g.groups, cin/g.groups
	ho, wo := shape[2], shape[3]
	if backend.NumElements(shape) == 0 {
		return b.emptyOf(shape, xt.dtype)
	}
	kk, l := opg*g.kh*g.kw, h*wd
	if ipg == 0 || l == 0 {
		return b.full(shape, xt.dtype, 0)
	}
	var col *Tensor
	if g.groups == 1 {
		// wᵀ [kk, Cin] × [N, Cin, L] → [N, kk, L]
		wT := b.permuteView(b.reshape(wt, []int{cin, kk}), []int{1, 0}, []int{kk, cin})
		col = b.matmul(wT, b.reshape(xt, []int{n, cin, l}), []int{n, kk, l})
	} else {
		// wᵀ [1, G, kk, Cin/G] × [N, G, Cin/G, L] → [N, G, kk, L]
		wT := b.permuteView(b.reshape(wt, []int{1, g.groups, ipg, kk}), []int{0, 1, 3, 2}, []int{1, g.groups, kk, ipg})
		col = b.matmul(wT, b.reshape(xt, []int{n, g.groups, ipg, l}), []int{n, g.groups, kk, l})
	}
	if g.pointwise() && ho == h && wo == wd {
		return b.reshape(col, shape)
	}
	ct := b.Contiguous(col)
	out := b.emptyOf(shape, xt.dtype)
	name := "ember_col2im_" + ctypeOf(xt.dtype).Name
	k := b.kernel(name, func() string { return col2imSource(xt.dtype, name) })
	total := backend.NumElements(shape)
	b.Launch(k, grid1(total, blockSize), block1, 0, cvBlob(total, cout, h, wd, g, ho, wo, nil), out.Ptr(), ct.Ptr())
	return out
}
