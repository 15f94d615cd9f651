#version 450
// col2im.comp: the gather half of a transposed convolution in matmul
// form (KindConvTranspose2d): with col[n, g, k, q] = Σ_ci w[g*CinG + ci,
// c, kh, kw] · x[n, g*CinG + ci, q] for k = (c, kh, kw) and input pixel
// q = (ih, iw), each invocation sums, for one output element (n, g*CoutG
// + c, oh, ow), the col entries of the (kh, kw) whose input pixel maps
// onto it (oh = ih*sh - ph + kh*dh and likewise for w), in (kh, kw)
// order, in CTYPE. One variant per float dtype.
//
// P[0] n (output elements), P[1] G, P[2] CoutG, P[3] H, P[4] W, P[5] kH,
// P[6] kW, P[7] Ho, P[8] Wo, P[9] sh, P[10] sw, P[11] ph, P[12] pw,
// P[13] dh, P[14] dw, P[15] the output's offset.
#include "common.glsl"
#include "dtype.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer Col { STYPE col[]; };

void main() {
	uint n = P[0], G = P[1], CoutG = P[2], H = P[3], W = P[4], kH = P[5], kW = P[6], Ho = P[7], Wo = P[8];
	int sh = int(P[9]), sw = int(P[10]), ph = int(P[11]), pw = int(P[12]), dh = int(P[13]), dw = int(P[14]);
	uint HW = H * W, K = CoutG * kH * kW;
	for (uint e = gid(); e < n; e += gstride()) {
		uint ow = e % Wo;
		uint t = e / Wo;
		uint oh = t % Ho;
		t /= Ho;
		uint co = t % (G * CoutG);
		uint nb = t / (G * CoutG);
		uint g = co / CoutG, c = co % CoutG;
		uint base = (nb * G + g) * K * HW;
		CTYPE acc = CTYPE(0);
		for (uint kh = 0u; kh < kH; kh++) {
			int nh = int(oh) + ph - int(kh) * dh;
			if (nh < 0 || nh % sh != 0 || nh / sh >= int(H)) continue;
			for (uint kw = 0u; kw < kW; kw++) {
				int nw = int(ow) + pw - int(kw) * dw;
				if (nw < 0 || nw % sw != 0 || nw / sw >= int(W)) continue;
				uint k = (c * kH + kh) * kW + kw;
				acc += LD(col[base + k * HW + uint(nh / sh) * W + uint(nw / sw)]);
			}
		}
		o[P[15] + e] = ST(acc);
	}
}
