package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// TestExtremumGradMatchesComposition compares the fused max/min gradient
// with the composition Mul(Div(g, Sum(Cast(Eq(x, y)))), Cast(Eq(x, y))) on
// flex, bit for bit, for the last and a middle axis, with ties (values
// rounded to a coarse grid), a NaN lane, sizes above the parallel
// threshold, and F64, F16 and a flipped (non-contiguous) F32 x, which the
// kernel declines and lowers with the decomposition on this backend.
func TestExtremumGradMatchesComposition(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	cases := []struct {
		shape []int
		axis  int
	}{
		{[]int{5, 4}, 1}, {[]int{64, 8, 12, 12, 4}, 4}, {[]int{3, 5, 7}, 1}, {[]int{40, 9, 100}, 1}, {[]int{6}, 0},
	}
	for ci, c := range cases {
		v := randVals(numel(c.shape), uint64(ci))
		for i := range v {
			v[i] = math.Round(v[i] * 2) // many ties
		}
		v[len(v)/2] = math.NaN()
		ks := append([]int(nil), c.shape...)
		ks[c.axis] = 1
		gv := randVals(numel(ks), uint64(ci+9))
		for _, op := range []backend.ReduceOp{backend.ReduceMax, backend.ReduceMin} {
			for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16} {
				for _, flipped := range []bool{false, true} {
					if flipped && dt != backend.F32 {
						continue
					}
					run := func(b backend.Backend) (backend.Tensor, backend.Tensor) {
						x := tensorOf(b, v, c.shape, dt)
						if flipped { // a non-contiguous x: the kernel declines it
							x = ir.Flip(b, x, []int{c.axis})
						}
						y := ir.Reduce(b, op, x, c.axis, true)
						return x, y
					}
					x, y := run(be)
					got := extremumGradOf(be, x, y, tensorOf(be, gv, ks, dt), c.axis)
					fx, fy := run(fl)
					mask := ir.Cast(fl, ir.Binary(fl, backend.OpEq, fx, fy), dt)
					cnt := ir.Reduce(fl, backend.ReduceSum, mask, c.axis, true)
					want := ir.Binary(fl, backend.OpMul, ir.Binary(fl, backend.OpDiv, tensorOf(fl, gv, ks, dt), cnt), mask)
					sameAsFlex(t, fmt.Sprintf("%v %v axis %d %v flipped=%v", op, c.shape, c.axis, dt, flipped), be, fl, got, want)
				}
			}
		}
	}
}
