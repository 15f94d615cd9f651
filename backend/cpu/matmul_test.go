package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refMatmul is the float64 triple loop over broadcast batches of
// row-major a [..., m, k] and b [..., k, n].
func refMatmul(a []float64, as []int, b []float64, bs []int) ([]float64, []int) {
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	batch := mustBroadcast(as[:ra-2], bs[:rb-2])
	nb := numel(batch)
	out := make([]float64, nb*m*n)
	ab := bstrides(as[:ra-2], layout.RowMajorStrides(as[:ra-2]), batch)
	bb := bstrides(bs[:rb-2], layout.RowMajorStrides(bs[:rb-2]), batch)
	for bi := range nb {
		ao, bo, rem := 0, 0, bi
		for d := len(batch) - 1; d >= 0; d-- {
			i := rem % batch[d]
			rem /= batch[d]
			ao += i * ab[d] * m * k
			bo += i * bb[d] * k * n
		}
		for i := range m {
			for j := range n {
				var s float64
				for p := range k {
					s += a[ao+i*k+p] * b[bo+p*n+j]
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	return out, append(append([]int{}, batch...), m, n)
}

func TestMatmulAgainstReference(t *testing.T) {
	be := newTestBackend()
	cases := []struct{ a, b []int }{
		{[]int{1, 1}, []int{1, 1}},
		{[]int{7, 5}, []int{5, 3}},
		{[]int{64, 784}, []int{784, 128}},
		{[]int{3, 2, 9, 17}, []int{17, 4}},   // stacked rows
		{[]int{2, 1, 6, 5}, []int{3, 5, 7}},  // broadcast batch
		{[]int{4, 33, 65}, []int{4, 65, 31}}, // batched
		{[]int{300, 70}, []int{70, 260}},     // parallel GEMM
		{[]int{5, 0}, []int{0, 4}},           // k = 0
	}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.Flex32} {
		for ci, c := range cases {
			av, bv := randVals(numel(c.a), uint64(ci)), randVals(numel(c.b), uint64(ci+100))
			// round the inputs to dt so that the reference sees the same values
			av = ir.FromSlice(av, c.a).Convert(dt).Convert(backend.F64).Float64s()
			bv = ir.FromSlice(bv, c.b).Convert(dt).Convert(backend.F64).Float64s()
			want, shape := refMatmul(av, c.a, bv, c.b)
			got := ir.Matmul(be, tensorOf(be, av, c.a, dt), tensorOf(be, bv, c.b, dt))
			if fmt.Sprint(got.Shape()) != fmt.Sprint(shape) || got.DType() != dt {
				t.Fatalf("%v %v: got %v %v", dt, c, got.Shape(), got.DType())
			}
			tol := 1e-12 * float64(c.a[len(c.a)-1]+1)
			switch dt {
			case backend.F32, backend.Flex32:
				tol = 1e-6 * math.Sqrt(float64(c.a[len(c.a)-1])+1) * 4
			case backend.F16:
				tol = 2e-3 * math.Sqrt(float64(c.a[len(c.a)-1])+1)
			}
			closeTo(t, fmt.Sprintf("%v %v", dt, c), values(t, be, got), want, tol)
		}
	}
}

// TestMatmulViews checks operands that are transposed views (passed to
// the GEMM as transposed operands), strided slices (copied first) and
// flipped views, against the product of their materialized values.
func TestMatmulViews(t *testing.T) {
	be := newTestBackend()
	a := tensorOf(be, randVals(2*40*30, 1), []int{2, 40, 30}, backend.F32)
	b := tensorOf(be, randVals(2*40*20, 2), []int{2, 40, 20}, backend.F32)
	views := map[string][2]backend.Tensor{
		"aT":       {ir.Permute(be, a, []int{0, 2, 1}), b}, // [2,30,40] x [2,40,20]
		"bT":       {ir.Permute(be, b, []int{0, 2, 1}), a}, // [2,20,40] x [2,40,30]
		"both":     {ir.Permute(be, a, []int{0, 2, 1}), ir.Permute(be, ir.Permute(be, b, []int{0, 2, 1}), []int{0, 2, 1})},
		"stepped":  {ir.Slice(be, a, []backend.Range{{Start: 0, End: 2, Step: 1}, {Start: 0, End: 40, Step: 2}, {Start: 0, End: 30, Step: 1}}), ir.Slice(be, b, []backend.Range{{Start: 0, End: 2, Step: 1}, {Start: 0, End: 30, Step: 1}, {Start: 0, End: 20, Step: 1}})},
		"flipped":  {ir.Flip(be, ir.Permute(be, a, []int{0, 2, 1}), []int{2}), b},
		"expanded": {ir.Expand(be, tensorOf(be, randVals(30*40, 3), []int{1, 30, 40}, backend.F32), []int{2, 30, 40}), b},
	}
	for name, v := range views {
		x, y := v[0], v[1]
		xv, yv := values(t, be, x), values(t, be, y)
		want, _ := refMatmul(xv, x.Shape(), yv, y.Shape())
		closeTo(t, name, values(t, be, ir.Matmul(be, x, y)), want, 2e-5)
	}
}

// TestMatmulIntFallsBackToFlex checks an integer product (flex's loop).
func TestMatmulIntFallsBackToFlex(t *testing.T) {
	be := newTestBackend()
	a := be.FromData(ir.FromSlice([]int64{1, 2, 3, 4}, []int{2, 2}))
	b := be.FromData(ir.FromSlice([]int64{5, 6, 7, 8}, []int{2, 2}))
	closeTo(t, "i64", values(t, be, ir.Matmul(be, a, b)), []float64{19, 22, 43, 50}, 0)
}

// mustBroadcast is ir.BroadcastShapes of shapes known to broadcast.
func mustBroadcast(a, b []int) []int {
	s, ok := ir.BroadcastShapes(a, b)
	if !ok {
		panic("shapes do not broadcast")
	}
	return s
}
