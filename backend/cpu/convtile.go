package cpu

import (
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// Shared pieces of the direct (implicit-GEMM) float32 convolutions of
// convdirect.go and convdirect_grad.go: every product is a register tile
// of gemm.Stile whose rows are consecutive pixels of one image row (or
// consecutive kernel taps) read in place, and whose columns are channel
// vectors of a packed or NHWC buffer, so no column matrix is built.

// colBlock is a run of channels computed by one tile: channels
// [off, off+vecs·lanes) of a padded channel axis.
type colBlock struct{ off, vecs int }

// colBlocks splits n channels into tile column blocks of two vectors, the
// last of one vector when no more than one vector's worth remains. The
// blocks cover roundUp(n, lanes) channels.
func colBlocks(n, lanes int) []colBlock {
	var bs []colBlock
	for off := 0; off < n; {
		v := 2
		if n-off <= lanes {
			v = 1
		}
		bs = append(bs, colBlock{off, v})
		off += v * lanes
	}
	return bs
}

// span is a tile of consecutive rows [lo, lo+n).
type span struct{ lo, n int }

// spans splits [0, n) into the fewest tiles of at most m rows, their sizes
// differing by at most one.
func spans(n, m int) []span {
	if n <= 0 {
		return nil
	}
	t := (n + m - 1) / m
	s := make([]span, t)
	for i := range s {
		lo, hi := i*n/t, (i+1)*n/t
		s[i] = span{lo, hi - lo}
	}
	return s
}

// spanGroup is the starts of the spans of one length n: tiles that one
// gemm.StileBatch call can run.
type spanGroup struct {
	n      int
	starts []int
}

// groupSpans groups spans by length, in order of first appearance.
func groupSpans(ss []span) []spanGroup {
	var gs []spanGroup
next:
	for _, s := range ss {
		for i := range gs {
			if gs[i].n == s.n {
				gs[i].starts = append(gs[i].starts, s.lo)
				continue next
			}
		}
		gs = append(gs, spanGroup{s.n, []int{s.lo}})
	}
	return gs
}

// offsets returns the gemm offset table of v, whose entries must fit an
// int32 (the callers check the buffer sizes first).
func offsets(v []int) gemm.Offsets {
	o := make([]int32, len(v))
	for i, x := range v {
		o[i] = int32(x)
	}
	return gemm.NewOffsets(o)
}

// stridedTable returns the table p·step for p < n.
func stridedTable(n, step int) gemm.Offsets {
	o := make([]int32, n)
	for p := range o {
		o[p] = int32(p * step)
	}
	return gemm.NewOffsets(o)
}

// fitsInt32 reports whether every offset into buffers of the given element
// counts fits the int32 tables of gemm.Stile.
func fitsInt32(sizes ...int) bool {
	for _, s := range sizes {
		if s < 0 || s >= 1<<31-64 {
			return false
		}
	}
	return true
}

// transposeTo writes dst[c·ldd + r] = src[r·lds + c] for r < rows and
// c < cols: 8×8 blocks (AVX where the CPU has it), eight rows of dst at a
// time written front to back, and a scalar rim.
func transposeTo(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	_ = dst[(cols-1)*ldd+rows-1]
	_ = src[(rows-1)*lds+cols-1]
	r8, c8 := rows&^7, cols&^7
	for c0 := 0; c0 < c8; c0 += 8 {
		transposeColumn8(dst[c0*ldd:], ldd, src[c0:], lds, r8/8)
	}
	for c := c8; c < cols; c++ { // the last columns, all rows
		d := dst[c*ldd:][:rows]
		for r := range d {
			d[r] = src[r*lds+c]
		}
	}
	for c := range c8 { // the last rows
		d := dst[c*ldd:][:rows]
		for r := r8; r < rows; r++ {
			d[r] = src[r*lds+c]
		}
	}
}

// transposeColumn8Go is the portable transposeColumn8.
func transposeColumn8Go(dst []float32, ldd int, src []float32, lds, n int) {
	for c := range 8 {
		d := dst[c*ldd:][:8*n]
		for r := range d {
			d[r] = src[r*lds+c]
		}
	}
}

func roundUp(x, q int) int { return (x + q - 1) / q * q }
