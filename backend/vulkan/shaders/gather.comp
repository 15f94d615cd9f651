#version 450
// gather.comp: out[p] = x[p with axis coordinate index[p]] (KindGather,
// PyTorch's gather), one variant per element width WBITS. x and index are
// contiguous; out has index's shape.
//
// P[0] n, P[1] rank, P[2] axis, P[3 .. 11) index shape, P[11 .. 19) x
// strides, P[19] x offset, P[20] x's size on axis, P[21] index offset,
// P[22] out offset.
#include "common.glsl"
#include "index.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { WTYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { WTYPE x[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer Idx { int64_t idx[]; };

void main() {
	uint n = P[0], rank = P[1], axis = P[2];
	for (uint w = gid(); w < n; w += gstride()) {
		uint rem = w, off = P[19];
		for (uint d = rank; d > 0u; d--) {
			uint a = d - 1u;
			uint s = P[3u + a];
			uint c = rem % s;
			rem /= s;
			if (a != axis) {
				off += c * P[11u + a];
			}
		}
		off += clampIndex(idx[P[21] + w], P[20]) * P[11u + axis];
		o[P[22] + w] = x[off];
	}
}
