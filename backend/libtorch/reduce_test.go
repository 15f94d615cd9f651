//go:build libtorch && cgo

package libtorch

import (
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// lanesOf splits a row-major shape around axis.
func lanesOf(shape []int, axis int) (outer, n, inner int) {
	return ir.NumElements(shape[:axis]), shape[axis], ir.NumElements(shape[axis+1:])
}

// reduceRef reduces v (of shape) along axis: sums and products in
// float64, rounded to dt once; Max/Min/ArgMax/ArgMin with NaN winning (the
// first) and ties to the lowest index.
func reduceRef(r ir.ReduceOp, v []float64, shape []int, axis int, dt backend.DType) []float64 {
	outer, n, inner := lanesOf(shape, axis)
	out := make([]float64, outer*inner)
	for o := range outer {
		for i := range inner {
			at := func(j int) float64 { return v[(o*n+j)*inner+i] }
			var acc float64
			switch r {
			case ir.ReduceSum:
				for j := range n {
					acc += at(j)
				}
				acc = quantize(acc, dt)
			case ir.ReduceProd:
				acc = 1
				for j := range n {
					acc *= at(j)
				}
				acc = quantize(acc, dt)
			default:
				best, idx := at(0), 0
				for j := 1; j < n; j++ {
					x := at(j)
					if math.IsNaN(best) {
						break
					}
					isMax := r == ir.ReduceMax || r == ir.ReduceArgMax
					if math.IsNaN(x) || (isMax && x > best) || (!isMax && x < best) {
						best, idx = x, j
					}
				}
				acc = best
				if r == ir.ReduceArgMax || r == ir.ReduceArgMin {
					acc = float64(idx)
				}
			}
			out[o*inner+i] = acc
		}
	}
	return out
}

func reduceOp(r ir.ReduceOp, x ir.Tensor, axis int, keep bool) ir.Op {
	return ir.Op{Kind: ir.KindReduce, Sub: uint8(r), In: [3]ir.Tensor{x}, Axis: axis, KeepDim: keep}
}

// Every reduction on every float dtype along every axis, with and
// without keepDim, on values with ties and NaNs.
func TestReduceFloat(t *testing.T) {
	rng := newRNG(5)
	shapes := [][]int{{7}, {3, 5}, {2, 3, 4}, {4, 1, 6}}
	ops := []ir.ReduceOp{ir.ReduceSum, ir.ReduceProd, ir.ReduceMax, ir.ReduceMin, ir.ReduceArgMax, ir.ReduceArgMin}
	for _, dt := range floatDTypes {
		for _, shape := range shapes {
			n := ir.NumElements(shape)
			v := randVals(rng, n, 0.5, 1.5, dt)
			ties := slices.Clone(v)
			for i := range ties {
				ties[i] = float64(rng.IntN(3)) - 1 // many ties
			}
			nans := slices.Clone(v)
			nans[rng.IntN(n)] = math.NaN()
			nans[rng.IntN(n)] = math.NaN()
			for vi, vals := range [][]float64{v, ties, nans} {
				x := lt(vals, shape, dt)
				for axis := range shape {
					for _, keep := range []bool{false, true} {
						for _, r := range ops {
							if vi == 1 && r == ir.ReduceProd {
								continue
							}
							out := exec(t, reduceOp(r, x, axis, keep))[0]
							want := reduceRef(r, vals, shape, axis, dt)
							name := r.String() + " " + dt.String() + " " + shapeName(shape)
							if keep != (len(out.Shape()) == len(shape)) {
								t.Fatalf("%s keep %v: shape %v", name, keep, out.Shape())
							}
							wdt := dt
							if r == ir.ReduceArgMax || r == ir.ReduceArgMin {
								wdt = backend.I64
							}
							expect(t, name, values(t, tb, out), want, wdt)
						}
					}
				}
			}
		}
	}
}

// Integer sums and products wrap; Max/Min/Arg* are exact; Bool Max and Min
// are any and all, ArgMax the first true.
func TestReduceIntBool(t *testing.T) {
	rng := newRNG(6)
	shape := []int{3, 4, 5}
	for _, dt := range intDTypes {
		lo, hi := intLimits(dt)
		v := make([]int64, ir.NumElements(shape))
		for i := range v {
			if dt == backend.I64 {
				v[i] = int64(rng.Uint64())
			} else {
				v[i] = lo + rng.Int64N(hi-lo+1)
			}
		}
		x := intTensor(v, shape, dt)
		for axis := range shape {
			outer, n, inner := lanesOf(shape, axis)
			for _, r := range []ir.ReduceOp{ir.ReduceSum, ir.ReduceProd, ir.ReduceMax, ir.ReduceMin, ir.ReduceArgMax, ir.ReduceArgMin} {
				want := make([]int64, outer*inner)
				for o := range outer {
					for i := range inner {
						at := func(j int) int64 { return v[(o*n+j)*inner+i] }
						acc := at(0)
						idx := int64(0)
						for j := 1; j < n; j++ {
							x := at(j)
							switch r {
							case ir.ReduceSum:
								acc = wrapInt(acc+x, dt)
							case ir.ReduceProd:
								acc = wrapInt(acc*x, dt)
							case ir.ReduceMax, ir.ReduceArgMax:
								if x > acc {
									acc, idx = x, int64(j)
								}
							default:
								if x < acc {
									acc, idx = x, int64(j)
								}
							}
						}
						if r == ir.ReduceArgMax || r == ir.ReduceArgMin {
							acc = idx
						}
						want[o*inner+i] = acc
					}
				}
				got := intsOf(t, exec(t, reduceOp(r, x, axis, false))[0])
				expectInts(t, r.String()+" "+dt.String(), got, want)
			}
		}
	}
	b := lt([]float64{0, 1, 1, 0, 0, 0}, []int{2, 3}, backend.Bool)
	expect(t, "bool max", run1(t, reduceOp(ir.ReduceMax, b, 1, false)), []float64{1, 0}, backend.Bool)
	expect(t, "bool min", run1(t, reduceOp(ir.ReduceMin, b, 0, false)), []float64{0, 0, 0}, backend.Bool)
	expect(t, "bool argmax", run1(t, reduceOp(ir.ReduceArgMax, b, 1, false)), []float64{1, 0}, backend.I64)
	expect(t, "bool argmin", run1(t, reduceOp(ir.ReduceArgMin, b, 1, true)), []float64{0, 0}, backend.I64)
}

// Float32 sums accumulate in float64: 2^24 ones and a 1 sum to 2^24 + 1
// rounded once (a float32 accumulator would stick at 2^24).
func TestSumAccumulatesInFloat64(t *testing.T) {
	v := []float64{0x1p24, 1, 1, -0x1p24, 1}
	x := lt(v, []int{5}, backend.F32)
	if got := run1(t, reduceOp(ir.ReduceSum, x, 0, false)); got[0] != 3 {
		t.Errorf("sum %v = %v, want 3", v, got[0])
	}
	// Empty axes: Sum 0, Prod 1.
	e := lt(nil, []int{2, 0}, backend.F32)
	expect(t, "empty sum", run1(t, reduceOp(ir.ReduceSum, e, 1, false)), []float64{0, 0}, backend.F32)
	expect(t, "empty prod", run1(t, reduceOp(ir.ReduceProd, e, 1, false)), []float64{1, 1}, backend.F32)
}

// CumSum matches the sequential prefix sum (float32 in float64, integers
// wrapping).
func TestCumSum(t *testing.T) {
	rng := newRNG(7)
	shape := []int{3, 6}
	for _, dt := range append(slices.Clone(floatDTypes), intDTypes...) {
		v := randVals(rng, 18, 1, 60, dt)
		x := lt(v, shape, dt)
		for axis := range 2 {
			outer, n, inner := lanesOf(shape, axis)
			want := make([]float64, len(v))
			for o := range outer {
				for i := range inner {
					acc := 0.0
					for j := range n {
						p := (o*n+j)*inner + i
						acc += v[p]
						want[p] = acc
						if dt.IsInt() {
							want[p] = float64(wrapInt(int64(acc), dt))
						} else {
							want[p] = quantize(acc, dt)
						}
					}
				}
			}
			if !tb.Supports(ir.KindCumSum, dt) {
				t.Fatalf("cumsum %v not supported", dt)
			}
			got := run1(t, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{x}})
			expect(t, "cumsum "+dt.String(), got, want, dt)
		}
	}
}
