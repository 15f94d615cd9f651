package nn

import (
	"github.com/emberml/ember"
)

// BatchNorm normalizes each channel over the batch (PyTorch's BatchNorm1d
// and BatchNorm2d in one type): for x [N, C] or [N, C, H, W] (any rank ≥ 2,
// channels on axis 1)
//
//	y = (x − μ) / √(σ² + eps) · weight + bias
//
// with weight and bias of shape [C] (initialized to ones and zeros) and
// eps = 1e-5. In training mode μ and σ² are the batch's mean and biased
// variance over every axis but 1, and the running estimates are updated
// with momentum 0.1: running = 0.9·running + 0.1·batch, where the variance
// fed to running_var is the unbiased one (n/(n−1)·σ²), as PyTorch does. In
// evaluation mode the running estimates are used instead.
//
// The buffers "running_mean" [C], "running_var" [C] (initialized to zeros
// and ones, in the device's float dtype) and "num_batches_tracked" (rank-0
// I64) live untracked on the inner device; NamedBuffers lists them and Save
// stores them. Forward in training mode replaces the buffers' values, so it
// must not run concurrently on one BatchNorm.
type BatchNorm struct {
	Weight            *Param
	Bias              *Param
	RunningMean       *Param
	RunningVar        *Param
	NumBatchesTracked *Param
	// Momentum is the weight of the batch statistics in the running
	// estimates (default 0.1).
	Momentum float64
	// Eps is added to the variance before the square root (default 1e-5).
	Eps      float64
	channels int
	training bool
}

// NewBatchNorm makes a BatchNorm over channels channels on dev, in training
// mode. It panics with an *ember.Error when channels is not positive.
func NewBatchNorm(channels int, dev ember.Device) *BatchNorm {
	if channels <= 0 {
		fail("batch_norm", nil, "channels must be positive, got %d", channels)
	}
	in := dev.Inner()
	return &BatchNorm{
		Weight:            newParam(ember.Ones([]int{channels}, dev)),
		Bias:              newParam(ember.Zeros([]int{channels}, dev)),
		RunningMean:       &Param{Value: ember.Zeros([]int{channels}, in)},
		RunningVar:        &Param{Value: ember.Ones([]int{channels}, in)},
		NumBatchesTracked: &Param{Value: ember.FullDType(nil, 0, ember.I64, in)},
		Momentum:          0.1,
		Eps:               1e-5,
		channels:          channels,
		training:          true,
	}
}

// SetTraining selects batch statistics (true) or running statistics (false).
func (b *BatchNorm) SetTraining(training bool) { b.training = training }

// Training reports whether the layer is in training mode.
func (b *BatchNorm) Training() bool { return b.training }

// Forward normalizes x [N, C, ...]. It panics with an *ember.Error when x
// has rank < 2 or C differs from the layer's channels, and in training mode
// when a channel has only one value (N·H·W = 1), as PyTorch.
func (b *BatchNorm) Forward(x *ember.Tensor) *ember.Tensor {
	need("batch_norm", []string{"x"}, x)
	var ps [5]*Param
	if b != nil {
		ps = [5]*Param{b.Weight, b.Bias, b.RunningMean, b.RunningVar, b.NumBatchesTracked}
	}
	initialized("batch_norm", "NewBatchNorm", b != nil,
		[]string{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}, ps[:]...)
	channels := b.channels
	if channels == 0 && ps[0].Value.Rank() == 1 { // a literal BatchNorm
		channels = ps[0].Value.Dim(0)
	}
	if x.Rank() < 2 || x.Dim(1) != channels {
		fail("batch_norm", x, "input must be [N, %d, ...]", channels)
	}
	x = autocastF32(x) // normalization runs in F32 under autocast
	axes := make([]int, 0, x.Rank()-1)
	bshape := make([]int, x.Rank()) // [1, C, 1, ...] for broadcasting per-channel values
	for i := range x.Rank() {
		bshape[i] = 1
		if i != 1 {
			axes = append(axes, i)
		}
	}
	bshape[1] = b.channels
	w := b.Weight.Value.Reshape(bshape...)
	bias := b.Bias.Value.Reshape(bshape...)
	if !b.training {
		mean := b.RunningMean.Value.Reshape(bshape...)
		inv := b.RunningVar.Value.AddScalar(b.Eps).Rsqrt().Reshape(bshape...)
		return x.Sub(mean).Mul(inv).Mul(w).Add(bias)
	}
	n := x.NumElements() / b.channels
	if n <= 1 {
		fail("batch_norm", x, "training needs more than one value per channel")
	}
	mean := meanOver(x, axes)
	diff := x.Sub(mean)
	variance := meanOver(diff.Mul(diff), axes)
	y := diff.Mul(variance.AddScalar(b.Eps).Rsqrt()).Mul(w).Add(bias)

	m := b.Momentum
	bm := mean.Inner().Reshape(b.channels).Cast(b.RunningMean.Value.DType())
	bv := variance.Inner().Reshape(b.channels).MulScalar(float64(n) / float64(n-1)).Cast(b.RunningVar.Value.DType())
	b.RunningMean.Value = b.RunningMean.Value.MulScalar(1 - m).Add(bm.MulScalar(m))
	b.RunningVar.Value = b.RunningVar.Value.MulScalar(1 - m).Add(bv.MulScalar(m))
	b.NumBatchesTracked.Value = b.NumBatchesTracked.Value.AddScalar(1)
	return y
}

// NamedParameters returns "weight" and "bias".
func (b *BatchNorm) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", b.Weight}, {"bias", b.Bias}}
}

// NamedBuffers returns "running_mean", "running_var" and
// "num_batches_tracked" (PyTorch's state-dict names).
func (b *BatchNorm) NamedBuffers() []NamedParam {
	return []NamedParam{
		{"running_mean", b.RunningMean},
		{"running_var", b.RunningVar},
		{"num_batches_tracked", b.NumBatchesTracked},
	}
}

// LayerNorm normalizes over the last axis (PyTorch's nn.LayerNorm with
// normalized_shape = [dim]): for x [..., dim]
//
//	y = (x − mean) / √(var + eps) · weight + bias
//
// with the biased variance, eps = 1e-5, and weight and bias of shape [dim]
// initialized to ones and zeros. Forward is ember's Tensor.LayerNorm (one
// kernel on devices that have one).
type LayerNorm struct {
	Weight *Param
	Bias   *Param
	// Eps is added to the variance before the square root (default 1e-5).
	Eps float64
	dim int
}

// NewLayerNorm makes a LayerNorm over a last axis of size dim. It panics
// with an *ember.Error when dim is not positive.
func NewLayerNorm(dim int, dev ember.Device) *LayerNorm {
	if dim <= 0 {
		fail("layer_norm", nil, "dim must be positive, got %d", dim)
	}
	return &LayerNorm{
		Weight: newParam(ember.Ones([]int{dim}, dev)),
		Bias:   newParam(ember.Zeros([]int{dim}, dev)),
		Eps:    1e-5,
		dim:    dim,
	}
}

// Forward normalizes x [..., dim]. It panics with an *ember.Error when the
// last axis is not dim.
func (l *LayerNorm) Forward(x *ember.Tensor) *ember.Tensor {
	need("layer_norm", []string{"x"}, x)
	var w, b *Param
	if l != nil {
		w, b = l.Weight, l.Bias
	}
	initialized("layer_norm", "NewLayerNorm", l != nil, []string{"weight", "bias"}, w, b)
	dim := l.dim
	if dim == 0 && w.Value.Rank() == 1 { // a literal LayerNorm{Weight, Bias, Eps}
		dim = w.Value.Dim(0)
	}
	if x.Rank() == 0 || x.Dim(-1) != dim {
		fail("layer_norm", x, "input's last axis must have size %d", dim)
	}
	return x.LayerNorm([]int{dim}, ember.NormParams{Weight: w.Value, Bias: b.Value}, l.Eps)
}

// NamedParameters returns "weight" and "bias".
func (l *LayerNorm) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", l.Weight}, {"bias", l.Bias}}
}

// meanOver averages x over the (non-negative, distinct) axes, keeping them
// with size 1.
func meanOver(x *ember.Tensor, axes []int) *ember.Tensor {
	n := 1
	for _, a := range axes {
		n *= x.Dim(a)
		x = x.SumAxis(a, true)
	}
	return x.DivScalar(float64(n))
}
