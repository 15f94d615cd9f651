package ndarray

import (
	"fmt"
	"math"

	"github.com/emberml/ember/ir"
)

// The scalar functions of the elementwise ops, one per storage class.
// Floats compute in float64 (their results are rounded to the dtype
// afterwards, see Tensor.normalize); integers compute in int64 or uint64
// and are wrapped to the dtype's width afterwards, which gives the
// dtype's own wrapping arithmetic for every op below.

// floatUnary returns the function of a unary op on floats.
func floatUnary(op ir.UnaryOp) func(float64) float64 {
	switch op {
	case ir.OpNeg:
		return func(x float64) float64 { return -x }
	case ir.OpAbs:
		return math.Abs
	case ir.OpSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0 // +0 for ±0 and NaN, as PyTorch's sign
		}
	case ir.OpExp:
		return math.Exp
	case ir.OpLog:
		return math.Log
	case ir.OpLog1p:
		return math.Log1p
	case ir.OpExpm1:
		return math.Expm1
	case ir.OpSqrt:
		return math.Sqrt
	case ir.OpRsqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }
	case ir.OpRecip:
		return func(x float64) float64 { return 1 / x }
	case ir.OpSin:
		return math.Sin
	case ir.OpCos:
		return math.Cos
	case ir.OpTanh:
		return math.Tanh
	case ir.OpSigmoid:
		return sigmoid
	case ir.OpErf:
		return math.Erf
	case ir.OpFloor:
		return math.Floor
	case ir.OpCeil:
		return math.Ceil
	case ir.OpRound:
		return math.RoundToEven
	}
	panic(fmt.Sprintf("ndarray: unary op %v is not defined on floats", op))
}

// sigmoid is 1/(1+e^-x) without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// integer is the constraint of integer storage.
type integer interface{ int64 | uint64 }

// intUnary returns the function of a unary op on integers: Neg wraps,
// the rounding ops are the identity, Not is bitwise.
func intUnary[T integer](op ir.UnaryOp) func(T) T {
	switch op {
	case ir.OpNeg:
		return func(x T) T { return 0 - x }
	case ir.OpAbs:
		return func(x T) T {
			if x < 0 {
				return 0 - x
			}
			return x
		}
	case ir.OpSign:
		return sgn[T]
	case ir.OpFloor, ir.OpCeil, ir.OpRound:
		return func(x T) T { return x }
	case ir.OpNot:
		return func(x T) T { return ^x }
	}
	panic(fmt.Sprintf("ndarray: unary op %v is not defined on integers", op))
}

// sgn is -1, 0 or 1 (never -1 for unsigned T).
func sgn[T integer](x T) T {
	var one T = 1
	switch {
	case x > 0:
		return one
	case x < 0:
		return 0 - one
	}
	return 0
}

// floatBinary returns the function of an arithmetic binary op on floats.
// Max and Min propagate NaN (Go's max and min).
func floatBinary(op ir.BinaryOp) func(a, b float64) float64 {
	switch op {
	case ir.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case ir.OpSub:
		return func(a, b float64) float64 { return a - b }
	case ir.OpMul:
		return func(a, b float64) float64 { return a * b }
	case ir.OpDiv:
		return func(a, b float64) float64 { return a / b }
	case ir.OpFloorDiv:
		return floorDiv
	case ir.OpRem:
		return math.Mod
	case ir.OpMod:
		return pyMod
	case ir.OpPow:
		return math.Pow
	case ir.OpMax:
		return func(a, b float64) float64 { return max(a, b) }
	case ir.OpMin:
		return func(a, b float64) float64 { return min(a, b) }
	case ir.OpAtan2:
		return math.Atan2
	}
	panic(fmt.Sprintf("ndarray: binary op %v is not defined on floats", op))
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

// intBinary returns the function of an arithmetic, bitwise or shift op on
// integers of the given width in bits. Div truncates (Go's /), FloorDiv
// floors, Rem takes the dividend's sign, Mod the divisor's; division by
// zero panics naming the op (the root package checks divisors first).
// Shifts by amounts outside [0, bits) give 0 (Shl) or the sign fill (Shr,
// arithmetic for signed dtypes).
func intBinary[T integer](op ir.BinaryOp, bits int) func(a, b T) T {
	zeroDiv := func(b T) {
		if b == 0 {
			panic(fmt.Errorf("ndarray: %v: integer division by zero", op))
		}
	}
	n := T(bits)
	switch op {
	case ir.OpAdd:
		return func(a, b T) T { return a + b }
	case ir.OpSub:
		return func(a, b T) T { return a - b }
	case ir.OpMul:
		return func(a, b T) T { return a * b }
	case ir.OpDiv:
		return func(a, b T) T { zeroDiv(b); return a / b }
	case ir.OpFloorDiv:
		return func(a, b T) T {
			zeroDiv(b)
			q := a / b
			if a%b != 0 && (a < 0) != (b < 0) {
				q--
			}
			return q
		}
	case ir.OpRem:
		return func(a, b T) T { zeroDiv(b); return a % b }
	case ir.OpMod:
		return func(a, b T) T {
			zeroDiv(b)
			r := a % b
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		}
	case ir.OpPow:
		return intPow[T]
	case ir.OpMax:
		return func(a, b T) T { return max(a, b) }
	case ir.OpMin:
		return func(a, b T) T { return min(a, b) }
	case ir.OpAnd:
		return func(a, b T) T { return a & b }
	case ir.OpOr:
		return func(a, b T) T { return a | b }
	case ir.OpXor:
		return func(a, b T) T { return a ^ b }
	case ir.OpShl:
		return func(a, b T) T {
			if b < 0 || b >= n {
				return 0
			}
			return a << b
		}
	case ir.OpShr:
		return func(a, b T) T {
			if b < 0 || b >= n {
				return sgn(a) >> 1 // the sign fill: all ones for negative a, else 0
			}
			return a >> b
		}
	}
	panic(fmt.Sprintf("ndarray: binary op %v is not defined on integers", op))
}

// intPow is a^b by repeated squaring, wrapping on overflow. A negative
// exponent gives the truncated value of 1/a^|b|: 1 for a = 1, ±1 for
// a = -1, otherwise 0 (as flex; PyTorch rejects negative integer powers).
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

// boolBinary returns the function of a logical op, Max (or) or Min (and)
// on Bool.
func boolBinary(op ir.BinaryOp) func(a, b bool) bool {
	switch op {
	case ir.OpMax, ir.OpOr:
		return func(a, b bool) bool { return a || b }
	case ir.OpMin, ir.OpAnd:
		return func(a, b bool) bool { return a && b }
	case ir.OpXor:
		return func(a, b bool) bool { return a != b }
	}
	panic(fmt.Sprintf("ndarray: binary op %v is not defined on bool", op))
}

// ordered is the constraint of storage that compares with < (Bool
// compares as 0 < 1 through compareBool).
type ordered interface{ float64 | int64 | uint64 }

// compare returns the function of a comparison (NaN compares unequal to
// everything, as IEEE 754).
func compare[T ordered](op ir.BinaryOp) func(a, b T) bool {
	switch op {
	case ir.OpEq:
		return func(a, b T) bool { return a == b }
	case ir.OpNe:
		return func(a, b T) bool { return a != b }
	case ir.OpLt:
		return func(a, b T) bool { return a < b }
	case ir.OpLe:
		return func(a, b T) bool { return a <= b }
	case ir.OpGt:
		return func(a, b T) bool { return a > b }
	case ir.OpGe:
		return func(a, b T) bool { return a >= b }
	}
	panic(fmt.Sprintf("ndarray: %v is not a comparison", op))
}

// compareBool is compare on Bool, ordering false < true.
func compareBool(op ir.BinaryOp) func(a, b bool) bool {
	c := compare[uint64](op)
	return func(a, b bool) bool { return c(b2u(a), b2u(b)) }
}

func b2u(x bool) uint64 {
	if x {
		return 1
	}
	return 0
}
