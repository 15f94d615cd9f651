package autodiff

import (
	"github.com/emberml/ember/backend"
	"slices"
)

// Small helpers over the inner backend used by the backward functions. They
// take and return inner tensors and record nothing.

func (b *Backend) scalar(dt backend.DType, v float64) backend.Tensor {
	return b.inner.Full([]int{}, dt, v)
}

func (b *Backend) zeros(shape []int, dt backend.DType) backend.Tensor {
	return b.inner.Full(shape, dt, 0)
}

func (b *Backend) add(x, y backend.Tensor) backend.Tensor {
	return b.inner.Binary(backend.OpAdd, x, y)
}

func (b *Backend) sub(x, y backend.Tensor) backend.Tensor {
	return b.inner.Binary(backend.OpSub, x, y)
}

func (b *Backend) mul(x, y backend.Tensor) backend.Tensor {
	return b.inner.Binary(backend.OpMul, x, y)
}

func (b *Backend) div(x, y backend.Tensor) backend.Tensor {
	return b.inner.Binary(backend.OpDiv, x, y)
}

func (b *Backend) neg(x backend.Tensor) backend.Tensor {
	return b.inner.Unary(backend.OpNeg, x)
}

// mulS multiplies x by the constant v.
func (b *Backend) mulS(x backend.Tensor, v float64) backend.Tensor {
	return b.mul(x, b.scalar(x.DType(), v))
}

// addS adds the constant v to x.
func (b *Backend) addS(x backend.Tensor, v float64) backend.Tensor {
	return b.add(x, b.scalar(x.DType(), v))
}

// cmpS compares x with the constant v (a Bool tensor).
func (b *Backend) cmpS(op backend.BinaryOp, x backend.Tensor, v float64) backend.Tensor {
	return b.inner.Binary(op, x, b.scalar(x.DType(), v))
}

// whereS selects x where cond holds, else the constant v.
func (b *Backend) whereS(cond, x backend.Tensor, v float64) backend.Tensor {
	return b.inner.Where(cond, x, b.scalar(x.DType(), v))
}

// trunc rounds toward zero: sign(x)·floor(|x|).
func (b *Backend) trunc(x backend.Tensor) backend.Tensor {
	return b.mul(b.inner.Unary(backend.OpSign, x), b.inner.Unary(backend.OpFloor, b.inner.Unary(backend.OpAbs, x)))
}

// sumTo reduces g (of a broadcast result's shape) to shape by summing over
// the axes that broadcasting added or stretched from size 1, as PyTorch's
// sum_to_size.
func (b *Backend) sumTo(g backend.Tensor, shape []int) backend.Tensor {
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
			g = b.inner.Reduce(backend.ReduceSum, g, i, true)
		}
	}
	if !slices.Equal(g.Shape(), shape) {
		g = b.inner.Reshape(g, shape)
	}
	return g
}

// keepDimShape is shape with axis kept as size 1.
func keepDimShape(shape []int, axis int) []int {
	s := append([]int(nil), shape...)
	s[axis] = 1
	return s
}
