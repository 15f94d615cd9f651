package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindMatmul, (*Backend).matmul, nil) }

// matmul multiplies the last two axes of In[0] and In[1], [..., m, k] x
// [..., k, n] -> op.Shape [..., m, n], broadcasting the leading batch axes
// (PyTorch's matmul for operands of rank >= 2). F32 and F64 run the
// blocked GEMM directly on row- or column-major views (other layouts are
// copied first); F16, BF16 and Flex32 compute in float32 (F16/BF16 rounded
// once at the end); integers use a plain loop in their own type
// (wrapping); Bool is the or-of-ands.
func (be *Backend) matmul(op ir.Op) ir.Outputs {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	dt := x.dtype
	switch {
	case isHalf(dt):
		out := matmul(toF32(x), toF32(y), op.Shape)
		return ir.One(fromCompute(dt, op.Shape, out.data))
	case dt == backend.Bool:
		out := matmul(castTensor(x, backend.I64), castTensor(y, backend.I64), op.Shape)
		return ir.One(castTensor(out, backend.Bool))
	}
	return ir.One(matmul(x, y, op.Shape))
}

// toF32 widens an F16/BF16 tensor to a contiguous float32 one.
func toF32(t *Tensor) *Tensor {
	return newTensor(backend.F32, t.shape, decodeHalf(t.dtype, ints[uint16](t.dense())))
}

// matLayout describes the matrix (last two axes) of t for GEMM (see
// layout.MatrixLayout).
func matLayout(t *Tensor) (trans bool, ld int, ok bool) {
	r := len(t.shape)
	return layout.MatrixLayout(t.shape[r-2], t.shape[r-1], t.strides[r-2], t.strides[r-1])
}

// matDesc is a batched product's geometry: per batch the operands' and
// output's storage offsets, plus the matrix strides or GEMM layouts.
type matDesc struct {
	m, n, k  int
	xs, ys   [2]int // row and column strides of the operands' matrices
	ta, tb   bool   // GEMM layouts (float storage only)
	lda, ldb int
	offs     [][3]int // x, y and out offsets of each batch
}

// matmul runs a product of output shape shape on tensors of equal dtype
// whose storage is fvec[float32], fvec[float64] or an integer ivec.
func matmul(x, y *Tensor, shape []int) *Tensor {
	var d matDesc
	if _, isFloat := x.data.(interface{ gemmStorage() }); isFloat {
		var ok bool
		if d.ta, d.lda, ok = matLayout(x); !ok {
			x = x.contiguous()
			d.ta, d.lda, _ = matLayout(x)
		}
		if d.tb, d.ldb, ok = matLayout(y); !ok {
			y = y.contiguous()
			d.tb, d.ldb, _ = matLayout(y)
		}
	}
	ra, rb := len(x.shape), len(y.shape)
	d.m, d.k, d.n = x.shape[ra-2], x.shape[ra-1], y.shape[rb-1]
	d.xs = [2]int{x.strides[ra-2], x.strides[ra-1]}
	d.ys = [2]int{y.strides[rb-2], y.strides[rb-1]}
	batch := shape[:len(shape)-2]
	nb := numel(batch)
	out := x.data.alloc(nb * d.m * d.n)
	if nb == 0 || d.m == 0 || d.n == 0 || d.k == 0 {
		return newTensor(x.dtype, shape, out)
	}
	xb := broadcastStrides(x.shape[:ra-2], x.strides[:ra-2], batch)
	yb := broadcastStrides(y.shape[:rb-2], y.strides[:rb-2], batch)
	d.offs = make([][3]int, nb)
	mn := d.m * d.n
	it := newIter(batch, []int{0, x.offset, y.offset}, layout.RowMajorStrides(batch), xb, yb)
	sb, sx, sy := it.step(0), it.step(1), it.step(2)
	it.rows(func(o []int, n int) {
		bi, xo, yo := o[0], o[1], o[2]
		for j := 0; j < n; j++ {
			d.offs[bi] = [3]int{xo, yo, bi * mn}
			bi += sb
			xo += sx
			yo += sy
		}
	})
	out.(matmuler).matmulInto(x.data, y.data, &d)
	return newTensor(x.dtype, shape, out)
}

// matmuler is storage that computes batched products into itself.
type matmuler interface {
	matmulInto(x, y storage, d *matDesc)
}

func (p *fvec[T]) gemmStorage() {}

// matmulInto runs one GEMM per batch; many small batches run in parallel.
func (p *fvec[T]) matmulInto(xs, ys storage, d *matDesc) {
	s := *p
	x, y := floats[T](xs), floats[T](ys)
	mn := d.m * d.n
	one := func(o [3]int) {
		switch c := any([]T(s)).(type) {
		case []float32:
			gemmF32(d.ta, d.tb, d.m, d.n, d.k, any([]T(x[o[0]:])).([]float32), d.lda, any([]T(y[o[1]:])).([]float32), d.ldb, c[o[2]:o[2]+mn], d.n, false)
		case []float64:
			gemmF64(d.ta, d.tb, d.m, d.n, d.k, any([]T(x[o[0]:])).([]float64), d.lda, any([]T(y[o[1]:])).([]float64), d.ldb, c[o[2]:o[2]+mn], d.n, false)
		}
	}
	batchParallel(d, one)
}

// matmulInto runs the plain triple loop per batch (wrapping arithmetic).
func (p *ivec[T]) matmulInto(xs, ys storage, d *matDesc) {
	s := *p
	x, y := ints[T](xs), ints[T](ys)
	batchParallel(d, func(o [3]int) {
		c := s[o[2] : o[2]+d.m*d.n]
		for i := 0; i < d.m; i++ {
			row := c[i*d.n : (i+1)*d.n]
			for p := 0; p < d.k; p++ {
				av := x[o[0]+i*d.xs[0]+p*d.xs[1]]
				if av == 0 {
					continue
				}
				yi := o[1] + p*d.ys[0]
				for j := range row {
					row[j] += av * y[yi+j*d.ys[1]]
				}
			}
		}
	})
}

// batchParallel calls one for every batch, spreading batches over
// goroutines when each product is too small to be split by itself.
func batchParallel(d *matDesc, one func(o [3]int)) {
	nb := len(d.offs)
	w := 1
	if work := d.m * d.n * d.k; work < gemmParallelMin {
		w = min(nb, workers(nb*work))
	}
	parallelChunks(nb, w, func(lo, hi int) {
		for _, o := range d.offs[lo:hi] {
			one(o)
		}
	})
}
