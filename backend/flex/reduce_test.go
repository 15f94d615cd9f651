package flex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refReduce reduces r along axis with the float64 definition of op.
func refReduce(op backend.ReduceOp, r ref, axis int, keepDim bool) ref {
	var shape []int
	for d, s := range r.shape {
		if d != axis {
			shape = append(shape, s)
		} else if keepDim {
			shape = append(shape, 1)
		}
	}
	outShape := append([]int{}, r.shape...)
	outShape[axis] = 1
	out := ref{shape: shape, v: make([]float64, size(outShape))}
	for o := range out.v {
		idx := unflat(outShape, o)
		var acc float64
		at := 0
		for j := 0; j < r.shape[axis]; j++ {
			idx[axis] = j
			v := r.v[flat(r.shape, idx)]
			switch op {
			case backend.ReduceSum:
				acc += v
			case backend.ReduceProd:
				if j == 0 {
					acc = 1
				}
				acc *= v
			default:
				better := v > acc
				if op == backend.ReduceMin || op == backend.ReduceArgMin {
					better = v < acc
				}
				if j == 0 || (!math.IsNaN(acc) && (better || math.IsNaN(v))) {
					acc, at = v, j
				}
			}
		}
		if op == backend.ReduceArgMax || op == backend.ReduceArgMin {
			acc = float64(at)
		}
		out.v[o] = acc
	}
	return out
}

func TestReduce(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ops := []backend.ReduceOp{backend.ReduceSum, backend.ReduceProd, backend.ReduceMax, backend.ReduceMin, backend.ReduceArgMax, backend.ReduceArgMin}
	dts := append(append([]backend.DType{}, floatDTypes...), backend.I64, backend.I32, backend.I8, backend.U16)
	shapes := [][]int{{5}, {3, 4}, {2, 3, 4}, {2, 1, 3}, {3, 0}}
	for _, dt := range dts {
		for _, op := range ops {
			for _, shape := range shapes {
				r := randRef(rng, shape, dt)
				if op == backend.ReduceProd && dt.IsInt() {
					r = mapRef(r, func(v float64) float64 { return math.Copysign(math.Mod(math.Abs(v), 2)+1, v) })
				}
				in := read(t, mk(r, dt))
				for axis := range shape {
					if shape[axis] == 0 && op != backend.ReduceSum && op != backend.ReduceProd {
						continue
					}
					for _, keep := range []bool{false, true} {
						want := refReduce(op, in, axis, keep)
						outDT := dt
						if op == backend.ReduceArgMax || op == backend.ReduceArgMin {
							outDT = backend.I64
						}
						if op == backend.ReduceProd && shape[axis] == 0 {
							want = mapRef(want, func(float64) float64 { return 1 })
						}
						for _, l := range layouts {
							what := fmt.Sprintf("%v %v %v axis %d keep %v %s", op, dt, shape, axis, keep, l.name)
							check(t, what, ir.Reduce(tb, op, l.make(r, dt), axis, keep), want, outDT)
						}
					}
				}
			}
		}
	}
}

func TestReduceNaNAndTies(t *testing.T) {
	nan := math.NaN()
	r := ref{[]int{2, 5}, []float64{1, nan, 3, nan, 3, 2, 5, 5, 1, 5}}
	for _, dt := range floatDTypes {
		x := mk(r, dt)
		check(t, "max nan "+dt.String(), ir.Reduce(tb, backend.ReduceMax, x, 1, false), ref{[]int{2}, []float64{nan, 5}}, dt)
		check(t, "min nan "+dt.String(), ir.Reduce(tb, backend.ReduceMin, x, 1, false), ref{[]int{2}, []float64{nan, 1}}, dt)
		check(t, "argmax nan/tie "+dt.String(), ir.Reduce(tb, backend.ReduceArgMax, x, 1, false), ref{[]int{2}, []float64{1, 1}}, backend.I64)
		check(t, "argmin nan/tie "+dt.String(), ir.Reduce(tb, backend.ReduceArgMin, x, 1, true), ref{[]int{2, 1}, []float64{1, 3}}, backend.I64)
		check(t, "sum nan "+dt.String(), ir.Reduce(tb, backend.ReduceSum, x, 1, false), ref{[]int{2}, []float64{nan, 18}}, dt)
	}
	// ties with the first element keep index 0
	check(t, "argmin ties", ir.Reduce(tb, backend.ReduceArgMin, mk(ref{[]int{3}, []float64{2, 2, 2}}, backend.I32), 0, false), ref{[]int{}, []float64{0}}, backend.I64)
	// Bool: Sum/Max any, Prod/Min all
	b := mk(ref{[]int{2, 2}, []float64{1, 0, 0, 0}}, backend.Bool)
	// (ir rejects Bool sums and products; the kernel defines them)
	reduceRaw := func(r backend.ReduceOp, axis int) ir.Tensor {
		return execRaw(ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis, In: [3]ir.Tensor{b}}, []int{2}, backend.Bool)
	}
	check(t, "bool sum", reduceRaw(backend.ReduceSum, 1), ref{[]int{2}, []float64{1, 0}}, backend.Bool)
	check(t, "bool prod", reduceRaw(backend.ReduceProd, 0), ref{[]int{2}, []float64{0, 0}}, backend.Bool)
	check(t, "bool argmax", ir.Reduce(tb, backend.ReduceArgMax, b, 0, false), ref{[]int{2}, []float64{0, 0}}, backend.I64)
}

func TestSumF32Accuracy(t *testing.T) {
	// 1 + 2^20 copies of 2^-24: a float32 running sum would stay at 1.
	n := 1<<20 + 1
	v := make([]float64, n)
	v[0] = 1
	for i := 1; i < n; i++ {
		v[i] = math.Pow(2, -24)
	}
	got := read(t, ir.Reduce(tb, backend.ReduceSum, mk(ref{[]int{n}, v}, backend.F32), 0, false))
	if want := 1 + math.Pow(2, -4); got.v[0] != want {
		t.Errorf("f32 sum = %v, want %v", got.v[0], want)
	}
}
