package flex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// refConv2d is the direct float64 formula of PyTorch's conv2d.
func refConv2d[T kernelFloat](x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, os [4]int) []float64 {
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	cout, ipg, kh, kw := ws[0], ws[1], ws[2], ws[3]
	ho, wo := os[2], os[3]
	opg := cout / o.Groups
	out := make([]float64, n*cout*ho*wo)
	for b := 0; b < n; b++ {
		for co := 0; co < cout; co++ {
			for oy := 0; oy < ho; oy++ {
				for ox := 0; ox < wo; ox++ {
					s := 0.0
					for ci := 0; ci < ipg; ci++ {
						cx := co/opg*ipg + ci
						for ky := 0; ky < kh; ky++ {
							for kx := 0; kx < kw; kx++ {
								iy := oy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
								ix := ox*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
								if iy >= 0 && iy < h && ix >= 0 && ix < wd {
									s += float64(x[((b*cin+cx)*h+iy)*wd+ix]) * float64(w[((co*ipg+ci)*kh+ky)*kw+kx])
								}
							}
						}
					}
					out[((b*cout+co)*ho+oy)*wo+ox] = s
				}
			}
		}
	}
	return out
}

// refConvTranspose2d is the direct float64 scatter formula of PyTorch's
// conv_transpose2d.
func refConvTranspose2d[T kernelFloat](x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, os [4]int) []float64 {
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	opg, kh, kw := ws[1], ws[2], ws[3]
	cout, ho, wo := os[1], os[2], os[3]
	ipg := cin / o.Groups
	out := make([]float64, n*cout*ho*wo)
	for b := 0; b < n; b++ {
		for ci := 0; ci < cin; ci++ {
			for iy := 0; iy < h; iy++ {
				for ix := 0; ix < wd; ix++ {
					for oc := 0; oc < opg; oc++ {
						co := ci/ipg*opg + oc
						for ky := 0; ky < kh; ky++ {
							for kx := 0; kx < kw; kx++ {
								oy := iy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
								ox := ix*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
								if oy >= 0 && oy < ho && ox >= 0 && ox < wo {
									out[((b*cout+co)*ho+oy)*wo+ox] += float64(x[((b*cin+ci)*h+iy)*wd+ix]) * float64(w[((ci*opg+oc)*kh+ky)*kw+kx])
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

type convCase struct {
	n, cin, h, w, cout, kh, kw int
	o                          backend.ConvOptions
}

func (c convCase) String() string {
	return fmt.Sprintf("N%d_Cin%d_%dx%d_Cout%d_k%dx%d_s%v_p%v_d%v_g%d_op%v", c.n, c.cin, c.h, c.w, c.cout, c.kh, c.kw,
		c.o.Stride, c.o.Padding, c.o.Dilation, c.o.Groups, c.o.OutputPadding)
}

// shapes returns the conv2d shapes x, w, out of the case.
func (c convCase) shapes() (xs, ws, os [4]int) {
	ho := (c.h+2*c.o.Padding[0]-c.o.Dilation[0]*(c.kh-1)-1)/c.o.Stride[0] + 1
	wo := (c.w+2*c.o.Padding[1]-c.o.Dilation[1]*(c.kw-1)-1)/c.o.Stride[1] + 1
	return [4]int{c.n, c.cin, c.h, c.w}, [4]int{c.cout, c.cin / c.o.Groups, c.kh, c.kw}, [4]int{c.n, c.cout, ho, wo}
}

func convCases() []convCase {
	o := func(s0, s1, p0, p1, d0, d1, g int) backend.ConvOptions {
		return backend.ConvOptions{Stride: [2]int{s0, s1}, Padding: [2]int{p0, p1}, Dilation: [2]int{d0, d1}, Groups: g}
	}
	return []convCase{
		{1, 1, 5, 5, 1, 3, 3, o(1, 1, 0, 0, 1, 1, 1)},
		{2, 3, 7, 6, 4, 3, 3, o(1, 1, 1, 1, 1, 1, 1)},
		{2, 3, 9, 8, 5, 3, 2, o(2, 1, 1, 0, 1, 1, 1)},
		{1, 2, 10, 11, 3, 3, 3, o(2, 3, 2, 1, 2, 1, 1)},
		{3, 4, 8, 8, 6, 3, 3, o(1, 1, 1, 1, 1, 1, 2)},
		{2, 6, 7, 9, 6, 2, 3, o(2, 2, 0, 1, 1, 2, 3)},
		{2, 4, 6, 6, 8, 1, 1, o(1, 1, 0, 0, 1, 1, 4)},
		{3, 5, 6, 7, 4, 1, 1, o(1, 1, 0, 0, 1, 1, 1)},
		{2, 3, 6, 6, 2, 1, 1, o(2, 2, 1, 1, 1, 1, 1)},
		{1, 2, 4, 4, 2, 3, 3, o(1, 1, 3, 3, 3, 3, 1)}, // padding beyond the kernel reach
		{5, 1, 12, 12, 8, 5, 5, o(1, 1, 0, 0, 1, 1, 1)},
		{4, 8, 12, 12, 16, 5, 5, o(1, 1, 0, 0, 1, 1, 1)},
		{2, 4, 5, 5, 4, 3, 3, o(3, 3, 0, 0, 1, 1, 2)},
	}
}

func closeTo(got, want, tol float64) bool { return math.Abs(got-want) <= tol*(1+math.Abs(want)) }

func testConvAgainstRef[T kernelFloat](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(7, 8))
	conv := func(x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, out []T, os [4]int) {
		switch any(x).(type) {
		case []float32:
			conv2dF32(any(x).([]float32), xs, any(w).([]float32), ws, o, any(out).([]float32), os)
		case []float64:
			conv2dF64(any(x).([]float64), xs, any(w).([]float64), ws, o, any(out).([]float64), os)
		}
	}
	convT := func(x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, out []T, os [4]int) {
		switch any(x).(type) {
		case []float32:
			convTranspose2dF32(any(x).([]float32), xs, any(w).([]float32), ws, o, any(out).([]float32), os)
		case []float64:
			convTranspose2dF64(any(x).([]float64), xs, any(w).([]float64), ws, o, any(out).([]float64), os)
		}
	}
	for _, c := range convCases() {
		xs, ws, os := c.shapes()
		x := randSlice[T](rng, xs[0]*xs[1]*xs[2]*xs[3])
		w := randSlice[T](rng, ws[0]*ws[1]*ws[2]*ws[3])
		out := randSlice[T](rng, os[0]*os[1]*os[2]*os[3]) // garbage: must be overwritten
		conv(x, xs, w, ws, c.o, out, os)
		want := refConv2d(x, xs, w, ws, c.o, os)
		for i := range want {
			if !closeTo(float64(out[i]), want[i], tol) {
				t.Fatalf("%v: conv2d out[%d] = %v, want %v", c, i, out[i], want[i])
			}
		}

		// Transposed conv of y with w read as [Cin'=Cout, Cout'/g=Cin/g, kH, kW],
		// mapping the conv output grid back to the input grid; output
		// padding recovers rows the strided conv skipped.
		for _, op := range [][2]int{{0, 0}, {c.o.Stride[0] - 1, 0}, {0, c.o.Stride[1] - 1}} {
			ot := c.o
			ot.OutputPadding = op
			ts := [4]int{c.n, c.cin,
				(os[2]-1)*c.o.Stride[0] - 2*c.o.Padding[0] + c.o.Dilation[0]*(c.kh-1) + op[0] + 1,
				(os[3]-1)*c.o.Stride[1] - 2*c.o.Padding[1] + c.o.Dilation[1]*(c.kw-1) + op[1] + 1}
			if ts[2] <= 0 || ts[3] <= 0 {
				continue
			}
			y := randSlice[T](rng, os[0]*os[1]*os[2]*os[3])
			tout := randSlice[T](rng, ts[0]*ts[1]*ts[2]*ts[3])
			convT(y, os, w, ws, ot, tout, ts)
			twant := refConvTranspose2d(y, os, w, ws, ot, ts)
			for i := range twant {
				if !closeTo(float64(tout[i]), twant[i], tol) {
					t.Fatalf("%v op=%v: convTranspose2d out[%d] = %v, want %v", c, op, i, tout[i], twant[i])
				}
			}
		}
	}
}

func TestConv2dAgainstDirect(t *testing.T) {
	t.Run("f32", func(t *testing.T) { testConvAgainstRef[float32](t, 1e-5) })
	t.Run("f64", func(t *testing.T) { testConvAgainstRef[float64](t, 1e-12) })
}

// TestConvTransposeAdjoint checks <conv2d(x, w), y> = <x, convTranspose2d(y, w)>
// for random x, y, w (relative 1e-4 in float32, 1e-10 in float64).
func TestConvTransposeAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range convCases() {
		xs, ws, os := c.shapes()
		nx, nw, ny := xs[0]*xs[1]*xs[2]*xs[3], ws[0]*ws[1]*ws[2]*ws[3], os[0]*os[1]*os[2]*os[3]
		// Output padding so that the transpose lands exactly on x's shape.
		ot := c.o
		for ax := 0; ax < 2; ax++ {
			ot.OutputPadding[ax] = xs[2+ax] - ((os[2+ax]-1)*c.o.Stride[ax] - 2*c.o.Padding[ax] + c.o.Dilation[ax]*([2]int{c.kh, c.kw}[ax]-1) + 1)
		}
		x64, w64, y64 := randSlice[float64](rng, nx), randSlice[float64](rng, nw), randSlice[float64](rng, ny)
		x32, w32, y32 := make([]float32, nx), make([]float32, nw), make([]float32, ny)
		for i, v := range x64 {
			x32[i] = float32(v)
		}
		for i, v := range w64 {
			w32[i] = float32(v)
		}
		for i, v := range y64 {
			y32[i] = float32(v)
		}
		cy64, tx64 := make([]float64, ny), make([]float64, nx)
		conv2dF64(x64, xs, w64, ws, c.o, cy64, os)
		convTranspose2dF64(y64, os, w64, ws, ot, tx64, xs)
		cy32, tx32 := make([]float32, ny), make([]float32, nx)
		conv2dF32(x32, xs, w32, ws, c.o, cy32, os)
		convTranspose2dF32(y32, os, w32, ws, ot, tx32, xs)
		dot := func(a, b []float64) (s, abs float64) {
			for i := range a {
				s += a[i] * b[i]
				abs += math.Abs(a[i] * b[i])
			}
			return s, abs
		}
		to64 := func(s []float32) []float64 {
			r := make([]float64, len(s))
			for i, v := range s {
				r[i] = float64(v)
			}
			return r
		}
		l64, scale := dot(cy64, y64)
		r64, _ := dot(x64, tx64)
		if math.Abs(l64-r64) > 1e-10*scale {
			t.Errorf("%v: f64 <conv(x),y> = %v, <x,convT(y)> = %v", c, l64, r64)
		}
		l32, scale32 := dot(to64(cy32), y64)
		r32, _ := dot(x64, to64(tx32))
		if math.Abs(l32-r32) > 1e-4*scale32 {
			t.Errorf("%v: f32 <conv(x),y> = %v, <x,convT(y)> = %v", c, l32, r32)
		}
	}
}
