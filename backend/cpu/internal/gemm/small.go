package gemm

import "github.com/emberml/ember/backend/cpu/internal/workers"

// The direct path of small products (up to directMax multiply-adds, alpha
// 1, a kernel with strided and row forms): no cache blocking and as little
// packing as the operands allow. A transposed A (k rows of m) is already
// a sequence of mr-row panels whose rows lie lda apart, and a row-major B
// one of nr-column panels whose rows lie ldb apart: the strided kernels
// (microKernel.runS) read those in place; a row-major A is read in place
// by the row kernels (microKernel.runR), which broadcast each element from
// its row. Only a partial last panel of A or B is copied (zero-padded),
// and a transposed B is packed by the tasks that read it (eight rows of B
// transposed in registers at a time, packBT). Products of at most 16
// columns use the kernel's narrow form (14×16 instead of 14×32 on
// AVX-512), which computes less padding. From directParallel
// multiply-adds the column panels are handed to the workers one by one,
// one hand-off in all (the blocked path hands off twice per k slice);
// below, the calling goroutine does everything, since on small products a
// hand-off costs more than it saves.
//
// Measured against OpenBLAS 0.3.21 on the MNIST MLP's products (see
// BenchmarkSmallVersusOpenBLAS and bench/NOTES.md).
var (
	directMax      = 1 << 25
	directParallel = 1 << 24
)

// gemmDirect computes C = op(A)·op(B) (+ C when acc) on the direct path.
func gemmDirect[T float](kr *microKernel[T], transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, acc bool, c []T, ldc int) {
	if n <= 16 && kr.narrow != nil {
		kr = kr.narrow
	}
	mr, nr := kr.mr, kr.nr
	rowPanels, fullA := ceilDiv(m, mr), m/mr
	var aBuf *[]T
	var ap []T
	if fullA < rowPanels { // the partial last row panel, packed
		aBuf = getBuf[T](mr * k)
		ap = *aBuf
		packA(transA, a, lda, fullA*mr, 0, m-fullA*mr, k, mr, 1, ap, false)
	}
	// run computes row panel i into the tile at c (rows ldc apart).
	run := func(i int, bpan []T, bs int, c []T, ldc int, acc bool) {
		switch {
		case i == fullA:
			kr.runS(k, ap, mr, bpan, bs, c, ldc, acc)
		case transA:
			kr.runS(k, a[i*mr:], lda, bpan, bs, c, ldc, acc)
		default:
			kr.runR(k, a[i*mr*lda:], lda, bpan, bs, c, ldc, acc)
		}
	}
	colPanels, fullB := ceilDiv(n, nr), n/nr
	task := func(lo, hi int) { // column panels [lo, hi)
		var bBuf *[]T
		var bp []T
		switch {
		case transB:
			bBuf = getBuf[T]((hi - lo) * nr * k)
			bp = *bBuf
			packBT(b, ldb, lo*nr, k, min(hi*nr, n)-lo*nr, nr, bp)
		case hi > fullB: // the partial last panel of a row-major B
			bBuf = getBuf[T](nr * k)
			bp = *bBuf
			packB(false, b, ldb, 0, fullB*nr, k, n-fullB*nr, nr, bp)
		}
		var scratch [16 * 32]T
		tile := scratch[:mr*nr]
		for j := lo; j < hi; j++ {
			bpan, bs := bp, nr
			switch {
			case transB:
				bpan = bp[(j-lo)*nr*k:]
			case j < fullB:
				bpan, bs = b[j*nr:], ldb
			}
			cols := min(nr, n-j*nr)
			for i := range rowPanels {
				rows := min(mr, m-i*mr)
				ct := c[i*mr*ldc+j*nr:]
				if rows == mr && cols == nr {
					run(i, bpan, bs, ct, ldc, acc)
					continue
				}
				run(i, bpan, bs, tile, nr, false)
				for r := range rows {
					dst := ct[r*ldc:][:cols]
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
		if bBuf != nil {
			putBuf(bBuf)
		}
	}
	if m*n*k >= directParallel && colPanels > 1 && workers.Workers() > 1 {
		// One column panel a task, claimed in turn: a worker the system
		// schedules late takes fewer.
		workers.ParallelFor(colPanels, func(j int) { task(j, j+1) })
	} else {
		task(0, colPanels)
	}
	if aBuf != nil {
		putBuf(aBuf)
	}
}
