package gemm

import (
	"sync"
	"unsafe"
)

// packA copies rows i0..i0+mb, columns p0..p0+kb of op(A), multiplied by
// alpha, into dst as consecutive mr-row micro-panels, each stored column by
// column (dst[panel·mr·kb + p·mr + r]); rows past mb are zero. With gather
// (AVX-512 kernels, mr = 14), full panels of a non-transposed A are packed
// by packA14.
func packA[T float](trans bool, a []T, lda, i0, p0, mb, kb, mr int, alpha T, dst []T, gather bool) {
	for i := 0; i < mb; i += mr {
		d := dst[i*kb : (i+mr)*kb]
		rows := min(mr, mb-i)
		if rows < mr {
			clear(d)
		}
		if trans { // op(A)[i][p] = A[p][i]: rows of A are contiguous in i
			for p := range kb {
				src := a[(p0+p)*lda+i0+i:][:rows]
				dp := d[p*mr : p*mr+rows]
				for r, v := range src {
					dp[r] = alpha * v
				}
			}
			continue
		}
		if gather && rows == 14 && mr == 14 && packA14(a[(i0+i)*lda+p0:], lda, kb, alpha, d) {
			continue
		}
		// Four rows at a time, so each step writes four adjacent values.
		r := 0
		for ; r+4 <= rows; r += 4 {
			base := (i0+i+r)*lda + p0
			s0 := a[base:][:kb]
			s1 := a[base+lda:][:len(s0)]
			s2 := a[base+2*lda:][:len(s0)]
			s3 := a[base+3*lda:][:len(s0)]
			dr := d[r:]
			if alpha == 1 {
				for p := range s0 {
					q := dr[p*mr:][:4]
					q[0], q[1], q[2], q[3] = s0[p], s1[p], s2[p], s3[p]
				}
				continue
			}
			for p := range s0 {
				q := dr[p*mr:][:4]
				q[0], q[1], q[2], q[3] = alpha*s0[p], alpha*s1[p], alpha*s2[p], alpha*s3[p]
			}
		}
		for ; r < rows; r++ {
			src := a[(i0+i+r)*lda+p0:][:kb]
			for p, v := range src {
				d[p*mr+r] = alpha * v
			}
		}
	}
}

// packB copies rows p0..p0+kb, columns j0..j0+cols of op(B) into dst as
// consecutive nr-column micro-panels, each stored row by row
// (dst[panel·kb·nr + p·nr + q]); columns past cols in the last panel are
// zero. Without transposition B is read row by row (one long contiguous
// run per row, which the hardware prefetcher follows) and scattered to the
// panels; with it, each column of op(B) is a contiguous row of B.
func packB[T float](trans bool, b []T, ldb, p0, j0, kb, cols, nr int, dst []T) {
	full := cols / nr * nr // columns in complete panels
	if rem := cols - full; rem > 0 {
		clear(dst[full*kb : (full+nr)*kb])
	}
	if !trans {
		for p := range kb {
			src := b[(p0+p)*ldb+j0:][:cols]
			for j := 0; j < full; j += nr {
				copy(dst[j*kb+p*nr:j*kb+p*nr+nr], src[j:j+nr])
			}
			if full < cols {
				copy(dst[full*kb+p*nr:], src[full:])
			}
		}
		return
	}
	for q := range cols {
		src := b[(j0+q)*ldb+p0:][:kb]
		d := dst[q/nr*nr*kb+q%nr:]
		for p, v := range src {
			d[p*nr] = v
		}
	}
}

// packBT is packB for a transposed op(B) (B stored as rows of ldb
// elements, op(B)[p][j] = b[j·ldb+p]), rows 0..kb: eight rows of B at a
// time are transposed in registers where the CPU can (transpose8), the
// rest copied element by element.
func packBT[T float](b []T, ldb, j0, kb, cols, nr int, dst []T) {
	if nr%8 != 0 {
		packB(true, b, ldb, 0, j0, kb, cols, nr, dst)
		return
	}
	for q := 0; q < ceilDiv(cols, nr)*nr; q += 8 {
		d := dst[q/nr*nr*kb+q%nr:]
		rows := min(8, cols-q)
		done := 0
		if rows == 8 {
			done = transpose8(b[(j0+q)*ldb:], ldb, kb, d, nr)
		}
		for p := done; p < kb; p++ {
			dp := d[p*nr : p*nr+8]
			for r := range dp {
				if r < rows {
					dp[r] = b[(j0+q+r)*ldb+p]
				} else {
					dp[r] = 0
				}
			}
		}
	}
}

// bufList is a cache of packing buffers of one element type. Unlike a
// sync.Pool it survives garbage collections: a collection between two
// products would otherwise make the next one allocate (and zero or
// page-fault) megabytes of fresh packing buffers, which the recycling
// allocator of the backend, forcing collections, makes frequent.
type bufList[T float] struct {
	mu   sync.Mutex
	free []*[]T
}

// maxFreeBufs bounds each bufList: a product holds one B buffer plus one A
// buffer per worker at a time.
const maxFreeBufs = 8

var (
	bufs32 bufList[float32]
	bufs64 bufList[float64]
)

func bufsFor[T float]() *bufList[T] {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return any(&bufs32).(*bufList[T])
	}
	return any(&bufs64).(*bufList[T])
}

// getBuf returns a buffer of n elements aligned to 64 bytes (a cache line,
// so vector loads of packed panels never split lines); release it with
// putBuf. Its contents are arbitrary.
func getBuf[T float](n int) *[]T {
	l := bufsFor[T]()
	l.mu.Lock()
	for i := len(l.free) - 1; i >= 0; i-- {
		if p := l.free[i]; cap(*p) >= n {
			l.free = append(l.free[:i], l.free[i+1:]...)
			l.mu.Unlock()
			*p = (*p)[:n]
			return p
		}
	}
	l.mu.Unlock()
	var z T
	per := int(64 / unsafe.Sizeof(z))
	raw := make([]T, n+per)
	off := int(uintptr(unsafe.Pointer(&raw[0]))%64) / int(unsafe.Sizeof(z))
	if off != 0 {
		off = per - off
	}
	s := raw[off : off+n : off+n]
	return &s
}

// putBuf returns a buffer obtained from getBuf to the cache, dropping the
// smallest cached buffer when the cache is full.
func putBuf[T float](p *[]T) {
	l := bufsFor[T]()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < maxFreeBufs {
		l.free = append(l.free, p)
		return
	}
	small := 0
	for i, q := range l.free {
		if cap(*q) < cap(*l.free[small]) {
			small = i
		}
	}
	if cap(*p) > cap(*l.free[small]) {
		l.free[small] = p
	}
}
