package ember

import "math"

// Boolean tests and reductions, triangles and mask constructors, composed
// from comparisons, reductions, Arange and MaskFill, so that they exist
// once and run on every backend.

// IsNaN returns a Bool tensor of x's shape, true where x is NaN (PyTorch's
// torch.isnan). Integer and Bool tensors have no NaN: the result is all
// false. The result is not tracked by autodiff.
func (x *Tensor) IsNaN() *Tensor {
	x.need("isnan", "x")
	if x.DType().IsFloat() {
		return x.Ne(x)
	}
	return x.EqScalar(math.NaN()) // false everywhere (see EqScalar)
}

// IsInf returns a Bool tensor of x's shape, true where x is +Inf or -Inf
// (PyTorch's torch.isinf); all false for integer and Bool tensors. The
// result is not tracked by autodiff.
func (x *Tensor) IsInf() *Tensor {
	x.need("isinf", "x")
	return x.EqScalar(math.Inf(1)).Or(x.EqScalar(math.Inf(-1)))
}

// IsFinite returns a Bool tensor of x's shape, true where x is neither NaN
// nor infinite (PyTorch's torch.isfinite); all true for integer and Bool
// tensors. The result is not tracked by autodiff.
func (x *Tensor) IsFinite() *Tensor {
	x.need("isfinite", "x")
	return x.GtScalar(math.Inf(-1)).And(x.LtScalar(math.Inf(1)))
}

// nonZero returns x != 0 as Bool (x itself for Bool). NaN is non-zero, as
// in PyTorch's any and all.
func (x *Tensor) nonZero(op string) *Tensor {
	x.need(op, "x")
	if x.DType() == Bool {
		return x
	}
	return x.EqScalar(0).Not()
}

// Any returns a rank-0 Bool tensor: whether any element of x is non-zero
// (true for Bool) — PyTorch's torch.any. NaN counts as non-zero; an empty
// tensor gives false. The result is not tracked by autodiff.
func (x *Tensor) Any() *Tensor { return x.nonZero("any").Sum().GtScalar(0) }

// All returns a rank-0 Bool tensor: whether every element of x is non-zero
// (true for Bool) — PyTorch's torch.all. NaN counts as non-zero; an empty
// tensor gives true. The result is not tracked by autodiff.
func (x *Tensor) All() *Tensor { return x.nonZero("all").Not().Sum().EqScalar(0) }

// AnyAxis returns whether any element along axis (negative counts from the
// end) is non-zero, as Bool with the axis removed, or kept with size 1
// when keepDim (PyTorch's torch.any(x, dim, keepdim)). A size-0 axis gives
// false. It panics with an *Error when the axis is out of range.
func (x *Tensor) AnyAxis(axis int, keepDim bool) *Tensor {
	b := x.nonZero("any")
	return b.SumAxis(x.axis("any", axis), keepDim).GtScalar(0)
}

// AllAxis returns whether every element along axis (negative counts from
// the end) is non-zero, as Bool with the axis removed, or kept with size 1
// when keepDim (PyTorch's torch.all(x, dim, keepdim)). A size-0 axis gives
// true. It panics with an *Error when the axis is out of range.
func (x *Tensor) AllAxis(axis int, keepDim bool) *Tensor {
	b := x.nonZero("all")
	return b.Not().SumAxis(x.axis("all", axis), keepDim).EqScalar(0)
}

// triOffsets returns col − row as an integer tensor of shape [rows, cols]
// on dev (without autodiff).
func triOffsets(rows, cols int, dev Device) *Tensor {
	dev = dev.Inner()
	r := Arange(0, rows, dev).Reshape(rows, 1)
	c := Arange(0, cols, dev).Reshape(1, cols)
	return c.Sub(r)
}

// maskShape checks a mask constructor's shape: rank >= 2, sizes >= 0.
func maskShape(op string, shape []int) {
	if len(shape) < 2 {
		fail(op, nil, "needs a shape of rank >= 2 (the mask covers the last two axes), got %v", shape)
	}
	for _, s := range shape {
		if s < 0 {
			fail(op, nil, "negative size in shape %v", shape)
		}
	}
}

// triMask builds the Bool mask of shape (rank >= 2) that is keep(col − row
// − offset) over the last two axes, broadcast over the leading ones.
func triMask(op string, shape []int, offset int, dev Device, cmp func(d *Tensor, v float64) *Tensor) *Tensor {
	maskShape(op, shape)
	n := len(shape)
	m := cmp(triOffsets(shape[n-2], shape[n-1], dev), float64(offset))
	if n > 2 {
		m = m.Expand(shape...)
	}
	return m
}

// TrilMask returns the Bool mask of shape (rank >= 2; the last two axes
// are rows and columns, the leading ones repeat it) that is true outside
// the lower triangle — where col − row > offset — and false on and below
// the offset diagonal, Burn's Tensor::tril_mask: MaskFill with it keeps
// the lower triangle. Positive offsets move the diagonal up (right). It
// panics with an *Error for a shape of rank < 2 or a negative size.
func TrilMask(shape []int, offset int, dev Device) *Tensor {
	return triMask("tril_mask", shape, offset, dev, (*Tensor).GtScalar)
}

// TriuMask returns the Bool mask of shape (rank >= 2, as TrilMask) that is
// true outside the upper triangle — where col − row < offset — Burn's
// Tensor::triu_mask: MaskFill with it keeps the upper triangle. It panics
// with an *Error for a shape of rank < 2 or a negative size.
func TriuMask(shape []int, offset int, dev Device) *Tensor {
	return triMask("triu_mask", shape, offset, dev, (*Tensor).LtScalar)
}

// DiagMask returns the Bool mask of shape (rank >= 2, as TrilMask) that is
// false on the offset diagonal (col − row = offset) and true elsewhere,
// Burn's Tensor::diag_mask. It panics with an *Error for a shape of rank
// < 2 or a negative size.
func DiagMask(shape []int, offset int, dev Device) *Tensor {
	return triMask("diag_mask", shape, offset, dev, func(d *Tensor, v float64) *Tensor { return d.EqScalar(v).Not() })
}

// Tril returns x (rank >= 2) with the elements above the diagonal-th
// diagonal of its last two axes set to zero (false for Bool): it keeps
// x[..., i, j] where j − i <= diagonal, as PyTorch's torch.tril. The
// zeroed elements are exact zeros whatever x held there (NaN and Inf
// included), and their gradient is zero. It panics with an *Error when x
// has rank < 2.
func (x *Tensor) Tril(diagonal int) *Tensor {
	x.need("tril", "x")
	if x.Rank() < 2 {
		fail("tril", []string{describe("x", x)}, "needs a tensor of rank >= 2")
	}
	s := x.shape()
	return x.MaskFill(TrilMask(s[len(s)-2:], diagonal, x.dev), 0)
}

// Triu returns x (rank >= 2) with the elements below the diagonal-th
// diagonal of its last two axes set to zero (false for Bool): it keeps
// x[..., i, j] where j − i >= diagonal, as PyTorch's torch.triu. As in
// Tril, zeroed elements are exact zeros with zero gradient. It panics with
// an *Error when x has rank < 2.
func (x *Tensor) Triu(diagonal int) *Tensor {
	x.need("triu", "x")
	if x.Rank() < 2 {
		fail("triu", []string{describe("x", x)}, "needs a tensor of rank >= 2")
	}
	s := x.shape()
	return x.MaskFill(TriuMask(s[len(s)-2:], diagonal, x.dev), 0)
}

// Eye returns the [rows, cols] identity matrix (ones on the main diagonal,
// zeros elsewhere) in the device's float dtype, as PyTorch's
// torch.eye(rows, cols). It panics with an *Error for a negative size.
func Eye(rows, cols int, dev Device) *Tensor {
	if rows < 0 || cols < 0 {
		fail("eye", nil, "sizes must be non-negative, got %d x %d", rows, cols)
	}
	inner := dev.Inner()
	dt := DType(inner.opSettings().FloatDType)
	eye := triOffsets(rows, cols, inner).EqScalar(0).Cast(dt)
	if dev.autodiff {
		return eye.ToDevice(dev)
	}
	return eye
}

// Diag is PyTorch's torch.diag. For a rank-1 x of size n it returns the
// square matrix of size n + |diagonal| with x on the diagonal-th diagonal
// (above the main one for diagonal > 0, below for < 0) and zeros (false)
// elsewhere; for a rank-2 x it returns the rank-1 tensor of the elements
// x[i, i+diagonal] (empty when that diagonal lies outside x). Both are
// differentiable in x. It panics with an *Error for another rank.
func (x *Tensor) Diag(diagonal int) *Tensor {
	x.need("diag", "x")
	switch x.Rank() {
	case 1:
		n := x.Dim(0)
		k := diagonal
		if k < 0 {
			k = -k
		}
		if k > math.MaxInt/2-n {
			fail("diag", []string{describe("x", x)}, "diagonal %d makes a matrix too large", diagonal)
		}
		size := n + k
		// Row i of the result holds x[i] at column i + diagonal (diagonal
		// >= 0); column j holds x[j] at row j − diagonal (diagonal < 0).
		v := x.Pad([]int{0, k}, 0)
		if diagonal >= 0 {
			v = v.Reshape(size, 1)
		} else {
			v = v.Reshape(1, size)
		}
		return v.Expand(size, size).MaskFill(DiagMask([]int{size, size}, diagonal, x.dev), 0)
	case 2:
		rows, cols := x.Dim(0), x.Dim(1)
		if diagonal >= cols || diagonal <= -rows {
			return x.Reshape(-1).Narrow(0, 0, 0) // the diagonal lies outside x
		}
		start, count := diagonal, min(rows, cols-diagonal)
		if diagonal < 0 {
			start, count = -diagonal*cols, min(rows+diagonal, cols)
		}
		return x.Reshape(-1).Slice(Range{Start: start, End: start + (count-1)*(cols+1) + 1, Step: cols + 1})
	}
	fail("diag", []string{describe("x", x)}, "needs a tensor of rank 1 or 2, got rank %d", x.Rank())
	return nil
}
