package unfold

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// Im2col against its definition, and Col2im as its adjoint:
// <Im2col(x), y> == <x, Col2im(y)> for random x, y, over strides, padding
// and dilation.
func TestIm2colCol2im(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, o := range []backend.ConvOptions{
		{},
		{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}},
		{Stride: [2]int{1, 3}, Padding: [2]int{2, 0}, Dilation: [2]int{2, 1}},
	} {
		c, h, w, kh, kw := 2, 5, 7, 3, 2
		g := GeomOf(kh, kw, o)
		ho := (h+2*g.Ph-g.Dh*(kh-1)-1)/g.Sh + 1
		wo := (w+2*g.Pw-g.Dw*(kw-1)-1)/g.Sw + 1
		x := make([]float64, c*h*w)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		col := make([]float64, c*kh*kw*ho*wo)
		for i := range col {
			col[i] = 99 // every element must be overwritten
		}
		Im2col(x, c, h, w, g, ho, wo, col)
		for ci := range c {
			for ky := range kh {
				for kx := range kw {
					r := (ci*kh+ky)*kw + kx
					for oy := range ho {
						for ox := range wo {
							iy, ix := oy*g.Sh-g.Ph+ky*g.Dh, ox*g.Sw-g.Pw+kx*g.Dw
							want := 0.0
							if iy >= 0 && iy < h && ix >= 0 && ix < w {
								want = x[(ci*h+iy)*w+ix]
							}
							if got := col[r*ho*wo+oy*wo+ox]; got != want {
								t.Fatalf("%+v: col[%d][%d,%d] = %v, want %v", o, r, oy, ox, got, want)
							}
						}
					}
				}
			}
		}
		y := make([]float64, len(col))
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		back := make([]float64, len(x))
		Col2im(y, c, h, w, g, ho, wo, back)
		var lhs, rhs float64
		for i := range col {
			lhs += col[i] * y[i]
		}
		for i := range x {
			rhs += x[i] * back[i]
		}
		if d := lhs - rhs; d > 1e-9 || d < -1e-9 {
			t.Fatalf("%+v: adjoint mismatch %v vs %v", o, lhs, rhs)
		}
	}
}
