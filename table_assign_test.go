package ember

import (
	"math"
	"testing"
)

// resolve is Slice's range resolution on the host: Python bounds clamped
// to [0, n], step >= 1 (0 means 1).
func resolve(r Range, n int) (start, step, count int) {
	step = max(r.Step, 1)
	c := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	start, end := c(r.Start), c(r.End)
	if end <= start {
		return start, step, 0
	}
	return start, step, (end - start + step - 1) / step
}

// TestTableSliceAssign checks SliceAssign on every device, dtype and
// layout, with steps, negative bounds, clamped bounds, fewer ranges than
// axes and a broadcast value, against host index arithmetic; an empty
// region returns x.
func TestTableSliceAssign(t *testing.T) {
	cases := []struct {
		shape  []int
		ranges []Range
		vshape func(region []int) []int
	}{
		{[]int{5}, []Range{R(1, 4)}, nil},
		{[]int{7}, []Range{{Start: 0, End: 7, Step: 3}}, nil},
		{[]int{3, 4}, []Range{R(-2, 100), {Start: 1, End: 4, Step: 2}}, nil},
		{[]int{3, 4}, []Range{R(0, 2)}, func(r []int) []int { return []int{1, r[1]} }},
		{[]int{2, 3, 4}, []Range{All(), R(1, 3), {Start: -4, End: 4, Step: 3}}, func(r []int) []int { return []int{r[2]} }},
		{[]int{2, 3}, []Range{R(1, 1)}, nil},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(89)
		for _, dt := range []DType{F32, F64, F16, I64, I32, Bool} {
			for ci, c := range cases {
				gen := nonZero(rng, 0.25, 3)
				if dt.IsInt() {
					gen = ints(rng, -9, 9)
				} else if dt == Bool {
					gen = ints(rng, 0, 1)
				}
				x := randRef(c.shape, dt, gen)
				starts, steps, region := make([]int, len(c.shape)), make([]int, len(c.shape)), make([]int, len(c.shape))
				for a, n := range c.shape {
					r := All()
					if a < len(c.ranges) {
						r = c.ranges[a]
					}
					starts[a], steps[a], region[a] = resolve(r, n)
				}
				vshape := region
				if c.vshape != nil {
					vshape = c.vshape(region)
				}
				v := randRef(vshape, dt, gen)
				want := build(c.shape, func(idx []int) float64 {
					vi := make([]int, len(idx))
					for a, i := range idx {
						k := (i - starts[a]) / steps[a]
						if i < starts[a] || (i-starts[a])%steps[a] != 0 || k >= region[a] {
							return x.at(idx...)
						}
						vi[a] = k
					}
					return v.bcastAt(vi)
				})
				for _, l := range layoutsFor(len(c.shape)) {
					got := l.view(dev, x, dt).SliceAssign(mk(dev, v, dt), c.ranges...)
					checkEq(t, "slice_assign case "+itoa(ci)+" "+dt.String()+" "+l.name, got, want, dt)
				}
			}
		}
		x := mk(dev, ref{[]int{2, 2}, []float64{1, 2, 3, 4}}, F32)
		expectPanic(t, "slice_assign value of the wrong shape", func() { x.SliceAssign(Zeros([]int{3}, dev), R(0, 1)) }, "slice_assign", "broadcast")
		checkEq(t, "slice_assign casts the value", x.SliceAssign(FromInts([]int{7}, []int{1}, dev), R(1, 2), R(0, 1)),
			ref{[]int{2, 2}, []float64{1, 2, 7, 4}}, F32)
	})
}

// TestTableIndexAddArgwhereUnfold checks IndexAdd (repeated indices
// accumulate, every axis), Argwhere/Nonzero (row-major order, NaN counts
// as non-zero, rank 0) and Unfold (every axis, overlapping and skipping
// windows) on every device against host loops.
func TestTableIndexAddArgwhereUnfold(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(97)
		for _, dt := range []DType{F32, F64, I64} {
			gen := nonZero(rng, 0.25, 3)
			if dt.IsInt() {
				gen = ints(rng, -9, 9)
			}
			x := randRef([]int{3, 4}, dt, gen)
			for a := -2; a < 2; a++ {
				pa := (a + 2) % 2
				index := []int{2, 0, 2, 1, 2}
				if pa == 1 {
					index = []int{3, 3, 0}
				}
				sshape := []int{3, 4}
				sshape[pa] = len(index)
				src := randRef(sshape, dt, gen)
				want := ref{[]int{3, 4}, append([]float64{}, x.v...)}
				idx := make([]int, 2)
				for i := range src.v {
					unravelInto(i, sshape, idx)
					j := append([]int{}, idx...)
					j[pa] = index[idx[pa]]
					want.v[ravel(j, want.shape)] += src.v[i]
				}
				for _, l := range layoutsFor(2) {
					got := l.view(dev, x, dt).IndexAdd(a, FromInts(index, []int{len(index)}, dev), mk(dev, src, dt))
					check(t, "index_add "+dt.String()+" "+l.name+" axis "+itoa(a), got, want, dt, 1, nil)
				}
			}
		}
		nan := math.NaN()
		w := ref{[]int{2, 3}, []float64{0, 1.5, 0, nan, 0, -2}}
		for _, l := range layoutsFor(2) {
			checkEq(t, "argwhere "+l.name, l.view(dev, w, F32).Argwhere(), ref{[]int{3, 2}, []float64{0, 1, 1, 0, 1, 2}}, DType(dev.Settings().IntDType))
		}
		checkEq(t, "nonzero of Bool", mk(dev, ref{[]int{4}, []float64{1, 0, 0, 1}}, Bool).Nonzero(), ref{[]int{2, 1}, []float64{0, 3}}, DType(dev.Settings().IntDType))
		checkEq(t, "argwhere of zeros", Zeros([]int{2, 2}, dev).Argwhere(), ref{[]int{0, 2}, nil}, DType(dev.Settings().IntDType))
		checkEq(t, "argwhere of a non-zero scalar", mk(dev, ref{nil, []float64{3}}, F32).Argwhere(), ref{[]int{1, 0}, nil}, DType(dev.Settings().IntDType))

		u := randRef([]int{2, 7, 3}, F32, nonZero(rng, 0.5, 2))
		for _, l := range layoutsFor(3) {
			ut := l.view(dev, u, F32)
			for a := -3; a < 3; a++ {
				pa := (a + 3) % 3
				for _, sz := range [][2]int{{2, 1}, {3, 2}, {1, 4}, {2, 3}} {
					size, step := sz[0], sz[1]
					n := u.shape[pa]
					if size > n {
						continue
					}
					count := (n-size)/step + 1
					oshape := append([]int{}, u.shape...)
					oshape[pa] = count
					oshape = append(oshape, size)
					want := build(oshape, func(idx []int) float64 {
						j := append([]int{}, idx[:3]...)
						j[pa] = idx[pa]*step + idx[3]
						return u.at(j...)
					})
					checkEq(t, "unfold "+l.name+" axis "+itoa(a)+" size "+itoa(size)+" step "+itoa(step), ut.Unfold(a, size, step), want, F32)
				}
			}
		}
		expectPanic(t, "unfold size too large", func() { Zeros([]int{3}, dev).Unfold(0, 4, 1) }, "unfold", "size 4")
		expectPanic(t, "index_add source shape", func() {
			Zeros([]int{3}, dev).IndexAdd(0, FromInts([]int{0}, []int{1}, dev), Zeros([]int{2}, dev))
		}, "index_add", "source must have shape")
	})
}

// TestGradAssign checks the gradients of SliceAssign (both operands,
// stepped and broadcast regions), IndexAdd (x and source) and Unfold
// (overlapping windows) against central differences.
func TestGradAssign(t *testing.T) {
	rng := newRNG(101)
	x := randRef([]int{4, 5}, F64, nonZero(rng, 0.2, 2))
	v := randRef([]int{2, 2}, F64, nonZero(rng, 0.2, 2))
	row := randRef([]int{2}, F64, nonZero(rng, 0.2, 2))
	src := randRef([]int{3, 5}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{
		{name: "slice_assign", ins: []ref{x, v}, f: func(xs []*Tensor) *Tensor {
			return xs[0].SliceAssign(xs[1], Range{Start: 0, End: 4, Step: 2}, R(1, 3))
		}},
		{name: "slice_assign broadcast", ins: []ref{x, row}, f: func(xs []*Tensor) *Tensor {
			return xs[0].SliceAssign(xs[1], R(1, 3), Range{Start: 0, End: 5, Step: 3})
		}},
		{name: "index_add", ins: []ref{x, src}, f: func(xs []*Tensor) *Tensor {
			return xs[0].IndexAdd(0, FromInts([]int{3, 0, 3}, []int{3}, xs[0].Device()), xs[1])
		}},
		{name: "unfold", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.Unfold(1, 3, 1) })},
	})
}

// TestTableMaskedScatter checks MaskedScatter (broadcast masks, every
// layout, source larger than needed, no true position) on every device
// against a host loop, its error for a short source, and its gradients.
func TestTableMaskedScatter(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(223)
		for _, dt := range []DType{F32, F64, I64} {
			x := randRef([]int{3, 4}, dt, ints(rng, -9, 9))
			for _, mshape := range [][]int{{3, 4}, {4}, {3, 1}} {
				m := randRef(mshape, Bool, ints(rng, 0, 1))
				src := randRef([]int{2, 7}, dt, ints(rng, 10, 20))
				want := ref{[]int{3, 4}, append([]float64{}, x.v...)}
				k := 0
				idx := make([]int, 2)
				for i := range want.v {
					unravelInto(i, want.shape, idx)
					if m.bcastAt(idx) != 0 {
						want.v[i] = src.v[k]
						k++
					}
				}
				for _, l := range layoutsFor(2) {
					got := l.view(dev, x, dt).MaskedScatter(mk(dev, m, Bool), mk(dev, src, dt))
					checkEq(t, "masked_scatter "+dt.String()+" mask "+shapeName(mshape)+" "+l.name, got, want, dt)
				}
			}
		}
		none := mk(dev, ref{[]int{2}, []float64{0, 0}}, Bool)
		x := mk(dev, ref{[]int{2}, []float64{1, 2}}, F32)
		checkEq(t, "masked_scatter without true positions", x.MaskedScatter(none, mk(dev, ref{[]int{0}, nil}, F32)), ref{[]int{2}, []float64{1, 2}}, F32)
		all := mk(dev, ref{[]int{2}, []float64{1, 1}}, Bool)
		expectPanic(t, "masked_scatter short source", func() { x.MaskedScatter(all, mk(dev, ref{[]int{1}, []float64{5}}, F32)) }, "masked_scatter", "only 1")
	})
	rng := newRNG(227)
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	s := randRef([]int{9}, F64, nonZero(rng, 0.2, 2))
	mask := []bool{true, false, true, true, false, false, true, false, true, false, true, true}
	runGradCases(t, []gradCase{{name: "masked_scatter", ins: []ref{x, s}, f: func(xs []*Tensor) *Tensor {
		return xs[0].MaskedScatter(FromBools(mask, []int{3, 4}, xs[0].Device()), xs[1])
	}}})
}
