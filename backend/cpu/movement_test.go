package cpu

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend/internal/layout"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// TestSliceScatterAgainstReference writes src into zeros at stepped ranges
// and compares with a loop over the index space; src is also given as a
// permuted and as a flipped (negative-stride) view, and the dtypes cover
// the direct and the converting paths.
func TestSliceScatterAgainstReference(t *testing.T) {
	be := newTestBackend()
	cases := []struct {
		shape  []int
		ranges []backend.Range
	}{
		{[]int{7, 5}, []backend.Range{{Start: 1, End: 7, Step: 2}, {Start: 0, End: 5, Step: 3}}},
		{[]int{3, 4, 6}, []backend.Range{{Start: 0, End: 3, Step: 1}, {Start: 1, End: 3, Step: 1}, {Start: 0, End: 6, Step: 1}}},
		{[]int{64, 8, 24, 24}, []backend.Range{{Start: 0, End: 64, Step: 1}, {Start: 0, End: 8, Step: 1}, {Start: 1, End: 24, Step: 2}, {Start: 0, End: 23, Step: 2}}},
		{[]int{5}, []backend.Range{{Start: 4, End: 5, Step: 3}}},
		{[]int{1 << 17}, []backend.Range{{Start: 3, End: 1<<17 - 2, Step: 3}}},
	}
	for ci, c := range cases {
		ss := make([]int, len(c.shape))
		for i, r := range c.ranges {
			ss[i] = r.Len()
		}
		v := randVals(numel(ss), uint64(ci))
		want := make([]float64, numel(c.shape))
		rs := layout.RowMajorStrides(c.shape)
		for i, e := range v {
			off, rem := 0, i
			for d := len(ss) - 1; d >= 0; d-- {
				off += (c.ranges[d].Start + rem%ss[d]*c.ranges[d].Step) * rs[d]
				rem /= ss[d]
			}
			want[off] = e
		}
		for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16} {
			q := ir.FromSlice(want, c.shape).Convert(dt).Convert(backend.F64).Float64s()
			got := sliceScatter(be, tensorOf(be, v, ss, dt), c.shape, c.ranges)
			closeTo(t, fmt.Sprintf("case %d %v", ci, dt), values(t, be, got), q, 0)
			if len(ss) == 2 { // the same source as a transposed view
				tr := ir.Permute(be, tensorOf(be, transpose2(v, ss[0], ss[1]), []int{ss[1], ss[0]}, dt), []int{1, 0})
				closeTo(t, fmt.Sprintf("case %d %v transposed", ci, dt), values(t, be, sliceScatter(be, tr, c.shape, c.ranges)), q, 0)
				rev := make([]float64, len(v))
				for i, e := range v {
					rev[len(v)-1-i] = e
				}
				fl := ir.Flip(be, tensorOf(be, rev, ss, dt), []int{0, 1})
				closeTo(t, fmt.Sprintf("case %d %v flipped", ci, dt), values(t, be, sliceScatter(be, fl, c.shape, c.ranges)), q, 0)
			}
		}
	}
}

// transpose2 returns the r×c row-major matrix v transposed (c×r).
func transpose2(v []float64, r, c int) []float64 {
	out := make([]float64, len(v))
	for i := range r {
		for j := range c {
			out[j*r+i] = v[i*c+j]
		}
	}
	return out
}

// TestCatMatchesFlex concatenates strided views (the stepped windows of a
// max-pool, unsqueezed and joined along a new last axis; a permuted
// operand; differing sizes along the axis; flipped and expanded operands
// along axis 0) and compares with flex bit for bit.
func TestCatMatchesFlex(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.I32} {
		for _, n := range []int{3, 64} { // below and above the parallel threshold
			shape := []int{n, 4, 12, 12}
			v := randVals(numel(shape), uint64(n))
			run := func(b backend.Backend) [3]backend.Tensor {
				x := tensorOf(b, v, shape, dt)
				var views []backend.Tensor
				for i := range 2 {
					for j := range 2 {
						w := ir.Slice(b, x, []backend.Range{rg(0, n, 1), rg(0, 4, 1), rg(i, 11+i, 2), rg(j, 11+j, 2)})
						views = append(views, ir.Reshape(b, w, []int{n, 4, 6, 6, 1}))
					}
				}
				p := ir.Permute(b, x, []int{0, 1, 3, 2})
				part := ir.Slice(b, x, []backend.Range{rg(0, n, 1), rg(1, 3, 1), rg(0, 12, 1), rg(0, 12, 1)})
				flip := ir.Flip(b, x, []int{3, 1})
				wide := ir.Expand(b, ir.Slice(b, x, []backend.Range{rg(0, n, 1), rg(0, 4, 1), rg(0, 12, 1), rg(5, 6, 1)}), shape)
				return [3]backend.Tensor{ir.Cat(b, views, 4), ir.Cat(b, []backend.Tensor{x, p, part}, 1), ir.Cat(b, []backend.Tensor{p, flip, wide}, 0)}
			}
			g, w := run(be), run(fl)
			for i := range g {
				sameAsFlex(t, fmt.Sprintf("cat %d %v n=%d", i, dt, n), be, fl, g[i], w[i])
			}
		}
	}
}

func rg(start, end, step int) backend.Range { return backend.Range{Start: start, End: end, Step: step} }

// TestCastBoolMatchesFlex casts a comparison's mask to F32 and Flex32.
func TestCastBoolMatchesFlex(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	for _, n := range []int{7, 1 << 17} {
		v := randVals(n, uint64(n))
		for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64} {
			mk := func(b backend.Backend) backend.Tensor {
				m := ir.Binary(b, backend.OpGt, tensorOf(b, v, []int{n}, backend.F32), tensorOf(b, []float64{0}, nil, backend.F32))
				return ir.Cast(b, m, dt)
			}
			sameAsFlex(t, fmt.Sprint("cast ", dt, n), be, fl, mk(be), mk(fl))
		}
	}
}
