package flex

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindUnary, (*Backend).unary, nil)
	kernels.Set(ir.KindBinary, (*Backend).binary, nil)
	kernels.Set(ir.KindWhere, (*Backend).where, nil)
}

// unary applies the unary op op.Sub elementwise to In[0] (see ir.UnaryOp).
// The result has x's dtype. Float ops compute in float64 and round once to
// the dtype (F16 and BF16 through float32). On integers Neg wraps,
// Floor/Ceil/Round are the identity and float-only ops go through float64
// and truncate; on Bool, Not negates.
func (be *Backend) unary(op ir.Op) ir.Outputs {
	t := asTensor(op.In[0])
	s, st, off := computeOperand(t)
	return ir.One(fromCompute(t.dtype, op.Shape, s.(numeric).unary(ir.UnaryOp(op.Sub), t.shape, st, off)))
}

// binary applies the binary op op.Sub elementwise to In[0] and In[1] of
// equal dtype, broadcast (NumPy) to op.Shape. Comparisons return Bool. See
// ir.BinaryOp and the kernels' docs for integer division, NaN and Bool
// semantics.
func (be *Backend) binary(op ir.Op) ir.Outputs {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	bop := ir.BinaryOp(op.Sub)
	shape := op.Shape
	xs, xst, xo := computeOperand(x)
	ys, yst, yo := computeOperand(y)
	out := xs.(numeric).binary(bop, ys, shape,
		operandStrides(x.shape, xst, shape), xo,
		operandStrides(y.shape, yst, shape), yo)
	if bop.IsComparison() {
		return ir.One(newTensor(backend.Bool, shape, out))
	}
	return ir.One(fromCompute(x.dtype, shape, out))
}

// where selects In[1]'s element where In[0] (Bool) is true, else In[2]'s;
// the three broadcast to op.Shape and the result has In[1]'s dtype
// (PyTorch's where).
func (be *Backend) where(op ir.Op) ir.Outputs {
	c, x, y := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	shape := op.Shape
	st := [3][]int{
		operandStrides(c.shape, c.strides, shape),
		operandStrides(x.shape, x.strides, shape),
		operandStrides(y.shape, y.strides, shape),
	}
	out := x.data.where(bools(c.data), y.data, shape, st, [3]int{c.offset, x.offset, y.offset})
	return ir.One(newTensor(x.dtype, shape, out))
}

// operandStrides returns the strides of an operand of shape and strides
// broadcast to out: its own strides when shape is out (no allocation),
// else broadcastStrides.
func operandStrides(shape, strides, out []int) []int {
	if slices.Equal(shape, out) {
		return strides
	}
	return broadcastStrides(shape, strides, out)
}
