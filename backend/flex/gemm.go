package flex

import (
	"runtime"
	"sync"
)

// kernelFloat is the set of element types the float kernels are written for.
type kernelFloat interface{ ~float32 | ~float64 }

// Blocking parameters of the packed GEMM (Goto/BLIS scheme). The micro-kernel
// computes a gemmMR×gemmNR tile of C with eight scalar accumulators, which fit
// the amd64 and arm64 float register files without spilling; gemmKC×gemmNR
// panels of B stay in L1, gemmMC×gemmKC blocks of A in L2.
const (
	gemmMR = 2
	gemmNR = 4
	gemmKC = 256
	gemmMC = 128
	gemmNC = 1024
	// gemmParallelMin is the number of multiply-adds (m·n·k) from which a
	// product is split across goroutines.
	gemmParallelMin = 1 << 18
)

// gemmF32 computes C = op(A)·op(B), or C += op(A)·op(B) when accumulate, on
// row-major float32 matrices with leading dimensions lda, ldb, ldc (the
// distance between consecutive rows). op(A) is m×k: A itself (m rows of
// lda ≥ k) or, when transA, the transpose of A (k rows of lda ≥ m); likewise
// op(B) is k×n, B or B transposed when transB. C is m×n with ldc ≥ n. This is
// BLAS sgemm with alpha = 1 and beta = 0 or 1 (row-major). When k = 0 and not
// accumulate, C is zeroed. Slices too short for the stated shapes panic.
func gemmF32(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	gemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// gemmF64 is gemmF32 for float64 (BLAS dgemm with alpha = 1, beta = 0 or 1).
func gemmF64(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, accumulate bool) {
	gemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// gemm splits large products into independent column or row bands, one per
// goroutine, and runs gemmSerial on each.
func gemm[T kernelFloat](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, accumulate bool) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		if !accumulate {
			for i := 0; i < m; i++ {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	if m == 1 || n == 1 {
		gemmVec(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	workers := gemmWorkers(m, n, k)
	if workers <= 1 {
		gemmSerial(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	var wg sync.WaitGroup
	// Splitting the columns repacks all of op(A) in every band, splitting the
	// rows repacks op(B): duplicate the smaller one.
	if n >= m && n >= 2*gemmNR {
		step := roundUp((n+workers-1)/workers, gemmNR)
		for j0 := 0; j0 < n; j0 += step {
			nb := min(step, n-j0)
			var bs []T
			if transB {
				bs = b[j0*ldb:]
			} else {
				bs = b[j0:]
			}
			wg.Go(func() {
				gemmSerial(transA, transB, m, nb, k, a, lda, bs, ldb, c[j0:], ldc, accumulate)
			})
		}
	} else {
		step := roundUp((m+workers-1)/workers, gemmMR)
		for i0 := 0; i0 < m; i0 += step {
			mb := min(step, m-i0)
			var as []T
			if transA {
				as = a[i0:]
			} else {
				as = a[i0*lda:]
			}
			wg.Go(func() {
				gemmSerial(transA, transB, mb, n, k, as, lda, b, ldb, c[i0*ldc:], ldc, accumulate)
			})
		}
	}
	wg.Wait()
}

// gemmWorkers is the number of goroutines for an m×n×k product.
func gemmWorkers(m, n, k int) int {
	w := runtime.GOMAXPROCS(0)
	if w <= 1 || m*n*k < gemmParallelMin {
		return 1
	}
	// At least one gemmParallelMin of work per goroutine.
	return max(1, min(w, m*n*k/gemmParallelMin, (max(m, n)+gemmNR-1)/gemmNR))
}

func roundUp(x, q int) int { return (x + q - 1) / q * q }

// gemmSerial is the single-goroutine blocked product: op(B) is packed in
// gemmKC×gemmNC blocks, op(A) in gemmMC×gemmKC blocks, and the micro-kernel
// runs over their panels.
func gemmSerial[T kernelFloat](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, accumulate bool) {
	kcMax := min(k, gemmKC)
	bBuf := getBuf[T](bufPackB, kcMax*roundUp(min(n, gemmNC), gemmNR))
	aBuf := getBuf[T](bufPackA, kcMax*roundUp(min(m, gemmMC), gemmMR))
	bp, ap := *bBuf, *aBuf
	for jc := 0; jc < n; jc += gemmNC {
		nb := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			packB(transB, b, ldb, pc, jc, kb, nb, bp)
			overwrite := pc == 0 && !accumulate
			for ic := 0; ic < m; ic += gemmMC {
				mb := min(gemmMC, m-ic)
				packA(transA, a, lda, ic, pc, mb, kb, ap)
				gemmMacro(mb, nb, kb, ap, bp, c[ic*ldc+jc:], ldc, overwrite)
			}
		}
	}
	putBuf(bufPackA, aBuf)
	putBuf(bufPackB, bBuf)
}

// packA copies rows ic..ic+mb, columns pc..pc+kb of op(A) into dst as
// consecutive gemmMR-row panels, each stored column by column (kb·gemmMR
// values); rows past mb are zero.
func packA[T kernelFloat](trans bool, a []T, lda, ic, pc, mb, kb int, dst []T) {
	for i := 0; i < mb; i += gemmMR {
		d := dst[i*kb : (i+gemmMR)*kb]
		if i+gemmMR > mb { // single remaining row
			if trans {
				for p := 0; p < kb; p++ {
					d[2*p] = a[(pc+p)*lda+ic+i]
					d[2*p+1] = 0
				}
			} else {
				r := a[(ic+i)*lda+pc:][:kb]
				for p, v := range r {
					d[2*p] = v
					d[2*p+1] = 0
				}
			}
			continue
		}
		if trans {
			for p := 0; p < kb; p++ {
				s := a[(pc+p)*lda+ic+i:][:2]
				d[2*p] = s[0]
				d[2*p+1] = s[1]
			}
		} else {
			r0 := a[(ic+i)*lda+pc:][:kb]
			r1 := a[(ic+i+1)*lda+pc:][:kb]
			for p := range r0 {
				d[2*p] = r0[p]
				d[2*p+1] = r1[p]
			}
		}
	}
}

// packB copies rows pc..pc+kb, columns jc..jc+nb of op(B) into dst as
// consecutive gemmNR-column panels, each stored row by row (kb·gemmNR
// values); columns past nb are zero.
func packB[T kernelFloat](trans bool, b []T, ldb, pc, jc, kb, nb int, dst []T) {
	for j := 0; j < nb; j += gemmNR {
		d := dst[j*kb : (j+gemmNR)*kb]
		w := min(gemmNR, nb-j)
		switch {
		case w < gemmNR:
			clear(d)
			for q := 0; q < w; q++ {
				for p := 0; p < kb; p++ {
					if trans {
						d[p*gemmNR+q] = b[(jc+j+q)*ldb+pc+p]
					} else {
						d[p*gemmNR+q] = b[(pc+p)*ldb+jc+j+q]
					}
				}
			}
		case trans:
			r0 := b[(jc+j)*ldb+pc:][:kb]
			r1 := b[(jc+j+1)*ldb+pc:][:kb]
			r2 := b[(jc+j+2)*ldb+pc:][:kb]
			r3 := b[(jc+j+3)*ldb+pc:][:kb]
			for p := range r0 {
				q := d[4*p : 4*p+4 : 4*p+4]
				q[0], q[1], q[2], q[3] = r0[p], r1[p], r2[p], r3[p]
			}
		default:
			for p := 0; p < kb; p++ {
				s := b[(pc+p)*ldb+jc+j:][:4]
				q := d[4*p : 4*p+4 : 4*p+4]
				q[0], q[1], q[2], q[3] = s[0], s[1], s[2], s[3]
			}
		}
	}
}

// gemmMacro multiplies a packed mb×kb block of A by a packed kb×nb block of B
// into C (overwriting it when overwrite, adding to it otherwise).
func gemmMacro[T kernelFloat](mb, nb, kb int, ap, bp []T, c []T, ldc int, overwrite bool) {
	var t [gemmMR * gemmNR]T
	for j := 0; j < nb; j += gemmNR {
		bs := bp[j*kb : (j+gemmNR)*kb]
		nr := min(gemmNR, nb-j)
		for i := 0; i < mb; i += gemmMR {
			gemmMicro(kb, ap[i*kb:(i+gemmMR)*kb], bs, &t)
			mr := min(gemmMR, mb-i)
			if mr == gemmMR && nr == gemmNR {
				c0 := c[i*ldc+j : i*ldc+j+4 : i*ldc+j+4]
				c1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4 : (i+1)*ldc+j+4]
				if overwrite {
					c0[0], c0[1], c0[2], c0[3] = t[0], t[1], t[2], t[3]
					c1[0], c1[1], c1[2], c1[3] = t[4], t[5], t[6], t[7]
				} else {
					c0[0] += t[0]
					c0[1] += t[1]
					c0[2] += t[2]
					c0[3] += t[3]
					c1[0] += t[4]
					c1[1] += t[5]
					c1[2] += t[6]
					c1[3] += t[7]
				}
				continue
			}
			for r := 0; r < mr; r++ {
				row := c[(i+r)*ldc+j:][:nr]
				for q := range row {
					if overwrite {
						row[q] = t[r*gemmNR+q]
					} else {
						row[q] += t[r*gemmNR+q]
					}
				}
			}
		}
	}
}

// gemmMicro computes the 2×4 tile t = Σ_p a[:,p]·b[p,:] of a packed A panel
// (a[2p+r]) and a packed B panel (b[4p+q]), p < kb. The loop is unrolled four
// times; slicing keeps it free of bounds checks.
func gemmMicro[T kernelFloat](kb int, a, b []T, t *[gemmMR * gemmNR]T) {
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	a = a[:2*kb]
	b = b[:4*kb]
	for len(a) >= 8 && len(b) >= 16 {
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		a0, a1 := a[0], a[1]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		b0, b1, b2, b3 = b[4], b[5], b[6], b[7]
		a0, a1 = a[2], a[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		b0, b1, b2, b3 = b[8], b[9], b[10], b[11]
		a0, a1 = a[4], a[5]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		b0, b1, b2, b3 = b[12], b[13], b[14], b[15]
		a0, a1 = a[6], a[7]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a = a[8:]
		b = b[16:]
	}
	for len(a) >= 2 && len(b) >= 4 {
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		a0, a1 := a[0], a[1]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a = a[2:]
		b = b[4:]
	}
	t[0], t[1], t[2], t[3] = c00, c01, c02, c03
	t[4], t[5], t[6], t[7] = c10, c11, c12, c13
}

// gemmVec handles products with a single row (m = 1) or column (n = 1) of C
// without packing: the vector operand is gathered into a contiguous buffer,
// then each output is a dot product or the result row is built from axpy
// updates, both streaming the matrix operand once.
func gemmVec[T kernelFloat](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, accumulate bool) {
	// Reduce n = 1 to m = 1 through Cᵀ = op(B)ᵀ·op(A)ᵀ.
	vec, vecStride := a, 1 // the 1×k row op(A)
	if transA {
		vec, vecStride = a, lda
	}
	mat, matTrans, ldm, cols, inc := b, transB, ldb, n, 1
	if m != 1 {
		vec, vecStride = b, ldb // the k×1 column op(B)
		if transB {
			vecStride = 1
		}
		mat, matTrans, ldm, cols, inc = a, !transA, lda, m, ldc
	}
	xb := getBuf[T](bufCol, k+cols)
	defer putBuf(bufCol, xb)
	x, y := (*xb)[:k], (*xb)[k:]
	for p := range x {
		x[p] = vec[p*vecStride]
	}
	if matTrans { // y[j] = Σ_p x[p]·mat[j, p]
		for j := range y {
			y[j] = dotVec(x, mat[j*ldm:][:k])
		}
	} else { // y = Σ_p x[p]·mat[p, :]
		clear(y)
		for p, xp := range x {
			axpyVec(xp, mat[p*ldm:][:cols], y)
		}
	}
	for j, v := range y {
		if accumulate {
			c[j*inc] += v
		} else {
			c[j*inc] = v
		}
	}
}

// dotVec returns Σ x[i]·y[i] over len(x) ≤ len(y), with four partial sums.
func dotVec[T kernelFloat](x, y []T) T {
	var s0, s1, s2, s3 T
	y = y[:len(x)]
	for len(x) >= 4 && len(y) >= 4 {
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		x, y = x[4:], y[4:]
	}
	for i := range x {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyVec computes y += alpha·x over len(x) ≤ len(y).
func axpyVec[T kernelFloat](alpha T, x, y []T) {
	y = y[:len(x)]
	for len(x) >= 4 && len(y) >= 4 {
		y[0] += alpha * x[0]
		y[1] += alpha * x[1]
		y[2] += alpha * x[2]
		y[3] += alpha * x[3]
		x, y = x[4:], y[4:]
	}
	for i := range x {
		y[i] += alpha * x[i]
	}
}
