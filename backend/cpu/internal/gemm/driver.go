package gemm

import (
	"github.com/emberml/ember/backend/cpu/internal/workers"
)

// parallelMin is the number of multiply-adds (m·n·k) from which a product
// is spread over the worker pool.
const parallelMin = 1 << 17

// gemm is the blocked driver behind Sgemm and Dgemm (same arguments, plus
// the micro-kernel). Loop nest, outermost first: jc over nc-column blocks of
// C, pc over kc-deep slices of k (op(B) block packed by all workers), then
// tasks over (mc-row block × column part) pairs, each packing its own op(A)
// block (scaled by alpha) and running the micro-kernel over its tiles.
func gemm[T float](kr *microKernel[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic("gemm: negative dimension")
	}
	if m == 0 || n == 0 {
		return
	}
	// Touch the last element of every operand so a short slice panics here
	// rather than inside the assembly.
	_ = c[(m-1)*ldc+n-1]
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	if transA {
		_ = a[(k-1)*lda+m-1]
	} else {
		_ = a[(m-1)*lda+k-1]
	}
	if transB {
		_ = b[(n-1)*ldb+k-1]
	} else {
		_ = b[(k-1)*ldb+n-1]
	}
	if beta != 0 && beta != 1 {
		scale(m, n, beta, c, ldc)
	}
	if alpha == 1 && kr.runS != nil && kr.runR != nil && float64(m)*float64(n)*float64(k) <= float64(directMax) {
		gemmDirect(kr, transA, transB, m, n, k, a, lda, b, ldb, beta != 0, c, ldc)
		return
	}
	w := workers.Workers()
	if float64(m)*float64(n)*float64(k) < parallelMin {
		w = 1
	}
	mr, nr := kr.mr, kr.nr
	// Equal kc slices (a multiple of 8 deep, except the last) rather than
	// full ones and a thin remainder.
	kcEff := min(k, roundUp(ceilDiv(k, ceilDiv(k, kr.kc)), 8))
	ncEff := roundUp(ceilDiv(n, ceilDiv(n, kr.nc)), nr)
	// Row blocks: at most mc rows each, their count a multiple of the
	// worker count when there are more blocks than workers, so the tasks
	// divide evenly. (With fewer, the columns are split instead, below:
	// measured faster at 512² than splitting rows, as each worker then
	// mostly reads the part of packed B it packed itself.)
	// Blocks are whole mr-row panels, their sizes differing by at most one
	// panel.
	rowPanels := ceilDiv(m, mr)
	rowBlocks := ceilDiv(m, kr.mc)
	if w > 1 && rowBlocks >= w {
		rowBlocks = roundUp(rowBlocks, w)
	}
	rowBlocks = min(rowBlocks, rowPanels)

	bBuf := getBuf[T](kcEff * min(roundUp(n, nr), ncEff))
	defer putBuf(bBuf)
	bp := *bBuf
	for jc := 0; jc < n; jc += ncEff {
		nb := min(ncEff, n-jc)
		panels := ceilDiv(nb, nr)
		// Column parts: split the block when the row blocks alone cannot
		// keep every worker equally busy.
		colParts := 1
		if w > 1 && rowBlocks%w != 0 {
			colParts = min(w, panels)
		}
		partPanels := ceilDiv(panels, colParts)
		colParts = ceilDiv(panels, partPanels)
		tasks := rowBlocks * colParts
		for pc := 0; pc < k; pc += kcEff {
			kb := min(kcEff, k-pc)
			acc := pc > 0 || beta != 0
			packPanels := func(lo, hi int) {
				j, cols := lo*nr, min(hi*nr, nb)-lo*nr
				packB(transB, b, ldb, pc, jc+j, kb, cols, nr, bp[j*kb:(j+roundUp(cols, nr))*kb])
			}
			if w > 1 {
				workers.ParallelGrain(panels, 4, packPanels)
			} else {
				packPanels(0, panels)
			}
			task := func(t int) {
				ib, jp := t/colParts, t%colParts
				i0 := ib * rowPanels / rowBlocks * mr
				mb := min((ib+1)*rowPanels/rowBlocks*mr, m) - i0
				j0 := jp * partPanels * nr
				jb := min(partPanels*nr, nb-j0)
				aBuf := getBuf[T](roundUp(mb, mr) * kb)
				ap := *aBuf
				packA(transA, a, lda, i0, pc, mb, kb, mr, alpha, ap, kr.gatherA)
				macro(kr, mb, jb, kb, ap, bp[j0*kb:], c[i0*ldc+jc+j0:], ldc, acc)
				putBuf(aBuf)
			}
			if w > 1 && tasks > 1 {
				workers.ParallelFor(tasks, task)
			} else {
				for t := range tasks {
					task(t)
				}
			}
		}
	}
}

// macro runs the micro-kernel over an mb×nb block of C from a packed op(A)
// block ap (mr-row panels of kb columns) and packed op(B) panels bp (nr
// columns of kb rows each). Column panels are the outer loop so one B
// micro-panel stays in L1/L2 while the A panels stream from L2. Edge tiles
// are computed into a scratch tile and copied.
func macro[T float](kr *microKernel[T], mb, nb, kb int, ap, bp, c []T, ldc int, acc bool) {
	mr, nr := kr.mr, kr.nr
	var scratch [16 * 32]T
	tile := scratch[:mr*nr]
	for j := 0; j < nb; j += nr {
		bpan := bp[j*kb : (j+nr)*kb]
		cols := min(nr, nb-j)
		for i := 0; i < mb; i += mr {
			apan := ap[i*kb : (i+mr)*kb]
			rows := min(mr, mb-i)
			if rows == mr && cols == nr {
				kr.run(kb, apan, bpan, c[i*ldc+j:], ldc, acc)
				continue
			}
			kr.run(kb, apan, bpan, tile, nr, false)
			for r := range rows {
				dst := c[(i+r)*ldc+j:][:cols]
				src := tile[r*nr : r*nr+cols]
				if acc {
					for q, v := range src {
						dst[q] += v
					}
				} else {
					copy(dst, src)
				}
			}
		}
	}
}

// scale sets C = beta·C on an m×n block (beta = 0 writes zeros without
// reading C), in parallel for large blocks.
func scale[T float](m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] *= beta
			}
		}
	}
	workers.ParallelGrain(m, max(1, (1<<15)/max(n, 1)), rows)
}

func ceilDiv(x, q int) int { return (x + q - 1) / q }

func roundUp(x, q int) int { return ceilDiv(x, q) * q }
