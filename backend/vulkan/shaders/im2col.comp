#version 450
// im2col.comp: the patches of a 2-d convolution's input as the columns
// of a matrix (the matmul formulation of KindConv2d): col[n, g, k, p] for
// batch n, group g, k = (ci, kh, kw) over the group's input channels and
// the kernel, p = (oh, ow) over the output, is x[n, g*CinG + ci,
// oh*sh - ph + kh*dh, ow*sw - pw + kw*dw], or 0 outside x. One variant
// per element width WBITS (values move bit for bit; all-zero bits are
// zero in every dtype).
//
// P[0] n (col elements), P[1] G, P[2] CinG, P[3] H, P[4] W, P[5] kH,
// P[6] kW, P[7] Ho, P[8] Wo, P[9] sh, P[10] sw, P[11] ph, P[12] pw,
// P[13] dh, P[14] dw, P[15] x offset, P[16] Cin.
#include "common.glsl"
#include "index.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { WTYPE col[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer X { WTYPE x[]; };

void main() {
	uint n = P[0], G = P[1], CinG = P[2], H = P[3], W = P[4], kH = P[5], kW = P[6], Ho = P[7], Wo = P[8];
	int sh = int(P[9]), sw = int(P[10]), ph = int(P[11]), pw = int(P[12]), dh = int(P[13]), dw = int(P[14]);
	uint xoff = P[15], Cin = P[16];
	uint HoWo = Ho * Wo, K = CinG * kH * kW;
	for (uint e = gid(); e < n; e += gstride()) {
		uint p = e % HoWo;
		uint t = e / HoWo;
		uint k = t % K;
		t /= K;
		uint g = t % G;
		uint nb = t / G;
		uint kw = k % kW, kh = (k / kW) % kH, ci = k / (kW * kH);
		int ih = int(p / Wo) * sh - ph + int(kh) * dh;
		int iw = int(p % Wo) * sw - pw + int(kw) * dw;
		if (ih < 0 || ih >= int(H) || iw < 0 || iw >= int(W)) {
			col[e] = WTYPE(0);
		} else {
			col[e] = x[xoff + ((nb * Cin + g * CinG + ci) * H + uint(ih)) * W + uint(iw)];
		}
	}
}
