package autodiff

import (
	"math"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	register(ir.KindReduce, rule{saves: reduceSaves, backward: reduceBackward})
	// The extremum gradient appears only in backward functions.
	nondifferentiable(ir.KindExtremumGrad)
}

// reduceSaves: Prod reads the input, Max and Min the input and the
// output, Sum nothing (ArgMax and ArgMin return I64 and are never
// tracked).
func reduceSaves(op *ir.Op, _ uint64) (uint64, uint8) {
	switch ir.ReduceOp(op.Sub) {
	case ir.ReduceProd:
		return 1, 0
	case ir.ReduceMax, ir.ReduceMin:
		return 1, 1
	}
	return 0, 0
}

// reduceBackward is the gradient of a reduction along op.Axis:
//   - Sum: the output gradient broadcast back along the axis;
//   - Prod: the product of the other elements along the axis, computed
//     without dividing by zero: where a lane has no zero it is prod/x; where
//     it has exactly one zero, the zero element gets the product of the
//     non-zero elements and the others 0; with two or more zeros all
//     gradients are 0; a zero times an infinity among the other elements
//     gives NaN (as PyTorch's prod_backward);
//   - Max/Min: split evenly among the elements equal to the result (ties
//     share the gradient, PyTorch's amax/amin convention), with
//     ir.KindExtremumGrad.
func reduceBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	op := s.op()
	axis := op.Axis
	shape := s.inShape(0)
	ks := ir.KeepDimShape(shape, axis)
	if !slices.Equal(g.Shape(), ks) {
		g = ir.Reshape(e, g, ks)
	}
	switch ir.ReduceOp(op.Sub) {
	case ir.ReduceSum:
		dx[0] = ir.Expand(e, g, shape)
	case ir.ReduceProd:
		dx[0] = ir.Mul(e, g, prodFactor(e, s.in(0), axis))
	case ir.ReduceMax, ir.ReduceMin:
		dx[0] = tieGrad(e, s.in(0), s.out(0), g, axis)
	}
}

// prodFactor returns d prod(x, axis) / d x (x's shape), exact for any
// number of zeros in a lane.
func prodFactor(e ir.Executor, x backend.Tensor, axis int) backend.Tensor {
	dt := x.DType()
	z := ir.CompareScalar(e, ir.OpEq, x, 0)
	xs := ir.Where(e, z, ir.Scalar(e, dt, 1), x)      // zeros replaced by 1
	pn := ir.Reduce(e, ir.ReduceProd, xs, axis, true) // product of the non-zero elements
	cnt := ir.Reduce(e, ir.ReduceSum, ir.Cast(e, z, dt), axis, true)
	// The product of the other elements, as PyTorch's exclusive products
	// give it: 0 where the others hold a zero, NaN where they hold a zero
	// and an infinity (0·Inf).
	inf := ir.Cast(e, ir.CompareScalar(e, ir.OpEq, ir.Unary(e, ir.OpAbs, x), math.Inf(1)), dt)
	infCnt := ir.Reduce(e, ir.ReduceSum, inf, axis, true)
	otherInf := ir.CompareScalar(e, ir.OpGt, ir.Sub(e, infCnt, inf), 0) // x's shape
	zeroElem := ir.Where(e, ir.CompareScalar(e, ir.OpEq, cnt, 1), pn,
		whereS(e, ir.CompareScalar(e, ir.OpGt, infCnt, 0), ir.Scalar(e, dt, math.NaN()), 0)) // keep-dim shape
	otherElem := ir.Where(e, ir.CompareScalar(e, ir.OpEq, cnt, 0), ir.Div(e, pn, xs),
		whereS(e, otherInf, ir.Scalar(e, dt, math.NaN()), 0)) // x's shape
	f := ir.Where(e, z, zeroElem, otherElem)
	if !slices.Equal(f.Shape(), x.Shape()) {
		f = ir.Expand(e, f, x.Shape())
	}
	return f
}

// whereS selects x where cond holds, else the constant v.
func whereS(e ir.Executor, cond, x backend.Tensor, v float64) backend.Tensor {
	return ir.Where(e, cond, x, ir.Scalar(e, x.DType(), v))
}

// tieGrad spreads g (keep-dim shape) evenly over the elements of x equal
// to the reduction's result y along axis: ir.KindExtremumGrad, the inner
// backend's kernel where it has one, else its decomposition (Eq, Cast,
// Sum, Div and Mul).
func tieGrad(e ir.Executor, x, y, g backend.Tensor, axis int) backend.Tensor {
	ks := g.Shape()
	if !slices.Equal(y.Shape(), ks) {
		y = ir.Reshape(e, y, ks)
	}
	return ir.Apply(e, ir.Op{Kind: ir.KindExtremumGrad, Axis: axis, In: [3]ir.Tensor{x, y, g}})
}
