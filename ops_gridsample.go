package ember

import "strconv"

// GridPadding says how GridSample treats grid locations outside the
// input, as PyTorch's grid_sample padding_mode.
type GridPadding int

const (
	// GridZeros samples zero outside the input ("zeros").
	GridZeros GridPadding = iota
	// GridBorder clamps locations to the border ("border").
	GridBorder
	// GridReflection reflects locations at the border, then clamps
	// ("reflection").
	GridReflection
)

// String returns PyTorch's name of the padding mode.
func (p GridPadding) String() string {
	switch p {
	case GridZeros:
		return "zeros"
	case GridBorder:
		return "border"
	case GridReflection:
		return "reflection"
	}
	return "GridPadding(" + strconv.Itoa(int(p)) + ")"
}

// reflectCoords reflects c between twiceLow/2 and twiceHigh/2, as
// PyTorch's reflect_coordinates: |c − min| folded by the span, mirrored
// on odd folds.
func reflectCoords(c *Tensor, twiceLow, twiceHigh int) *Tensor {
	if twiceLow == twiceHigh {
		return ZerosLike(c)
	}
	lo := float64(twiceLow) / 2
	span := float64(twiceHigh-twiceLow) / 2
	a := c.AddScalar(-lo).Abs()
	extra := a.Rem(FullLike(a, span))
	flips := a.DivScalar(span).Floor()
	even := flips.Rem(FullLike(flips, 2)).EqScalar(0)
	return Where(even, extra.AddScalar(lo), extra.Neg().AddScalar(span+lo))
}

// GridSample samples x [N, C, H, W] at the locations of grid [N, Ho, Wo,
// 2] and returns [N, C, Ho, Wo] (PyTorch's grid_sample, 2-d): grid[...,
// 0] is x's width coordinate and grid[..., 1] its height, both normalized
// to [−1, 1] — the centres of the corner pixels with alignCorners, their
// outer edges otherwise. bilinear (else nearest, rounding half to even as
// PyTorch) interpolates the four (one) nearest pixels; padding says what
// lies outside (GridZeros, GridBorder, GridReflection). It is
// differentiable in x and, for bilinear, in grid. It panics with an
// *Error for mismatched shapes, non-float tensors or an unknown padding.
func (x *Tensor) GridSample(grid *Tensor, bilinear bool, padding GridPadding, alignCorners bool) *Tensor {
	const op = "grid_sample"
	x.need(op, "x")
	grid.need(op, "grid")
	args := []string{describe("x", x), describe("grid", grid)}
	if x.Rank() != 4 || grid.Rank() != 4 || grid.Dim(3) != 2 || grid.Dim(0) != x.Dim(0) || !x.DType().IsFloat() || !grid.DType().IsFloat() {
		fail(op, args, "needs a float x [N, C, H, W] and a float grid [N, Ho, Wo, 2]")
	}
	if padding < GridZeros || padding > GridReflection {
		fail(op, args, "unknown padding %v", padding)
	}
	n, c, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	ho, wo := grid.Dim(1), grid.Dim(2)
	g := grid.castTo(x.DType())
	// Unnormalize to pixel coordinates, then apply the padding rule.
	coord := func(v *Tensor, size int) *Tensor {
		var p *Tensor
		if alignCorners {
			p = v.AddScalar(1).MulScalar(float64(size-1) / 2)
		} else {
			p = v.AddScalar(1).MulScalar(float64(size)).AddScalar(-1).DivScalar(2)
		}
		switch padding {
		case GridBorder:
			p = p.Clamp(0, float64(size-1))
		case GridReflection:
			if alignCorners {
				p = reflectCoords(p, 0, 2*(size-1))
			} else {
				p = reflectCoords(p, -1, 2*size-1)
			}
			p = p.Clamp(0, float64(size-1))
		}
		return p
	}
	ix := coord(g.Narrow(3, 0, 1).Squeeze(3), w) // [N, Ho, Wo]
	iy := coord(g.Narrow(3, 1, 1).Squeeze(3), h)
	flat := x.Reshape(n, c, h*w)
	// tap gathers x at the integer pixels (px, py) [N, Ho, Wo] (floats,
	// untracked) as [N, C, Ho, Wo], zero where a pixel lies outside.
	tap := func(px, py *Tensor) *Tensor {
		valid := px.GeScalar(0).And(px.LeScalar(float64(w - 1))).And(py.GeScalar(0)).And(py.LeScalar(float64(h - 1)))
		cx, cy := px.Clamp(0, float64(w-1)), py.Clamp(0, float64(h-1))
		idx := cy.MulScalar(float64(w)).Add(cx).castTo(I64).Reshape(n, 1, ho*wo).Expand(n, c, ho*wo)
		if x.dev.autodiff {
			idx, valid = idx.ToDevice(x.dev), valid.ToDevice(x.dev)
		}
		v := flat.Gather(2, idx).Reshape(n, c, ho, wo)
		return Where(valid.Unsqueeze(1), v, ZerosLike(v))
	}
	plain := func(t *Tensor) *Tensor { return t.Inner() }
	if !bilinear {
		px, py := plain(ix).Round(), plain(iy).Round()
		return tap(px, py)
	}
	x0, y0 := plain(ix).Floor(), plain(iy).Floor()
	if x.dev.autodiff {
		x0, y0 = x0.ToDevice(x.dev), y0.ToDevice(x.dev)
	}
	wx1, wy1 := ix.Sub(x0), iy.Sub(y0) // tracked through the grid
	wx0, wy0 := wx1.Neg().AddScalar(1), wy1.Neg().AddScalar(1)
	x0p, y0p := x0.Inner(), y0.Inner()
	var out *Tensor
	for _, t := range []struct {
		dx, dy float64
		wt     *Tensor
	}{{0, 0, wx0.Mul(wy0)}, {1, 0, wx1.Mul(wy0)}, {0, 1, wx0.Mul(wy1)}, {1, 1, wx1.Mul(wy1)}} {
		v := tap(x0p.AddScalar(t.dx), y0p.AddScalar(t.dy))
		term := v.Mul(t.wt.Unsqueeze(1))
		if out == nil {
			out = term
		} else {
			out = out.Add(term)
		}
	}
	return out
}
