#version 450
// cast.comp: out = x converted to the dtype ODT (KindCast), one variant
// per source dtype (store.glsl gives the conversions).
#include "common.glsl"
#include "dtype.glsl"
#include "ew.glsl"
#include "store.glsl"

layout(std430, set = 0, binding = 2) readonly restrict buffer In0 { STYPE a[]; };

void cast1(uint oi, uint ai) {
#if IS_FLOAT && !defined(DT_F64)
	// A float32-representable source goes to F32, F16, BF16 and Bool on its
	// bits, not through double: GPUs that flush float32 subnormals to zero
	// in conversions and compares (NVIDIA's) would lose them, and NaN
	// payloads would be canonicalized.
	CTYPE x = LD(a[ai]);
	uint u = floatBitsToUint(x);
	switch (ODT) {
	case 2u: case 3u: o_u32[oi] = u; return;
	case 4u: o_u16[oi] = uint16_t(f32_to_f16(x)); return;
	case 5u: o_u16[oi] = uint16_t(f32_to_bf16(x)); return;
	case 14u: o_u8[oi] = uint8_t((u & 0x7fffffffu) != 0u ? 1u : 0u); return;
	}
	store_d(oi, double(x));
#elif IS_FLOAT
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
