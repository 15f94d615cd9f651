package cpu

import (
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// The loops of fused steps. Each computes one op over a block exactly as
// the op's own kernel computes one element (flex's scalar functions, the
// float32 loops of binary.go and unary.go): float ops other than Neg,
// the arithmetic and Max/Min are computed in float64 and rounded once to
// the element type.

// unaryFloat computes o = op(a) for the float unary ops that neither
// unaryF32 (Neg, Abs, Exp, Log, Sqrt, Rsqrt, Recip, Tanh, Sigmoid on
// float32) nor unaryFunc (math's functions on float64) takes. Calling
// math's functions directly is exact on float32: a float32 operand
// converted to float64 is never a signalling NaN (see unaryFunc).
func unaryFloat[T float](op backend.UnaryOp, o, a []T) {
	a = a[:len(o)]
	switch op {
	case backend.OpNeg:
		for i := range o {
			o[i] = -a[i]
		}
	case backend.OpSign:
		for i, x := range a {
			switch {
			case x > 0:
				o[i] = 1
			case x < 0:
				o[i] = -1
			default:
				o[i] = 0 // +0 for ±0 and NaN
			}
		}
	case backend.OpRsqrt:
		for i := range o {
			o[i] = T(1 / math.Sqrt(float64(a[i])))
		}
	case backend.OpRecip:
		for i := range o {
			o[i] = T(1 / float64(a[i]))
		}
	case backend.OpSigmoid:
		for i := range o {
			o[i] = T(sigmoid(float64(a[i])))
		}
	case backend.OpErf:
		for i := range o {
			o[i] = T(math.Erf(float64(a[i])))
		}
	case backend.OpFloor:
		for i := range o {
			o[i] = T(math.Floor(float64(a[i])))
		}
	case backend.OpCeil:
		for i := range o {
			o[i] = T(math.Ceil(float64(a[i])))
		}
	case backend.OpRound:
		for i := range o {
			o[i] = T(math.RoundToEven(float64(a[i])))
		}
	case backend.OpLog1p:
		for i := range o {
			o[i] = T(math.Log1p(float64(a[i])))
		}
	case backend.OpExpm1:
		for i := range o {
			o[i] = T(math.Expm1(float64(a[i])))
		}
	case backend.OpSin:
		for i := range o {
			o[i] = T(math.Sin(float64(a[i])))
		}
	case backend.OpCos:
		for i := range o {
			o[i] = T(math.Cos(float64(a[i])))
		}
	default:
		panic("cpu: fused unary op " + op.String() + " on floats")
	}
}

// unaryFunc is the float64 function of a float unary op computed through
// math (flex's floatUnary calls it through a function value, so that
// math.Floor, math.Ceil and math.RoundToEven run their own code rather than
// the compiler's instruction, which quiets a signalling NaN they return
// unchanged), or nil for the others.
func unaryFunc(op backend.UnaryOp) func(float64) float64 {
	switch op {
	case backend.OpAbs:
		return math.Abs
	case backend.OpExp:
		return math.Exp
	case backend.OpLog:
		return math.Log
	case backend.OpLog1p:
		return math.Log1p
	case backend.OpExpm1:
		return math.Expm1
	case backend.OpSqrt:
		return math.Sqrt
	case backend.OpSin:
		return math.Sin
	case backend.OpCos:
		return math.Cos
	case backend.OpTanh:
		return math.Tanh
	case backend.OpErf:
		return math.Erf
	case backend.OpFloor:
		return math.Floor
	case backend.OpCeil:
		return math.Ceil
	case backend.OpRound:
		return math.RoundToEven
	}
	return nil
}

// unaryF64 computes o = op(a) for a float unary op on float64, calling
// math's functions as flex does (see unaryFunc).
func unaryF64(op backend.UnaryOp, o, a []float64) {
	f := unaryFunc(op)
	if f == nil {
		unaryFloat(op, o, a)
		return
	}
	a = a[:len(o)]
	for i := range o {
		o[i] = f(a[i])
	}
}

// binaryFunc is the float64 function of the float binary ops without a
// loop of their own.
func binaryFunc(op backend.BinaryOp) func(a, b float64) float64 {
	switch op {
	case backend.OpFloorDiv:
		return flex.FloorDivFloat
	case backend.OpRem:
		return math.Mod
	case backend.OpMod:
		return flex.ModFloat
	case backend.OpPow:
		return math.Pow
	case backend.OpAtan2:
		return math.Atan2
	}
	panic("cpu: fused binary op " + op.String() + " on floats")
}

// binarySlow computes o = a op b (a or b a repeated scalar when its flag
// is set) for FloorDiv, Rem, Mod, Pow and Atan2.
func binarySlow[T float](op backend.BinaryOp, o, as []T, ax T, aScalar bool, bs []T, bx T, bScalar bool) {
	f := binaryFunc(op)
	switch {
	case !aScalar && !bScalar:
		as, bs = as[:len(o)], bs[:len(o)]
		for i := range o {
			o[i] = T(f(float64(as[i]), float64(bs[i])))
		}
	case !aScalar:
		as = as[:len(o)]
		for i := range o {
			o[i] = T(f(float64(as[i]), float64(bx)))
		}
	default:
		bs = bs[:len(o)]
		for i := range o {
			o[i] = T(f(float64(ax), float64(bs[i])))
		}
	}
}

// binVVT is binVV for element type T.
func binVVT[T float](op backend.BinaryOp, o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	switch op {
	case backend.OpAdd:
		for i := range o {
			o[i] = a[i] + b[i]
		}
	case backend.OpSub:
		for i := range o {
			o[i] = a[i] - b[i]
		}
	case backend.OpMul:
		for i := range o {
			o[i] = a[i] * b[i]
		}
	case backend.OpDiv:
		for i := range o {
			o[i] = a[i] / b[i]
		}
	case backend.OpMax:
		for i := range o {
			o[i] = max(a[i], b[i])
		}
	case backend.OpMin:
		for i := range o {
			o[i] = min(a[i], b[i])
		}
	}
}

// binVST is binVS for element type T.
func binVST[T float](op backend.BinaryOp, o, a []T, s T) {
	a = a[:len(o)]
	switch op {
	case backend.OpAdd:
		for i := range o {
			o[i] = a[i] + s
		}
	case backend.OpSub:
		for i := range o {
			o[i] = a[i] - s
		}
	case backend.OpMul:
		for i := range o {
			o[i] = a[i] * s
		}
	case backend.OpDiv:
		for i := range o {
			o[i] = a[i] / s
		}
	case backend.OpMax:
		for i := range o {
			o[i] = max(a[i], s)
		}
	case backend.OpMin:
		for i := range o {
			o[i] = min(a[i], s)
		}
	}
}

// binSVT is binSV for element type T.
func binSVT[T float](op backend.BinaryOp, o []T, s T, b []T) {
	b = b[:len(o)]
	switch op {
	case backend.OpAdd:
		for i := range o {
			o[i] = s + b[i]
		}
	case backend.OpSub:
		for i := range o {
			o[i] = s - b[i]
		}
	case backend.OpMul:
		for i := range o {
			o[i] = s * b[i]
		}
	case backend.OpDiv:
		for i := range o {
			o[i] = s / b[i]
		}
	case backend.OpMax:
		for i := range o {
			o[i] = max(s, b[i])
		}
	case backend.OpMin:
		for i := range o {
			o[i] = min(s, b[i])
		}
	}
}

// cmpVVT computes the comparison o = a op b.
func cmpVVT[T float](op backend.BinaryOp, o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	switch op {
	case backend.OpEq:
		for i := range o {
			o[i] = a[i] == b[i]
		}
	case backend.OpNe:
		for i := range o {
			o[i] = a[i] != b[i]
		}
	case backend.OpLt:
		for i := range o {
			o[i] = a[i] < b[i]
		}
	case backend.OpLe:
		for i := range o {
			o[i] = a[i] <= b[i]
		}
	case backend.OpGt:
		for i := range o {
			o[i] = a[i] > b[i]
		}
	case backend.OpGe:
		for i := range o {
			o[i] = a[i] >= b[i]
		}
	}
}

// cmpVST computes the comparison o = a op s.
func cmpVST[T float](op backend.BinaryOp, o []bool, a []T, s T) {
	a = a[:len(o)]
	if a32, ok := any(a).([]float32); ok {
		m := cmpVSF32(op, o, a32, any(s).(float32))
		o, a = o[m:], a[m:]
	}
	switch op {
	case backend.OpEq:
		for i := range o {
			o[i] = a[i] == s
		}
	case backend.OpNe:
		for i := range o {
			o[i] = a[i] != s
		}
	case backend.OpLt:
		for i := range o {
			o[i] = a[i] < s
		}
	case backend.OpLe:
		for i := range o {
			o[i] = a[i] <= s
		}
	case backend.OpGt:
		for i := range o {
			o[i] = a[i] > s
		}
	case backend.OpGe:
		for i := range o {
			o[i] = a[i] >= s
		}
	}
}

// flipCompare returns the comparison op' with (s op x) == (x op' s), NaN
// included.
func flipCompare(op backend.BinaryOp) backend.BinaryOp {
	switch op {
	case backend.OpLt:
		return backend.OpGt
	case backend.OpLe:
		return backend.OpGe
	case backend.OpGt:
		return backend.OpLt
	case backend.OpGe:
		return backend.OpLe
	}
	return op
}

// boolBytes returns the bytes of b (a Go bool is stored as 0 or 1).
func boolBytes(b []bool) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// notBool computes o = !a.
func notBool(o, a []bool) {
	ob, ab := boolBytes(o), boolBytes(a)[:len(o)]
	for i := range ob {
		ob[i] = ab[i] ^ 1
	}
}

// logicBool computes o = a op b for Bool operands (flex's Bool semantics:
// Max is Or, Min is And, comparisons order false < true), on the 0/1
// bytes.
func logicBool(op backend.BinaryOp, o, a, b []bool) {
	ob := boolBytes(o)
	ab, bb := boolBytes(a)[:len(ob)], boolBytes(b)[:len(ob)]
	switch op {
	case backend.OpAnd, backend.OpMin:
		for i := range ob {
			ob[i] = ab[i] & bb[i]
		}
	case backend.OpOr, backend.OpMax:
		for i := range ob {
			ob[i] = ab[i] | bb[i]
		}
	case backend.OpXor, backend.OpNe:
		for i := range ob {
			ob[i] = ab[i] ^ bb[i]
		}
	case backend.OpEq:
		for i := range ob {
			ob[i] = ab[i] ^ bb[i] ^ 1
		}
	case backend.OpLt:
		for i := range ob {
			ob[i] = (ab[i] ^ 1) & bb[i]
		}
	case backend.OpLe:
		for i := range ob {
			ob[i] = (ab[i] ^ 1) | bb[i]
		}
	case backend.OpGt:
		for i := range ob {
			ob[i] = ab[i] & (bb[i] ^ 1)
		}
	case backend.OpGe:
		for i := range ob {
			ob[i] = ab[i] | (bb[i] ^ 1)
		}
	}
}

// boolOp is logicBool on one pair of values.
func boolOp(op backend.BinaryOp, a, b bool) bool {
	switch op {
	case backend.OpAnd, backend.OpMin:
		return a && b
	case backend.OpOr, backend.OpMax:
		return a || b
	case backend.OpXor, backend.OpNe:
		return a != b
	case backend.OpEq:
		return a == b
	case backend.OpLt:
		return !a && b
	case backend.OpLe:
		return !a || b
	case backend.OpGt:
		return a && !b
	}
	return a || !b // Ge
}

// selectF64 is selectF32 for float64.
func selectF64(o []float64, c []bool, as []float64, ax float64, aScalar bool, bs []float64, bx float64, bScalar bool) {
	cb := boolBytes(c)[:len(o)]
	a, b := math.Float64bits(ax), math.Float64bits(bx)
	if !aScalar {
		as = as[:len(o)]
	}
	if !bScalar {
		bs = bs[:len(o)]
	}
	for k, t := range cb {
		m := -uint64(t)
		x, y := a, b
		if !aScalar {
			x = math.Float64bits(as[k])
		}
		if !bScalar {
			y = math.Float64bits(bs[k])
		}
		o[k] = math.Float64frombits(x&m | y&^m)
	}
}

// selectBool is selectF32 for Bool.
func selectBool(o []bool, c []bool, as []bool, ax bool, aScalar bool, bs []bool, bx bool, bScalar bool) {
	ob, cb := boolBytes(o), boolBytes(c)[:len(o)]
	var a, b uint8
	if ax {
		a = 1
	}
	if bx {
		b = 1
	}
	var ab, bb []uint8
	if !aScalar {
		ab = boolBytes(as)[:len(o)]
	}
	if !bScalar {
		bb = boolBytes(bs)[:len(o)]
	}
	for k, t := range cb {
		m := -t
		x, y := a, b
		if !aScalar {
			x = ab[k]
		}
		if !bScalar {
			y = bb[k]
		}
		ob[k] = x&m | y&^m
	}
}

// convertFloat converts with Go's conversion (rounding to nearest even).
func convertFloat[S, D float](o []D, a []S) {
	a = a[:len(o)]
	for i := range o {
		o[i] = D(a[i])
	}
}

// floatToBool computes o = a != 0 (NaN is true).
func floatToBool[S float](o []bool, a []S) {
	a = a[:len(o)]
	for i := range o {
		o[i] = a[i] != 0
	}
}

// boolToFloat is boolToF32 for element type D.
func boolToFloat[D float](o []D, a []bool) {
	ab := boolBytes(a)[:len(o)]
	for i, b := range ab {
		o[i] = D(b)
	}
}
