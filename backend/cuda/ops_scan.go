package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindCumSum, (*Backend).cumSum, scanDType) }

// scanDType reports the dtypes the cumsum kernel runs: every numeric
// dtype (ir defines no cumsum of Bool).
func scanDType(dt backend.DType) bool { return dt.Valid() && dt != backend.Bool }

// cumSum is the kernel of KindCumSum: the inclusive prefix sum of
// op.In[0] along op.Axis, out[..., i, ...] = Σ_{j ≤ i} x[..., j, ...],
// giving a contiguous tensor of op.Shape and op.DType (x's). Each lane is
// summed in order (see the scan family): floats in double (F16 and BF16 in
// float), each element rounded once to the dtype, integers wrapping. A
// non-contiguous x is copied first.
func (b *Backend) cumSum(op ir.Op) ir.Outputs {
	t := b.Contiguous(tensorOf(op.In[0]))
	axis := op.Axis
	out := b.emptyOf(op.Shape, op.DType)
	outer, n, inner := backend.NumElements(t.shape[:axis]), t.shape[axis], backend.NumElements(t.shape[axis+1:])
	lanes := outer * inner
	if lanes == 0 || n == 0 {
		return ir.One(out)
	}
	name := "ember_cumsum_" + ctypeOf(t.dtype).Name
	k := b.kernel(name, func() string { return scanSource(t.dtype, name) })
	b.Launch(k, grid1(lanes, blockSize), block1, 0, int64(lanes), int64(n), int64(inner), t, out)
	return ir.One(out)
}
