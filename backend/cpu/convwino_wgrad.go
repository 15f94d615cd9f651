package cpu

import (
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/winograd"
	"github.com/emberml/ember/backend/internal/unfold"
)

// The Winograd float32 weight gradient of conv2d with 5×5 kernels: the
// dual algorithm F(5×5, 4×4) of internal/winograd,
//
//	gw[co, ci] += Gᵀ·[(A·g·Aᵀ) ⊙ (Bᵀ·d·B)]·G
//
// for every 4×4 tile g of an output-gradient plane (zero beyond the
// plane) and the 8×8 tile d of the zero-padded input at the same place,
// summed in the transformed domain: for each of the 64 positions ξ one
// product M_ξ[co][ci] = Σ_{n,tile} U_ξ[(n,tile)][co]·V_ξ[(n,tile)][ci],
// then one output transform per (co, ci). For the MNIST CNN's second layer
// that is 64 products of 64×32×256, 67 MFLOP, instead of 419 MFLOP of
// direct taps.
//
// As the direct weight gradient (convdirect_wgrad.go), the batch is cut
// into segments of images that depend only on the shapes, each one task,
// whose chunks of images run in order:
//
//  1. the chunk's images of x and g are transposed into pixel-major
//     buffers [pixel][image][channel] (channels padded to the vector, one
//     zero pixel for the padding and the partial tiles);
//  2. each tile position of the chunk's images becomes, with the vector
//     lanes over channels, V[ξ][tile·nb + image][ldx] (Input, Bᵀ·d·B) and
//     U[ξ][tile·nb + image][ldg] (TransposedInput, A·g·Aᵀ);
//  3. for each ξ, gemm.Stile tiles of output-channel rows × input-channel
//     vectors add the chunk's depth into the segment's M_ξ (the first
//     chunk stores);
//
// and at the end of the segment, WeightGrad (Gᵀ·M·G) turns M into its
// partial gradient [tap][co][ldx], the direct path's layout. The partial
// gradients are added in segment order, so the result does not depend on
// the worker count or scheduling. As for the Winograd convolutions, a
// result that is not finite (or too large to square in float32) is
// computed again by the direct kernels (winoFinite). Rounding: see
// convwino.go.

// winoWgrad is a Winograd weight gradient being planned or run: x [n, cin,
// h, w], g [n, cout, ho, wo] with 5×5 kernels, unit stride and padding
// (ph, pw).
type winoWgrad struct {
	n, cin, h, w, cout, ho, wo, ph, pw int
	set                                *winograd.Set
	lanes                              int
	ldx, ldg                           int // channels of a pixel in the transposed copies of x and g
	tilesY, tilesX                     int
	chunk                              int // images per chunk, at most
	segs                               []span
	vstride, ustride, mstride          int // ξ strides of V, U (a full chunk) and M
	partLen                            int // one partial gradient [tap][co][ldx], taps tapStride apart
}

// winoWgradMinDepth is the fewest tiles (images × tiles of an image) the
// Winograd weight gradient takes: the products' depth (see the rounding
// note in convwino.go).
const winoWgradMinDepth = 32

// winoWgradChunkBytes bounds the buffers of one chunk of images (the
// transposed copies and their transforms), which stay in the L2 cache
// beside the segment's products M while the chunk's GEMM tiles run.
const winoWgradChunkBytes = 768 << 10

// useWinogradWgrad returns the plan of the weight gradient of a conv2d
// with input xs, weights ws and output gradient gs under g, and whether
// the Winograd path runs it: WinogradEnv "all" (winoWgradOn), float32
// transform and tile kernels, 5×5 kernels, unit stride and dilation, one group, padding of at most
// winoMaxPad and output sides of at least 4 times the padding, at least
// winoMinChannels input and output channels (a first layer on images of
// few channels keeps the direct kernels), 4×4 output tiles at least half
// filled, at least winoWgradMinDepth tiles over the batch (see the
// rounding note in convwino.go), and buffers that int32 offsets address.
func useWinogradWgrad(xs, ws, gs [4]int, g unfold.Geom, groups int) (*winoWgrad, bool) {
	s := winogradSet()
	if s == nil || !winoWgradOn || g.Kh != winograd.R || g.Kw != winograd.R || g.Sh != 1 || g.Sw != 1 || g.Dh != 1 || g.Dw != 1 ||
		groups != 1 || g.Ph < 0 || g.Pw < 0 || g.Ph > winoMaxPad || g.Pw > winoMaxPad {
		return nil, false
	}
	const Mt = winograd.M
	p := &winoWgrad{n: xs[0], cin: xs[1], h: xs[2], w: xs[3], cout: gs[1], ho: gs[2], wo: gs[3], ph: g.Ph, pw: g.Pw,
		set: s, lanes: s.Lanes()}
	if p.n < 1 || p.h < 1 || p.w < 1 || p.ho < 1 || p.wo < 1 || gs[0] != p.n || ws[0] != p.cout || ws[1] != p.cin ||
		p.ho != p.h+2*p.ph-winograd.R+1 || p.wo != p.w+2*p.pw-winograd.R+1 {
		return nil, false
	}
	L := p.lanes
	p.ldx, p.ldg = roundUp(p.cin, L), roundUp(p.cout, L)
	p.tilesY, p.tilesX = (p.ho+Mt-1)/Mt, (p.wo+Mt-1)/Mt
	tiles := p.tilesY * p.tilesX
	if p.cin < winoMinChannels || p.cout < winoMinChannels || 2*p.ho*p.wo < Mt*Mt*tiles ||
		p.ho < Mt*p.ph || p.wo < Mt*p.pw || p.n*tiles < winoWgradMinDepth {
		return nil, false
	}
	segs := min(wgradMaxSegments, (p.n+wgradSegmentImages-1)/wgradSegmentImages)
	p.segs = spans(p.n, (p.n+segs-1)/segs)
	perImage := tiles*winograd.Points*(p.ldx+p.ldg) + p.h*p.w*p.ldx + p.ho*p.wo*p.ldg
	segMax := 0
	for _, sg := range p.segs {
		segMax = max(segMax, sg.n)
	}
	p.chunk = max(1, min(segMax, winoWgradChunkBytes/(4*perImage)))
	K := p.chunk * tiles
	p.vstride, p.ustride = K*p.ldx+L, K*p.ldg+L
	p.mstride = p.cout*p.ldx + L
	p.partLen = winograd.R * winograd.R * p.tapStride()
	if !fitsInt32(p.n*p.cin*p.h*p.w, p.n*p.cout*p.ho*p.wo, (p.h*p.w+1)*p.chunk*p.ldx, (p.ho*p.wo+1)*p.chunk*p.ldg,
		winograd.Points*p.vstride, winograd.Points*p.ustride, winograd.Points*p.mstride, p.partLen) {
		return nil, false
	}
	return p, true
}

// run computes the weight gradient out [cout, cin, 5, 5] of x [n, cin, h,
// w] and g [n, cout, ho, wo] (both contiguous).
func (p *winoWgrad) run(x, gy, out []float32) {
	parts, release := segmentParts(len(p.segs), p.partLen)
	defer release()
	directFor(len(p.segs), func(s int) { p.segment(x, gy, p.segs[s], parts[s]) })
	tapMajorToOut(sumParts(parts), out, 1, p.cout, p.cin, p.ldx, winograd.R*winograd.R, p.tapStride())
}

// tapStride is the distance between the taps of a partial gradient: a
// vector more than cout·ldx, so that WeightGrad's 25 stores of an item do
// not fall on the same 4 KiB offset.
func (p *winoWgrad) tapStride() int { return p.cout*p.ldx + p.lanes }

// segment computes the partial gradient of images seg into part
// [tap][co][ldx].
func (p *winoWgrad) segment(x, gy []float32, seg span, part []float32) {
	const A, Mt, P = winograd.Alpha, winograd.M, winograd.Points
	L := p.lanes
	hw, ohw := p.h*p.w, p.ho*p.wo
	xstep, gstep := p.chunk*p.ldx, p.chunk*p.ldg // a pixel of the copies
	xb := getScratch[float32](&scratchF32, (hw+1)*xstep)
	defer scratchF32.Put(xb)
	gb := getScratch[float32](&scratchF32, (ohw+1)*gstep)
	defer scratchF32.Put(gb)
	vb := getScratch[float32](&scratchF32, P*p.vstride)
	defer scratchF32.Put(vb)
	ub := getScratch[float32](&scratchF32, P*p.ustride)
	defer scratchF32.Put(ub)
	mb := getScratch[float32](&scratchF32, P*p.mstride)
	defer scratchF32.Put(mb)
	xt, gt, v, u, m := *xb, *gb, *vb, *ub, *mb
	// Channels past cin (cout) and the zero pixel stay zero.
	if p.ldx > p.cin {
		clear(xt)
	} else {
		clear(xt[hw*xstep:])
	}
	if p.ldg > p.cout {
		clear(gt)
	} else {
		clear(gt[ohw*gstep:])
	}
	tiles := p.tilesY * p.tilesX
	blocks := colBlocks(p.cin, L)
	var xoff [P]int32
	var goff [Mt * Mt]int32
	var tmp winograd.Tmp
	for _, ch := range spans(seg.n, p.chunk) { // chunks of (about) equal size
		c0, nb := seg.lo+ch.lo, ch.n
		for i := range nb {
			transposeTo(xt[i*p.ldx:], xstep, x[(c0+i)*p.cin*hw:], hw, p.cin, hw)
			transposeTo(gt[i*p.ldg:], gstep, gy[(c0+i)*p.cout*ohw:], ohw, p.cout, ohw)
		}
		for ty := range p.tilesY {
			for tx := range p.tilesX {
				t := ty*p.tilesX + tx
				for i := range A {
					for j := range A {
						yy, xx := Mt*ty-p.ph+i, Mt*tx-p.pw+j
						o := hw // the zero pixel
						if yy >= 0 && yy < p.h && xx >= 0 && xx < p.w {
							o = yy*p.w + xx
						}
						xoff[A*i+j] = int32(o * xstep)
					}
				}
				for i := range Mt {
					for j := range Mt {
						yy, xx := Mt*ty+i, Mt*tx+j
						o := ohw
						if yy < p.ho && xx < p.wo {
							o = yy*p.wo + xx
						}
						goff[Mt*i+j] = int32(o * gstep)
					}
				}
				p.set.Input(nb*p.ldx/L, xt, L, &xoff, v[t*nb*p.ldx:], L, p.vstride, &tmp)
				p.set.TransposedInput(nb*p.ldg/L, gt, L, &goff, u[t*nb*p.ldg:], L, p.ustride, &tmp)
			}
		}
		K := nb * tiles
		aoff, boff := stridedTable(K, p.ldg), stridedTable(K, p.ldx)
		acc := c0 > seg.lo
		for _, blk := range blocks {
			for _, rg := range groupSpans(spans(p.cout, gemm.TileMaxRows(blk.vecs))) {
				pos := make([]gemm.TilePos, len(rg.starts))
				for i, lo := range rg.starts {
					pos[i] = gemm.TilePos{A: int32(lo), C: int32(lo*p.ldx + blk.off)}
				}
				for xi := range P {
					gemm.StileBatch(rg.n, blk.vecs, K, u[xi*p.ustride:], aoff, v[xi*p.vstride+blk.off:], boff, m[xi*p.mstride:], p.ldx, acc, pos)
				}
			}
		}
	}
	var woff [winograd.R * winograd.R]int32
	for k := range woff {
		woff[k] = int32(k * p.tapStride())
	}
	p.set.WeightGrad(p.cout*p.ldx/L, m, L, p.mstride, part, L, &woff, &tmp)
}

// tapMajorToOut permutes a weight gradient sum [group][tap][co][ldx]
// (taps tstride apart, groups taps·tstride) into out [group·opg + co][ci][tap].
func tapMajorToOut(sum, out []float32, groups, opg, ipg, ldx, taps, tstride int) {
	for gr := range groups {
		for co := range opg {
			transposeTo(out[(gr*opg+co)*ipg*taps:], taps, sum[gr*taps*tstride+co*ldx:], tstride, taps, ipg)
		}
	}
}
