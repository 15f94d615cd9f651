package autodiff

import (
	"github.com/emberml/ember/backend"
	"slices"
)

// Reduce reduces x along axis and records the gradient:
//   - Sum: the output gradient broadcast back along axis;
//   - Prod: the product of the other elements along the axis, computed
//     without dividing by zero: where a lane has no zero it is prod/x; where
//     it has exactly one zero, the zero element gets the product of the
//     non-zero elements and the others 0; with two or more zeros all
//     gradients are 0 (exact, as PyTorch's prod_backward);
//   - Max/Min: split evenly among the elements equal to the result (ties
//     share the gradient, PyTorch's amax/amin convention);
//   - ArgMax/ArgMin return I64 and are never tracked.
func (b *Backend) Reduce(rop backend.ReduceOp, x backend.Tensor, axis int, keepDim bool) backend.Tensor {
	o := op{prim: PrimReduce, fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Reduce(rop, in[0], axis, keepDim) }}
	switch rop {
	case backend.ReduceProd:
		o.needIn = 1
	case backend.ReduceMax, backend.ReduceMin:
		o.needIn, o.needOut = 1, true
	}
	o.bwd = func(s *state, g backend.Tensor) []backend.Tensor {
		shape := s.inShape(0)
		ks := keepDimShape(shape, axis)
		if !slices.Equal(g.Shape(), ks) {
			g = b.inner.Reshape(g, ks)
		}
		var gx backend.Tensor
		switch rop {
		case backend.ReduceSum:
			gx = b.inner.Expand(g, shape)
		case backend.ReduceProd:
			gx = b.mul(g, b.prodFactor(s.in(0), axis))
		case backend.ReduceMax, backend.ReduceMin:
			gx = b.tieGrad(s.in(0), s.out(), g, axis)
		}
		return []backend.Tensor{gx}
	}
	return b.record(o, x)
}

// prodFactor returns d prod(x, axis) / d x (x's shape), exact for any
// number of zeros in a lane.
func (b *Backend) prodFactor(x backend.Tensor, axis int) backend.Tensor {
	in := b.inner
	dt := x.DType()
	z := b.cmpS(backend.OpEq, x, 0)
	xs := in.Where(z, b.scalar(dt, 1), x)               // zeros replaced by 1
	pn := in.Reduce(backend.ReduceProd, xs, axis, true) // product of the non-zero elements
	cnt := in.Reduce(backend.ReduceSum, in.Cast(z, dt), axis, true)
	zeroElem := b.whereS(b.cmpS(backend.OpEq, cnt, 1), pn, 0)             // keep-dim shape
	otherElem := b.whereS(b.cmpS(backend.OpEq, cnt, 0), b.div(pn, xs), 0) // x's shape
	f := in.Where(z, zeroElem, otherElem)
	if !slices.Equal(f.Shape(), x.Shape()) {
		f = in.Expand(f, x.Shape())
	}
	return f
}

// tieGrad spreads g (keep-dim shape) evenly over the elements of x equal
// to the reduction's result y along axis: the inner backend's ExtremumGrad
// when it implements backend.ExtremumGrader, else composed from Eq, Cast,
// Sum, Div and Mul.
func (b *Backend) tieGrad(x, y, g backend.Tensor, axis int) backend.Tensor {
	in := b.inner
	ks := g.Shape()
	if !slices.Equal(y.Shape(), ks) {
		y = in.Reshape(y, ks)
	}
	if eg, ok := in.(backend.ExtremumGrader); ok {
		return eg.ExtremumGrad(x, y, g, axis)
	}
	mask := in.Cast(in.Binary(backend.OpEq, x, y), x.DType())
	cnt := in.Reduce(backend.ReduceSum, mask, axis, true)
	return b.mul(b.div(g, cnt), mask)
}
