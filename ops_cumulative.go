package ember

// Cumulative products, maxima and minima along an axis, composed as
// Hillis–Steele scans (⌈log₂ n⌉ steps, step d combining each element
// with the running result d places before it) from existing kinds, so
// they run and differentiate on every backend.

// scanCombine is the inclusive scan of x along axis a with the
// associative op f: after step d, position i combines positions
// max(0, i−2d+1) … i; positions i < d keep their value.
func scanCombine(x *Tensor, a int, f func(y, shifted *Tensor) *Tensor) *Tensor {
	shape := x.shape()
	n := shape[a]
	if n <= 1 {
		return x
	}
	pos := Arange(0, n, x.dev.Inner())
	bshape := make([]int, len(shape))
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[a] = n
	pos = pos.Reshape(bshape...)
	y := x
	for d := 1; d < n; d *= 2 {
		pads := make([]int, 2*len(shape))
		pads[2*(len(shape)-1-a)] = d // Pad lists pairs from the last axis
		shifted := y.Narrow(a, 0, n-d).Pad(pads, 0)
		y = Where(pos.GeScalar(float64(d)), f(y, shifted), y)
	}
	return y
}

// CumProd returns the inclusive cumulative product of x along axis
// (negative counts from the end), with x's shape: out[..., i, ...] =
// Π_{j<=i} x[..., j, ...] (PyTorch's cumprod). Bool tensors multiply as
// the device's int dtype; ints wrap on overflow. The products are
// associated as a Hillis–Steele scan, so float results may differ in the
// last bits from a sequential product. The gradient is exact where x holds
// zeros (it is the gradient of the products themselves, with no division
// by x). A rank-0 tensor is its own product. It panics with an *Error when
// the axis is out of range.
func (x *Tensor) CumProd(axis int) *Tensor {
	x.need("cumprod", "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		return x.Reshape(1).CumProd(0).Reshape()
	}
	a := x.axis("cumprod", axis)
	if x.DType() == Bool {
		x = x.castTo(DType(x.dev.opSettings().IntDType))
	}
	return scanCombine(x, a, (*Tensor).Mul)
}

// CumMax returns the running maximum of x along axis (negative counts from
// the end) and the index along that axis where each running maximum was
// taken, both with x's shape (PyTorch's cummax): for equal values the
// later index is taken, a NaN propagates to every later position, with the
// index of the latest NaN. The indices are in the device's int dtype. The
// gradient of the values flows, whole, to the element at the index (as
// PyTorch's cummax backward), so at ties it goes to the latest of them.
// A rank-0 tensor is its own maximum, with index 0. It panics with an
// *Error when the axis is out of range.
func (x *Tensor) CumMax(axis int) (values, indices *Tensor) {
	return x.cumExtreme("cummax", axis, (*Tensor).Maximum)
}

// CumMin is CumMax with the running minimum (PyTorch's cummin): the later
// index at ties, NaN propagating with the index of the latest NaN, and the
// gradient routed to the index.
func (x *Tensor) CumMin(axis int) (values, indices *Tensor) {
	return x.cumExtreme("cummin", axis, (*Tensor).Minimum)
}

// cumExtreme computes the running extreme of x with combine (Maximum or
// Minimum) and its indices: position j is a candidate where x[j] equals
// the running extreme at j, or is NaN; the index at i is the latest
// candidate at or before i (a running maximum of the candidates' positions);
// the values are x gathered at the indices, which routes the gradient.
func (x *Tensor) cumExtreme(op string, axis int, combine func(a, b *Tensor) *Tensor) (values, indices *Tensor) {
	x.need(op, "x")
	if x.Rank() == 0 && (axis == 0 || axis == -1) {
		v, i := x.Reshape(1).cumExtreme(op, 0, combine)
		return v.Reshape(), i.Reshape()
	}
	a := x.axis(op, axis)
	shape := x.shape()
	inner := x.dev.Inner()
	plain := x
	if x.dev.autodiff {
		plain = x.Inner()
	}
	isBool := plain.DType() == Bool
	if isBool {
		plain = plain.castTo(U8)
	}
	run := scanCombine(plain, a, combine)
	mark := plain.Eq(run)
	if plain.DType().IsFloat() {
		mark = mark.Or(plain.IsNaN())
	}
	n := shape[a]
	bshape := make([]int, len(shape))
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[a] = n
	pos := Arange(0, n, inner).Reshape(bshape...).Expand(shape...)
	cand := Where(mark, pos, ZerosLike(pos))
	indices = scanCombine(cand, a, (*Tensor).Maximum)
	if n == 0 {
		indices = pos
	}
	if x.dev.autodiff {
		indices = indices.ToDevice(x.dev)
	}
	return x.Gather(a, indices), indices
}
