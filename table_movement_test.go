package ember

import (
	"slices"
	"testing"
)

// movementDTypes are the dtypes movement ops run in (values are copied, so
// one per storage width is enough, plus Bool).
var movementDTypes = []DType{F32, F64, F16, BF16, I64, I32, Bool}

func movementGen(rng interface{ IntN(int) int }, dt DType) func() float64 {
	if dt == Bool {
		return func() float64 { return float64(rng.IntN(2)) }
	}
	return func() float64 { return float64(rng.IntN(19) - 9) }
}

func TestTableMovement(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(21)
		for _, dt := range movementDTypes {
			gen := movementGen(rng, dt)
			x := randRef([]int{2, 3, 4}, dt, gen)
			for _, l := range layoutsFor(3) {
				xt := l.view(dev, x, dt)
				name := dt.String() + " " + l.name
				checkEq(t, "reshape "+name, xt.Reshape(4, -1), ref{[]int{4, 6}, x.v}, dt)
				checkEq(t, "flatten(1,-1) "+name, xt.Flatten(1, -1), ref{[]int{2, 12}, x.v}, dt)
				checkEq(t, "flatten(0,1) "+name, xt.Flatten(0, 1), ref{[]int{6, 4}, x.v}, dt)
				checkEq(t, "unsqueeze(-1) "+name, xt.Unsqueeze(-1), ref{[]int{2, 3, 4, 1}, x.v}, dt)
				checkEq(t, "unsqueeze(1)+squeeze(-3) "+name, xt.Unsqueeze(1).Squeeze(-3), x, dt)
				checkEq(t, "permute(-1,0,1) "+name, xt.Permute(-1, 0, 1),
					build([]int{4, 2, 3}, func(i []int) float64 { return x.at(i[1], i[2], i[0]) }), dt)
				checkEq(t, "transpose "+name, xt.Transpose(),
					build([]int{2, 4, 3}, func(i []int) float64 { return x.at(i[0], i[2], i[1]) }), dt)
				checkEq(t, "flip(0,-1) "+name, xt.Flip(0, -1),
					build(x.shape, func(i []int) float64 { return x.at(1-i[0], i[1], 3-i[2]) }), dt)
				checkEq(t, "slice "+name, xt.Slice(R(-1, 5), Range{Start: 0, End: 3, Step: 2}, Range{Start: -3, End: 100, Step: 2}),
					build([]int{1, 2, 2}, func(i []int) float64 { return x.at(1, 2*i[1], 1+2*i[2]) }), dt)
				checkEq(t, "slice empty "+name, xt.Slice(All(), R(2, 1)), ref{[]int{2, 0, 4}, nil}, dt)
				checkEq(t, "narrow "+name, xt.Narrow(-1, -3, 2),
					build([]int{2, 3, 2}, func(i []int) float64 { return x.at(i[0], i[1], 1+i[2]) }), dt)
				pv := 1.0
				checkEq(t, "pad "+name, xt.Pad([]int{1, 2, 0, 1}, pv),
					build([]int{2, 4, 7}, func(i []int) float64 {
						if i[1] >= 3 || i[2] < 1 || i[2] >= 5 {
							return pv
						}
						return x.at(i[0], i[1], i[2]-1)
					}), dt)
				// A slice of a permuted view, then a reshape (forces a copy).
				checkEq(t, "permute+slice+reshape "+name, xt.Permute(2, 0, 1).Slice(Range{Start: 1, End: 4, Step: 2}).Reshape(-1),
					build([]int{12}, func(i []int) float64 { k := i[0]; return x.at(k/3%2, k%3, 1+2*(k/6)) }), dt)
			}
			// Expand, including a new leading axis and -1.
			s := randRef([]int{3, 1}, dt, gen)
			checkEq(t, "expand "+dt.String(), mk(dev, s, dt).Expand(2, -1, 4),
				build([]int{2, 3, 4}, func(i []int) float64 { return s.at(i[1], 0) }), dt)
			checkEq(t, "expand+permute "+dt.String(), mk(dev, s, dt).Expand(3, 5).Transpose().Flip(0),
				build([]int{5, 3}, func(i []int) float64 { return s.at(i[1], 0) }), dt)
			checkEq(t, "squeeze all "+dt.String(), mk(dev, s, dt).SqueezeAll(), ref{[]int{3}, s.v}, dt)
			// Cat along a middle axis with a size-0 part, and Stack.
			parts := []ref{randRef([]int{2, 1, 3}, dt, gen), randRef([]int{2, 4, 3}, dt, gen), randRef([]int{2, 0, 3}, dt, gen)}
			ts := []*Tensor{mk(dev, parts[0], dt), layoutsFor(3)[4].view(dev, parts[1], dt), mk(dev, parts[2], dt)}
			checkEq(t, "cat "+dt.String(), Cat(ts, -2), build([]int{2, 5, 3}, func(i []int) float64 {
				if i[1] == 0 {
					return parts[0].at(i[0], 0, i[2])
				}
				return parts[1].at(i[0], i[1]-1, i[2])
			}), dt)
			sp := []ref{randRef([]int{2, 3}, dt, gen), randRef([]int{2, 3}, dt, gen), randRef([]int{2, 3}, dt, gen)}
			sts := []*Tensor{mk(dev, sp[0], dt), layoutsFor(2)[1].view(dev, sp[1], dt), mk(dev, sp[2], dt)}
			checkEq(t, "stack -1 "+dt.String(), Stack(sts, -1), build([]int{2, 3, 3}, func(i []int) float64 { return sp[i[2]].at(i[0], i[1]) }), dt)
			checkEq(t, "stack 0 "+dt.String(), Stack(sts, 0), build([]int{3, 2, 3}, func(i []int) float64 { return sp[i[0]].at(i[1], i[2]) }), dt)
		}
		expectPanic(t, "cat ranks", func() { Cat([]*Tensor{Zeros([]int{2}, dev), Zeros([]int{2, 2}, dev)}, 0) }, "ranks differ")
		expectPanic(t, "reshape count", func() { Zeros([]int{2, 3}, dev).Reshape(4, 2) }, "[4 2]", "6")
		expectPanic(t, "squeeze non-1", func() { Zeros([]int{2, 3}, dev).Squeeze(1) }, "size 3")
	})
}

func TestTableIndexing(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(22)
		for _, dt := range movementDTypes {
			gen := movementGen(rng, dt)
			x := randRef([]int{3, 5}, dt, gen)
			for _, idt := range intDTypes {
				for _, l := range layoutsFor(2) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " index " + idt.String() + " " + l.name
					// Gather along the last axis, with fewer rows than x.
					gi := randRef([]int{2, 4}, idt, ints(rng, 0, 4))
					checkEq(t, "gather -1 "+name, xt.Gather(-1, l.view(dev, gi, idt)),
						build([]int{2, 4}, func(i []int) float64 { return x.at(i[0], int(gi.at(i[0], i[1]))) }), dt)
					g0 := randRef([]int{4, 5}, idt, ints(rng, 0, 2))
					checkEq(t, "gather 0 "+name, xt.Gather(0, mk(dev, g0, idt)),
						build([]int{4, 5}, func(i []int) float64 { return x.at(int(g0.at(i[0], i[1])), i[1]) }), dt)
					// IndexSelect with repeats, along both axes.
					si := randRef([]int{6}, idt, ints(rng, 0, 4))
					checkEq(t, "index_select -1 "+name, xt.IndexSelect(-1, mk(dev, si, idt)),
						build([]int{3, 6}, func(i []int) float64 { return x.at(i[0], int(si.v[i[1]])) }), dt)
					s0 := ref{[]int{4}, []float64{2, 0, 2, 1}}
					checkEq(t, "index_select 0 "+name, xt.IndexSelect(0, mk(dev, s0, idt)),
						build([]int{4, 5}, func(i []int) float64 { return x.at(int(s0.v[i[0]]), i[1]) }), dt)
					checkEq(t, "index_select empty "+name, xt.IndexSelect(0, mk(dev, ref{[]int{0}, nil}, idt)), ref{[]int{0, 5}, nil}, dt)
				}
			}
			if dt == Bool {
				continue
			}
			// ScatterAdd with duplicate indices, along axis 0 and -1.
			base := randRef([]int{4, 3}, dt, gen)
			src := randRef([]int{5, 3}, dt, gen)
			idx := randRef([]int{5, 3}, I64, ints(rng, 0, 3))
			want := ref{base.shape, slices.Clone(base.v)}
			for i := range 5 {
				for j := range 3 {
					want.v[int(idx.at(i, j))*3+j] += src.at(i, j)
				}
			}
			for _, l := range layoutsFor(2) {
				got := l.view(dev, base, dt).ScatterAdd(0, mk(dev, idx, I64), l.view(dev, src, dt))
				checkEq(t, "scatter_add 0 "+dt.String()+" "+l.name, got, want, dt)
			}
			idx1 := randRef([]int{2, 6}, I32, ints(rng, 0, 2))
			src1 := randRef([]int{2, 6}, dt, gen)
			want1 := ref{base.shape, slices.Clone(base.v)}
			for i := range 2 {
				for j := range 6 {
					want1.v[i*3+int(idx1.at(i, j))] += src1.at(i, j)
				}
			}
			checkEq(t, "scatter_add -1 "+dt.String(), mk(dev, base, dt).ScatterAdd(-1, mk(dev, idx1, I32), mk(dev, src1, dt)), want1, dt)
		}
		x := Zeros([]int{3, 4}, dev)
		expectIndexError(t, "gather out of range", dev, func() *Tensor { return x.Gather(1, FromInts([]int{0, 4, 1}, []int{3, 1}, dev)) }, "index 4", "size 4")
		expectIndexError(t, "index_select negative", dev, func() *Tensor { return x.IndexSelect(0, FromInts([]int{-1}, []int{1}, dev)) }, "index -1")
		expectIndexError(t, "scatter_add out of range", dev, func() *Tensor {
			return x.ScatterAdd(0, FromInts([]int{3}, []int{1, 1}, dev), Ones([]int{1, 1}, dev))
		}, "index 3", "size 3")
	})
}
