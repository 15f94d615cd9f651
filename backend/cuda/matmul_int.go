package cuda

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// intCType is the CUDA C type of an integer dtype.
func intCType(dt backend.DType) string {
	switch dt {
	case backend.I64:
		return "long long"
	case backend.I32:
		return "int"
	case backend.I16:
		return "short"
	case backend.I8:
		return "signed char"
	case backend.U64:
		return "unsigned long long"
	case backend.U32:
		return "unsigned int"
	case backend.U16:
		return "unsigned short"
	}
	return "unsigned char"
}

// matmulIntSource is one thread per output element; products and sums wrap
// modulo 2^64 and are truncated to T, which equals T's own wrapping
// arithmetic.
const matmulIntSource = `
extern "C" __global__ void NAME(T* c, const T* a, const T* b, long long total, long long m, long long n, long long k,
		long long sab, long long sam, long long sak, long long sbb, long long sbk, long long sbn) {
	for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total; idx += (long long)gridDim.x * blockDim.x) {
		long long j = idx % n, i = (idx / n) % m, bi = idx / (m * n);
		const T* pa = a + bi * sab + i * sam;
		const T* pb = b + bi * sbb + j * sbn;
		unsigned long long acc = 0;
		for (long long p = 0; p < k; p++) {
			acc += (unsigned long long)(long long)pa[p * sak] * (unsigned long long)(long long)pb[p * sbk];
		}
		c[idx] = (T)acc;
	}
}
`

// matmulInt computes out = a b for integer dtypes; a and b are expanded to
// the output's batch.
func (b *Backend) matmulInt(out, a, c *Tensor, nbatch, m, n, k int) {
	prep := func(x *Tensor) (*Tensor, int) {
		nb := len(x.shape) - 2
		bs, ok := batchStride(x.shape[:nb], x.strides[:nb])
		if !ok {
			x = b.Contiguous(x)
			bs, _ = batchStride(x.shape[:nb], x.strides[:nb])
		}
		return x, bs
	}
	a, sab := prep(a)
	c, sbb := prep(c)
	ct := intCType(out.dtype)
	name := "ember_matmul_int_" + out.dtype.String()
	src := fmt.Sprintf("#define NAME %s\ntypedef %s T;\n%s", name, ct, matmulIntSource)
	kern := b.Kernel(name, src)
	total := int64(nbatch) * int64(m) * int64(n)
	grid, block := Grid1D(int(min(total, 1<<22)), 256)
	r := len(a.shape)
	b.Launch(kern, grid, block, 0, out, a, c, total, int64(m), int64(n), int64(k),
		int64(sab), int64(a.strides[r-2]), int64(a.strides[r-1]),
		int64(sbb), int64(c.strides[r-2]), int64(c.strides[r-1]))
}
