package ember

import (
	"math"
	"slices"

	"github.com/emberml/ember/ir"
)

// Mean returns the mean of all elements as a rank-0 tensor (Sum divided by
// the element count; an empty tensor gives NaN, as PyTorch). Int and Bool
// inputs are first cast to the device's float dtype.
func (x *Tensor) Mean() *Tensor {
	x = x.asFloat("mean")
	return x.Sum().DivScalar(float64(x.NumElements()))
}

// MeanAxis returns the mean along axis (negative counts from the end); the
// axis is removed unless keepDim keeps it with size 1 (PyTorch's mean(dim,
// keepdim)). An empty axis gives NaN. Int and Bool inputs are first cast to
// the device's float dtype. It panics with an *Error when the axis is out of
// range.
func (x *Tensor) MeanAxis(axis int, keepDim bool) *Tensor {
	x = x.asFloat("mean")
	n := x.Dim(axis)
	return x.SumAxis(axis, keepDim).DivScalar(float64(n))
}

// Var returns the variance along axis: sum((x - mean)²) / max(0, N -
// correction), where N is the axis size; correction 1 is the unbiased
// estimator (PyTorch's var, whose default correction is 1), 0 the
// population variance. When N - correction <= 0 the result is NaN or +Inf
// (division by zero), as PyTorch. The axis is removed unless keepDim. Int
// and Bool inputs are first cast to the device's float dtype. It panics with
// an *Error when the axis is out of range.
func (x *Tensor) Var(axis int, correction int, keepDim bool) *Tensor {
	x = x.asFloat("var")
	a := x.axis("var", axis)
	n := x.shape()[a]
	d := x.Sub(x.MeanAxis(a, true))
	// N - correction in float64: exact enough, and without int overflow
	// for any correction.
	return d.Mul(d).SumAxis(a, keepDim).DivScalar(max(0, float64(n)-float64(correction)))
}

// Std returns the standard deviation along axis, the square root of Var
// with the same correction and keepDim (PyTorch's std). Where the variance
// is 0 the gradient is 0, as PyTorch's (not the Inf·0 = NaN of the square
// root's).
func (x *Tensor) Std(axis int, correction int, keepDim bool) *Tensor {
	x.need("std", "x")
	v := x.Var(axis, correction, keepDim)
	pos := v.GtScalar(0)
	return Where(pos, Where(pos, v, v.scalar("std", 1)).Sqrt(), v.Sqrt().Detach())
}

// Clamp limits x to [lo, hi] elementwise, with x's shape and dtype (bounds
// are converted to it; for an integer x they are rounded inward, lo up and
// hi down, and an infinite bound or one beyond the dtype's range on its
// own side does not clamp), computed with Where so the gradient is 1 where
// lo <= x <= hi and 0 outside and at NaN, which stays NaN (PyTorch's).
// When lo > hi every element becomes hi (PyTorch's clamp). It panics with
// an *Error for Bool tensors, a NaN bound, or an integer x whose result
// would hold a bound beyond its dtype's range.
func (x *Tensor) Clamp(lo, hi float64) *Tensor {
	x.notBool("clamp")
	if math.IsNaN(lo) || math.IsNaN(hi) {
		fail("clamp", []string{describe("x", x)}, "bounds [%v, %v] must not be NaN", lo, hi)
	}
	if lo > hi {
		lo = hi
	}
	return x.ClampMin(lo).ClampMax(hi)
}

// ClampMin limits x from below: Where(x < lo, lo, x), with x's shape and
// dtype (PyTorch's clamp_min; integer bounds as in Clamp). The gradient is
// 0 where x < lo and at NaN, which stays NaN (PyTorch's). It panics with
// an *Error as Clamp does.
func (x *Tensor) ClampMin(lo float64) *Tensor {
	x.notBool("clamp_min")
	lo, ok := x.clampBound("clamp_min", lo, true)
	if !ok {
		return x
	}
	// x where x >= lo (gradient 1, the bound included), lo below it, and
	// NaN kept without a gradient (PyTorch's clamp).
	return Where(x.GeScalar(lo), x, Where(x.LtScalar(lo), x.scalar("clamp_min", lo), x.Detach()))
}

// ClampMax limits x from above: Where(x > hi, hi, x), with x's shape and
// dtype (PyTorch's clamp_max; integer bounds as in Clamp). The gradient is
// 0 where x > hi and at NaN, which stays NaN (PyTorch's). It panics with
// an *Error as Clamp does.
func (x *Tensor) ClampMax(hi float64) *Tensor {
	x.notBool("clamp_max")
	hi, ok := x.clampBound("clamp_max", hi, false)
	if !ok {
		return x
	}
	// x where x <= hi (gradient 1), hi above it, NaN kept without a
	// gradient (PyTorch's clamp).
	return Where(x.LeScalar(hi), x, Where(x.GtScalar(hi), x.scalar("clamp_max", hi), x.Detach()))
}

// clampBound checks the lower (or upper) bound v of op and returns it as
// x's dtype holds it. For an integer x it is rounded inward (a lower bound
// up, an upper one down); when x's dtype cannot hold that, it is either
// beyond the range on the side it bounds (ok false: nothing to clamp) or
// it panics with an *Error.
func (x *Tensor) clampBound(op string, v float64, lower bool) (c float64, ok bool) {
	if math.IsNaN(v) {
		fail(op, []string{describe("x", x)}, "bound must not be NaN")
	}
	dt := x.DType()
	if !dt.IsInt() {
		return v, true
	}
	c = math.Floor(v)
	if lower {
		c = math.Ceil(v)
	}
	if ir.ScalarFits(c, dt) == nil {
		return c, true
	}
	if (v < 0) == lower { // every dtype's range holds 0
		return 0, false
	}
	fail(op, []string{describe("x", x)}, "bound %v is beyond the range of %v, which the result would have to hold", v, dt)
	return 0, false
}

// OneHot encodes integer labels of any shape S as a float tensor of shape
// S + [numClasses] (the device's float dtype) holding 1 at each label's
// class and 0 elsewhere (PyTorch's one_hot, with a float result). The
// result is never tracked by autodiff. It panics with an *Error when
// labels is not an integer tensor or numClasses is negative.
//
// A label outside [0, numClasses) panics with an *Error naming its value
// and flat position on devices that check indices on the host (flex,
// cpu): the labels are read back first, which costs nothing there. On
// devices that check indices themselves (backend.IndexChecker: cuda,
// remote, capture) nothing is read back and OneHot queues without waiting
// for the device: it runs as a ScatterAdd of ones into zeros, and a bad
// label makes the next Device.Sync or read return an error wrapping
// ErrExecution that names scatter_add and the label, as a bad index of
// ScatterAdd does. Both forms give the same values.
func OneHot(labels *Tensor, numClasses int) *Tensor {
	labels.need("one_hot", "labels")
	ops := []string{describe("labels", labels)}
	if !labels.DType().IsInt() {
		fail("one_hot", ops, "labels must be an integer tensor")
	}
	if numClasses < 0 {
		fail("one_hot", ops, "numClasses %d is negative", numClasses)
	}
	dt := DType(labels.dev.opSettings().FloatDType)
	if checksIndicesOnDevice(labels.dev) {
		return oneHotScatter(labels, numClasses, dt)
	}
	for i, v := range labels.Int64s() {
		if v < 0 || v >= int64(numClasses) {
			fail("one_hot", ops, "label %d at flat position %d is outside [0, %d)", v, i, numClasses)
		}
	}
	return oneHotCompare(labels, numClasses, dt)
}

// oneHotCompare is OneHot in dtype dt of labels known to be in range, as
// labels.Unsqueeze(-1) == Arange(0, numClasses) cast to dt.
func oneHotCompare(labels *Tensor, numClasses int, dt DType) *Tensor {
	classes := Arange(0, numClasses, labels.dev)
	return labels.Unsqueeze(-1).Eq(classes).Cast(dt)
}

// oneHotScatter is OneHot in dtype dt without reading the labels: ones
// scattered along the class axis of zeros [n, numClasses] at the n
// flattened labels (ScatterAdd, whose indices the device checks),
// reshaped to S + [numClasses]. Each row receives a single 1 added to 0,
// so the values are exact and deterministic. It takes memory for the
// result alone, where gathering rows of an identity matrix would also
// hold numClasses² elements (10 GB in F32 for a 50k-word vocabulary).
func oneHotScatter(labels *Tensor, numClasses int, dt DType) *Tensor {
	shape := labels.shape()
	n := labels.NumElements()
	idx := labels.Reshape(n, 1)
	hot := FullDType([]int{n, numClasses}, 0, dt, labels.dev).ScatterAdd(1, idx, FullDType([]int{n, 1}, 1, dt, labels.dev))
	return hot.Reshape(append(slices.Clone(shape), numClasses)...)
}

// AllClose reports whether |x - y| <= atol + rtol·|y| for every element
// after broadcasting, comparing values as float64 on the host (PyTorch's
// allclose with equal_nan=false: NaN is never close; equal infinities are).
// It panics with an *Error when the shapes do not broadcast, the tensors
// are on different devices, or a tolerance is negative or NaN.
func (x *Tensor) AllClose(y *Tensor, rtol, atol float64) bool {
	commonDevice("allclose", []string{"x", "y"}, x, y)
	if !(rtol >= 0) || !(atol >= 0) {
		fail("allclose", []string{describe("x", x), describe("y", y)}, "tolerances rtol %v and atol %v must be >= 0 (not NaN)", rtol, atol)
	}
	shape, ok := BroadcastShapes(x.shape(), y.shape())
	if !ok {
		fail("allclose", []string{describe("x", x), describe("y", y)}, "shapes do not broadcast")
	}
	xs, ys := x.Expand(shape...).Float64s(), y.Expand(shape...).Float64s()
	for i, a := range xs {
		b := ys[i]
		if a == b {
			continue
		}
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return false
		}
		if math.Abs(a-b) > atol+rtol*math.Abs(b) {
			return false
		}
	}
	return true
}
