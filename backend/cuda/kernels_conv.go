package cuda

import "github.com/emberml/ember/backend"

// The convolution family: im2col (per element size: it moves bits) and
// col2im (per dtype: it adds), the two halves of Conv2d and
// ConvTranspose2d around a batched GEMM (Backend.matmul). Both use the
// struct Cv of geometry; one thread computes one output element.
//
//   - im2col: col [N, C·kh·kw, Ho·Wo] from x [N, C, H, W] (any strides):
//     col[n, (c·kh+ky)·kw+kx, oy·Wo+ox] = x[n, c, oy·sh−ph+ky·dh, ox·sw−pw+kx·dw],
//     0 outside the image (zero padding).
//   - col2im, the adjoint, in gather form (no atomics, deterministic):
//     out[n, c, oy, ox] = Σ col[n, (c·kh+ky)·kw+kx, iy·W+ix] over the taps
//     with oy = iy·sh−ph+ky·dh and ox likewise; here H, W are the grid the
//     columns live on (the transposed convolution's input) and Ho, Wo the
//     output image. Floats accumulate in their compute type, integers wrap.

type convSpec struct {
	Name, T, S, A, Load, Store string
}

const convStruct = `
struct Cv { i64 n, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, xs0, xs1, xs2, xs3; };
`

var im2colTmpl = mustTemplate("im2col", convStruct+`
typedef {{.T}} T;
extern "C" __global__ void {{.Name}}(Cv G, u64 pcol, u64 px) {
	T* col = (T*)pcol;
	const T* x = (const T*)px;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 t = i;
		const i64 ox = t % G.Wo; t /= G.Wo;
		const i64 oy = t % G.Ho; t /= G.Ho;
		const i64 kx = t % G.kw; t /= G.kw;
		const i64 ky = t % G.kh; t /= G.kh;
		const i64 c = t % G.C;
		const i64 n = t / G.C;
		const i64 iy = oy * G.sh - G.ph + ky * G.dh;
		const i64 ix = ox * G.sw - G.pw + kx * G.dw;
		T v = (T)0;
		if (iy >= 0 && iy < G.H && ix >= 0 && ix < G.W) v = x[n * G.xs0 + c * G.xs1 + iy * G.xs2 + ix * G.xs3];
		col[i] = v;
	}
}
`)

var col2imTmpl = mustTemplate("col2im", convStruct+`
typedef {{.S}} S;
typedef {{.A}} A;
extern "C" __global__ void {{.Name}}(Cv G, u64 pout, u64 pcol) {
	S* out = (S*)pout;
	const S* col = (const S*)pcol;
	const i64 L = G.H * G.W;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 t = i;
		const i64 ox = t % G.Wo; t /= G.Wo;
		const i64 oy = t % G.Ho; t /= G.Ho;
		const i64 c = t % G.C;
		const i64 n = t / G.C;
		A acc = (A)0;
		const S* base = col + (n * G.C + c) * G.kh * G.kw * L;
		for (i64 ky = 0; ky < G.kh; ky++) {
			const i64 ty = oy + G.ph - ky * G.dh;
			if (ty < 0 || ty % G.sh != 0 || ty / G.sh >= G.H) continue;
			const i64 iy = ty / G.sh;
			for (i64 kx = 0; kx < G.kw; kx++) {
				const i64 tx = ox + G.pw - kx * G.dw;
				if (tx < 0 || tx % G.sw != 0 || tx / G.sw >= G.W) continue;
				const S raw = base[(ky * G.kw + kx) * L + iy * G.W + tx / G.sw];
				acc += (A){{.Load}};
			}
		}
		out[i] = {{.Store}};
	}
}
`)

// col2imSource renders col2im for dt (not Bool).
func col2imSource(dt backend.DType, name string) string {
	c := ctypeOf(dt)
	sp := convSpec{Name: name, S: c.S, A: c.C, Load: ld(c, "raw"), Store: st(c, "acc")}
	if c.Kind != 'f' {
		sp.A, sp.Store = "u64", "(S)acc"
	}
	return render(col2imTmpl, sp)
}
