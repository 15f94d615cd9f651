package ndarray

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

// gemm sets c (m×n, row stride ldc) to op(a)·op(b) with gonum's BLAS
// (blas64, gonum's pure-Go implementation unless another is installed),
// op(a) being m×k (a's transpose when ta) and op(b) k×n. Empty products
// give zeros without calling BLAS, which rejects zero strides.
func gemm(ta, tb bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for r := range m {
			clear(c[r*ldc : r*ldc+n])
		}
		return
	}
	ar, ac, br, bc := m, k, k, n
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		ar, ac, tA = k, m, blas.Trans
	}
	if tb {
		br, bc, tB = n, k, blas.Trans
	}
	blas64.Gemm(tA, tB, 1,
		blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// matmul multiplies the last two axes of In[0] and In[1], [..., m, k] ×
// [..., k, n] → op.Shape [..., m, n], broadcasting the batch axes (PyTorch's
// matmul for operands of rank >= 2). Floats run gonum's Dgemm in float64
// and round once to the dtype; integers use a plain loop, wrapping.
func (be *Backend) matmul(op ir.Op) *Tensor {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	ra, rb := len(x.shape), len(y.shape)
	m, k, n := x.shape[ra-2], x.shape[ra-1], y.shape[rb-1]
	batch := op.Shape[:len(op.Shape)-2]
	// The matrix (in units of whole matrices) each operand contributes
	// to each batch of the result.
	xb := strided(batch, broadcastStrides(x.shape[:ra-2], batch), 0)
	yb := strided(batch, broadcastStrides(y.shape[:rb-2], batch), 0)
	out := &Tensor{dtype: op.DType, shape: op.Shape}
	switch classOf(x.dtype) {
	case floatClass:
		out.f = make([]float64, len(xb)*m*n)
		for j := range xb {
			gemm(false, false, m, n, k, x.f[xb[j]*m*k:], k, y.f[yb[j]*k*n:], n, out.f[j*m*n:], n)
		}
	case intClass:
		out.i = matmulInts(x.i, y.i, xb, yb, m, k, n)
	default: // unsigned (inference rejects Bool)
		out.u = matmulInts(x.u, y.u, xb, yb, m, k, n)
	}
	return out.normalize()
}

// matmulInts is the batched product of integer matrices by the plain
// triple loop: batch j multiplies matrix xb[j] of x by matrix yb[j] of y.
func matmulInts[T integer](x, y []T, xb, yb []int, m, k, n int) []T {
	out := make([]T, len(xb)*m*n)
	for j := range xb {
		a, b, c := x[xb[j]*m*k:], y[yb[j]*k*n:], out[j*m*n:]
		for r := range m {
			for p := range k {
				av := a[r*k+p]
				for q := range n {
					c[r*n+q] += av * b[p*n+q]
				}
			}
		}
	}
	return out
}

// conv2d convolves In[0] x [N, Cin, H, W] with In[1] w [Cout, Cin/groups,
// kH, kW] under op.Attrs.Conv (PyTorch's conv2d: a cross-correlation with
// zero padding, no bias), giving op.Shape [N, Cout, Ho, Wo]: per image and
// group, im2col and one Dgemm in float64, rounded once to the dtype.
func (be *Backend) conv2d(op ir.Op) *Tensor {
	x, w := asTensor(op.In[0]), asTensor(op.In[1])
	o := op.Attrs.Conv
	nImg, cIn, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	cOut, ho, wo := op.Shape[1], op.Shape[2], op.Shape[3]
	kh, kw, g := w.shape[2], w.shape[3], o.Groups
	cin, cout := cIn/g, cOut/g // per group
	rows, sp := cin*kh*kw, ho*wo
	geom := unfold.GeomOf(kh, kw, o)
	out := &Tensor{dtype: op.DType, shape: op.Shape, f: make([]float64, ir.NumElements(op.Shape))}
	cols := make([]float64, rows*sp)
	for img := range nImg {
		for gi := range g {
			unfold.Im2col(x.f[(img*cIn+gi*cin)*h*wd:], cin, h, wd, geom, ho, wo, cols)
			gemm(false, false, cout, sp, rows, w.f[gi*cout*rows:], rows, cols, sp, out.f[(img*cOut+gi*cout)*sp:], sp)
		}
	}
	return out.normalize()
}

// convTranspose2d is the adjoint of conv2d under the same options
// (PyTorch's conv_transpose2d, no bias): x [N, Cin, H, W] and w [Cin,
// Cout/groups, kH, kW] give op.Shape [N, Cout, Ho, Wo]. Per image and
// group, one Dgemm (wᵀ·x) in float64 and col2im, rounded once to the
// dtype.
func (be *Backend) convTranspose2d(op ir.Op) *Tensor {
	x, w := asTensor(op.In[0]), asTensor(op.In[1])
	o := op.Attrs.Conv
	nImg, cIn, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	cOut, ho, wo := op.Shape[1], op.Shape[2], op.Shape[3]
	kh, kw, g := w.shape[2], w.shape[3], o.Groups
	cin, cout := cIn/g, w.shape[1] // per group
	rows, sp := cout*kh*kw, h*wd
	geom := unfold.GeomOf(kh, kw, o)
	out := &Tensor{dtype: op.DType, shape: op.Shape, f: make([]float64, ir.NumElements(op.Shape))}
	cols := make([]float64, rows*sp)
	for img := range nImg {
		for gi := range g {
			gemm(true, false, rows, sp, cin, w.f[gi*cin*rows:], rows, x.f[(img*cIn+gi*cin)*sp:], sp, cols, sp)
			unfold.Col2im(cols, cout, ho, wo, geom, h, wd, out.f[(img*cOut+gi*cout)*ho*wo:])
		}
	}
	return out.normalize()
}
