#version 450
// where.comp: out = cond ? x : y elementwise with broadcasting
// (KindWhere), one variant per element width (values are copied bit for
// bit; WBITS is 8, 16, 32 or 64).
#include "common.glsl"
#include "ew.glsl"

#if WBITS == 64
#define WTYPE uint64_t
#elif WBITS == 32
#define WTYPE uint
#elif WBITS == 16
#define WTYPE uint16_t
#else
#define WTYPE uint8_t
#endif

layout(std430, set = 0, binding = 1) writeonly buffer Out { WTYPE o[]; };
layout(std430, set = 0, binding = 2) readonly buffer Cond { uint8_t c[]; };
layout(std430, set = 0, binding = 3) readonly buffer In1 { WTYPE a[]; };
layout(std430, set = 0, binding = 4) readonly buffer In2 { WTYPE b[]; };

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
		for (uint i = gid(); i < n; i += gstride()) {
			o[oo + i] = uint(c[ew_index(1u, i)]) != 0u ? a[ew_index(2u, i)] : b[ew_index(3u, i)];
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = uint(c[p.y]) != 0u ? a[p.z] : b[p.w];
	}
}
