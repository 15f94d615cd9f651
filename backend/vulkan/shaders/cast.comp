#version 450
// cast.comp: out = x converted to the dtype ODT (KindCast), one variant
// per source dtype (store.glsl gives the conversions).
#include "common.glsl"
#include "dtype.glsl"
#include "ew.glsl"
#include "store.glsl"

layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };

void cast1(uint oi, uint ai) {
#if IS_FLOAT
	store_d(oi, double(LD(a[ai])));
#elif defined(DT_U64)
	store_u(oi, a[ai]);
#elif IS_INT && IS_SIGNED
	store_i(oi, int64_t(LD(a[ai])));
#else
	store_i(oi, int64_t(uint64_t(LD(a[ai]))));
#endif
}

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
		uint ao = ew_off(1u), as = ew_step(1u);
		for (uint i = gid(); i < n; i += gstride()) {
			cast1(oo + i, ao + i * as);
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		cast1(p.x, p.y);
	}
}
