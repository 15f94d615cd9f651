package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

// directWeightGrad runs the weight gradient of the float32 host tensors xt
// and gt on the Winograd path (useWinogradWgrad, convwino_wgrad.go) or the
// direct path when their shapes allow, returning nil otherwise.
func (be *Backend) directWeightGrad(xt, gt ir.Tensor, ws [4]int, o backend.ConvOptions, dt ir.DType, shape []int) ir.Tensor {
	x, ok1 := view[float32](xt)
	gy, ok2 := view[float32](gt)
	if !ok1 || !ok2 || len(x.Shape) != 4 || len(gy.Shape) != 4 || numel(shape) == 0 {
		return nil
	}
	xs, gs, g := [4]int(x.Shape), [4]int(gy.Shape), unfold.GeomOf(ws[2], ws[3], o)
	wp, wino := useWinogradWgrad(xs, ws, gs, g, o.Groups)
	p := newWgradPlan(xs, ws, gs, g, o.Groups)
	if !wino && p == nil {
		return nil
	}
	xd, gd, out := dense(x, be.f32), dense(gy, be.f32), be.f32(numel(shape))
	if wino {
		wp.run(xd, gd, out)
		if winoFinite(out) {
			return wrap(dt, shape, out)
		}
		// As for the Winograd conv2d (Backend.directConv): an Inf or NaN
		// input, or an overflow inside the transforms, spoils whole
		// tiles; the direct kernels compute the result again, over it
		// (or the general kernel, where they do not take the shapes).
		if p == nil {
			return nil
		}
	}
	p.run(xd, gd, out)
	return wrap(dt, shape, out)
}

// The direct float32 weight gradient of conv2d (unit stride; 5×5 kernels
// with enough channels and tiles take the Winograd path of
// convwino_wgrad.go first when WinogradEnv is "all", unless its result is
// not finite), tap by tap:
//
//	gw[co, ci, ky, kx] = Σ_{n,oh,ow} g[n, co, oh, ow] · xp[n, ci, oh+ky·dh, ow+kx·dw]
//
// (xp: x zero-padded), in one of two orientations:
//
//   - channels (Cin/G of at least half a vector): each tap's
//     [Cout/G, Cin/G] block is a product of depth N·Ho·Wo computed by
//     gemm.Stile tiles over chunks of images whose operands are first
//     transposed to pixel-major (NHWC) buffers: tile rows are output
//     channels co (broadcast from g's NHWC copy), columns input channel
//     vectors of x's NHWC copy at the tap's shifted pixel;
//   - pixels (fewer input channels, such as a first layer on one-channel
//     images): every weight is the dot product of an output channel's
//     plane of g, read in place, and the input plane shifted by the tap,
//     taken from a per-image copy of x with one plane per kernel column
//     (x shifted by kx, cut to the output width, so that each tap's
//     operand is contiguous over the flattened output pixels); gemm.Sdot
//     tiles of up to 5 channels × 5 taps keep their lanes' partial sums in
//     a buffer across the chunks of images, added up once at the end
//     (convdirect_wgrad_pixels.go).
//
// The batch is cut into a number of image segments that depends only on
// the shapes; each segment's partial gradient is one task (its chunks in
// order, each tile summing its pixels in order; in the pixels
// orientation, one task per segment and output channel tile, each
// writing its own tiles of the segment's partial gradient), and the
// partial gradients are added in segment order, so the result does not
// depend on the worker count or scheduling.

// wgradSegmentImages is the batch share of one segment, and
// wgradMaxSegments bounds their count (so the partial sums stay few).
const (
	wgradSegmentImages = 16
	wgradMaxSegments   = 8
)

// wgradChunkBytes is the size of the transposed operands of one chunk of
// images, meant to stay in the L2 cache while its tiles run.
const wgradChunkBytes = 256 << 10

// wgradPlan is a direct weight gradient: shapes and orientation.
type wgradPlan struct {
	n, cin, h, w, cout, ho, wo int
	groups, ipg, opg           int
	g                          unfold.Geom
	lanes                      int
	hp, wp                     int  // the padded input
	pixels                     bool // the pixels orientation (else channels)
	ldg, ldx                   int  // channels of a pixel in g's and x's NHWC copies (channels)
	chunk                      int  // images per chunk
	segs                       []span
	partLen                    int // one segment's partial gradient, all groups
}

// newWgradPlan returns the plan of the weight gradient of a conv2d with
// input xs, weights ws and output gradient gs under g, or nil when the
// direct path does not apply: no tile kernels, a stride other than 1,
// empty shapes, or too few channels for either orientation.
func newWgradPlan(xs, ws, gs [4]int, g unfold.Geom, groups int) *wgradPlan {
	lanes := gemm.TileLanes()
	if !(gemm.TileAccelerated() || directPortable) || g.Sh != 1 || g.Sw != 1 || groups < 1 {
		return nil
	}
	p := &wgradPlan{n: xs[0], cin: xs[1], h: xs[2], w: xs[3], cout: gs[1], ho: gs[2], wo: gs[3],
		groups: groups, g: g, lanes: lanes}
	p.ipg, p.opg = p.cin/groups, p.cout/groups
	p.hp, p.wp = p.h+2*g.Ph, p.w+2*g.Pw
	if p.n < 1 || p.ho < 1 || p.wo < 1 || p.ipg < 1 || p.opg < 1 || p.ho+(g.Kh-1)*g.Dh != p.hp || p.wo+(g.Kw-1)*g.Dw != p.wp {
		return nil
	}
	p.pixels = 2*p.ipg < lanes
	p.ldg = roundUp(p.opg, lanes)
	p.ldx = roundUp(p.ipg, lanes)
	perImage := p.ho*p.wo*p.ldg + p.hp*p.wp*p.ldx
	if p.pixels {
		perImage = p.cin * g.Kw * p.hp * p.wo // the shifted copies
	}
	segs := min(wgradMaxSegments, (p.n+wgradSegmentImages-1)/wgradSegmentImages)
	p.segs = spans(p.n, (p.n+segs-1)/segs)
	p.chunk = max(1, min(p.segs[0].n, wgradChunkBytes/(4*perImage)))
	taps := g.Kh * g.Kw
	if p.pixels {
		p.partLen = groups * p.opg * p.ipg * taps * lanes
	} else {
		p.partLen = groups * taps * p.opg * p.ldx
	}
	if !fitsInt32(p.chunk*perImage, p.n*p.cin*p.h*p.w, p.partLen) {
		return nil
	}
	return p
}

// run computes the weight gradient out [cout, cin/groups, kh,
// kw] of x [n, cin, h, w] and g [n, cout, ho, wo] (both contiguous) with
// plan p.
func (p *wgradPlan) run(x, gy, out []float32) {
	parts, release := segmentParts(len(p.segs), p.partLen)
	defer release()
	if p.pixels {
		p.pixelTasks(x, gy, parts)
	} else {
		directFor(len(p.segs), func(s int) { p.segment(x, gy, p.segs[s], parts[s]) })
	}
	// The partial gradients added in segment order, then permuted to
	// out[gr·opg + co, ci, tap].
	sum := sumParts(parts)
	taps := p.g.Kh * p.g.Kw
	if p.pixels {
		p.finishPixels(sum, out)
		return
	}
	tapMajorToOut(sum, out, p.groups, p.opg, p.ipg, p.ldx, taps, p.opg*p.ldx)
}

// segment accumulates the partial gradient of images seg into part
// (channels orientation).
func (p *wgradPlan) segment(x, gy []float32, seg span, part []float32) {
	ohw, hpwp := p.ho*p.wo, p.hp*p.wp
	gb := getScratch[float32](&scratchF32, p.chunk*ohw*p.ldg)
	defer scratchF32.Put(gb)
	xb := getScratch[float32](&scratchF32, p.chunk*hpwp*p.ldx)
	defer scratchF32.Put(xb)
	gt, xt := *gb, *xb
	taps := p.g.Kh * p.g.Kw
	blocks := colBlocks(p.ipg, p.lanes)
	for c0 := seg.lo; c0 < seg.lo+seg.n; c0 += p.chunk {
		nb := min(p.chunk, seg.lo+seg.n-c0)
		for gr := range p.groups {
			// g's NHWC copy: gt[(i·ohw + px)·ldg + co].
			for i := range nb {
				src := gy[((c0+i)*p.cout+gr*p.opg)*ohw:]
				transposeTo(gt[i*ohw*p.ldg:], p.ldg, src, ohw, p.opg, ohw)
			}
			p.channelTiles(x, gt, xt, c0, nb, gr, c0 > seg.lo, part[gr*taps*p.opg*p.ldx:], blocks)
		}
	}
}

// channelTiles runs the channels orientation for images [c0, c0+nb) of
// group gr: x's NHWC copy, then per tap, output-channel rows × input
// channel vectors into part [tap][co][ldx].
func (p *wgradPlan) channelTiles(x, gt, xt []float32, c0, nb, gr int, acc bool, part []float32, blocks []colBlock) {
	hw, hpwp, ohw := p.h*p.w, p.hp*p.wp, p.ho*p.wo
	for i := range nb {
		dst := xt[i*hpwp*p.ldx : (i+1)*hpwp*p.ldx]
		src := x[((c0+i)*p.cin+gr*p.ipg)*hw:]
		if p.g.Ph == 0 && p.g.Pw == 0 {
			transposeTo(dst, p.ldx, src, hw, p.ipg, hw)
			continue
		}
		clear(dst)
		for y := range p.h {
			transposeTo(dst[((y+p.g.Ph)*p.wp+p.g.Pw)*p.ldx:], p.ldx, src[y*p.w:], hw, p.ipg, p.w)
		}
	}
	depth := nb * ohw
	bo := make([]int, depth)
	for i := range nb {
		for oh := range p.ho {
			for ow := range p.wo {
				bo[(i*p.ho+oh)*p.wo+ow] = (i*hpwp + oh*p.wp + ow) * p.ldx
			}
		}
	}
	aoff, boff := stridedTable(depth, p.ldg), offsets(bo)
	groups := groupSpans(spans(p.opg, gemm.TileMaxRows(2)))
	var pos []gemm.TilePos
	for ky := range p.g.Kh {
		for kx := range p.g.Kw {
			b := xt[(ky*p.g.Dh*p.wp+kx*p.g.Dw)*p.ldx:]
			c0 := (ky*p.g.Kw + kx) * p.opg * p.ldx
			for _, blk := range blocks {
				for _, rg := range groups {
					pos = pos[:0]
					for _, lo := range rg.starts {
						pos = append(pos, gemm.TilePos{A: int32(lo), C: int32(c0 + lo*p.ldx + blk.off)})
					}
					gemm.StileBatch(rg.n, blk.vecs, depth, gt, aoff, b[blk.off:], boff, part, p.ldx, acc, pos)
				}
			}
		}
	}
}
