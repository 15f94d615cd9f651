//go:build libtorch && cgo

package libtorch

import (
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// unflat is the multi-index of flat position i in shape.
func unflat(shape []int, i int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

// flat is the row-major position of idx in shape.
func flat(shape, idx []int) int {
	p := 0
	for d := range shape {
		p = p*shape[d] + idx[d]
	}
	return p
}

// build returns the values of shape whose element at idx is f(idx).
func build(shape []int, f func(idx []int) float64) []float64 {
	out := make([]float64, ir.NumElements(shape))
	for i := range out {
		out[i] = f(unflat(shape, i))
	}
	return out
}

var movementDTypes = []backend.DType{backend.F32, backend.F16, backend.I64, backend.U8, backend.Bool}

func movementVals(rng interface{ IntN(int) int }, n int, dt backend.DType) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(rng.IntN(200) + 1)
		if dt == backend.Bool {
			v[i] = float64(rng.IntN(2))
		}
	}
	return v
}

// Permute, then Reshape of the permuted (non-contiguous) view, Expand
// and Flip against index arithmetic.
func TestPermuteReshapeExpandFlip(t *testing.T) {
	rng := newRNG(8)
	shape := []int{2, 3, 4}
	for _, dt := range movementDTypes {
		v := movementVals(rng, 24, dt)
		x := lt(v, shape, dt)
		perm := []int{2, 0, 1}
		p := exec(t, ir.Op{Kind: ir.KindPermute, Ints: perm, In: [3]ir.Tensor{x}})[0]
		ps := []int{4, 2, 3}
		want := build(ps, func(i []int) float64 { return v[flat(shape, []int{i[1], i[2], i[0]})] })
		expect(t, "permute "+dt.String(), values(t, tb, p), want, dt)
		r := exec(t, ir.Op{Kind: ir.KindReshape, Shape: []int{8, 3}, In: [3]ir.Tensor{p}})[0]
		expect(t, "reshape of a permuted view "+dt.String(), values(t, tb, r), want, dt)
		r0 := exec(t, ir.Op{Kind: ir.KindReshape, Shape: []int{}, In: [3]ir.Tensor{lt(v[:1], []int{1, 1}, dt)}})[0]
		expect(t, "reshape to rank 0", values(t, tb, r0), v[:1], dt)

		col := lt(v[:3], []int{3, 1}, dt)
		e := exec(t, ir.Op{Kind: ir.KindExpand, Shape: []int{2, 3, 5}, In: [3]ir.Tensor{col}})[0]
		expect(t, "expand "+dt.String(), values(t, tb, e), build([]int{2, 3, 5}, func(i []int) float64 { return v[i[1]] }), dt)

		f := exec(t, ir.Op{Kind: ir.KindFlip, Ints: []int{0, 2}, In: [3]ir.Tensor{x}})[0]
		expect(t, "flip "+dt.String(), values(t, tb, f), build(shape, func(i []int) float64 {
			return v[flat(shape, []int{1 - i[0], i[1], 3 - i[2]})]
		}), dt)
		f0 := exec(t, ir.Op{Kind: ir.KindFlip, In: [3]ir.Tensor{x}})[0]
		expect(t, "flip of no axes "+dt.String(), values(t, tb, f0), v, dt)
	}
}

// Slice with steps, on a flipped input too.
func TestSlice(t *testing.T) {
	rng := newRNG(9)
	shape := []int{5, 7}
	for _, dt := range movementDTypes {
		v := movementVals(rng, 35, dt)
		x := lt(v, shape, dt)
		rs := []ir.Range{{Start: 1, End: 5, Step: 2}, {Start: 0, End: 7, Step: 3}}
		s := exec(t, ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: rs}, In: [3]ir.Tensor{x}})[0]
		want := build([]int{2, 3}, func(i []int) float64 { return v[flat(shape, []int{1 + 2*i[0], 3 * i[1]})] })
		expect(t, "slice "+dt.String(), values(t, tb, s), want, dt)
		empty := exec(t, ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 2, End: 2, Step: 1}, {Start: 0, End: 7, Step: 1}}}, In: [3]ir.Tensor{x}})[0]
		if !slices.Equal(empty.Shape(), []int{0, 7}) || len(values(t, tb, empty)) != 0 {
			t.Errorf("empty slice: %v", empty.Shape())
		}
	}
}

// Pad per axis in axis order, with the value converted to the dtype.
func TestPad(t *testing.T) {
	rng := newRNG(10)
	shape := []int{2, 3}
	for _, dt := range append(append([]backend.DType{}, floatDTypes...), backend.I32, backend.U8, backend.Bool) {
		v := movementVals(rng, 6, dt)
		x := lt(v, shape, dt)
		value := 7.6
		if dt == backend.Bool {
			value = 1
		}
		op := ir.Op{Kind: ir.KindPad, Ints: []int{1, 0, 2, 1}, Scalars: [2]float64{value}, In: [3]ir.Tensor{x}}
		pv := quantize(value, dt)
		want := build([]int{3, 6}, func(i []int) float64 {
			r, c := i[0]-1, i[1]-2
			if r < 0 || c < 0 || c >= 3 {
				return pv
			}
			return v[flat(shape, []int{r, c})]
		})
		expect(t, "pad "+dt.String(), run1(t, op), want, dt)
	}
}

// Cat along each axis, with an empty part and a single input.
func TestCat(t *testing.T) {
	rng := newRNG(11)
	for _, dt := range movementDTypes {
		a := movementVals(rng, 6, dt)
		b := movementVals(rng, 4, dt)
		xa, xb := lt(a, []int{2, 3}, dt), lt(b, []int{2, 2}, dt)
		xe := lt(nil, []int{2, 0}, dt)
		got := run1(t, ir.Op{Kind: ir.KindCat, Axis: 1, Xs: []ir.Tensor{xa, xe, xb}})
		want := build([]int{2, 5}, func(i []int) float64 {
			if i[1] < 3 {
				return a[i[0]*3+i[1]]
			}
			return b[i[0]*2+i[1]-3]
		})
		expect(t, "cat axis 1 "+dt.String(), got, want, dt)
		got = run1(t, ir.Op{Kind: ir.KindCat, Axis: 0, Xs: []ir.Tensor{xa, xa}})
		expect(t, "cat axis 0 "+dt.String(), got, append(slices.Clone(a), a...), dt)
		got = run1(t, ir.Op{Kind: ir.KindCat, Axis: 0, Xs: []ir.Tensor{xb}})
		expect(t, "cat of one "+dt.String(), got, b, dt)
	}
}

// Gather, ScatterAdd and IndexSelect against index arithmetic; ScatterAdd
// accumulates repeated indices (F16 in float32, integers wrapping).
func TestIndexing(t *testing.T) {
	rng := newRNG(12)
	shape := []int{3, 4}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16, backend.I32, backend.I8, backend.U8} {
		v := randVals(rng, 12, 1, 9, dt)
		x := lt(v, shape, dt)
		idx := []float64{3, 0, 0, 2, 1, 1, 3, 3}
		ix := lt(idx, []int{2, 4}, backend.I64)
		g := run1(t, ir.Op{Kind: ir.KindGather, Axis: 1, In: [3]ir.Tensor{x, ix}})
		want := build([]int{2, 4}, func(i []int) float64 { return v[flat(shape, []int{i[0], int(idx[i[0]*4+i[1]])})] })
		expect(t, "gather "+dt.String(), g, want, dt)

		src := randVals(rng, 8, 1, 9, dt)
		s := run1(t, ir.Op{Kind: ir.KindScatterAdd, Axis: 1, In: [3]ir.Tensor{x, ix, lt(src, []int{2, 4}, dt)}})
		sw := slices.Clone(v)
		for i := range 2 {
			for j := range 4 {
				p := flat(shape, []int{i, int(idx[i*4+j])})
				if dt.IsInt() {
					sw[p] = float64(wrapInt(int64(sw[p])+int64(src[i*4+j]), dt))
				} else {
					sw[p] += src[i*4+j]
				}
			}
		}
		for i := range sw {
			sw[i] = quantize(sw[i], dt)
		}
		expect(t, "scatter_add "+dt.String(), s, sw, dt)

		sel := lt([]float64{2, 0, 2}, []int{3}, backend.I64)
		is := run1(t, ir.Op{Kind: ir.KindIndexSelect, Axis: 0, In: [3]ir.Tensor{x, sel}})
		expect(t, "index_select "+dt.String(), is, append(append(slices.Clone(v[8:12]), v[0:4]...), v[8:12]...), dt)
	}
	b := lt([]float64{0, 1, 0}, []int{3}, backend.Bool)
	s := run1(t, ir.Op{Kind: ir.KindScatterAdd, Axis: 0, In: [3]ir.Tensor{b, lt([]float64{0, 0}, []int{2}, backend.I64), lt([]float64{1, 0}, []int{2}, backend.Bool)}})
	expect(t, "scatter_add bool ors", s, []float64{1, 1, 0}, backend.Bool)
}

// SliceScatter puts src at the ranges' positions of zeros, exactly as its
// decomposition into base kinds on this backend.
func TestSliceScatter(t *testing.T) {
	rng := newRNG(13)
	for _, dt := range movementDTypes {
		src := movementVals(rng, 6, dt)
		rs := []ir.Range{{Start: 1, End: 5, Step: 2}, {Start: 0, End: 5, Step: 2}}
		op := ir.Op{Kind: ir.KindSliceScatter, Shape: []int{5, 5}, Attrs: &ir.Attrs{Ranges: rs}, In: [3]ir.Tensor{lt(src, []int{2, 3}, dt)}}
		got := run1(t, op)
		want := build([]int{5, 5}, func(i []int) float64 {
			if i[0]%2 == 1 && i[0] < 5 && i[1]%2 == 0 {
				return src[(i[0]/2)*3+i[1]/2]
			}
			return 0
		})
		expect(t, "slice_scatter "+dt.String(), got, want, dt)
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		dec := values(t, tb, ir.SpecOf(op.Kind).Decompose(op, decomposer{})[0])
		expect(t, "slice_scatter vs decomposition "+dt.String(), got, dec, dt)
	}
}

// decomposer runs decompositions on the libtorch backend's base kinds
// only (every fast path lowered), so a fast-path kernel can be compared
// with its decomposition on the same backend.
type decomposer struct{}

func (decomposer) Supports(k ir.Kind, dt backend.DType) bool { return false }

func (decomposer) Exec(op ir.Op) ir.Outputs { return tb.Exec(op) }
