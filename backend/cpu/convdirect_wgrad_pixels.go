package cpu

import (
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// The pixels orientation of the direct weight gradient (see wgradPlan):
// rounds of one chunk of images per segment. Each round first writes the
// shifted copies of x for its images (one task per segment), then runs
// one task per segment and output channel tile: for every input channel,
// kernel row and kernel column tile, one gemm.SdotBlocks call over the
// chunk's images (block m is image m, the partial sums held in registers
// across them), adding to the tile's lanes in the segment's partial
// gradient from the second round on. A tile's sums therefore run over
// its segment's images and pixels in order whichever worker runs it, and
// the many small tasks keep the workers evenly loaded.

// pixelTile is one output channel tile of group gr: its channels ct and
// the offset at of its blocks in a partial gradient.
type pixelTile struct {
	gr, at int
	ct     span
}

// pixelTasks accumulates the partial gradient of every segment of p into
// parts (pixels orientation): per group, output channel tile, input
// channel and kernel row the gemm.Sdot blocks of the tile's channels ×
// that row's kernel column tiles, lanes innermost.
func (p *wgradPlan) pixelTasks(x, gy []float32, parts [][]float32) {
	ri, rj := gemm.SdotMaxRows()
	cots, kxts := spans(p.opg, ri), spans(p.g.Kw, rj)
	var tiles []pixelTile
	at := 0
	for gr := range p.groups {
		for _, ct := range cots {
			tiles = append(tiles, pixelTile{gr, at, ct})
			at += ct.n * p.ipg * p.g.Kh * p.g.Kw * p.lanes
		}
	}
	ohw := p.ho * p.wo
	plane := p.hp * p.wo          // one shifted copy
	img := p.cin * p.g.Kw * plane // one image's copies, all groups
	nseg := len(p.segs)
	xb := getScratch[float32](&scratchF32, nseg*p.chunk*img)
	defer scratchF32.Put(xb)
	xs := *xb
	rounds := 0
	for _, s := range p.segs {
		rounds = max(rounds, (s.n+p.chunk-1)/p.chunk)
	}
	for r := range rounds {
		// chunk returns the first image and count of segment s's images
		// in this round.
		chunk := func(s int) (lo, nb int) {
			seg := p.segs[s]
			lo = seg.lo + r*p.chunk
			return lo, min(p.chunk, seg.lo+seg.n-lo)
		}
		directFor(nseg, func(s int) {
			lo, nb := chunk(s)
			for i := range nb {
				p.shiftedCopies(xs[(s*p.chunk+i)*img:][:img], x, lo+i)
			}
		})
		directFor(nseg*len(tiles), func(t int) {
			s, tl := t/len(tiles), tiles[t%len(tiles)]
			lo, nb := chunk(s)
			if nb <= 0 {
				return
			}
			a := gy[(lo*p.cout+tl.gr*p.opg+tl.ct.lo)*ohw:]
			xg := xs[(s*p.chunk*p.cin+tl.gr*p.ipg)*p.g.Kw*plane:]
			c := parts[s][tl.at:]
			for ci := range p.ipg {
				for ky := range p.g.Kh {
					for _, kt := range kxts {
						b := xg[(ci*p.g.Kw+kt.lo)*plane+ky*p.g.Dh*p.wo:]
						n := tl.ct.n * kt.n * p.lanes
						gemm.SdotBlocks(tl.ct.n, kt.n, ohw, nb, a, ohw, p.cout*ohw, b, plane, img, c[:n], r > 0)
						c = c[n:]
					}
				}
			}
		})
	}
}

// shiftedCopies writes dst[c][kx][y][ow] = xp[c][y][ow + kx·dw] for every
// input channel c of image i, xp the padded input: per kernel column, the
// input shifted by that column and cut to the output width.
func (p *wgradPlan) shiftedCopies(dst, x []float32, i int) {
	hw, plane := p.h*p.w, p.hp*p.wo
	for c := range p.cin {
		src := x[(i*p.cin+c)*hw:][:hw]
		for kx := range p.g.Kw {
			d := dst[(c*p.g.Kw+kx)*plane:][:plane]
			// Output column ow reads input column ow + kx·dw − pw.
			sx := kx*p.g.Dw - p.g.Pw
			lo, hi := max(0, -sx), min(p.wo, p.w-sx)
			if p.g.Ph == 0 && lo == 0 && hi == p.wo {
				// No padding in reach: whole rows.
				copyRows(d, p.wo, src[sx:], p.w, p.h, p.wo)
				continue
			}
			for y := range p.hp {
				row := d[y*p.wo:][:p.wo]
				iy := y - p.g.Ph
				if iy < 0 || iy >= p.h || lo >= hi {
					clear(row)
					continue
				}
				clear(row[:lo])
				copy(row[lo:hi], src[iy*p.w+lo+sx:])
				clear(row[hi:])
			}
		}
	}
}

// finishPixels writes out from the pixels orientation's summed partial
// lanes (pixelTasks' layout).
func (p *wgradPlan) finishPixels(sum, out []float32) {
	ri, rj := gemm.SdotMaxRows()
	cots, kxts := spans(p.opg, ri), spans(p.g.Kw, rj)
	taps := p.g.Kh * p.g.Kw
	at := 0
	for gr := range p.groups {
		for _, ct := range cots {
			for ci := range p.ipg {
				for ky := range p.g.Kh {
					for _, kt := range kxts {
						for i := range ct.n {
							for j := range kt.n {
								co, kx := gr*p.opg+ct.lo+i, kt.lo+j
								v := gemm.LaneSum(sum[at+(i*kt.n+j)*p.lanes:][:p.lanes])
								out[(co*p.ipg+ci)*taps+ky*p.g.Kw+kx] = v
							}
						}
						at += ct.n * kt.n * p.lanes
					}
				}
			}
		}
	}
}
