#version 450
// arange.comp: out[i] = start + i*step for a contiguous output of dtype
// ODT (KindArange). P[0] n, P[1] 1 for the exact integer form (P[2..3]
// start and P[4..5] step as int64, wrapping arithmetic) or 0 for the
// float form (P[2..3] start and P[4..5] step as doubles, each element
// computed in double and converted as Cast does).
#include "common.glsl"
#include "store.glsl"

void main() {
	uint n = P[0];
	if (P[1] != 0u) {
		int64_t start = PI64(2u), step = PI64(4u);
		for (uint i = gid(); i < n; i += gstride()) {
			store_i(i, start + int64_t(i) * step);
		}
		return;
	}
	double start = PD(2u), step = PD(4u);
	for (uint i = gid(); i < n; i += gstride()) {
		precise double prod = double(i) * step;
		precise double v = start + prod;
		store_d(i, v);
	}
}
