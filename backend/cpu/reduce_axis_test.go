package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// refReduce reduces x of shape along axis in float64: the sum, product,
// max or min of each lane (Max and Min NaN if the lane holds one), and the
// sum of the lane's magnitudes, the scale of a sum's rounding error.
func refReduce(op backend.ReduceOp, x []float64, shape []int, axis int) (vals, scale []float64) {
	outer, r, inner := numel(shape[:axis]), shape[axis], numel(shape[axis+1:])
	vals, scale = make([]float64, outer*inner), make([]float64, outer*inner)
	for o := range outer {
		for i := range inner {
			acc, abs := 0.0, 0.0
			if op == backend.ReduceProd {
				acc = 1
			}
			for j := range r {
				v := x[(o*r+j)*inner+i]
				switch {
				case op == backend.ReduceSum:
					acc += v
				case op == backend.ReduceProd:
					acc *= v
				case j == 0 || math.IsNaN(acc):
					if j == 0 {
						acc = v
					}
				case math.IsNaN(v) || (op == backend.ReduceMax && v > acc) || (op == backend.ReduceMin && v < acc):
					acc = v
				}
				abs += math.Abs(v)
			}
			vals[o*inner+i], scale[o*inner+i] = acc, abs
		}
	}
	return vals, scale
}

// TestReduceAxisMatchesFlexAndFloat64 reduces F32 and Flex32 tensors with
// Sum, Prod, Max and Min along every axis of rank-2 and rank-3 shapes
// (odd sizes, lane counts that leave vector tails, rows longer than a
// column block, sizes split over the workers): along non-last axes the
// result must be flex's bit for bit (each lane in flex's order) and,
// everywhere, close to the float64 reference: sums within 2⁻²²·Σ|x| plus
// the float32 rounding of the result, products within 2⁻²² relative,
// Max and Min exactly. Inputs are random and non-zero; special cases put
// a NaN, ±Inf, -0 and ties between +0 and -0 into some lanes.
func TestReduceAxisMatchesFlexAndFloat64(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	shapes := [][]int{
		{1, 5}, {3, 1}, {7, 9}, {9, 8}, {13, 1031}, {257, 33}, {2, 2049}, {300, 300},
		{5, 17, 3}, {4, 300, 7}, {2, 9, 2049}, {3, 1, 40}, {6, 129, 17}, {1, 70, 1},
	}
	ops := []backend.ReduceOp{backend.ReduceSum, backend.ReduceProd, backend.ReduceMax, backend.ReduceMin}
	for si, shape := range shapes {
		n := numel(shape)
		for _, special := range []bool{false, true} {
			x := randVals(n, uint64(si)+100)
			if special {
				if n >= 16 {
					for j := 0; j < n; j += max(1, n/16) {
						x[j] = math.Copysign(0, float64(j%2)-0.5) // signed zeros
					}
				}
				// Spread over the rows and lanes: a NaN after a NaN-free
				// start, a later NaN in the same lane for some shapes, ±Inf.
				for k, v := range []float64{math.NaN(), math.Inf(1), math.NaN(), math.Inf(-1), math.Copysign(0, -1), math.NaN()} {
					x[((k+1)*n/7+3+k)%n] = v
				}
			}
			for _, dt := range []backend.DType{backend.F32, backend.Flex32} {
				for _, op := range ops {
					vals := x
					if op == backend.ReduceProd {
						// Factors near 1: long lanes neither overflow nor vanish.
						vals = make([]float64, n)
						for i, v := range x {
							vals[i] = 1 + v/16
							if math.IsNaN(v) || math.IsInf(v, 0) {
								vals[i] = v
							}
						}
					}
					// The reference sees the values as float32.
					r32 := make([]float64, n)
					for i, v := range vals {
						r32[i] = float64(float32(v))
					}
					for axis := range shape {
						for _, keep := range []bool{false, true} {
							name := fmt.Sprintf("%v/%v/%v/axis %d/keep=%v/special=%v", dt, op, shape, axis, keep, special)
							xc, xf := tensorOf(be, vals, shape, dt), tensorOf(fl, vals, shape, dt)
							rop := ir.Op{Kind: ir.KindReduce, Sub: uint8(op), Axis: axis, KeepDim: keep, In: [3]ir.Tensor{xc}}
							if err := rop.Infer(); err != nil {
								t.Fatal(err)
							}
							got := be.Exec(rop)[0]
							rop.In[0] = xf
							want := fl.Exec(rop)[0]
							if axis < len(shape)-1 && numel(shape[axis+1:]) > 1 {
								sameBits(t, name+" vs flex", be, got, fl, want)
							}
							ref, scale := refReduce(op, r32, shape, axis)
							gv := values(t, be, got)
							for i, w := range ref {
								tol := 0.0
								switch op {
								case backend.ReduceSum:
									tol = 0x1p-22*scale[i] + 0x1p-23*math.Abs(w)
								case backend.ReduceProd:
									tol = 0x1p-22 * math.Abs(w)
								}
								g := gv[i]
								if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && !(math.Abs(g-w) <= tol || g == w)) {
									t.Fatalf("%s: [%d] = %v, float64 reference %v (tol %g)", name, i, g, w, tol)
								}
							}
						}
					}
				}
			}
		}
	}
}
