package ember

import (
	"math"
	"slices"
	"strconv"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// axis normalizes a possibly negative axis for a tensor of x's rank,
// panicking with an *Error that names the axis and the rank.
func (x *Tensor) axis(op string, axis int) int {
	x.need(op, "x")
	return normAxis(op, x, axis, x.Rank())
}

func normAxis(op string, x *Tensor, axis, rank int) int {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		fail(op, []string{describe("x", x)}, "axis %d is out of range for rank %d (valid: %d..%d)", axis, rank, -rank, rank-1)
	}
	return a
}

// commonDevice checks that all tensors live on the same hardware device and
// returns the device results live on: autodiff when any operand is, and
// autocast when any operand is (see joinDevices). Operands on the same
// hardware without autodiff are moved onto the autodiff device untracked.
func commonDevice(op string, names []string, xs ...*Tensor) Device {
	for i, x := range xs {
		if x == nil || x.t == nil {
			failNil(op, names, xs, i)
		}
	}
	dev := xs[0].dev
	for _, x := range xs[1:] {
		if !x.dev.Equal(dev) {
			ops := make([]string, len(xs))
			for i, y := range xs {
				ops[i] = describe(names[i], y)
			}
			fail(op, ops, "operands are on different devices; move them with ToDevice first")
		}
		if x.dev != dev {
			dev = joinDevices(dev, x.dev)
		}
	}
	return dev
}

// on returns x's primitive as seen by dev's backend (wrapping a
// non-autodiff tensor for an autodiff device).
func (x *Tensor) on(dev Device) backend.Tensor {
	if x.dev.autodiff == dev.autodiff {
		return x.t
	}
	return x.onOther(dev)
}

// onOther is on for a tensor of the other mode (kept out of on, so that
// on is inlined).
func (x *Tensor) onOther(dev Device) backend.Tensor {
	if dev.autodiff {
		return dev.ad().Wrap(x.t)
	}
	return x.dev.ad().Primal(x.t)
}

// castTo returns x converted to dt (x itself when already dt).
func (x *Tensor) castTo(dt DType) *Tensor {
	if x.DType() == dt {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindCast, DType: dt, In: [3]ir.Tensor{x.t}}, x)
}

// Cast converts the tensor to dt: float to int truncates toward zero, to
// F16/BF16 rounds to nearest even, to Bool is x != 0, Bool to numbers is 0/1.
// It panics with an *Error when the device does not support dt.
func (x *Tensor) Cast(dt DType) *Tensor {
	x.need("cast", "x")
	if !dt.Valid() || !x.dev.SupportsDType(dt) {
		fail("cast", []string{describe("x", x)}, "dtype %v is not supported on this device", dt)
	}
	return x.castTo(dt)
}

// BroadcastShapes returns the shape two shapes broadcast to (NumPy rules:
// align trailing axes; sizes must be equal or 1), or ok=false
// (ir.BroadcastShapes). The result may share a's storage.
func BroadcastShapes(a, b []int) (out []int, ok bool) {
	out, ok = ir.BroadcastShapes(a, b)
	return slices.Clone(out), ok
}

func (x *Tensor) binary(op backend.BinaryOp, y *Tensor) *Tensor { return x.binaryChecked(op, y, false) }

// binaryChecked is binary; nonZero says y is known to hold no zero (a
// non-zero scalar), which skips the host read of an integer divisor.
func (x *Tensor) binaryChecked(op backend.BinaryOp, y *Tensor, nonZero bool) *Tensor {
	dev := commonDevice2(op, x, y)
	x0, y0 := x, y
	xt, yt := x.DType(), y.DType()
	if op.IsLogical() || op.IsShift() {
		// Logical on Bool, bitwise on integers (Bool with an integer
		// promotes to the integer, as PyTorch's bitwise ops).
		if xt.IsFloat() || yt.IsFloat() || (op.IsShift() && (xt == Bool || yt == Bool)) {
			want := "Bool or integer"
			if op.IsShift() {
				want = "integer"
			}
			fail(op.String(), []string{describe("lhs", x), describe("rhs", y)}, "needs %s operands", want)
		}
		if dt := backend.Promote(xt, yt); xt != yt {
			x, y = x.castTo(dt), y.castTo(dt)
		}
	} else {
		dt := backend.Promote(xt, yt)
		if dt == Bool && !op.IsComparison() && op != backend.OpMax && op != backend.OpMin {
			dt = DType(dev.opSettings().IntDType)
		}
		if op == backend.OpAtan2 && !dt.IsFloat() {
			dt = DType(dev.opSettings().FloatDType)
		}
		if op == backend.OpDiv && !dt.IsFloat() && !xt.IsInt() {
			dt = DType(dev.opSettings().FloatDType)
		}
		if xt != dt {
			x = x.castTo(dt)
		}
		if yt != dt {
			y = y.castTo(dt)
		}
		if !nonZero && dt.IsInt() && (op == backend.OpDiv || op == backend.OpFloorDiv || op == backend.OpRem || op == backend.OpMod) {
			checkDivisor(dev, op.String(), x, y)
		}
	}
	return dev.run(&ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{x.on(dev), y.on(dev)}}, x0, y0)
}

// checkDivisor panics with an *Error naming op when the integer divisor y
// holds a zero, reading it to the host, unless dev checks divisors itself
// (backend.DivisorChecker: CUDA, remote, capture), where the next Sync or
// read reports a zero divisor and no device round trip is made here.
func checkDivisor(dev Device, op string, x, y *Tensor) {
	if checksDivisorsOnDevice(dev) {
		return
	}
	for _, v := range y.Int64s() {
		if v == 0 {
			fail(op, []string{describe("lhs", x), describe("rhs", y)}, "integer division by zero")
		}
	}
}

// checksDivisorsOnDevice reports whether dev's backend checks integer
// divisors itself (backend.DivisorChecker).
func checksDivisorsOnDevice(dev Device) bool {
	dc, ok := backend.As[backend.DivisorChecker](dev.backend())
	return ok && dc.ChecksDivisorsOnDevice()
}

// checksIndicesOnDevice reports whether dev's backend checks the indices
// of Gather, ScatterAdd and IndexSelect itself (backend.IndexChecker).
func checksIndicesOnDevice(dev Device) bool {
	ic, ok := backend.As[backend.IndexChecker](dev.backend())
	return ok && ic.ChecksIndicesOnDevice()
}

// commonDevice2 is commonDevice for the two operands of a binary op,
// without building name lists unless it fails.
func commonDevice2(op backend.BinaryOp, x, y *Tensor) Device {
	if x != nil && y != nil && x.dev.st == y.dev.st && x.dev.st != nil {
		if x.dev != y.dev {
			return joinDevices(x.dev, y.dev)
		}
		return x.dev
	}
	return commonDevice(op.String(), []string{"lhs", "rhs"}, x, y)
}

// scalar is the rank-0 tensor v in x's dtype, on x's device, for op: it
// panics with an *Error naming op when x is nil or v is not representable
// in x's integer dtype (NaN, an infinity, outside its range).
func (x *Tensor) scalar(op string, v float64) *Tensor {
	x.need(op, "x")
	dt := x.DType()
	if dt.IsInt() {
		if err := ir.ScalarFits(v, dt); err != nil {
			fail(op, []string{describe("x", x), "scalar " + strconv.FormatFloat(v, 'g', -1, 64)}, "%v", err)
		}
	}
	return x.dev.run(&ir.Op{Kind: ir.KindFull, DType: dt, Scalars: [2]float64{v}})
}

// compareScalar returns the Bool tensor x OP v for comparison op. For an
// integer x it is exact, as if v were not rounded: v is replaced by the
// integer with the same outcome (x < 2.5 is x < 3, x <= 2.5 is x <= 2)
// and, where none exists in x's dtype (NaN, infinities, values beyond its
// range, x == 2.5), the result is the constant outcome.
func (x *Tensor) compareScalar(op backend.BinaryOp, v float64) *Tensor {
	name := op.String()
	x.need(name, "x")
	if x.DType() == Bool {
		// Bool compares as the numbers 0 and 1, as PyTorch promotes it
		// against a Python float: true == 0.5 and x == NaN are false.
		x = x.castTo(U8)
	}
	if !x.DType().IsInt() {
		return x.binary(op, x.scalar(name, v))
	}
	c := v
	switch op {
	case backend.OpLt, backend.OpGe:
		c = math.Ceil(v)
	case backend.OpLe, backend.OpGt:
		c = math.Floor(v)
	case backend.OpEq:
		if c != math.Trunc(c) {
			return x.constBool(false)
		}
	}
	if ir.ScalarFits(c, x.DType()) == nil {
		return x.binary(op, x.scalar(name, c))
	}
	if math.IsNaN(v) || op == backend.OpEq {
		return x.constBool(false)
	}
	// c lies beyond one end of the dtype's range (which holds 0).
	above := v > 0
	return x.constBool(above == (op == backend.OpLt || op == backend.OpLe))
}

// constBool is the Bool tensor of x's shape holding b (a broadcast view).
func (x *Tensor) constBool(b bool) *Tensor {
	v := 0.0
	if b {
		v = 1
	}
	return FullDType(nil, v, Bool, x.dev).Expand(x.shape()...)
}

// Add returns x + y with broadcasting and type promotion (PromoteTypes).
// It panics with an *Error when the shapes do not broadcast or the devices differ.
func (x *Tensor) Add(y *Tensor) *Tensor { return x.binary(backend.OpAdd, y) }

// Sub returns x - y (broadcasting, promotion).
func (x *Tensor) Sub(y *Tensor) *Tensor { return x.binary(backend.OpSub, y) }

// Mul returns x * y elementwise (broadcasting, promotion).
func (x *Tensor) Mul(y *Tensor) *Tensor { return x.binary(backend.OpMul, y) }

// Div returns x / y: true division for floats; for ints it truncates toward
// zero like Go's /. An integer division by zero panics with an *Error on
// devices that check divisors on the host (flex, cpu: y is read back
// first); on devices that check them on the device (cuda, remote:
// backend.DivisorChecker) nothing is read back and the next Device.Sync
// or read returns an error wrapping ErrExecution that names the op.
func (x *Tensor) Div(y *Tensor) *Tensor { return x.binary(backend.OpDiv, y) }

// FloorDiv returns floor(x / y), like Python's //. An integer division by
// zero is reported as Div reports it.
func (x *Tensor) FloorDiv(y *Tensor) *Tensor { return x.binary(backend.OpFloorDiv, y) }

// Rem returns the remainder with the dividend's sign, like Go's % (math.Mod
// for floats). An integer division by zero is reported as Div reports it.
func (x *Tensor) Rem(y *Tensor) *Tensor { return x.binary(backend.OpRem, y) }

// Mod returns the remainder with the divisor's sign, like Python's %. An
// integer division by zero is reported as Div reports it.
func (x *Tensor) Mod(y *Tensor) *Tensor { return x.binary(backend.OpMod, y) }

// Pow returns x raised to y elementwise.
func (x *Tensor) Pow(y *Tensor) *Tensor { return x.binary(backend.OpPow, y) }

// Maximum returns the elementwise maximum (NaN propagates).
func (x *Tensor) Maximum(y *Tensor) *Tensor { return x.binary(backend.OpMax, y) }

// Minimum returns the elementwise minimum (NaN propagates).
func (x *Tensor) Minimum(y *Tensor) *Tensor { return x.binary(backend.OpMin, y) }

// Atan2 returns atan2(x, y) elementwise (float result).
func (x *Tensor) Atan2(y *Tensor) *Tensor { return x.binary(backend.OpAtan2, y) }

// Eq returns the Bool tensor x == y (broadcasting, promotion).
func (x *Tensor) Eq(y *Tensor) *Tensor { return x.binary(backend.OpEq, y) }

// Ne returns x != y as Bool.
func (x *Tensor) Ne(y *Tensor) *Tensor { return x.binary(backend.OpNe, y) }

// Lt returns x < y as Bool.
func (x *Tensor) Lt(y *Tensor) *Tensor { return x.binary(backend.OpLt, y) }

// Le returns x <= y as Bool.
func (x *Tensor) Le(y *Tensor) *Tensor { return x.binary(backend.OpLe, y) }

// Gt returns x > y as Bool.
func (x *Tensor) Gt(y *Tensor) *Tensor { return x.binary(backend.OpGt, y) }

// Ge returns x >= y as Bool.
func (x *Tensor) Ge(y *Tensor) *Tensor { return x.binary(backend.OpGe, y) }

// And returns the logical and of two Bool tensors, or the bitwise and of
// integer tensors (PyTorch's bitwise_and; a Bool operand with an integer
// one promotes to the integer dtype). It panics with an *Error for float
// operands.
func (x *Tensor) And(y *Tensor) *Tensor { return x.binary(backend.OpAnd, y) }

// Or returns the logical or of two Bool tensors, or the bitwise or of
// integer tensors (PyTorch's bitwise_or), as And.
func (x *Tensor) Or(y *Tensor) *Tensor { return x.binary(backend.OpOr, y) }

// Xor returns the logical exclusive or of two Bool tensors, or the bitwise
// exclusive or of integer tensors (PyTorch's bitwise_xor), as And.
func (x *Tensor) Xor(y *Tensor) *Tensor { return x.binary(backend.OpXor, y) }

// ShiftLeft returns x << y elementwise for integer tensors, broadcast and
// promoted (PyTorch's bitwise_left_shift): bits shifted out are lost, the
// result wraps to the dtype, and a shift by a negative amount or by at
// least the dtype's width gives 0. It panics with an *Error for Bool or
// float operands.
func (x *Tensor) ShiftLeft(y *Tensor) *Tensor { return x.binary(backend.OpShl, y) }

// ShiftRight returns x >> y elementwise for integer tensors, arithmetic
// for signed dtypes (PyTorch's bitwise_right_shift): a shift by a negative
// amount or by at least the dtype's width gives -1 for negative x and 0
// otherwise. It panics as ShiftLeft.
func (x *Tensor) ShiftRight(y *Tensor) *Tensor { return x.binary(backend.OpShr, y) }

// ShiftLeftScalar is ShiftLeft by the constant n (any int).
func (x *Tensor) ShiftLeftScalar(n int) *Tensor { return x.ShiftLeft(x.shiftAmount("shl", n)) }

// ShiftRightScalar is ShiftRight by the constant n (any int).
func (x *Tensor) ShiftRightScalar(n int) *Tensor { return x.ShiftRight(x.shiftAmount("shr", n)) }

// shiftAmount is n as a scalar of x's dtype: amounts outside [0, 64]
// shift as 64 does (everything out), so every int is representable.
func (x *Tensor) shiftAmount(op string, n int) *Tensor {
	x.need(op, "x")
	if n < 0 || n > 64 {
		n = 64
	}
	if !x.DType().IsInt() {
		return x.scalar(op, 0) // the shift reports the dtype
	}
	return x.scalar(op, float64(n))
}

// AddScalar returns x + v (v converted to x's dtype). For an integer x it
// panics with an *Error when v is NaN, infinite or outside the dtype's
// range, as every scalar op of arithmetic does.
func (x *Tensor) AddScalar(v float64) *Tensor { return x.Add(x.scalar("add", v)) }

// SubScalar returns x - v (v converted to x's dtype, as in AddScalar).
func (x *Tensor) SubScalar(v float64) *Tensor { return x.Sub(x.scalar("sub", v)) }

// MulScalar returns x * v (v converted to x's dtype, as in AddScalar).
func (x *Tensor) MulScalar(v float64) *Tensor { return x.Mul(x.scalar("mul", v)) }

// DivScalar returns x / v (v converted to x's dtype, as in AddScalar;
// an integer x divided by a v that truncates to 0 panics with an *Error on
// every device: v is known on the host).
func (x *Tensor) DivScalar(v float64) *Tensor {
	s := x.scalar("div", v)
	if x.DType().IsInt() && v > -1 && v < 1 {
		fail("div", []string{describe("lhs", x), describe("rhs", s)}, "integer division by zero")
	}
	return x.binaryChecked(backend.OpDiv, s, true)
}

// PowScalar returns x raised to v. For a float x, v = 0.5 is Sqrt (so the
// gradient at -0 is -Inf, as PyTorch's pow, which also takes the square
// root there).
func (x *Tensor) PowScalar(v float64) *Tensor {
	if v == 0.5 && x != nil && x.t != nil && x.DType().IsFloat() {
		return x.Sqrt()
	}
	return x.Pow(x.scalar("pow", v))
}

// EqScalar returns x == v as Bool. For an integer or Bool x (Bool as 0
// and 1) every comparison with
// a scalar is exact, as if v kept its value: x == 2.5 is false, x < 2.5 is
// x <= 2, x < +Inf is true, any comparison with NaN is false.
func (x *Tensor) EqScalar(v float64) *Tensor { return x.compareScalar(backend.OpEq, v) }

// GtScalar returns x > v as Bool (exact for an integer x, see EqScalar).
func (x *Tensor) GtScalar(v float64) *Tensor { return x.compareScalar(backend.OpGt, v) }

// GeScalar returns x >= v as Bool (exact for an integer x, see EqScalar).
func (x *Tensor) GeScalar(v float64) *Tensor { return x.compareScalar(backend.OpGe, v) }

// LtScalar returns x < v as Bool (exact for an integer x, see EqScalar).
func (x *Tensor) LtScalar(v float64) *Tensor { return x.compareScalar(backend.OpLt, v) }

// LeScalar returns x <= v as Bool (exact for an integer x, see EqScalar).
func (x *Tensor) LeScalar(v float64) *Tensor { return x.compareScalar(backend.OpLe, v) }

// MaximumScalar returns max(x, v) elementwise.
func (x *Tensor) MaximumScalar(v float64) *Tensor { return x.Maximum(x.scalar("max", v)) }

// MinimumScalar returns min(x, v) elementwise.
func (x *Tensor) MinimumScalar(v float64) *Tensor { return x.Minimum(x.scalar("min", v)) }

func (x *Tensor) unary(op backend.UnaryOp) *Tensor {
	x.need(op.String(), "x")
	switch op {
	case backend.OpNot:
		if x.DType().IsFloat() {
			fail(op.String(), []string{describe("x", x)}, "needs a Bool or integer tensor")
		}
	case backend.OpNeg, backend.OpAbs, backend.OpSign:
		if x.DType() == Bool {
			fail(op.String(), []string{describe("x", x)}, "not defined for Bool tensors")
		}
	case backend.OpFloor, backend.OpCeil, backend.OpRound:
		if !x.DType().IsFloat() {
			return x
		}
	default:
		if !x.DType().IsFloat() {
			x = x.castTo(DType(x.dev.opSettings().FloatDType))
		}
	}
	return x.dev.run(&ir.Op{Kind: ir.KindUnary, Sub: uint8(op), In: [3]ir.Tensor{x.t}}, x)
}

// Neg returns -x (integers wrap).
func (x *Tensor) Neg() *Tensor { return x.unary(backend.OpNeg) }

// Abs returns |x|.
func (x *Tensor) Abs() *Tensor { return x.unary(backend.OpAbs) }

// Sign returns -1, 0 or 1 elementwise: +0 for ±0 and NaN, as PyTorch's sign.
func (x *Tensor) Sign() *Tensor { return x.unary(backend.OpSign) }

// Exp returns e^x (ints are first cast to the device's float dtype, as all float-only ops).
func (x *Tensor) Exp() *Tensor { return x.unary(backend.OpExp) }

// Log returns the natural logarithm.
func (x *Tensor) Log() *Tensor { return x.unary(backend.OpLog) }

// Log1p returns log(1 + x), accurate near 0.
func (x *Tensor) Log1p() *Tensor { return x.unary(backend.OpLog1p) }

// Expm1 returns e^x - 1, accurate near 0.
func (x *Tensor) Expm1() *Tensor { return x.unary(backend.OpExpm1) }

// Sqrt returns the square root.
func (x *Tensor) Sqrt() *Tensor { return x.unary(backend.OpSqrt) }

// Rsqrt returns 1 / sqrt(x).
func (x *Tensor) Rsqrt() *Tensor { return x.unary(backend.OpRsqrt) }

// Recip returns 1 / x.
func (x *Tensor) Recip() *Tensor { return x.unary(backend.OpRecip) }

// Sin returns the sine.
func (x *Tensor) Sin() *Tensor { return x.unary(backend.OpSin) }

// Cos returns the cosine.
func (x *Tensor) Cos() *Tensor { return x.unary(backend.OpCos) }

// Tanh returns the hyperbolic tangent.
func (x *Tensor) Tanh() *Tensor { return x.unary(backend.OpTanh) }

// Sigmoid returns 1 / (1 + e^-x), computed without overflow.
func (x *Tensor) Sigmoid() *Tensor { return x.unary(backend.OpSigmoid) }

// Erf returns the error function.
func (x *Tensor) Erf() *Tensor { return x.unary(backend.OpErf) }

// Floor rounds toward -Inf (identity for ints).
func (x *Tensor) Floor() *Tensor { return x.unary(backend.OpFloor) }

// Ceil rounds toward +Inf (identity for ints).
func (x *Tensor) Ceil() *Tensor { return x.unary(backend.OpCeil) }

// Round rounds half to even (identity for ints).
func (x *Tensor) Round() *Tensor { return x.unary(backend.OpRound) }

// Not returns the logical negation of a Bool tensor, or the bitwise
// complement ^x of an integer tensor (PyTorch's bitwise_not). It panics
// with an *Error for float tensors.
func (x *Tensor) Not() *Tensor { return x.unary(backend.OpNot) }

// Where returns a where cond is true, else b, elementwise with broadcasting
// of all three; a and b are promoted to a common dtype. cond must be Bool.
func Where(cond, a, b *Tensor) *Tensor {
	dev := commonDevice("where", []string{"cond", "a", "b"}, cond, a, b)
	ops := []string{describe("cond", cond), describe("a", a), describe("b", b)}
	if cond.DType() != Bool {
		fail("where", ops, "condition must be Bool")
	}
	s, ok := ir.BroadcastShapes(cond.shape(), a.shape())
	if ok {
		_, ok = ir.BroadcastShapes(s, b.shape())
	}
	if !ok {
		fail("where", ops, "shapes do not broadcast")
	}
	a0, b0 := a, b
	dt := backend.Promote(a.DType(), b.DType())
	a, b = a.castTo(dt), b.castTo(dt)
	return dev.run(&ir.Op{Kind: ir.KindWhere, In: [3]ir.Tensor{cond.on(dev), a.on(dev), b.on(dev)}}, cond, a0, b0)
}

// MaskFill returns x with value wherever mask (Bool, broadcast to x) is true.
func (x *Tensor) MaskFill(mask *Tensor, value float64) *Tensor {
	commonDevice("mask_fill", []string{"x", "mask"}, x, mask)
	return Where(mask, x.scalar("mask_fill", value), x)
}
