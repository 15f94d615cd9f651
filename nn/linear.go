package nn

import (
	"math"

	"github.com/emberml/ember"
)

// Linear is the affine map y = x·Wᵀ + b (PyTorch's nn.Linear). Weight has
// shape [out, in] (PyTorch's layout) and Bias [out]; both are in the
// device's float dtype.
type Linear struct {
	Weight *Param
	Bias   *Param
	in     int
	out    int
}

// NewLinear makes a Linear layer with PyTorch's initialization: weight from
// KaimingUniform with a = √5 (U(−1/√in, 1/√in)) and bias from
// U(−1/√in, 1/√in). The parameters are tracked leaves on an autodiff
// device. It panics with an *ember.Error when in or out is not positive.
func NewLinear(in, out int, dev ember.Device) *Linear {
	if in <= 0 || out <= 0 {
		fail("linear", nil, "sizes must be positive, got in=%d out=%d", in, out)
	}
	return &Linear{
		Weight: newParam(KaimingUniform([]int{out, in}, in, math.Sqrt(5), dev)),
		Bias:   newParam(uniform([]int{out}, 1/math.Sqrt(float64(in)), dev)),
		in:     in,
		out:    out,
	}
}

// Forward maps x [..., in] to [..., out] (any number of leading axes,
// including none). On an autocast device (ember.Device.Autocast) the
// product runs in the autocast dtype and the bias is cast to it, so the
// output has that dtype, as PyTorch's autocast linear. It panics with an
// *ember.Error when x's last axis is not in.
func (l *Linear) Forward(x *ember.Tensor) *ember.Tensor {
	need("linear", []string{"x"}, x)
	initialized("linear", "NewLinear", l != nil, []string{"weight", "bias"}, l.param(0), l.param(1))
	in := l.Weight.Value.Dim(-1)
	if x.Rank() == 0 || x.Dim(-1) != in {
		fail("linear", x, "input's last axis must have size %d", in)
	}
	y := x.Matmul(l.Weight.Value.Transpose())
	b := l.Bias.Value
	if dt, ok := y.Device().AutocastDType(); ok && y.DType() == dt {
		// The bias joins the product in its precision, as PyTorch's
		// autocast runs linear (addmm) in one op.
		b = b.Cast(dt)
	}
	return y.Add(b)
}

// param returns the weight (0) or bias (1), nil for a nil receiver.
func (l *Linear) param(i int) *Param {
	switch {
	case l == nil:
		return nil
	case i == 0:
		return l.Weight
	}
	return l.Bias
}

// NamedParameters returns "weight" and "bias".
func (l *Linear) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", l.Weight}, {"bias", l.Bias}}
}
