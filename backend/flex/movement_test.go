package flex

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// pick builds the ref of shape whose element at idx is src at at(idx).
func pick(src ref, shape []int, at func(idx []int) []int) ref {
	out := ref{shape: shape, v: make([]float64, size(shape))}
	for i := range out.v {
		out.v[i] = src.v[flat(src.shape, at(unflat(shape, i)))]
	}
	return out
}

func TestViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, dt := range []backend.DType{backend.F32, backend.BF16, backend.I8, backend.Bool} {
		r := randRef(rng, []int{2, 3, 4}, dt)
		in := read(t, mk(r, dt))
		for _, l := range layouts {
			x := l.make(r, dt)
			name := dt.String() + " " + l.name
			check(t, "reshape "+name, ir.Reshape(tb, x, []int{4, 6}), ref{[]int{4, 6}, in.v}, dt)
			check(t, "reshape rank0 "+name, ir.Reshape(tb, ir.Slice(tb, x, []backend.Range{{Start: 0, End: 1, Step: 1}, {Start: 1, End: 2, Step: 1}, {Start: 2, End: 3, Step: 1}}), nil), ref{[]int{}, []float64{in.v[flat(r.shape, []int{0, 1, 2})]}}, dt)
			check(t, "permute "+name, ir.Permute(tb, x, []int{1, 2, 0}), pick(in, []int{3, 4, 2}, func(i []int) []int { return []int{i[2], i[0], i[1]} }), dt)
			s := ir.Slice(tb, x, []backend.Range{{Start: 1, End: 2, Step: 1}, {Start: 0, End: 3, Step: 2}, {Start: 1, End: 4, Step: 2}})
			check(t, "slice "+name, s, pick(in, []int{1, 2, 2}, func(i []int) []int { return []int{1 + i[0], 2 * i[1], 1 + 2*i[2]} }), dt)
			check(t, "slice empty "+name, ir.Slice(tb, x, []backend.Range{{Start: 0, End: 2, Step: 1}, {Start: 2, End: 2, Step: 1}, {Start: 0, End: 4, Step: 3}}), ref{[]int{2, 0, 2}, nil}, dt)
			check(t, "flip "+name, ir.Flip(tb, x, []int{0, 2}), pick(in, []int{2, 3, 4}, func(i []int) []int { return []int{1 - i[0], i[1], 3 - i[2]} }), dt)
			e := ir.Expand(tb, ir.Slice(tb, x, []backend.Range{{Start: 0, End: 2, Step: 1}, {Start: 1, End: 2, Step: 1}, {Start: 0, End: 4, Step: 1}}), []int{5, 2, 3, 4})
			check(t, "expand "+name, e, pick(in, []int{5, 2, 3, 4}, func(i []int) []int { return []int{i[1], 1, i[3]} }), dt)
			// reshape of a non-contiguous view copies; of an expanded one too
			check(t, "reshape permuted "+name, ir.Reshape(tb, ir.Permute(tb, x, []int{2, 0, 1}), []int{8, 3}),
				ref{[]int{8, 3}, pick(in, []int{4, 2, 3}, func(i []int) []int { return []int{i[1], i[2], i[0]} }).v}, dt)
			check(t, "reshape expanded "+name, ir.Reshape(tb, e, []int{10, 12}), ref{[]int{10, 12}, read(t, e).v}, dt)
		}
	}
	// reshape of a contiguous tensor shares its storage
	x := mk(randRef(rng, []int{2, 6}, backend.F32), backend.F32)
	if y := ir.Reshape(tb, x, []int{3, 4}).(*Tensor); &floats[float32](y.data)[0] != &floats[float32](x.data)[0] {
		t.Error("reshape of a contiguous tensor copied")
	}
}

func TestPad(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, dt := range []backend.DType{backend.F64, backend.F16, backend.I32, backend.U8, backend.Bool} {
		r := randRef(rng, []int{2, 3}, dt)
		in := read(t, mk(r, dt))
		pads := [][2]int{{1, 0}, {2, 1}}
		want := ref{shape: []int{3, 6}, v: make([]float64, 18)}
		for i := range want.v {
			idx := unflat(want.shape, i)
			a, b := idx[0]-1, idx[1]-2
			if a >= 0 && a < 2 && b >= 0 && b < 3 {
				want.v[i] = in.v[a*3+b]
			} else {
				want.v[i] = refCast(3, backend.F64, dt)
			}
		}
		for _, l := range layouts {
			check(t, "pad "+dt.String()+" "+l.name, pad(tb, l.make(r, dt), pads, 3), want, dt)
		}
	}
}

func TestCat(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, dt := range []backend.DType{backend.F32, backend.BF16, backend.I64, backend.Bool} {
		for axis := 0; axis < 2; axis++ {
			shapes := [][]int{{2, 3}, {2, 3}, {2, 3}}
			shapes[1][axis], shapes[2][axis] = 1, 0
			var parts []backend.Tensor
			var refs []ref
			for i, s := range shapes {
				r := randRef(rng, s, dt)
				parts = append(parts, layouts[i%len(layouts)].make(r, dt))
				refs = append(refs, read(t, mk(r, dt)))
			}
			shape := []int{2, 3}
			shape[axis] = shapes[0][axis] + 1
			want := ref{shape: shape, v: make([]float64, size(shape))}
			for i := range want.v {
				idx := unflat(shape, i)
				p := 0
				for idx[axis] >= refs[p].shape[axis] {
					idx[axis] -= refs[p].shape[axis]
					p++
				}
				want.v[i] = refs[p].v[flat(refs[p].shape, idx)]
			}
			check(t, fmt.Sprintf("cat %v axis %d", dt, axis), ir.Cat(tb, parts, axis), want, dt)
		}
	}
}

// randIndex draws I64 indices in [0, n).
func randIndex(rng *rand.Rand, shape []int, n int) ref {
	r := ref{shape: shape, v: make([]float64, size(shape))}
	for i := range r.v {
		r.v[i] = float64(rng.IntN(n))
	}
	return r
}

func TestGatherScatterIndexSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.I32, backend.U8} {
		r := randRef(rng, []int{3, 4, 2}, dt)
		in := read(t, mk(r, dt))
		for axis := 0; axis < 3; axis++ {
			ishape := []int{2, 3, 2}
			ishape[axis] = 5
			idx := randIndex(rng, ishape, r.shape[axis])
			for _, l := range layouts {
				x := l.make(r, dt)
				ix := l.make(idx, backend.I64)
				name := fmt.Sprintf("%v axis %d %s", dt, axis, l.name)
				// gather: out[p] = x[p with axis -> index[p]]
				check(t, "gather "+name, ir.Gather(tb, x, axis, ix), pick(in, ishape, func(p []int) []int {
					q := append([]int{}, p...)
					q[axis] = int(idx.v[flat(ishape, p)])
					return q
				}), dt)
				// scatter-add of src at the same positions
				src := randRef(rng, ishape, dt)
				sv := read(t, mk(src, dt))
				want := ref{shape: in.shape, v: append([]float64{}, in.v...)}
				for i := range sv.v {
					p := unflat(ishape, i)
					p[axis] = int(idx.v[i])
					want.v[flat(in.shape, p)] += sv.v[i]
				}
				if dt.IsInt() {
					want = mapRef(want, func(v float64) float64 { return wrapTo(v, dt) })
				}
				check(t, "scatter_add "+name, ir.ScatterAdd(tb, x, axis, ix, l.make(src, dt)), want, dt)
				// index-select
				sel := randIndex(rng, []int{4}, r.shape[axis])
				oshape := append([]int{}, r.shape...)
				oshape[axis] = 4
				check(t, "index_select "+name, ir.IndexSelect(tb, x, axis, l.make(sel, backend.I64)), pick(in, oshape, func(p []int) []int {
					q := append([]int{}, p...)
					q[axis] = int(sel.v[p[axis]])
					return q
				}), dt)
			}
		}
	}
}

func TestIndexOutOfRange(t *testing.T) {
	x := mk(ref{[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}}, backend.F32)
	bad := mk(ref{[]int{1, 1}, []float64{7}}, backend.I64)
	neg := mk(ref{[]int{1}, []float64{-1}}, backend.I64)
	cases := map[string]func(){
		"gather":       func() { ir.Gather(tb, x, 1, bad) },
		"scatter_add":  func() { ir.ScatterAdd(tb, x, 1, bad, mk(ref{[]int{1, 1}, []float64{1}}, backend.F32)) },
		"index_select": func() { ir.IndexSelect(tb, x, 0, neg) },
	}
	for op, f := range cases {
		err := catch(f)
		if err == nil {
			t.Errorf("%s: no panic for an out-of-range index", op)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, op) || !(strings.Contains(msg, "7") || strings.Contains(msg, "-1")) || !strings.Contains(msg, "size") {
			t.Errorf("%s: panic %q does not name the op, the index and the size", op, msg)
		}
	}
}
