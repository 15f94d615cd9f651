package ember

import (
	"math"
)

// Elementwise functions and activations composed from the primitive
// kinds, with PyTorch's definitions and edge cases (each stated), so that
// they exist once and run, and differentiate, on every backend.

// Trunc rounds toward zero (PyTorch's torch.trunc): ceil for negative x,
// floor otherwise, so trunc(-0.5) = -0; NaN and ±Inf stay. Integer inputs
// are returned as they are. The gradient is zero. It panics with an
// *Error for Bool tensors.
func (x *Tensor) Trunc() *Tensor {
	x.notBool("trunc")
	if !x.DType().IsFloat() {
		return x
	}
	return Where(x.LtScalar(0), x.Ceil(), x.Floor())
}

// Frac returns x − trunc(x), the fractional part with x's sign (PyTorch's
// torch.frac): frac(-1.25) = -0.25, frac(±Inf) = NaN. Integer inputs give
// zeros. The gradient is one. It panics with an *Error for Bool tensors.
func (x *Tensor) Frac() *Tensor {
	x.notBool("frac")
	return x.Sub(x.Trunc())
}

// Softplus returns log(1 + exp(β·x))/β, reverting to x where β·x >
// threshold (PyTorch's softplus; its defaults are β = 1, threshold = 20).
// The exponential is taken of min(β·x, threshold), so neither the value
// nor the gradient overflows where the linear branch is used. Int and
// Bool inputs are first cast to the device's float dtype. It panics with
// an *Error when β is zero or either parameter is NaN.
func (x *Tensor) Softplus(beta, threshold float64) *Tensor {
	x = x.asFloat("softplus")
	if beta == 0 || math.IsNaN(beta) || math.IsNaN(threshold) {
		fail("softplus", []string{describe("x", x)}, "beta %v must be non-zero and threshold %v not NaN", beta, threshold)
	}
	bx := x.MulScalar(beta)
	soft := bx.ClampMax(threshold).Exp().Log1p().DivScalar(beta)
	return Where(bx.GtScalar(threshold), x, soft)
}

// Elu returns x where x > 0 and α·(exp(x) − 1) elsewhere (PyTorch's elu,
// default α = 1); the exponential is taken of min(x, 0). Int and Bool
// inputs are first cast to the device's float dtype. It panics with an
// *Error when α is NaN or infinite.
func (x *Tensor) Elu(alpha float64) *Tensor {
	x = x.asFloat("elu")
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) {
		fail("elu", []string{describe("x", x)}, "alpha %v must be finite", alpha)
	}
	return Where(x.GtScalar(0), x, x.ClampMax(0).Expm1().MulScalar(alpha))
}

// Selu is scale·elu(x, α) with PyTorch's constants α ≈ 1.6733 and scale ≈
// 1.0507 (Klambauer et al., "Self-Normalizing Neural Networks", 2017).
func (x *Tensor) Selu() *Tensor {
	const alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
	return x.Elu(alpha).MulScalar(scale)
}

// Mish returns x·tanh(softplus(x)) (Misra, 2019; PyTorch's mish, which
// uses softplus with β = 1 and threshold 20). Int and Bool inputs are
// first cast to the device's float dtype.
func (x *Tensor) Mish() *Tensor {
	x = x.asFloat("mish")
	return x.Mul(x.Softplus(1, 20).Tanh())
}

// Hardsigmoid returns clamp(x/6 + 1/2, 0, 1) (PyTorch's hardsigmoid): 0
// for x <= -3, 1 for x >= 3; the gradient is 1/6 strictly inside. Int and
// Bool inputs are first cast to the device's float dtype.
func (x *Tensor) Hardsigmoid() *Tensor {
	x = x.asFloat("hardsigmoid")
	return x.DivScalar(6).AddScalar(0.5).Clamp(0, 1)
}

// Hardswish returns x·relu6(x + 3)/6 (Howard et al., "Searching for
// MobileNetV3", 2019; PyTorch's hardswish): 0 for x <= -3, x for x >= 3.
// Int and Bool inputs are first cast to the device's float dtype.
func (x *Tensor) Hardswish() *Tensor {
	x = x.asFloat("hardswish")
	return x.Mul(x.AddScalar(3).Clamp(0, 6)).DivScalar(6)
}

// GeluTanh returns the tanh approximation of the Gaussian error linear
// unit, x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2 (PyTorch's gelu with
// approximate="tanh"). Int and Bool inputs are first cast to the device's
// float dtype.
func (x *Tensor) GeluTanh() *Tensor {
	x = x.asFloat("gelu")
	inner := x.Add(x.Mul(x).Mul(x).MulScalar(0.044715)).MulScalar(math.Sqrt(2 / math.Pi))
	return x.Mul(inner.Tanh().AddScalar(1)).MulScalar(0.5)
}

// Lerp interpolates linearly from x to end by weight (all broadcast
// together), as PyTorch's torch.lerp: x + weight·(end − x) where
// |weight| < 0.5 and end − (end − x)·(1 − weight) elsewhere, so that
// weight 1 gives end exactly. Float tensors only; differentiable in all
// three. It panics with an *Error for non-float operands or shapes that do
// not broadcast.
func (x *Tensor) Lerp(end, weight *Tensor) *Tensor {
	x.need("lerp", "x")
	end.need("lerp", "end")
	weight.need("lerp", "weight")
	for i, t := range []*Tensor{x, end, weight} {
		if !t.DType().IsFloat() {
			fail("lerp", []string{describe("x", x), describe("end", end), describe("weight", weight)},
				"operand %s must be a float tensor", []string{"x", "end", "weight"}[i])
		}
	}
	diff := end.Sub(x)
	low := x.Add(weight.Mul(diff))
	high := end.Sub(diff.Mul(weight.Neg().AddScalar(1)))
	return Where(weight.Abs().LtScalar(0.5), low, high)
}

// LerpScalar is Lerp with a scalar weight.
func (x *Tensor) LerpScalar(end *Tensor, weight float64) *Tensor {
	x.need("lerp", "x")
	end.need("lerp", "end")
	if !x.DType().IsFloat() || !end.DType().IsFloat() {
		fail("lerp", []string{describe("x", x), describe("end", end)}, "needs float tensors")
	}
	diff := end.Sub(x)
	if math.Abs(weight) < 0.5 {
		return x.Add(diff.MulScalar(weight))
	}
	return end.Sub(diff.MulScalar(1 - weight))
}

// Roll shifts x's elements along each axis of axes by the matching shift
// (positive toward higher indices), wrapping around, as PyTorch's
// torch.roll with dims; with no axes x is flattened, rolled and reshaped
// back. Shifts of any size and sign are taken modulo the axis size. The
// result is a new tensor; the gradient rolls back. It panics with an
// *Error when shifts and axes differ in length (one shift without axes is
// allowed) or an axis is out of range or repeated.
func (x *Tensor) Roll(shifts []int, axes ...int) *Tensor {
	x.need("roll", "x")
	if len(axes) == 0 {
		if len(shifts) != 1 {
			fail("roll", []string{describe("x", x)}, "without axes, roll takes one shift, got %v", shifts)
		}
		return x.Reshape(-1).Roll(shifts, 0).Reshape(x.shape()...)
	}
	if len(shifts) != len(axes) {
		fail("roll", []string{describe("x", x)}, "%d shifts for %d axes", len(shifts), len(axes))
	}
	seen := make([]bool, x.Rank())
	out := x
	for i, axis := range axes {
		a := x.axis("roll", axis)
		if seen[a] {
			fail("roll", []string{describe("x", x)}, "axis %d repeated", axis)
		}
		seen[a] = true
		n := x.shape()[a]
		if n == 0 {
			continue
		}
		s := shifts[i] % n
		if s < 0 {
			s += n
		}
		if s == 0 {
			continue
		}
		out = Cat([]*Tensor{out.Narrow(a, n-s, s), out.Narrow(a, 0, n-s)}, a)
	}
	return out
}

// Logspace returns base raised to steps evenly spaced exponents from start
// to end inclusive (PyTorch's torch.logspace; its default base is 10), in
// the device's float dtype, computed in float64. It panics with an *Error
// for negative steps or a NaN bound or base.
func Logspace(start, end float64, steps int, base float64, dev Device) *Tensor {
	if math.IsNaN(base) {
		fail("logspace", nil, "base is NaN")
	}
	vals := linspaceValues("logspace", start, end, steps)
	for i, v := range vals {
		vals[i] = math.Pow(base, v)
	}
	return FromFloats(vals, []int{steps}, dev)
}

// linspaceValues returns PyTorch's linspace values in float64: with step
// = (end − start)/(steps − 1), start + i·step for i < steps/2 and
// end − (steps − 1 − i)·step after, so both ends are exact.
func linspaceValues(op string, start, end float64, steps int) []float64 {
	if steps < 0 {
		fail(op, nil, "steps %d must be non-negative", steps)
	}
	if math.IsNaN(start) || math.IsNaN(end) {
		fail(op, nil, "bounds [%v, %v] must not be NaN", start, end)
	}
	if int64(steps) > 1<<40 {
		fail(op, nil, "steps %d is too many", steps)
	}
	vals := make([]float64, steps)
	if steps == 1 {
		vals[0] = start
		return vals
	}
	step := (end - start) / float64(steps-1)
	for i := range vals {
		if i < steps/2 {
			vals[i] = start + float64(i)*step
		} else {
			vals[i] = end - float64(steps-1-i)*step
		}
	}
	return vals
}
