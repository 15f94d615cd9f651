package cuda

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// cumSumRounding returns the unit roundoffs of dt's storage and of the sum
// the cumsum kernel accumulates in (double, float for F16 and BF16).
func cumSumRounding(dt backend.DType) (store, acc float64) {
	switch dt {
	case backend.F16:
		return 0x1p-11, 0x1p-24
	case backend.BF16:
		return 0x1p-8, 0x1p-24
	case backend.F32, backend.Flex32:
		return 0x1p-24, 0x1p-53
	}
	return 0x1p-53, 0x1p-53
}

// TestKernelCumSum checks the prefix sum of every numeric dtype along
// every axis, on random non-zero inputs in every layout (contiguous,
// permuted, stepped, flipped: the non-contiguous ones are copied first),
// against a host reference: float64 sums for floats, within twice the
// error bound of a sequential sum ((n·u_acc + u_store)·Σ|x|), and int64
// sums wrapped to the dtype for integers, exactly. It also compares with
// backend/flex, whose kernel sums the same way.
func TestKernelCumSum(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(21, 22))
	shapes := [][]int{{1}, {7}, {1000}, {3, 5, 300}, {64, 33, 5}, {2, 0, 3}, {1, 1}}
	for _, dt := range backend.AllDTypes {
		if dt == backend.Bool {
			continue
		}
		if !b.Supports(ir.KindCumSum, dt) {
			t.Fatalf("cumsum on %v is not supported", dt)
		}
		for _, l := range layouts {
			for _, shape := range shapes {
				for axis := range shape {
					what := name("cumsum ", dt, " ", l.name, " ", shape, " axis ", axis)
					try(t, what, func() {
						x, fx := randomPair(b, rng, shape, dt, l)
						got := ir.Apply(b, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{x}})
						in, err := flexRef.ToData(fx)
						if err != nil {
							t.Fatalf("%s: reading the input: %v", what, err)
						}
						g, err := b.ToData(got)
						if err != nil {
							t.Fatalf("%s: reading the GPU result: %v", what, err)
						}
						if !slices.Equal(g.Shape, shape) || g.DType != dt {
							t.Fatalf("%s: got %v %v", what, g.DType, g.Shape)
						}
						checkCumSum(t, what, in, g, axis)
						sameNorm(t, b, got, ir.Apply(flexRef, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{fx}}), what)
					})
				}
			}
		}
	}
}

// checkCumSum compares got with the prefix sums of in along axis computed
// on the host (see TestKernelCumSum).
func checkCumSum(t *testing.T, what string, in, got *backend.TensorData, axis int) {
	t.Helper()
	dt := in.DType
	outer, n, inner := backend.NumElements(in.Shape[:axis]), in.Shape[axis], backend.NumElements(in.Shape[axis+1:])
	if dt.IsInt() {
		want := make([]int64, in.NumElements())
		for o := range outer {
			for i := range inner {
				var sum int64
				for j := range n {
					k := (o*n+j)*inner + i
					sum += int64(in.Value(k)) // the inputs are small integers
					want[k] = sum
				}
			}
		}
		wd := fromI64(in.Shape, want).Convert(dt) // int to int wraps
		if string(got.Bytes) != string(wd.Bytes) {
			for k := range want {
				if got.Value(k) != wd.Value(k) {
					t.Errorf("%s: element %d = %v, want %v", what, k, got.Value(k), wd.Value(k))
					return
				}
			}
		}
		return
	}
	us, ua := cumSumRounding(dt)
	for o := range outer {
		for i := range inner {
			var sum, abs float64
			for j := range n {
				k := (o*n+j)*inner + i
				v := in.Value(k)
				sum += v
				abs += math.Abs(v)
				tol := 2 * (float64(j+1)*ua + us) * abs
				if g := got.Value(k); !(math.Abs(g-sum) <= tol) {
					t.Errorf("%s: element %d = %v, want %v ± %.3g", what, k, g, sum, tol)
					return
				}
			}
		}
	}
}

// fromI64 wraps int64 values as I64 TensorData of shape.
func fromI64(shape []int, v []int64) *backend.TensorData {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &backend.TensorData{Shape: append([]int{}, shape...), DType: backend.I64, Bytes: raw}
}
