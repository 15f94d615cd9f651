package ember

import (
	"math"
	"testing"
)

// gridSampleRef is PyTorch's 2-d grid_sample for one output location in
// float64: unnormalize, apply the padding rule (clip or reflect then
// clip), then bilinear over the four neighbours (each counted only inside
// the input) or nearest with round-half-to-even.
func gridSampleRef(x ref, s, ch int, gx, gy float64, bilinear bool, pad GridPadding, align bool) float64 {
	h, w := x.shape[2], x.shape[3]
	unnorm := func(v float64, size int) float64 {
		if align {
			return (v + 1) / 2 * float64(size-1)
		}
		return ((v+1)*float64(size) - 1) / 2
	}
	reflect := func(v float64, lo2, hi2 int) float64 {
		if lo2 == hi2 {
			return 0
		}
		mn := float64(lo2) / 2
		span := float64(hi2-lo2) / 2
		v = math.Abs(v - mn)
		extra := math.Mod(v, span)
		flips := int(math.Floor(v / span))
		if flips%2 == 0 {
			return extra + mn
		}
		return span - extra + mn
	}
	coord := func(v float64, size int) float64 {
		c := unnorm(v, size)
		switch pad {
		case GridBorder:
			c = math.Min(math.Max(c, 0), float64(size-1))
		case GridReflection:
			if align {
				c = reflect(c, 0, 2*(size-1))
			} else {
				c = reflect(c, -1, 2*size-1)
			}
			c = math.Min(math.Max(c, 0), float64(size-1))
		}
		return c
	}
	ix, iy := coord(gx, w), coord(gy, h)
	at := func(px, py int) float64 {
		if px < 0 || px >= w || py < 0 || py >= h {
			return 0
		}
		return x.at(s, ch, py, px)
	}
	if !bilinear {
		return at(int(math.RoundToEven(ix)), int(math.RoundToEven(iy)))
	}
	x0, y0 := math.Floor(ix), math.Floor(iy)
	tx, ty := ix-x0, iy-y0
	i0, j0 := int(x0), int(y0)
	return at(i0, j0)*(1-tx)*(1-ty) + at(i0+1, j0)*tx*(1-ty) + at(i0, j0+1)*(1-tx)*ty + at(i0+1, j0+1)*tx*ty
}

// TestTableGridSample checks GridSample (bilinear and nearest, every
// padding mode, both alignCorners) on every device in F32 and F64 against
// PyTorch's per-location rules in float64, with grid points inside,
// outside and exactly on the border; and its gradients in x and grid.
func TestTableGridSample(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(191)
		x := randRef([]int{2, 3, 4, 5}, F64, nonZero(rng, 0.25, 3))
		g := randRef([]int{2, 3, 4, 2}, F64, uniform(rng, -1.4, 1.4))
		g.v[0], g.v[1], g.v[2], g.v[3] = 1, -1, -1, 1 // corners
		for _, dt := range []DType{F32, F64} {
			for _, bil := range []bool{true, false} {
				for _, pad := range []GridPadding{GridZeros, GridBorder, GridReflection} {
					for _, align := range []bool{false, true} {
						want := build([]int{2, 3, 3, 4}, func(idx []int) float64 {
							gi := ((idx[0]*3+idx[2])*4 + idx[3]) * 2
							return gridSampleRef(x, idx[0], idx[1], quantize(g.v[gi], dt), quantize(g.v[gi+1], dt), bil, pad, align)
						})
						name := "grid_sample " + dt.String() + map[bool]string{true: " bilinear", false: " nearest"}[bil] + " " + pad.String() + map[bool]string{true: " align", false: ""}[align]
						check(t, name, mk(dev, x, dt).GridSample(mk(dev, g, dt), bil, pad, align), want, dt, 4, nil)
					}
				}
			}
		}
		expectPanic(t, "grid_sample grid shape", func() {
			Zeros([]int{1, 1, 2, 2}, dev).GridSample(Zeros([]int{1, 2, 2, 3}, dev), true, GridZeros, false)
		}, "grid_sample", "[N, Ho, Wo, 2]")
	})
	rng := newRNG(193)
	x := randRef([]int{1, 2, 3, 4}, F64, nonZero(rng, 0.2, 2))
	g := randRef([]int{1, 2, 3, 2}, F64, uniform(rng, -0.9, 0.9))
	runGradCases(t, []gradCase{
		{name: "grid_sample bilinear", ins: []ref{x, g}, f: func(xs []*Tensor) *Tensor { return xs[0].GridSample(xs[1], true, GridZeros, false) }},
		{name: "grid_sample border align", ins: []ref{x, g}, f: func(xs []*Tensor) *Tensor { return xs[0].GridSample(xs[1], true, GridBorder, true) }},
		{name: "grid_sample nearest", ins: []ref{x}, f: func(xs []*Tensor) *Tensor {
			return xs[0].GridSample(FromFloats(g.v, g.shape, xs[0].Device()).Cast(F64), false, GridReflection, false)
		}},
	})
}
