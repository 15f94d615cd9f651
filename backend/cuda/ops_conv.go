package cuda

import (
	"encoding/binary"

	"github.com/emberml/ember/backend"
)

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

// Conv2d convolves x [N, Cin, H, W] with w [Cout, Cin/groups, kH, kW]
// (PyTorch's conv2d: a cross-correlation with zero padding, no bias),
// giving a contiguous [N, Cout, Ho, Wo] with
// Ho = (H + 2·pad − dilation·(kH−1) − 1)/stride + 1 (likewise Wo): an
// im2col kernel builds the column matrix [N, groups, Cin/groups·kH·kW,
// Ho·Wo] (skipped for pointwise kernels) and one batched Matmul multiplies
// it by the weights (cuBLAS for floats: F16 and BF16 accumulate in
// float32; the integer kernel, wrapping, for integers). Bool is computed
// in I64 and tested for != 0, as backend/flex.
func (b *Backend) Conv2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	xt, wt := tensorOf(x), tensorOf(w)
	if xt.dtype == backend.Bool {
		out := b.Conv2d(b.Cast(xt, backend.I64), b.Cast(wt, backend.I64), opts)
		return b.Cast(out, backend.Bool)
	}
	g := geometry(wt, opts)
	n, cin, h, wd := xt.shape[0], xt.shape[1], xt.shape[2], xt.shape[3]
	cout, ipg := wt.shape[0], wt.shape[1]
	ho := (h+2*g.ph-g.dh*(g.kh-1)-1)/g.sh + 1
	wo := (wd+2*g.pw-g.dw*(g.kw-1)-1)/g.sw + 1
	shape := []int{n, cout, ho, wo}
	if numel(shape) == 0 {
		return b.Empty(shape, xt.dtype)
	}
	kk, l := ipg*g.kh*g.kw, ho*wo
	if kk == 0 {
		return b.Full(shape, xt.dtype, 0)
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
		total := numel(col.shape)
		b.Launch(k, grid1(total, blockSize), block1, 0, cvBlob(total, cin, h, wd, g, ho, wo, xt.strides), col.Ptr(), xt.Ptr())
	}
	opg := cout / g.groups
	var prod backend.Tensor
	if g.groups == 1 {
		prod = b.Matmul(b.Reshape(wt, []int{cout, kk}), b.Reshape(col, []int{n, kk, l}))
	} else {
		prod = b.Matmul(b.Reshape(wt, []int{1, g.groups, opg, kk}), b.Reshape(col, []int{n, g.groups, kk, l}))
	}
	return b.Reshape(prod, shape)
}

// ConvTranspose2d is the adjoint of Conv2d with the same options (PyTorch's
// conv_transpose2d, no bias): x [N, Cin, H, W] and w [Cin, Cout/groups,
// kH, kW] give a contiguous [N, Cout, Ho, Wo] with
// Ho = (H−1)·stride − 2·pad + dilation·(kH−1) + outputPadding + 1. One
// batched Matmul forms the columns wᵀ·x [N, groups, Cout/groups·kH·kW, H·W]
// and the col2im kernel sums them into the image (in gather form: no
// atomics, deterministic). Dtypes as Conv2d.
func (b *Backend) ConvTranspose2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	xt, wt := tensorOf(x), tensorOf(w)
	if xt.dtype == backend.Bool {
		out := b.ConvTranspose2d(b.Cast(xt, backend.I64), b.Cast(wt, backend.I64), opts)
		return b.Cast(out, backend.Bool)
	}
	g := geometry(wt, opts)
	n, cin, h, wd := xt.shape[0], xt.shape[1], xt.shape[2], xt.shape[3]
	opg := wt.shape[1]
	cout, ipg := opg*g.groups, cin/g.groups
	ho := (h-1)*g.sh - 2*g.ph + g.dh*(g.kh-1) + opts.OutputPadding[0] + 1
	wo := (wd-1)*g.sw - 2*g.pw + g.dw*(g.kw-1) + opts.OutputPadding[1] + 1
	shape := []int{n, cout, ho, wo}
	if numel(shape) == 0 {
		return b.Empty(shape, xt.dtype)
	}
	kk, l := opg*g.kh*g.kw, h*wd
	if ipg == 0 || l == 0 {
		return b.Full(shape, xt.dtype, 0)
	}
	var col backend.Tensor
	if g.groups == 1 {
		wT := b.Permute(b.Reshape(wt, []int{cin, kk}), []int{1, 0})
		col = b.Matmul(wT, b.Reshape(xt, []int{n, cin, l}))
	} else {
		wT := b.Permute(b.Reshape(wt, []int{1, g.groups, ipg, kk}), []int{0, 1, 3, 2})
		col = b.Matmul(wT, b.Reshape(xt, []int{n, g.groups, ipg, l}))
	}
	if g.pointwise() && ho == h && wo == wd {
		return b.Reshape(col, shape)
	}
	ct := b.Contiguous(tensorOf(col))
	out := b.Empty(shape, xt.dtype)
	name := "ember_col2im_" + ctypeOf(xt.dtype).Name
	k := b.kernel(name, func() string { return col2imSource(xt.dtype, name) })
	total := numel(shape)
	b.Launch(k, grid1(total, blockSize), block1, 0, cvBlob(total, cout, h, wd, g, ho, wo, nil), out.Ptr(), ct.Ptr())
	return out
}
