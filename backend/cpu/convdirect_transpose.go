package cpu

import (
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/internal/unfold"
)

// The direct float32 conv_transpose2d (the input gradient of conv2d), tap
// by tap.
//
// With unit stride, input pixel (oh, ow) of image n, group gr contributes
// through kernel tap (ky, kx) to output pixel (oh + ky·dh − ph,
// ow + kx·dw − pw) of every output channel of the group:
//
//	out[oh+sy][ow0+r+sx][co] += Σ_ci x[ci, oh, ow0+r] · w[ci, co, ky, kx]
//
// For a tap and R consecutive input pixels of one row this is one
// gemm.Stile call of depth Cin/groups (an offset table over the input's
// channel planes, the weights packed per tap as [ci][channel] rows) that
// adds into R consecutive pixels of a pixel-major (NHWC) output buffer:
// the column-matrix scatter (col2im) becomes the tile's accumulating
// store, and no contribution that the padding crops is computed. Output
// elements receive their taps in a fixed order (taps, then rows, then
// tiles), each tap's sum over ci in increasing order, and images are split
// over the workers, so the result does not depend on the worker count or
// scheduling. The buffer is transposed into the NCHW output at the end.

// useDirectConvTranspose reports whether the direct path runs a
// conv_transpose2d of input [n, cin, h, w], weights
// [cin, cout/groups, kh, kw] and output [n, cout, ho, wo] under g: float32
// tile kernels, unit stride, input rows of at least 3 pixels, at least 8
// input and half a vector of output channels per group, and buffers that
// int32 offsets address.
func useDirectConvTranspose(xs, ws [4]int, os [4]int, g unfold.Geom, groups int) bool {
	lanes := gemm.TileLanes()
	if !(gemm.TileAccelerated() || directPortable) || g.Sh != 1 || g.Sw != 1 || groups < 1 {
		return false
	}
	ipg, opg := xs[1]/groups, os[1]/groups
	return xs[3] >= 3 && xs[2] >= 1 && ipg >= 8 && opg*2 >= lanes && os[0] >= 1 &&
		fitsInt32(xs[0]*xs[1]*xs[2]*xs[3], ws[2]*ws[3]*ipg*roundUp(opg, lanes), os[2]*os[3]*roundUp(opg, lanes))
}

// tposePlan is a direct conv_transpose2d: shapes, packed weights, tables.
type tposePlan struct {
	n, cin, h, w, cout, ho, wo int
	groups, ipg, opg           int
	g                          unfold.Geom
	lanes, ldy                 int
	blocks                     []colBlock
	wpk                        []float32 // [group][tap][block][ci][block columns]
	wbuf                       *[]float32
	blockAt                    []int // start of each block within a tap
	tapLen                     int
	aoff                       gemm.Offsets
	boff                       [3]gemm.Offsets
	groupsX                    [][]spanGroup // tiles of the input pixels of a row that tap column kx keeps, by length
}

func newTposePlan(w []float32, xs, ws [4]int, os [4]int, g unfold.Geom, groups int) *tposePlan {
	p := &tposePlan{n: xs[0], cin: xs[1], h: xs[2], w: xs[3], cout: os[1], ho: os[2], wo: os[3],
		groups: groups, g: g, lanes: gemm.TileLanes()}
	p.ipg, p.opg = p.cin/groups, p.cout/groups
	p.blocks = colBlocks(p.opg, p.lanes)
	p.ldy = roundUp(p.opg, p.lanes)
	for _, b := range p.blocks {
		p.blockAt = append(p.blockAt, p.tapLen)
		p.tapLen += p.ipg * b.vecs * p.lanes
	}
	taps := g.Kh * g.Kw
	p.wbuf = getScratch[float32](&scratchF32, groups*taps*p.tapLen)
	p.wpk = *p.wbuf
	pack := func(u int) { // one group and tap
		gr, t := u/taps, u%taps
		for bi, b := range p.blocks {
			cols := b.vecs * p.lanes
			dst := p.wpk[u*p.tapLen+p.blockAt[bi]:][:p.ipg*cols]
			n := min(cols, p.opg-b.off)
			for ci := range p.ipg {
				row := dst[ci*cols:][:cols]
				src := w[((gr*p.ipg+ci)*p.opg+b.off)*taps+t:]
				for j := range n {
					row[j] = src[j*taps]
				}
				clear(row[n:])
			}
		}
	}
	directFor(groups*taps, pack)
	p.aoff = stridedTable(p.ipg, p.h*p.w)
	for v := 1; v <= 2; v++ {
		p.boff[v] = stridedTable(p.ipg, v*p.lanes)
	}
	p.groupsX = make([][]spanGroup, g.Kw)
	for kx := range g.Kw {
		sx := kx*g.Dw - g.Pw
		lo, hi := max(0, -sx), min(p.w, p.wo-sx)
		var ts []span
		for _, s := range spans(hi-lo, gemm.TileMaxRows(2)) {
			ts = append(ts, span{lo + s.lo, s.n})
		}
		p.groupsX[kx] = groupSpans(ts)
	}
	return p
}

// directConvTranspose2d computes the conv_transpose2d of x [n, cin, h, w]
// (contiguous) and w [cin, cout/groups, kh, kw] into out
// [n, cout, ho, wo] (every element written); useDirectConvTranspose must
// hold.
func directConvTranspose2d(x, w, out []float32, xs, ws [4]int, os [4]int, g unfold.Geom, groups int) {
	p := newTposePlan(w, xs, ws, os, g, groups)
	defer scratchF32.Put(p.wbuf)
	units := p.n * p.groups
	run := func(lo, hi int) {
		yb := getScratch[float32](&scratchF32, p.ho*p.wo*p.ldy)
		defer scratchF32.Put(yb)
		for u := lo; u < hi; u++ {
			p.image(x, out, u/p.groups, u%p.groups, *yb)
		}
	}
	parallelUnits(units, run)
}

// image computes image i, group gr, accumulating in the NHWC buffer yb.
func (p *tposePlan) image(x, out []float32, i, gr int, yb []float32) {
	hw, ohw := p.h*p.w, p.ho*p.wo
	src := x[(i*p.cin+gr*p.ipg)*hw : (i*p.cin+(gr+1)*p.ipg)*hw]
	yh := yb[:ohw*p.ldy]
	clear(yh)
	taps := p.g.Kh * p.g.Kw
	var pos []gemm.TilePos
	for ky := range p.g.Kh {
		sy := ky*p.g.Dh - p.g.Ph
		oh0, oh1 := max(0, -sy), min(p.h, p.ho-sy)
		for kx := range p.g.Kw {
			sx := kx*p.g.Dw - p.g.Pw
			wt := p.wpk[(gr*taps+ky*p.g.Kw+kx)*p.tapLen:]
			for bi, b := range p.blocks {
				for _, tg := range p.groupsX[kx] {
					pos = pos[:0]
					for oh := oh0; oh < oh1; oh++ {
						for _, lo := range tg.starts {
							pos = append(pos, gemm.TilePos{A: int32(oh*p.w + lo), C: int32(((oh+sy)*p.wo+lo+sx)*p.ldy + b.off)})
						}
					}
					gemm.StileBatch(tg.n, b.vecs, p.ipg, src, p.aoff, wt[p.blockAt[bi]:], p.boff[b.vecs], yh, p.ldy, true, pos)
				}
			}
		}
	}
	transposeTo(out[(i*p.cout+gr*p.opg)*ohw:], ohw, yh, p.ldy, ohw, p.opg)
}
