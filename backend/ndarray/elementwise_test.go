package ndarray

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refUnary is the float64 definition of each float unary op.
var refUnary = map[ir.UnaryOp]func(float64) float64{
	ir.OpNeg: func(x float64) float64 { return -x }, ir.OpAbs: math.Abs,
	ir.OpSign: func(x float64) float64 { return float64(map[bool]int{true: 1}[x > 0] - map[bool]int{true: 1}[x < 0]) },
	ir.OpExp:  math.Exp, ir.OpLog: math.Log, ir.OpLog1p: math.Log1p, ir.OpExpm1: math.Expm1,
	ir.OpSqrt: math.Sqrt, ir.OpRsqrt: func(x float64) float64 { return math.Pow(x, -0.5) },
	ir.OpRecip: func(x float64) float64 { return 1 / x }, ir.OpSin: math.Sin, ir.OpCos: math.Cos,
	ir.OpTanh: math.Tanh, ir.OpSigmoid: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	ir.OpErf: math.Erf, ir.OpFloor: math.Floor, ir.OpCeil: math.Ceil, ir.OpRound: math.RoundToEven,
}

func TestUnaryFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shape := []int{3, 5}
	for _, dt := range floatDTypes {
		for op, f := range refUnary {
			x := randVals(rng, numel(shape), 0.1, 3.5, dt)
			if op == ir.OpLog || op == ir.OpSqrt || op == ir.OpRsqrt || op == ir.OpLog1p {
				for i := range x {
					x[i] = math.Abs(x[i])
				}
			}
			got := vals(t, run(t, ir.Op{Kind: ir.KindUnary, Sub: uint8(op), In: [3]ir.Tensor{mk(dt, shape, x)}}))
			for i, v := range x {
				if want := quant(f(v), dt); !near(got[i], want, dt) {
					t.Errorf("%v %v(%v) = %v, want %v", dt, op, v, got[i], want)
				}
			}
		}
	}
}

// Edge values of the float unary ops, hand-worked.
func TestUnaryFloatEdges(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		op   ir.UnaryOp
		in   []float64
		want []float64
	}{
		{ir.OpSign, []float64{nan, math.Copysign(0, -1), -3, 2}, []float64{0, 0, -1, 1}},
		{ir.OpRound, []float64{0.5, 1.5, 2.5, -0.5, -2.5, 3.5}, []float64{0, 2, 2, math.Copysign(0, -1), -2, 4}},
		{ir.OpSigmoid, []float64{-800, 800, 0}, []float64{0, 1, 0.5}},
		{ir.OpLog, []float64{0, -1, inf}, []float64{-inf, nan, inf}},
		{ir.OpRecip, []float64{0, math.Copysign(0, -1)}, []float64{inf, -inf}},
	}
	for _, c := range cases {
		got := vals(t, run(t, ir.Op{Kind: ir.KindUnary, Sub: uint8(c.op), In: [3]ir.Tensor{mk(backend.F32, []int{len(c.in)}, c.in)}}))
		for i := range c.in {
			if !sameBits(got[i], c.want[i]) {
				t.Errorf("%v(%v) = %v, want %v", c.op, c.in[i], got[i], c.want[i])
			}
		}
	}
}

// wrap reduces the exact integer v to dt's width (two's complement) and
// returns the dtype's value as big.Int, the reference of integer results.
func wrap(v *big.Int, dt backend.DType) int64 {
	bits := uint(8 * dt.Size())
	m := new(big.Int).Lsh(big.NewInt(1), bits)
	r := new(big.Int).Mod(v, m) // in [0, 2^bits)
	if dt.IsSigned() && r.Cmp(new(big.Int).Rsh(m, 1)) >= 0 {
		r.Sub(r, m)
	}
	if !r.IsInt64() { // U64 above MaxInt64: its bits as an int64
		return int64(r.Uint64())
	}
	return r.Int64()
}

// intRange is the range random operands of dt are drawn from, as int64
// (U64: every bit pattern, which mkI converts to U64 unchanged).
func intRange(dt backend.DType) (lo, hi int64) {
	if dt == backend.U64 {
		return math.MinInt64, math.MaxInt64
	}
	l, h := ir.IntRange(dt)
	return l, int64(h)
}

var intDTypes = []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8, backend.U64, backend.U32, backend.U16, backend.U8}

func TestUnaryInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range intDTypes {
		lo, hi := intRange(dt)
		x := randInts(rng, 40, lo, hi, true)
		x[0] = lo // the most negative value: Neg and Abs wrap to it
		for _, op := range []ir.UnaryOp{ir.OpNeg, ir.OpAbs, ir.OpSign, ir.OpNot, ir.OpFloor, ir.OpCeil, ir.OpRound} {
			xt := mkI(dt, []int{len(x)}, x)
			got := ints(t, run(t, ir.Op{Kind: ir.KindUnary, Sub: uint8(op), In: [3]ir.Tensor{xt}}))
			for i, v := range ints(t, xt) {
				b := big.NewInt(v)
				if !dt.IsSigned() {
					b.SetUint64(uint64(v))
				}
				switch op {
				case ir.OpNeg:
					b.Neg(b)
				case ir.OpAbs:
					b.Abs(b)
				case ir.OpSign:
					b.SetInt64(int64(b.Sign()))
				case ir.OpNot:
					b.Not(b)
				}
				if want := wrap(b, dt); got[i] != want {
					t.Errorf("%v %v(%v) = %v, want %v", dt, op, v, got[i], want)
				}
			}
		}
	}
	got := run(t, ir.Op{Kind: ir.KindUnary, Sub: uint8(ir.OpNot), In: [3]ir.Tensor{mkI(backend.Bool, []int{2}, []int64{1, 0})}})
	if v := ints(t, got); v[0] != 0 || v[1] != 1 {
		t.Errorf("not [true false] = %v", v)
	}
}

// binRef is the float64 definition of the float binary ops.
var binRef = map[ir.BinaryOp]func(a, b float64) float64{
	ir.OpAdd: func(a, b float64) float64 { return a + b }, ir.OpSub: func(a, b float64) float64 { return a - b },
	ir.OpMul: func(a, b float64) float64 { return a * b }, ir.OpDiv: func(a, b float64) float64 { return a / b },
	ir.OpFloorDiv: func(a, b float64) float64 { return math.Floor(a / b) },
	ir.OpRem:      func(a, b float64) float64 { return a - b*math.Trunc(a/b) },
	ir.OpMod:      func(a, b float64) float64 { return a - b*math.Floor(a/b) },
	ir.OpPow:      func(a, b float64) float64 { return math.Exp(b * math.Log(math.Abs(a))) },
	ir.OpMax:      math.Max, ir.OpMin: math.Min, ir.OpAtan2: math.Atan2,
	ir.OpEq: func(a, b float64) float64 { return b2f(a == b) }, ir.OpNe: func(a, b float64) float64 { return b2f(a != b) },
	ir.OpLt: func(a, b float64) float64 { return b2f(a < b) }, ir.OpLe: func(a, b float64) float64 { return b2f(a <= b) },
	ir.OpGt: func(a, b float64) float64 { return b2f(a > b) }, ir.OpGe: func(a, b float64) float64 { return b2f(a >= b) },
}

func TestBinaryFloatBroadcast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	as, bs, out := []int{2, 3, 4}, []int{3, 1}, []int{2, 3, 4}
	for _, dt := range floatDTypes {
		for op, f := range binRef {
			a := randVals(rng, numel(as), 0.25, 9, dt)
			b := randVals(rng, numel(bs), 0.25, 9, dt)
			if op == ir.OpPow {
				for i := range a {
					a[i] = math.Abs(a[i])
				}
			}
			b[1] = a[4] // equal operands for the comparisons (a[0, 1, 0] meets b[1, 0])
			got := vals(t, run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{mk(dt, as, a), mk(dt, bs, b)}}))
			for i := range numel(out) {
				idx := unflat(out, i)
				x, y := a[bcastPos(as, idx)], b[bcastPos(bs, idx)]
				want := f(x, y)
				rdt := dt
				if op.IsComparison() {
					rdt = backend.Bool
				} else {
					want = quant(want, dt)
				}
				if !near(got[i], want, rdt) {
					t.Errorf("%v %v(%v, %v) = %v, want %v", dt, op, x, y, got[i], want)
				}
			}
		}
	}
}

// Max and Min propagate NaN from either side; comparisons with NaN are
// false except Ne.
func TestBinaryNaN(t *testing.T) {
	nan := math.NaN()
	a := mk(backend.F32, []int{3}, []float64{nan, 1, nan})
	b := mk(backend.F32, []int{3}, []float64{2, nan, nan})
	for _, op := range []ir.BinaryOp{ir.OpMax, ir.OpMin} {
		for i, v := range vals(t, run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{a, b}})) {
			if !math.IsNaN(v) {
				t.Errorf("%v element %d = %v, want NaN", op, i, v)
			}
		}
	}
	for _, op := range []ir.BinaryOp{ir.OpEq, ir.OpLt, ir.OpGe, ir.OpNe} {
		for i, v := range vals(t, run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{a, b}})) {
			if want := b2f(op == ir.OpNe); v != want {
				t.Errorf("%v element %d = %v, want %v", op, i, v, want)
			}
		}
	}
}

// bigBinary is the exact integer definition of the integer binary ops on
// operands in dt's range (big.Int's And, Or, Xor and shifts are two's
// complement); Div, FloorDiv, Rem and Mod use the float formulas on
// operands small enough to be exact.
func bigBinary(op ir.BinaryOp, a, b int64, unsigned bool) *big.Int {
	x, y := big.NewInt(a), big.NewInt(b)
	if unsigned {
		x.SetUint64(uint64(a))
		y.SetUint64(uint64(b))
	}
	fa, fb := float64(a), float64(b)
	switch op {
	case ir.OpAdd:
		return x.Add(x, y)
	case ir.OpSub:
		return x.Sub(x, y)
	case ir.OpMul:
		return x.Mul(x, y)
	case ir.OpDiv:
		return big.NewInt(int64(math.Trunc(fa / fb)))
	case ir.OpFloorDiv:
		return big.NewInt(int64(math.Floor(fa / fb)))
	case ir.OpRem:
		return big.NewInt(int64(fa - fb*math.Trunc(fa/fb)))
	case ir.OpMod:
		return big.NewInt(int64(fa - fb*math.Floor(fa/fb)))
	case ir.OpPow:
		return x.Exp(x, y, nil)
	case ir.OpMax:
		if x.Cmp(y) < 0 {
			return y
		}
		return x
	case ir.OpMin:
		if x.Cmp(y) > 0 {
			return y
		}
		return x
	case ir.OpAnd:
		return x.And(x, y)
	case ir.OpOr:
		return x.Or(x, y)
	case ir.OpXor:
		return x.Xor(x, y)
	case ir.OpShl:
		return x.Lsh(x, uint(b))
	case ir.OpShr:
		return x.Rsh(x, uint(b))
	}
	return big.NewInt(int64(b2f(bigCompare(op, x.Cmp(y)))))
}

func bigCompare(op ir.BinaryOp, c int) bool {
	switch op {
	case ir.OpEq:
		return c == 0
	case ir.OpNe:
		return c != 0
	case ir.OpLt:
		return c < 0
	case ir.OpLe:
		return c <= 0
	case ir.OpGt:
		return c > 0
	}
	return c >= 0
}

// sgnLo is lo for signed dtypes, 0 for unsigned ones.
func sgnLo(dt backend.DType, lo int64) int64 {
	if dt.IsSigned() {
		return lo
	}
	return 0
}

func TestBinaryInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 60
	for _, dt := range intDTypes {
		lo, hi := intRange(dt)
		bits := int64(8 * dt.Size())
		for op := ir.OpAdd; op <= ir.OpShr; op++ {
			if op == ir.OpAtan2 {
				continue
			}
			var a, b []int64
			switch op {
			case ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod:
				a, b = randInts(rng, n, sgnLo(dt, max(lo, -1000)), min(hi, 1000), true), randInts(rng, n, sgnLo(dt, max(lo, -37)), 37, true)
			case ir.OpPow:
				a, b = randInts(rng, n, sgnLo(dt, max(lo, -9)), 9, false), randInts(rng, n, 0, 40, false)
			case ir.OpShl, ir.OpShr:
				a, b = randInts(rng, n, lo, hi, true), randInts(rng, n, 0, bits-1, false)
			default:
				a, b = randInts(rng, n, lo, hi, true), randInts(rng, n, lo, hi, true)
				b[0] = a[0]
			}
			got := ints(t, run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{mkI(dt, []int{n}, a), mkI(dt, []int{n}, b)}}))
			for i := range a {
				want := wrap(bigBinary(op, a[i], b[i], !dt.IsSigned()), dt)
				if op.IsComparison() {
					want = int64(b2f(bigBinary(op, a[i], b[i], !dt.IsSigned()).Sign() != 0))
				}
				if got[i] != want {
					t.Errorf("%v %v(%v, %v) = %v, want %v", dt, op, a[i], b[i], got[i], want)
				}
			}
		}
	}
}

// Hand-worked integer edge cases: division signs, wrap-around, shifts out
// of range, negative powers.
func TestIntegerEdges(t *testing.T) {
	cases := []struct {
		dt         backend.DType
		op         ir.BinaryOp
		a, b, want int64
	}{
		{backend.I32, ir.OpDiv, -7, 2, -3}, {backend.I32, ir.OpFloorDiv, -7, 2, -4},
		{backend.I32, ir.OpRem, -7, 2, -1}, {backend.I32, ir.OpMod, -7, 2, 1},
		{backend.I32, ir.OpDiv, 7, -2, -3}, {backend.I32, ir.OpFloorDiv, 7, -2, -4},
		{backend.I32, ir.OpRem, 7, -2, 1}, {backend.I32, ir.OpMod, 7, -2, -1},
		{backend.I8, ir.OpAdd, 127, 1, -128}, {backend.I8, ir.OpDiv, -128, -1, -128},
		{backend.I8, ir.OpFloorDiv, -128, -1, -128}, {backend.I8, ir.OpMod, -128, -1, 0},
		{backend.U8, ir.OpAdd, 200, 100, 44}, {backend.U8, ir.OpSub, 1, 2, 255},
		{backend.I16, ir.OpMul, 300, 300, 90000 - 65536*1}, {backend.I64, ir.OpAdd, math.MaxInt64, 1, math.MinInt64},
		{backend.I8, ir.OpShl, 1, 8, 0}, {backend.I8, ir.OpShl, 1, -1, 0}, {backend.I8, ir.OpShl, 1, 7, -128},
		{backend.I8, ir.OpShr, -128, 9, -1}, {backend.I8, ir.OpShr, 100, 8, 0}, {backend.I8, ir.OpShr, -128, 7, -1},
		{backend.U8, ir.OpShr, 200, 8, 0}, {backend.U8, ir.OpShr, 200, 7, 1}, {backend.U8, ir.OpShl, 200, 1, 144},
		{backend.U64, ir.OpShr, -1, 63, 1}, {backend.U64, ir.OpShr, -1, 64, 0}, {backend.I64, ir.OpShr, -5, 64, -1},
		{backend.I8, ir.OpPow, 3, 5, -13}, {backend.I32, ir.OpPow, 2, -1, 0}, {backend.I32, ir.OpPow, -1, -3, -1},
		{backend.I32, ir.OpPow, -1, -4, 1}, {backend.I32, ir.OpPow, 1, -9, 1}, {backend.I32, ir.OpPow, 0, 0, 1},
	}
	for _, c := range cases {
		x, y := mkI(c.dt, []int{1}, []int64{c.a}), mkI(c.dt, []int{1}, []int64{c.b})
		if got := ints(t, run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(c.op), In: [3]ir.Tensor{x, y}})); got[0] != c.want {
			t.Errorf("%v %v(%d, %d) = %d, want %d", c.dt, c.op, c.a, c.b, got[0], c.want)
		}
	}
}

// Integer division by zero panics with an error naming the op, not a Go
// runtime error.
func TestIntegerDivisionByZero(t *testing.T) {
	for _, op := range []ir.BinaryOp{ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod} {
		for _, dt := range []backend.DType{backend.I32, backend.U8} {
			x, y := mkI(dt, []int{2}, []int64{5, 6}), mkI(dt, []int{2}, []int64{1, 0})
			op := ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{x, y}}
			if err := op.Infer(); err != nil {
				t.Fatal(err)
			}
			if err := catch(t, func() { tb.Exec(op) }); err == nil {
				t.Errorf("%v %v by zero did not panic", dt, op.Name())
			}
		}
	}
}

func TestBinaryBool(t *testing.T) {
	a := mkI(backend.Bool, []int{4}, []int64{0, 0, 1, 1})
	b := mkI(backend.Bool, []int{4}, []int64{0, 1, 0, 1})
	want := map[ir.BinaryOp][4]int64{
		ir.OpAnd: {0, 0, 0, 1}, ir.OpOr: {0, 1, 1, 1}, ir.OpXor: {0, 1, 1, 0}, ir.OpMax: {0, 1, 1, 1}, ir.OpMin: {0, 0, 0, 1},
		ir.OpEq: {1, 0, 0, 1}, ir.OpNe: {0, 1, 1, 0}, ir.OpLt: {0, 1, 0, 0}, ir.OpLe: {1, 1, 0, 1}, ir.OpGt: {0, 0, 1, 0}, ir.OpGe: {1, 0, 1, 1},
	}
	for op, w := range want {
		got := run(t, ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{a, b}})
		if got.DType() != backend.Bool {
			t.Errorf("%v: dtype %v", op, got.DType())
		}
		for i, v := range ints(t, got) {
			if v != w[i] {
				t.Errorf("%v: element %d = %d, want %d", op, i, v, w[i])
			}
		}
	}
}

func TestWhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cs, as, bs, out := []int{3, 1}, []int{2, 3, 4}, []int{4}, []int{2, 3, 4}
	c := []int64{1, 0, 1}
	for _, dt := range []backend.DType{backend.F16, backend.I16, backend.U32, backend.Bool} {
		a, b := randInts(rng, numel(as), 0, 1, false), randInts(rng, numel(bs), 0, 1, false)
		if dt != backend.Bool {
			a, b = randInts(rng, numel(as), 1, 100, true), randInts(rng, numel(bs), 1, 100, true)
		}
		got := ints(t, run(t, ir.Op{Kind: ir.KindWhere, In: [3]ir.Tensor{mkI(backend.Bool, cs, c), mkI(dt, as, a), mkI(dt, bs, b)}}))
		for i := range numel(out) {
			idx := unflat(out, i)
			want := b[bcastPos(bs, idx)]
			if c[bcastPos(cs, idx)] != 0 {
				want = a[bcastPos(as, idx)]
			}
			if got[i] != want {
				t.Errorf("%v where element %v = %d, want %d", dt, idx, got[i], want)
			}
		}
	}
}

func b2f(x bool) float64 {
	if x {
		return 1
	}
	return 0
}
