package cpu

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refWeightGrad is the direct float64 loop of conv2d's weight gradient:
// gW[co, ci, ky, kx] = Σ g[n, co, oy, ox]·x[n, grp·cinG + ci, oy·s − p + ky·d, ox·s − p + kx·d].
func refWeightGrad(x []float64, xs [4]int, g []float64, gs [4]int, ws [4]int, o backend.ConvOptions) []float64 {
	out := make([]float64, numel(ws[:]))
	cinG, coutG := ws[1], gs[1]/o.Groups
	for co := range ws[0] {
		gr := co / coutG
		for ci := range cinG {
			for ky := range ws[2] {
				for kx := range ws[3] {
					var s float64
					for n := range gs[0] {
						for oy := range gs[2] {
							for ox := range gs[3] {
								iy := oy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
								ix := ox*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
								if iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3] {
									continue
								}
								s += g[((n*gs[1]+co)*gs[2]+oy)*gs[3]+ox] * x[((n*xs[1]+gr*cinG+ci)*xs[2]+iy)*xs[3]+ix]
							}
						}
					}
					out[((co*cinG+ci)*ws[2]+ky)*ws[3]+kx] = s
				}
			}
		}
	}
	return out
}

// TestConv2dWeightGradAgainstReference checks Conv2dWeightGrad against the
// float64 loop for stride, padding, dilation and groups, batches that are
// split over several workers and several images per GEMM, a pointwise
// kernel, and F32, F64 and BF16.
func TestConv2dWeightGradAgainstReference(t *testing.T) {
	be := newTestBackend()
	opt := func(s0, s1, p0, p1, d0, d1, g int) backend.ConvOptions {
		return backend.ConvOptions{Stride: [2]int{s0, s1}, Padding: [2]int{p0, p1}, Dilation: [2]int{d0, d1}, Groups: g}
	}
	cases := []struct {
		x, w [4]int
		o    backend.ConvOptions
	}{
		{[4]int{2, 3, 7, 6}, [4]int{4, 3, 3, 2}, opt(1, 1, 0, 0, 1, 1, 1)},
		{[4]int{3, 2, 9, 8}, [4]int{5, 2, 3, 3}, opt(2, 3, 1, 2, 1, 1, 1)},
		{[4]int{2, 2, 9, 9}, [4]int{3, 2, 2, 3}, opt(1, 2, 2, 0, 2, 2, 1)},
		{[4]int{3, 4, 6, 7}, [4]int{6, 2, 3, 2}, opt(2, 1, 1, 1, 1, 2, 2)},
		{[4]int{2, 3, 6, 5}, [4]int{3, 1, 2, 2}, opt(1, 1, 0, 1, 2, 1, 3)},
		{[4]int{40, 3, 6, 6}, [4]int{5, 3, 3, 3}, opt(1, 1, 1, 1, 1, 1, 1)},  // 16 images per GEMM, 3 batches
		{[4]int{5, 3, 20, 20}, [4]int{4, 3, 1, 1}, opt(1, 1, 0, 0, 1, 1, 1)}, // pointwise, one image per GEMM
		{[4]int{9, 4, 12, 12}, [4]int{8, 2, 5, 5}, opt(1, 1, 0, 0, 1, 1, 2)}, // the CNN's shape class
	}
	for ci, c := range cases {
		os := convShape(c.x[:], c.w[:], c.o, false)
		xv, gv := randVals(numel(c.x[:]), uint64(ci)), randVals(numel(os[:]), uint64(ci+50))
		for _, dt := range []backend.DType{backend.F32, backend.F64, backend.BF16} {
			xq := ir.FromSlice(xv, c.x[:]).Convert(dt).Convert(backend.F64).Float64s()
			gq := ir.FromSlice(gv, os[:]).Convert(dt).Convert(backend.F64).Float64s()
			want := refWeightGrad(xq, c.x, gq, os, c.w, c.o)
			if dt == backend.BF16 {
				want = ir.FromSlice(want, c.w[:]).Convert(dt).Convert(backend.F64).Float64s()
			}
			got := conv2dWeightGrad(be, tensorOf(be, xv, c.x[:], dt), tensorOf(be, gv, os[:], dt), c.w, c.o)
			if s := got.Shape(); len(s) != 4 || [4]int(s) != c.w || got.DType() != dt {
				t.Fatalf("case %d %v: shape %v dtype %v, want %v", ci, dt, s, got.DType(), c.w)
			}
			tol := map[backend.DType]float64{backend.F32: 2e-5, backend.F64: 1e-12, backend.BF16: 1e-2}[dt]
			closeTo(t, fmt.Sprintf("case %d %v", ci, dt), values(t, be, got), want, tol*10)
		}
	}
}
