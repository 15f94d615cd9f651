package cpu

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refConv is the direct float64 loop of conv2d (transpose false) or
// conv_transpose2d (scattering x through w) on row-major data.
func refConv(x []float64, xs [4]int, w []float64, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) []float64 {
	out := make([]float64, numel(os[:]))
	g := o.Groups
	if !transpose {
		cinG, coutG := xs[1]/g, os[1]/g
		for n := range os[0] {
			for co := range os[1] {
				gr := co / coutG
				for oy := range os[2] {
					for ox := range os[3] {
						var s float64
						for ci := range cinG {
							for ky := range ws[2] {
								for kx := range ws[3] {
									iy := oy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
									ix := ox*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
									if iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3] {
										continue
									}
									s += x[((n*xs[1]+gr*cinG+ci)*xs[2]+iy)*xs[3]+ix] * w[((co*cinG+ci)*ws[2]+ky)*ws[3]+kx]
								}
							}
						}
						out[((n*os[1]+co)*os[2]+oy)*os[3]+ox] = s
					}
				}
			}
		}
		return out
	}
	cinG, coutG := xs[1]/g, os[1]/g
	for n := range xs[0] {
		for ci := range xs[1] {
			gr := ci / cinG
			for co := range coutG {
				for iy := range xs[2] {
					for ix := range xs[3] {
						for ky := range ws[2] {
							for kx := range ws[3] {
								oy := iy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
								ox := ix*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
								if oy < 0 || oy >= os[2] || ox < 0 || ox >= os[3] {
									continue
								}
								out[((n*os[1]+gr*coutG+co)*os[2]+oy)*os[3]+ox] += x[((n*xs[1]+ci)*xs[2]+iy)*xs[3]+ix] * w[((ci*coutG+co)*ws[2]+ky)*ws[3]+kx]
							}
						}
					}
				}
			}
		}
	}
	return out
}

func TestConvAgainstReference(t *testing.T) {
	be := newTestBackend()
	opt := func(s, p, d, g int) backend.ConvOptions {
		return backend.ConvOptions{Stride: [2]int{s, s}, Padding: [2]int{p, p}, Dilation: [2]int{d, d}, Groups: g}
	}
	cases := []struct {
		x, w [4]int
		o    backend.ConvOptions
	}{
		{[4]int{2, 3, 9, 8}, [4]int{4, 3, 3, 3}, opt(1, 1, 1, 1)},
		{[4]int{3, 4, 11, 10}, [4]int{6, 2, 3, 2}, opt(2, 1, 2, 2)},
		{[4]int{2, 5, 6, 6}, [4]int{7, 5, 1, 1}, opt(1, 0, 1, 1)}, // pointwise
		{[4]int{4, 2, 7, 7}, [4]int{2, 2, 5, 5}, opt(1, 2, 1, 1)},
		{[4]int{2, 2, 20, 20}, [4]int{3, 2, 3, 3}, opt(1, 1, 1, 1)},  // 400 positions: one image per GEMM
		{[4]int{12, 4, 10, 10}, [4]int{6, 2, 3, 3}, opt(1, 0, 1, 2)}, // batches of 4 images, several per worker
	}
	for _, byImage := range []bool{true, false} {
		convByImage = byImage
		for ci, c := range cases {
			for _, transpose := range []bool{false, true} {
				ws := c.w
				if transpose { // w [Cin, Cout/g, kH, kW] with Cin = x's channels
					ws = [4]int{c.x[1], c.w[0] / c.o.Groups, c.w[2], c.w[3]}
				}
				xv, wv := randVals(numel(c.x[:]), uint64(ci)), randVals(numel(ws[:]), uint64(ci+50))
				os := convShape(c.x[:], ws[:], c.o, transpose)
				want := refConv(xv, c.x, wv, ws, c.o, os, transpose)
				for _, dt := range []backend.DType{backend.F32, backend.F64} {
					x, w := tensorOf(be, xv, c.x[:], dt), tensorOf(be, wv, ws[:], dt)
					var got backend.Tensor
					if transpose {
						got = ir.ConvTranspose2d(be, x, w, c.o)
					} else {
						got = ir.Conv2d(be, x, w, c.o)
					}
					if fmt.Sprint(got.Shape()) != fmt.Sprint(os[:]) {
						t.Fatalf("shape %v, want %v", got.Shape(), os)
					}
					tol := 1e-12
					if dt == backend.F32 {
						tol = 1e-5
					}
					closeTo(t, fmt.Sprintf("case %d transpose=%v %v byImage=%v", ci, transpose, dt, byImage), values(t, be, got), want, tol)
				}
			}
		}
	}
	convByImage = true
}

// TestConvPermutedInput checks a non-contiguous input (the layout autodiff
// passes for weight gradients), which is copied before im2col.
func TestConvPermutedInput(t *testing.T) {
	be := newTestBackend()
	xv := randVals(3*2*6*6, 1)
	x := ir.Permute(be, tensorOf(be, xv, []int{3, 2, 6, 6}, backend.F32), []int{1, 0, 2, 3}) // [2, 3, 6, 6]
	w := tensorOf(be, randVals(4*3*3*3, 2), []int{4, 3, 3, 3}, backend.F32)
	o := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	xd := values(t, be, x)
	os := convShape(x.Shape(), w.Shape(), o, false)
	want := refConv(xd, [4]int{2, 3, 6, 6}, values(t, be, w), [4]int{4, 3, 3, 3}, o, os, false)
	closeTo(t, "permuted", values(t, be, ir.Conv2d(be, x, w, o)), want, 1e-5)
}
