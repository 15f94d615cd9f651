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

// The scan family: the inclusive prefix sum of contiguous [outer, n, inner]
// data along n, one kernel per dtype. Each thread owns one lane (an outer
// and inner index, neighbouring threads neighbouring inner indices, so
// loads and stores coalesce when inner > 1) and walks the n elements of
// its lane in order, adding each to a running sum and storing the sum.
//
// The sum runs in A, as backend/flex's cumsum: double for F64, F32 and
// Flex32 (PyTorch's CPU kernel), float for F16 and BF16; each stored
// element is the running sum rounded once to the dtype (the sum itself is
// not rounded), so the results equal flex's bit for bit. Integers sum in
// u64, truncated to the dtype on store: sums wrap as the dtype's own
// arithmetic does.

type scanSpec struct {
	Name, S, A, Load, Store string
}

var scanTmpl = mustTemplate("cumsum", `
typedef {{.S}} S;
typedef {{.A}} A;
extern "C" __global__ void {{.Name}}(i64 lanes, i64 n, i64 inner, u64 px, u64 pout) {
	const S* x = (const S*)px;
	S* out = (S*)pout;
	for (i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x; l < lanes; l += (i64)gridDim.x * blockDim.x) {
		const i64 base = (l / inner) * n * inner + l % inner;
		A acc = (A)0;
		for (i64 j = 0; j < n; j++) {
			const S raw = x[base + j * inner];
			acc += (A){{.Load}};
			out[base + j * inner] = {{.Store}};
		}
	}
}
`)

// scanSource renders the cumsum kernel for dt (not Bool).
func scanSource(dt backend.DType, name string) string {
	c := ctypeOf(dt)
	sp := scanSpec{Name: name, S: c.S, A: c.C, Load: ld(c, "raw"), Store: st(c, "acc")}
	switch {
	case c.Kind != 'f':
		sp.A, sp.Store = "u64", "(S)acc"
	case isF32(dt):
		sp.A = "double"
	}
	return render(scanTmpl, sp)
}
