#version 450
// unary.comp: out = op(x) elementwise (KindUnary), one variant per dtype;
// the op is specialization constant 1 (an ir.UnaryOp).
#include "common.glsl"
#include "dtype.glsl"
#include "dmath.glsl"
#include "ew.glsl"
#include "bits32.glsl"
#include "unary_ops.glsl"

layout(constant_id = 1) const uint OP = 1u;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };
#if DT_BITS == 32
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out4 { uvec4 o4[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In04 { uvec4 a4[]; };
#endif

#define f(x) ST(un_apply(OP, LD(x)))

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
#if DT_BITS == 32
		if (ew_vec4() && !ew_scalar(1u)) {
			uint n4 = n >> 2u, ao4 = ew_off(1u) >> 2u, oo4 = oo >> 2u;
			for (uint i = gid(); i < n4; i += gstride()) {
				uvec4 v = a4[ao4 + i];
				o4[oo4 + i] = uvec4(TO_BITS(f(FROM_BITS(v.x))), TO_BITS(f(FROM_BITS(v.y))),
					TO_BITS(f(FROM_BITS(v.z))), TO_BITS(f(FROM_BITS(v.w))));
			}
			for (uint i = (n4 << 2u) + gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ew_off(1u) + i]);
			}
			return;
		}
#endif
		uint ao = ew_off(1u);
		if (ew_scalar(1u)) {
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ao]);
			}
		} else {
			// A plain base + i index, which compilers vectorize across
			// invocations (a multiplied one becomes a gather on lavapipe).
			for (uint i = gid(); i < n; i += gstride()) {
				o[oo + i] = f(a[ao + i]);
			}
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = f(a[p.y]);
	}
}
