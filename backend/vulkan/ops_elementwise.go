//go:build linux && (amd64 || arm64)

package vulkan

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindUnary, (*Backend).unary, nil)
	kernels.Set(ir.KindBinary, (*Backend).binary, nil)
	kernels.Set(ir.KindWhere, (*Backend).where, nil)
	kernels.Set(ir.KindCast, (*Backend).cast, nil)
}

// unary is the kernel of KindUnary: op.Sub applied to every element of
// op.In[0] (any layout), giving a contiguous tensor. Semantics are
// backend/flex's (see shaders/unary_ops.glsl): float functions are
// computed in double and rounded once to the dtype.
func (b *Backend) unary(op ir.Op) ir.Outputs {
	x := tensorOf(op.In[0])
	out := b.empty("unary", op.Shape, op.DType)
	key := pipeKey{name: "unary_" + dtypeName(x.dtype), c1: uint32(op.Sub)}
	ops := []ewOperand{operandOf(out, out.shape), operandOf(x, out.shape)}
	b.run(op.Name(), b.d.ewDispatches(key, out.shape, ops, storageSize(x.dtype))...)
	return ir.One(out)
}

// binary is the kernel of KindBinary: op.Sub applied elementwise to
// op.In[0] and op.In[1] (one dtype, NumPy broadcasting to op.Shape, any
// layouts), giving a contiguous tensor of op.DType (their dtype, or Bool
// for comparisons). Semantics are backend/flex's (see
// shaders/binary_ops.glsl); integer division by zero is rejected by the
// caller.
func (b *Backend) binary(op ir.Op) ir.Outputs {
	x, y := tensorOf(op.In[0]), tensorOf(op.In[1])
	out := b.empty("binary", op.Shape, op.DType)
	family := "binary_"
	if ir.BinaryOp(op.Sub).IsComparison() {
		family = "compare_"
	}
	key := pipeKey{name: family + dtypeName(x.dtype), c1: uint32(op.Sub)}
	ops := []ewOperand{operandOf(out, out.shape), operandOf(x, out.shape), operandOf(y, out.shape)}
	size := storageSize(x.dtype)
	if out.dtype != x.dtype {
		size = 1 // Bool results: no 16-byte vectors
	}
	b.run(op.Name(), b.d.ewDispatches(key, out.shape, ops, size)...)
	return ir.One(out)
}

// where is the kernel of KindWhere: op.In[1]'s element where op.In[0]
// (Bool) is true, else op.In[2]'s, broadcast to op.Shape; values are
// copied bit for bit.
func (b *Backend) where(op ir.Op) ir.Outputs {
	c, x, y := tensorOf(op.In[0]), tensorOf(op.In[1]), tensorOf(op.In[2])
	out := b.empty("where", op.Shape, op.DType)
	ops := []ewOperand{operandOf(out, out.shape), operandOf(c, out.shape), operandOf(x, out.shape), operandOf(y, out.shape)}
	b.run("where", b.d.ewDispatches(pipeKey{name: "where_" + widthName(x.dtype)}, out.shape, ops, 1)...)
	return ir.One(out)
}

// cast is the kernel of KindCast: op.In[0] converted to op.DType as
// backend/flex converts (shaders/store.glsl). A cast between dtypes of
// one storage (F32 and Flex32, or to the same dtype) is a view.
func (b *Backend) cast(op ir.Op) ir.Outputs {
	x := tensorOf(op.In[0])
	if x.dtype == op.DType || (isF32Store(x.dtype) && isF32Store(op.DType)) {
		return ir.One(&Tensor{buf: x.buf, shape: x.shape, strides: x.strides, offset: x.offset, dtype: op.DType})
	}
	out := b.empty("cast", op.Shape, op.DType)
	key := pipeKey{name: "cast_" + dtypeName(x.dtype), c2: uint32(op.DType)}
	ops := []ewOperand{operandOf(out, out.shape), operandOf(x, out.shape)}
	b.run("cast", b.d.ewDispatches(key, out.shape, ops, 1)...)
	return ir.One(out)
}

// isF32Store reports whether dt is stored as float32 (F32 and Flex32).
func isF32Store(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 }
