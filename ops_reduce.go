package ember

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func (x *Tensor) reduce(op backend.ReduceOp, axis int, keepDim bool) *Tensor {
	a := x.axis(op.String(), axis)
	if x.DType() == Bool && (op == backend.ReduceSum || op == backend.ReduceProd) {
		x = x.castTo(I64)
	}
	if x.shape()[a] == 0 && op != backend.ReduceSum && op != backend.ReduceProd {
		fail(op.String(), []string{describe("x", x)}, "cannot reduce an empty axis %d", axis)
	}
	if op == backend.ReduceSum || op == backend.ReduceProd {
		x = x.widen(x.dev) // F32 under autocast
	}
	return x.dev.run(&ir.Op{Kind: ir.KindReduce, Sub: uint8(op), Axis: a, KeepDim: keepDim, In: [3]ir.Tensor{x.t}}, x)
}

// flat returns x reshaped to rank 1, for op (an *Error names op when x
// is nil).
func (x *Tensor) flat(op string) *Tensor {
	x.need(op, "x")
	return x.Reshape(-1)
}

// Sum returns the sum of all elements as a rank-0 tensor (Bool sums as I64).
func (x *Tensor) Sum() *Tensor { return x.flat("sum").reduce(backend.ReduceSum, 0, false) }

// SumAxis sums along axis; keepDim keeps it with size 1.
func (x *Tensor) SumAxis(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceSum, axis, keepDim)
}

// Prod returns the product of all elements as a rank-0 tensor.
func (x *Tensor) Prod() *Tensor { return x.flat("prod").reduce(backend.ReduceProd, 0, false) }

// ProdAxis multiplies along axis.
func (x *Tensor) ProdAxis(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceProd, axis, keepDim)
}

// Max returns the largest element as a rank-0 tensor (NaN propagates). It
// panics with an *Error on an empty tensor.
func (x *Tensor) Max() *Tensor { return x.flat("max").reduce(backend.ReduceMax, 0, false) }

// MaxAxis returns the largest values along axis (NaN propagates).
func (x *Tensor) MaxAxis(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceMax, axis, keepDim)
}

// Min returns the smallest element as a rank-0 tensor (NaN propagates).
func (x *Tensor) Min() *Tensor { return x.flat("min").reduce(backend.ReduceMin, 0, false) }

// MinAxis returns the smallest values along axis (NaN propagates).
func (x *Tensor) MinAxis(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceMin, axis, keepDim)
}

// Argmax returns the I64 indices of the largest values along axis: the first
// NaN wins, ties pick the lowest index.
func (x *Tensor) Argmax(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceArgMax, axis, keepDim)
}

// Argmin returns the I64 indices of the smallest values along axis (first
// NaN wins, ties pick the lowest index).
func (x *Tensor) Argmin(axis int, keepDim bool) *Tensor {
	return x.reduce(backend.ReduceArgMin, axis, keepDim)
}
