package autodiff

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	register(ir.KindUnary, rule{saves: unarySaves, backward: unaryBackward})
	register(ir.KindBinary, rule{saves: binarySaves, backward: binaryBackward})
	register(ir.KindWhere, rule{in: 1, backward: whereBackward})
	register(ir.KindCast, rule{backward: castBackward})
}

// unarySaves: the derivative is expressed through the input (Abs, Log,
// Log1p, Sin, Cos, Erf), through the output (Exp, Expm1, Sqrt, Rsqrt,
// Recip, Tanh, Sigmoid) or through neither.
func unarySaves(op *ir.Op, _ uint64) (uint64, uint8) {
	switch ir.UnaryOp(op.Sub) {
	case ir.OpAbs, ir.OpLog, ir.OpLog1p, ir.OpSin, ir.OpCos, ir.OpErf:
		return 1, 0
	case ir.OpExp, ir.OpExpm1, ir.OpSqrt, ir.OpRsqrt, ir.OpRecip, ir.OpTanh, ir.OpSigmoid:
		return 0, 1
	}
	return 0, 0
}

// unaryBackward is the derivative of a unary op (PyTorch's
// derivatives.yaml): Sign, Floor, Ceil and Round have a zero gradient; Abs
// has gradient sign(x) (0 at 0); the others are the textbook derivatives
// expressed through the input or the output. Not (Bool) is never tracked.
func unaryBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	switch ir.UnaryOp(s.op().Sub) {
	case ir.OpNeg:
		dx[0] = ir.Neg(e, g)
	case ir.OpAbs:
		dx[0] = ir.Mul(e, g, ir.Unary(e, ir.OpSign, s.in(0)))
	case ir.OpExp:
		dx[0] = ir.Mul(e, g, s.out(0))
	case ir.OpLog:
		dx[0] = ir.Div(e, g, s.in(0))
	case ir.OpLog1p:
		dx[0] = ir.Div(e, g, ir.AddScalar(e, s.in(0), 1))
	case ir.OpExpm1:
		dx[0] = ir.Mul(e, g, ir.AddScalar(e, s.out(0), 1))
	case ir.OpSqrt: // g / (2·sqrt(x))
		dx[0] = ir.Div(e, g, ir.MulScalar(e, s.out(0), 2))
	case ir.OpRsqrt: // -½·g·y³
		y := s.out(0)
		dx[0] = ir.Mul(e, ir.MulScalar(e, g, -0.5), ir.Mul(e, ir.Mul(e, y, y), y))
	case ir.OpRecip: // -g·y²
		y := s.out(0)
		dx[0] = ir.Neg(e, ir.Mul(e, g, ir.Mul(e, y, y)))
	case ir.OpSin:
		dx[0] = ir.Mul(e, g, ir.Unary(e, ir.OpCos, s.in(0)))
	case ir.OpCos:
		dx[0] = ir.Neg(e, ir.Mul(e, g, ir.Unary(e, ir.OpSin, s.in(0))))
	case ir.OpTanh: // g·(1-y²)
		y := s.out(0)
		dx[0] = ir.Mul(e, g, ir.Sub(e, ir.Scalar(e, y.DType(), 1), ir.Mul(e, y, y)))
	case ir.OpSigmoid: // g·y·(1-y)
		y := s.out(0)
		dx[0] = ir.Mul(e, g, ir.Mul(e, y, ir.Sub(e, ir.Scalar(e, y.DType(), 1), y)))
	case ir.OpErf: // g·2/√π·e^(-x²)
		x := s.in(0)
		ex := ir.Unary(e, ir.OpExp, ir.Neg(e, ir.Mul(e, x, x)))
		dx[0] = ir.Mul(e, ir.MulScalar(e, g, 2/math.SqrtPi), ex)
	default: // Sign, Floor, Ceil, Round: zero almost everywhere.
		dx[0] = ir.Zeros(e, g.Shape(), g.DType())
	}
}

// binarySaves: Add, Sub and FloorDiv read nothing; Mul reads the other
// operand of each tracked one; Pow reads both operands and the output; the
// others read both operands.
func binarySaves(op *ir.Op, tracked uint64) (uint64, uint8) {
	switch ir.BinaryOp(op.Sub) {
	case ir.OpAdd, ir.OpSub, ir.OpFloorDiv:
		return 0, 0
	case ir.OpPow:
		return 3, 1
	case ir.OpMul: // a's gradient reads b, b's reads a
		var in uint64
		if tracked&2 != 0 {
			in |= 1
		}
		if tracked&1 != 0 {
			in |= 2
		}
		return in, 0
	}
	return 3, 0
}

// binaryBackward gives the gradients of both operands (operands broadcast),
// each summed back to its operand's shape. Rules (PyTorch's
// derivatives.yaml): Pow's exponent gradient is a^b·ln a, taken as 0 where
// a == 0 and b >= 0; Max/Min send the gradient to the larger/smaller
// operand and split it 0.5/0.5 on ties (PyTorch's maximum/minimum);
// Atan2(a, b) has gradients b/(a²+b²) and -a/(a²+b²); FloorDiv has zero
// gradients; Rem (truncated) and Mod (floored) have gradient 1 for a and
// -trunc(a/b) respectively -floor(a/b) for b. Comparisons and logical ops
// return Bool and are never tracked.
func binaryBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	ga, gb := binaryGrad(s, ir.BinaryOp(s.op().Sub), gs[0])
	if s.wants(0) && ga != nil {
		ga = ir.SumTo(s.e, ga, s.inShape(0))
	}
	if s.wants(1) && gb != nil {
		gb = ir.SumTo(s.e, gb, s.inShape(1))
	}
	dx[0], dx[1] = ga, gb
}

// binaryGrad returns the gradients of both operands at the output's
// (broadcast) shape; an operand's entry is nil when it is not wanted.
func binaryGrad(s *state, bop ir.BinaryOp, g backend.Tensor) (ga, gb backend.Tensor) {
	e := s.e
	wa, wb := s.wants(0), s.wants(1)
	switch bop {
	case ir.OpAdd:
		ga, gb = g, g
	case ir.OpSub:
		ga = g
		if wb {
			gb = ir.Neg(e, g)
		}
	case ir.OpMul:
		if wa {
			ga = ir.Mul(e, g, s.in(1))
		}
		if wb {
			gb = ir.Mul(e, g, s.in(0))
		}
	case ir.OpDiv:
		bv := s.in(1)
		if wa {
			ga = ir.Div(e, g, bv)
		}
		if wb { // -g·a/b²
			gb = ir.Neg(e, ir.Div(e, ir.Mul(e, g, s.in(0)), ir.Mul(e, bv, bv)))
		}
	case ir.OpPow:
		av, bv := s.in(0), s.in(1)
		if wa { // g·b·a^(b-1), 0 where b == 0 (PyTorch's pow_backward_self)
			t := ir.Mul(e, bv, ir.Binary(e, ir.OpPow, av, ir.AddScalar(e, bv, -1)))
			ga = ir.Mul(e, g, ir.Where(e, ir.CompareScalar(e, ir.OpEq, bv, 0), ir.Scalar(e, t.DType(), 0), t))
		}
		if wb { // g·a^b·ln a, 0 where a == 0 and b >= 0
			t := ir.Mul(e, s.out(0), ir.Unary(e, ir.OpLog, av))
			zero := ir.Binary(e, ir.OpAnd, ir.CompareScalar(e, ir.OpEq, av, 0), ir.CompareScalar(e, ir.OpGe, bv, 0))
			gb = ir.Mul(e, g, ir.Where(e, zero, ir.Scalar(e, t.DType(), 0), t))
		}
	case ir.OpMax, ir.OpMin:
		// PyTorch's rule: g/2 to each of tied operands, 0 to the one
		// that loses, g otherwise, so both get g where either is NaN.
		av, bv := s.in(0), s.in(1)
		lose := ir.OpLt
		if bop == ir.OpMin {
			lose = ir.OpGt
		}
		tie := ir.Binary(e, ir.OpEq, av, bv)
		half := ir.Scalar(e, g.DType(), 0.5)
		zero := ir.Scalar(e, g.DType(), 0)
		one := ir.Scalar(e, g.DType(), 1)
		if wa {
			ga = ir.Mul(e, g, ir.Where(e, tie, half, ir.Where(e, ir.Binary(e, lose, av, bv), zero, one)))
		}
		if wb {
			gb = ir.Mul(e, g, ir.Where(e, tie, half, ir.Where(e, ir.Binary(e, lose, bv, av), zero, one)))
		}
	case ir.OpAtan2:
		// g·b/(a²+b²) and −g·a/(a²+b²), with 1/(a²+b²) taken as 0 where it
		// is infinite (at the origin), as PyTorch's atan2 backward.
		av, bv := s.in(0), s.in(1)
		den := ir.Add(e, ir.Mul(e, av, av), ir.Mul(e, bv, bv))
		recip := ir.Div(e, ir.Scalar(e, den.DType(), 1), den)
		recip = ir.Where(e, ir.CompareScalar(e, ir.OpEq, recip, math.Inf(1)), ir.Scalar(e, den.DType(), 0), recip)
		if wa {
			ga = ir.Mul(e, ir.Mul(e, g, bv), recip)
		}
		if wb {
			gb = ir.Neg(e, ir.Mul(e, ir.Mul(e, g, av), recip))
		}
	case ir.OpRem, ir.OpMod:
		ga = g
		if wb {
			q := ir.Div(e, s.in(0), s.in(1))
			if bop == ir.OpRem {
				q = trunc(e, q)
			} else {
				q = ir.Unary(e, ir.OpFloor, q)
			}
			gb = ir.Neg(e, ir.Mul(e, g, q))
		}
	default: // FloorDiv: zero almost everywhere.
		if wa {
			ga = ir.Zeros(e, g.Shape(), g.DType())
		}
		if wb {
			gb = ir.Zeros(e, g.Shape(), g.DType())
		}
	}
	if !wa {
		ga = nil
	}
	if !wb {
		gb = nil
	}
	return ga, gb
}

// trunc rounds toward zero: sign(x)·floor(|x|).
func trunc(e ir.Executor, x backend.Tensor) backend.Tensor {
	return ir.Mul(e, ir.Unary(e, ir.OpSign, x), ir.Unary(e, ir.OpFloor, ir.Unary(e, ir.OpAbs, x)))
}

// whereBackward sends the gradient to the selected operand (the other gets
// 0), each summed back to its operand's shape. cond (Bool) is never
// tracked.
func whereBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	c := s.in(0)
	zero := ir.Scalar(e, g.DType(), 0)
	if s.wants(1) {
		dx[1] = ir.SumTo(e, ir.Where(e, c, g, zero), s.inShape(1))
	}
	if s.wants(2) {
		dx[2] = ir.SumTo(e, ir.Where(e, c, zero, g), s.inShape(2))
	}
}

// castBackward casts the gradient back to the input's dtype (float to
// float only: an int or Bool result is never tracked).
func castBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	dx[0] = ir.Cast(s.e, gs[0], s.n.dt0)
}
