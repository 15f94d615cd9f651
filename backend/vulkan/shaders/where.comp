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

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { WTYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer Cond { uint8_t c[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer In1 { WTYPE a[]; };
layout(std430, set = 0, binding = 4) readonly restrict buffer In2 { WTYPE b[]; };

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
		uint co = ew_off(1u), cs = ew_step(1u), ao = ew_off(2u), as = ew_step(2u), bo = ew_off(3u), bs = ew_step(3u);
		for (uint i = gid(); i < n; i += gstride()) {
			o[oo + i] = uint(c[co + i * cs]) != 0u ? a[ao + i * as] : b[bo + i * bs];
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = uint(c[p.y]) != 0u ? a[p.z] : b[p.w];
	}
}
