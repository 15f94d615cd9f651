package backend

// Conv2dWeightGrader is implemented by backends with a direct kernel for
// the weight gradient of a 2-d convolution. Decorators such as
// backend/autodiff use it, when the inner backend has it, instead of
// composing the gradient from Conv2d on permuted operands (whose output is
// only kH×kW wide, a poorly shaped product).
type Conv2dWeightGrader interface {
	// Conv2dWeightGrad returns the gradient, of shape wShape
	// [Cout, Cin/groups, kH, kW], of the weight of Conv2d(x, w, opts) for
	// the output gradient gradOut (PyTorch's conv2d weight gradient,
	// convolution_backward's grad_weight):
	//
	//	gW[co, ci, kh, kw] = Σ_{n, ho, wo} gradOut[n, co, ho, wo] ·
	//	    x[n, g·Cin/groups + ci, ho·sH + kh·dH − pH, wo·sW + kw·dW − pW]
	//
	// where g = co / (Cout/groups) is the group of output channel co, ho and
	// wo run over gradOut's spatial size, and x reads 0 outside its extent
	// (the zero padding). x is [N, Cin, H, W] and gradOut
	// [N, Cout, Ho, Wo], both of the same float dtype (the result's);
	// Cin and Cout are multiples of opts.Groups. Ho and Wo are not checked
	// against Conv2d's output size: any gradOut extent is summed over, so
	// the weight gradient of ConvTranspose2d(x, w, opts) is
	// Conv2dWeightGrad(gradOut, x, w's shape, opts) (with OutputPadding
	// ignored). Zero Stride, Dilation or Groups entries mean 1. Arguments
	// are validated by the caller.
	Conv2dWeightGrad(x, gradOut Tensor, wShape [4]int, opts ConvOptions) Tensor
}
