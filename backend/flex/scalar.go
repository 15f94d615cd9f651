package flex

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// floatUnary returns the scalar function of a unary op on floats, computed
// in float64 and rounded once to T.
func floatUnary[T float](op backend.UnaryOp) func(T) T {
	f64 := func(g func(float64) float64) func(T) T {
		return func(x T) T { return T(g(float64(x))) }
	}
	switch op {
	case backend.OpNeg:
		return func(x T) T { return -x }
	case backend.OpAbs:
		return f64(math.Abs)
	case backend.OpSign:
		return func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0 // +0 for ±0 and NaN, as PyTorch's sign
		}
	case backend.OpExp:
		return f64(math.Exp)
	case backend.OpLog:
		return f64(math.Log)
	case backend.OpLog1p:
		return f64(math.Log1p)
	case backend.OpExpm1:
		return f64(math.Expm1)
	case backend.OpSqrt:
		return f64(math.Sqrt)
	case backend.OpRsqrt:
		return f64(func(x float64) float64 { return 1 / math.Sqrt(x) })
	case backend.OpRecip:
		return f64(func(x float64) float64 { return 1 / x })
	case backend.OpSin:
		return f64(math.Sin)
	case backend.OpCos:
		return f64(math.Cos)
	case backend.OpTanh:
		return f64(math.Tanh)
	case backend.OpSigmoid:
		return f64(sigmoid)
	case backend.OpErf:
		return f64(math.Erf)
	case backend.OpFloor:
		return f64(math.Floor)
	case backend.OpCeil:
		return f64(math.Ceil)
	case backend.OpRound:
		return f64(math.RoundToEven)
	case backend.OpNot:
		return func(x T) T {
			if x == 0 {
				return 1
			}
			return 0
		}
	}
	panic(fmt.Sprintf("flex: unary op %v is not defined", op))
}

// sigmoid is 1/(1+e^-x) without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// intUnary returns the scalar function of a unary op on integers. Neg wraps
// (also for unsigned types); rounding ops are the identity; float-only ops
// go through float64 and truncate (saturating) back.
func intUnary[T integer](op backend.UnaryOp) func(T) T {
	var one T = 1
	switch op {
	case backend.OpNeg:
		return func(x T) T { return 0 - x }
	case backend.OpAbs:
		return func(x T) T {
			if x < 0 {
				return 0 - x
			}
			return x
		}
	case backend.OpSign:
		return func(x T) T {
			switch {
			case x > 0:
				return one
			case x < 0:
				return 0 - one
			}
			return 0
		}
	case backend.OpFloor, backend.OpCeil, backend.OpRound:
		return func(x T) T { return x }
	case backend.OpNot:
		return func(x T) T { return ^x }
	}
	f := floatUnary[float64](op)
	lo, hi := intLimits[T]()
	return func(x T) T { return satInt(f(float64(x)), lo, hi) }
}

// satInt truncates x toward zero into [lo, hi]; NaN gives 0.
func satInt[T integer](x float64, lo, hi T) T {
	x = math.Trunc(x)
	switch {
	case x != x:
		return 0
	case x <= float64(lo):
		return lo
	case x >= float64(hi):
		return hi
	}
	return T(x)
}

// boolUnary returns the scalar function of a unary op on Bool: Not negates;
// the other ops act on 0/1 and test the result for != 0.
func boolUnary(op backend.UnaryOp) func(bool) bool {
	switch op {
	case backend.OpNot:
		return func(x bool) bool { return !x }
	case backend.OpNeg, backend.OpAbs, backend.OpSign, backend.OpFloor, backend.OpCeil, backend.OpRound:
		return func(x bool) bool { return x }
	}
	f := floatUnary[float64](op)
	return func(x bool) bool { return f(b2f(x)) != 0 }
}

func b2f(x bool) float64 {
	if x {
		return 1
	}
	return 0
}

// floatBinary returns the scalar function of a binary op on floats.
func floatBinary[T float](op backend.BinaryOp) func(a, b T) T {
	switch op {
	case backend.OpAdd:
		return func(a, b T) T { return a + b }
	case backend.OpSub:
		return func(a, b T) T { return a - b }
	case backend.OpMul:
		return func(a, b T) T { return a * b }
	case backend.OpDiv:
		return func(a, b T) T { return a / b }
	case backend.OpFloorDiv:
		return func(a, b T) T { return T(floorDiv(float64(a), float64(b))) }
	case backend.OpRem:
		return func(a, b T) T { return T(math.Mod(float64(a), float64(b))) }
	case backend.OpMod:
		return func(a, b T) T { return T(pyMod(float64(a), float64(b))) }
	case backend.OpPow:
		return func(a, b T) T { return T(math.Pow(float64(a), float64(b))) }
	case backend.OpMax: // Go's max and min propagate NaN
		return func(a, b T) T { return max(a, b) }
	case backend.OpMin:
		return func(a, b T) T { return min(a, b) }
	case backend.OpAtan2:
		return func(a, b T) T { return T(math.Atan2(float64(a), float64(b))) }
	case backend.OpAnd, backend.OpOr, backend.OpXor:
		g := boolBinary(op)
		return func(a, b T) T { return T(b2f(g(a != 0, b != 0))) }
	}
	panic(fmt.Sprintf("flex: binary op %v is not defined on floats", op))
}

// floorDiv is PyTorch's floor division of floats (div_floor_floating).
func floorDiv(a, b float64) float64 {
	if b == 0 {
		return a / b
	}
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fl := math.Floor(div)
	if div-fl > 0.5 {
		fl++
	}
	return fl
}

// pyMod is Python's float %: the remainder with the divisor's sign.
func pyMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// intBinary returns the scalar function of a binary op on integers (Go
// arithmetic, wrapping on overflow). Division by zero panics naming the op.
func intBinary[T integer](op backend.BinaryOp) func(a, b T) T {
	zeroDiv := func(b T) {
		if b == 0 {
			panic(fmt.Errorf("flex: %v: integer division by zero", op))
		}
	}
	switch op {
	case backend.OpAdd:
		return func(a, b T) T { return a + b }
	case backend.OpSub:
		return func(a, b T) T { return a - b }
	case backend.OpMul:
		return func(a, b T) T { return a * b }
	case backend.OpDiv:
		return func(a, b T) T { zeroDiv(b); return a / b }
	case backend.OpFloorDiv:
		return func(a, b T) T {
			zeroDiv(b)
			q := a / b
			if a%b != 0 && (a < 0) != (b < 0) {
				q--
			}
			return q
		}
	case backend.OpRem:
		return func(a, b T) T { zeroDiv(b); return a % b }
	case backend.OpMod:
		return func(a, b T) T {
			zeroDiv(b)
			r := a % b
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		}
	case backend.OpPow:
		return intPow[T]
	case backend.OpMax:
		return func(a, b T) T { return max(a, b) }
	case backend.OpMin:
		return func(a, b T) T { return min(a, b) }
	case backend.OpAtan2:
		lo, hi := intLimits[T]()
		return func(a, b T) T { return satInt(math.Atan2(float64(a), float64(b)), lo, hi) }
	case backend.OpAnd:
		return func(a, b T) T { return a & b }
	case backend.OpOr:
		return func(a, b T) T { return a | b }
	case backend.OpXor:
		return func(a, b T) T { return a ^ b }
	case backend.OpShl:
		bits := T(unsafe.Sizeof(T(0)) * 8)
		return func(a, b T) T {
			if b < 0 || b >= bits {
				return 0
			}
			return a << b
		}
	case backend.OpShr:
		bits := T(unsafe.Sizeof(T(0)) * 8)
		return func(a, b T) T {
			if b < 0 || b >= bits {
				if a < 0 {
					return a >> (bits - 1) // all ones
				}
				return 0
			}
			return a >> b
		}
	}
	panic(fmt.Sprintf("flex: binary op %v is not defined on integers", op))
}

// intPow is a^b by repeated squaring, wrapping on overflow. A negative
// exponent gives the truncated value of 1/a^|b|: 1 for a = 1, ±1 for
// a = -1, otherwise 0 (PyTorch rejects negative integer powers).
func intPow[T integer](a, b T) T {
	var one T = 1
	if b < 0 {
		switch {
		case a == one:
			return one
		case a == 0-one:
			if b%2 != 0 {
				return a
			}
			return one
		}
		return 0
	}
	r := one
	for b > 0 {
		if b&1 != 0 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

// boolBinary returns the scalar function of a binary op on Bool. Logical
// ops are the usual ones; arithmetic acts on 0/1 and tests for != 0 (Add
// and Max are Or, Mul and Min are And, Sub is Xor); comparisons order
// false < true.
func boolBinary(op backend.BinaryOp) func(a, b bool) bool {
	switch op {
	case backend.OpAdd, backend.OpMax, backend.OpOr:
		return func(a, b bool) bool { return a || b }
	case backend.OpMul, backend.OpMin, backend.OpAnd:
		return func(a, b bool) bool { return a && b }
	case backend.OpSub, backend.OpXor, backend.OpNe:
		return func(a, b bool) bool { return a != b }
	case backend.OpEq:
		return func(a, b bool) bool { return a == b }
	case backend.OpLt:
		return func(a, b bool) bool { return !a && b }
	case backend.OpLe:
		return func(a, b bool) bool { return !a || b }
	case backend.OpGt:
		return func(a, b bool) bool { return a && !b }
	case backend.OpGe:
		return func(a, b bool) bool { return a || !b }
	case backend.OpDiv, backend.OpFloorDiv, backend.OpAtan2:
		return func(a, b bool) bool { return a }
	case backend.OpRem, backend.OpMod:
		return func(a, b bool) bool { return false }
	case backend.OpPow:
		return func(a, b bool) bool { return a || !b }
	}
	panic(fmt.Sprintf("flex: binary op %v is not defined on bool", op))
}

// compare returns the scalar function of a comparison (NaN compares
// unequal to everything, as IEEE 754).
func compare[T number](op backend.BinaryOp) func(a, b T) bool {
	switch op {
	case backend.OpEq:
		return func(a, b T) bool { return a == b }
	case backend.OpNe:
		return func(a, b T) bool { return a != b }
	case backend.OpLt:
		return func(a, b T) bool { return a < b }
	case backend.OpLe:
		return func(a, b T) bool { return a <= b }
	case backend.OpGt:
		return func(a, b T) bool { return a > b }
	case backend.OpGe:
		return func(a, b T) bool { return a >= b }
	}
	panic(fmt.Sprintf("flex: %v is not a comparison", op))
}

// fastBinary returns a loop over contiguous rows for the common arithmetic
// ops, or nil.
func fastBinary[T number](op backend.BinaryOp) func(o, a, b []T) {
	switch op {
	case backend.OpAdd:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = a[i] + b[i]
			}
		}
	case backend.OpSub:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = a[i] - b[i]
			}
		}
	case backend.OpMul:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = a[i] * b[i]
			}
		}
	case backend.OpDiv:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = a[i] / b[i]
			}
		}
	case backend.OpMax:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = max(a[i], b[i])
			}
		}
	case backend.OpMin:
		return func(o, a, b []T) {
			a, b = a[:len(o)], b[:len(o)]
			for i := range o {
				o[i] = min(a[i], b[i])
			}
		}
	}
	return nil
}
