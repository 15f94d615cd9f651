package nn

import (
	"math"

	"github.com/emberml/ember"
)

// Conv1d is a 1-d convolution layer (PyTorch's nn.Conv1d): x [N, in, L] →
// [N, out, Lo] through ember.Tensor.Conv1d. Weight has shape [out,
// in/groups, k] and Bias [out], initialized as PyTorch (Kaiming-uniform
// with a = √5, bias U(−1/√fanIn, 1/√fanIn), fanIn = in/groups·k).
type Conv1d struct {
	Weight, Bias *Param
	Opts         ember.Conv1dOptions
}

// NewConv1d makes a Conv1d layer. It panics with an *ember.Error when a
// size is not positive or groups does not divide in and out.
func NewConv1d(in, out, kernel int, opts ember.Conv1dOptions, dev ember.Device) *Conv1d {
	g := max(opts.Groups, 1)
	if in <= 0 || out <= 0 || kernel <= 0 || opts.Groups < 0 || in%g != 0 || out%g != 0 {
		fail("conv1d", nil, "invalid sizes in=%d out=%d kernel=%d groups=%d (groups must divide in and out)", in, out, kernel, g)
	}
	fanIn := in / g * kernel
	return &Conv1d{
		Weight: newParam(KaimingUniform([]int{out, in / g, kernel}, fanIn, math.Sqrt(5), dev)),
		Bias:   newParam(uniform([]int{out}, 1/math.Sqrt(float64(fanIn)), dev)),
		Opts:   opts,
	}
}

// Forward convolves x [N, in, L].
func (c *Conv1d) Forward(x *ember.Tensor) *ember.Tensor {
	need("conv1d", []string{"x"}, x)
	var w, b *Param
	if c != nil {
		w, b = c.Weight, c.Bias
	}
	initialized("conv1d", "NewConv1d", c != nil, []string{"weight", "bias"}, w, b)
	return x.Conv1d(w.Value, b.Value, c.Opts)
}

// NamedParameters returns "weight" and "bias".
func (c *Conv1d) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", c.Weight}, {"bias", c.Bias}}
}

// Conv3d is a 3-d convolution layer (PyTorch's nn.Conv3d) with a cubic
// kernel: x [N, in, D, H, W] → [N, out, Do, Ho, Wo] through
// ember.Tensor.Conv3d. Weight is [out, in/groups, k, k, k], Bias [out],
// initialized as Conv1d with fanIn = in/groups·k³.
type Conv3d struct {
	Weight, Bias *Param
	Opts         ember.Conv3dOptions
}

// NewConv3d makes a Conv3d layer. It panics with an *ember.Error when a
// size is not positive or groups does not divide in and out.
func NewConv3d(in, out, kernel int, opts ember.Conv3dOptions, dev ember.Device) *Conv3d {
	g := max(opts.Groups, 1)
	if in <= 0 || out <= 0 || kernel <= 0 || opts.Groups < 0 || in%g != 0 || out%g != 0 || kernel > 1<<10 {
		fail("conv3d", nil, "invalid sizes in=%d out=%d kernel=%d groups=%d (groups must divide in and out)", in, out, kernel, g)
	}
	fanIn := in / g * kernel * kernel * kernel
	return &Conv3d{
		Weight: newParam(KaimingUniform([]int{out, in / g, kernel, kernel, kernel}, fanIn, math.Sqrt(5), dev)),
		Bias:   newParam(uniform([]int{out}, 1/math.Sqrt(float64(fanIn)), dev)),
		Opts:   opts,
	}
}

// Forward convolves x [N, in, D, H, W].
func (c *Conv3d) Forward(x *ember.Tensor) *ember.Tensor {
	need("conv3d", []string{"x"}, x)
	var w, b *Param
	if c != nil {
		w, b = c.Weight, c.Bias
	}
	initialized("conv3d", "NewConv3d", c != nil, []string{"weight", "bias"}, w, b)
	return x.Conv3d(w.Value, b.Value, c.Opts)
}

// NamedParameters returns "weight" and "bias".
func (c *Conv3d) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", c.Weight}, {"bias", c.Bias}}
}

// ConvTranspose2d is a transposed 2-d convolution layer (PyTorch's
// nn.ConvTranspose2d) with a square kernel: x [N, in, H, W] → [N, out,
// Ho, Wo] through ember.Tensor.ConvTranspose2d. Weight is [in, out/groups,
// k, k] and Bias [out], initialized as PyTorch, whose fan-in for this
// layout is out/groups·k².
type ConvTranspose2d struct {
	Weight, Bias *Param
	Opts         ember.ConvOptions
}

// NewConvTranspose2d makes a ConvTranspose2d layer. It panics with an
// *ember.Error when a size is not positive or groups does not divide in
// and out.
func NewConvTranspose2d(in, out, kernel int, opts ember.ConvOptions, dev ember.Device) *ConvTranspose2d {
	g := max(opts.Groups, 1)
	if in <= 0 || out <= 0 || kernel <= 0 || opts.Groups < 0 || in%g != 0 || out%g != 0 || kernel > 1<<15 {
		fail("conv_transpose2d", nil, "invalid sizes in=%d out=%d kernel=%d groups=%d (groups must divide in and out)", in, out, kernel, g)
	}
	fanIn := out / g * kernel * kernel
	return &ConvTranspose2d{
		Weight: newParam(KaimingUniform([]int{in, out / g, kernel, kernel}, fanIn, math.Sqrt(5), dev)),
		Bias:   newParam(uniform([]int{out}, 1/math.Sqrt(float64(fanIn)), dev)),
		Opts:   opts,
	}
}

// Forward applies the transposed convolution to x [N, in, H, W].
func (c *ConvTranspose2d) Forward(x *ember.Tensor) *ember.Tensor {
	need("conv_transpose2d", []string{"x"}, x)
	var w, b *Param
	if c != nil {
		w, b = c.Weight, c.Bias
	}
	initialized("conv_transpose2d", "NewConvTranspose2d", c != nil, []string{"weight", "bias"}, w, b)
	return x.ConvTranspose2d(w.Value, b.Value, c.Opts)
}

// NamedParameters returns "weight" and "bias".
func (c *ConvTranspose2d) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", c.Weight}, {"bias", c.Bias}}
}

// AdaptiveAvgPool2d pools x [N, C, H, W] (or [C, H, W]) to [..., OutH,
// OutW] with ember.Tensor.AdaptiveAvgPool2d (PyTorch's
// nn.AdaptiveAvgPool2d). It has no parameters.
type AdaptiveAvgPool2d struct{ OutH, OutW int }

// Forward pools x.
func (p AdaptiveAvgPool2d) Forward(x *ember.Tensor) *ember.Tensor {
	need("adaptive_avg_pool2d", []string{"x"}, x)
	return x.AdaptiveAvgPool2d(p.OutH, p.OutW)
}

// NamedParameters returns nil.
func (AdaptiveAvgPool2d) NamedParameters() []NamedParam { return nil }

// Upsample resizes x [N, C, H, W] to Size with Mode (PyTorch's
// nn.Upsample with size given) through ember.Tensor.Interpolate. It has no
// parameters.
type Upsample struct {
	Size         [2]int
	Mode         ember.InterpolationMode
	AlignCorners bool
}

// Forward resizes x.
func (u Upsample) Forward(x *ember.Tensor) *ember.Tensor {
	need("upsample", []string{"x"}, x)
	return x.Interpolate(u.Size, u.Mode, u.AlignCorners)
}

// NamedParameters returns nil.
func (Upsample) NamedParameters() []NamedParam { return nil }

// NewEmbeddingWithPadding makes an Embedding whose row padding is
// initialized to zeros and receives no gradient (PyTorch's padding_idx):
// Forward returns the row's current value at those positions, detached.
// A negative padding counts from the end, as PyTorch. It panics with an
// *ember.Error when a size is not positive or padding is out of range.
func NewEmbeddingWithPadding(num, dim, padding int, dev ember.Device) *Embedding {
	if padding < -num || padding >= num {
		fail("embedding", nil, "padding index %d is outside [-%d, %d)", padding, num, num)
	}
	if padding < 0 {
		padding += num
	}
	e := NewEmbedding(num, dim, dev)
	mask := ember.Arange(0, num, dev.Inner()).EqScalar(float64(padding)).Reshape(num, 1)
	w := e.Weight.Value.Inner().MaskFill(mask, 0)
	e.Weight = newParam(w.ToDevice(dev))
	e.PaddingIdx = &padding
	return e
}
