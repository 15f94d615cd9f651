package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

// The direct float32 conv2d: an implicit GEMM whose tiles read the
// (padded) input image in place.
//
// For output row oh of image n and group gr, a tile of R consecutive
// output pixels ow0…ow0+R−1 and up to two vectors of output channels is
//
//	y[ow0+r][co] = Σ_{ci,ky,kx} x[ci, oh+ky·dh, ow0+r+kx·dw] · w[co, ci, ky, kx]
//
// one gemm.Stile call: the depth p = (ci, ky, kx) is an offset table into
// the image (the R pixels of one tap are consecutive there because the
// stride is 1), the weights are packed once per call as [p][channel]
// rows. Tiles land in a pixel-major (NHWC) buffer of the image, which is
// transposed into the NCHW output at the end. Every output element is the
// sum over p in increasing order, computed by one tile; images (or rows of
// one image) are split over the workers, so the result does not depend on
// the worker count or scheduling.

// directPortable lets the direct paths run on gemm's portable tile loop
// (tests of the drivers on machines without, or with the kernels switched
// off); otherwise they need assembly tile kernels.
var directPortable = false

// directSerial runs the direct paths on the calling goroutine only (tests
// compare it bit for bit with the parallel run).
var directSerial = false

// directConvDepth bounds the depth of one tile call (a chunk of p), so that
// the packed weights of a column block (depth × 32 float32, 128 KiB) stay
// in the L2 cache while every tile of an image reads them. (Shorter chunks
// measured slower on the MNIST CNN's 800-deep layer: each adds a pass of
// accumulating stores.)
const directConvDepth = 1024

// useDirectConv reports whether the direct path runs a conv2d of input
// [n, cin, h, w], weights [cout, cin/groups, kh, kw] and output
// [n, cout, ho, wo] under g: float32 tile kernels on this machine, unit
// stride, output rows of at least 3 pixels, at least half a vector of
// output channels per group, and buffers that int32 offsets address.
func useDirectConv(xs, ws [4]int, os [4]int, g unfold.Geom, groups int) bool {
	lanes := gemm.TileLanes()
	if !(gemm.TileAccelerated() || directPortable) || g.Sh != 1 || g.Sw != 1 || groups < 1 {
		return false
	}
	opg, ipg := os[1]/groups, xs[1]/groups
	hp, wp := xs[2]+2*g.Ph, xs[3]+2*g.Pw
	return os[3] >= 3 && os[2] >= 1 && opg*2 >= lanes && ipg >= 1 && os[0] >= 1 &&
		fitsInt32(ipg*hp*wp, xs[0]*xs[1]*xs[2]*xs[3], ipg*ws[2]*ws[3]*roundUp(opg, lanes), os[2]*os[3]*roundUp(opg, lanes))
}

// fwdPlan is a direct conv2d: shapes, the packed weights and the tables.
type fwdPlan struct {
	n, cin, h, w, cout, ho, wo int
	groups, ipg, opg, k        int
	g                          unfold.Geom
	lanes                      int
	hp, wp                     int // the padded input image
	padded                     bool
	ldy                        int // channels of a pixel in the NHWC tile buffer
	blocks                     []colBlock
	wpk                        []float32 // [group][block][p][block columns]
	wbuf                       *[]float32
	blockAt                    []int // start of each block within a group
	groupLen                   int
	aoff                       gemm.Offsets
	boff                       [3]gemm.Offsets // by vectors: p·columns, p within a chunk
	tiles                      []span          // along an output row
	tileGroups                 []spanGroup     // the tiles by length
	chunks                     []span          // of the depth
}

// newFwdPlan packs w [cout, ipg, kh, kw] for the convolution of
// useDirectConv's arguments.
func newFwdPlan(w []float32, xs, ws [4]int, os [4]int, g unfold.Geom, groups int) *fwdPlan {
	p := &fwdPlan{n: xs[0], cin: xs[1], h: xs[2], w: xs[3], cout: os[1], ho: os[2], wo: os[3],
		groups: groups, g: g, lanes: gemm.TileLanes()}
	p.ipg, p.opg = p.cin/groups, p.cout/groups
	p.k = p.ipg * g.Kh * g.Kw
	p.hp, p.wp = p.h+2*g.Ph, p.w+2*g.Pw
	p.padded = g.Ph > 0 || g.Pw > 0
	p.blocks = colBlocks(p.opg, p.lanes)
	p.ldy = roundUp(p.opg, p.lanes)
	for _, b := range p.blocks {
		p.blockAt = append(p.blockAt, p.groupLen)
		p.groupLen += p.k * b.vecs * p.lanes
	}
	p.wbuf = getScratch[float32](&scratchF32, groups*p.groupLen)
	p.wpk = *p.wbuf
	for gr := range groups {
		for bi, b := range p.blocks {
			cols := b.vecs * p.lanes
			dst := p.wpk[gr*p.groupLen+p.blockAt[bi]:][:p.k*cols]
			n := min(cols, p.opg-b.off)
			if n < cols {
				clear(dst)
			}
			for j := range n {
				src := w[(gr*p.opg+b.off+j)*p.k:][:p.k]
				for q, v := range src {
					dst[q*cols+j] = v
				}
			}
		}
	}
	ao := make([]int, p.k)
	for ci := range p.ipg {
		for y := range g.Kh {
			for x := range g.Kw {
				ao[(ci*g.Kh+y)*g.Kw+x] = ci*p.hp*p.wp + y*g.Dh*p.wp + x*g.Dw
			}
		}
	}
	p.aoff = offsets(ao)
	p.tiles = spans(p.wo, gemm.TileMaxRows(2))
	p.tileGroups = groupSpans(p.tiles)
	p.chunks = spans(p.k, directConvDepth)
	longest := 0
	for _, c := range p.chunks {
		longest = max(longest, c.n)
	}
	for v := 1; v <= 2; v++ {
		p.boff[v] = stridedTable(longest, v*p.lanes)
	}
	return p
}

// directConv2d computes the conv2d of x [n, cin, h, w] (contiguous) and
// w [cout, cin/groups, kh, kw] into out [n, cout, ho, wo] (every element
// written); useDirectConv must hold.
func directConv2d(x, w, out []float32, xs, ws [4]int, os [4]int, g unfold.Geom, groups int) {
	p := newFwdPlan(w, xs, ws, os, g, groups)
	defer scratchF32.Put(p.wbuf)
	type task struct{ i, gr, r0, r1 int }
	var tasks []task
	nw := workers.Workers()
	parts := 1
	if units := p.n * p.groups; units < nw {
		parts = min(p.ho, (nw+units-1)/units)
	}
	for i := range p.n {
		for gr := range p.groups {
			for _, s := range spans(p.ho, (p.ho+parts-1)/parts) {
				tasks = append(tasks, task{i, gr, s.lo, s.lo + s.n})
			}
		}
	}
	run := func(lo, hi int) {
		xb := getScratch[float32](&scratchF32, p.ipg*p.hp*p.wp)
		defer scratchF32.Put(xb)
		yb := getScratch[float32](&scratchF32, p.ho*p.wo*p.ldy)
		defer scratchF32.Put(yb)
		for _, t := range tasks[lo:hi] {
			p.rows(x, out, t.i, t.gr, t.r0, t.r1, *xb, *yb)
		}
	}
	parallelUnits(len(tasks), run)
}

// directFor calls f(t) for every t in [0, n): on the worker pool, or in
// order on the calling goroutine with one task, one worker or
// directSerial. The tasks must write disjoint outputs.
func directFor(n int, f func(t int)) {
	if n > 1 && workers.Workers() > 1 && !directSerial {
		workers.ParallelFor(n, f)
		return
	}
	for t := range n {
		f(t)
	}
}

// segmentParts returns n scratch buffers of partLen float32 (unspecified
// contents) for the partial sums of a weight gradient's segments, and the
// function that gives them back.
func segmentParts(n, partLen int) (parts [][]float32, release func()) {
	bufs := make([]*[]float32, n)
	parts = make([][]float32, n)
	for s := range parts {
		bufs[s] = getScratch[float32](&scratchF32, partLen)
		parts[s] = *bufs[s]
	}
	return parts, func() {
		for _, b := range bufs {
			scratchF32.Put(b)
		}
	}
}

// sumParts adds the partial sums parts[1:] into parts[0] in order, so the
// result does not depend on which worker computed which, and returns it.
func sumParts(parts [][]float32) []float32 {
	sum := parts[0]
	for _, q := range parts[1:] {
		addF32(sum, sum, q, len(sum))
	}
	return sum
}

// parallelUnits runs run over [0, units) in chunks handed out to the
// workers as they come free (about eight a worker, so that a worker the
// machine slows down takes fewer), or serially with directSerial. The
// units of the direct kernels write disjoint outputs, so the chunking does
// not change any result.
func parallelUnits(units int, run func(lo, hi int)) {
	nw := workers.Workers()
	if nw <= 1 || units <= 1 || directSerial {
		run(0, units)
		return
	}
	chunk := max(1, units/(8*nw))
	workers.ParallelFor((units+chunk-1)/chunk, func(t int) { run(t*chunk, min(units, (t+1)*chunk)) })
}

// rows computes output rows [r0, r1) of image i, group gr, with scratch
// xb (the padded image) and yb (the NHWC tiles).
func (p *fwdPlan) rows(x, out []float32, i, gr, r0, r1 int, xb, yb []float32) {
	hw := p.h * p.w
	src := x[(i*p.cin+gr*p.ipg)*hw : (i*p.cin+(gr+1)*p.ipg)*hw]
	img := src
	if p.padded {
		img = xb[:p.ipg*p.hp*p.wp]
		clear(img)
		for ci := range p.ipg {
			for y := range p.h {
				copy(img[(ci*p.hp+y+p.g.Ph)*p.wp+p.g.Pw:][:p.w], src[ci*hw+y*p.w:][:p.w])
			}
		}
	}
	yh := yb[:(r1-r0)*p.wo*p.ldy]
	wg := p.wpk[gr*p.groupLen:]
	pos := make([]gemm.TilePos, 0, (r1-r0)*len(p.tiles))
	for ci, ch := range p.chunks {
		aoff := p.aoff.Slice(ch.lo, ch.lo+ch.n)
		for bi, b := range p.blocks {
			cols := b.vecs * p.lanes
			wb := wg[p.blockAt[bi]+ch.lo*cols:]
			for _, tg := range p.tileGroups {
				pos = pos[:0]
				for oh := r0; oh < r1; oh++ {
					for _, lo := range tg.starts {
						pos = append(pos, gemm.TilePos{A: int32(oh*p.wp + lo), C: int32(((oh-r0)*p.wo+lo)*p.ldy + b.off)})
					}
				}
				gemm.StileBatch(tg.n, b.vecs, ch.n, img, aoff, wb, p.boff[b.vecs], yh, p.ldy, ci > 0, pos)
			}
		}
	}
	ohw := p.ho * p.wo
	transposeTo(out[(i*p.cout+gr*p.opg)*ohw+r0*p.wo:], ohw, yh, p.ldy, (r1-r0)*p.wo, p.opg)
}

// directConv runs conv2d (or conv_transpose2d when transpose) of the
// float32 host tensors xt and wt on the Winograd path (useWinograd) or the
// direct path when their shapes allow (useDirectConv,
// useDirectConvTranspose), returning nil otherwise.
func (be *Backend) directConv(xt, wt ir.Tensor, o backend.ConvOptions, dt ir.DType, shape []int, transpose bool) ir.Tensor {
	x, ok1 := view[float32](xt)
	w, ok2 := view[float32](wt)
	if !ok1 || !ok2 || len(x.Shape) != 4 || len(w.Shape) != 4 || len(shape) != 4 || numel(shape) == 0 {
		return nil
	}
	xs, ws, os := [4]int(x.Shape), [4]int(w.Shape), [4]int(shape)
	g := unfold.GeomOf(ws[2], ws[3], o)
	if c, ok := useWinograd(xs, ws, os, g, o.Groups, transpose); ok {
		out := be.f32(numel(shape))
		p := newWinoPlan(c, dense(w, be.f32))
		p.run(dense(x, be.f32), out)
		p.release()
		if winoFinite(out) {
			return wrap(dt, shape, out)
		}
		// A transform mixes a whole tile, so an Inf or NaN input, or a
		// product overflowing inside the transforms, spoils outputs far
		// beyond its reach: the direct kernels compute the result again,
		// with NaN and Inf only where a convolution puts them.
	}
	if transpose {
		if !useDirectConvTranspose(xs, ws, os, g, o.Groups) {
			return nil
		}
	} else if !useDirectConv(xs, ws, os, g, o.Groups) {
		return nil
	}
	out := be.f32(numel(shape))
	xd, wd := dense(x, be.f32), dense(w, be.f32)
	if transpose {
		directConvTranspose2d(xd, wd, out, xs, ws, os, g, o.Groups)
	} else {
		directConv2d(xd, wd, out, xs, ws, os, g, o.Groups)
	}
	return wrap(dt, shape, out)
}
