package cuda

import "github.com/emberml/ember/backend"

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
