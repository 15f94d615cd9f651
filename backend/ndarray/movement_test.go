package ndarray

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// moveDTypes are the dtypes the movement tests run in: one per storage
// class, plus a half type.
var moveDTypes = []backend.DType{backend.F32, backend.BF16, backend.I16, backend.U8, backend.Bool}

// randOf returns n random values of dt (small integers, so exact in every
// dtype; 0/1 for Bool) and the tensor holding them.
func randOf(rng *rand.Rand, dt backend.DType, shape []int) ([]int64, backend.Tensor) {
	hi := int64(100)
	if dt == backend.Bool {
		hi = 1
	}
	v := randInts(rng, numel(shape), 1, hi, true)
	if dt == backend.Bool {
		v = randInts(rng, numel(shape), 0, 1, false)
	}
	return v, mkI(dt, shape, v)
}

// checkMap checks that got (of shape) holds, at every multi-index idx,
// x[src(idx)] (or fill where src returns -1).
func checkMap(t *testing.T, what string, got backend.Tensor, shape []int, x []int64, fill int64, src func(idx []int) int) {
	t.Helper()
	if !slices.Equal(got.Shape(), shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	g := ints(t, got)
	for i := range numel(shape) {
		idx := unflat(shape, i)
		want := fill
		if p := src(idx); p >= 0 {
			want = x[p]
		}
		if g[i] != want {
			t.Errorf("%s: element %v = %d, want %d", what, idx, g[i], want)
			return
		}
	}
}

func TestViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	xs := []int{2, 3, 4}
	for _, dt := range moveDTypes {
		x, xt := randOf(rng, dt, xs)
		perm := []int{2, 0, 1}
		pt := run(t, ir.Op{Kind: ir.KindPermute, Ints: perm, In: [3]ir.Tensor{xt}})
		checkMap(t, dt.String()+" permute", pt, []int{4, 2, 3}, x, 0, func(i []int) int { return flat(xs, []int{i[1], i[2], i[0]}) })

		et := run(t, ir.Op{Kind: ir.KindExpand, Shape: []int{5, 2, 3, 4}, In: [3]ir.Tensor{mkI(dt, []int{3, 1}, x[:3])}})
		checkMap(t, dt.String()+" expand", et, []int{5, 2, 3, 4}, x, 0, func(i []int) int { return i[2] })

		rs := []ir.Range{{Start: 1, End: 2, Step: 1}, {Start: 0, End: 3, Step: 2}, {Start: 1, End: 4, Step: 2}}
		st := run(t, ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: rs}, In: [3]ir.Tensor{xt}})
		checkMap(t, dt.String()+" slice", st, []int{1, 2, 2}, x, 0, func(i []int) int { return flat(xs, []int{1 + i[0], 2 * i[1], 1 + 2*i[2]}) })

		ft := run(t, ir.Op{Kind: ir.KindFlip, Ints: []int{0, 2}, In: [3]ir.Tensor{xt}})
		checkMap(t, dt.String()+" flip", ft, xs, x, 0, func(i []int) int { return flat(xs, []int{1 - i[0], i[1], 3 - i[2]}) })

		// Views of views, then a reshape of the strided result and an op
		// that reads it (a cast to I64).
		v := run(t, ir.Op{Kind: ir.KindFlip, Ints: []int{1}, In: [3]ir.Tensor{pt}}) // [4, 2, 3], axis 1 (x's 0) reversed
		v = run(t, ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 1, End: 4, Step: 2}, {Start: 0, End: 2, Step: 1}, {Start: 1, End: 3, Step: 1}}}, In: [3]ir.Tensor{v}})
		v = run(t, ir.Op{Kind: ir.KindReshape, Shape: []int{8}, In: [3]ir.Tensor{v}})
		v = run(t, ir.Op{Kind: ir.KindCast, DType: backend.I64, In: [3]ir.Tensor{v}})
		checkMap(t, dt.String()+" flip/slice/reshape of a permute", v, []int{8}, x, 0, func(i []int) int {
			a, b, c := 1+2*(i[0]/4), i[0]/2%2, 1+i[0]%2 // index into the flipped permute [4, 2, 3]
			return flat(xs, []int{1 - b, 1 + (c - 1), a})
		})

		r := run(t, ir.Op{Kind: ir.KindReshape, Shape: []int{6, 4}, In: [3]ir.Tensor{xt}})
		checkMap(t, dt.String()+" reshape", r, []int{6, 4}, x, 0, func(i []int) int { return i[0]*4 + i[1] })
	}
}

func TestPadCat(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	xs := []int{2, 3}
	for _, dt := range moveDTypes {
		x, xt := randOf(rng, dt, xs)
		fill := int64(1)
		pt := run(t, ir.Op{Kind: ir.KindPad, Ints: []int{1, 0, 2, 3}, Scalars: [2]float64{1}, In: [3]ir.Tensor{xt}})
		checkMap(t, dt.String()+" pad", pt, []int{3, 8}, x, fill, func(i []int) int {
			if i[0] < 1 || i[1] < 2 || i[1] >= 5 {
				return -1
			}
			return flat(xs, []int{i[0] - 1, i[1] - 2})
		})
		y, yt := randOf(rng, dt, []int{2, 1})
		z, zt := randOf(rng, dt, []int{2, 2})
		ct := run(t, ir.Op{Kind: ir.KindCat, Axis: 1, Xs: []ir.Tensor{xt, yt, zt}})
		all := slices.Concat(x, y, z)
		checkMap(t, dt.String()+" cat", ct, []int{2, 6}, all, 0, func(i []int) int {
			switch {
			case i[1] < 3:
				return i[0]*3 + i[1]
			case i[1] < 4:
				return 6 + i[0]
			}
			return 8 + i[0]*2 + i[1] - 4
		})
	}
}

func TestGatherScatterIndexSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	xs := []int{3, 4}
	for _, dt := range moveDTypes {
		x, xt := randOf(rng, dt, xs)
		is := []int{2, 4}
		index := randInts(rng, numel(is), 0, 2, false) // along axis 0 (size 3), repeated indices
		it := mkI(backend.I64, is, index)
		g := run(t, ir.Op{Kind: ir.KindGather, Axis: 0, In: [3]ir.Tensor{xt, it}})
		checkMap(t, dt.String()+" gather", g, is, x, 0, func(i []int) int { return flat(xs, []int{int(index[flat(is, i)]), i[1]}) })

		sel := []int64{3, 0, 3}
		s := run(t, ir.Op{Kind: ir.KindIndexSelect, Axis: 1, In: [3]ir.Tensor{xt, mkI(backend.I64, []int{3}, sel)}})
		checkMap(t, dt.String()+" index_select", s, []int{3, 3}, x, 0, func(i []int) int { return flat(xs, []int{i[0], int(sel[i[1]])}) })

		src, srct := randOf(rng, dt, is)
		got := ints(t, run(t, ir.Op{Kind: ir.KindScatterAdd, Axis: 0, In: [3]ir.Tensor{xt, it, srct}}))
		want := slices.Clone(x)
		for i := range numel(is) {
			idx := unflat(is, i)
			p := flat(xs, []int{int(index[i]), idx[1]})
			if dt == backend.Bool {
				want[p] |= src[i]
			} else {
				want[p] += src[i]
			}
		}
		for i := range want {
			w := want[i]
			if dt == backend.U8 {
				w &= 0xff
			}
			if got[i] != w {
				t.Errorf("%v scatter_add element %d = %d, want %d", dt, i, got[i], w)
			}
		}
		// The input is unchanged (tensors are immutable).
		if !slices.Equal(ints(t, xt), x) {
			t.Errorf("%v scatter_add modified its input", dt)
		}
	}
}

// An index out of range panics with an error naming the op.
func TestIndexOutOfRange(t *testing.T) {
	x := mk(backend.F32, []int{2, 2}, []float64{1, 2, 3, 4})
	for _, op := range []ir.Op{
		{Kind: ir.KindGather, Axis: 1, In: [3]ir.Tensor{x, mkI(backend.I64, []int{2, 1}, []int64{0, 2})}},
		{Kind: ir.KindIndexSelect, Axis: 0, In: [3]ir.Tensor{x, mkI(backend.I64, []int{1}, []int64{-1})}},
		{Kind: ir.KindScatterAdd, Axis: 0, In: [3]ir.Tensor{x, mkI(backend.I64, []int{1, 1}, []int64{5}), mk(backend.F32, []int{1, 1}, []float64{1})}},
	} {
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		if err := catch(t, func() { tb.Exec(op) }); err == nil {
			t.Errorf("%s with an index out of range did not panic", op.Name())
		}
	}
}

// A huge expanded view costs nothing until an op reads it.
func TestExpandIsLazy(t *testing.T) {
	one := mk(backend.F32, []int{1, 1}, []float64{7})
	big := run(t, ir.Op{Kind: ir.KindExpand, Shape: []int{1 << 40, 1 << 20}, In: [3]ir.Tensor{one}})
	s := run(t, ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 5, End: 7, Step: 1}, {Start: 3, End: 4, Step: 1}}}, In: [3]ir.Tensor{big}})
	if got := vals(t, s); !slices.Equal(got, []float64{7, 7}) {
		t.Errorf("slice of an expanded view = %v, want [7 7]", got)
	}
}
