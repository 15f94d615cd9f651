package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindReduce, (*Backend).reduce, nil) }

// reduce is the kernel of KindReduce: op.In[0] reduced by op.Sub along
// op.Axis (PyTorch's sum/prod/amax/amin/argmax/argmin with dim and
// keepdim), giving a contiguous tensor of op.Shape and op.DType. Sum, Prod,
// Max and Min keep x's dtype; float sums and products accumulate in double
// and round once (as backend/flex); integer sums and products wrap. Max,
// Min, ArgMax and ArgMin propagate NaN (the Arg ops give the first NaN's
// index) and ties pick the lowest index; ArgMax and ArgMin return I64. On
// Bool, Sum and Max are "any", Prod and Min "all". An empty axis gives Sum
// 0, Prod 1, Max -Inf (the smallest integer, false), Min +Inf (the largest
// integer, true) and index 0. A non-contiguous x is copied first.
func (b *Backend) reduce(op ir.Op) ir.Outputs {
	rop, axis := ir.ReduceOp(op.Sub), op.Axis
	t := b.Contiguous(tensorOf(op.In[0]))
	outer := backend.NumElements(t.shape[:axis])
	r := t.shape[axis]
	inner := backend.NumElements(t.shape[axis+1:])
	out := b.emptyOf(op.Shape, op.DType)
	if outer*inner == 0 {
		return ir.One(out)
	}
	if t.dtype == backend.Bool {
		switch rop {
		case backend.ReduceSum:
			rop = backend.ReduceMax
		case backend.ReduceProd:
			rop = backend.ReduceMin
		}
	}
	var pv, pi uint64
	if rop == backend.ReduceArgMax || rop == backend.ReduceArgMin {
		pi = out.Ptr()
	} else {
		pv = out.Ptr()
	}
	name := "ember_reduce_" + ctypeOf(t.dtype).Name
	if inner == 1 {
		name += "_rows"
		k := b.kernel(name, func() string { return reduceSource(t.dtype, name, false) })
		wpr, rpb := 1, blockSize/32
		if r > 256 {
			wpr, rpb = blockSize/32, 1
		}
		b.Launch(k, grid1(outer, rpb), block1, 0, int32(rop), int64(outer), int64(r), t.Ptr(), pv, pi, int32(wpr))
		return ir.One(out)
	}
	name += "_cols"
	k := b.kernel(name, func() string { return reduceSource(t.dtype, name, true) })
	nb := outer * ((inner + 31) / 32)
	b.Launch(k, [3]uint32{uint32(max(1, min(nb, maxBlocks))), 1, 1}, [3]uint32{32, 8, 1}, 0,
		int32(rop), int64(outer), int64(r), int64(inner), t.Ptr(), pv, pi)
	return ir.One(out)
}
