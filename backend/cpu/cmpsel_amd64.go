package cpu

import "github.com/emberml/ember/backend"

// The AVX2 loops of cmpsel_amd64.s: n is a multiple of 16.

//go:noescape
func cmpEqVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func cmpNeVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func cmpLtVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func cmpLeVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func cmpGtVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func cmpGeVSF32(o *bool, a *float32, s float32, n int)

//go:noescape
func selectF32AVX2(o *float32, c *bool, a *float32, astep int, b *float32, bstep int, n int)

// cmpVSF32 sets o[i] = a[i] op s for the float32 comparisons, the bulk on
// AVX2 where the CPU has it, and returns how many it did (the caller does
// the rest).
func cmpVSF32(op backend.BinaryOp, o []bool, a []float32, s float32) int {
	m := vecLen(len(o))
	if m == 0 {
		return 0
	}
	a = a[:len(o)]
	switch op {
	case backend.OpEq:
		cmpEqVSF32(&o[0], &a[0], s, m)
	case backend.OpNe:
		cmpNeVSF32(&o[0], &a[0], s, m)
	case backend.OpLt:
		cmpLtVSF32(&o[0], &a[0], s, m)
	case backend.OpLe:
		cmpLeVSF32(&o[0], &a[0], s, m)
	case backend.OpGt:
		cmpGtVSF32(&o[0], &a[0], s, m)
	case backend.OpGe:
		cmpGeVSF32(&o[0], &a[0], s, m)
	default:
		return 0
	}
	return m
}

// vecOperand returns the pointer and byte step per 8 elements with which
// the AVX2 loops read an operand over m elements: buf filled with v and
// step 0 when scalar, else vs (at least m long) and step 32.
func vecOperand(buf *[8]float32, vs []float32, v float32, scalar bool, m int) (*float32, int) {
	if scalar {
		for i := range buf {
			buf[i] = v
		}
		return &buf[0], 0
	}
	_ = vs[m-1]
	return &vs[0], 32
}

// selectF32Vec does the bulk of selectF32 on AVX2 and returns how many
// elements it did.
func selectF32Vec(o []float32, c []bool, as []float32, ax float32, aScalar bool, bs []float32, bx float32, bScalar bool) int {
	m := vecLen(len(o))
	if m == 0 {
		return 0
	}
	_ = c[m-1]
	var abuf, bbuf [8]float32
	pa, sa := vecOperand(&abuf, as, ax, aScalar, m)
	pb, sb := vecOperand(&bbuf, bs, bx, bScalar, m)
	selectF32AVX2(&o[0], &c[0], pa, sa, pb, sb, m)
	return m
}

// The AVX2 compare-and-select loops of cmpsel_amd64.s: o[i] = a[i] op s ?
// x[i] : y[i], x and y advancing xstep and ystep bytes per 8 elements (0:
// 8 copies of a scalar); n is a multiple of 8.

//go:noescape
func cmpSelEqF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

//go:noescape
func cmpSelNeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

//go:noescape
func cmpSelLtF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

//go:noescape
func cmpSelLeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

//go:noescape
func cmpSelGtF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

//go:noescape
func cmpSelGeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)

// cmpSelF32Vec does the bulk of cmpSelF32 on AVX2 and returns how many
// elements it did.
func cmpSelF32Vec(op backend.BinaryOp, o, a []float32, s float32, xs []float32, xv float32, xScalar bool, ys []float32, yv float32, yScalar bool) int {
	m := vecLen(len(o))
	if m == 0 {
		return 0
	}
	_ = a[m-1]
	var xbuf, ybuf [8]float32
	px, sx := vecOperand(&xbuf, xs, xv, xScalar, m)
	py, sy := vecOperand(&ybuf, ys, yv, yScalar, m)
	switch op {
	case backend.OpEq:
		cmpSelEqF32(&o[0], &a[0], s, px, sx, py, sy, m)
	case backend.OpNe:
		cmpSelNeF32(&o[0], &a[0], s, px, sx, py, sy, m)
	case backend.OpLt:
		cmpSelLtF32(&o[0], &a[0], s, px, sx, py, sy, m)
	case backend.OpLe:
		cmpSelLeF32(&o[0], &a[0], s, px, sx, py, sy, m)
	case backend.OpGt:
		cmpSelGtF32(&o[0], &a[0], s, px, sx, py, sy, m)
	case backend.OpGe:
		cmpSelGeF32(&o[0], &a[0], s, px, sx, py, sy, m)
	default:
		return 0
	}
	return m
}
