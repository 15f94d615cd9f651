#version 450
// random.comp: fills a contiguous output of dtype ODT from the
// counter-based Philox4x32-10 generator (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), as the cuda backend does: element
// i uses counter offset+i under the device seed as key; its four 32-bit
// outputs give two 53-bit uniforms u1, u2 in [0, 1).
//
// P[0] n, P[1] the distribution (ir.DistributionKind), P[2..3] seed,
// P[4..5] offset, P[6..7] A, P[8..9] B (doubles). Semantics are
// backend/flex's: Default and Uniform are uniform on [A, B) ([0, 1) for
// Default), resampled when rounding to the dtype would reach B, floored
// for integer dtypes, Bernoulli(0.5) for Bool; Normal is A + B·N(0, 1) by
// Box-Muller; Bernoulli is 1 with probability A.
#include "common.glsl"
#include "dmath.glsl"
#include "store.glsl"

uvec4 philox(uvec4 c, uint k0, uint k1) {
	for (int r = 0; r < 10; r++) {
		uint hi0, lo0, hi1, lo1;
		umulExtended(0xD2511F53u, c.x, hi0, lo0);
		umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
		c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	return c;
}

double u53(uint a, uint b) {
	return double((uint64_t(a >> 5) << 26) | uint64_t(b >> 6)) * (1.0LF / 9007199254740992.0LF);
}

// rounded is v rounded to the output's float dtype (v itself otherwise).
double rounded(double v) {
	switch (ODT) {
	case 2u: case 3u: return double(float(v));
	case 4u: return double(f16_to_f32(f64_to_f16(v)));
	case 5u: return double(bf16_to_f32(f64_to_bf16(v)));
	}
	return v;
}

void main() {
	uint n = P[0];
	uint kind = P[1];
	uint k0 = P[2], k1 = P[3];
	uint64_t offset = P64(4u);
	double A = PD(6u), B = PD(8u);
	bool isInt = ODT >= 6u && ODT <= 13u;
	for (uint i = gid(); i < n; i += gstride()) {
		uint64_t ctr = offset + uint64_t(i);
		uvec4 c = philox(uvec4(uint(ctr), uint(ctr >> 32), 0u, 0u), k0, k1);
		double u1 = u53(c.x, c.y), u2 = u53(c.z, c.w);
		double v;
		if (kind == 2u) {
			v = A + B * (sqrt(-2.0LF * d_log(1.0LF - u1)) * d_cos(2.0LF * D_PI * u2));
		} else if (kind == 3u) {
			v = u1 < A ? 1.0LF : 0.0LF;
		} else if (ODT == 14u) {
			v = u1 < 0.5LF ? 1.0LF : 0.0LF;
		} else {
			double lo = kind == 1u ? A : 0.0LF, hi = kind == 1u ? B : 1.0LF;
			v = lo;
			for (uint t = 0u; t < 64u; t++) {
				double u = (t & 1u) != 0u ? u2 : u1;
				if (t > 0u && (t & 1u) == 0u) {
					uvec4 d = philox(uvec4(uint(ctr), uint(ctr >> 32), t / 2u, 0u), k0, k1);
					u1 = u53(d.x, d.y);
					u2 = u53(d.z, d.w);
					u = u1;
				}
				precise double w = lo + u * (hi - lo);
				v = w;
				if (isInt) {
					v = floor(v);
				}
				if (!(hi > lo) || rounded(v) < hi) {
					break;
				}
			}
		}
		store_d(i, v);
	}
}
