package autodiff

import (
	"math"

	"github.com/emberml/ember/backend"
)

// Unary runs op on the inner backend and records its derivative (PyTorch's
// derivatives.yaml): Sign, Floor, Ceil and Round have a zero gradient; Abs
// has gradient sign(x) (0 at 0); the others are the textbook derivatives
// expressed through the input or the output. Not (Bool) is never tracked.
func (b *Backend) Unary(uop backend.UnaryOp, x backend.Tensor) backend.Tensor {
	o := op{prim: PrimUnary, fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Unary(uop, in[0]) }}
	switch uop {
	case backend.OpAbs, backend.OpLog, backend.OpLog1p, backend.OpSin, backend.OpCos, backend.OpErf:
		o.needIn = 1
	case backend.OpExp, backend.OpExpm1, backend.OpSqrt, backend.OpRsqrt, backend.OpRecip, backend.OpTanh, backend.OpSigmoid:
		o.needOut = true
	}
	o.bwd = func(s *state, g backend.Tensor) []backend.Tensor {
		return []backend.Tensor{b.unaryGrad(uop, s, g)}
	}
	return b.record(o, x)
}

func (b *Backend) unaryGrad(uop backend.UnaryOp, s *state, g backend.Tensor) backend.Tensor {
	in := b.inner
	switch uop {
	case backend.OpNeg:
		return b.neg(g)
	case backend.OpAbs:
		return b.mul(g, in.Unary(backend.OpSign, s.in(0)))
	case backend.OpExp:
		return b.mul(g, s.out())
	case backend.OpLog:
		return b.div(g, s.in(0))
	case backend.OpLog1p:
		return b.div(g, b.addS(s.in(0), 1))
	case backend.OpExpm1:
		return b.mul(g, b.addS(s.out(), 1))
	case backend.OpSqrt: // g / (2·sqrt(x))
		return b.div(g, b.mulS(s.out(), 2))
	case backend.OpRsqrt: // -½·g·y³
		y := s.out()
		return b.mul(b.mulS(g, -0.5), b.mul(b.mul(y, y), y))
	case backend.OpRecip: // -g·y²
		y := s.out()
		return b.neg(b.mul(g, b.mul(y, y)))
	case backend.OpSin:
		return b.mul(g, in.Unary(backend.OpCos, s.in(0)))
	case backend.OpCos:
		return b.neg(b.mul(g, in.Unary(backend.OpSin, s.in(0))))
	case backend.OpTanh: // g·(1-y²)
		y := s.out()
		return b.mul(g, b.sub(b.scalar(y.DType(), 1), b.mul(y, y)))
	case backend.OpSigmoid: // g·y·(1-y)
		y := s.out()
		return b.mul(g, b.mul(y, b.sub(b.scalar(y.DType(), 1), y)))
	case backend.OpErf: // g·2/√π·e^(-x²)
		x := s.in(0)
		e := in.Unary(backend.OpExp, b.neg(b.mul(x, x)))
		return b.mul(b.mulS(g, 2/math.SqrtPi), e)
	default: // Sign, Floor, Ceil, Round: zero almost everywhere.
		return b.zeros(g.Shape(), g.DType())
	}
}

// Binary runs op on the inner backend (operands broadcast) and records the
// gradients of both operands, each summed back to its operand's shape.
// Rules (PyTorch's derivatives.yaml): Pow's exponent gradient is a^b·ln a,
// taken as 0 where a == 0 and b >= 0; Max/Min send the gradient to the
// larger/smaller operand and split it 0.5/0.5 on ties (PyTorch's
// maximum/minimum); Atan2(a, b) has gradients b/(a²+b²) and -a/(a²+b²);
// FloorDiv has zero gradients; Rem (truncated) and Mod (floored) have
// gradient 1 for a and -trunc(a/b) respectively -floor(a/b) for b.
// Comparisons and logical ops return Bool and are never tracked.
func (b *Backend) Binary(bop backend.BinaryOp, x, y backend.Tensor) backend.Tensor {
	o := op{prim: PrimBinary, fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Binary(bop, in[0], in[1]) }}
	switch bop {
	case backend.OpAdd, backend.OpSub, backend.OpFloorDiv:
	case backend.OpPow:
		o.needIn, o.needOut = 3, true
	case backend.OpMul: // a's gradient reads b, b's reads a
		if _, n := unwrap(y); n != nil {
			o.needIn |= 1
		}
		if _, n := unwrap(x); n != nil {
			o.needIn |= 2
		}
	default:
		o.needIn = 3
	}
	o.bwd = func(s *state, g backend.Tensor) []backend.Tensor {
		ga, gb := b.binaryGrad(bop, s, g)
		if s.wants(0) && ga != nil {
			ga = b.sumTo(ga, s.inShape(0))
		}
		if s.wants(1) && gb != nil {
			gb = b.sumTo(gb, s.inShape(1))
		}
		return []backend.Tensor{ga, gb}
	}
	return b.record(o, x, y)
}

// binaryGrad returns the gradients of both operands at the output's
// (broadcast) shape; an operand's entry is nil when it is not wanted.
func (b *Backend) binaryGrad(bop backend.BinaryOp, s *state, g backend.Tensor) (ga, gb backend.Tensor) {
	in := b.inner
	wa, wb := s.wants(0), s.wants(1)
	switch bop {
	case backend.OpAdd:
		ga, gb = g, g
	case backend.OpSub:
		ga = g
		if wb {
			gb = b.neg(g)
		}
	case backend.OpMul:
		if wa {
			ga = b.mul(g, s.in(1))
		}
		if wb {
			gb = b.mul(g, s.in(0))
		}
	case backend.OpDiv:
		bv := s.in(1)
		if wa {
			ga = b.div(g, bv)
		}
		if wb { // -g·a/b²
			gb = b.neg(b.div(b.mul(g, s.in(0)), b.mul(bv, bv)))
		}
	case backend.OpPow:
		av, bv := s.in(0), s.in(1)
		if wa { // g·b·a^(b-1), 0 where b == 0 (PyTorch's pow_backward_self)
			t := b.mul(bv, in.Binary(backend.OpPow, av, b.addS(bv, -1)))
			ga = b.mul(g, in.Where(b.cmpS(backend.OpEq, bv, 0), b.scalar(t.DType(), 0), t))
		}
		if wb { // g·a^b·ln a, 0 where a == 0 and b >= 0
			t := b.mul(s.out(), in.Unary(backend.OpLog, av))
			zero := in.Binary(backend.OpAnd, b.cmpS(backend.OpEq, av, 0), b.cmpS(backend.OpGe, bv, 0))
			gb = b.mul(g, in.Where(zero, b.scalar(t.DType(), 0), t))
		}
	case backend.OpMax, backend.OpMin:
		av, bv := s.in(0), s.in(1)
		win := backend.OpGt
		if bop == backend.OpMin {
			win = backend.OpLt
		}
		tie := in.Binary(backend.OpEq, av, bv)
		half := b.scalar(g.DType(), 0.5)
		zero := b.scalar(g.DType(), 0)
		if wa {
			ga = b.mul(g, in.Where(in.Binary(win, av, bv), b.scalar(g.DType(), 1), in.Where(tie, half, zero)))
		}
		if wb {
			gb = b.mul(g, in.Where(in.Binary(win, bv, av), b.scalar(g.DType(), 1), in.Where(tie, half, zero)))
		}
	case backend.OpAtan2:
		av, bv := s.in(0), s.in(1)
		den := b.add(b.mul(av, av), b.mul(bv, bv))
		if wa {
			ga = b.div(b.mul(g, bv), den)
		}
		if wb {
			gb = b.neg(b.div(b.mul(g, av), den))
		}
	case backend.OpRem, backend.OpMod:
		ga = g
		if wb {
			q := b.div(s.in(0), s.in(1))
			if bop == backend.OpRem {
				q = b.trunc(q)
			} else {
				q = in.Unary(backend.OpFloor, q)
			}
			gb = b.neg(b.mul(g, q))
		}
	default: // FloorDiv: zero almost everywhere.
		if wa {
			ga = b.zeros(g.Shape(), g.DType())
		}
		if wb {
			gb = b.zeros(g.Shape(), g.DType())
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

// Where selects a where cond holds, else c, and records the gradient going
// to the selected operand (the other gets 0), each summed back to its
// operand's shape. cond (Bool) is never tracked.
func (b *Backend) Where(cond, x, y backend.Tensor) backend.Tensor {
	o := op{prim: PrimWhere, needIn: 1,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Where(in[0], in[1], in[2]) },
	}
	o.bwd = func(s *state, g backend.Tensor) []backend.Tensor {
		out := make([]backend.Tensor, 3)
		c := s.in(0)
		zero := b.scalar(g.DType(), 0)
		if s.wants(1) {
			out[1] = b.sumTo(b.inner.Where(c, g, zero), s.inShape(1))
		}
		if s.wants(2) {
			out[2] = b.sumTo(b.inner.Where(c, zero, g), s.inShape(2))
		}
		return out
	}
	return b.record(o, cond, x, y)
}

// Cast converts x to dt and records the gradient cast back to x's dtype
// (float to float only: an int or Bool result is never tracked).
func (b *Backend) Cast(x backend.Tensor, dt backend.DType) backend.Tensor {
	src := x.DType()
	return b.record(op{prim: PrimCast,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Cast(in[0], dt) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.inner.Cast(g, src)}
		},
	}, x)
}
