package cpu

import "github.com/emberml/ember/backend"

// The AVX loops of fused_amd64.s. n is a multiple of 16.

//go:noescape
func subVVF32(o, a, b *float32, n int)

//go:noescape
func mulVVF32(o, a, b *float32, n int)

//go:noescape
func divVVF32(o, a, b *float32, n int)

//go:noescape
func addVSF32(o, a *float32, s float32, n int)

//go:noescape
func subVSF32(o, a *float32, s float32, n int)

//go:noescape
func mulVSF32(o, a *float32, s float32, n int)

//go:noescape
func divVSF32(o, a *float32, s float32, n int)

//go:noescape
func addSVF32(o *float32, s float32, b *float32, n int)

//go:noescape
func subSVF32(o *float32, s float32, b *float32, n int)

//go:noescape
func mulSVF32(o *float32, s float32, b *float32, n int)

//go:noescape
func divSVF32(o *float32, s float32, b *float32, n int)

//go:noescape
func sqrtF32AVX(o, a *float32, n int)

// vecLen is the part of an n-element loop the AVX loops take (0 without
// AVX2).
func vecLen(n int) int {
	if !hasAVX2 {
		return 0
	}
	return n &^ 15
}

// fusedVV sets o = a op b for Sub, Mul, Div, Max and Min (Add has
// addF32), the bulk on AVX where the CPU has it.
func fusedVV(op backend.BinaryOp, o, a, b []float32) {
	a, b = a[:len(o)], b[:len(o)]
	m := vecLen(len(o))
	if m > 0 {
		switch op {
		case backend.OpSub:
			subVVF32(&o[0], &a[0], &b[0], m)
		case backend.OpMul:
			mulVVF32(&o[0], &a[0], &b[0], m)
		case backend.OpDiv:
			divVVF32(&o[0], &a[0], &b[0], m)
		default:
			m = 0
		}
	}
	binVV(op, o[m:], a[m:], b[m:])
}

// fusedVS sets o = a op s for the fast binary ops, the bulk on AVX.
func fusedVS(op backend.BinaryOp, o, a []float32, s float32) {
	a = a[:len(o)]
	m := vecLen(len(o))
	if m > 0 {
		switch op {
		case backend.OpAdd:
			addVSF32(&o[0], &a[0], s, m)
		case backend.OpSub:
			subVSF32(&o[0], &a[0], s, m)
		case backend.OpMul:
			mulVSF32(&o[0], &a[0], s, m)
		case backend.OpDiv:
			divVSF32(&o[0], &a[0], s, m)
		default:
			m = 0
		}
	}
	binVS(op, o[m:], a[m:], s)
}

// fusedSV sets o = s op b for the fast binary ops, the bulk on AVX.
func fusedSV(op backend.BinaryOp, o []float32, s float32, b []float32) {
	b = b[:len(o)]
	m := vecLen(len(o))
	if m > 0 {
		switch op {
		case backend.OpAdd:
			addSVF32(&o[0], s, &b[0], m)
		case backend.OpSub:
			subSVF32(&o[0], s, &b[0], m)
		case backend.OpMul:
			mulSVF32(&o[0], s, &b[0], m)
		case backend.OpDiv:
			divSVF32(&o[0], s, &b[0], m)
		default:
			m = 0
		}
	}
	binSV(op, o[m:], s, b[m:])
}

// fusedSqrt sets o = float32(math.Sqrt(float64(a))) (unaryF32's Sqrt),
// the bulk with AVX's float32 square root: a float64 square root rounded
// to float32 is the correctly rounded float32 square root, so the two
// agree for every input, NaNs included.
func fusedSqrt(o, a []float32) {
	a = a[:len(o)]
	m := vecLen(len(o))
	if m > 0 {
		sqrtF32AVX(&o[0], &a[0], m)
	}
	unaryF32(backend.OpSqrt, o[m:], a[m:])
}
