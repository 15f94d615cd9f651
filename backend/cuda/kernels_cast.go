package cuda

import (
	"fmt"
	"strings"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
)

// The cast family: one kernel per source dtype reads x through the strided
// layout (Lay, operand 1) and writes the contiguous output in the
// destination dtype chosen at run time by a switch on its code
// (backend.DType): 14 kernels cover the 14×14 pairs.
//
// Conversions follow backend/flex's Cast: float to float rounds to nearest
// even (F64 to F16/BF16 once, through round-to-odd); float to integer
// truncates toward zero and saturates, NaN giving 0; integer to integer
// wraps; integer to F16/BF16 rounds the double value once; anything to
// Bool is x != 0 (NaN is true); Bool is 0 or 1.

type castSpec struct {
	Name, S, IDX, Value string
	Cases               string
}

var castTmpl = mustTemplate("cast", `
typedef {{.S}} S;
typedef {{.IDX}} IDX;
struct Lay { i64 n, rank, shape[8], st[4][8]; };
__device__ __forceinline__ void put(int dst, u64 out, i64 i, S raw) {
	{{.Value}}
	switch (dst) {
{{.Cases}}	}
}
extern "C" __global__ void {{.Name}}(Lay L, int dst, u64 pout, u64 p0) {
	const S* a0 = (const S*)p0;
	const int rank = (int)L.rank;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += (i64)gridDim.x * blockDim.x) {
		IDX o1 = 0;
		if (rank == 1) {
			o1 = (IDX)i * (IDX)L.st[1][0];
		} else {
			IDX r = (IDX)i;
#pragma unroll
			for (int d = 7; d >= 0; d--) {
				if (d < rank) {
					IDX s = (IDX)L.shape[d];
					IDX c = r % s;
					r /= s;
					o1 += c * (IDX)L.st[1][d];
				}
			}
		}
		put(dst, pout, i, a0[o1]);
	}
}
`)

// castExpr renders the conversion of the value v (of src's compute type)
// to dst's storage type.
func castExpr(src, dst backend.DType) string {
	s, d := ctypeOf(src), ctypeOf(dst)
	switch {
	case d.Kind == 'b':
		return "(u8)(v != 0)"
	case src == backend.F64:
		return std(d, "v")
	case s.Kind == 'f': // float compute (F32, F16, BF16)
		switch dst {
		case backend.F64:
			return "(double)v"
		case backend.F32, backend.Flex32:
			return "v"
		case backend.F16:
			return "f32_to_f16(v)"
		case backend.BF16:
			return "f32_to_bf16(v)"
		}
		return std(d, "(double)v")
	}
	// integer or Bool source
	switch {
	case d.Kind == 'i':
		return "(" + d.S + ")v"
	case dst == backend.F32 || dst == backend.Flex32:
		return "(float)v"
	}
	return std(d, "(double)v")
}

// castSource renders the cast kernel for source dtype src.
func castSource(src backend.DType, name, idx string) string {
	s := ctypeOf(src)
	var cases strings.Builder
	for _, d := range backend.AllDTypes {
		dc := ctypeOf(d)
		fmt.Fprintf(&cases, "\tcase %d: ((%s*)out)[i] = %s; break;\n", int(d), dc.S, castExpr(src, d))
	}
	value := "const " + s.C + " v = " + ld(s, "raw") + ";"
	return render(castTmpl, castSpec{Name: name, S: s.S, IDX: idx, Value: value, Cases: cases.String()})
}

// cast converts t to dt with backend/flex's semantics (see the family doc
// above), giving a contiguous tensor; a cast to t's own dtype, or between
// F32 and Flex32, returns a view of t's buffer.
func (b *Backend) cast(t *Tensor, dt backend.DType) *Tensor {
	if t.dtype == dt || (isF32(t.dtype) && isF32(dt)) {
		v := t.view(t.shape, t.strides, t.offset)
		v.dtype = dt
		return v
	}
	out := b.emptyOf(t.shape, dt)
	b.castInto(out, t)
	return out
}

// isF32 reports whether dt is stored and computed as float32 (F32, Flex32).
func isF32(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 }

// castInto converts t into out (contiguous, t's shape, any dtype).
func (b *Backend) castInto(out, t *Tensor) {
	if backend.NumElements(t.shape) == 0 {
		return
	}
	sh, st := collapse(t.shape, [][]int{layout.RowMajorStrides(t.shape), t.strides})
	ptrs := []uint64{out.Ptr(), t.Ptr()}
	sizes := []int{out.dtype.Size(), t.dtype.Size()}
	splitLeading(sh, st, ptrs, sizes, func(sh []int, st [][]int, ptrs []uint64) {
		name, idx := "ember_cast_"+ctypeOf(t.dtype).Name+"_s64", "i64"
		if fits32(sh, st) {
			name, idx = "ember_cast_"+ctypeOf(t.dtype).Name+"_s32", "int"
		}
		k := b.kernel(name, func() string { return castSource(t.dtype, name, idx) })
		b.Launch(k, grid1(backend.NumElements(sh), blockSize), block1, 0, layoutBlob(sh, st), int32(out.dtype), ptrs[0], ptrs[1])
	})
}
