package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindMatmul, (*Backend).matmul, nil) }

// matmul multiplies the last two axes of In[0] and In[1], [..., m, k] x
// [..., k, n] -> op.Shape [..., m, n], broadcasting the leading batch axes
// (PyTorch's matmul for operands of rank >= 2). F32, Flex32 and F64 run
// the packed SIMD GEMM of internal/gemm: a transposed (column-major)
// operand is passed as a transposed GEMM operand without copying, other
// layouts are copied first; a contiguous [..., m, k] times a matrix is one
// GEMM with all batch rows stacked. F16 and BF16 compute in float32 and
// round once at the end, as flex does. Integer and Bool products run on
// flex.
func (be *Backend) matmul(op ir.Op) ir.Outputs {
	x, y := op.In[0], op.In[1]
	switch dt := x.DType(); dt {
	case backend.F32, backend.Flex32:
		if out := matmulT(x, y, dt, op.Shape, be.f32, gemm.Sgemm); out != nil {
			return ir.One(out)
		}
	case backend.F64:
		if out := matmulT(x, y, dt, op.Shape, be.f64, gemm.Dgemm); out != nil {
			return ir.One(out)
		}
	case backend.F16, backend.BF16:
		xf, yf := ir.Cast(be.flex, x, backend.F32), ir.Cast(be.flex, y, backend.F32)
		if out := matmulT(xf, yf, backend.F32, op.Shape, be.f32, gemm.Sgemm); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
	}
	return be.flex.Exec(op)
}

// gemmFunc is gemm.Sgemm or gemm.Dgemm.
type gemmFunc[T float32 | float64] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// operand is one GEMM input: storage, batch strides and offset, layout.
type operand[T float32 | float64] struct {
	data    []T
	strides []int
	off     int
	trans   bool
	ld      int
}

// gemmOperand returns t's GEMM view, copying it into a contiguous buffer
// when its matrix layout is neither row- nor column-major.
func gemmOperand[T float](t host.View[T], alloc func(int) []T) operand[T] {
	shape := t.Shape
	r := len(shape)
	if tr, ld, ok := layout.MatrixLayout(shape[r-2], shape[r-1], t.Strides[r-2], t.Strides[r-1]); ok {
		return operand[T]{data: t.Data, strides: t.Strides, off: t.Offset, trans: tr, ld: ld}
	}
	c := alloc(numel(shape))
	gather(c, t.Data, shape, t.Strides, t.Offset)
	cst := layout.RowMajorStrides(shape)
	return operand[T]{data: c, strides: cst, off: 0, ld: max(shape[r-1], 1)}
}

// gather copies the strided view (shape, st, off) of src into dst in
// row-major order.
func gather[T any](dst, src []T, shape, st []int, off int) {
	if len(shape) == 0 {
		dst[0] = src[off]
		return
	}
	if len(shape) == 1 {
		s := st[0]
		for i := range shape[0] {
			dst[i] = src[off+i*s]
		}
		return
	}
	inner := numel(shape[1:])
	for i := range shape[0] {
		gather(dst[i*inner:(i+1)*inner], src, shape[1:], st[1:], off+i*st[0])
	}
}

// batchParallelWork is the multiply-adds per product below which batched
// products run one per worker instead of each using every worker.
const batchParallelWork = 1 << 20

// matmulT is the float kernel of matmul with output dtype dt and shape
// shape, or nil when an operand is not a host tensor of element type T.
func matmulT[T float](a, b ir.Tensor, dt ir.DType, shape []int, alloc func(int) []T, mm gemmFunc[T]) ir.Tensor {
	x, ok1 := view[T](a)
	y, ok2 := view[T](b)
	if !ok1 || !ok2 {
		return nil
	}
	xs, ys := x.Shape, y.Shape
	ra, rb := len(xs), len(ys)
	m, k, n := xs[ra-2], xs[ra-1], ys[rb-1]
	if k == 0 { // an empty sum: zeros, whatever the operands' layouts
		out := alloc(numel(shape))
		clear(out)
		return wrap(dt, shape, out)
	}
	// [..., m, k] (contiguous) x [k, n]: one GEMM over all stacked rows.
	if rb == 2 && ra > 2 {
		if d, ok := x.Contiguous(); ok {
			rows := numel(xs[:ra-1])
			yo := gemmOperand(y, alloc)
			out := alloc(rows * n)
			mm(false, yo.trans, rows, n, k, 1, d, max(k, 1), yo.data[yo.off:], yo.ld, 0, out, max(n, 1))
			return wrap(dt, shape, out)
		}
	}
	xo, yo := gemmOperand(x, alloc), gemmOperand(y, alloc)
	batch := shape[:len(shape)-2]
	nb := numel(batch)
	out := alloc(nb * m * n)
	if nb == 0 || m == 0 || n == 0 {
		return wrap(dt, shape, out)
	}
	xb := bstrides(xs[:ra-2], xo.strides[:ra-2], batch)
	yb := bstrides(ys[:rb-2], yo.strides[:rb-2], batch)
	one := func(bi int) {
		xoff, yoff := xo.off, yo.off
		rem := bi
		for d := len(batch) - 1; d >= 0; d-- {
			i := rem % batch[d]
			rem /= batch[d]
			xoff += i * xb[d]
			yoff += i * yb[d]
		}
		mm(xo.trans, yo.trans, m, n, k, 1, xo.data[xoff:], xo.ld, yo.data[yoff:], yo.ld, 0, out[bi*m*n:(bi+1)*m*n], n)
	}
	if nb > 1 && m*n*k < batchParallelWork {
		workers.ParallelFor(nb, one)
	} else {
		for bi := range nb {
			one(bi)
		}
	}
	return wrap(dt, shape, out)
}

// bstrides returns the strides that view batch axes (shape, strides) as
// the broadcast batch shape out (0 on broadcast axes).
func bstrides(shape, strides, out []int) []int {
	st := make([]int, len(out))
	lead := len(out) - len(shape)
	for i := range shape {
		if shape[i] == out[lead+i] && shape[i] != 1 {
			st[lead+i] = strides[i]
		}
	}
	return st
}
