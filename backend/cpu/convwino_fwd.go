package cpu

import "github.com/emberml/ember/backend/cpu/internal/winograd"

// forwardUnit computes output tile row ty of image group gi of a Winograd
// conv2d (see convwino.go).
func (p *winoPlan) forwardUnit(x, out []float32, gi, ty int, s *winoScratch) {
	const A, Mt = winograd.Alpha, winograd.M
	L := p.lanes
	n0 := gi * L
	nimg := min(L, p.n-n0)
	y0 := Mt*ty - p.ph // input row of the tiles' first row
	ry0, ry1 := max(0, y0), min(p.h, y0+A)
	rowsOut := min(Mt, p.ho-Mt*ty)
	yb := (*s.y)[:L*p.ystride]
	var soff [winograd.Points]int32
	var doff [Mt * Mt]int32
	for tx0 := 0; tx0 < p.tilesX; tx0 += p.chunk {
		tx1 := min(p.tilesX, tx0+p.chunk)
		ncols := (tx1 - tx0) * L
		xa, xe := max(0, Mt*tx0-p.pw), min(p.w, Mt*(tx1-1)-p.pw+A)
		cstride := p.input(x, n0, nimg, ry0, ry1, xa, xe, s)
		rows, width := max(0, ry1-ry0), max(0, xe-xa)
		vstride := p.cin*ncols + L
		v := (*s.v)[:winograd.Points*vstride]
		for tx := tx0; tx < tx1; tx++ {
			for i := range A {
				for j := range A {
					yy, xx := y0+i, Mt*tx-p.pw+j
					o := rows * width * L // the zero vector
					if yy >= ry0 && yy < ry1 && xx >= xa && xx < xe {
						o = ((yy-ry0)*width + xx - xa) * L
					}
					soff[A*i+j] = int32(o)
				}
			}
			p.set.Input(p.cin, (*s.x)[:p.cin*cstride], cstride, &soff, v[(tx-tx0)*L:], ncols, vstride, &s.tmp)
		}
		aoff := stridedTable(p.cin, ncols)
		for _, b := range p.blocks {
			m, mstride := p.products(v, ncols, vstride, aoff, b, s)
			bw := b.vecs * L
			for tx := tx0; tx < tx1; tx++ {
				for i := range Mt {
					for j := range Mt {
						o := Mt * p.wo * p.ldu // the dummy pixel
						if i < rowsOut && Mt*tx+j < p.wo {
							o = (i*p.wo + Mt*tx + j) * p.ldu
						}
						doff[Mt*i+j] = int32(o)
					}
				}
				for vv := range b.vecs {
					p.set.Output(nimg, m[(tx-tx0)*L*bw+vv*L:], bw, mstride, yb[b.off+vv*L:], p.ystride, &doff, &s.tmp)
				}
			}
		}
	}
	ohw := p.ho * p.wo
	for l := range nimg {
		transposeTo(out[((n0+l)*p.cout)*ohw+Mt*ty*p.wo:], ohw, yb[l*p.ystride:], p.ldu, rowsOut*p.wo, p.cout)
	}
}
