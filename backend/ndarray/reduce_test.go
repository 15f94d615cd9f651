package ndarray

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refReduce reduces x of shape along axis with plain float64 loops
// (argmax/argmin: first NaN, else the lowest index of the extreme).
func refReduce(r ir.ReduceOp, x []float64, shape []int, axis int) []float64 {
	out := slices.Delete(slices.Clone(shape), axis, axis+1)
	res := make([]float64, numel(out))
	for i := range res {
		oi := unflat(out, i)
		idx := slices.Insert(slices.Clone(oi), axis, 0)
		var best float64
		bestAt := -1
		switch r {
		case ir.ReduceSum:
			best = 0
		case ir.ReduceProd:
			best = 1
		}
		for j := range shape[axis] {
			idx[axis] = j
			v := x[flat(shape, idx)]
			switch r {
			case ir.ReduceSum:
				best += v
			case ir.ReduceProd:
				best *= v
			default:
				isMax := r == ir.ReduceMax || r == ir.ReduceArgMax
				switch {
				case bestAt >= 0 && math.IsNaN(best):
				case bestAt < 0 || math.IsNaN(v) || (isMax && v > best) || (!isMax && v < best):
					best, bestAt = v, j
				}
			}
		}
		if r == ir.ReduceArgMax || r == ir.ReduceArgMin {
			best = float64(bestAt)
		}
		res[i] = best
	}
	return res
}

func TestReduceFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	shape := []int{3, 4, 5}
	for _, dt := range floatDTypes {
		for r := ir.ReduceSum; r <= ir.ReduceArgMin; r++ {
			for axis := range shape {
				x := randVals(rng, numel(shape), 0.5, 2, dt)
				x[7], x[9] = x[3], x[3] // ties
				if r >= ir.ReduceMax {
					x[5*4+2], x[5*4+3] = math.NaN(), math.NaN() // two NaNs in one lane: the first wins
				}
				for _, keep := range []bool{false, true} {
					got := run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis, KeepDim: keep, In: [3]ir.Tensor{mk(dt, shape, x)}})
					want := refReduce(r, x, shape, axis)
					wantShape := slices.Delete(slices.Clone(shape), axis, axis+1)
					if keep {
						wantShape = ir.KeepDimShape(shape, axis)
					}
					if !slices.Equal(got.Shape(), wantShape) {
						t.Fatalf("%v %v axis %d keep %v: shape %v, want %v", dt, r, axis, keep, got.Shape(), wantShape)
					}
					wdt := dt
					if r == ir.ReduceArgMax || r == ir.ReduceArgMin {
						wdt = backend.I64
					}
					if got.DType() != wdt {
						t.Fatalf("%v %v: dtype %v, want %v", dt, r, got.DType(), wdt)
					}
					for i, v := range vals(t, got) {
						w := want[i]
						if r <= ir.ReduceProd {
							w = quant(w, dt)
						}
						if !near(v, w, wdt) {
							t.Errorf("%v %v axis %d: element %d = %v, want %v", dt, r, axis, i, v, w)
						}
					}
				}
			}
		}
	}
}

// Integer sums and products wrap at the dtype's width; Max, Min and the
// Arg ops are exact.
func TestReduceInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	shape := []int{4, 6}
	for _, dt := range intDTypes {
		lo, hi := intRange(dt)
		for r := ir.ReduceSum; r <= ir.ReduceArgMin; r++ {
			x := randInts(rng, numel(shape), lo, hi, true)
			xt := mkI(dt, shape, x)
			x = ints(t, xt)
			got := ints(t, run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: 1, In: [3]ir.Tensor{xt}}))
			for row := range shape[0] {
				acc := big.NewInt(0)
				if r == ir.ReduceProd {
					acc.SetInt64(1)
				}
				bestAt := 0
				val := func(j int) *big.Int {
					v := big.NewInt(x[row*shape[1]+j])
					if !dt.IsSigned() {
						v.SetUint64(uint64(x[row*shape[1]+j]))
					}
					return v
				}
				for j := range shape[1] {
					switch r {
					case ir.ReduceSum:
						acc.Add(acc, val(j))
					case ir.ReduceProd:
						acc.Mul(acc, val(j))
					case ir.ReduceMax, ir.ReduceArgMax:
						if val(j).Cmp(val(bestAt)) > 0 {
							bestAt = j
						}
					default:
						if val(j).Cmp(val(bestAt)) < 0 {
							bestAt = j
						}
					}
				}
				var want int64
				switch r {
				case ir.ReduceSum, ir.ReduceProd:
					want = wrap(acc, dt)
				case ir.ReduceMax, ir.ReduceMin:
					want = x[row*shape[1]+bestAt]
				default:
					want = int64(bestAt)
				}
				if got[row] != want {
					t.Errorf("%v %v row %d = %d, want %d", dt, r, row, got[row], want)
				}
			}
		}
	}
}

func TestReduceBoolAndEmpty(t *testing.T) {
	b := mkI(backend.Bool, []int{3, 2}, []int64{0, 0, 0, 1, 1, 1})
	want := map[ir.ReduceOp][]int64{ir.ReduceMax: {0, 1, 1}, ir.ReduceMin: {0, 0, 1}, ir.ReduceArgMax: {0, 1, 0}, ir.ReduceArgMin: {0, 0, 0}}
	for r, w := range want {
		if got := ints(t, run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: 1, In: [3]ir.Tensor{b}})); !slices.Equal(got, w) {
			t.Errorf("bool %v = %v, want %v", r, got, w)
		}
	}
	e := mk(backend.F32, []int{2, 0}, nil)
	if got := vals(t, run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(ir.ReduceSum), Axis: 1, In: [3]ir.Tensor{e}})); !slices.Equal(got, []float64{0, 0}) {
		t.Errorf("sum of an empty axis = %v", got)
	}
	if got := vals(t, run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(ir.ReduceProd), Axis: 1, In: [3]ir.Tensor{e}})); !slices.Equal(got, []float64{1, 1}) {
		t.Errorf("prod of an empty axis = %v", got)
	}
}

// F64 sums are pairwise: over 2^20 values in [0.5, 1.5) the result is
// within 1e-15 of the exact sum, which the plain left-to-right loop
// misses on the same data.
func TestSumF64Pairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	x := make([]float64, 1<<20)
	exact := new(big.Float).SetPrec(2048)
	naive := 0.0
	for i := range x {
		x[i] = 0.5 + rng.Float64()
		exact.Add(exact, new(big.Float).SetFloat64(x[i]))
		naive += x[i]
	}
	want, _ := exact.Float64()
	const tolerance = 1e-15
	if math.Abs(naive-want)/want < 4*tolerance {
		t.Fatalf("the plain loop's error %g would pass: the test would not tell them apart", math.Abs(naive-want)/want)
	}
	got := vals(t, run(t, ir.Op{Kind: ir.KindReduce, Sub: uint8(ir.ReduceSum), In: [3]ir.Tensor{mk(backend.F64, []int{len(x)}, x)}}))[0]
	if e := math.Abs(got-want) / want; e > tolerance {
		t.Errorf("sum relative error %g > %g (got %v, want %v)", e, tolerance, got, want)
	}
}
