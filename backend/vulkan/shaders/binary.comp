#version 450
// binary.comp: out = op(x, y) elementwise with broadcasting (KindBinary
// arithmetic and logical ops), one variant per dtype; the op is
// specialization constant 1 (an ir.BinaryOp).
#include "common.glsl"
#include "dtype.glsl"
#include "dmath.glsl"
#include "ew.glsl"
#include "bits32.glsl"
#include "binary_ops.glsl"

layout(constant_id = 1) const uint OP = 1u;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer In1 { STYPE b[]; };
#if DT_BITS == 32
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out4 { uvec4 o4[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In04 { uvec4 a4[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer In14 { uvec4 b4[]; };
#endif

#define f(x, y) ST(bin_apply(OP, LD(x), LD(y)))

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
#if DT_BITS == 32
		if (ew_vec4()) {
			uint n4 = n >> 2u, oo4 = oo >> 2u;
			bool sa = ew_scalar(1u), sb = ew_scalar(2u);
			uint ao4 = ew_off(1u) >> 2u, bo4 = ew_off(2u) >> 2u;
			uint xs = TO_BITS(a[ew_off(1u)]), ys = TO_BITS(b[ew_off(2u)]);
			for (uint i = gid(); i < n4; i += gstride()) {
				uvec4 u = sa ? uvec4(xs) : a4[ao4 + i];
				uvec4 v = sb ? uvec4(ys) : b4[bo4 + i];
				o4[oo4 + i] = uvec4(TO_BITS(f(FROM_BITS(u.x), FROM_BITS(v.x))), TO_BITS(f(FROM_BITS(u.y), FROM_BITS(v.y))),
					TO_BITS(f(FROM_BITS(u.z), FROM_BITS(v.z))), TO_BITS(f(FROM_BITS(u.w), FROM_BITS(v.w))));
			}
			for (uint i = (n4 << 2u) + gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ew_index(1u, i)], b[ew_index(2u, i)]);
			}
			return;
		}
#endif
		uint ao = ew_off(1u), as = ew_step(1u), bo = ew_off(2u), bs = ew_step(2u);
		if (as == 1u && bs == 1u) {
			// A plain base + i index (see unary.comp).
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ao + i], b[bo + i]);
			}
		} else {
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ao + i * as], b[bo + i * bs]);
			}
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = f(a[p.y], b[p.z]);
	}
}
