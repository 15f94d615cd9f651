package ir

import "slices"

// Builders: one function per base kind that makes the op, infers it and
// runs it on an executor (through Run, so a decorator or backend below
// sees an ordinary op). Decompositions and gradient rules are written with
// them. Operands must already be valid (equal dtypes for binary ops,
// normalized axes, ...): an inference error panics with an *InferError.

// Full is a tensor of shape and dt filled with v (converted to dt).
func Full(e Executor, shape []int, dt DType, v float64) Tensor {
	return Apply(e, Op{Kind: KindFull, Shape: shape, DType: dt, Scalars: [2]float64{v}})
}

// Scalar is the rank-0 tensor v of dtype dt.
func Scalar(e Executor, dt DType, v float64) Tensor { return Full(e, []int{}, dt, v) }

// Zeros is Full(e, shape, dt, 0).
func Zeros(e Executor, shape []int, dt DType) Tensor { return Full(e, shape, dt, 0) }

// Unary applies u to x.
func Unary(e Executor, u UnaryOp, x Tensor) Tensor {
	return Apply(e, Op{Kind: KindUnary, Sub: uint8(u), In: [3]Tensor{x}})
}

// Binary applies b to x and y (equal dtypes, broadcast shapes).
func Binary(e Executor, b BinaryOp, x, y Tensor) Tensor {
	return Apply(e, Op{Kind: KindBinary, Sub: uint8(b), In: [3]Tensor{x, y}})
}

// Add is x + y.
func Add(e Executor, x, y Tensor) Tensor { return Binary(e, OpAdd, x, y) }

// Sub is x - y.
func Sub(e Executor, x, y Tensor) Tensor { return Binary(e, OpSub, x, y) }

// Mul is x · y.
func Mul(e Executor, x, y Tensor) Tensor { return Binary(e, OpMul, x, y) }

// Div is x / y.
func Div(e Executor, x, y Tensor) Tensor { return Binary(e, OpDiv, x, y) }

// Neg is -x.
func Neg(e Executor, x Tensor) Tensor { return Unary(e, OpNeg, x) }

// MulScalar is x · v, v converted to x's dtype first.
func MulScalar(e Executor, x Tensor, v float64) Tensor { return Mul(e, x, Scalar(e, x.DType(), v)) }

// AddScalar is x + v, v converted to x's dtype first.
func AddScalar(e Executor, x Tensor, v float64) Tensor { return Add(e, x, Scalar(e, x.DType(), v)) }

// DivScalar is x / v, v converted to x's dtype first.
func DivScalar(e Executor, x Tensor, v float64) Tensor { return Div(e, x, Scalar(e, x.DType(), v)) }

// CompareScalar compares x with the constant v (a Bool tensor).
func CompareScalar(e Executor, b BinaryOp, x Tensor, v float64) Tensor {
	return Binary(e, b, x, Scalar(e, x.DType(), v))
}

// Where selects x where cond (Bool) holds, else y; the three broadcast
// and x and y share a dtype, the result's.
func Where(e Executor, cond, x, y Tensor) Tensor {
	return Apply(e, Op{Kind: KindWhere, In: [3]Tensor{cond, x, y}})
}

// Cast converts x to dt.
func Cast(e Executor, x Tensor, dt DType) Tensor {
	return Apply(e, Op{Kind: KindCast, DType: dt, In: [3]Tensor{x}})
}

// Reduce reduces x along axis with r; the axis is dropped, or kept with
// size 1 when keepDim. ArgMax and ArgMin give I64, the others x's dtype.
func Reduce(e Executor, r ReduceOp, x Tensor, axis int, keepDim bool) Tensor {
	return Apply(e, Op{Kind: KindReduce, Sub: uint8(r), Axis: axis, KeepDim: keepDim, In: [3]Tensor{x}})
}

// Reshape gives x shape, of equal element count.
func Reshape(e Executor, x Tensor, shape []int) Tensor {
	return Apply(e, Op{Kind: KindReshape, Shape: shape, In: [3]Tensor{x}})
}

// Permute reorders x's axes (result axis i is x's axis axes[i]).
func Permute(e Executor, x Tensor, axes []int) Tensor {
	return Apply(e, Op{Kind: KindPermute, Ints: axes, In: [3]Tensor{x}})
}

// Expand broadcasts x to shape.
func Expand(e Executor, x Tensor, shape []int) Tensor {
	return Apply(e, Op{Kind: KindExpand, Shape: shape, In: [3]Tensor{x}})
}

// Slice takes one clamped range per axis of x.
func Slice(e Executor, x Tensor, ranges []Range) Tensor {
	return Apply(e, Op{Kind: KindSlice, Attrs: &Attrs{Ranges: ranges}, In: [3]Tensor{x}})
}

// Pad pads axis i of x with pads[2i] elements before and pads[2i+1] after,
// filled with v.
func Pad(e Executor, x Tensor, pads []int, v float64) Tensor {
	return Apply(e, Op{Kind: KindPad, Ints: pads, Scalars: [2]float64{v}, In: [3]Tensor{x}})
}

// Flip reverses the listed axes of x.
func Flip(e Executor, x Tensor, axes []int) Tensor {
	return Apply(e, Op{Kind: KindFlip, Ints: axes, In: [3]Tensor{x}})
}

// Cat joins xs (one dtype and rank, equal sizes off axis) along axis.
func Cat(e Executor, xs []Tensor, axis int) Tensor {
	return Apply(e, Op{Kind: KindCat, Axis: axis, Xs: xs})
}

// Gather picks x's values along axis at index (I64, x's rank, no larger
// than x off axis); the result has index's shape and x's dtype.
func Gather(e Executor, x Tensor, axis int, index Tensor) Tensor {
	return Apply(e, Op{Kind: KindGather, Axis: axis, In: [3]Tensor{x, index}})
}

// ScatterAdd adds src into a copy of x at index along axis (index I64,
// src of index's shape and x's dtype); the result has x's shape.
func ScatterAdd(e Executor, x Tensor, axis int, index, src Tensor) Tensor {
	return Apply(e, Op{Kind: KindScatterAdd, Axis: axis, In: [3]Tensor{x, index, src}})
}

// IndexSelect picks the entries of axis named by index (rank-1 I64).
func IndexSelect(e Executor, x Tensor, axis int, index Tensor) Tensor {
	return Apply(e, Op{Kind: KindIndexSelect, Axis: axis, In: [3]Tensor{x, index}})
}

// Matmul multiplies the last two axes of x [..., m, k] and y [..., k, n]
// (rank >= 2, one dtype), broadcasting the batch axes: [..., m, n].
func Matmul(e Executor, x, y Tensor) Tensor {
	return Apply(e, Op{Kind: KindMatmul, In: [3]Tensor{x, y}})
}

// Conv2d convolves x [N, Cin, H, W] with w [Cout, Cin/groups, kH, kW]
// (one float dtype; options with defaults filled in): [N, Cout, Ho, Wo]
// (ConvOutputSize).
func Conv2d(e Executor, x, w Tensor, o ConvOptions) Tensor {
	return Apply(e, Op{Kind: KindConv2d, Attrs: &Attrs{Conv: o}, In: [3]Tensor{x, w}})
}

// ConvTranspose2d is the transposed convolution of x [N, Cin, H, W] with
// w [Cin, Cout/groups, kH, kW] (one float dtype; options with defaults
// filled in): [N, Cout, Ho, Wo] (ConvOutputSize).
func ConvTranspose2d(e Executor, x, w Tensor, o ConvOptions) Tensor {
	return Apply(e, Op{Kind: KindConvTranspose2d, Attrs: &Attrs{Conv: o}, In: [3]Tensor{x, w}})
}

// FullRanges returns the ranges that select every element of shape (for
// Slice and SliceScatter), one per axis.
func FullRanges(shape []int) []Range {
	rs := make([]Range, len(shape))
	for i, n := range shape {
		rs[i] = Range{Start: 0, End: n, Step: 1}
	}
	return rs
}

// Transpose swaps the last two axes of x (rank >= 2).
func Transpose(e Executor, x Tensor) Tensor {
	r := len(x.Shape())
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	axes[r-1], axes[r-2] = r-2, r-1
	return Permute(e, x, axes)
}

// SumTo reduces g (of a broadcast result's shape) to shape by summing over
// the axes that broadcasting added or stretched from size 1, as PyTorch's
// sum_to_size.
func SumTo(e Executor, g Tensor, shape []int) Tensor {
	gs := g.Shape()
	if slices.Equal(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	for i := range gs {
		if gs[i] == 1 {
			continue
		}
		if i < lead || shape[i-lead] == 1 {
			g = Reduce(e, ReduceSum, g, i, true)
		}
	}
	if !slices.Equal(g.Shape(), shape) {
		g = Reshape(e, g, shape)
	}
	return g
}

// SliceScatter is zeros of shape with src at the positions ranges (one
// clamped range per axis) select, the adjoint of Slice: zeros for an
// empty selection, src itself for a full one, else the kind
// SliceScatter.
func SliceScatter(e Executor, src Tensor, shape []int, ranges []Range) Tensor {
	for _, r := range ranges {
		if r.Len() == 0 {
			return Zeros(e, shape, src.DType())
		}
	}
	for ax, r := range ranges {
		if r.Start != 0 || r.Len() != shape[ax] {
			return Apply(e, Op{Kind: KindSliceScatter, Shape: shape, Attrs: &Attrs{Ranges: ranges}, In: [3]Tensor{src}})
		}
	}
	return src
}

// Narrow slices t to the leading part of each axis given by shape (each
// axis from 0); t itself when the shapes agree.
func Narrow(e Executor, t Tensor, shape []int) Tensor {
	if slices.Equal(t.Shape(), shape) {
		return t
	}
	return Slice(e, t, FullRanges(shape))
}
