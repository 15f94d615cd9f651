package nn

import (
	"math"

	"github.com/emberml/ember"
)

// Conv2d is a 2-d convolution layer (PyTorch's nn.Conv2d) with a square
// kernel: x [N, in, H, W] → [N, out, Ho, Wo] with
// Ho = (H + 2·padding − dilation·(k−1) − 1)/stride + 1 (see
// ember.Tensor.Conv2d). Weight has shape [out, in/groups, k, k] and Bias
// [out].
type Conv2d struct {
	Weight *Param
	Bias   *Param
	Opts   ember.ConvOptions
	in     int
}

// NewConv2d makes a Conv2d layer with PyTorch's initialization: weight from
// KaimingUniform with a = √5 and bias from U(−1/√fanIn, 1/√fanIn), where
// fanIn = in/groups·k·k. Zero options mean stride 1, padding 0, dilation 1,
// groups 1. It panics with an *ember.Error when a size is not positive or
// groups does not divide in and out.
func NewConv2d(in, out, kernel int, opts ember.ConvOptions, dev ember.Device) *Conv2d {
	g := opts.Groups
	if g == 0 {
		g = 1
	}
	if in <= 0 || out <= 0 || kernel <= 0 || g < 0 || in%g != 0 || out%g != 0 {
		fail("conv2d", nil, "invalid sizes in=%d out=%d kernel=%d groups=%d (groups must divide in and out)", in, out, kernel, g)
	}
	if in/g > math.MaxInt/kernel/kernel {
		fail("conv2d", nil, "weight [%d, %d, %d, %d] has more elements than an int can count", out, in/g, kernel, kernel)
	}
	fanIn := in / g * kernel * kernel
	return &Conv2d{
		Weight: newParam(KaimingUniform([]int{out, in / g, kernel, kernel}, fanIn, math.Sqrt(5), dev)),
		Bias:   newParam(uniform([]int{out}, 1/math.Sqrt(float64(fanIn)), dev)),
		Opts:   opts,
		in:     in,
	}
}

// Forward convolves x [N, in, H, W]. It panics with an *ember.Error on a
// rank or channel mismatch or an empty output.
func (c *Conv2d) Forward(x *ember.Tensor) *ember.Tensor {
	need("conv2d", []string{"x"}, x)
	var w, b *Param
	if c != nil {
		w, b = c.Weight, c.Bias
	}
	initialized("conv2d", "NewConv2d", c != nil, []string{"weight", "bias"}, w, b)
	in := c.in
	if in == 0 && w.Value.Rank() == 4 { // a literal Conv2d{Weight, Bias, Opts}
		in = w.Value.Dim(1) * max(c.Opts.Groups, 1)
	}
	if x.Rank() != 4 || x.Dim(1) != in {
		fail("conv2d", x, "input must be [N, %d, H, W]", in)
	}
	return x.Conv2d(c.Weight.Value, c.Bias.Value, c.Opts)
}

// NamedParameters returns "weight" and "bias".
func (c *Conv2d) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", c.Weight}, {"bias", c.Bias}}
}
