package cpu

import (
	"math"
	"sync"
)

// A fast float32 erf, bit-identical to float32(math.Erf(float64(x))), the
// value flex's Erf kernel gives.
//
// math.Erf is exact to about a float64 ulp but costly: branches on the
// argument's range and sign that mispredict on real data, and two calls
// of math.Exp for most |x| > 0.84. erfF32 instead evaluates a
// piecewise polynomial, without branches, in float64: on erfParts
// intervals of [0, erfSpan) a degree-erfDeg polynomial fitted at
// Chebyshev nodes (of erf(x)/x on the first interval, so that the error
// stays relative near 0), whose relative error is below 2^-48. Its result
// y rounds to the same float32 as math.Erf's whenever y − erfGuard·y and
// y + erfGuard·y round to one float32 (2^-40: 256 times the polynomial's
// error, which covers math.Erf's own error as well); the few elements
// (about 2^-15 of them) whose guard interval holds a midpoint between
// float32 values are computed with math.Erf.
// Odd symmetry is exact in math.Erf (its sign is applied last, and
// rounding to nearest is symmetric), so the kernel works on |x| and sets
// the sign bit of the result; NaN, ±Inf and |x| ≥ erfSpan (where
// math.Erf is exactly ±1) go to math.Erf directly.
const (
	erfSpan  = 6
	erfParts = 24
	erfDeg   = 10
	erfGuard = 0x1p-40
)

// erfRow is one interval's polynomial: c[0..erfDeg] in t ∈ [-1, 1] (the
// interval mapped onto it), then A and B: erf(x) ≈ p(t)·(A·x + B), A = 1
// and B = 0 on the first interval, A = 0 and B = 1 elsewhere.
type erfRow [erfDeg + 3]float64

// erfTable returns the polynomials, fitted once from math.Erf.
var erfTable = sync.OnceValue(func() *[erfParts]erfRow {
	var tab [erfParts]erfRow
	const w = float64(erfSpan) / erfParts
	for k := range tab {
		mid, half := (float64(k)+0.5)*w, w/2
		f := func(t float64) float64 { return math.Erf(mid + half*t) }
		tab[k][erfDeg+2] = 1
		if k == 0 {
			f = func(t float64) float64 { x := mid + half*t; return math.Erf(x) / x }
			tab[k][erfDeg+1], tab[k][erfDeg+2] = 1, 0
		}
		copy(tab[k][:erfDeg+1], chebyshevFit(f, erfDeg))
	}
	return &tab
})

// chebyshevFit returns the monomial coefficients (constant first) of the
// polynomial of degree deg interpolating f at the Chebyshev nodes of
// [-1, 1].
func chebyshevFit(f func(float64) float64, deg int) []float64 {
	n := deg + 1
	fs := make([]float64, n)
	for j := range fs {
		fs[j] = f(math.Cos(math.Pi * (float64(j) + 0.5) / float64(n)))
	}
	out := make([]float64, n)
	prev, cur := make([]float64, n), make([]float64, n) // T_{m-1}, T_m as monomials
	cur[0] = 1
	for m := range n {
		c := 0.0
		for j, v := range fs {
			c += v * math.Cos(math.Pi*float64(m)*(float64(j)+0.5)/float64(n))
		}
		c *= 2 / float64(n)
		if m == 0 {
			c /= 2
		}
		for i, t := range cur {
			out[i] += c * t
		}
		next := make([]float64, n) // T_{m+1} = 2t·T_m − T_{m−1}; T_1 = t
		for i := range next {
			if i > 0 {
				next[i] = 2 * cur[i-1]
			}
			if m > 0 {
				next[i] -= prev[i]
			} else if i > 0 {
				next[i] = cur[i-1]
			}
		}
		prev, cur = cur, next
	}
	return out
}

// erfEdge holds math.Erf's results that erfF32 does not compute: its
// NaN, and its value from erfSpan on (1).
var erfEdge = sync.OnceValue(func() [2]float32 {
	return [2]float32{float32(math.Erf(math.NaN())), float32(math.Erf(erfSpan))}
})

// erfRedo marks, in erfF32's output, an element to compute with math.Erf:
// a NaN whose payload math.Erf never gives.
const erfRedo = 0x7fc0dead

// erfF32 computes o[i] = float32(math.Erf(float64(a[i]))).
func erfF32(o, a []float32) {
	tab, edge := erfTable(), erfEdge()
	a = a[:len(o)]
	redo := 0
	for i, v := range a {
		x := float64(v)
		ax := math.Abs(x)
		sign := math.Float32bits(v) & (1 << 31)
		if !(ax < erfSpan) { // NaN, ±Inf, ±1
			r := edge[1]
			if ax != ax {
				r, sign = edge[0], 0
			}
			o[i] = math.Float32frombits(math.Float32bits(r) | sign)
			continue
		}
		u := ax * (erfParts / erfSpan)
		k := int(u)
		t := 2*(u-float64(k)) - 1
		c := &tab[k]
		// Estrin's scheme: short dependency chains.
		t2 := t * t
		t4 := t2 * t2
		q0 := (c[0] + c[1]*t) + (c[2]+c[3]*t)*t2
		q1 := (c[4] + c[5]*t) + (c[6]+c[7]*t)*t2
		q2 := (c[8] + c[9]*t) + c[10]*t2
		p := q0 + (q1+q2*t4)*t4
		y := p * (c[erfDeg+1]*ax + c[erfDeg+2])
		// Rounding is monotonic: when both ends of the guard round to
		// one float32, so does everything between them.
		d := y * erfGuard
		bits := math.Float32bits(float32(y + d))
		if bits != math.Float32bits(float32(y-d)) {
			bits = erfRedo
			redo++
		}
		o[i] = math.Float32frombits(bits | sign)
	}
	if redo == 0 {
		return
	}
	for i, r := range o {
		if math.Float32bits(r)&^(1<<31) == erfRedo {
			o[i] = float32(math.Erf(float64(a[i])))
		}
	}
}
