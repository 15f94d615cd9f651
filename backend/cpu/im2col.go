package cpu

import "github.com/emberml/ember/backend"

// convGeom is the kernel geometry shared by im2col and col2im: kernel
// size, stride, padding and dilation per spatial axis.
type convGeom struct {
	kh, kw, sh, sw, ph, pw, dh, dw int
}

func geomOf(kh, kw int, o backend.ConvOptions) convGeom {
	return convGeom{kh: kh, kw: kw, sh: max(o.Stride[0], 1), sw: max(o.Stride[1], 1),
		ph: o.Padding[0], pw: o.Padding[1], dh: max(o.Dilation[0], 1), dw: max(o.Dilation[1], 1)}
}

// pointwise reports whether the column matrix of the geometry is the image
// itself (1×1 kernel, unit stride, no padding).
func (g convGeom) pointwise() bool {
	return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0
}

// validRange returns the grid positions o in [0, n) whose image coordinate
// o·s + off lies in [0, size).
func validRange(off, s, size, n int) (lo, hi int) {
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	if size-1-off >= 0 {
		hi = (size-1-off)/s + 1
	}
	lo, hi = min(lo, n), min(hi, n)
	return lo, max(hi, lo)
}

// im2col writes the column matrix of one image src [c, h, w]: row
// (ci·kh + ky)·kw + kx, column oy·wo + ox of dst holds
// src[ci, oy·sh − ph + ky·dh, ox·sw − pw + kx·dw], or 0 outside the image.
// Every element of dst (c·kh·kw rows of ho·wo) is written.
func im2col[T float32 | float64](src []T, c, h, w int, g convGeom, ho, wo int, dst []T) {
	im2colLD(src, c, h, w, g, ho, wo, dst, ho*wo)
}

// im2colLD is im2col into a matrix whose rows start ld (≥ ho·wo) elements
// apart: row r occupies dst[r·ld : r·ld + ho·wo]; the rest of each row is
// left untouched.
func im2colLD[T float32 | float64](src []T, c, h, w int, g convGeom, ho, wo int, dst []T, ld int) {
	r := 0
	for ci := 0; ci < c; ci++ {
		img := src[ci*h*w : (ci+1)*h*w]
		for ky := 0; ky < g.kh; ky++ {
			y0, y1 := validRange(ky*g.dh-g.ph, g.sh, h, ho)
			for kx := 0; kx < g.kw; kx++ {
				offX := kx*g.dw - g.pw
				x0, x1 := validRange(offX, g.sw, w, wo)
				row := dst[r*ld : r*ld+ho*wo]
				r++
				clear(row[:y0*wo])
				clear(row[y1*wo:])
				for oy := y0; oy < y1; oy++ {
					line := row[oy*wo : (oy+1)*wo]
					clear(line[:x0])
					clear(line[x1:])
					if x0 >= x1 {
						continue
					}
					in := img[(oy*g.sh-g.ph+ky*g.dh)*w:][:w]
					if g.sw == 1 {
						copy(line[x0:x1], in[x0+offX:])
					} else {
						for ox := x0; ox < x1; ox++ {
							line[ox] = in[ox*g.sw+offX]
						}
					}
				}
			}
		}
	}
}

// col2im is the adjoint of im2col: it adds every column-matrix entry of src
// into the image position im2col reads it from (dst [c, h, w] is
// accumulated into, not cleared).
func col2im[T float32 | float64](src []T, c, h, w int, g convGeom, ho, wo int, dst []T) {
	col2imLD(src, c, h, w, g, ho, wo, dst, ho*wo)
}

// col2imLD is col2im from a matrix whose rows start ld (≥ ho·wo) elements
// apart: row r is src[r·ld : r·ld + ho·wo].
func col2imLD[T float32 | float64](src []T, c, h, w int, g convGeom, ho, wo int, dst []T, ld int) {
	r := 0
	for ci := 0; ci < c; ci++ {
		img := dst[ci*h*w : (ci+1)*h*w]
		for ky := 0; ky < g.kh; ky++ {
			y0, y1 := validRange(ky*g.dh-g.ph, g.sh, h, ho)
			for kx := 0; kx < g.kw; kx++ {
				offX := kx*g.dw - g.pw
				x0, x1 := validRange(offX, g.sw, w, wo)
				row := src[r*ld : r*ld+ho*wo]
				r++
				if x0 >= x1 {
					continue
				}
				for oy := y0; oy < y1; oy++ {
					line := row[oy*wo : (oy+1)*wo]
					out := img[(oy*g.sh-g.ph+ky*g.dh)*w:][:w]
					if g.sw == 1 {
						o := out[x0+offX : x1+offX]
						for i, v := range line[x0:x1] {
							o[i] += v
						}
					} else {
						for ox := x0; ox < x1; ox++ {
							out[ox*g.sw+offX] += line[ox]
						}
					}
				}
			}
		}
	}
}
