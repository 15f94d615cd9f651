package ember

// Conv1dOptions are a 1-d convolution's attributes (PyTorch's conv1d
// arguments); zero values mean stride 1, padding 0, dilation 1, groups 1.
type Conv1dOptions struct {
	Stride, Padding, Dilation, Groups int
}

// Conv1d is the 1-d cross-correlation of x [N, Cin, L] with w [Cout,
// Cin/groups, k] plus an optional bias [Cout] (nil for none), as PyTorch's
// conv1d: Lo = (L + 2·padding − dilation·(k−1) − 1)/stride + 1. It runs as
// Conv2d over a height of 1, so it has Conv2d's kernels, gradients and
// errors (which name conv2d and the 4-d shapes).
func (x *Tensor) Conv1d(w, bias *Tensor, o Conv1dOptions) *Tensor {
	x.need("conv1d", "x")
	w.need("conv1d", "w")
	if bias != nil {
		bias.need("conv1d", "bias")
	}
	if x.Rank() != 3 || w.Rank() != 3 {
		fail("conv1d", []string{describe("x", x), describe("w", w)}, "needs x [N, Cin, L] and w [Cout, Cin/groups, k]")
	}
	opts := ConvOptions{Stride: [2]int{1, o.Stride}, Padding: [2]int{0, o.Padding}, Dilation: [2]int{1, o.Dilation}, Groups: o.Groups}
	y := x.Unsqueeze(2).Conv2d(w.Unsqueeze(2), bias, opts)
	return y.Squeeze(2)
}

// Conv3dOptions are a 3-d convolution's attributes (PyTorch's conv3d
// arguments, per axis depth, height, width); zero values mean stride 1,
// padding 0, dilation 1, groups 1.
type Conv3dOptions struct {
	Stride, Padding, Dilation [3]int
	Groups                    int
}

// Conv3d is the 3-d cross-correlation of x [N, Cin, D, H, W] with w [Cout,
// Cin/groups, kD, kH, kW] plus an optional bias [Cout], as PyTorch's
// conv3d (each output size as Conv2d's, per axis). The depth taps are
// gathered with Unfold into channels, so the whole convolution is one
// Conv2d over [N·Do, Cin·kD, H, W] with the weight viewed as [Cout,
// Cin/groups·kD, kH, kW]: it is differentiable and uses Conv2d's kernels,
// at the cost of kD copies of the input. It panics with an *Error on rank,
// channel, group or option errors, or an empty output.
func (x *Tensor) Conv3d(w, bias *Tensor, o Conv3dOptions) *Tensor {
	x.need("conv3d", "x")
	w.need("conv3d", "w")
	if bias != nil {
		bias.need("conv3d", "bias")
	}
	args := []string{describe("x", x), describe("w", w)}
	if x.Rank() != 5 || w.Rank() != 5 {
		fail("conv3d", args, "needs x [N, Cin, D, H, W] and w [Cout, Cin/groups, kD, kH, kW]")
	}
	for i := range 3 {
		if o.Stride[i] == 0 {
			o.Stride[i] = 1
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
		if o.Stride[i] < 0 || o.Dilation[i] < 0 || o.Padding[i] < 0 {
			fail("conv3d", args, "strides, dilations and paddings must be non-negative, got %+v", o)
		}
	}
	n, c, kd := x.Dim(0), x.Dim(1), w.Dim(2)
	if kd == 0 {
		fail("conv3d", args, "empty kernel")
	}
	taps := depthWindows("conv3d", x, kd, o.Stride[0], o.Padding[0], o.Dilation[0], 0) // [N, C, Do, H, W, kD]
	do, h, wd := taps.Dim(2), taps.Dim(3), taps.Dim(4)
	cols := taps.Permute(0, 2, 1, 5, 3, 4).Reshape(n*do, c*kd, h, wd)
	w2 := w.Reshape(w.Dim(0), w.Dim(1)*kd, w.Dim(3), w.Dim(4))
	opts := ConvOptions{Stride: [2]int{o.Stride[1], o.Stride[2]}, Padding: [2]int{o.Padding[1], o.Padding[2]},
		Dilation: [2]int{o.Dilation[1], o.Dilation[2]}, Groups: o.Groups}
	y := cols.Conv2d(w2, bias, opts) // [N·Do, Cout, Ho, Wo]
	return y.Reshape(n, do, y.Dim(1), y.Dim(2), y.Dim(3)).Permute(0, 2, 1, 3, 4)
}
