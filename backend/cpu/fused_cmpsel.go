package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
)

// Two rewrites of a plan's steps for the programs a ReLU or a clamp makes
// (where(x + b <= 0, 0, x + b), and its gradient where(x + b <= 0, 0, g)),
// which otherwise spend more time on the scratch buffers than on their one
// pass over memory:
//
//   - A binary step whose operand is broadcast along the innermost merged
//     axis of the iteration (a per-channel bias over [N, C, H, W] planes)
//     reads that operand run by run as a scalar, with the vector-scalar
//     loops, instead of gathering it into a scratch buffer first (the
//     unfused kernel does the same).
//   - A float32 comparison with a uniform operand whose Bool result only a
//     Where reads becomes one compare-and-select step: the comparison's
//     mask picks the branch's bits directly, without a Bool buffer.
//
// Both compute every element with the same operations as the steps they
// replace, so the results are bit-identical.

// minScalarRun is the shortest run of equal broadcast values that a
// binary step reads as a scalar: shorter runs are gathered.
const minScalarRun = 16

// scalarRuns reports whether g is constant along runs of at least
// minScalarRun iteration elements (its innermost merged axis has stride 0).
func (g *bcastGather[T]) scalarRuns() bool {
	k := len(g.dims) - 1
	return k >= 0 && g.strides[k] == 0 && g.dims[k] >= minScalarRun
}

// runs calls f for each run of equal values among the iteration elements
// [lo, lo+n) of g, which scalarRuns: the run's position relative to lo,
// its length and its value.
func (g *bcastGather[T]) runs(lo, n int, f func(pos, run int, v T)) {
	var buf [8]int
	idx := buf[:0]
	if len(g.dims) > len(buf) {
		idx = make([]int, len(g.dims))
	} else {
		idx = buf[:len(g.dims)]
	}
	off := g.position(idx, lo)
	in := len(g.dims) - 1
	m := g.dims[in]
	for pos := 0; pos < n; {
		run := min(m-idx[in], n-pos)
		f(pos, run, g.data[off])
		pos += run
		if idx[in] += run; idx[in] < m {
			continue
		}
		idx[in] = 0
		off = g.nextRow(idx, off)
	}
}

// runsOperand returns the operand of binary step st to read run by run
// (a broadcast input not gathered yet that scalarRuns, beside an operand
// that is a vector), or nil.
func (c *compiler) runsOperand(st *fstep) *fref {
	if st.op != opBinary || st.dst.cls == clsBool {
		return nil
	}
	runs := func(r fref) bool {
		if r.src != srcGath || c.gathd[r.cls][r.idx].src != srcGath {
			return false
		}
		if r.cls == clsF32 {
			return c.pl.f32.gath[r.idx].scalarRuns()
		}
		return c.pl.f64.gath[r.idx].scalarRuns()
	}
	switch {
	case runs(st.a) && st.b.src != srcConst && st.b.src != srcGath:
		return &st.a
	case runs(st.b) && st.a.src != srcConst && st.a.src != srcGath:
		return &st.b
	}
	return nil
}

// binaryRuns runs binary step st, one of whose operands is a broadcast
// input read run by run (runsOperand), over the block [lo, hi) with f
// (binary32 or binaryT).
func binaryRuns[T float](l lane[T], st *fstep, lo, hi int, f func(op backend.BinaryOp, o, as []T, ax T, aScalar bool, bs []T, bx T, bScalar bool)) {
	op := backend.BinaryOp(st.sub)
	o := l.vec(st.dst, lo, hi)
	if st.a.src == srcGath {
		g, b := &l.bank.gath[st.a.idx], l.vec(st.b, lo, hi)
		g.runs(lo, hi-lo, func(p, n int, v T) { f(op, o[p:p+n], nil, v, true, b[p:p+n], 0, false) })
		return
	}
	g, a := &l.bank.gath[st.b.idx], l.vec(st.a, lo, hi)
	g.runs(lo, hi-lo, func(p, n int, v T) { f(op, o[p:p+n], a[p:p+n], 0, false, nil, v, true) })
}

// fuseCmpSel merges each float32 comparison with a uniform operand whose
// Bool result is read by one Where only into that Where (opCmpSel, the
// comparison flipped where its uniform operand comes first).
func (c *compiler) fuseCmpSel() {
	steps := c.pl.steps
	var drop []bool
	for i := range steps {
		w := &steps[i]
		if w.op != opWhere || w.dst.cls != clsF32 || w.c.src != srcSlot {
			continue
		}
		j := c.producer(steps[:i], w.c)
		if j < 0 {
			continue
		}
		cmp := &steps[j]
		if cmp.op != opCompare || cmp.a.cls != clsF32 || c.readers(steps, w.c) != 1 {
			continue
		}
		op, x, s := backend.BinaryOp(cmp.sub), cmp.a, cmp.b
		if x.src == srcConst {
			op, x, s = flipCompare(op), cmp.b, cmp.a
		}
		if x.src == srcConst || s.src != srcConst {
			continue
		}
		*w = fstep{op: opCmpSel, sub: uint8(op), dst: w.dst, a: w.a, b: w.b, c: x, d: s}
		if drop == nil {
			drop = make([]bool, len(steps))
		}
		drop[j] = true
	}
	if drop == nil {
		return
	}
	out := steps[:0]
	for i, st := range steps {
		if !drop[i] {
			out = append(out, st)
		}
	}
	c.pl.steps = out
}

// producer returns the index of the step among steps that writes r, or -1.
func (c *compiler) producer(steps []fstep, r fref) int {
	for j := len(steps) - 1; j >= 0; j-- {
		if steps[j].dst == r {
			return j
		}
	}
	return -1
}

// cmpSelF32 sets o[i] = a[i] op s ? x : y for the float32 comparisons op,
// where x is xs[i] or, when xScalar, xv (y likewise), the bulk on AVX2
// where the CPU has it. Each element is one of the branch's values, bit
// for bit, and the comparison is Go's (false with a NaN but for Ne).
func cmpSelF32(op backend.BinaryOp, o, a []float32, s float32, xs []float32, xv float32, xScalar bool, ys []float32, yv float32, yScalar bool) {
	a = a[:len(o)]
	if m := cmpSelF32Vec(op, o, a, s, xs, xv, xScalar, ys, yv, yScalar); m > 0 {
		o, a = o[m:], a[m:]
		if !xScalar {
			xs = xs[m:]
		}
		if !yScalar {
			ys = ys[m:]
		}
	}
	xb, yb := math.Float32bits(xv), math.Float32bits(yv)
	for i := range o {
		if !xScalar {
			xb = math.Float32bits(xs[i])
		}
		if !yScalar {
			yb = math.Float32bits(ys[i])
		}
		m := -uint32(b2u(cmp(op, a[i], s)))
		o[i] = math.Float32frombits(xb&m | yb&^m)
	}
}

// b2u is 1 for true, 0 for false.
func b2u(t bool) uint8 {
	if t {
		return 1
	}
	return 0
}
