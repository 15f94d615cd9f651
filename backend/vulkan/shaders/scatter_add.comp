#version 450
// scatter_add.comp: out = x with src[p] added at p with axis coordinate
// index[p] (KindScatterAdd, PyTorch's scatter_add), one variant per
// dtype. Each invocation owns one element of out and adds its
// contributions in the order of the index axis, starting from x's value,
// as the sequential reference does (no atomics: results are
// deterministic). F16 and BF16 accumulate in float and round once;
// integers wrap; Bool ors.
//
// P[0] n (x's elements), P[1] rank, P[2] axis, P[3 .. 11) x's shape,
// P[11 .. 19) index's shape, P[19] x offset, P[20] index offset, P[21] src
// offset, P[22] out offset. x, index and src are contiguous.
#include "common.glsl"
#include "dtype.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE x[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer Idx { int64_t idx[]; };
layout(std430, set = 0, binding = 4) readonly restrict buffer Src { STYPE src[]; };

void main() {
	uint n = P[0], rank = P[1], axis = P[2];
	for (uint w = gid(); w < n; w += gstride()) {
		// the multi-index q of w in x's shape, and the offset of
		// (q with axis coordinate 0) in index's shape
		uint rem = w, base = 0u, istride = 1u, axisStride = 1u, qa = 0u;
		bool inside = true;
		for (uint d = rank; d > 0u; d--) {
			uint a = d - 1u;
			uint s = P[3u + a];
			uint c = rem % s;
			rem /= s;
			uint is = P[11u + a];
			if (a == axis) {
				qa = c;
				axisStride = istride;
			} else {
				if (c >= is) {
					inside = false;
				}
				base += c * istride;
			}
			istride *= is;
		}
		CTYPE acc = LD(x[P[19] + w]);
		if (inside) {
			uint K = P[11u + axis];
			for (uint k = 0u; k < K; k++) {
				uint p = base + k * axisStride;
				if (idx[P[20] + p] == int64_t(qa)) {
#if IS_BOOL
					acc = acc | LD(src[P[21] + p]);
#else
					acc = acc + LD(src[P[21] + p]);
#endif
				}
			}
		}
		o[P[22] + w] = ST(acc);
	}
}
