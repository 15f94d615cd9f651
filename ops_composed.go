package ember

import (
	"math"

	"github.com/emberml/ember/ir"
)

// The ops in this file are composed from the primitives (Where, comparisons,
// elementwise math, reductions), so autodiff, fusion and every backend
// support them without kernels of their own. Softmax, LogSoftmax and
// LogSumExp are ir kinds whose decompositions are such compositions, run
// as one kernel where a device has one.

// asFloat returns x, cast to the device's float dtype when x is an int or
// Bool tensor (as the float-only unary ops do); it panics with an *Error
// for op when x is nil.
func (x *Tensor) asFloat(op string) *Tensor {
	x.need(op, "x")
	if x.DType().IsFloat() {
		return x
	}
	return x.castTo(DType(x.dev.opSettings().FloatDType))
}

// notBool panics with an *Error for Bool tensors, which have no arithmetic.
func (x *Tensor) notBool(op string) {
	x.need(op, "x")
	if x.DType() == Bool {
		fail(op, []string{describe("x", x)}, "not defined for Bool tensors")
	}
}

// Relu returns max(x, 0) elementwise, computed as Where(x <= 0, 0, x), with
// x's shape and dtype (float or int). The gradient is 1 where x > 0 and 0
// elsewhere, including at 0; NaN stays NaN (PyTorch's relu). It panics with
// an *Error for Bool tensors.
func (x *Tensor) Relu() *Tensor {
	x.notBool("relu")
	return Where(x.LeScalar(0), x.scalar("relu", 0), x)
}

// LeakyRelu returns x where x > 0 and slope·x elsewhere (PyTorch's
// leaky_relu, whose default slope is 0.01), with x's shape. Int and Bool
// inputs are first cast to the device's float dtype. It panics with an
// *Error when slope is NaN or infinite.
func (x *Tensor) LeakyRelu(slope float64) *Tensor {
	x = x.asFloat("leaky_relu")
	if math.IsNaN(slope) || math.IsInf(slope, 0) {
		fail("leaky_relu", []string{describe("x", x)}, "slope %v must be finite", slope)
	}
	return Where(x.GtScalar(0), x, x.MulScalar(slope))
}

// Gelu returns the Gaussian error linear unit in its exact form,
// x·Φ(x) = x·(1 + erf(x/√2))/2 (PyTorch's gelu with approximate="none"),
// with x's shape. Int and Bool inputs are first cast to the device's float
// dtype.
func (x *Tensor) Gelu() *Tensor {
	x = x.asFloat("gelu")
	cdf := x.MulScalar(1 / math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5)
	return x.Mul(cdf)
}

// Silu returns x·sigmoid(x) (the swish activation, PyTorch's silu), with x's
// shape. Int and Bool inputs are first cast to the device's float dtype.
func (x *Tensor) Silu() *Tensor {
	x = x.asFloat("silu")
	return x.Mul(x.Sigmoid())
}

// Square returns x·x elementwise (x's shape and dtype; ints wrap). It panics
// with an *Error for Bool tensors.
func (x *Tensor) Square() *Tensor {
	x.notBool("square")
	return x.Mul(x)
}

// Softmax returns exp(x) / sum(exp(x)) along axis (negative counts from the
// end), with x's shape, computed after subtracting the lane maximum so
// large inputs do not overflow (PyTorch's softmax). A lane holding NaN or
// +Inf, or only -Inf, gives NaN, as PyTorch. It is the ir kind Softmax,
// defined by its decomposition Exp(x − m) / Sum(Exp(x − m)) with m the
// lane maximum; devices with a kernel (cpu for F32, Flex32 and F64) compute
// it in one pass over memory to within a few rounding errors of that
// definition, with the same edge cases. The gradient is y·(g − Σ g·y)
// (the ir kind SoftmaxGrad) on every device. Int and Bool inputs are first
// cast to the device's float dtype. It panics with an *Error when the axis
// is out of range.
func (x *Tensor) Softmax(axis int) *Tensor {
	x = x.asFloat("softmax")
	x = x.widen(x.dev) // F32 under autocast
	a := x.axis("softmax", axis)
	return x.dev.run(&ir.Op{Kind: ir.KindSoftmax, Axis: a, In: [3]ir.Tensor{x.t}}, x)
}

// LogSoftmax returns x - log(sum(exp(x))) along axis, with x's shape,
// computed stably as (x - m) - log(sum(exp(x - m))) with m the lane
// maximum (PyTorch's log_softmax); NaN, +Inf and lanes of only -Inf give
// NaN as in Softmax. It is the ir kind LogSoftmax (one pass on devices
// with a kernel, as Softmax); its gradient is g − exp(y)·Σ g (the ir kind
// LogSoftmaxGrad). Int and Bool inputs are first cast to the device's
// float dtype. It panics with an *Error when the axis is out of range.
func (x *Tensor) LogSoftmax(axis int) *Tensor {
	x = x.asFloat("log_softmax")
	x = x.widen(x.dev) // F32 under autocast
	a := x.axis("log_softmax", axis)
	return x.dev.run(&ir.Op{Kind: ir.KindLogSoftmax, Axis: a, In: [3]ir.Tensor{x.t}}, x)
}

// LogSumExp returns log(sum(exp(x))) along axis, computed stably as
// m + log(sum(exp(x - m))) with m the lane maximum; infinite maxima are
// replaced by 0 in the shift so that lanes of -Inf give -Inf and lanes
// holding +Inf give +Inf (PyTorch's logsumexp); NaN gives NaN. The axis is
// removed unless keepDim. An empty axis gives -Inf. It is the ir kind
// LogSumExp (one pass on devices with a kernel); its gradient is
// g·exp(x − y). Int and Bool inputs are first cast to the device's float
// dtype. It panics with an *Error when the axis is out of range.
func (x *Tensor) LogSumExp(axis int, keepDim bool) *Tensor {
	x = x.asFloat("logsumexp")
	x = x.widen(x.dev) // F32 under autocast
	a := x.axis("logsumexp", axis)
	return x.dev.run(&ir.Op{Kind: ir.KindLogSumExp, Axis: a, KeepDim: keepDim, In: [3]ir.Tensor{x.t}}, x)
}
