package ember

// ConvTranspose1d is the 1-d transposed convolution of x [N, Cin, L] with
// w [Cin, Cout/groups, k] plus an optional bias [Cout] (PyTorch's
// conv_transpose1d): Lo = (L−1)·stride − 2·padding + dilation·(k−1) +
// outputPadding + 1. It runs as ConvTranspose2d over a height of 1.
func (x *Tensor) ConvTranspose1d(w, bias *Tensor, o Conv1dOptions, outputPadding int) *Tensor {
	x.need("conv_transpose1d", "x")
	w.need("conv_transpose1d", "w")
	if bias != nil {
		bias.need("conv_transpose1d", "bias")
	}
	if x.Rank() != 3 || w.Rank() != 3 {
		fail("conv_transpose1d", []string{describe("x", x), describe("w", w)}, "needs x [N, Cin, L] and w [Cin, Cout/groups, k]")
	}
	opts := ConvOptions{Stride: [2]int{1, o.Stride}, Padding: [2]int{0, o.Padding}, Dilation: [2]int{1, o.Dilation}, Groups: o.Groups,
		OutputPadding: [2]int{0, outputPadding}}
	return x.Unsqueeze(2).ConvTranspose2d(w.Unsqueeze(2), bias, opts).Squeeze(2)
}

// dilateZeros inserts s−1 zeros between consecutive elements of axis a.
func dilateZeros(v *Tensor, a, s int) *Tensor {
	n := v.shape()[a]
	if s <= 1 || n <= 1 {
		return v
	}
	r := v.Rank()
	pads := make([]int, 2*(r+1))
	pads[2*(r-1-a)+1] = s - 1 // after, on the new axis a+1
	merged := append([]int{}, v.shape()...)
	merged[a] = n * s
	return v.Unsqueeze(a+1).Pad(pads, 0).Reshape(merged...).Narrow(a, 0, (n-1)*s+1)
}

// ConvTranspose3d is the 3-d transposed convolution of x [N, Cin, D, H,
// W] with w [Cin, Cout/groups, kD, kH, kW] plus an optional bias [Cout]
// (PyTorch's conv_transpose3d): per axis Do = (D−1)·stride − 2·padding +
// dilation·(k−1) + outputPadding + 1. It is computed as the equivalent
// direct convolution: x with stride−1 zeros between its elements, padded
// by dilation·(k−1) − padding (cropped where negative) plus outputPadding
// after, convolved (Conv3d, stride 1) with w flipped and transposed per
// group; so it is differentiable. It panics with an *Error on rank,
// channel or option errors.
func (x *Tensor) ConvTranspose3d(w, bias *Tensor, o Conv3dOptions, outputPadding [3]int) *Tensor {
	const op = "conv_transpose3d"
	x.need(op, "x")
	w.need(op, "w")
	if bias != nil {
		bias.need(op, "bias")
	}
	args := []string{describe("x", x), describe("w", w)}
	if x.Rank() != 5 || w.Rank() != 5 {
		fail(op, args, "needs x [N, Cin, D, H, W] and w [Cin, Cout/groups, kD, kH, kW]")
	}
	g := max(o.Groups, 1)
	cin := x.Dim(1)
	if w.Dim(0) != cin || cin%g != 0 || o.Groups < 0 {
		fail(op, args, "w must be [%d, Cout/groups, kD, kH, kW] with groups dividing %d", cin, cin)
	}
	for i := range 3 {
		if o.Stride[i] == 0 {
			o.Stride[i] = 1
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
		if o.Stride[i] < 0 || o.Dilation[i] < 0 || o.Padding[i] < 0 || outputPadding[i] < 0 ||
			(outputPadding[i] >= o.Stride[i] && outputPadding[i] >= o.Dilation[i]) {
			fail(op, args, "invalid options %+v with output padding %v (it must be smaller than the stride or the dilation)", o, outputPadding)
		}
	}
	v := x
	for i := range 3 {
		v = dilateZeros(v, 2+i, o.Stride[i])
	}
	for i := range 3 {
		a := 2 + i
		k := w.Dim(2 + i)
		before := o.Dilation[i]*(k-1) - o.Padding[i]
		after := before + outputPadding[i]
		if before < 0 {
			v = v.Narrow(a, -before, v.Dim(a)+before)
			before = 0
		}
		if after < 0 {
			v = v.Narrow(a, 0, v.Dim(a)+after)
			after = 0
		}
		pads := make([]int, 10)
		pads[2*(4-a)], pads[2*(4-a)+1] = before, after
		v = v.Pad(pads, 0)
	}
	// w [Cin, Cout/g, k...] → [g, Cin/g, Cout/g, k...] → [Cout, Cin/g, k...], flipped.
	cout := w.Dim(1) * g
	k := []int{w.Dim(2), w.Dim(3), w.Dim(4)}
	wt := w.Reshape(g, cin/g, w.Dim(1), k[0], k[1], k[2]).Permute(0, 2, 1, 3, 4, 5).
		Reshape(cout, cin/g, k[0], k[1], k[2]).Flip(2, 3, 4)
	return v.Conv3d(wt, bias, Conv3dOptions{Dilation: o.Dilation, Groups: o.Groups})
}

// ConvPadding says how Conv2dPadded pads its input, beyond ConvOptions'
// symmetric zero padding (PyTorch's padding="same" and padding_mode).
type ConvPadding struct {
	// Same pads so the output has the input's size (stride 1 only):
	// dilation·(k−1) in all, the extra element after, as PyTorch's
	// padding="same".
	Same bool
	// Pads, when not nil, is [top, bottom, left, right] (>= 0), replacing
	// ConvOptions.Padding.
	Pads *[4]int
	// Mode fills the padding (zeros, reflect, replicate or circular,
	// PyTorch's padding_mode).
	Mode PaddingMode
}

// Conv2dPadded is Conv2d with the padding p: "same", asymmetric, and
// filled by any PaddingMode (PyTorch's padding="same" and padding_mode);
// ConvOptions.Padding applies when neither Same nor Pads is set (with
// p.Mode filling it). The input is padded with PadWithMode and convolved
// without padding, so it is differentiable. It panics as Conv2d, and with
// an *Error for Same with a stride other than 1, negative pads, or both
// Same and Pads.
func (x *Tensor) Conv2dPadded(w, bias *Tensor, opts ConvOptions, p ConvPadding) *Tensor {
	x.need("conv2d", "x")
	w.need("conv2d", "w")
	if bias != nil {
		bias.need("conv2d", "bias")
	}
	args := []string{describe("x", x), describe("w", w)}
	if w.Rank() != 4 {
		fail("conv2d", args, "needs w [Cout, Cin/groups, kH, kW]")
	}
	pads := [4]int{opts.Padding[0], opts.Padding[0], opts.Padding[1], opts.Padding[1]}
	switch {
	case p.Same && p.Pads != nil:
		fail("conv2d", args, "set either Same or Pads")
	case p.Same:
		for i := range 2 {
			s, d := opts.Stride[i], max(opts.Dilation[i], 1)
			if s > 1 {
				fail("conv2d", args, "padding \"same\" needs stride 1, got %v", opts.Stride)
			}
			total := d * (w.Dim(2+i) - 1)
			pads[2*i], pads[2*i+1] = total/2, total-total/2
		}
	case p.Pads != nil:
		if opts.Padding != [2]int{} {
			fail("conv2d", args, "set either ConvOptions.Padding or ConvPadding.Pads")
		}
		pads = *p.Pads
	}
	for _, v := range pads {
		if v < 0 {
			fail("conv2d", args, "negative padding %v", pads)
		}
	}
	opts.Padding = [2]int{}
	return x.PadWithMode([]int{pads[2], pads[3], pads[0], pads[1]}, p.Mode).Conv2d(w, bias, opts)
}
