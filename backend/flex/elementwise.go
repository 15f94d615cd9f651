package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
)

// Unary applies op elementwise (see backend.UnaryOp). The result has x's
// dtype. Float ops compute in float64 and round once to the dtype (F16 and
// BF16 through float32). On integers Neg wraps, Floor/Ceil/Round are the
// identity and float-only ops go through float64 and truncate; on Bool, Not
// negates.
func (be *Backend) Unary(op backend.UnaryOp, x backend.Tensor) backend.Tensor {
	t := asTensor(x)
	s, st, off := computeOperand(t)
	return fromCompute(t.dtype, t.shape, s.(numeric).unary(op, t.shape, st, off))
}

// Binary applies op elementwise to a and b of equal dtype, broadcasting
// their shapes as NumPy. Comparisons return Bool. See backend.BinaryOp and
// the kernels' docs for integer division, NaN and Bool semantics.
func (be *Backend) Binary(op backend.BinaryOp, a, b backend.Tensor) backend.Tensor {
	x, y := asTensor(a), asTensor(b)
	shape := layout.BroadcastShapes(x.shape, y.shape)
	xs, xst, xo := computeOperand(x)
	ys, yst, yo := computeOperand(y)
	out := xs.(numeric).binary(op, ys, shape,
		broadcastStrides(x.shape, xst, shape), xo,
		broadcastStrides(y.shape, yst, shape), yo)
	if op.IsComparison() {
		return newTensor(backend.Bool, shape, out)
	}
	return fromCompute(x.dtype, shape, out)
}

// Where selects a's element where cond (Bool) is true, else b's; the three
// shapes broadcast and the result has a's dtype (PyTorch's where).
func (be *Backend) Where(cond, a, b backend.Tensor) backend.Tensor {
	c, x, y := asTensor(cond), asTensor(a), asTensor(b)
	shape := layout.BroadcastShapes(c.shape, x.shape, y.shape)
	st := [3][]int{
		broadcastStrides(c.shape, c.strides, shape),
		broadcastStrides(x.shape, x.strides, shape),
		broadcastStrides(y.shape, y.strides, shape),
	}
	out := x.data.where(c.data.(bvec), y.data, shape, st, [3]int{c.offset, x.offset, y.offset})
	return newTensor(x.dtype, shape, out)
}
