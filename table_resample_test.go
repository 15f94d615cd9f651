package ember

import (
	"math"
	"testing"
)

// taps returns the source indices and weights of output i along an axis
// (in → out) for mode, written from PyTorch's upsample kernels' source
// index rules, independently of resampleMatrix.
func taps(i, in, out int, mode InterpolationMode, align bool) ([]int, []float64) {
	cl := func(j int) int {
		if j < 0 {
			return 0
		}
		if j > in-1 {
			return in - 1
		}
		return j
	}
	var s float64
	if align {
		if out > 1 {
			s = float64(i*(in-1)) / float64(out-1)
		}
	} else {
		s = float64(in)/float64(out)*(float64(i)+0.5) - 0.5
	}
	switch mode {
	case InterpNearest:
		return []int{cl(int(float64(i) * float64(in) / float64(out)))}, []float64{1}
	case InterpBilinear:
		if !align && s < 0 {
			s = 0
		}
		j := int(math.Floor(s))
		l := s - float64(j)
		return []int{cl(j), cl(j + 1)}, []float64{1 - l, l}
	}
	j := int(math.Floor(s))
	t := s - float64(j)
	cubic := func(d float64) float64 { // Keys's kernel with a = −0.75
		const a = -0.75
		d = math.Abs(d)
		if d <= 1 {
			return (a+2)*d*d*d - (a+3)*d*d + 1
		}
		if d < 2 {
			return a*d*d*d - 5*a*d*d + 8*a*d - 4*a
		}
		return 0
	}
	return []int{cl(j - 1), cl(j), cl(j + 1), cl(j + 2)}, []float64{cubic(t + 1), cubic(t), cubic(1 - t), cubic(2 - t)}
}

// TestTableInterpolate checks Interpolate (nearest, bilinear, bicubic,
// both alignCorners, up and down sampling) on every device, float dtype
// and layout against per-pixel sums of PyTorch's taps in float64, and its
// gradient.
func TestTableInterpolate(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(139)
		x := randRef([]int{2, 2, 4, 5}, F64, nonZero(rng, 0.25, 3))
		for _, dt := range floatDTypes {
			loosen := 1.0
			if dt == F16 || dt == BF16 {
				loosen = 8
			}
			for _, mode := range []InterpolationMode{InterpNearest, InterpBilinear, InterpBicubic} {
				for _, align := range []bool{false, true} {
					if mode == InterpNearest && align {
						continue
					}
					for _, size := range [][2]int{{8, 10}, {2, 3}, {4, 5}, {1, 7}, {7, 1}} {
						want := build([]int{2, 2, size[0], size[1]}, func(idx []int) float64 {
							hi, hw := taps(idx[2], 4, size[0], mode, align)
							wi, ww := taps(idx[3], 5, size[1], mode, align)
							acc := 0.0
							for a := range hi {
								for b := range wi {
									acc += hw[a] * ww[b] * x.at(idx[0], idx[1], hi[a], wi[b])
								}
							}
							return acc
						})
						for _, l := range layoutsFor(4) {
							name := "interpolate " + mode.String() + " align " + map[bool]string{false: "off", true: "on"}[align] + " " + dt.String() + " " + shapeName(size[:]) + " " + l.name
							check(t, name, l.view(dev, x, dt).Interpolate(size, mode, align), want, dt, loosen, nil)
						}
					}
				}
			}
		}
		expectPanic(t, "interpolate rank 3", func() { Zeros([]int{2, 3, 4}, dev).Interpolate([2]int{2, 2}, InterpBilinear, false) }, "interpolate", "[N, C, H, W]")
		expectPanic(t, "interpolate size 0", func() { Zeros([]int{1, 1, 2, 2}, dev).Interpolate([2]int{0, 2}, InterpBilinear, false) }, "interpolate", "positive")
	})
	rng := newRNG(149)
	x := randRef([]int{1, 2, 3, 4}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{
		{name: "interpolate bilinear", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.Interpolate([2]int{5, 3}, InterpBilinear, false) })},
		{name: "interpolate bicubic align", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.Interpolate([2]int{4, 6}, InterpBicubic, true) })},
		{name: "adaptive avg", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.AdaptiveAvgPool2d(2, 3) })},
		{name: "adaptive max", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.AdaptiveMaxPool2d(2, 3) })},
	})
}

// TestTableAdaptivePool checks AdaptiveAvgPool2d and AdaptiveMaxPool2d
// (bins that overlap, that divide evenly, output larger than input, rank
// 3) on every device, float dtype and layout against bin loops in
// float64; max propagates NaN.
func TestTableAdaptivePool(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(151)
		for _, shape := range [][]int{{2, 3, 5, 7}, {3, 6, 4}} {
			x := randRef(shape, F64, nonZero(rng, 0.25, 3))
			r := len(shape)
			h, w := shape[r-2], shape[r-1]
			for _, dt := range floatDTypes {
				for _, out := range [][2]int{{2, 3}, {1, 1}, {5, 7}, {3, 2}, {7, 9}} {
					oshape := append(append([]int{}, shape[:r-2]...), out[0], out[1])
					bin := func(i, in, o int) (int, int) {
						return int(math.Floor(float64(i*in) / float64(o))), int(math.Ceil(float64((i+1)*in) / float64(o)))
					}
					avg := build(oshape, func(idx []int) float64 {
						h0, h1 := bin(idx[r-2], h, out[0])
						w0, w1 := bin(idx[r-1], w, out[1])
						s := 0.0
						j := append([]int{}, idx...)
						for a := h0; a < h1; a++ {
							for b := w0; b < w1; b++ {
								j[r-2], j[r-1] = a, b
								s += x.at(j...)
							}
						}
						return s / float64((h1-h0)*(w1-w0))
					})
					mx := build(oshape, func(idx []int) float64 {
						h0, h1 := bin(idx[r-2], h, out[0])
						w0, w1 := bin(idx[r-1], w, out[1])
						m := math.Inf(-1)
						j := append([]int{}, idx...)
						for a := h0; a < h1; a++ {
							for b := w0; b < w1; b++ {
								j[r-2], j[r-1] = a, b
								m = math.Max(m, quantize(x.at(j...), dt))
							}
						}
						return m
					})
					for _, l := range layoutsFor(r) {
						xt := l.view(dev, x, dt)
						name := dt.String() + " " + shapeName(shape) + " to " + shapeName(out[:]) + " " + l.name
						check(t, "adaptive_avg_pool2d "+name, xt.AdaptiveAvgPool2d(out[0], out[1]), avg, dt, 2, nil)
						checkEq(t, "adaptive_max_pool2d "+name, xt.AdaptiveMaxPool2d(out[0], out[1]), mx, dt)
					}
				}
			}
		}
		n := ref{[]int{1, 1, 2, 2}, []float64{1, math.NaN(), 3, 4}}
		checkEq(t, "adaptive max NaN", mk(dev, n, F32).AdaptiveMaxPool2d(1, 1), ref{[]int{1, 1, 1, 1}, []float64{math.NaN()}}, F32)
	})
}
