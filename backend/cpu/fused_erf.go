package cpu

import (
	"math"
	"sync"
)

// A fast float32 erf, bit-identical to float32(math.Erf(float64(x))), the
// value flex's Erf kernel gives. The fused loops, the Erf kernel and so
// Gelu (composed from Erf) all use it, on every instruction set, so their
// results agree bit for bit with each other and with flex.
//
// math.Erf is exact to about a float64 ulp but costly: branches on the
// argument's range and sign that mispredict on real data, and two calls
// of math.Exp for most |x| > 0.84. erfF32 instead evaluates, without
// branches and in float64, y = x·p(s): p is a polynomial fitted at
// Chebyshev nodes to erf(x)/x (an even function, smooth everywhere, so
// the error stays relative near 0) on one of a few equal intervals of
// [0, erfSpan), s ∈ [0, 1) the position of |x| in its interval. Three
// tables of the same function: erfParts16 intervals of degree erfDeg16
// (the AVX-512 kernel, whose VPERMT2PD looks up a coefficient for 8 lanes
// from two registers), erfParts8 intervals of degree erfDeg8 (the
// portable loop) and erfParts4 intervals of degree erfDeg4 (the AVX2
// kernel, whose VPERMPS looks up 4 float64 lanes from one register). All
// fits have a relative error below 2^-43 (TestFusedErfFit); with the
// float64 evaluation's rounding and math.Erf's own error, |y −
// math.Erf(x)| < 2^-38·|y|.
//
// Rounding y to float32 drops the low 29 bits of its float64 mantissa;
// the result is the same as math.Erf's unless those bits are within 2^15
// (2^-38·2^53) of 2^28, half a float32 ulp. Such elements (about 2^-13 of
// them) are computed again with math.Erf, as are NaNs and float32
// subnormals (whose erf may be subnormal too, where the rounding point
// moves).
// Odd symmetry is exact in math.Erf (its sign is applied last, and
// rounding to nearest is symmetric), so the intervals cover |x|; from
// erfSpan on (±Inf included) math.Erf rounds to ±1 in float32 (erfc(4) ≈
// 1.5e-8 is below half a float32 ulp of 1, 2^-25). The AVX-512 kernel
// clamps |x| to erfClamp instead, where p rounds to 1 as well.
//
// TestFusedErfExact checks every kernel against math.Erf on a dense
// sample of all float32 bit patterns; EMBER_EXHAUSTIVE_ERF=1 checks all
// 2^32 of them.
const (
	erfSpan    = 4
	erfParts8  = 8
	erfDeg8    = 10
	erfParts16 = 16
	erfDeg16   = 8
	erfParts4  = 4
	erfDeg4    = 13
	erfMid     = 1 << 28 // half a float32 ulp in the dropped bits
	erfWidth   = 1 << 15 // the uncertain distance from it
	erfTiny    = 0x1p-126
	erfClamp   = erfSpan - 0x1p-51 // the float64 below erfSpan
)

// erfTables holds the polynomials coefficient by coefficient: c8[j][k] is
// the coefficient of s^j on interval k of erfParts8 (one 64-byte row per
// coefficient, a ZMM register of 8 float64), c4 likewise for erfParts4.
// q16 holds the erfParts16 polynomials likewise (two rows a coefficient)
// in the variable h = s/4 ∈ [0, 1/4) (the fit's coefficient of s^j times
// 4^j, exact), which the AVX-512 kernel gets from |x| with one VREDUCEPD.
type erfTables struct {
	c8  [erfDeg8 + 1][erfParts8]float64
	q16 [erfDeg16 + 1][erfParts16]float64
	c4  [erfDeg4 + 1][erfParts4]float64
}

// erfTable returns the polynomials, fitted once from math.Erf.
var erfTable = sync.OnceValue(func() *erfTables {
	tab := new(erfTables)
	fit := func(parts, deg int, set func(j, k int, c float64)) {
		w := float64(erfSpan) / float64(parts)
		for k := range parts {
			f := func(s float64) float64 {
				x := (float64(k) + s) * w
				if x == 0 {
					return 2 / math.Sqrt(math.Pi) // the limit of erf(x)/x
				}
				return math.Erf(x) / x
			}
			for j, c := range chebyshevFit(f, deg) {
				set(j, k, c)
			}
		}
	}
	fit(erfParts8, erfDeg8, func(j, k int, c float64) { tab.c8[j][k] = c })
	fit(erfParts16, erfDeg16, func(j, k int, c float64) { tab.q16[j][k] = math.Ldexp(c, 2*j) })
	fit(erfParts4, erfDeg4, func(j, k int, c float64) { tab.c4[j][k] = c })
	return tab
})

// chebyshevFit returns the monomial coefficients (constant first) of the
// polynomial of degree deg interpolating f at the Chebyshev nodes of
// [0, 1].
func chebyshevFit(f func(float64) float64, deg int) []float64 {
	n := deg + 1
	fs := make([]float64, n)
	for j := range fs {
		fs[j] = f((1 + math.Cos(math.Pi*(float64(j)+0.5)/float64(n))) / 2)
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
	// From t ∈ [-1, 1] to s = (t+1)/2: p(2s − 1), by Horner's rule on
	// polynomials.
	ps := make([]float64, n)
	for j := n - 1; j >= 0; j-- {
		for i := n - 1; i >= 0; i-- { // ps ← ps·(2s − 1)
			ps[i] = -ps[i]
			if i > 0 {
				ps[i] += 2 * ps[i-1]
			}
		}
		ps[0] += out[j]
	}
	return ps
}

// Instruction sets of the erf kernels, for erfISA.
const (
	erfGeneric    = iota // erfGo only
	erfWithAVX2          // erfAVX2, then erfGo
	erfWithAVX512        // erfAVX512, then erfGo
)

// erfF32 computes o[i] = float32(math.Erf(float64(a[i]))) (o and a may
// be the same slice): the bulk with the AVX-512 or AVX2 kernel where the
// CPU has one, the rest with erfGo.
func erfF32(o, a []float32) {
	a = a[:len(o)]
	m := erfVec(o, a)
	erfGo(o[m:], a[m:])
}

// erfRedoBits reports whether y, erf(x) computed in float64 (|y| ≥
// 2^-126), may round to another float32 than math.Erf(x).
func erfRedoBits(y float64) bool {
	return math.Float64bits(y)&(1<<29-1)-(erfMid-erfWidth) <= 2*erfWidth
}

// erfGo is erfF32 in portable Go, on the erfParts8 table.
func erfGo(o, a []float32) {
	tab := &erfTable().c8
	a = a[:len(o)]
	for i, v := range a {
		x := float64(v)
		ax := math.Abs(x)
		if !(ax < erfSpan) || ax < erfTiny && ax != 0 { // NaN, ±Inf, ±1, subnormal
			if ax != ax || ax < erfTiny {
				o[i] = float32(math.Erf(x))
				continue
			}
			o[i] = float32(math.Copysign(1, x))
			continue
		}
		u := ax * (erfParts8 / erfSpan)
		k := int(u)
		s := u - float64(k)
		// Estrin's scheme: short dependency chains.
		s2 := s * s
		s4 := s2 * s2
		q0 := (tab[0][k] + tab[1][k]*s) + (tab[2][k]+tab[3][k]*s)*s2
		q1 := (tab[4][k] + tab[5][k]*s) + (tab[6][k]+tab[7][k]*s)*s2
		q2 := (tab[8][k] + tab[9][k]*s) + tab[10][k]*s2
		y := (q0 + (q1+q2*s4)*s4) * x
		if erfRedoBits(y) {
			y = math.Erf(x) // rare: a well-predicted branch
		}
		o[i] = float32(y)
	}
}
