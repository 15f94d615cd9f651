package cuda

import "github.com/emberml/ember/backend"

// The reduce family reduces contiguous [outer, r, inner] data along r,
// with the op (backend.ReduceOp) chosen at run time, in two kernels per
// dtype:
//
//   - rows (inner == 1): a group of 32·wpr threads per row (wpr = 1: a warp,
//     for short rows, 8 rows per block; wpr = 8: a whole block) strides over
//     the row, then combines with warp shuffles and, across warps, shared
//     memory;
//   - cols (inner > 1): a 32×8 block; threadIdx.x walks 32 neighbouring
//     columns (coalesced loads), threadIdx.y splits r in 8, and shared
//     memory combines the 8 partial results.
//
// Reductions with few outputs and a long r (see planReduce) take two
// passes instead, so that the whole GPU reads the data:
//
//   - rows_split: one 256-thread block per (row, chunk of r) reduces the
//     chunk as the rows kernel reduces a row and writes its Acc;
//   - cols_split: one 256-thread block per (outer, group of cw columns,
//     chunk of r), cw the power of two covering inner (at most 32), so a
//     warp's loads stay coalesced for narrow inner axes; warp shuffles at
//     distances of multiples of cw and shared memory combine the rows of
//     each column;
//   - combine: the partials, laid out [outputs, chunks], reduced per
//     output as the rows kernel reduces a row (a warp or a block per
//     output) and stored as the single-pass kernels store.
//
// Every thread walks its elements in increasing order and the partials
// combine along a fixed tree, so the results depend only on the shape,
// the data and the chunking (not on timing); there are no atomics.
//
// Sum and Prod accumulate in A (double for floats, u64 for integers, so
// integer results wrap); F64 sums are compensated (Neumaier), so they are
// accurate to about one rounding, not to the length each thread walks
// (F32, F16 and BF16 values summed in double lose nothing that their own
// rounding keeps); the value is rounded once to the dtype (F16 and
// BF16 through float, as flex). Sum and Max of floats, the common cases,
// have kernels of their own with the op fixed at compile time
// (reduceSpec.Op); the others choose it at run time. Max, Min, ArgMax and ArgMin carry a value
// and its index and combine with better(): NaN beats every number, the
// first NaN (lowest index) wins, and ties pick the lowest index, so the
// result does not depend on the order of combination. An empty axis gives
// Sum 0, Prod 1, Max -Inf (the smallest integer), Min +Inf (the largest)
// and index 0.

type reduceSpec struct {
	Name, S, C, A   string
	Lowest, Highest string // C expressions: the identities of Max and Min
	Load            string // converts S x to C
	StoreC, StoreA  string // render storing C v / A acc as S
	// Kernel picks the kernel the source defines: "rows" or "cols" (the
	// single-pass kernels), "rows_split", "cols_split" or "combine".
	Kernel string
	// Comp compensates Sum (Neumaier's two-sum, kept in comp and added
	// at the end): for floats, so that an F64 sum's error does not grow
	// with the length each thread walks.
	Comp bool
	// AccBytes is sizeof(struct Acc), which the host uses to size the
	// partials of the split kernels (checked by a static_assert).
	AccBytes int
	// Op, when not 0, fixes the reduction (a backend.ReduceOp) at compile
	// time: the kernel ignores its op argument and the compiler drops the
	// other ops' code and the accumulator fields they use.
	Op int
}

// reduceAccBytes is the size of the device's struct Acc (two 8-byte
// accumulators, a value of at most 8 bytes, an i64 index), one partial
// result of the split kernels.
const reduceAccBytes = 32

var reduceTmpl = mustTemplate("reduce", `
typedef {{.S}} S;
typedef {{.C}} C;
typedef {{.A}} A;
__device__ __forceinline__ double shfl(double v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ float shfl(float v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i64 shfl(i64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u64 shfl(u64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i32 shfl(i32 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u32 shfl(u32 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i16 shfl(i16 v, int o) { return (i16)__shfl_down_sync(0xffffffffu, (int)v, o); }
__device__ __forceinline__ u16 shfl(u16 v, int o) { return (u16)__shfl_down_sync(0xffffffffu, (int)v, o); }
__device__ __forceinline__ i8 shfl(i8 v, int o) { return (i8)__shfl_down_sync(0xffffffffu, (int)v, o); }
__device__ __forceinline__ u8 shfl(u8 v, int o) { return (u8)__shfl_down_sync(0xffffffffu, (int)v, o); }

// better reports whether (v2, i2) replaces (v1, i1).
__device__ __forceinline__ bool better(bool isMax, C v1, i64 i1, C v2, i64 i2) {
	bool n1 = v1 != v1, n2 = v2 != v2;
	if (n1 || n2) return (n1 && n2) ? i2 < i1 : n2;
	if (isMax ? v2 > v1 : v2 < v1) return true;
	return v2 == v1 && i2 < i1;
}
struct Acc {
	A acc;
	A comp;
	C val;
	i64 idx;
};
static_assert(sizeof(Acc) == {{.AccBytes}}, "the host sizes the partials by this");
{{- if .Comp}}
// sum2 adds b to the compensated sum (acc, comp): Neumaier's variant of
// Kahan summation.
__device__ __forceinline__ void sum2(A& acc, A& comp, A b) {
	A t = acc + b;
	if (fabs(acc) >= fabs(b)) comp += (acc - t) + b;
	else comp += (b - t) + acc;
	acc = t;
}
{{- end}}
__device__ __forceinline__ void acc_init(Acc& s, int op, i64 none) {
	s.acc = op == 2 ? (A)1 : (A)0;
	s.comp = (A)0;
	s.val = (op == 3 || op == 5) ? ({{.Lowest}}) : ({{.Highest}});
	s.idx = none;
}
__device__ __forceinline__ void acc_add(Acc& s, int op, S raw, i64 j) {
	C v = {{.Load}};
{{- if .Comp}}
	if (op == 1) sum2(s.acc, s.comp, (A)v);
{{- else}}
	if (op == 1) s.acc += (A)v;
{{- end}}
	else if (op == 2) s.acc *= (A)v;
	else if (better(op == 3 || op == 5, s.val, s.idx, v, j)) { s.val = v; s.idx = j; }
}
__device__ __forceinline__ void acc_merge(Acc& s, int op, const Acc& t) {
{{- if .Comp}}
	if (op == 1) { sum2(s.acc, s.comp, t.acc); s.comp += t.comp; }
{{- else}}
	if (op == 1) s.acc += t.acc;
{{- end}}
	else if (op == 2) s.acc *= t.acc;
	else if (better(op == 3 || op == 5, s.val, s.idx, t.val, t.idx)) { s.val = t.val; s.idx = t.idx; }
}
{{- if .Op}}
// VecS is 16 bytes of S: the kernels that fix the op load rows 16 bytes
// at a time (the order of the additions does not matter to them: Sum
// accumulates in double, Max breaks ties by index).
union VecS { uint4 u; S s[16 / sizeof(S)]; };
// acc_range adds p[j] for the j in [lo, hi) of thread t of nt: scalar
// loads up to the first 16-byte boundary, then 16-byte loads, two in
// flight, then the scalar tail.
__device__ __forceinline__ void acc_range(Acc& s, int op, const S* p, i64 lo, i64 hi, int t, int nt) {
	const int per = 16 / sizeof(S);
	i64 head = lo + (i64)(((16 - ((u64)(p + lo) & 15)) & 15) / sizeof(S));
	if (head > hi) head = hi;
	for (i64 j = lo + t; j < head; j += nt) acc_add(s, op, p[j], j);
	const VecS* v = (const VecS*)(p + head);
	const i64 nv = (hi - head) / per;
	i64 q = t;
	for (; q + nt < nv; q += 2 * nt) {
		const VecS a = v[q], b = v[q + nt];
		for (int k = 0; k < per; k++) acc_add(s, op, a.s[k], head + q * per + k);
		for (int k = 0; k < per; k++) acc_add(s, op, b.s[k], head + (q + nt) * per + k);
	}
	for (; q < nv; q += nt) {
		const VecS a = v[q];
		for (int k = 0; k < per; k++) acc_add(s, op, a.s[k], head + q * per + k);
	}
	for (i64 j = head + nv * per + t; j < hi; j += nt) acc_add(s, op, p[j], j);
}
{{- end}}
__device__ __forceinline__ void acc_shfl(Acc& s, int op, int o) {
	Acc t;
	t.acc = shfl(s.acc, o);
	t.comp = shfl(s.comp, o);
	t.val = shfl(s.val, o);
	t.idx = shfl(s.idx, o);
	acc_merge(s, op, t);
}
__device__ __forceinline__ void acc_store(const Acc& s, int op, i64 r, i64 at, u64 pv, u64 pi) {
	if (op == 5 || op == 6) {
		((i64*)pi)[at] = s.idx >= r ? 0 : s.idx;
	} else if (op <= 2) {
{{- if .Comp}}
		// The compensation is meaningless once the sum is not finite.
		A acc = (op == 1 && isfinite(s.acc)) ? s.acc + s.comp : s.acc;
{{- else}}
		A acc = s.acc;
{{- end}}
		((S*)pv)[at] = {{.StoreA}};
	} else {
		C v = s.val;
		((S*)pv)[at] = {{.StoreC}};
	}
}
{{- if eq .Kernel "rows"}}
extern "C" __global__ void {{.Name}}(int op_, i64 outer, i64 r, u64 px, u64 pv, u64 pi, int wpr) {
	const int op = {{if .Op}}{{.Op}}{{else}}op_{{end}};
	__shared__ Acc sh[8];
	const S* x = (const S*)px;
	const int g = 32 * wpr;
	const int lane = threadIdx.x % g;
	const int rpb = blockDim.x / g;
	const i64 none = 0x7fffffffffffffffLL;
	for (i64 base = (i64)blockIdx.x * rpb; base < outer; base += (i64)gridDim.x * rpb) {
		const i64 row = base + threadIdx.x / g;
		Acc s;
		acc_init(s, op, none);
		if (row < outer) {
			const S* p = x + row * r;
{{- if .Op}}
			acc_range(s, op, p, 0, r, lane, g);
{{- else}}
			for (i64 j = lane; j < r; j += g) acc_add(s, op, p[j], j);
{{- end}}
		}
		for (int o = 16; o > 0; o >>= 1) acc_shfl(s, op, o);
		if (wpr > 1) {
			const int warp = threadIdx.x / 32;
			__syncthreads();
			if (threadIdx.x % 32 == 0) sh[warp] = s;
			__syncthreads();
			if (lane == 0) {
				for (int w = 1; w < wpr; w++) acc_merge(s, op, sh[w]);
			}
		}
		if (lane == 0 && row < outer) acc_store(s, op, r, row, pv, pi);
	}
}
{{- else if eq .Kernel "cols"}}
extern "C" __global__ void {{.Name}}(int op_, i64 outer, i64 r, i64 inner, u64 px, u64 pv, u64 pi) {
	const int op = {{if .Op}}{{.Op}}{{else}}op_{{end}};
	__shared__ Acc sh[8][32];
	const S* x = (const S*)px;
	const i64 nbx = (inner + 31) / 32;
	const i64 none = 0x7fffffffffffffffLL;
	for (i64 blk = blockIdx.x; blk < outer * nbx; blk += gridDim.x) {
		const i64 o = blk / nbx;
		const i64 col = (blk % nbx) * 32 + threadIdx.x;
		Acc s;
		acc_init(s, op, none);
		if (col < inner) {
			const S* p = x + o * r * inner + col;
			const i64 ny = blockDim.y;
			i64 j = threadIdx.y;
{{- if .Op}}
			// Eight loads in flight per thread.
			for (; j + 7 * ny < r; j += 8 * ny) {
				S v[8];
#pragma unroll
				for (int u = 0; u < 8; u++) v[u] = p[(j + u * ny) * inner];
#pragma unroll
				for (int u = 0; u < 8; u++) acc_add(s, op, v[u], j + u * ny);
			}
{{- end}}
			// Four loads in flight per thread, added in index order.
			for (; j + 3 * ny < r; j += 4 * ny) {
				const S v0 = p[j * inner], v1 = p[(j + ny) * inner], v2 = p[(j + 2 * ny) * inner], v3 = p[(j + 3 * ny) * inner];
				acc_add(s, op, v0, j);
				acc_add(s, op, v1, j + ny);
				acc_add(s, op, v2, j + 2 * ny);
				acc_add(s, op, v3, j + 3 * ny);
			}
			for (; j < r; j += ny) acc_add(s, op, p[j * inner], j);
		}
		__syncthreads();
		sh[threadIdx.y][threadIdx.x] = s;
		__syncthreads();
		if (threadIdx.y == 0 && col < inner) {
			for (int y = 1; y < blockDim.y; y++) acc_merge(s, op, sh[y][threadIdx.x]);
			acc_store(s, op, r, o * inner + col, pv, pi);
		}
	}
}
{{- else if eq .Kernel "rows_split"}}
// The chunk c of row (block blk = row·nc + c) covers [c·len, min((c+1)·len, r)).
extern "C" __global__ void {{.Name}}(int op_, i64 outer, i64 r, i64 len, i64 nc, u64 px, u64 ppart) {
	const int op = {{if .Op}}{{.Op}}{{else}}op_{{end}};
	__shared__ Acc sh[8]; // blocks of at most 256 threads
	const S* x = (const S*)px;
	Acc* part = (Acc*)ppart;
	const int nt = blockDim.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const i64 none = 0x7fffffffffffffffLL;
	for (i64 blk = blockIdx.x; blk < outer * nc; blk += gridDim.x) {
		const i64 row = blk / nc, lo = (blk % nc) * len;
		const i64 hi = min(lo + len, r);
		const S* p = x + row * r;
		Acc s;
		acc_init(s, op, none);
{{- if .Op}}
		acc_range(s, op, p, lo, hi, threadIdx.x, nt);
{{- else}}
		i64 j = lo + threadIdx.x;
		// Four loads in flight per thread, added in index order.
		for (; j + 3 * nt < hi; j += 4 * nt) {
			const S v0 = p[j], v1 = p[j + nt], v2 = p[j + 2 * nt], v3 = p[j + 3 * nt];
			acc_add(s, op, v0, j);
			acc_add(s, op, v1, j + nt);
			acc_add(s, op, v2, j + 2 * nt);
			acc_add(s, op, v3, j + 3 * nt);
		}
		for (; j < hi; j += nt) acc_add(s, op, p[j], j);
{{- end}}
		for (int o = 16; o > 0; o >>= 1) acc_shfl(s, op, o);
		__syncthreads();
		if (lane == 0) sh[warp] = s;
		__syncthreads();
		if (threadIdx.x == 0) {
			for (int w = 1; w < nt / 32; w++) acc_merge(s, op, sh[w]);
			part[blk] = s;
		}
	}
}
{{- else if eq .Kernel "cols_split"}}
// Block blk = (o·ncg + g)·nc + c reduces columns [g·cw, (g+1)·cw) of outer
// index o over the chunk [c·len, min((c+1)·len, r)); thread t takes column
// t % cw and rows t / cw, t / cw + nt / cw, ... of the chunk. The partial
// of output o·inner + col goes to part[(o·inner + col)·nc + c].
extern "C" __global__ void {{.Name}}(int op_, i64 outer, i64 r, i64 inner, i64 len, i64 nc, int cw, u64 px, u64 ppart) {
	const int op = {{if .Op}}{{.Op}}{{else}}op_{{end}};
	__shared__ Acc sh[8][32]; // blocks of at most 256 threads
	const S* x = (const S*)px;
	Acc* part = (Acc*)ppart;
	const int nt = blockDim.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int tx = threadIdx.x % cw, ty = threadIdx.x / cw, ny = nt / cw;
	const i64 ncg = (inner + cw - 1) / cw;
	const i64 none = 0x7fffffffffffffffLL;
	for (i64 blk = blockIdx.x; blk < outer * ncg * nc; blk += gridDim.x) {
		const i64 og = blk / nc, c = blk % nc;
		const i64 o = og / ncg, col = (og % ncg) * cw + tx;
		const i64 lo = c * len;
		const i64 hi = min(lo + len, r);
		Acc s;
		acc_init(s, op, none);
		if (col < inner) {
			const S* p = x + o * r * inner + col;
			i64 j = lo + ty;
{{- if .Op}}
			for (; j + 7 * ny < hi; j += 8 * ny) {
				S v[8];
#pragma unroll
				for (int u = 0; u < 8; u++) v[u] = p[(j + u * ny) * inner];
#pragma unroll
				for (int u = 0; u < 8; u++) acc_add(s, op, v[u], j + u * ny);
			}
{{- end}}
			for (; j + 3 * ny < hi; j += 4 * ny) {
				const S v0 = p[j * inner], v1 = p[(j + ny) * inner], v2 = p[(j + 2 * ny) * inner], v3 = p[(j + 3 * ny) * inner];
				acc_add(s, op, v0, j);
				acc_add(s, op, v1, j + ny);
				acc_add(s, op, v2, j + 2 * ny);
				acc_add(s, op, v3, j + 3 * ny);
			}
			for (; j < hi; j += ny) acc_add(s, op, p[j * inner], j);
		}
		// Lanes cw apart hold the same column: fold them onto lanes < cw.
		for (int k = 16; k >= cw; k >>= 1) acc_shfl(s, op, k);
		__syncthreads();
		if (lane < cw) sh[warp][lane] = s;
		__syncthreads();
		if (warp == 0 && lane < cw && col < inner) {
			for (int w = 1; w < nt / 32; w++) acc_merge(s, op, sh[w][lane]);
			part[(o * inner + col) * nc + c] = s;
		}
	}
}
{{- else if eq .Kernel "combine"}}
// Output row combines part[row·nc .. row·nc + nc) with a group of 32·wpr
// threads (as the rows kernel) and stores the result at row.
extern "C" __global__ void {{.Name}}(int op_, i64 nout, i64 nc, i64 r, u64 ppart, u64 pv, u64 pi, int wpr) {
	const int op = {{if .Op}}{{.Op}}{{else}}op_{{end}};
	__shared__ Acc sh[8]; // blocks of at most 256 threads
	const Acc* part = (const Acc*)ppart;
	const int g = 32 * wpr;
	const int lane = threadIdx.x % g;
	const int rpb = blockDim.x / g;
	const i64 none = 0x7fffffffffffffffLL;
	for (i64 base = (i64)blockIdx.x * rpb; base < nout; base += (i64)gridDim.x * rpb) {
		const i64 row = base + threadIdx.x / g;
		Acc s;
		acc_init(s, op, none);
		if (row < nout) {
			const Acc* p = part + row * nc;
			for (i64 j = lane; j < nc; j += g) acc_merge(s, op, p[j]);
		}
		for (int o = 16; o > 0; o >>= 1) acc_shfl(s, op, o);
		if (wpr > 1) {
			const int warp = threadIdx.x / 32;
			__syncthreads();
			if (threadIdx.x % 32 == 0) sh[warp] = s;
			__syncthreads();
			if (lane == 0) {
				for (int w = 1; w < wpr; w++) acc_merge(s, op, sh[w]);
			}
		}
		if (lane == 0 && row < nout) acc_store(s, op, r, row, pv, pi);
	}
}
{{- end}}
`)

// reduceSource renders the rows or cols reduce kernel for dt (Bool
// reduces as U8: the host maps Sum to Max and Prod to Min).
func reduceSource(dt backend.DType, name string, cols bool) string {
	kernel := "rows"
	if cols {
		kernel = "cols"
	}
	return reduceKernelSource(dt, name, kernel)
}

// reduceKernelSource renders the reduce kernel kernel ("rows", "cols",
// "rows_split", "cols_split" or "combine") for dt, the op chosen at run
// time.
func reduceKernelSource(dt backend.DType, name, kernel string) string {
	return reduceOpSource(dt, name, kernel, 0)
}

// reduceOpSource is reduceKernelSource with the op fixed to op (0: chosen
// at run time).
func reduceOpSource(dt backend.DType, name, kernel string, op backend.ReduceOp) string {
	c := ctypeOf(dt)
	sp := reduceSpec{Name: name, S: c.S, C: c.C, Load: ld(c, "raw"), Kernel: kernel, AccBytes: reduceAccBytes, Op: int(op)}
	switch {
	case c.Kind == 'f':
		sp.A = "double"
		sp.Comp = dt == backend.F64
		sp.Lowest, sp.Highest = "-EMBER_INF", "EMBER_INF"
		if dt == backend.F64 {
			sp.Lowest, sp.Highest = "-EMBER_DINF", "EMBER_DINF"
		}
		sp.StoreA = st(c, "("+c.C+")acc")
	default:
		sp.A = "u64"
		sp.Lowest, sp.Highest = "lim<"+c.S+">::lo", "lim<"+c.S+">::hi"
		sp.StoreA = "(S)acc"
	}
	sp.StoreC = st(c, "v")
	return render(reduceTmpl, sp)
}
