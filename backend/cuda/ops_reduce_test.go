package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

func TestKernelReduce(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(11, 12))
	// Rows of 300 take the block-per-row kernel, short rows the
	// warp-per-row kernel, inner axes the column kernel; size-0 axes give
	// the identities and empty outputs.
	shapes := [][]int{{3, 5, 300}, {4, 7}, {9}, {2, 0, 3}, {0, 4}, {1, 1}, {64, 33, 5}}
	for _, dt := range backend.AllDTypes {
		for op := backend.ReduceSum; op <= backend.ReduceArgMin; op++ {
			for li, l := range layouts[:2] {
				for _, shape := range shapes {
					for axis := range shape {
						keep := (axis+li)%2 == 0
						what := name("reduce ", op, " ", dt, " ", l.name, " ", shape, " axis ", axis, " keep ", keep)
						try(t, what, func() {
							d := nonZero(rng, l.base(shape), dt)
							if dt.IsInt() && op >= backend.ReduceMax {
								// a small range makes ties: the lowest index must win
								d = fromF64(l.base(shape), dt, func() float64 { return float64(rng.IntN(3) + 1) })
							}
							if op == backend.ReduceProd && dt.IsFloat() {
								d = fromF64(l.base(shape), dt, func() float64 { return 0.9 + 0.2*rng.Float64() })
							}
							x, fx := pair(b, d, l, shape)
							same(t, b, reduceOn(b, op, x, axis, keep), reduceOn(flexRef, op, fx, axis, keep), what)
						})
					}
				}
			}
		}
	}
}

// TestKernelReduceNaN checks that NaN propagates through Max and Min and
// that ArgMax/ArgMin give the first NaN's index, along inner and outer axes.
func TestKernelReduceNaN(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.F16, backend.BF16} {
		shape := []int{6, 400}
		nan := map[int]bool{5: true, 17: true, 399: true, 401: true, 4 * 400: true, 4*400 + 3: true}
		i := 0
		d := fromF64(shape, dt, func() float64 {
			i++
			if nan[i-1] {
				return math.NaN()
			}
			return rng.NormFloat64()
		})
		for op := backend.ReduceMax; op <= backend.ReduceArgMin; op++ {
			for axis := range 2 {
				x, fx := pair(b, d, layouts[0], shape)
				same(t, b, reduceOn(b, op, x, axis, false), reduceOn(flexRef, op, fx, axis, false), name("nan ", op, " ", dt, " axis ", axis))
			}
		}
	}
}
