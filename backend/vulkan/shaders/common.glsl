// common.glsl: what every Ember compute shader starts with. The storage
// extensions let buffers hold 8-, 16- and 64-bit elements that shaders
// convert to 32- or 64-bit values for arithmetic (no 8- or 16-bit
// arithmetic capability is needed); HAVE_F64 (every build but the
// "nof64" variants) enables double precision.
//
// Binding 0 of set 0 is the dispatch's parameter block P (32-bit words,
// written by the host per dispatch); data buffers follow at 1, 2, ...
// Specialization constant 0 is the workgroup size.

#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_control_flow_attributes : enable

#ifndef LOCAL_SIZE_2D
layout(local_size_x_id = 0) in;
#endif

layout(std430, set = 0, binding = 0) readonly buffer Params { uint P[]; };

uint64_t P64(uint i) { return packUint2x32(uvec2(P[i], P[i + 1u])); }
int64_t PI64(uint i) { return int64_t(P64(i)); }
float PF(uint i) { return uintBitsToFloat(P[i]); }
#ifdef HAVE_F64
double PD(uint i) { return packDouble2x32(uvec2(P[i], P[i + 1u])); }
#endif

// The grid-stride loop bounds of 1-d dispatches.
uint gid() { return gl_GlobalInvocationID.x; }
uint gstride() { return gl_NumWorkGroups.x * gl_WorkGroupSize.x; }

// ---- 16-bit floats (bit-exact with Go's x448/float16 and ir.BF16*) ----

// f16_to_f32 widens IEEE binary16 bits exactly (subnormals, Inf, NaN
// with its payload).
float f16_to_f32(uint h) {
	uint s = (h & 0x8000u) << 16;
	uint e = (h >> 10) & 0x1fu;
	uint m = h & 0x3ffu;
	if (e == 0u) {
		// zero or subnormal: m * 2^-24, exact in float32
		float f = float(m) * 5.9604644775390625e-8;
		return (s != 0u) ? -f : f;
	}
	if (e == 31u) {
		return uintBitsToFloat(s | 0x7f800000u | (m << 13));
	}
	return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}

// f32_to_f16 rounds to the nearest binary16, ties to even (x448/float16's
// f32bitsToF16bits, itself Kathryn Long's half crate).
uint f32_to_f16(float f) {
	uint u = floatBitsToUint(f);
	uint sign = u & 0x80000000u;
	uint ex = u & 0x7f800000u;
	uint coef = u & 0x007fffffu;
	uint hs = sign >> 16;
	if (ex == 0x7f800000u) {
		uint nanBit = (coef != 0u) ? 0x0200u : 0u;
		return hs | 0x7c00u | nanBit | (coef >> 13);
	}
	int he = int(ex >> 23) - 127 + 15;
	if (he >= 0x1f) {
		return hs | 0x7c00u;
	}
	if (he <= 0) {
		if (14 - he > 24) {
			return hs;
		}
		uint c = coef | 0x00800000u;
		uint hc = c >> uint(14 - he);
		uint rb = 1u << uint(13 - he);
		if ((c & rb) != 0u && (c & (3u * rb - 1u)) != 0u) {
			hc++;
		}
		return hs | hc;
	}
	uint r = hs | (uint(he) << 10) | (coef >> 13);
	if ((coef & 0x1000u) != 0u && (coef & 0x2fffu) != 0u) {
		r++;
	}
	return r;
}

float bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }

// f32_to_bf16 rounds to the nearest bfloat16, ties to even (PyTorch's
// round_to_nearest_even); NaN stays a quiet NaN with its sign.
uint f32_to_bf16(float f) {
	uint b = floatBitsToUint(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) { // NaN, tested on the bits
		return (b >> 16) | 0x40u;
	}
	return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

#ifdef HAVE_F64
// f64_to_f32_odd rounds d to float with round-to-odd (exact values kept,
// inexact ones truncated toward zero with the last bit set), so that a
// second rounding to a 16-bit format is the correct single rounding
// (Boldo and Melquiond 2008).
float f64_to_f32_odd(double d) {
	float r = float(d);
	if (double(r) == d || isnan(d)) {
		return r;
	}
	uint bits = floatBitsToUint(r);
	if (abs(double(r)) > abs(d)) {
		bits--;
	}
	return uintBitsToFloat(bits | 1u);
}
uint f64_to_f16(double d) { return f32_to_f16(f64_to_f32_odd(d)); }
uint f64_to_bf16(double d) { return f32_to_bf16(f64_to_f32_odd(d)); }
#endif
