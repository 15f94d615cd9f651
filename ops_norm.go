package ember

import (
	"slices"

	"github.com/emberml/ember/ir"
)

// NormParams are the optional elementwise parameters of LayerNorm and
// RMSNorm: Weight multiplies and Bias (LayerNorm only) is added to the
// normalized values; each is nil when absent or a tensor of the
// normalized shape (broadcast over the leading axes).
type NormParams struct {
	Weight, Bias *Tensor
}

// normArgs checks the operands of a normalization over the trailing axes
// normalizedShape of x and returns their device, the ir inputs (x, weight
// and bias when present) cast to one float dtype (x's, an int x first
// cast to the device's float dtype, promoted with the parameters') and
// the first normalized axis. It panics with an *Error for op otherwise.
func normArgs(op string, x *Tensor, normalizedShape []int, p NormParams) (Device, [3]ir.Tensor, int) {
	x.need(op, "x")
	params := [2]*Tensor{p.Weight, p.Bias}
	names := []string{"weight", "bias"}
	xs, ns := []*Tensor{x}, []string{"x"}
	for i, t := range params {
		if t != nil {
			t.need(op, names[i])
			xs, ns = append(xs, t), append(ns, names[i])
		}
	}
	dev := commonDevice(op, ns, xs...)
	x = x.asFloat(op)
	dt := x.DType()
	for _, t := range params {
		if t != nil {
			dt = PromoteTypes(dt, t.DType())
		}
	}
	dt = dev.autocastWide(dt) // F32 under autocast
	r, k := x.Rank(), len(normalizedShape)
	if k == 0 || k > r || !slices.Equal(x.shape()[r-k:], normalizedShape) {
		fail(op, []string{describe("x", x)}, "normalized shape %v must be the last %d axes of x, at least one", normalizedShape, k)
	}
	in := [3]ir.Tensor{x.castTo(dt).on(dev)}
	for i, t := range params {
		if t != nil {
			in[1+i] = t.castTo(dt).on(dev)
		}
	}
	return dev, in, r - k
}

// LayerNorm normalizes x over its last len(normalizedShape) axes, whose
// sizes must be normalizedShape (PyTorch's layer_norm):
//
//	y = (x − mean) / √(var + eps) · weight + bias
//
// with the mean and the biased variance over those axes, and p's weight
// and bias (each optional) of shape normalizedShape. x, weight and bias
// are promoted to one float dtype first (an int x is cast to the device's
// float dtype). It is the ir kind LayerNorm, defined by its decomposition
// (x − Sum(x)/n, its squares' Sum/n, Rsqrt, Mul and Add); devices with a
// kernel (cpu for F32, Flex32 and F64) compute it in one pass over memory
// to within a few rounding errors of that definition. The gradient of x
// is the ir kind LayerNormGrad (PyTorch's formula), those of weight and
// bias the sums of g·x̂ and g over the leading axes. A NaN in a row gives
// NaN for the row, as does an infinity. It panics with an *Error when
// normalizedShape is empty or not x's trailing shape, when weight or bias
// has another shape, or for operands on different devices.
func (x *Tensor) LayerNorm(normalizedShape []int, p NormParams, eps float64) *Tensor {
	dev, in, axis := normArgs("layer_norm", x, normalizedShape, p)
	return dev.run(&ir.Op{Kind: ir.KindLayerNorm, Axis: axis, Scalars: [2]float64{eps}, In: in}, x, p.Weight, p.Bias)
}

// RMSNorm normalizes x over its last len(normalizedShape) axes, whose
// sizes must be normalizedShape, by their root mean square (PyTorch's
// rms_norm):
//
//	y = x / √(mean(x²) + eps) · weight
//
// with p's weight (optional) of shape normalizedShape; p.Bias must be nil.
// Dtypes are promoted as in LayerNorm. It is the ir kind RMSNorm (one pass
// on devices with a kernel, as LayerNorm); the gradient of x is the ir
// kind RMSNormGrad, that of weight the sum of g·x̂ over the leading axes.
// It panics with an *Error as LayerNorm does, and when p.Bias is set.
func (x *Tensor) RMSNorm(normalizedShape []int, p NormParams, eps float64) *Tensor {
	if p.Bias != nil {
		x.need("rms_norm", "x")
		fail("rms_norm", []string{describe("x", x), describe("bias", p.Bias)}, "takes no bias")
	}
	dev, in, axis := normArgs("rms_norm", x, normalizedShape, p)
	return dev.run(&ir.Op{Kind: ir.KindRMSNorm, Axis: axis, Scalars: [2]float64{eps}, In: [3]ir.Tensor{in[0], in[1]}}, x, p.Weight)
}
