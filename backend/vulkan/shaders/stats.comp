#version 450
// stats.comp: the micro-benchmarks of PerformanceStats, selected by
// specialization constant 1: 1 an F32 FMA loop, 2 an F64 FMA loop (8
// independent chains per invocation, 2 FLOP per FMA), 3 16-byte reads, 4
// 16-byte writes. P[0] iterations (FMA) or 16-byte words (memory).
#include "common.glsl"

layout(constant_id = 1) const uint MODE = 1u;

layout(std430, set = 0, binding = 1) restrict buffer Out { uvec4 o[]; };
layout(std430, set = 0, binding = 1) restrict buffer OutF { float of[]; };
layout(std430, set = 0, binding = 1) restrict buffer OutD { double od[]; };

void main() {
	uint n = P[0];
	uint t = gid();
	if (MODE == 1u) {
		float a0 = float(t), a1 = a0 + 1.0, a2 = a0 + 2.0, a3 = a0 + 3.0, a4 = a0 + 4.0, a5 = a0 + 5.0, a6 = a0 + 6.0, a7 = a0 + 7.0;
		const float m = 0.999999, c = 1e-7;
		for (uint i = 0u; i < n; i++) {
			a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
			a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
		}
		float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
		if (s == -1.2345) of[0] = s; // never true: keeps the loop
	} else if (MODE == 2u) {
		double a0 = double(t), a1 = a0 + 1.0LF, a2 = a0 + 2.0LF, a3 = a0 + 3.0LF, a4 = a0 + 4.0LF, a5 = a0 + 5.0LF, a6 = a0 + 6.0LF, a7 = a0 + 7.0LF;
		const double m = 0.999999LF, c = 1e-7LF;
		for (uint i = 0u; i < n; i++) {
			a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
			a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
		}
		double s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
		if (s == -1.2345LF) od[0] = s;
	} else if (MODE == 3u) {
		uint x = 0u;
		for (uint i = t; i < n; i += gstride()) {
			uvec4 v = o[i];
			x ^= v.x ^ v.y ^ v.z ^ v.w;
		}
		if (x == 0x9e3779b9u) o[0].x = x; // data-dependent: the reads stay
	} else {
		for (uint i = t; i < n; i += gstride()) {
			o[i] = uvec4(i, 1u, 2u, 3u);
		}
	}
}
