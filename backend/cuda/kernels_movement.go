package cuda

import "github.com/emberml/ember/backend"

// The indexing family: gather, index-select (generated per element size:
// they only move bits) and scatter-add (per dtype: it adds). Each thread
// handles one output (gather, index-select) or one source element
// (scatter-add), decomposing its linear index over the shape in the
// by-value struct Idx. Every index is checked against the axis size: an
// index outside [0, size) writes 0 (gather, index-select) or is skipped
// (scatter-add) and is reported in the status word (report_index), which
// Backend.statusError turns into an error.
//
// Scatter-add uses atomics, so float results may differ between runs in
// the last bits (the order of the additions varies, as PyTorch's CUDA
// scatter_add); integer and Bool results are deterministic. F32 and F64
// use the native atomicAdd, 32- and 64-bit integers atomicAdd on the
// unsigned type (wrapping), 8- and 16-bit integers a compare-and-swap loop
// on the aligned 32-bit word that holds the element, Bool atomicOr on
// that word. F16 and BF16 are accumulated in an F32 copy by the caller.

// Status codes of report_index.
const (
	statusGather      = 1
	statusScatterAdd  = 2
	statusIndexSelect = 3
)

type indexSpec struct {
	Name, T, Add string
}

var gatherTmpl = mustTemplate("gather", `
typedef {{.T}} T;
struct Idx { i64 n, rank, axis, asize, istride, shape[8], ist[8], xst[8], ost[8]; };
extern "C" __global__ void {{.Name}}(Idx G, u64 pout, u64 px, u64 pidx, u64 status) {
	T* out = (T*)pout;
	const T* x = (const T*)px;
	const i64* index = (const i64*)pidx;
	const int rank = (int)G.rank, axis = (int)G.axis;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 r = i, io = 0, xo = 0;
#pragma unroll
		for (int d = 7; d >= 0; d--) {
			if (d < rank) {
				i64 c = r % G.shape[d];
				r /= G.shape[d];
				io += c * G.ist[d];
				if (d != axis) xo += c * G.xst[d];
			}
		}
		i64 v = index[io];
		if (v < 0 || v >= G.asize) {
			report_index((u32*)status, 1u, v, G.asize);
			out[i] = (T)0;
			continue;
		}
		out[i] = x[xo + v * G.xst[axis]];
	}
}
`)

var indexSelectTmpl = mustTemplate("index_select", `
typedef {{.T}} T;
struct Idx { i64 n, rank, axis, asize, istride, shape[8], ist[8], xst[8], ost[8]; };
extern "C" __global__ void {{.Name}}(Idx G, u64 pout, u64 px, u64 pidx, u64 status) {
	T* out = (T*)pout;
	const T* x = (const T*)px;
	const i64* index = (const i64*)pidx;
	const int rank = (int)G.rank, axis = (int)G.axis;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 r = i, xo = 0, ca = 0;
#pragma unroll
		for (int d = 7; d >= 0; d--) {
			if (d < rank) {
				i64 c = r % G.shape[d];
				r /= G.shape[d];
				if (d == axis) ca = c;
				else xo += c * G.xst[d];
			}
		}
		i64 v = index[ca * G.istride];
		if (v < 0 || v >= G.asize) {
			report_index((u32*)status, 3u, v, G.asize);
			out[i] = (T)0;
			continue;
		}
		out[i] = x[xo + v * G.xst[axis]];
	}
}
`)

var scatterTmpl = mustTemplate("scatter_add", `
typedef {{.T}} T;
struct Idx { i64 n, rank, axis, asize, istride, shape[8], ist[8], xst[8], ost[8]; };
// add_small adds v to the 8- or 16-bit element at p with a compare-and-swap
// loop on the aligned 32-bit word holding it (other bytes are kept).
__device__ __forceinline__ void add_small(void* p, u32 v, u32 bits) {
	u32* w = (u32*)((u64)p & ~(u64)3);
	const u32 sh = (u32)((u64)p & 3) * 8;
	const u32 mask = ((1u << bits) - 1u) << sh;
	u32 old = *w, assumed;
	do {
		assumed = old;
		u32 cur = (assumed & mask) >> sh;
		u32 nw = (assumed & ~mask) | (((cur + v) << sh) & mask);
		old = atomicCAS(w, assumed, nw);
	} while (old != assumed);
}
__device__ __forceinline__ void add_at(T* p, T v) { {{.Add}}; }
extern "C" __global__ void {{.Name}}(Idx G, u64 pout, u64 psrc, u64 pidx, u64 status) {
	T* out = (T*)pout;
	const T* src = (const T*)psrc;
	const i64* index = (const i64*)pidx;
	const int rank = (int)G.rank, axis = (int)G.axis;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 r = i, io = 0, so = 0, oo = 0;
#pragma unroll
		for (int d = 7; d >= 0; d--) {
			if (d < rank) {
				i64 c = r % G.shape[d];
				r /= G.shape[d];
				io += c * G.ist[d];
				so += c * G.xst[d];
				if (d != axis) oo += c * G.ost[d];
			}
		}
		i64 v = index[io];
		if (v < 0 || v >= G.asize) {
			report_index((u32*)status, 2u, v, G.asize);
			continue;
		}
		add_at(out + oo + v * G.ost[axis], src[so]);
	}
}
`)

// scatterAdd renders the atomic addition of v at p for dt.
func scatterAdd(dt backend.DType) string {
	switch dt {
	case backend.F32, backend.Flex32:
		return "atomicAdd(p, v)"
	case backend.F64:
		return "atomicAdd(p, v)"
	case backend.I64, backend.U64:
		return "atomicAdd((u64*)p, (u64)v)"
	case backend.I32, backend.U32:
		return "atomicAdd((u32*)p, (u32)v)"
	case backend.I16, backend.U16:
		return "add_small((void*)p, (u32)(u16)v, 16)"
	case backend.I8, backend.U8:
		return "add_small((void*)p, (u32)(u8)v, 8)"
	case backend.Bool:
		return "if (v) atomicOr((u32*)((u64)p & ~(u64)3), 1u << ((u32)((u64)p & 3) * 8))"
	}
	panic("cuda: scatter_add: no atomic addition for " + dt.String())
}
