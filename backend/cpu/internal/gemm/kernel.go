package gemm

// float is the set of element types of the product.
type float interface{ ~float32 | ~float64 }

// microKernel describes a register-tiled micro-kernel and the cache
// blocking the driver uses around it.
type microKernel[T float] struct {
	name   string
	mr, nr int // register tile: mr rows × nr columns of C
	kc     int // depth of a packed block (k slice)
	mc     int // rows of a packed A block (mc×kc, meant to stay in L2)
	nc     int // columns of a packed B block (kc×nc, shared, in L3)
	// gatherA packs full 14-row panels of a non-transposed A with the
	// AVX-512 gathers of packA14 (mr must be 14).
	gatherA bool
	// run computes the mr×nr tile T[i][j] = Σ_{p<k} a[p·mr+i]·b[p·nr+j] of
	// a packed A micro-panel and a packed B micro-panel, k ≥ 1, and stores
	// it to c[i·ldc+j] (adding to the old value when acc). c must hold
	// (mr−1)·ldc+nr elements.
	run func(k int, a, b, c []T, ldc int, acc bool)
	// runS, where not nil, is run on panels whose rows lie as and bs
	// elements apart: T[i][j] = Σ_{p<k} a[p·as+i]·b[p·bs+j] (the direct
	// path of small products, small.go; run's panels are as = mr, bs = nr).
	runS func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool)
	// runR, where not nil, is runS reading A as mr rows of a row-major
	// matrix, as elements apart: T[i][j] = Σ_{p<k} a[i·as+p]·b[p·bs+j].
	runR func(k int, a []T, as int, b []T, bs int, c []T, ldc int, acc bool)
	// narrow, where not nil, is a strided kernel of the same instruction
	// set with nr = 16, for direct products of at most 16 columns.
	narrow *microKernel[T]
}

// Kernels in use; set by init in the per-architecture files and by
// forceGeneric in tests.
var (
	sKernel *microKernel[float32]
	dKernel *microKernel[float64]
)

// forceGeneric switches both types to the pure-Go kernels (on) or back to
// the kernels selected for this CPU (off). It is meant for tests and must
// not run concurrently with products.
func forceGeneric(on bool) {
	if on {
		sKernel, dKernel = sGeneric, dGeneric
	} else {
		selectKernels()
	}
}

func init() { selectKernels() }

// genericMicro2x4 is the pure-Go 2×4 micro-kernel (see microKernel.run):
// eight scalar accumulators, which fit the 16 floating-point registers of
// amd64 and 386 without spilling (4×4 spills and runs ~3× slower there).
func genericMicro2x4[T float](k int, a, b, c []T, ldc int, acc bool) {
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	a = a[:2*k]
	b = b[:4*k]
	for len(a) >= 4 && len(b) >= 8 {
		a0, a1 := a[0], a[1]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a0, a1 = a[2], a[3]
		b0, b1, b2, b3 = b[4], b[5], b[6], b[7]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a, b = a[4:], b[8:]
	}
	if len(a) >= 2 && len(b) >= 4 {
		a0, a1 := a[0], a[1]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	t := [8]T{c00, c01, c02, c03, c10, c11, c12, c13}
	for i := range 2 {
		row := c[i*ldc : i*ldc+4]
		src := t[4*i : 4*i+4]
		if acc {
			for j := range row {
				row[j] += src[j]
			}
		} else {
			copy(row, src)
		}
	}
}

// genericMicro4x4 is the pure-Go 4×4 micro-kernel (see microKernel.run),
// sixteen scalar accumulators, for architectures with 32 floating-point
// registers (arm64, riscv64, ppc64, ...).
func genericMicro4x4[T float](k int, a, b, c []T, ldc int, acc bool) {
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	var c20, c21, c22, c23, c30, c31, c32, c33 T
	a = a[:4*k]
	b = b[:4*k]
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a, b = a[4:], b[4:]
	}
	t := [16]T{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
	for i := range 4 {
		row := c[i*ldc : i*ldc+4]
		src := t[4*i : 4*i+4]
		if acc {
			for j := range row {
				row[j] += src[j]
			}
		} else {
			copy(row, src)
		}
	}
}
