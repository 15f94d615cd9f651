#version 450
// reduce.comp: one pass of a reduction along an axis (KindReduce), one
// variant per dtype; the reduction is specialization constant 1 (an
// ir.ReduceOp). The input is viewed as [outer, R, inner]; each invocation
// reduces a chunk of L consecutive entries of R for one (outer, inner)
// position, in order, so the host reduces a long axis in passes of
// chunks (each pass's partial results, with their indices for the Arg
// ops, are the next pass's input) and every result is the same whatever
// the device. Float sums and products accumulate in double, integers wrap.
// Max/Min/ArgMax/ArgMin propagate NaN (the first NaN wins) and ties keep
// the lowest index.
//
// P[0] work items (outer*C*inner), P[1] outer, P[2] R, P[3] inner, P[4] L,
// P[5] C = ceil(R/L), P[6] 1: read partials (bindings 3, 4) instead of x
// (binding 2), P[7] 1: write partials (bindings 5, 6) instead of the
// result (binding 1), P[8] x's offset, P[9] the result's offset (elements).
#include "common.glsl"
#include "dtype.glsl"

layout(constant_id = 1) const uint OP = 1u;

#if IS_FLOAT
#define ACC double
#else
#define ACC CTYPE
#endif

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutI { int64_t oi[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer PartIn { ACC pa[]; };
layout(std430, set = 0, binding = 4) readonly restrict buffer PartInI { int64_t pidx[]; };
layout(std430, set = 0, binding = 5) writeonly restrict buffer PartOut { ACC qa[]; };
layout(std430, set = 0, binding = 6) writeonly restrict buffer PartOutI { int64_t qidx[]; };

const bool IS_MAX = OP == 3u || OP == 5u;
const bool IS_ARG = OP == 5u || OP == 6u;

void main() {
	uint total = P[0], R = P[2], inner = P[3], L = P[4], C = P[5];
	bool fromP = P[6] != 0u, toP = P[7] != 0u;
	uint xoff = P[8], ooff = P[9];
	for (uint w = gid(); w < total; w += gstride()) {
		uint i = w % inner;
		uint t = w / inner;
		uint c = t % C;
		uint ob = t / C;
		uint r0 = c * L, r1 = min(R, r0 + L);
		ACC acc = OP == 2u ? ACC(1) : ACC(0);
		int64_t at = 0l;
		for (uint r = r0; r < r1; r++) {
			uint src = (ob * R + r) * inner + i;
			ACC v;
			int64_t vi;
			if (fromP) {
				v = pa[src];
				vi = pidx[src];
			} else {
				v = ACC(LD(a[xoff + src]));
				vi = int64_t(r);
			}
			if (OP == 1u) {
				acc += v;
			} else if (OP == 2u) {
				acc *= v;
			} else if (r == r0) {
				acc = v;
				at = vi;
			} else {
#if IS_FLOAT
				if (isnan(acc)) {
					break;
				}
				if (isnan(v) || (IS_MAX ? v > acc : v < acc)) {
#else
				if (IS_MAX ? v > acc : v < acc) {
#endif
					acc = v;
					at = vi;
				}
			}
		}
		uint dst = (ob * C + c) * inner + i;
		if (toP) {
			qa[dst] = acc;
			qidx[dst] = at;
		} else if (IS_ARG) {
			oi[ooff + dst] = at;
		} else {
			o[ooff + dst] = ST(CTYPE(acc));
		}
	}
}
