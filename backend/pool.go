package backend

// PoolOptions are the window attributes of a 2-d pooling, PyTorch's names,
// per spatial axis (height, width): Kernel >= 1, Stride >= 1, Padding >= 0
// (at most half the dilated kernel size) and Dilation >= 1. The output size
// is PyTorch's floor formula
// Ho = (H + 2·padH − dilH·(kH−1) − 1)/strideH + 1 (no ceil mode). Callers
// of MaxPool2der fill in every field (no zero defaults).
type PoolOptions struct {
	Kernel, Stride, Padding, Dilation [2]int
}

// PoolOutputSize returns the pooled spatial size [Ho, Wo] of an input of
// spatial size [h, w] under o (the floor formula of PoolOptions). It may be
// zero or negative when the dilated window is larger than the padded input;
// callers check that first.
func PoolOutputSize(h, w int, o PoolOptions) [2]int {
	in := [2]int{h, w}
	var out [2]int
	for i := range 2 {
		eff := o.Dilation[i]*(o.Kernel[i]-1) + 1
		out[i] = (in[i]+2*o.Padding[i]-eff)/o.Stride[i] + 1
	}
	return out
}

// MaxPool2der is implemented by backends with direct kernels for 2-d max
// pooling and its gradient. The root package uses it, when the device's
// backend has it and SupportsMaxPool2d reports the input's dtype, instead of
// composing the pooling from kH·kW strided Slice views of the padded input,
// Stack and a Reduce (ReduceMax) over the window axis, whose gradient
// builds one full-size tensor per kernel offset and adds them. Decorators
// such as backend/autodiff implement it by delegating to their inner
// backend (and recording MaxPool2dGrad as the backward).
//
// Results must equal, bit for bit, those of that composition (for kH·kW
// >= 2), as computed on the flex backend:
//
//   - the window's taps, in the order (i, j) = (0, 0), (0, 1), …,
//     (kH−1, kW−1), read x[n, c, ho·sH + i·dH − pH, wo·sW + j·dW − pW], or
//     -Inf outside x (the padding);
//   - the maximum keeps the first tap of a tie and the first NaN, which
//     then propagates (flex's Reduce with ReduceMax);
//   - the gradient is Reduce's ReduceMax gradient (backend.ExtremumGrader's
//     formula: each tap equal to the window's maximum y gets q = g/count,
//     count being the number of such taps, padding included when y is
//     -Inf; every other tap q·0, so a NaN window spreads NaN) followed by
//     the adjoint of each Slice view and the sum of the kH·kW full-size
//     view gradients in the order the autodiff graph accumulates them:
//     starting with the view of the last kernel offset and adding the
//     others down to offset (0, 0), each view contributing +0 where it
//     does not reach, all in x's dtype.
type MaxPool2der interface {
	// SupportsMaxPool2d reports whether MaxPool2d and MaxPool2dGrad
	// handle inputs of dtype dt; the caller composes the pooling for
	// the others.
	SupportsMaxPool2d(dt DType) bool

	// MaxPool2d returns the maximum over each window of x
	// [N, C, H, W] -> [N, C, Ho, Wo] (PyTorch's max_pool2d without ceil
	// mode, Ho and Wo from PoolOutputSize), x's dtype. x has a dtype
	// SupportsMaxPool2d accepts, any layout, and a window no larger than
	// the padded input; every option is set. Arguments are validated by
	// the caller.
	MaxPool2d(x Tensor, opts PoolOptions) Tensor

	// MaxPool2dGrad returns the gradient [N, C, H, W] with respect to x
	// of y = MaxPool2d(x, opts) for the output gradient g (y's shape and
	// dtype): see the interface's description for the exact formula
	// (tied maxima share g evenly, PyTorch's amax convention, where
	// PyTorch's max_pool2d gives it all to the first). x, y and g may
	// have any layout. Arguments are validated by the caller.
	MaxPool2dGrad(x, y, g Tensor, opts PoolOptions) Tensor
}
