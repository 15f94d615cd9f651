#version 450
// conv_transpose2d.comp: 2-d transposed convolution (KindConvTranspose2d,
// PyTorch's conv_transpose2d with stride, padding, output padding,
// dilation and groups) of x [N, Cin, H, W] with w [Cin, Cout/groups, kH,
// kW], both contiguous: each invocation gathers the contributions to one
// output element, accumulating in CTYPE over (ci, kh, kw) in order.
//
// P[0] n (output elements), P[1] N, P[2] Cin, P[3] H, P[4] W, P[5] Cout,
// P[6] Ho, P[7] Wo, P[8] kH, P[9] kW, P[10] stride h, P[11] stride w,
// P[12] pad h, P[13] pad w, P[14] dilation h, P[15] dilation w, P[16]
// groups, P[17] x offset, P[18] w offset, P[19] out offset.
#include "common.glsl"
#include "dtype.glsl"

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer X { STYPE x[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer Wt { STYPE wt[]; };

void main() {
	uint n = P[0], Cin = P[2], H = P[3], W = P[4], Cout = P[5], Ho = P[6], Wo = P[7];
	uint kH = P[8], kW = P[9];
	int sh = int(P[10]), sw = int(P[11]), ph = int(P[12]), pw = int(P[13]), dh = int(P[14]), dw = int(P[15]);
	uint G = P[16];
	uint cinG = Cin / G, coutG = Cout / G;
	for (uint e = gid(); e < n; e += gstride()) {
		uint ow = e % Wo;
		uint t = e / Wo;
		uint oh = t % Ho;
		t /= Ho;
		uint co = t % Cout;
		uint nb = t / Cout;
		uint g = co / coutG, cg = co % coutG;
		CTYPE acc = CTYPE(0);
		for (uint ci = 0u; ci < cinG; ci++) {
			uint cin = g * cinG + ci;
			uint xc = (nb * Cin + cin) * H;
			uint wc = ((cin * coutG + cg) * kH) * kW;
			for (uint kh = 0u; kh < kH; kh++) {
				int nh = int(oh) + ph - int(kh) * dh;
				if (nh < 0 || nh % sh != 0) continue;
				int ih = nh / sh;
				if (ih >= int(H)) continue;
				for (uint kw = 0u; kw < kW; kw++) {
					int nw = int(ow) + pw - int(kw) * dw;
					if (nw < 0 || nw % sw != 0) continue;
					int iw = nw / sw;
					if (iw >= int(W)) continue;
					acc += LD(x[P[17] + (xc + uint(ih)) * W + uint(iw)]) * LD(wt[P[18] + wc + kh * kW + kw]);
				}
			}
		}
		o[P[19] + e] = ST(acc);
	}
}
