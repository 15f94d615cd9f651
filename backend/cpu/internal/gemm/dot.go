package gemm

import "fmt"

// dotFunc is an assembly dot-product tile kernel (see gen_dots.go).
type dotFunc func(k int, a *float32, lda int, b *float32, ldb int, c *float32, acc bool, n, sa, sb int)

// SdotMaxRows returns the most rows of A (ri) and of B (rj) one Sdot call
// takes: 5 and 5 with AVX-512F, 2 and 5 with AVX2, 5 and 5 for the
// portable loop.
func SdotMaxRows() (ri, rj int) {
	if tiles == nil {
		return 5, 5
	}
	return tiles.dotI, tiles.dotJ
}

// Sdot accumulates the lane-wise partial dot products of ri rows of A
// (row i at a[i·lda:], k elements) and rj rows of B (row j at b[j·ldb:]):
//
//	c[(i·rj + j)·L + l] (+)= Σ_q a[i·lda + q·L + l] · b[j·ldb + q·L + l]
//
// for the L = TileLanes() lanes l, q over the k elements in steps of L
// (elements past k count as 0 and are not read), adding to c when acc and
// overwriting it otherwise. The dot product of rows i and j is then
// LaneSum of its L partial sums; keeping them apart lets one such sum run
// over many calls (an image at a time, say) with the vectors as its only
// carried state. Each lane's sum is in increasing q, one fused
// multiply-add per term. ri and rj must be in [1, SdotMaxRows()], c hold
// ri·rj·L elements; reads past the slices panic before any work.
func Sdot(ri, rj, k int, a []float32, lda int, b []float32, ldb int, c []float32, acc bool) {
	SdotBlocks(ri, rj, k, 1, a, lda, 0, b, ldb, 0, c, acc)
}

// SdotBlocks is Sdot summed over n blocks: block m reads its rows of A from
// a[m·sa:] and of B from b[m·sb:] (same lda, ldb and k), so that
//
//	c[(i·rj + j)·L + l] (+)= Σ_m Σ_q a[m·sa + i·lda + q·L + l] · b[m·sb + j·ldb + q·L + l]
//
// with each lane's sum in increasing m, then q, one fused multiply-add per
// term, the partial sums held in registers from the first block to the
// last (one call can cover, say, every image of a batch: block m is image
// m). n must be at least 1 and sa, sb not negative; the other rules are
// Sdot's.
func SdotBlocks(ri, rj, k, n int, a []float32, lda, sa int, b []float32, ldb, sb int, c []float32, acc bool) {
	mi, mj := SdotMaxRows()
	if ri < 1 || ri > mi || rj < 1 || rj > mj || k < 0 || n < 1 || sa < 0 || sb < 0 {
		panic(fmt.Sprintf("gemm: SdotBlocks ri %d rj %d k %d n %d sa %d sb %d", ri, rj, k, n, sa, sb))
	}
	lanes := TileLanes()
	_ = c[ri*rj*lanes-1]
	if k == 0 {
		if !acc {
			clear(c[:ri*rj*lanes])
		}
		return
	}
	_ = a[(n-1)*sa+(ri-1)*lda+k-1]
	_ = b[(n-1)*sb+(rj-1)*ldb+k-1]
	if tiles == nil {
		sdotGo(ri, rj, k, n, a, lda, sa, b, ldb, sb, c, acc)
		return
	}
	tiles.dots[ri-1][rj-1](k, &a[0], lda, &b[0], ldb, &c[0], acc, n, sa, sb)
}

// sdotGo is the portable SdotBlocks (8 lanes).
func sdotGo(ri, rj, k, n int, a []float32, lda, sa int, b []float32, ldb, sb int, c []float32, acc bool) {
	const lanes = 8
	var t [5 * 5 * lanes]float32
	for m := range n {
		for i := range ri {
			ar := a[m*sa+i*lda:][:k]
			for j := range rj {
				br := b[m*sb+j*ldb:][:k]
				s := t[(i*rj+j)*lanes:][:lanes]
				for q, av := range ar {
					s[q%lanes] += av * br[q]
				}
			}
		}
	}
	dst := c[:ri*rj*lanes]
	if acc {
		for i, v := range t[:len(dst)] {
			dst[i] += v
		}
	} else {
		copy(dst, t[:len(dst)])
	}
}

// LaneSum adds the partial sums of one Sdot pair (TileLanes() values) in
// a fixed pairwise order: halves added lane by lane until one remains.
func LaneSum(v []float32) float32 {
	switch len(v) {
	case 16:
		t := (*[16]float32)(v)
		a0, a1, a2, a3 := t[0]+t[8], t[1]+t[9], t[2]+t[10], t[3]+t[11]
		a4, a5, a6, a7 := t[4]+t[12], t[5]+t[13], t[6]+t[14], t[7]+t[15]
		b0, b1, b2, b3 := a0+a4, a1+a5, a2+a6, a3+a7
		return (b0 + b2) + (b1 + b3)
	case 8:
		t := (*[8]float32)(v)
		b0, b1, b2, b3 := t[0]+t[4], t[1]+t[5], t[2]+t[6], t[3]+t[7]
		return (b0 + b2) + (b1 + b3)
	}
	return laneSumLoop(v)
}

// laneSumLoop is LaneSum for any count of lanes up to 16.
func laneSumLoop(v []float32) float32 {
	var t [16]float32
	n := copy(t[:], v)
	for n > 1 {
		n /= 2
		for l := range n {
			t[l] += t[l+n]
		}
	}
	return t[0]
}
