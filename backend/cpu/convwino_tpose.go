package cpu

import "github.com/emberml/ember/backend/cpu/internal/winograd"

// transposedUnit computes the blocks of input tile row ty of image group
// gi of a Winograd conv_transpose2d (see convwino.go) into blk
// [image][8 rows][fw][ldu]: full-output rows 4·ty … 4·ty+7, the blocks of
// the row's tiles added in tile order.
func (p *winoPlan) transposedUnit(x, blk []float32, gi, ty int, s *winoScratch) {
	const A, Mt = winograd.Alpha, winograd.M
	L := p.lanes
	n0 := gi * L
	nimg := min(L, p.n-n0)
	ry0, ry1 := Mt*ty, min(p.h, Mt*ty+Mt)
	clear(blk[:nimg*p.ystride])
	var soff [Mt * Mt]int32
	var doff [winograd.Points]int32
	for tx0 := 0; tx0 < p.tilesX; tx0 += p.chunk {
		tx1 := min(p.tilesX, tx0+p.chunk)
		ncols := (tx1 - tx0) * L
		xa, xe := Mt*tx0, min(p.w, Mt*tx1)
		cstride := p.input(x, n0, nimg, ry0, ry1, xa, xe, s)
		rows, width := ry1-ry0, xe-xa
		vstride := p.cin*ncols + L
		v := (*s.v)[:winograd.Points*vstride]
		for tx := tx0; tx < tx1; tx++ {
			for i := range Mt {
				for j := range Mt {
					yy, xx := ry0+i, Mt*tx+j
					o := rows * width * L // the zero vector
					if yy < ry1 && xx < xe {
						o = (i*width + xx - xa) * L
					}
					soff[Mt*i+j] = int32(o)
				}
			}
			p.set.TransposedInput(p.cin, (*s.x)[:p.cin*cstride], cstride, &soff, v[(tx-tx0)*L:], ncols, vstride, &s.tmp)
		}
		aoff := stridedTable(p.cin, ncols)
		for _, b := range p.blocks {
			m, mstride := p.products(v, ncols, vstride, aoff, b, s)
			bw := b.vecs * L
			for tx := tx0; tx < tx1; tx++ {
				for i := range A {
					for j := range A {
						doff[A*i+j] = int32((i*p.fw + Mt*tx + j) * p.ldu)
					}
				}
				for vv := range b.vecs {
					p.set.TransposedOutput(nimg, m[(tx-tx0)*L*bw+vv*L:], bw, mstride, blk[b.off+vv*L:], p.ystride, &doff, &s.tmp)
				}
			}
		}
	}
}

// band writes band b of output rows of image group gi (full-output rows
// 4b … 4b+3, cropped) from the blocks: row f lies in the block of tile row
// b (its row f − 4b) and, for b > 0, in the block of tile row b−1 (its row
// f − 4b + 4); the two are added in that order into sum, then transposed
// into out.
func (p *winoPlan) band(blocks, out []float32, gi, b int, sum []float32) {
	const Mt = winograd.M
	f0, f1 := max(Mt*b, p.ph), min(Mt*b+Mt, p.ph+p.ho)
	if f0 >= f1 {
		return
	}
	yl, rowLen, ohw := p.yLen(), p.wo*p.ldu, p.ho*p.wo
	for l := range min(p.lanes, p.n-gi*p.lanes) {
		// rows r, r+1, … of the block of tile row t, from column pw
		rows := func(t, r int) []float32 {
			return blocks[(gi*p.tilesY+t)*yl+l*p.ystride+(r*p.fw+p.pw)*p.ldu:]
		}
		row := func(t, r int) []float32 { return rows(t, r)[:rowLen] }
		dst := out[(gi*p.lanes+l)*p.cout*ohw+(f0-p.ph)*p.wo:]
		if b > 0 && b < p.tilesY {
			for f := f0; f < f1; f++ {
				addF32(sum[(f-f0)*rowLen:][:rowLen], row(b, f-Mt*b), row(b-1, f-Mt*b+Mt), 0)
			}
			transposeTo(dst, ohw, sum, p.ldu, (f1-f0)*p.wo, p.cout)
			continue
		}
		t, r0 := b, 0
		if b == p.tilesY {
			t, r0 = b-1, Mt
		}
		if p.wo == p.fw { // uncropped rows follow each other: one transpose
			transposeTo(dst, ohw, rows(t, f0-Mt*b+r0), p.ldu, (f1-f0)*p.wo, p.cout)
			continue
		}
		for f := f0; f < f1; f++ {
			transposeTo(dst[(f-f0)*p.wo:], ohw, row(t, f-Mt*b+r0), p.ldu, p.wo, p.cout)
		}
	}
}
