package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/backend/cuda/internal/cublas"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindMatmul, (*Backend).matmulKernel, nil) }

// SetTF32 lets F32 (and Flex32) matmuls use TF32 tensor cores
// (CUBLAS_COMPUTE_32F_FAST_TF32: 10-bit mantissa inputs, relative error
// near 3e-4 instead of float32's 1e-6). Off by default, as PyTorch's
// torch.backends.cuda.matmul.allow_tf32 = False.
func (b *Backend) SetTF32(on bool) { b.tf32.Store(on) }

// blasWorkspace is the cuBLAS workspace size in bytes (PyTorch's default on
// Hopper).
const blasWorkspace = 32 << 20

// cublasHandle creates the cuBLAS handle on first use, bound to the
// backend's stream; it panics with an error wrapping
// backend.ErrBackendUnavailable when libcublas is missing.
func (b *Backend) cublasHandle() cublas.Handle {
	b.blasOnce.Do(func() {
		if err := cublas.Load(); err != nil {
			b.blasErr = fmt.Errorf("%v: matmul: %w: %w", b.id, backend.ErrBackendUnavailable, err)
			return
		}
		defer b.enter()()
		h, err := cublas.Create()
		if err == nil {
			err = cublas.SetStream(h, uintptr(b.stream))
		}
		if err == nil {
			err = cublas.SetMathMode(h, cublas.DefaultMath)
		}
		if err == nil {
			// A workspace of its own (outside the pools, for the handle's
			// lifetime, which is the process's), as PyTorch gives cuBLAS,
			// so that the same algorithms are open to it (split-K and
			// stream-K kernels need one). The 8192³ products measured the
			// same with and without (bench/NOTES.md "CUDA performance").
			var ws uint64
			if ws, err = cu.MemAlloc(blasWorkspace); err == nil {
				err = cublas.SetWorkspace(h, ws, blasWorkspace)
			}
		}
		if err != nil {
			b.blasErr = fmt.Errorf("%v: matmul: %w", b.id, err)
			return
		}
		b.blas = h
	})
	if b.blasErr != nil {
		panic(b.blasErr)
	}
	return b.blas
}

// matOperand is one matmul operand as BLAS sees it: its address, whether
// its matrices are stored column-major (transposed), its leading
// dimension and its batch stride, in elements.
type matOperand struct {
	t           *Tensor
	colMajor    bool
	ld          int
	batchStride int
}

// matLayout describes the last two axes (rows, cols with strides sr, sc) as
// a BLAS matrix, or reports false (negative, zero or overlapping strides).
func matLayout(rows, cols, sr, sc int) (colMajor bool, ld int, ok bool) {
	if cols == 1 {
		sc = 1
	}
	if rows == 1 {
		sr = max(cols, 1)
	}
	switch {
	case sc == 1 && sr >= max(cols, 1):
		return false, sr, true
	case sr == 1 && sc >= max(rows, 1):
		return true, sc, true
	}
	return false, 0, false
}

// batchStride collapses the batch axes (shape, strides) into one stride,
// or reports false when the batch is not a single arithmetic progression.
func batchStride(shape, strides []int) (int, bool) {
	s, have := 0, false
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 1 {
			continue
		}
		if !have {
			s, have = strides[i], true
			continue
		}
		// The previous non-1 axis (inner) must step exactly over this one.
		inner := -1
		for j := i + 1; j < len(shape); j++ {
			if shape[j] != 1 {
				inner = j
				break
			}
		}
		if strides[i] != strides[inner]*shape[inner] {
			return 0, false
		}
	}
	return s, true
}

// operand prepares x (already expanded to batch+[rows, cols]) for BLAS,
// copying it to contiguous memory when its strides cannot be expressed.
func (b *Backend) operand(x *Tensor, rows, cols int) matOperand {
	r := len(x.shape)
	nb := r - 2
	cm, ld, ok := matLayout(rows, cols, x.strides[r-2], x.strides[r-1])
	bs, okb := batchStride(x.shape[:nb], x.strides[:nb])
	if !ok || !okb {
		x = b.Contiguous(x)
		cm, ld, _ = matLayout(rows, cols, x.strides[r-2], x.strides[r-1])
		bs, _ = batchStride(x.shape[:nb], x.strides[:nb])
	}
	return matOperand{t: x, colMajor: cm, ld: ld, batchStride: bs}
}

// matmulKernel is the kernel of KindMatmul: op.In[0] × op.In[1] (see
// matmul), giving op.Shape.
func (b *Backend) matmulKernel(op ir.Op) ir.Outputs {
	return ir.One(b.matmul(tensorOf(op.In[0]), tensorOf(op.In[1]), op.Shape))
}

// matmul multiplies the last two axes, [..., m, k] x [..., k, n] ->
// [..., m, n], broadcasting the batch axes (PyTorch's matmul for rank >= 2);
// outShape is the result's shape (the broadcast batch, then m, n), kept by
// the result. Floats go through cublasGemmStridedBatchedEx: F32 and Flex32
// in float32 (TF32 only after SetTF32(true)), F64 in float64, F16 and BF16
// with float32 accumulation; strided and transposed views are passed to
// cuBLAS without a copy when a leading dimension and one batch stride
// describe them. Integer dtypes use a simple kernel with wrapping
// (two's-complement) arithmetic.
func (b *Backend) matmul(a, c *Tensor, outShape []int) *Tensor {
	ra, ro := len(a.shape), len(outShape)
	k := a.shape[ra-1]
	m, n := outShape[ro-2], outShape[ro-1]
	batch := outShape[:ro-2]
	out := b.emptyOf(outShape, a.dtype)
	nbatch := backend.NumElements(batch)
	if out.NumElements() == 0 {
		return out
	}
	if k == 0 {
		b.fill(out, make([]byte, a.dtype.Size()))
		return out
	}
	ae := b.expand(a, append(append([]int(nil), batch...), m, k))
	be := b.expand(c, append(append([]int(nil), batch...), k, n))
	if !a.dtype.IsFloat() {
		b.matmulInt(out, ae, be, nbatch, m, n, k)
		return out
	}
	opA := b.operand(ae, m, k)
	opB := b.operand(be, k, n)
	for _, v := range []int{m, n, k, nbatch, opA.ld, opB.ld} {
		if v > math.MaxInt32 {
			panic(fmt.Sprintf("cuda: Matmul: dimension %d exceeds cuBLAS's int32 range", v))
		}
	}
	g := &cublas.Gemm{
		M: n, N: m, K: k,
		A: opB.t.Ptr(), LDA: opB.ld, StrideA: int64(opB.batchStride),
		B: opA.t.Ptr(), LDB: opA.ld, StrideB: int64(opA.batchStride),
		C: out.Ptr(), LDC: n, StrideC: int64(m * n),
		Batch: nbatch,
	}
	// Row-major C = A B is column-major C^T = B^T A^T: a row-major operand
	// is its own transpose in column-major terms (OpN), a column-major
	// (transposed view) operand needs OpT.
	if opB.colMajor {
		g.TransA = cublas.OpT
	}
	if opA.colMajor {
		g.TransB = cublas.OpT
	}
	var alpha32, beta32 = new(float32), new(float32)
	var alpha64, beta64 = new(float64), new(float64)
	*alpha32, *alpha64 = 1, 1
	switch a.dtype {
	case backend.F64:
		g.AType, g.Compute = cublas.R64F, cublas.Compute64F
		g.Alpha, g.Beta = unsafe.Pointer(alpha64), unsafe.Pointer(beta64)
	case backend.F16, backend.BF16:
		g.AType, g.Compute = cublas.R16F, cublas.Compute32F
		if a.dtype == backend.BF16 {
			g.AType = cublas.R16BF
		}
		g.Alpha, g.Beta = unsafe.Pointer(alpha32), unsafe.Pointer(beta32)
	default: // F32, Flex32
		g.AType, g.Compute = cublas.R32F, cublas.Compute32F
		if b.tf32.Load() {
			g.Compute = cublas.Compute32FFastTF32
		}
		g.Alpha, g.Beta = unsafe.Pointer(alpha32), unsafe.Pointer(beta32)
	}
	g.BType, g.CType = g.AType, g.AType
	h := b.cublasHandle()
	b.blasMu.Lock()
	exit := b.enter()
	err := cublas.GemmStridedBatchedEx(h, g)
	exit()
	b.blasMu.Unlock()
	runtime.KeepAlive(opA.t)
	runtime.KeepAlive(opB.t)
	if err != nil {
		panic(b.failf(err, "Matmul %v x %v (%v)", a.shape, c.shape, a.dtype))
	}
	return out
}
