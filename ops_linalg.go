package ember

import (
	"github.com/emberml/ember/backend"
)

// Matmul returns the matrix product over the last two axes: [..., m, k] ×
// [..., k, n] → [..., m, n], with leading batch axes broadcast (PyTorch's
// matmul). A rank-1 lhs is treated as [1, k] and a rank-1 rhs as [k, 1],
// and the added axis is removed from the result. Dtypes are promoted. It
// panics with an *Error naming both shapes when the inner sizes differ, the
// batch axes do not broadcast, an operand is rank 0, or an operand is Bool.
func (x *Tensor) Matmul(y *Tensor) *Tensor {
	commonDevice("matmul", []string{"lhs", "rhs"}, x, y)
	ops := func() []string { return []string{describe("lhs", x), describe("rhs", y)} }
	if x.Rank() == 0 || y.Rank() == 0 {
		fail("matmul", ops(), "operands must have rank >= 1")
	}
	if x.DType() == Bool || y.DType() == Bool {
		fail("matmul", ops(), "Bool operands are not supported")
	}
	dev := commonDevice("matmul", []string{"lhs", "rhs"}, x, y)
	a, b := x, y
	if a.Rank() == 1 {
		a = a.Unsqueeze(0)
	}
	if b.Rank() == 1 {
		b = b.Unsqueeze(-1)
	}
	as, bs := a.shape(), b.shape()
	if as[len(as)-1] != bs[len(bs)-2] {
		fail("matmul", ops(), "inner dimensions differ: lhs has %d columns, rhs has %d rows", as[len(as)-1], bs[len(bs)-2])
	}
	batch, ok := BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if !ok {
		fail("matmul", ops(), "batch dimensions %v and %v do not broadcast", as[:len(as)-2], bs[:len(bs)-2])
	}
	_ = batch
	dt := backend.Promote(a.DType(), b.DType())
	a, b = a.castTo(dt), b.castTo(dt)
	out := wrap(dev, dev.backend().Matmul(a.on(dev), b.on(dev)))
	if x.Rank() == 1 {
		out = out.Squeeze(-2)
	}
	if y.Rank() == 1 {
		out = out.Squeeze(-1)
	}
	return out
}

func checkConvOpts(op string, ops []string, opts ConvOptions) {
	for i := range 2 {
		if opts.Stride[i] < 1 || opts.Dilation[i] < 1 || opts.Padding[i] < 0 || opts.OutputPadding[i] < 0 {
			fail(op, ops, "bad options %+v (stride, dilation >= 1; padding, output padding >= 0)", opts)
		}
	}
	if opts.Groups < 1 {
		fail(op, ops, "groups %d must be >= 1", opts.Groups)
	}
}

// Conv2d is the 2-d cross-correlation of x [N, Cin, H, W] with w [Cout,
// Cin/groups, kH, kW] plus an optional bias [Cout] (nil for none), as
// PyTorch's conv2d: Ho = (H + 2·padH − dilH·(kH−1) − 1)/strideH + 1. Zero
// options mean stride 1, padding 0, dilation 1, groups 1. It panics with an
// *Error on rank, channel, group or dtype mismatches or an empty output.
func (x *Tensor) Conv2d(w, bias *Tensor, opts ConvOptions) *Tensor {
	opts = opts.WithDefaults()
	commonDevice("conv2d", []string{"x", "weight"}, x, w)
	ops := []string{describe("x", x), describe("weight", w)}
	checkConvOpts("conv2d", ops, opts)
	if x.Rank() != 4 || w.Rank() != 4 {
		fail("conv2d", ops, "needs x [N, Cin, H, W] and weight [Cout, Cin/groups, kH, kW]")
	}
	xs, ws := x.shape(), w.shape()
	g := opts.Groups
	if xs[1] != ws[1]*g || ws[0]%g != 0 {
		fail("conv2d", ops, "channels: x has %d, weight expects %d×%d groups (and Cout %d divisible by groups)", xs[1], ws[1], g, ws[0])
	}
	for i := range 2 {
		eff := opts.Dilation[i]*(ws[2+i]-1) + 1
		if xs[2+i]+2*opts.Padding[i] < eff {
			fail("conv2d", ops, "kernel (dilated size %d) is larger than the padded input %d on spatial axis %d", eff, xs[2+i]+2*opts.Padding[i], i)
		}
	}
	if !x.DType().IsFloat() || !w.DType().IsFloat() {
		fail("conv2d", ops, "needs float operands")
	}
	dev := commonDevice("conv2d", []string{"x", "weight"}, x, w)
	dt := backend.Promote(x.DType(), w.DType())
	x, w = x.castTo(dt), w.castTo(dt)
	if bias != nil && (bias.Rank() != 1 || bias.shape()[0] != ws[0]) {
		fail("conv2d", []string{describe("weight", w), describe("bias", bias)}, "bias must be [Cout] = [%d]", ws[0])
	}
	out := wrap(dev, dev.backend().Conv2d(x.on(dev), w.on(dev), opts))
	if bias != nil {
		out = out.Add(bias.Reshape(1, ws[0], 1, 1))
	}
	return out
}

// ConvTranspose2d is the transposed convolution (the adjoint of Conv2d with
// the same options, PyTorch's conv_transpose2d): x [N, Cin, H, W], w [Cin,
// Cout/groups, kH, kW], optional bias [Cout]; Ho = (H−1)·strideH − 2·padH +
// dilH·(kH−1) + outputPadH + 1. OutputPadding must be smaller than the
// stride or the dilation.
func (x *Tensor) ConvTranspose2d(w, bias *Tensor, opts ConvOptions) *Tensor {
	opts = opts.WithDefaults()
	commonDevice("conv_transpose2d", []string{"x", "weight"}, x, w)
	ops := []string{describe("x", x), describe("weight", w)}
	checkConvOpts("conv_transpose2d", ops, opts)
	if x.Rank() != 4 || w.Rank() != 4 {
		fail("conv_transpose2d", ops, "needs x [N, Cin, H, W] and weight [Cin, Cout/groups, kH, kW]")
	}
	xs, ws := x.shape(), w.shape()
	g := opts.Groups
	if xs[1] != ws[0] || ws[0]%g != 0 {
		fail("conv_transpose2d", ops, "channels: x has %d, weight has %d (divisible by %d groups)", xs[1], ws[0], g)
	}
	for i := range 2 {
		if opts.OutputPadding[i] >= max(opts.Stride[i], opts.Dilation[i]) {
			fail("conv_transpose2d", ops, "output padding %v must be smaller than stride or dilation", opts.OutputPadding)
		}
		if (xs[2+i]-1)*opts.Stride[i]-2*opts.Padding[i]+opts.Dilation[i]*(ws[2+i]-1)+opts.OutputPadding[i]+1 <= 0 {
			fail("conv_transpose2d", ops, "output would be empty on spatial axis %d", i)
		}
	}
	if !x.DType().IsFloat() || !w.DType().IsFloat() {
		fail("conv_transpose2d", ops, "needs float operands")
	}
	dev := commonDevice("conv_transpose2d", []string{"x", "weight"}, x, w)
	dt := backend.Promote(x.DType(), w.DType())
	x, w = x.castTo(dt), w.castTo(dt)
	cout := ws[1] * g
	if bias != nil && (bias.Rank() != 1 || bias.shape()[0] != cout) {
		fail("conv_transpose2d", []string{describe("weight", w), describe("bias", bias)}, "bias must be [Cout] = [%d]", cout)
	}
	out := wrap(dev, dev.backend().ConvTranspose2d(x.on(dev), w.on(dev), opts))
	if bias != nil {
		out = out.Add(bias.Reshape(1, cout, 1, 1))
	}
	return out
}
