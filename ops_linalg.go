package ember

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Matmul returns the matrix product over the last two axes: [..., m, k] ×
// [..., k, n] → [..., m, n], with leading batch axes broadcast (PyTorch's
// matmul). A rank-1 lhs is treated as [1, k] and a rank-1 rhs as [k, 1],
// and the added axis is removed from the result. Dtypes are promoted. It
// panics with an *Error naming both shapes when the inner sizes differ, the
// batch axes do not broadcast, an operand is rank 0, or an operand is Bool.
func (x *Tensor) Matmul(y *Tensor) *Tensor {
	dev := commonDevice("matmul", []string{"lhs", "rhs"}, x, y)
	ops := func() []string { return []string{describe("lhs", x), describe("rhs", y)} }
	if x.Rank() == 0 || y.Rank() == 0 {
		fail("matmul", ops(), "operands must have rank >= 1")
	}
	if x.DType() == Bool || y.DType() == Bool {
		fail("matmul", ops(), "Bool operands are not supported")
	}
	a, b := x, y
	if a.Rank() == 1 {
		a = a.Unsqueeze(0)
	}
	if b.Rank() == 1 {
		b = b.Unsqueeze(-1)
	}
	dt := dev.autocastLow(backend.Promote(a.DType(), b.DType()))
	a, b = a.castTo(dt), b.castTo(dt)
	out := dev.run(&ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{a.on(dev), b.on(dev)}}, x, y)
	if x.Rank() == 1 {
		out = out.Squeeze(-2)
	}
	if y.Rank() == 1 {
		out = out.Squeeze(-1)
	}
	return out
}

// Conv2d is the 2-d cross-correlation of x [N, Cin, H, W] with w [Cout,
// Cin/groups, kH, kW] plus an optional bias [Cout] (nil for none), as
// PyTorch's conv2d: Ho = (H + 2·padH − dilH·(kH−1) − 1)/strideH + 1. Zero
// options mean stride 1, padding 0, dilation 1, groups 1. It panics with an
// *Error on rank, channel, group or dtype mismatches or an empty output.
func (x *Tensor) Conv2d(w, bias *Tensor, opts ConvOptions) *Tensor {
	return x.convolve("conv2d", ir.KindConv2d, w, bias, opts)
}

// convolve runs Conv2d (kind KindConv2d) or ConvTranspose2d: the checks
// that come before the dtype promotion (float operands, the bias's shape),
// the op, and the bias added to the result.
func (x *Tensor) convolve(name string, kind ir.Kind, w, bias *Tensor, opts ConvOptions) *Tensor {
	opts = opts.WithDefaults()
	dev := commonDevice(name, []string{"x", "weight"}, x, w)
	if bias != nil {
		bias.need(name, "bias")
	}
	if !x.DType().IsFloat() || !w.DType().IsFloat() {
		fail(name, []string{describe("x", x), describe("weight", w)}, "needs float operands")
	}
	cout := -1
	if w.Rank() == 4 {
		cout = w.shape()[0]
		if g := max(opts.Groups, 1); kind == ir.KindConvTranspose2d {
			cout = -1 // an overflowing product is left to the op's inference
			if w.shape()[1] <= math.MaxInt/g {
				cout = w.shape()[1] * g
			}
		}
	}
	if bias != nil && cout >= 0 && (bias.Rank() != 1 || bias.shape()[0] != cout) {
		fail(name, []string{describe("weight", w), describe("bias", bias)}, "bias must be [Cout] = [%d]", cout)
	}
	dt := dev.autocastLow(backend.Promote(x.DType(), w.DType()))
	xc, wc := x.castTo(dt), w.castTo(dt)
	out := dev.run(&ir.Op{Kind: kind, Attrs: &ir.Attrs{Conv: opts}, In: [3]ir.Tensor{xc.on(dev), wc.on(dev)}}, x, w)
	if bias != nil {
		if dev.autocast != 0 && bias.DType().IsFloat() {
			bias = bias.castTo(dev.autocastLow(bias.DType()))
		}
		out = out.Add(bias.Reshape(1, cout, 1, 1))
	}
	return out
}

// ConvTranspose2d is the transposed convolution (the adjoint of Conv2d with
// the same options, PyTorch's conv_transpose2d): x [N, Cin, H, W], w [Cin,
// Cout/groups, kH, kW], optional bias [Cout]; Ho = (H−1)·strideH − 2·padH +
// dilH·(kH−1) + outputPadH + 1. OutputPadding must be smaller than the
// stride or the dilation.
func (x *Tensor) ConvTranspose2d(w, bias *Tensor, opts ConvOptions) *Tensor {
	return x.convolve("conv_transpose2d", ir.KindConvTranspose2d, w, bias, opts)
}
