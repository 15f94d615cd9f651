// Package unfold holds the im2col and col2im transforms that the CPU
// backends use to turn 2-d convolutions into GEMMs: im2col unfolds the
// receptive fields of one image into a column matrix, col2im is its
// adjoint (it folds a column matrix back, adding overlapping entries).
package unfold

import "github.com/emberml/ember/backend"

// Geom is a convolution kernel's geometry: size (Kh × Kw), stride,
// padding and dilation per spatial axis (height, width).
type Geom struct {
	Kh, Kw, Sh, Sw, Ph, Pw, Dh, Dw int
}

// GeomOf returns the geometry of a kh × kw kernel under o; zero strides
// and dilations mean 1, as in backend.ConvOptions.
func GeomOf(kh, kw int, o backend.ConvOptions) Geom {
	return Geom{Kh: kh, Kw: kw, Sh: max(o.Stride[0], 1), Sw: max(o.Stride[1], 1),
		Ph: o.Padding[0], Pw: o.Padding[1], Dh: max(o.Dilation[0], 1), Dw: max(o.Dilation[1], 1)}
}

// Pointwise reports whether the column matrix of the geometry is the image
// itself (1×1 kernel, unit stride, no padding).
func (g Geom) Pointwise() bool {
	return g.Kh == 1 && g.Kw == 1 && g.Sh == 1 && g.Sw == 1 && g.Ph == 0 && g.Pw == 0
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

// Im2col writes the column matrix of one image src [c, h, w]: row
// (ci·Kh + ky)·Kw + kx, column oy·wo + ox of dst holds
// src[ci, oy·Sh − Ph + ky·Dh, ox·Sw − Pw + kx·Dw], or 0 outside the image.
// Every element of dst (c·Kh·Kw rows of ho·wo) is written.
func Im2col[T ~float32 | ~float64](src []T, c, h, w int, g Geom, ho, wo int, dst []T) {
	Im2colLD(src, c, h, w, g, ho, wo, dst, ho*wo)
}

// Im2colLD is Im2col into a matrix whose rows start ld (≥ ho·wo) elements
// apart: row r occupies dst[r·ld : r·ld + ho·wo]; the rest of each row is
// left untouched.
func Im2colLD[T ~float32 | ~float64](src []T, c, h, w int, g Geom, ho, wo int, dst []T, ld int) {
	r := 0
	for ci := 0; ci < c; ci++ {
		img := src[ci*h*w : (ci+1)*h*w]
		for ky := 0; ky < g.Kh; ky++ {
			y0, y1 := validRange(ky*g.Dh-g.Ph, g.Sh, h, ho)
			for kx := 0; kx < g.Kw; kx++ {
				offX := kx*g.Dw - g.Pw
				x0, x1 := validRange(offX, g.Sw, w, wo)
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
					in := img[(oy*g.Sh-g.Ph+ky*g.Dh)*w:][:w]
					if g.Sw == 1 {
						copy(line[x0:x1], in[x0+offX:])
					} else {
						for ox := x0; ox < x1; ox++ {
							line[ox] = in[ox*g.Sw+offX]
						}
					}
				}
			}
		}
	}
}

// Col2im is the adjoint of Im2col: it adds every column-matrix entry of src
// into the image position Im2col reads it from (dst [c, h, w] is
// accumulated into, not cleared).
func Col2im[T ~float32 | ~float64](src []T, c, h, w int, g Geom, ho, wo int, dst []T) {
	Col2imLD(src, c, h, w, g, ho, wo, dst, ho*wo)
}

// Col2imLD is Col2im from a matrix whose rows start ld (≥ ho·wo) elements
// apart: row r is src[r·ld : r·ld + ho·wo].
func Col2imLD[T ~float32 | ~float64](src []T, c, h, w int, g Geom, ho, wo int, dst []T, ld int) {
	r := 0
	for ci := 0; ci < c; ci++ {
		img := dst[ci*h*w : (ci+1)*h*w]
		for ky := 0; ky < g.Kh; ky++ {
			y0, y1 := validRange(ky*g.Dh-g.Ph, g.Sh, h, ho)
			for kx := 0; kx < g.Kw; kx++ {
				offX := kx*g.Dw - g.Pw
				x0, x1 := validRange(offX, g.Sw, w, wo)
				row := src[r*ld : r*ld+ho*wo]
				r++
				if x0 >= x1 {
					continue
				}
				for oy := y0; oy < y1; oy++ {
					line := row[oy*wo : (oy+1)*wo]
					out := img[(oy*g.Sh-g.Ph+ky*g.Dh)*w:][:w]
					if g.Sw == 1 {
						o := out[x0+offX : x1+offX]
						for i, v := range line[x0:x1] {
							o[i] += v
						}
					} else {
						for ox := x0; ox < x1; ox++ {
							out[ox*g.Sw+offX] += line[ox]
						}
					}
				}
			}
		}
	}
}
