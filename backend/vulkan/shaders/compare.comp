#version 450
// compare.comp: out (Bool) = op(x, y) elementwise with broadcasting
// (KindBinary comparisons), one variant per dtype; the op is
// specialization constant 1 (an ir.BinaryOp from Eq to Ge).
#include "common.glsl"
#include "dtype.glsl"
#include "ew.glsl"
#include "binary_ops_cmp.glsl"

layout(constant_id = 1) const uint OP = 12u;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { uint8_t o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer In1 { STYPE b[]; };

#define f(x, y) uint8_t(cmp_apply(OP, LD(x), LD(y)))

void main() {
	uint n = P[0];
	if (ew_contig()) {
		uint oo = ew_off(0u);
		uint ao = ew_off(1u), as = ew_step(1u), bo = ew_off(2u), bs = ew_step(2u);
		for (uint i = gid(); i < n; i += gstride()) {
			o[oo + i] = f(a[ao + i * as], b[bo + i * bs]);
		}
		return;
	}
	for (uint i = gid(); i < n; i += gstride()) {
		uvec4 p = ew_pos(i);
		o[p.x] = f(a[p.y], b[p.z]);
	}
}
