package nn

import "github.com/emberml/ember"

// MaxPool2d takes the maximum over square windows of x [N, C, H, W] (or
// [C, H, W]), PyTorch's nn.MaxPool2d without ceil mode; see
// ember.Tensor.MaxPool2d for the output size, padding and gradient rules.
type MaxPool2d struct {
	// Opts holds the kernel, stride, padding and dilation; set Padding or
	// Dilation after construction if needed.
	Opts ember.PoolOptions
}

// NewMaxPool2d pools with a kernel × kernel window moving by stride (0
// means stride = kernel, PyTorch's default), no padding. Options are
// checked on Forward.
func NewMaxPool2d(kernel, stride int) *MaxPool2d {
	return &MaxPool2d{Opts: poolOpts(kernel, stride)}
}

// Forward returns x.MaxPool2d(Opts).
func (p *MaxPool2d) Forward(x *ember.Tensor) *ember.Tensor {
	need("max_pool2d", []string{"x"}, x)
	initialized("max_pool2d", "NewMaxPool2d", p != nil, nil)
	return x.MaxPool2d(p.Opts)
}

// NamedParameters returns nil.
func (p *MaxPool2d) NamedParameters() []NamedParam { return nil }

// AvgPool2d averages over square windows of x [N, C, H, W] (or [C, H, W]),
// PyTorch's nn.AvgPool2d without ceil mode; see ember.Tensor.AvgPool2d.
type AvgPool2d struct {
	// Opts holds the kernel, stride, padding and dilation.
	Opts ember.PoolOptions
	// CountIncludePad divides by the full window size even where it
	// overlaps the padding (PyTorch's default, true).
	CountIncludePad bool
}

// NewAvgPool2d pools with a kernel × kernel window moving by stride (0
// means stride = kernel), no padding, CountIncludePad true. Options are
// checked on Forward.
func NewAvgPool2d(kernel, stride int) *AvgPool2d {
	return &AvgPool2d{Opts: poolOpts(kernel, stride), CountIncludePad: true}
}

// Forward returns x.AvgPool2d(Opts, CountIncludePad).
func (p *AvgPool2d) Forward(x *ember.Tensor) *ember.Tensor {
	need("avg_pool2d", []string{"x"}, x)
	initialized("avg_pool2d", "NewAvgPool2d", p != nil, nil)
	return x.AvgPool2d(p.Opts, p.CountIncludePad)
}

// NamedParameters returns nil.
func (p *AvgPool2d) NamedParameters() []NamedParam { return nil }

func poolOpts(kernel, stride int) ember.PoolOptions {
	return ember.PoolOptions{Kernel: [2]int{kernel, kernel}, Stride: [2]int{stride, stride}}
}
