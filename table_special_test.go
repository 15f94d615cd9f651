package ember

import (
	"math"
	"testing"
)

// TestTableHypotErfinv checks Hypot (broadcast, every float dtype and
// layout, no overflow where the squares would, C's rules at Inf and NaN)
// and Erfinv (against math.Erfinv, and erf(erfinv(x)) = x; ±1, outside
// [−1, 1], NaN) on every device.
func TestTableHypotErfinv(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(113)
		for _, dt := range floatDTypes {
			loosen := 1.0
			if dt == F16 || dt == BF16 {
				loosen = 4
			}
			a := randRef([]int{3, 4}, dt, nonZero(rng, 0.1, 5))
			b := randRef([]int{4}, dt, nonZero(rng, 0.1, 5))
			u := randRef([]int{3, 4}, dt, uniform(rng, -0.999, 0.999))
			for _, l := range layoutsFor(2) {
				at := l.view(dev, a, dt)
				check(t, "hypot "+dt.String()+" "+l.name, at.Hypot(mk(dev, b, dt)), bcast2(a, b, math.Hypot), dt, loosen, nil)
				if dt == F64 || dt == F32 {
					check(t, "erfinv "+dt.String()+" "+l.name, l.view(dev, u, dt).Erfinv(), mapRef(u, math.Erfinv), dt, 4, nil)
				}
			}
		}
		big := ref{[]int{2}, []float64{3e30, 1e200}}
		check(t, "hypot without overflow f32", mk(dev, ref{[]int{1}, big.v[:1]}, F32).Hypot(mk(dev, ref{[]int{1}, []float64{4e30}}, F32)), ref{[]int{1}, []float64{5e30}}, F32, 1, nil)
		check(t, "hypot without overflow f64", mk(dev, ref{[]int{1}, big.v[1:]}, F64).Hypot(mk(dev, ref{[]int{1}, big.v[1:]}, F64)), ref{[]int{1}, []float64{math.Sqrt2 * 1e200}}, F64, 1, nil)
		nan, inf := math.NaN(), math.Inf(1)
		ex := ref{[]int{5}, []float64{0, inf, nan, -inf, 3}}
		ey := ref{[]int{5}, []float64{0, nan, 2, 1, nan}}
		checkEq(t, "hypot edges", mk(dev, ex, F64).Hypot(mk(dev, ey, F64)), ref{[]int{5}, []float64{0, inf, nan, inf, nan}}, F64)
		ee := ref{[]int{6}, []float64{1, -1, 1.5, -2, nan, 0}}
		checkEq(t, "erfinv edges", mk(dev, ee, F64).Erfinv(), ref{[]int{6}, []float64{inf, -inf, nan, nan, nan, 0}}, F64)
		w := randRef([]int{50}, F64, uniform(rng, -0.999999, 0.999999))
		check(t, "erf(erfinv(x)) = x", mk(dev, w, F64).Erfinv().Erf(), w, F64, 1, nil)
	})
	rng := newRNG(127)
	x := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	y := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	u := randRef([]int{3, 4}, F64, uniform(rng, -0.9, 0.9))
	runGradCases(t, []gradCase{
		{name: "hypot", ins: []ref{x, y}, f: func(xs []*Tensor) *Tensor { return xs[0].Hypot(xs[1]) }},
		{name: "erfinv", ins: []ref{u}, f: on1((*Tensor).Erfinv), tol: 1e-5},
	})
}

// TestTableArangeFloat checks ArangeFloat's count (⌈(end − start)/step⌉)
// and values against start + i·step in float64, and its errors.
func TestTableArangeFloat(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		for _, c := range [][3]float64{{0, 1, 0.1}, {-2.5, 3, 0.75}, {5, -1, -1.5}, {1, 1, 0.5}, {0, 0.3, 0.1}} {
			n := int(math.Ceil((c[1] - c[0]) / c[2]))
			want := make([]float64, n)
			for i := range want {
				want[i] = c[0] + float64(i)*c[2]
			}
			check(t, "arange float "+ftoa(c[0])+" "+ftoa(c[1])+" "+ftoa(c[2]), ArangeFloat(c[0], c[1], c[2], dev), ref{[]int{n}, want}, DType(dev.Settings().FloatDType), 1, nil)
		}
		expectPanic(t, "arange step 0", func() { ArangeFloat(0, 1, 0, dev) }, "arange", "non-zero")
		expectPanic(t, "arange wrong sign", func() { ArangeFloat(0, 1, -0.5, dev) }, "arange", "sign")
		expectPanic(t, "arange NaN", func() { ArangeFloat(math.NaN(), 1, 0.5, dev) }, "arange", "finite")
	})
}

// einsumRef evaluates a two-operand (or one-operand) einsum by brute
// force over every index assignment in float64.
func einsumRef(in []string, out string, rs []ref) ref {
	size := map[byte]int{}
	var all []byte
	for i, s := range in {
		for k := range len(s) {
			if _, ok := size[s[k]]; !ok {
				all = append(all, s[k])
			}
			size[s[k]] = rs[i].shape[k]
		}
	}
	oshape := make([]int, len(out))
	for i := range len(out) {
		oshape[i] = size[out[i]]
	}
	res := ref{oshape, make([]float64, numel(oshape))}
	val := map[byte]int{}
	var rec func(d int)
	rec = func(d int) {
		if d == len(all) {
			p := 1.0
			for i, s := range in {
				idx := make([]int, len(s))
				for k := range len(s) {
					idx[k] = val[s[k]]
				}
				p *= rs[i].at(idx...)
			}
			oi := make([]int, len(out))
			for k := range len(out) {
				oi[k] = val[out[k]]
			}
			res.v[ravel(oi, oshape)] += p
			return
		}
		for v := range size[all[d]] {
			val[all[d]] = v
			rec(d + 1)
		}
	}
	rec(0)
	return res
}

// TestTableEinsum checks Einsum on matrix products, batched products,
// outer and inner products, traces over one operand's private axis,
// transposes, implicit outputs and a 4-index contraction, on every device
// and layout, against brute-force sums; and its gradient.
func TestTableEinsum(t *testing.T) {
	cases := []struct {
		spec   string
		in     []string
		out    string
		shapes [][]int
	}{
		{"ij,jk->ik", []string{"ij", "jk"}, "ik", [][]int{{3, 4}, {4, 5}}},
		{"bij,bjk->bik", []string{"bij", "bjk"}, "bik", [][]int{{2, 3, 4}, {2, 4, 2}}},
		{"i,j->ij", []string{"i", "j"}, "ij", [][]int{{3}, {4}}},
		{"i,i->", []string{"i", "i"}, "", [][]int{{5}, {5}}},
		{"ij,jk", []string{"ij", "jk"}, "ik", [][]int{{2, 3}, {3, 2}}},
		{"ij->ji", []string{"ij"}, "ji", [][]int{{3, 4}}},
		{"ij->j", []string{"ij"}, "j", [][]int{{3, 4}}},
		{"bhqd,bhkd->bhqk", []string{"bhqd", "bhkd"}, "bhqk", [][]int{{2, 2, 3, 4}, {2, 2, 5, 4}}},
		{"ijk,jl->lik", []string{"ijk", "jl"}, "lik", [][]int{{2, 3, 2}, {3, 4}}},
		{"ij,kj->", []string{"ij", "kj"}, "", [][]int{{2, 3}, {4, 3}}},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(131)
		for _, c := range cases {
			rs := make([]ref, len(c.shapes))
			for i, s := range c.shapes {
				rs[i] = randRef(s, F64, nonZero(rng, 0.25, 2))
			}
			want := einsumRef(c.in, c.out, rs)
			for _, dt := range []DType{F32, F64} {
				for _, l := range layoutsFor(len(c.shapes[0])) {
					xs := []*Tensor{l.view(dev, rs[0], dt)}
					if len(rs) == 2 {
						xs = append(xs, mk(dev, rs[1], dt))
					}
					check(t, "einsum "+c.spec+" "+dt.String()+" "+l.name, Einsum(c.spec, xs...), want, dt, 4, nil)
				}
			}
		}
		a := Zeros([]int{2, 3}, dev)
		expectPanic(t, "einsum repeated index", func() { Einsum("ii->i", Zeros([]int{2, 2}, dev)) }, "einsum", "repeats")
		expectPanic(t, "einsum size mismatch", func() { Einsum("ij,jk->ik", a, a) }, "einsum", "sizes")
		expectPanic(t, "einsum rank mismatch", func() { Einsum("ijk->i", a) }, "einsum", "rank")
		expectPanic(t, "einsum unknown output", func() { Einsum("ij->z", a) }, "einsum", "no operand")
		expectPanic(t, "einsum ellipsis", func() { Einsum("...j->j", a) }, "einsum", "ellipsis")
	})
	rng := newRNG(137)
	x := randRef([]int{2, 3, 4}, F64, nonZero(rng, 0.2, 2))
	y := randRef([]int{2, 4, 3}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{{name: "einsum", ins: []ref{x, y}, f: func(xs []*Tensor) *Tensor { return Einsum("bij,bjk->bik", xs[0], xs[1]) }}})
}
