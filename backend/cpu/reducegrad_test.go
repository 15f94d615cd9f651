package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// TestExtremumGradMatchesComposition compares the fused max/min gradient
// with the composition Mul(Div(g, Sum(Cast(Eq(x, y)))), Cast(Eq(x, y))) on
// flex, bit for bit, for the last and a middle axis, with ties (values
// rounded to a coarse grid), a NaN lane, sizes above the parallel
// threshold, and F64 (which takes the composed path on this backend).
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
			for _, dt := range []backend.DType{backend.F32, backend.F64} {
				run := func(b backend.Backend) (backend.Tensor, backend.Tensor) {
					x := tensorOf(b, v, c.shape, dt)
					y := b.Reduce(op, x, c.axis, true)
					return x, y
				}
				x, y := run(be)
				got := be.ExtremumGrad(x, y, tensorOf(be, gv, ks, dt), c.axis)
				fx, fy := run(fl)
				mask := fl.Cast(fl.Binary(backend.OpEq, fx, fy), dt)
				cnt := fl.Reduce(backend.ReduceSum, mask, c.axis, true)
				want := fl.Binary(backend.OpMul, fl.Binary(backend.OpDiv, tensorOf(fl, gv, ks, dt), cnt), mask)
				sameAsFlex(t, fmt.Sprintf("%v %v axis %d %v", op, c.shape, c.axis, dt), be, fl, got, want)
			}
		}
	}
}
