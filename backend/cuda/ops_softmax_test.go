package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestGPUSoftmax checks the softmax and log-softmax kernels against the
// kinds' decompositions run on the same device, for every float dtype,
// rows of a warp and of a block, on random data and on rows holding NaN,
// +Inf, only -Inf, or -Inf beside finite values: NaN and infinities at the
// same places, finite values within a rounding or two of the dtype (the
// sum is added in another order), and a non-last axis through the
// decomposition.
func TestGPUSoftmax(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(51, 52))
	tol := map[backend.DType]float64{backend.F32: 4e-7, backend.F64: 1e-15, backend.F16: 2e-3, backend.BF16: 1.6e-2}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16} {
		for _, shape := range [][]int{{1, 1}, {5, 10}, {9, 511}, {3, 512}, {4, 513}, {2, 4096}, {3, 5000}, {2, 3, 70}} {
			rows, r := backend.NumElements(shape[:len(shape)-1]), shape[len(shape)-1]
			v := make([]float64, rows*r)
			for i := range v {
				v[i] = 3 * rng.NormFloat64()
			}
			if rows >= 5 && r >= 4 {
				v[0*r+r/2] = math.NaN() // row 0: NaN
				v[1*r+1] = math.Inf(1)  // row 1: +Inf
				for j := range r {      // row 2: only -Inf
					v[2*r+j] = math.Inf(-1)
				}
				v[3*r+r/3] = math.Inf(-1) // row 3: -Inf beside finite values
			}
			k := 0
			x := b.FromData(fromF64(shape, dt, func() float64 { k++; return v[k-1] }))
			for _, kind := range []ir.Kind{ir.KindSoftmax, ir.KindLogSoftmax} {
				for _, axis := range []int{len(shape) - 1, 0} {
					op := ir.Op{Kind: kind, Axis: axis, In: [3]ir.Tensor{x}}
					what := name(kind, " ", dt, " ", shape, " axis ", axis)
					if err := op.Infer(); err != nil {
						t.Fatal(what, err)
					}
					got, err := b.ToData(ir.Run(b, op)[0])
					if err != nil {
						t.Fatal(what, err)
					}
					want, err := b.ToData(ir.SpecOf(kind).Decompose(op, b)[0])
					if err != nil {
						t.Fatal(what, err)
					}
					bad := 0
					for i := range got.NumElements() {
						g, w := got.Value(i), want.Value(i)
						ok := (math.IsNaN(g) && math.IsNaN(w)) || g == w ||
							(!math.IsInf(w, 0) && !math.IsNaN(g) && math.Abs(g-w) <= tol[dt]*math.Max(1, math.Abs(w)))
						if !ok {
							if bad++; bad <= 3 {
								t.Errorf("%s: element %d = %v, decomposition %v", what, i, g, w)
							}
						}
					}
				}
			}
		}
	}
}
