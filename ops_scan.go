package ember

import "github.com/emberml/ember/ir"

// CumSum returns the inclusive cumulative sum of x along axis (negative
// counts from the end), with x's shape: out[..., i, ...] = Σ_{j<=i}
// x[..., j, ...] (PyTorch's cumsum). Bool tensors sum as the device's int
// dtype (PyTorch: int64); ints wrap on overflow. Float sums are sequential
// along the axis on backends with a kernel and a Hillis–Steele scan
// elsewhere, so the last bits may differ between backends. The gradient
// is the reverse cumulative sum of the output gradient. A rank-0 tensor
// takes axis 0 or -1 and is its own cumulative sum, as in PyTorch. It
// panics with an *Error when the axis is out of range.
func (x *Tensor) CumSum(axis int) *Tensor {
	x.need("cumsum", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		return x.Reshape(1).CumSum(0).Reshape()
	}
	a := x.axis("cumsum", axis)
	if x.DType() == Bool {
		x = x.castTo(DType(x.dev.opSettings().IntDType))
	}
	x = x.widen(x.dev) // F32 under autocast
	return x.dev.run(&ir.Op{Kind: ir.KindCumSum, Axis: a, In: [3]ir.Tensor{x.t}}, x)
}
