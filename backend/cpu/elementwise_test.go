package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// broadcastPairs are operand shapes covering the fast path's modes (full,
// trailing row, leading column, scalar, a middle block such as a
// per-channel bias, on either side), sizes above the parallel threshold,
// and a broadcast with two separate runs of size-1 axes that falls back to
// flex.
var broadcastPairs = [][2][]int{
	{{5, 7}, {5, 7}},
	{{5, 7}, {7}},
	{{7}, {5, 7}},
	{{5, 7}, {5, 1}},
	{{5, 1}, {5, 7}},
	{{5, 7}, {}},
	{{}, {5, 7}},
	{{5, 1}, {1, 7}},
	{{3, 1, 4}, {3, 5, 4}},
	{{300, 257}, {257}},
	{{1 << 17}, {1 << 17}},
	{{1 << 17}, {1}},
	{{4, 6, 5, 3}, {1, 6, 1, 1}},
	{{6, 1, 1}, {4, 6, 5, 3}},
	{{2, 3, 200, 120}, {3, 200, 1}},
}

// TestBinaryMatchesFlex checks the float32 fast paths bit for bit against
// flex, on random values with a NaN, for every op and broadcast mode.
func TestBinaryMatchesFlex(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	ops := []backend.BinaryOp{backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpMax, backend.OpMin,
		backend.OpEq, backend.OpNe, backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe}
	for pi, p := range broadcastPairs {
		av, bv := randVals(numel(p[0]), uint64(pi)), randVals(numel(p[1]), uint64(pi+20))
		av[0] = math.NaN()
		if len(bv) > 3 && len(av) > 3 {
			bv[3] = av[3] // ties for the comparisons and max/min
		}
		for _, op := range ops {
			name := fmt.Sprintf("%v %v %v", op, p[0], p[1])
			got := ir.Binary(be, op, tensorOf(be, av, p[0], backend.F32), tensorOf(be, bv, p[1], backend.F32))
			want := ir.Binary(fl, op, tensorOf(fl, av, p[0], backend.F32), tensorOf(fl, bv, p[1], backend.F32))
			sameAsFlex(t, name, be, fl, got, want)
		}
	}
}

func TestUnaryAndWhereMatchFlex(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	for _, n := range []int{9, 1 << 17} {
		v := randVals(n, uint64(n))
		v[1] = math.NaN()
		v[2] = -50
		for _, op := range []backend.UnaryOp{backend.OpNeg, backend.OpAbs, backend.OpExp, backend.OpLog, backend.OpSqrt,
			backend.OpRsqrt, backend.OpRecip, backend.OpTanh, backend.OpSigmoid, backend.OpSin} {
			got := ir.Unary(be, op, tensorOf(be, v, []int{n}, backend.Flex32))
			want := ir.Unary(fl, op, tensorOf(fl, v, []int{n}, backend.Flex32))
			sameAsFlex(t, fmt.Sprint(op, n), be, fl, got, want)
		}
	}
	// Where in Relu's form and with every operand broadcast somehow.
	for pi, p := range append(broadcastPairs[:9:9], broadcastPairs[12:]...) {
		cv := randVals(numel(p[0]), uint64(pi))
		av, bv := randVals(numel(p[1]), 3), randVals(numel(p[0]), 4)
		mk := func(b backend.Backend) [3]backend.Tensor {
			c := ir.Binary(b, backend.OpLe, tensorOf(b, cv, p[0], backend.F32), tensorOf(b, []float64{0}, nil, backend.F32))
			return [3]backend.Tensor{c, tensorOf(b, av, p[1], backend.F32), tensorOf(b, bv, p[0], backend.F32)}
		}
		g, w := mk(be), mk(fl)
		sameAsFlex(t, fmt.Sprint("where ", p), be, fl, ir.Where(be, g[0], g[1], g[2]), ir.Where(fl, w[0], w[1], w[2]))
		sameAsFlex(t, fmt.Sprint("where swapped ", p), be, fl, ir.Where(be, g[0], g[2], g[1]), ir.Where(fl, w[0], w[2], w[1]))
	}
}

func TestReduceAgainstReference(t *testing.T) {
	be := newTestBackend()
	shapes := [][]int{{1}, {13}, {1 << 18}, {6, 1000}, {3000, 37}, {200, 300}, {5, 3}, {20000, 4}, {7, 1}}
	for si, s := range shapes {
		v := randVals(numel(s), uint64(si))
		x := tensorOf(be, v, s, backend.F32)
		f32 := ir.FromSlice(v, s).Convert(backend.F32).Convert(backend.F64).Float64s()
		r := s[len(s)-1]
		outer := numel(s) / r
		sum, mx, mn := make([]float64, outer), make([]float64, outer), make([]float64, outer)
		for o := range outer {
			mx[o], mn[o] = math.Inf(-1), math.Inf(1)
			for _, e := range f32[o*r : (o+1)*r] {
				sum[o] += e
				mx[o], mn[o] = max(mx[o], e), min(mn[o], e)
			}
		}
		axis := len(s) - 1
		closeTo(t, fmt.Sprint("sum ", s), values(t, be, ir.Reduce(be, backend.ReduceSum, x, axis, false)), sum, 1e-6)
		closeTo(t, fmt.Sprint("max ", s), values(t, be, ir.Reduce(be, backend.ReduceMax, x, axis, true)), mx, 0)
		closeTo(t, fmt.Sprint("min ", s), values(t, be, ir.Reduce(be, backend.ReduceMin, x, axis, false)), mn, 0)
		if len(s) == 2 { // column sums (axis 0)
			col := make([]float64, r)
			for i, e := range f32 {
				col[i%r] += e
			}
			closeTo(t, fmt.Sprint("colsum ", s), values(t, be, ir.Reduce(be, backend.ReduceSum, x, 0, false)), col, 1e-6)
		}
	}
	// NaN propagates through max and min; sums of NaN are NaN.
	v := randVals(1<<17, 9)
	v[77777] = math.NaN()
	x := tensorOf(be, v, []int{1 << 17}, backend.F32)
	for _, op := range []backend.ReduceOp{backend.ReduceSum, backend.ReduceMax, backend.ReduceMin} {
		if got := values(t, be, ir.Reduce(be, op, x, 0, false)); !math.IsNaN(got[0]) {
			t.Fatalf("%v with NaN = %v", op, got[0])
		}
	}
}
