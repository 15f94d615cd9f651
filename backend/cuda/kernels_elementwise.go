package cuda

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// The elementwise family: out = apply(op, in0, in1, in2) for up to three
// inputs, in two variants.
//
//   - contig: every operand is contiguous or a broadcast scalar. Each
//     thread loads UNROLL vectors of 16 bytes per operand (VEC elements,
//     VEC = 16 / the widest element size) before computing, in a
//     grid-stride loop; the last n % VEC elements are done one by one.
//   - strided: any shape up to rank 8 and any strides per operand, the
//     output included (negative for flipped views, 0 for broadcast axes),
//     passed in the by-value struct Lay. IDX is int when every offset fits
//     in 32 bits (cheaper divisions), else long long.
//
// apply is defined per kernel (unary, binary, compare, where, copy) and
// takes the op code. Contiguous kernels of float dtypes are generated per
// op, which makes it a compile-time constant (OPC): the op's switch folds
// away and the loop body is the op alone (a runtime switch per element
// held an f32 add to 61% and a bf16 add to 23% of PyTorch's bandwidth on
// an H200; see bench/NOTES.md "CUDA kernels"). The other kernels take the
// op at run time: one per (family, dtype) serves every op, which keeps the
// number of NVRTC compilations (about 0.25 s each) small.

// elemSpec is one elementwise kernel's template data.
type elemSpec struct {
	Name       string
	T0, T1, T2 string // input storage types (unused ones "u8")
	TO         string // output storage type
	Nin        int
	Apply      string // defines __device__ TO apply(int op, T0 a, T1 b, T2 c[, u32* st])
	Contig     bool
	Op         int // the op as a compile-time constant in contig kernels (0: read at run time)
	IDX        string
	Vec        int
	// Status: apply takes the status word as a fifth argument, the
	// kernel's last parameter (the integer divisions, which report a zero
	// divisor there).
	Status bool
}

const elemUnroll = 4

var elemTmpl = mustTemplate("elementwise", `
typedef {{.T0}} T0;
typedef {{.T1}} T1;
typedef {{.T2}} T2;
typedef {{.TO}} TO;
{{.Apply}}
{{- if .Contig}}
#define VEC {{.Vec}}
#define OPC {{if .Op}}{{.Op}}{{else}}op{{end}}
#define UNROLL `+fmt.Sprint(elemUnroll)+`
// A vector is loaded and stored as one unsigned word of its size (R0 ...
// RO), so the narrow dtypes move in single 16-byte accesses too.
template <int B> struct RawOf;
template <> struct RawOf<16> { typedef uint4 T; };
template <> struct RawOf<8> { typedef uint2 T; };
template <> struct RawOf<4> { typedef unsigned int T; };
template <> struct RawOf<2> { typedef unsigned short T; };
template <> struct RawOf<1> { typedef unsigned char T; };
typedef RawOf<VEC * sizeof(T0)>::T R0;
typedef RawOf<VEC * sizeof(T1)>::T R1;
typedef RawOf<VEC * sizeof(T2)>::T R2;
typedef RawOf<VEC * sizeof(TO)>::T RO;
union V0 { R0 u; T0 v[VEC]; };
union V1 { R1 u; T1 v[VEC]; };
union V2 { R2 u; T2 v[VEC]; };
union VO { RO u; TO v[VEC]; };
extern "C" __global__ void {{.Name}}(i64 n, int op, u64 pout, u64 p0, u64 p1, u64 p2, int sc0, int sc1, int sc2{{if .Status}}, u64 pstatus{{end}}) {
	TO* __restrict__ out = (TO*)pout;
	const T0* __restrict__ a0 = (const T0*)p0;
	const T1* __restrict__ a1 = (const T1*)p1;
	const T2* __restrict__ a2 = (const T2*)p2;
	T0 s0 = sc0 ? a0[0] : (T0)0;
	T1 s1 = ({{if gt .Nin 1}}sc1{{else}}0{{end}}) ? a1[0] : (T1)0;
	T2 s2 = ({{if gt .Nin 2}}sc2{{else}}0{{end}}) ? a2[0] : (T2)0;
	const i64 nv = n / VEC;
	const i64 step = (i64)gridDim.x * blockDim.x * UNROLL;
	for (i64 base = (i64)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < nv; base += step) {
		V0 r0[UNROLL];
		V1 r1[UNROLL];
		V2 r2[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			i64 j = base + (i64)u * blockDim.x;
			if (j < nv) {
				if (!sc0) r0[u].u = ((const R0*)a0)[j];
{{- if gt .Nin 1}}
				if (!sc1) r1[u].u = ((const R1*)a1)[j];
{{- end}}
{{- if gt .Nin 2}}
				if (!sc2) r2[u].u = ((const R2*)a2)[j];
{{- end}}
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			i64 j = base + (i64)u * blockDim.x;
			if (j < nv) {
				VO o;
#pragma unroll
				for (int k = 0; k < VEC; k++) {
					o.v[k] = apply(OPC, sc0 ? s0 : r0[u].v[k],
						{{if gt .Nin 1}}sc1 ? s1 : r1[u].v[k]{{else}}s1{{end}},
						{{if gt .Nin 2}}sc2 ? s2 : r2[u].v[k]{{else}}s2{{end}}{{if .Status}}, (u32*)pstatus{{end}});
				}
				((RO*)out)[j] = o.u;
			}
		}
	}
	i64 t = nv * VEC + (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (t < n) {
		out[t] = apply(OPC, sc0 ? s0 : a0[t],
			{{if gt .Nin 1}}sc1 ? s1 : a1[t]{{else}}s1{{end}},
			{{if gt .Nin 2}}sc2 ? s2 : a2[t]{{else}}s2{{end}}{{if .Status}}, (u32*)pstatus{{end}});
	}
}
{{- else}}
typedef {{.IDX}} IDX;
struct Lay { i64 n, rank, shape[8], st[4][8]; };
extern "C" __global__ void {{.Name}}(Lay L, int op, u64 pout, u64 p0, u64 p1, u64 p2{{if .Status}}, u64 pstatus{{end}}) {
	TO* out = (TO*)pout;
	const T0* a0 = (const T0*)p0;
	const T1* a1 = (const T1*)p1;
	const T2* a2 = (const T2*)p2;
	const int rank = (int)L.rank;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < L.n; i += (i64)gridDim.x * blockDim.x) {
		IDX o0 = 0, o1 = 0, o2 = 0, o3 = 0;
		if (rank == 1) {
			IDX c = (IDX)i;
			o0 = c * (IDX)L.st[0][0];
			o1 = c * (IDX)L.st[1][0];
			o2 = c * (IDX)L.st[2][0];
			o3 = c * (IDX)L.st[3][0];
		} else {
			IDX r = (IDX)i;
#pragma unroll
			for (int d = 7; d >= 0; d--) {
				if (d < rank) {
					IDX s = (IDX)L.shape[d];
					IDX c = r % s;
					r /= s;
					o0 += c * (IDX)L.st[0][d];
					o1 += c * (IDX)L.st[1][d];
					o2 += c * (IDX)L.st[2][d];
					o3 += c * (IDX)L.st[3][d];
				}
			}
		}
		out[o0] = apply(op, a0[o1],
			{{if gt .Nin 1}}a1[o2]{{else}}(T1)0{{end}},
			{{if gt .Nin 2}}a2[o3]{{else}}(T2)0{{end}}{{if .Status}}, (u32*)pstatus{{end}});
	}
}
{{- end}}
`)

// elemVec is the vector width of a contiguous kernel over the given
// element sizes: 16 bytes of the widest.
func elemVec(sizes ...int) int {
	m := 1
	for _, s := range sizes {
		m = max(m, s)
	}
	return 16 / m
}

// unaryApply renders apply for Unary on dt.
func unaryApply(dt backend.DType) string {
	c := ctypeOf(dt)
	var body string
	switch c.Kind {
	case 'f':
		body = st(c, "un_float<"+c.C+">(op, "+ld(c, "a")+")")
	case 'i':
		body = "un_int<" + c.S + ">(op, a)"
	default:
		body = "un_bool(op, a)"
	}
	return "__device__ __forceinline__ TO apply(int op, T0 a, T1 b, T2 c) { return " + body + "; }"
}

// binaryApply renders apply for Binary on dt (compare: the comparison ops,
// giving u8).
func binaryApply(dt backend.DType, compare bool) string {
	c := ctypeOf(dt)
	var body string
	switch {
	case c.Kind == 'b':
		body = "bin_bool(op, a, b)"
	case compare && c.Kind == 'f':
		body = "cmp<" + c.C + ">(op, " + ld(c, "a") + ", " + ld(c, "b") + ")"
	case compare:
		body = "cmp<" + c.S + ">(op, a, b)"
	case c.Kind == 'f':
		body = st(c, "bin_float<"+c.C+">(op, "+ld(c, "a")+", "+ld(c, "b")+")")
	default:
		body = "bin_int<" + c.S + ">(op, a, b)"
	}
	return "__device__ __forceinline__ TO apply(int op, T0 a, T1 b, T2 c) { return " + body + "; }"
}

// divideApply renders apply for the integer divisions (Div, FloorDiv,
// Rem, Mod) on the integer dtype dt: bin_int with the divisor checked
// (div_chk), a zero divisor reported in the status word st.
func divideApply(dt backend.DType) string {
	return fmt.Sprintf("__device__ __forceinline__ TO apply(int op, T0 a, T1 b, T2 c, u32* st) { return div_chk<%s>(op, a, b, st, %du); }", ctypeOf(dt).S, uint32(dt))
}

const whereApply = "__device__ __forceinline__ TO apply(int op, T0 a, T1 b, T2 c) { return a ? b : c; }"
const copyApply = "__device__ __forceinline__ TO apply(int op, T0 a, T1 b, T2 c) { return a; }"
