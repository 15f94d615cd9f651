package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The contractions read both operands.
func init() {
	register(ir.KindMatmul, rule{in: 3, backward: matmulBackward})
	register(ir.KindConv2d, rule{in: 3, backward: conv2dBackward})
	register(ir.KindConvTranspose2d, rule{in: 3, backward: convTranspose2dBackward})
	// The weight gradient appears only in backward functions.
	nondifferentiable(ir.KindConv2dWeightGrad)
}

// matmulBackward gives g·bᵀ for a and aᵀ·g for b (transposes by Permute of
// the last two axes), each summed over the batch axes that broadcasting
// added or stretched, back to the operand's shape.
func matmulBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	if s.wants(0) {
		dx[0] = ir.SumTo(e, ir.Matmul(e, g, ir.Transpose(e, s.in(1))), s.inShape(0))
	}
	if s.wants(1) {
		dx[1] = ir.SumTo(e, ir.Matmul(e, ir.Transpose(e, s.in(0)), g), s.inShape(1))
	}
}

// conv2dBackward gives the gradients of PyTorch's conv2d: for x,
// ConvTranspose2d(g, w) with the same stride, padding, dilation and groups
// and the output padding that restores x's height and width; for w,
// ir.KindConv2dWeightGrad(x, g) (the inner backend's kernel where it has
// one, else per group conv2d(xᵀ, gᵀ) with N as the channel axis and stride
// and dilation swapped, narrowed to the kernel size and permuted to
// [Cout, Cin/groups, kH, kW]).
func conv2dBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	op := s.op()
	opts := op.Attrs.Conv
	xs, ws, gsh := s.inShape(0), s.inShape(1), g.Shape()
	if s.wants(0) {
		// The output padding that makes the transposed convolution give
		// back x's height and width.
		t := opts
		t.OutputPadding = [2]int{}
		full := ir.ConvOutputSize([2]int{gsh[2], gsh[3]}, [2]int{ws[2], ws[3]}, t, true)
		for i := range 2 {
			t.OutputPadding[i] = xs[2+i] - full[i]
		}
		dx[0] = ir.ConvTranspose2d(e, g, s.in(1), t)
	}
	if s.wants(1) {
		// grad w[co, ci, kh, kw] = Σ_{n,ho,wo} g[n,co,ho,wo]·x[n,ci,ho·s+kh·d-p, ...]
		dx[1] = ir.Apply(e, ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: ws, Attrs: op.Attrs, In: [3]ir.Tensor{s.in(0), g}})
	}
}

// convTranspose2dBackward gives the gradients of PyTorch's
// conv_transpose2d: for x, Conv2d(g, w) with the same options (narrowed to
// x's size when the output padding added rows); for w,
// ir.KindConv2dWeightGrad(g, x) with w's shape, the weight gradient of
// Conv2d(g, w) for the output gradient x (per group conv2d(gᵀ, xᵀ) with
// stride and dilation swapped, narrowed to the kernel and permuted to
// [Cin, Cout/groups, kH, kW]).
func convTranspose2dBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	op := s.op()
	xs, ws := s.inShape(0), s.inShape(1)
	if s.wants(0) {
		t := op.Attrs.Conv
		t.OutputPadding = [2]int{}
		gx := ir.Conv2d(e, g, s.in(1), t)
		dx[0] = ir.Narrow(e, gx, xs)
	}
	if s.wants(1) {
		// grad w[ci, co, kh, kw] = Σ_{n,h,w} x[n,ci,h,w]·g[n,co,h·s+kh·d-p, ...]
		dx[1] = ir.Apply(e, ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: ws, Attrs: op.Attrs, In: [3]ir.Tensor{g, s.in(0)}})
	}
}
