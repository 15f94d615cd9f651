#version 450
// compare.comp: out (Bool) = op(x, y) elementwise with broadcasting
// (KindBinary comparisons), one variant per dtype; the op is
// specialization constant 1 (an ir.BinaryOp from Eq to Ge).
#include "common.glsl"
#include "dtype.glsl"
#include "ew.glsl"
#include "binary_ops_cmp.glsl"

layout(constant_id = 1) const uint OP = 12u;

layout(std430, set = 0, binding = 1) writeonly buffer Out { uint8_t o[]; };
layout(std430, set = 0, binding = 2) readonly buffer In0 { STYPE a[]; };
layout(std430, set = 0, binding = 3) readonly buffer In1 { STYPE b[]; };

#define f(x, y) uint8_t(cmp_apply(OP, LD(x), LD(y)))

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
		for (uint i = gid(); i < n; i += gstride()) {
			o[oo + i] = f(a[ew_index(1u, i)], b[ew_index(2u, i)]);
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = f(a[p.y], b[p.z]);
	}
}
