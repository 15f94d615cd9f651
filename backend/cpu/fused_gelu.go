package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
)

// The gelu step. Gelu is composed (ember's Tensor.Gelu, PyTorch's exact
// gelu): t·((erf(t·(1/√2)) + 1)·0.5), five elementwise steps of which erf
// is the costly one; the other four each make a pass over the block. A
// plan runs such a run of steps as one opGelu step instead: the AVX-512
// erf kernel does the float32 operations around erf on the values it
// holds in registers. Each operation is the same float32 operation,
// rounded alike, so the result is bit for bit that of the five steps.

// fuseGelu replaces each run of five consecutive F32 steps u = t·α, e =
// erf(u), v = e + β, w = v·γ, y = t·w (either operand order; α, β, γ
// finite constants) whose values u, e, v and w no other step reads by
// one opGelu step computing y from t. It runs on virtual registers,
// before allocSlots.
func (c *compiler) fuseGelu() {
	steps := c.pl.steps
	out := steps[:0]
	for i := 0; i < len(steps); i++ {
		if g, ok := c.geluAt(steps, i); ok {
			out = append(out, g)
			i += 4
			continue
		}
		out = append(out, steps[i])
	}
	c.pl.steps = out
}

// geluAt returns the opGelu step replacing steps[i:i+5], or false where
// they are not a gelu.
func (c *compiler) geluAt(steps []fstep, i int) (fstep, bool) {
	if i+5 > len(steps) {
		return fstep{}, false
	}
	s := steps[i : i+5]
	consts := c.pl.f32.consts
	// scalar returns the constant operand of binary F32 step st, op, whose
	// other operand is v (any value where v is nil, which it then sets).
	scalar := func(st *fstep, op backend.BinaryOp, v *fref) (fref, bool) {
		if st.op != opBinary || st.dst.cls != clsF32 || backend.BinaryOp(st.sub) != op || st.dst.src != srcSlot {
			return fref{}, false
		}
		k, x := st.b, st.a
		if st.a.src == srcConst {
			k, x = st.a, st.b
		}
		if k.src != srcConst || x.src == srcConst || *v != (fref{}) && x != *v {
			return fref{}, false
		}
		if f := float64(consts[k.idx]); math.IsNaN(f) || math.IsInf(f, 0) {
			return fref{}, false
		}
		*v = x
		return k, true
	}
	var t fref
	alpha, ok := scalar(&s[0], backend.OpMul, &t)
	if !ok {
		return fstep{}, false
	}
	u := s[0].dst
	if s[1].op != opUnary || backend.UnaryOp(s[1].sub) != backend.OpErf || s[1].a != u ||
		s[1].dst.cls != clsF32 || s[1].dst.src != srcSlot {
		return fstep{}, false
	}
	e := s[1].dst
	beta, ok := scalar(&s[2], backend.OpAdd, &e)
	if !ok {
		return fstep{}, false
	}
	v := s[2].dst
	gamma, ok := scalar(&s[3], backend.OpMul, &v)
	if !ok {
		return fstep{}, false
	}
	w := s[3].dst
	y := &s[4]
	if y.op != opBinary || y.dst.cls != clsF32 || backend.BinaryOp(y.sub) != backend.OpMul {
		return fstep{}, false
	}
	var swap uint8
	switch {
	case y.a == t && y.b == w:
	case y.a == w && y.b == t:
		swap = 1
	default:
		return fstep{}, false
	}
	for _, r := range []fref{u, e, v, w} {
		if c.readers(steps, r) != 1 {
			return fstep{}, false
		}
	}
	return fstep{op: opGelu, sub: swap, dst: y.dst, a: t, b: alpha, c: beta, d: gamma}, true
}

// readers counts the operands of steps that are r.
func (c *compiler) readers(steps []fstep, r fref) int {
	n := 0
	for i := range steps {
		refs, k := steps[i].reads()
		for _, q := range refs[:k] {
			if *q == r {
				n++
			}
		}
	}
	return n
}

// geluPart runs gelu step st on elements [p0, p1) of the block [lo, hi),
// with the plan's gelu scratch buffer.
func (pl *fplan) geluPart(e *fenv, st *fstep, lo, hi, p0, p1 int) {
	l32 := lane[float32]{&pl.f32, e.s32}
	o, t := l32.vec(st.dst, lo, hi)[p0:p1], l32.vec(st.a, lo, hi)[p0:p1]
	c := pl.f32.consts
	k := [3]float32{c[st.b.idx], c[st.c.idx], c[st.d.idx]}
	geluF32(o, t, &k, st.sub == 1, e.s32[pl.gs][p0:p1])
}

// geluF32 sets o = t·((erf(t·k[0]) + k[1])·k[2]) (o and t may be the same
// slice), every operation rounded to float32 as the separate steps round
// it; swap says the last product was w·t rather than t·w (which matters
// only for which NaN it returns). The bulk runs with the AVX-512 kernel
// where erfISA selects it, the rest with geluGo in scratch w (len(o)
// elements at least).
func geluF32(o, t []float32, k *[3]float32, swap bool, w []float32) {
	t = t[:len(o)]
	m := geluVec(o, t, k, swap, w)
	if m < len(o) {
		geluGo(o[m:], t[m:], k, swap, w)
	}
}

// geluGo is geluF32 with the separate steps' kernels, through scratch w.
func geluGo(o, t []float32, k *[3]float32, swap bool, w []float32) {
	t, w = t[:len(o)], w[:len(o)]
	fusedVS(backend.OpMul, w, t, k[0])
	erfF32(w, w)
	fusedVS(backend.OpAdd, w, w, k[1])
	fusedVS(backend.OpMul, w, w, k[2])
	if swap {
		fusedVV(backend.OpMul, o, w, t)
	} else {
		fusedVV(backend.OpMul, o, t, w)
	}
}
