package cuda

import (
	"encoding/binary"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindMaxPool2d, (*Backend).maxPool2d, poolDType)
	kernels.Set(ir.KindMaxPool2dGrad, (*Backend).maxPool2dGrad, poolDType)
}

// poolDType reports the dtypes the max-pool kernels run: F32 (and Flex32,
// stored as F32) and F64. Other dtypes are lowered by the caller into the
// kinds' decompositions (ir's decomposeMaxPool2d and
// decomposeMaxPool2dGrad), whose every step rounds to the dtype.
func poolDType(dt backend.DType) bool {
	return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64
}

// The max-pool kernels compute, one thread per output element, what the
// decompositions compute with strided window views (PyTorch's max_pool2d
// and its gradient):
//
//   - forward: y[n, c, oy, ox] is the maximum of the window's taps in
//     kernel row-major order, a tap outside the image being −∞ (the
//     decomposition's −∞ padding); a NaN tap makes it NaN;
//   - gradient, in gather form (no atomics, deterministic): each window
//     sends its g to one tap, the first in kernel row-major order equal to
//     the window's y (or NaN when y is NaN); dx[n, c, iy, ix] sums, from the
//     last kernel offset down to the first, the term of the window that has
//     (iy, ix) at that offset (its g when that offset is its selected tap,
//     +0 otherwise), each sum rounded to the dtype, as the decomposition
//     adds its full-size terms. A 1×1 kernel sends every g to its tap.
const poolStruct = `
struct Pl { i64 n, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo; };
`

var maxPoolTmpl = mustTemplate("max_pool2d", poolStruct+`
typedef {{.T}} T;
extern "C" __global__ void {{.Name}}(Pl G, u64 py, u64 px) {
	T* y = (T*)py;
	const T* x = (const T*)px;
	const T ninf = (T)(-EMBER_INF);
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 t = i;
		const i64 ox = t % G.Wo; t /= G.Wo;
		const i64 oy = t % G.Ho;
		const i64 nc = t / G.Ho;
		const T* xb = x + nc * G.H * G.W;
		T m = ninf;
		bool first = true;
		for (i64 ky = 0; ky < G.kh; ky++) {
			const i64 iy = oy * G.sh - G.ph + ky * G.dh;
			for (i64 kx = 0; kx < G.kw; kx++) {
				const i64 ix = ox * G.sw - G.pw + kx * G.dw;
				const T v = (iy >= 0 && iy < G.H && ix >= 0 && ix < G.W) ? xb[iy * G.W + ix] : ninf;
				if (first) {
					m = v;
					first = false;
				} else if (m == m && (v > m || v != v)) {
					m = v;
				}
			}
		}
		y[i] = m;
	}
}
`)

var maxPoolGradTmpl = mustTemplate("max_pool2d_grad", poolStruct+`
typedef {{.T}} T;
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
extern "C" __global__ void {{.Name}}(Pl G, u64 pdx, u64 px, u64 py, u64 pg) {
	T* dx = (T*)pdx;
	const T* x = (const T*)px;
	const T* y = (const T*)py;
	const T* g = (const T*)pg;
	const T ninf = (T)(-EMBER_INF);
	const i64 K = G.kh * G.kw;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < G.n; i += (i64)gridDim.x * blockDim.x) {
		i64 t = i;
		const i64 ix = t % G.W; t /= G.W;
		const i64 iy = t % G.H;
		const i64 nc = t / G.H;
		const T* xb = x + nc * G.H * G.W;
		const T* yb = y + nc * G.Ho * G.Wo;
		const T* gb = g + nc * G.Ho * G.Wo;
		T acc = (T)0;
		for (i64 k = K - 1; k >= 0; k--) {
			const i64 ky = k / G.kw, kx = k % G.kw;
			T term = (T)0;
			const i64 ty = iy + G.ph - ky * G.dh, tx = ix + G.pw - kx * G.dw;
			if (ty >= 0 && tx >= 0 && ty % G.sh == 0 && tx % G.sw == 0 && ty / G.sh < G.Ho && tx / G.sw < G.Wo) {
				const i64 oy = ty / G.sh, ox = tx / G.sw;
				const T yv = yb[oy * G.Wo + ox];
				i64 sel = K == 1 ? 0 : -1;
				for (i64 j = 0; j < K && sel < 0; j++) {
					const i64 jy = oy * G.sh - G.ph + (j / G.kw) * G.dh;
					const i64 jx = ox * G.sw - G.pw + (j % G.kw) * G.dw;
					const T v = (jy >= 0 && jy < G.H && jx >= 0 && jx < G.W) ? xb[jy * G.W + jx] : ninf;
					if (v == yv || (v != v && yv != yv)) sel = j;
				}
				if (sel == k) term = gb[oy * G.Wo + ox];
			}
			acc = k == K - 1 ? term : add_rn(acc, term);
		}
		dx[i] = acc;
	}
}
`)

// poolSpec names a max-pool kernel and its element type.
type poolSpec struct{ Name, T string }

// poolKernelNames returns the names of the forward and gradient kernels
// of dt (F32 and Flex32 share F32's).
func poolKernelNames(dt backend.DType) (fwd, grad string, c string) {
	c = "float"
	name := "f32"
	if dt == backend.F64 {
		c, name = "double", "f64"
	}
	return "ember_max_pool2d_" + name, "ember_max_pool2d_grad_" + name, c
}

// plBlob encodes the C struct Pl for n outputs over an input [.., H, W]
// and an output [.., Ho, Wo] under o.
func plBlob(n, h, w, ho, wo int, o ir.PoolOptions) []byte {
	vals := []int{n, h, w, o.Kernel[0], o.Kernel[1], max(o.Stride[0], 1), max(o.Stride[1], 1),
		o.Padding[0], o.Padding[1], max(o.Dilation[0], 1), max(o.Dilation[1], 1), ho, wo}
	buf := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(v)))
	}
	return buf
}

// maxPool2d is the kernel of KindMaxPool2d: op.In[0] [N, C, H, W] pooled
// under op.Attrs.Pool into op.Shape [N, C, Ho, Wo].
func (b *Backend) maxPool2d(op ir.Op) ir.Outputs {
	x := b.Contiguous(tensorOf(op.In[0]))
	out := b.emptyOf(op.Shape, x.dtype)
	total := backend.NumElements(op.Shape)
	if total == 0 {
		return ir.One(out)
	}
	name, _, c := poolKernelNames(x.dtype)
	k := b.kernel(name, func() string { return render(maxPoolTmpl, poolSpec{Name: name, T: c}) })
	b.Launch(k, grid1(total, blockSize), block1, 0,
		plBlob(total, x.shape[2], x.shape[3], op.Shape[2], op.Shape[3], op.Attrs.Pool), out.Ptr(), x.Ptr())
	return ir.One(out)
}

// maxPool2dGrad is the kernel of KindMaxPool2dGrad: the gradient with
// respect to x [N, C, H, W] of MaxPool2d's output y [N, C, Ho, Wo] given
// its gradient g (op.In[0..2]), of x's shape.
func (b *Backend) maxPool2dGrad(op ir.Op) ir.Outputs {
	x := b.Contiguous(tensorOf(op.In[0]))
	y := b.Contiguous(tensorOf(op.In[1]))
	g := b.Contiguous(tensorOf(op.In[2]))
	out := b.emptyOf(op.Shape, x.dtype)
	total := backend.NumElements(op.Shape)
	if total == 0 {
		return ir.One(out)
	}
	if backend.NumElements(y.shape) == 0 {
		return ir.One(b.full(op.Shape, x.dtype, 0))
	}
	_, name, c := poolKernelNames(x.dtype)
	k := b.kernel(name, func() string { return render(maxPoolGradTmpl, poolSpec{Name: name, T: c}) })
	b.Launch(k, grid1(total, blockSize), block1, 0,
		plBlob(total, x.shape[2], x.shape[3], y.shape[2], y.shape[3], op.Attrs.Pool), out.Ptr(), x.Ptr(), y.Ptr(), g.Ptr())
	return ir.One(out)
}

// srcMaxPool and srcMaxPoolGrad are the max-pool kernels of dt
// (Backend.maxPool2d, Backend.maxPool2dGrad).
func srcMaxPool(dt backend.DType) (string, string) {
	name, _, c := poolKernelNames(dt)
	return name, render(maxPoolTmpl, poolSpec{Name: name, T: c})
}

func srcMaxPoolGrad(dt backend.DType) (string, string) {
	_, name, c := poolKernelNames(dt)
	return name, render(maxPoolGradTmpl, poolSpec{Name: name, T: c})
}
