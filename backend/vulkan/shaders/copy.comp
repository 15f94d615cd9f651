#version 450
// copy.comp: out = x elementwise between any two layouts (materializing
// views, Pad, Cat, Contiguous), one variant per element width WBITS.
// With P[EW_EXTRA] = 1 it fills the output with the bit pattern
// P[EW_EXTRA+1 ..] instead (Full, Pad's border).
#include "common.glsl"
#include "ew.glsl"

#if WBITS == 64
#define WTYPE uint64_t
#define WFILL P64(EW_EXTRA + 1u)
#elif WBITS == 32
#define WTYPE uint
#define WFILL P[EW_EXTRA + 1u]
#elif WBITS == 16
#define WTYPE uint16_t
#define WFILL uint16_t(P[EW_EXTRA + 1u])
#else
#define WTYPE uint8_t
#define WFILL uint8_t(P[EW_EXTRA + 1u])
#endif

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { WTYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { WTYPE a[]; };
#if WBITS == 32
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out4 { uvec4 o4[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In04 { uvec4 a4[]; };
#endif

void main() {
	uint n = P[0];
	bool fill = P[EW_EXTRA] != 0u;
	if (ew_contig()) {
		uint oo = ew_off(0u);
		if (fill) {
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = WFILL;
			}
			return;
		}
#if WBITS == 32
		if (ew_vec4() && !ew_scalar(1u)) {
			uint n4 = n >> 2u, oo4 = oo >> 2u, ao4 = ew_off(1u) >> 2u;
			for (uint i = gid(); i < n4; i += gstride()) {
				o4[oo4 + i] = a4[ao4 + i];
			}
			for (uint i = (n4 << 2u) + gid(); i < n; i += gstride()) {
				o[oo + i] = a[ew_off(1u) + i];
			}
			return;
		}
#endif
		uint ao = ew_off(1u), as = ew_step(1u);
		if (as == 1u) {
			// A plain base + i index (see unary.comp).
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = a[ao + i];
			}
		} else {
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = a[ao];
			}
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = fill ? WFILL : a[p.y];
	}
}
