package cpu

import "github.com/emberml/ember/backend/internal/unfold"

// convCols is the GEMM width (output columns) a convolution aims for:
// images with fewer output positions than this are batched side by side
// into one product, so that the weights are packed once per batch rather
// than once per image and the micro-kernel runs on wider panels.
const convCols = 256

// convBatcher runs a convolution over several images of a batch at once.
type convBatcher[T float32 | float64] struct {
	xd, wd, out          []T
	n, cin, h, w         int
	cout, ho, wo         int
	g                    unfold.Geom
	groups, ipg, opg, kk int
	transpose            bool
	mm                   gemmFunc[T]
}

// convBatch returns the batcher of a convolution (shapes as in convT), or
// nil when it has no work to batch (an empty kernel or channel group).
func convBatch[T float32 | float64](xd, wd, out []T, xs []int, os [4]int, g unfold.Geom, groups int, transpose bool, mm gemmFunc[T]) *convBatcher[T] {
	b := &convBatcher[T]{xd: xd, wd: wd, out: out, n: xs[0], cin: xs[1], h: xs[2], w: xs[3],
		cout: os[1], ho: os[2], wo: os[3], g: g, groups: groups, transpose: transpose, mm: mm}
	b.ipg, b.opg = b.cin/groups, b.cout/groups
	if transpose {
		b.kk = b.opg * g.Kh * g.Kw
	} else {
		b.kk = b.ipg * g.Kh * g.Kw
	}
	if b.kk == 0 || b.ipg == 0 || b.opg == 0 {
		return nil
	}
	return b
}

// scratch returns the column-matrix and staging lengths run needs for nb images.
func (b *convBatcher[T]) scratch(nb int) (col, tmp int) {
	if b.transpose {
		return b.kk * nb * b.h * b.w, b.ipg * nb * b.h * b.w
	}
	return b.kk * nb * b.ho * b.wo, b.opg * nb * b.ho * b.wo
}

// run convolves images [b0, b1), group by group. Conv2d: the images'
// column matrices side by side [kk, nb·Ho·Wo], one GEMM with the group's
// weights into tmp [Cout/G, nb·Ho·Wo], then each image's block copied out.
// ConvTranspose2d: the images' inputs side by side in tmp
// [Cin/G, nb·H·W], one GEMM Wᵀ·tmp into col [kk, nb·H·W], then col2im per
// image.
func (b *convBatcher[T]) run(b0, b1 int, col, tmp []T) {
	nb := b1 - b0
	hw, ohw := b.h*b.w, b.ho*b.wo
	for gr := range b.groups {
		if !b.transpose {
			L := nb * ohw
			c, t := col[:b.kk*L], tmp[:b.opg*L]
			for i := b0; i < b1; i++ {
				src := b.xd[(i*b.cin+gr*b.ipg)*hw : (i*b.cin+(gr+1)*b.ipg)*hw]
				unfold.Im2colLD(src, b.ipg, b.h, b.w, b.g, b.ho, b.wo, c[(i-b0)*ohw:], L)
			}
			b.mm(false, false, b.opg, L, b.kk, 1, b.wd[gr*b.opg*b.kk:(gr+1)*b.opg*b.kk], b.kk, c, L, 0, t, L)
			for i := b0; i < b1; i++ {
				dst := b.out[(i*b.cout+gr*b.opg)*ohw:]
				for r := range b.opg {
					copy(dst[r*ohw:(r+1)*ohw], t[r*L+(i-b0)*ohw:])
				}
			}
			continue
		}
		L := nb * hw
		c, t := col[:b.kk*L], tmp[:b.ipg*L]
		for i := b0; i < b1; i++ {
			src := b.xd[(i*b.cin+gr*b.ipg)*hw:]
			for r := range b.ipg {
				copy(t[r*L+(i-b0)*hw:r*L+(i-b0+1)*hw], src[r*hw:(r+1)*hw])
			}
		}
		b.mm(true, false, b.kk, L, b.ipg, 1, b.wd[gr*b.ipg*b.kk:(gr+1)*b.ipg*b.kk], b.kk, t, L, 0, c, L)
		for i := b0; i < b1; i++ {
			dst := b.out[(i*b.cout+gr*b.opg)*ohw : (i*b.cout+(gr+1)*b.opg)*ohw]
			clear(dst)
			unfold.Col2imLD(c[(i-b0)*hw:], b.opg, b.ho, b.wo, b.g, b.h, b.w, dst, L)
		}
	}
}
