package nn

import "github.com/emberml/ember"

// Dropout zeroes each element with probability P during training and
// scales the survivors by 1/(1−P), so the expected value is unchanged
// (inverted dropout, PyTorch's nn.Dropout). The mask is sampled with
// ember.Random's Bernoulli distribution on x's device (Device.Seed makes it
// reproducible). In evaluation mode, and when P is 0, Forward returns x
// unchanged; when P is 1 it returns zeros.
type Dropout struct {
	// P is the probability of zeroing an element, in [0, 1].
	P        float64
	training bool
}

// NewDropout makes a Dropout layer in training mode. It panics with an
// *ember.Error when p is outside [0, 1].
func NewDropout(p float64) *Dropout {
	if !(p >= 0 && p <= 1) {
		fail("dropout", nil, "probability must be in [0, 1], got %v", p)
	}
	return &Dropout{P: p, training: true}
}

// SetTraining enables (true) or disables (false) dropping.
func (d *Dropout) SetTraining(training bool) { d.training = training }

// Training reports whether the layer is in training mode.
func (d *Dropout) Training() bool { return d.training }

// Forward applies dropout to a float tensor of any shape (same shape and
// dtype out). It panics with an *ember.Error for non-float input.
func (d *Dropout) Forward(x *ember.Tensor) *ember.Tensor {
	need("dropout", []string{"x"}, x)
	initialized("dropout", "NewDropout", d != nil, nil)
	if !x.DType().IsFloat() {
		fail("dropout", x, "needs a float tensor")
	}
	if !d.training || d.P == 0 {
		return x
	}
	if d.P == 1 {
		return x.Mul(ember.ZerosLike(x))
	}
	mask := ember.RandomDType(x.Shape(), ember.Bernoulli(1-d.P), x.DType(), x.Device().Inner())
	return x.Mul(mask.MulScalar(1 / (1 - d.P)))
}

// NamedParameters returns nil.
func (d *Dropout) NamedParameters() []NamedParam { return nil }
