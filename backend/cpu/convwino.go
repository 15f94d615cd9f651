package cpu

import (
	"math"
	"os"
	"strings"
	"sync/atomic"

	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/winograd"
	"github.com/emberml/ember/backend/internal/unfold"
)

// The Winograd float32 conv2d and conv_transpose2d with 5×5 kernels,
// F(4×4, 5×5) (internal/winograd): 64 multiplications per 4×4 tile and
// channel pair instead of 400; and conv2d's weight gradient on the dual
// algorithm F(5×5, 4×4) (convwino_wgrad.go, described there: 4×4 tiles of
// the output gradient against the 8×8 input tiles under them, the
// channels as vector lanes, the products summed over images and tiles in
// the transformed domain by fixed segments of images).
//
// conv2d (winoconv_fwd.go) runs the algorithm on 8×8 input tiles, 4 apart,
// each giving a 4×4 output tile; conv_transpose2d (winoconv_tpose.go) runs
// its adjoint on 4×4 input tiles, each giving the 8×8 block of its full
// convolution, blocks 4 apart adding up (and the padding cropping the
// result), so that no multiplication is spent on the zeros a padded
// correlation would read. Both cut the batch into groups of L images
// (L = the vector lanes: 16 with AVX-512F, 8 with AVX2), the lanes of
// every transform; a work unit is a group and one row of tiles:
//
//  1. the unit's input rows are transposed into a [C][row][column][L]
//     buffer (zero padding is a zero vector the transforms' offset tables
//     point at);
//  2. each input tile of each channel becomes 64 vectors
//     V[ξ][c][tile·L + image];
//  3. for each of the 64 positions ξ, one product
//     M_ξ[tile·L + image][k] = Σ_c V_ξ[c][tile·L + image] · U_ξ[c][k]
//     on the offset-table tile kernel of internal/gemm, where U = G·w·Gᵀ
//     is computed once per call (winoPlan);
//  4. each column of M becomes an output tile (block) of a pixel-major
//     (NHWC) buffer, vectorized over output channels, which is transposed
//     into the NCHW output (for conv_transpose2d after adding the rows
//     where the blocks of two tile rows overlap, by the unit that
//     completes the second of them).
//
// Every output element is computed by one fixed sequence of operations
// (the transforms, the sum over c in increasing order, the blocks added in
// tile order), whichever worker runs its unit, so results do not depend
// on the worker count.
//
// Rounding: the transforms' constants grow float32 rounding errors in
// proportion to the magnitude of a whole tile rather than of one output's
// terms. On normal inputs (TestWinogradAgainstReference) the largest
// error measured is 2.6e-6 of max(|y|, Σ|x·w|, 1) per output, asserted
// below 4e-6 (the direct kernels: ≈ 3e-8; the numerical tables allow
// 1e-5). That holds because outputs with few terms are kept out of tiles
// full of data: conv2d takes the path only with padding of at most 2 (a
// wider zero border gives border outputs a few terms in full tiles: 7e-6
// with padding 4), conv_transpose2d runs the adjoint algorithm (a padded
// correlation would put its border outputs in full tiles: 1.5e-5 on the
// MNIST CNN's input gradient), and tiles must be at least half filled.
// In general the error is bounded by the magnitude of a tile, ≈ 2e-6 of
// Σ_c Σ_tile |x|·max|w| (internal/winograd's tile tests), so inputs whose
// tiles hold a few large values beside an output's small terms can see
// more.
//
// The weight gradient's error is relative to Σ|x·g| per weight: at most
// 3.7e-6 of max(|gw|, Σ|x·g|, 1) measured on random inputs
// (TestWinogradWeightGradAgainstReference, asserted below 6e-6; a sweep of
// 300 shapes gave at most 3.5e-6; the direct kernels ≈ 3e-8). The error
// falls with the products' depth (images × tiles) and rises when a padded
// border leaves the border taps few terms in full tiles, so the path
// takes at least 32 tiles of depth (5.6e-6 measured at 16 to 31, 1.9e-5
// with a single tile) and output sides of at least 4 times the padding.
// Weights whose terms cancel (|gw| far below Σ|x·g|) see correspondingly
// larger errors relative to |gw|: about 5 to 30 times the direct
// kernels', a few 1e-4 of |gw| for weights 500 times smaller than their
// Σ|x·g|. And as for the convolutions, the error is bounded in general
// by the magnitude of a tile (Σ|d|·max|g| over its 8×8 input tile and
// 4×4 gradient tile, internal/winograd's tile tests) rather than by
// Σ|x·g|: inputs holding a few large values beside small ones see much
// more (one element of x in 997 scaled by 1e6: 3e-2 of Σ|x·g|, the
// direct kernels 2.7e-6). So the weight gradient's path is off unless
// WinogradEnv is "all", and WinogradEnv "0" turns every Winograd path
// off.

// WinogradEnv names the environment variable that chooses, when the
// process starts, which float32 5×5 convolution kernels run on the
// Winograd paths:
//
//   - unset (or "1", "on"): conv2d and conv_transpose2d (the forward and
//     the input gradient), whose error stays within the numerical
//     tables' tolerance of each output;
//   - "all": also conv2d's weight gradient where its conditions hold
//     (useWinogradWgrad: at least 32 tiles over the batch, padding of at
//     most 2, output sides of at least 4 times the padding), about twice
//     as fast on the MNIST CNN's second layer (bench/NOTES.md), trading
//     precision for speed as PyTorch's allow_tf32 does on the GPU: its
//     error of a few 1e-6 of Σ|x·g| per weight on random inputs is a few
//     1e-4 of the value of weights whose terms cancel, and grows with the
//     largest values of a tile (see above), so that inputs with rare
//     large values can get gradients off by far more;
//   - "0", "off" or "false": none, for results within the direct
//     kernels' smaller rounding error.
const WinogradEnv = "EMBER_CPU_WINOGRAD"

// winogradOn enables the Winograd conv2d and conv_transpose2d, and
// winoWgradOn (with winogradOn) the Winograd weight gradient (WinogradEnv;
// tests switch them).
var winogradOn, winoWgradOn = func() (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(WinogradEnv))) {
	case "0", "off", "false":
		return false, false
	case "all":
		return true, true
	}
	return true, false
}()

// winoMinChannels is the fewest input and output channels the Winograd
// path takes: below it the transforms cost more than the multiplications
// they save (BenchmarkConvWinograd).
const winoMinChannels = 16

// winoMaxPad is the widest conv2d padding the Winograd path takes (see
// the rounding note above).
const winoMaxPad = 2

// winogradSet returns the transforms that go with the tile kernels in
// use, or nil when the path is off or has no kernels here.
func winogradSet() *winograd.Set {
	if !winogradOn {
		return nil
	}
	s := winograd.ByName(gemm.TileKernel())
	if s == nil || (!s.Accelerated() && !directPortable) || s.Lanes() != gemm.TileLanes() {
		return nil
	}
	return s
}

// winoConv is a Winograd convolution of x [n, cin, h, w] with 5×5 kernels
// and unit stride into y [n, cout, ho, wo]: a conv2d padded by (ph, pw),
// or (transposed) a conv_transpose2d, the full convolution cropped by
// (ph, pw).
type winoConv struct {
	n, cin, h, w, cout, ho, wo, ph, pw int
	transposed                         bool
}

// useWinograd returns the conv2d (transpose false) or conv_transpose2d of
// input xs, weights ws and output os as a winoConv, and whether the
// Winograd path runs it: float32 transform and tile kernels, 5×5 kernels,
// unit stride and dilation, one group, padding of at most winoMaxPad
// (conv_transpose2d: at most 4, and an unpadded side not ≡ 1 mod 4),
// at least winoMinChannels input and
// output channels, at least half a group of images, 4×4 tiles at least
// half filled (outputs, or inputs when transposed: tiles of few pixels
// waste the multiplications and, with few terms per output, raise the
// relative rounding error), and buffers that int32 offsets address.
func useWinograd(xs, ws, os [4]int, g unfold.Geom, groups int, transpose bool) (winoConv, bool) {
	s := winogradSet()
	maxPad := winoMaxPad
	if transpose {
		maxPad = winograd.R - 1
	}
	if s == nil || g.Kh != winograd.R || g.Kw != winograd.R || g.Sh != 1 || g.Sw != 1 || g.Dh != 1 || g.Dw != 1 ||
		groups != 1 || g.Ph < 0 || g.Pw < 0 || g.Ph > maxPad || g.Pw > maxPad {
		return winoConv{}, false
	}
	c := winoConv{n: xs[0], cin: xs[1], h: xs[2], w: xs[3], cout: os[1], ho: os[2], wo: os[3], ph: g.Ph, pw: g.Pw, transposed: transpose}
	d := 1 - winograd.R // output size − input size
	if transpose {
		d = -d
	}
	if c.ho != c.h+d+2*sign(transpose)*c.ph || c.wo != c.w+d+2*sign(transpose)*c.pw || c.ho < 1 || c.wo < 1 || c.h < 1 || c.w < 1 {
		return winoConv{}, false
	}
	if transpose && (c.h%winograd.M == 1 && c.ph == 0 || c.w%winograd.M == 1 && c.pw == 0) {
		// The last row (column) of input tiles holds one input row:
		// the uncropped border outputs of its blocks then err by up to
		// 1.5e-5 of max(|y|, Σ|x·w|, 1) (1.2–1.5e-5 measured for sides
		// 9 to 29 ≡ 1 mod 4 without padding, ≤ 4.1e-6 for every other
		// side, and with padding 1 for these).
		return winoConv{}, false
	}
	L := s.Lanes()
	p := c.tiling(L)
	area := c.ho * c.wo // the tiles' useful part: outputs, or inputs when transposed
	if transpose {
		area = c.h * c.w
	}
	ok := c.cin >= winoMinChannels && c.cout >= winoMinChannels && 2*c.n >= L &&
		2*area >= winograd.M*winograd.M*p.tilesY*p.tilesX &&
		fitsInt32(c.n*c.cin*c.h*c.w, c.n*c.cout*c.ho*c.wo, winograd.Points*(c.cin*p.ldu+L),
			p.xLen(c.cin), winograd.Points*(c.cin*p.chunk*L+L), p.yLen(), p.blocksLen(c.n))
	return c, ok
}

// winoFinite reports whether every element of y is finite and small
// enough to square in float32 (|y| < 1.8e19): the Winograd path's results
// are kept only then (see Backend.directConv).
func winoFinite(y []float32) bool {
	s := rowDot32(y, y)
	return !math.IsNaN(s) && !math.IsInf(s, 0)
}

// sign returns −1 when neg, else 1.
func sign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

// winoTiling is the tiling of a winoConv on vectors of lanes.
type winoTiling struct {
	lanes, ldu     int
	tilesY, tilesX int // tiles of the output (conv2d) or input (transposed)
	chunk          int // tiles of a row per chunk
	fw             int // transposed: the width of the full output
	in             int // input tile side: 8 (conv2d) or 4
	ystride        int // an image of the unit's NHWC buffer
	c              *winoConv
}

// winoChunkCols bounds the columns (tiles × lanes) of one chunk's
// products, so that V and M stay in the L2 cache.
const winoChunkCols = 64

func (c *winoConv) tiling(L int) winoTiling {
	t := winoTiling{lanes: L, ldu: roundUp(c.cout, L), c: c}
	const Mt = winograd.M
	if c.transposed {
		t.tilesY, t.tilesX = (c.h+Mt-1)/Mt, (c.w+Mt-1)/Mt
		t.fw = Mt*t.tilesX + Mt
		t.in = Mt
		t.ystride = winograd.Alpha * t.fw * t.ldu
	} else {
		t.tilesY, t.tilesX = (c.ho+Mt-1)/Mt, (c.wo+Mt-1)/Mt
		t.in = winograd.Alpha
		t.ystride = Mt*c.wo*t.ldu + t.ldu // and a dummy pixel for cropped outputs
	}
	t.chunk = max(1, min(t.tilesX, winoChunkCols/L))
	n := (t.tilesX + t.chunk - 1) / t.chunk // chunks of equal size
	t.chunk = (t.tilesX + n - 1) / n
	return t
}

// xLen is the length of a unit's input buffer: per channel the rows and
// columns of a chunk's tiles (a tile's side past the last for conv2d) and
// a zero vector.
func (t *winoTiling) xLen(cin int) int {
	span := winograd.M*t.chunk + t.in - winograd.M
	return cin * (t.in*span*t.lanes + t.lanes)
}

// yLen is the length of a unit's output buffer (lanes images).
func (t *winoTiling) yLen() int { return t.lanes * t.ystride }

// blocksLen is the length of every unit's output buffer together
// (transposed only: they are added in a second pass).
func (t *winoTiling) blocksLen(n int) int {
	if !t.c.transposed {
		return 0
	}
	return (n + t.lanes - 1) / t.lanes * t.tilesY * t.yLen()
}

// winoPlan is a Winograd convolution being run: the problem, its tiling
// and the transformed kernels.
type winoPlan struct {
	winoConv
	winoTiling
	set     *winograd.Set
	blocks  []colBlock // output channel blocks of a GEMM tile
	u       []float32  // U[ξ][c][ldu], ξ stride ustride
	ubuf    *[]float32
	ustride int
	uoff    gemm.Offsets
}

// newWinoPlan transforms the kernels w: [cout, cin, 5, 5] for a conv2d,
// [cin, cout, 5, 5] for a conv_transpose2d.
func newWinoPlan(c winoConv, w []float32) *winoPlan {
	s := winogradSet()
	p := &winoPlan{winoConv: c, set: s}
	p.winoTiling = p.winoConv.tiling(s.Lanes())
	p.winoTiling.c = &p.winoConv
	L := p.lanes
	p.blocks = colBlocks(c.cout, L)
	// W'[k][c][co] (k the kernel tap), columns past cout zero.
	const taps = winograd.R * winograd.R
	wt := getScratch[float32](&scratchF32, taps*c.cin*p.ldu)
	defer scratchF32.Put(wt)
	W := *wt
	if p.ldu > c.cout {
		clear(W)
	}
	for ci := range c.cin {
		if c.transposed {
			transposeTo(W[ci*p.ldu:], c.cin*p.ldu, w[ci*c.cout*taps:], taps, c.cout, taps)
		} else {
			transposeTo(W[ci*p.ldu:], c.cin*p.ldu, w[ci*taps:], c.cin*taps, c.cout, taps)
		}
	}
	var koff [taps]int32
	for k := range koff {
		koff[k] = int32(k * c.cin * p.ldu)
	}
	p.ustride = c.cin*p.ldu + L
	p.ubuf = getScratch[float32](&scratchF32, winograd.Points*p.ustride)
	p.u = *p.ubuf
	// One goroutine: a few percent of the call, not worth a second
	// synchronization of the workers (which a loaded machine makes costly).
	var tmp winograd.Tmp
	s.Kernel(c.cin*p.ldu/L, W, L, &koff, p.u, L, p.ustride, &tmp)
	p.uoff = stridedTable(c.cin, p.ldu)
	return p
}

// release returns the plan's buffers.
func (p *winoPlan) release() { scratchF32.Put(p.ubuf) }

// winoScratch is one worker's buffers.
type winoScratch struct {
	x, v, m, y *[]float32
	tmp        winograd.Tmp
}

func (p *winoPlan) scratch() *winoScratch {
	L, cols := p.lanes, p.chunk*p.lanes
	return &winoScratch{
		x: getScratch[float32](&scratchF32, p.xLen(p.cin)),
		v: getScratch[float32](&scratchF32, winograd.Points*(p.cin*cols+L)),
		m: getScratch[float32](&scratchF32, winograd.Points*(cols*2*L+L)),
		y: getScratch[float32](&scratchF32, p.yLen()),
	}
}

func (s *winoScratch) release() {
	for _, b := range []*[]float32{s.x, s.v, s.m, s.y} {
		scratchF32.Put(b)
	}
}

// run computes the convolution of x (contiguous [n, cin, h, w]) into out
// ([n, cout, ho, wo], every element written).
func (p *winoPlan) run(x, out []float32) {
	groups := (p.n + p.lanes - 1) / p.lanes
	units := groups * p.tilesY
	if !p.transposed {
		parallelUnits(units, func(lo, hi int) {
			s := p.scratch()
			defer s.release()
			for u := lo; u < hi; u++ {
				p.forwardUnit(x, out, u/p.tilesY, u%p.tilesY, s)
			}
		})
		return
	}
	bb := getScratch[float32](&scratchF32, p.blocksLen(p.n))
	defer scratchF32.Put(bb)
	blocks := *bb
	// Band b of output rows (full-output rows 4b … 4b+3, b ≤ tilesY) needs
	// the blocks of tile rows b−1 and b; the unit that completes the last
	// of them writes the band.
	bands := p.tilesY + 1
	done := make([]atomic.Int32, groups*bands)
	parallelUnits(units, func(lo, hi int) {
		s := p.scratch()
		defer s.release()
		sb := getScratch[float32](&scratchF32, winograd.M*p.wo*p.ldu)
		defer scratchF32.Put(sb)
		for u := lo; u < hi; u++ {
			gi, ty := u/p.tilesY, u%p.tilesY
			p.transposedUnit(x, blocks[u*p.yLen():][:p.yLen()], gi, ty, s)
			for b := ty; b <= ty+1; b++ {
				need := int32(1)
				if b > 0 && b < p.tilesY {
					need = 2
				}
				if done[gi*bands+b].Add(1) == need {
					p.band(blocks, out, gi, b, *sb)
				}
			}
		}
	})
}

// input fills s.x with channels [0, cin) of images [n0, n0+nimg), rows
// [ry0, ry1) and columns [xa, xe) as [c][row][column][L] (lanes past nimg
// zero), each channel followed by a zero vector, and returns the channel
// stride.
func (p *winoPlan) input(x []float32, n0, nimg, ry0, ry1, xa, xe int, s *winoScratch) int {
	L := p.lanes
	rows, width := max(0, ry1-ry0), max(0, xe-xa)
	cstride := rows*width*L + L
	xb := (*s.x)[:p.cin*cstride]
	if nimg < L || rows == 0 || width == 0 {
		clear(xb)
	} else {
		for ci := range p.cin {
			clear(xb[ci*cstride+rows*width*L:][:L])
		}
	}
	if rows == 0 || width == 0 {
		return cstride
	}
	hw := p.h * p.w
	for ci := range p.cin {
		src := x[(n0*p.cin+ci)*hw:]
		dst := xb[ci*cstride:]
		if width == p.w {
			transposeTo(dst, L, src[ry0*p.w:], p.cin*hw, nimg, rows*p.w)
			continue
		}
		for y := ry0; y < ry1; y++ {
			transposeTo(dst[(y-ry0)*width*L:], L, src[y*p.w+xa:], p.cin*hw, nimg, width)
		}
	}
	return cstride
}

// products runs step 3 for one block of output channels: the 64 GEMMs of
// V (ncols columns, ξ stride vstride) into s.m, returning M's ξ stride
// (columns bw = b.vecs·L apart).
func (p *winoPlan) products(v []float32, ncols, vstride int, aoff gemm.Offsets, b colBlock, s *winoScratch) ([]float32, int) {
	bw := b.vecs * p.lanes
	mstride := ncols*bw + p.lanes
	m := (*s.m)[:winograd.Points*mstride]
	for _, t := range newWinoTiles(ncols, gemm.TileMaxRows(b.vecs), bw) {
		for xi := range winograd.Points {
			gemm.StileBatch(t.rows, b.vecs, p.cin, v[xi*vstride:], aoff, p.u[xi*p.ustride+b.off:], p.uoff, m[xi*mstride:], bw, false, t.pos)
		}
	}
	return m, mstride
}

// winoTiles is the GEMM tiles of a chunk: runs of equal-length row tiles,
// each one gemm.StileBatch call.
type winoTiles []struct {
	rows int
	pos  []gemm.TilePos
}

// newWinoTiles splits n GEMM rows (columns of V) into tiles of at most
// maxRows rows whose C rows are ldc apart: one length that divides n when
// a few more tiles than the fewest give one (a single call), else tiles
// whose lengths differ by at most one.
func newWinoTiles(n, maxRows, ldc int) winoTiles {
	var ss []span
	t0 := (n + maxRows - 1) / maxRows
	for t := t0; t <= t0+3 && t <= n; t++ {
		if n%t == 0 {
			ss = spans(n, n/t)
			break
		}
	}
	if ss == nil {
		ss = spans(n, maxRows)
	}
	var w winoTiles
	for _, g := range groupSpans(ss) {
		pos := make([]gemm.TilePos, len(g.starts))
		for i, lo := range g.starts {
			pos[i] = gemm.TilePos{A: int32(lo), C: int32(lo * ldc)}
		}
		w = append(w, struct {
			rows int
			pos  []gemm.TilePos
		}{g.n, pos})
	}
	return w
}
