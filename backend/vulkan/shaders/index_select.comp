#version 450
// index_select.comp: out[o, j, i] = x[o, index[j], i] (KindIndexSelect,
// PyTorch's index_select) with x viewed as [outer, A, inner], contiguous;
// one variant per element width WBITS.
//
// P[0] n, P[1] inner, P[2] K = len(index), P[3] A, P[4] x offset,
// P[5] index offset, P[6] out offset.
#include "common.glsl"
#include "index.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { WTYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { WTYPE x[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer Idx { int64_t idx[]; };

void main() {
	uint n = P[0], inner = P[1], K = P[2], A = P[3];
	for (uint w = gid(); w < n; w += gstride()) {
		uint i = w % inner;
		uint t = w / inner;
		uint j = t % K;
		uint ob = t / K;
		uint src = (ob * A + clampIndex(idx[P[5] + j], A)) * inner + i;
		o[P[6] + w] = x[P[4] + src];
	}
}
