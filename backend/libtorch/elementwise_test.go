//go:build libtorch && cgo

package libtorch

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func unaryOp(u ir.UnaryOp, x ir.Tensor) ir.Op {
	return ir.Op{Kind: ir.KindUnary, Sub: uint8(u), In: [3]ir.Tensor{x}}
}

func binaryOp(o ir.BinaryOp, x, y ir.Tensor) ir.Op {
	return ir.Op{Kind: ir.KindBinary, Sub: uint8(o), In: [3]ir.Tensor{x, y}}
}

// Every float unary op on every float dtype matches the float64 function
// of the (quantized) input, rounded to the dtype.
func TestUnaryFloat(t *testing.T) {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	cases := []struct {
		op       ir.UnaryOp
		f        func(float64) float64
		positive bool
	}{
		{ir.OpNeg, func(x float64) float64 { return -x }, false},
		{ir.OpAbs, math.Abs, false},
		{ir.OpSign, func(x float64) float64 { return math.Copysign(1, x) }, false},
		{ir.OpExp, math.Exp, false},
		{ir.OpLog, math.Log, true},
		{ir.OpLog1p, math.Log1p, true},
		{ir.OpExpm1, math.Expm1, false},
		{ir.OpSqrt, math.Sqrt, true},
		{ir.OpRsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, true},
		{ir.OpRecip, func(x float64) float64 { return 1 / x }, false},
		{ir.OpSin, math.Sin, false},
		{ir.OpCos, math.Cos, false},
		{ir.OpTanh, math.Tanh, false},
		{ir.OpSigmoid, sigmoid, false},
		{ir.OpErf, math.Erf, false},
		{ir.OpFloor, math.Floor, false},
		{ir.OpCeil, math.Ceil, false},
		{ir.OpRound, math.RoundToEven, false},
	}
	rng := newRNG(1)
	shape := []int{3, 7}
	for _, dt := range floatDTypes {
		for _, c := range cases {
			x := randVals(rng, 21, 0.1, 4, dt)
			if c.positive {
				for i := range x {
					x[i] = math.Abs(x[i])
				}
			}
			want := make([]float64, len(x))
			for i, v := range x {
				want[i] = quantize(c.f(v), dt)
			}
			got := run1(t, unaryOp(c.op, lt(x, shape, dt)))
			expect(t, c.op.String()+" "+dt.String(), got, want, dt)
		}
	}
}

// Edge values: sign is +0 at ±0 and NaN, round is half to even, floor and
// ceil keep signed zeros and infinities.
func TestUnaryFloatEdges(t *testing.T) {
	x := []float64{math.Copysign(0, -1), 0, math.NaN(), 0.5, 1.5, 2.5, -0.5, -2.5, math.Inf(-1), -0.25}
	for _, dt := range floatDTypes {
		xt := lt(x, []int{len(x)}, dt)
		sign := run1(t, unaryOp(ir.OpSign, xt))
		for _, i := range []int{0, 1, 2} {
			if sign[i] != 0 || math.Signbit(sign[i]) {
				t.Errorf("%v sign(%v) = %v, want +0", dt, x[i], sign[i])
			}
		}
		expect(t, "sign "+dt.String(), sign[3:], []float64{1, 1, 1, -1, -1, -1, -1}, dt)
		round := run1(t, unaryOp(ir.OpRound, xt))
		expect(t, "round "+dt.String(), round[3:], []float64{0, 2, 2, -0, -2, math.Inf(-1), -0}, dt)
		if !math.Signbit(round[6]) || !math.Signbit(round[9]) {
			t.Errorf("%v round(-0.5), round(-0.25) = %v, %v: want -0", dt, round[6], round[9])
		}
		ceil := run1(t, unaryOp(ir.OpCeil, xt))
		if !math.Signbit(ceil[9]) || ceil[9] != 0 {
			t.Errorf("%v ceil(-0.25) = %v, want -0", dt, ceil[9])
		}
	}
}

// wrapInt wraps v into integer dtype dt as two's complement arithmetic
// does.
func wrapInt(v int64, dt backend.DType) int64 {
	switch dt {
	case backend.I32:
		return int64(int32(v))
	case backend.I16:
		return int64(int16(v))
	case backend.I8:
		return int64(int8(v))
	case backend.U8:
		return int64(uint8(v))
	}
	return v
}

func ints64(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// intTensor makes an integer tensor of exact values (wrapped to dt).
func intTensor(v []int64, shape []int, dt backend.DType) ir.Tensor {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt.Size() {
		case 8:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
		default:
			b[i] = byte(x)
		}
	}
	return tb.FromData(&backend.TensorData{Shape: slices.Clone(shape), DType: dt, Bytes: b})
}

func intsOf(t *testing.T, x ir.Tensor) []int64 {
	t.Helper()
	d, err := tb.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return decodeInts(d)
}

func expectInts(t *testing.T, name string, got, want []int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: [%d] = %d, want %d", name, i, got[i], want[i])
		}
	}
}

// intLimits returns the range of integer dtype dt.
func intLimits(dt backend.DType) (int64, int64) {
	lo, hi := ir.IntRange(dt)
	return lo, int64(hi)
}

// Integer unary ops: Neg and Abs wrap (also on U8), Sign is -1/0/1,
// rounding is the identity, Not is ^x.
func TestUnaryInt(t *testing.T) {
	for _, dt := range intDTypes {
		lo, hi := intLimits(dt)
		x := []int64{lo, hi, 0, 1, 7, wrapInt(-3, dt), wrapInt(-100, dt)}
		xt := intTensor(x, []int{len(x)}, dt)
		ref := func(f func(int64) int64) []int64 {
			out := make([]int64, len(x))
			for i, v := range x {
				out[i] = wrapInt(f(v), dt)
			}
			return out
		}
		unsigned := !dt.IsSigned()
		expectInts(t, "neg "+dt.String(), intsOf(t, exec(t, unaryOp(ir.OpNeg, xt))[0]), ref(func(v int64) int64 { return -v }))
		expectInts(t, "abs "+dt.String(), intsOf(t, exec(t, unaryOp(ir.OpAbs, xt))[0]), ref(func(v int64) int64 {
			if v < 0 {
				return -v
			}
			return v
		}))
		expectInts(t, "sign "+dt.String(), intsOf(t, exec(t, unaryOp(ir.OpSign, xt))[0]), ref(func(v int64) int64 {
			switch {
			case v > 0:
				return 1
			case v < 0:
				return -1
			}
			return 0
		}))
		for _, u := range []ir.UnaryOp{ir.OpFloor, ir.OpCeil, ir.OpRound} {
			expectInts(t, u.String()+" "+dt.String(), intsOf(t, exec(t, unaryOp(u, xt))[0]), x)
		}
		expectInts(t, "not "+dt.String(), intsOf(t, exec(t, unaryOp(ir.OpNot, xt))[0]), ref(func(v int64) int64 {
			if unsigned {
				return int64(^uint8(v))
			}
			return ^v
		}))
	}
	b := lt([]float64{1, 0, 1}, []int{3}, backend.Bool)
	expect(t, "not bool", run1(t, unaryOp(ir.OpNot, b)), []float64{0, 1, 0}, backend.Bool)
}

// Float binary ops with broadcasting against float64 references.
func TestBinaryFloat(t *testing.T) {
	floorDiv := func(a, b float64) float64 { return math.Floor(a / b) }
	pyMod := func(a, b float64) float64 {
		r := math.Mod(a, b)
		if r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r
	}
	b2f := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	cases := []struct {
		op ir.BinaryOp
		f  func(a, b float64) float64
	}{
		{ir.OpAdd, func(a, b float64) float64 { return a + b }},
		{ir.OpSub, func(a, b float64) float64 { return a - b }},
		{ir.OpMul, func(a, b float64) float64 { return a * b }},
		{ir.OpDiv, func(a, b float64) float64 { return a / b }},
		{ir.OpFloorDiv, floorDiv},
		{ir.OpRem, math.Mod},
		{ir.OpMod, pyMod},
		{ir.OpPow, func(a, b float64) float64 { return math.Pow(math.Abs(a), b) }},
		{ir.OpMax, math.Max},
		{ir.OpMin, math.Min},
		{ir.OpAtan2, math.Atan2},
		{ir.OpEq, func(a, b float64) float64 { return b2f(a == b) }},
		{ir.OpNe, func(a, b float64) float64 { return b2f(a != b) }},
		{ir.OpLt, func(a, b float64) float64 { return b2f(a < b) }},
		{ir.OpLe, func(a, b float64) float64 { return b2f(a <= b) }},
		{ir.OpGt, func(a, b float64) float64 { return b2f(a > b) }},
		{ir.OpGe, func(a, b float64) float64 { return b2f(a >= b) }},
	}
	rng := newRNG(2)
	as, bs := []int{3, 1, 4}, []int{2, 4}
	for _, dt := range floatDTypes {
		for _, c := range cases {
			a := randVals(rng, 12, 0.5, 5, dt)
			b := randVals(rng, 8, 0.5, 5, dt)
			if c.op == ir.OpPow {
				for i := range a {
					a[i] = math.Abs(a[i])
				}
			}
			b[3] = a[3] // an equal pair for the comparisons
			want := make([]float64, 0, 24)
			for i := range 3 {
				for j := range 2 {
					for k := range 4 {
						want = append(want, quantize(c.f(a[i*4+k], b[j*4+k]), dt))
					}
				}
			}
			outDT := dt
			if c.op.IsComparison() {
				outDT = backend.Bool
			}
			got := run1(t, binaryOp(c.op, lt(a, as, dt), lt(b, bs, dt)))
			expect(t, c.op.String()+" "+dt.String(), got, want, outDT)
		}
	}
}

// Max and Min propagate NaN from either side and order -0 below +0 as
// Go's max and min do, whichever operand comes first.
func TestMaxMinEdges(t *testing.T) {
	nz := math.Copysign(0, -1)
	a := []float64{nz, 0, nz, 0, math.NaN(), 1, math.Inf(-1), -4, 0, 3, nz, -2}
	b := []float64{0, nz, nz, 0, 1, math.NaN(), 2, 0, -4, nz, 5, nz}
	n := len(a)
	for _, dt := range floatDTypes {
		x, y := lt(a, []int{n}, dt), lt(b, []int{n}, dt)
		mx := run1(t, binaryOp(ir.OpMax, x, y))
		mn := run1(t, binaryOp(ir.OpMin, x, y))
		for i := range a {
			wmax, wmin := max(a[i], b[i]), min(a[i], b[i])
			if !same(mx[i], wmax, dt) || math.Signbit(mx[i]) != math.Signbit(wmax) && !math.IsNaN(wmax) {
				t.Errorf("%v max(%v, %v) = %v, want %v", dt, a[i], b[i], mx[i], wmax)
			}
			if !same(mn[i], wmin, dt) || math.Signbit(mn[i]) != math.Signbit(wmin) && !math.IsNaN(wmin) {
				t.Errorf("%v min(%v, %v) = %v, want %v", dt, a[i], b[i], mn[i], wmin)
			}
		}
		// Against rank-0 zeros (ReLU's max(x, 0) and its -0 twin).
		for _, z := range []float64{0, nz} {
			zt := lt([]float64{z}, nil, dt)
			for _, mx := range []bool{true, false} {
				op := ir.OpMin
				if mx {
					op = ir.OpMax
				}
				got := run1(t, binaryOp(op, x, zt))
				for i := range a {
					want := min(a[i], z)
					if mx {
						want = max(a[i], z)
					}
					if !same(got[i], want, dt) || !math.IsNaN(want) && math.Signbit(got[i]) != math.Signbit(want) {
						t.Errorf("%v %v(%v, %v) = %v, want %v", dt, op, a[i], z, got[i], want)
					}
				}
			}
		}
	}
}

// intBinaryRef is Ember's integer semantics of op in int64, wrapped to dt
// (Go's / and %, Python's // and %, shifts outside [0, bits) giving 0 or
// the sign fill).
func intBinaryRef(op ir.BinaryOp, a, b int64, dt backend.DType) int64 {
	bits := int64(dt.Size() * 8)
	switch op {
	case ir.OpAdd:
		return wrapInt(a+b, dt)
	case ir.OpSub:
		return wrapInt(a-b, dt)
	case ir.OpMul:
		return wrapInt(a*b, dt)
	case ir.OpDiv:
		if dt == backend.I32 {
			return int64(int32(a) / int32(b))
		}
		return wrapInt(a/b, dt)
	case ir.OpFloorDiv:
		q := intBinaryRef(ir.OpDiv, a, b, dt)
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q
	case ir.OpRem:
		if b == -1 {
			return 0
		}
		return a % b
	case ir.OpMod:
		if b == -1 {
			return 0
		}
		r := a % b
		if r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r
	case ir.OpPow:
		if b < 0 {
			switch a {
			case 1:
				return 1
			case -1:
				if b%2 != 0 {
					return -1
				}
				return 1
			}
			return 0
		}
		r := int64(1)
		for range b {
			r = wrapInt(r*a, dt)
		}
		return r
	case ir.OpMax:
		return max(a, b)
	case ir.OpMin:
		return min(a, b)
	case ir.OpAnd:
		return a & b
	case ir.OpOr:
		return a | b
	case ir.OpXor:
		return wrapInt(a^b, dt)
	case ir.OpShl:
		if b < 0 || b >= bits {
			return 0
		}
		return wrapInt(a<<b, dt)
	case ir.OpShr:
		if b < 0 || b >= bits {
			if a < 0 {
				return -1
			}
			return 0
		}
		return a >> b
	}
	panic("intBinaryRef: " + op.String())
}

// Integer binary ops on every integer dtype, random non-zero operands plus
// the extremes: INT_MIN / -1 wraps (x86's idiv would trap), shifts by
// amounts outside [0, bits) give 0 or the sign fill.
func TestBinaryInt(t *testing.T) {
	ops := []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod, ir.OpPow,
		ir.OpMax, ir.OpMin, ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpShl, ir.OpShr}
	rng := newRNG(3)
	for _, dt := range intDTypes {
		lo, hi := intLimits(dt)
		bits := int64(dt.Size() * 8)
		for _, op := range ops {
			var a, b []int64
			draw := func() int64 {
				if dt == backend.I64 {
					return int64(rng.Uint64())
				}
				return lo + rng.Int64N(hi-lo+1)
			}
			for range 40 {
				x, y := draw(), draw()
				switch op {
				case ir.OpPow:
					x, y = rng.Int64N(7)-3, rng.Int64N(12)-3
					if !dt.IsSigned() {
						x, y = rng.Int64N(5), rng.Int64N(9)
					}
				case ir.OpShl, ir.OpShr:
					y = rng.Int64N(bits+8) - 4
					if !dt.IsSigned() {
						y = rng.Int64N(bits + 4)
					}
				}
				if y == 0 && (op == ir.OpDiv || op == ir.OpFloorDiv || op == ir.OpRem || op == ir.OpMod) {
					y = 3
				}
				a, b = append(a, x), append(b, y)
			}
			if dt.IsSigned() {
				// The extremes: INT_MIN / -1, x / -1, shifts by bits, -1, huge.
				a = append(a, lo, lo, hi, -5, lo, hi, -1)
				b = append(b, -1, 1, -1, -1, 2, 1, 1)
				if op == ir.OpShl || op == ir.OpShr {
					b[len(b)-7], b[len(b)-6], b[len(b)-5], b[len(b)-4] = bits, -1, bits-1, 63
				}
				if op == ir.OpPow {
					a[len(a)-7], a[len(a)-6] = -1, 2
					b[len(b)-6] = int64(bits)
				}
			}
			want := make([]int64, len(a))
			for i := range a {
				want[i] = intBinaryRef(op, a[i], b[i], dt)
			}
			got := intsOf(t, exec(t, binaryOp(op, intTensor(a, []int{len(a)}, dt), intTensor(b, []int{len(b)}, dt)))[0])
			expectInts(t, op.String()+" "+dt.String(), got, want)
		}
	}
}

// Integer division by zero is an *Error, not a crash.
func TestIntDivByZero(t *testing.T) {
	for _, dt := range intDTypes {
		for _, op := range []ir.BinaryOp{ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod} {
			a, b := intTensor([]int64{1, 2}, []int{2}, dt), intTensor([]int64{1, 0}, []int{2}, dt)
			err := wantPanic(t, op.String(), func() { exec(t, binaryOp(op, a, b)) })
			le := wantLibtorchError(t, op.String(), err, backend.ErrExecution)
			if le.Op != op.String() {
				t.Errorf("error %v names op %q, want %q", err, le.Op, op)
			}
		}
	}
}

// Bool: logical ops, comparisons (false < true), Max as or, Min as and.
func TestBinaryBool(t *testing.T) {
	a := []float64{0, 0, 1, 1}
	b := []float64{0, 1, 0, 1}
	x, y := lt(a, []int{4}, backend.Bool), lt(b, []int{4}, backend.Bool)
	want := map[ir.BinaryOp][]float64{
		ir.OpAnd: {0, 0, 0, 1}, ir.OpOr: {0, 1, 1, 1}, ir.OpXor: {0, 1, 1, 0},
		ir.OpEq: {1, 0, 0, 1}, ir.OpNe: {0, 1, 1, 0}, ir.OpLt: {0, 1, 0, 0}, ir.OpLe: {1, 1, 0, 1},
		ir.OpGt: {0, 0, 1, 0}, ir.OpGe: {1, 0, 1, 1}, ir.OpMax: {0, 1, 1, 1}, ir.OpMin: {0, 0, 0, 1},
	}
	for op, w := range want {
		expect(t, op.String()+" bool", run1(t, binaryOp(op, x, y)), w, backend.Bool)
	}
}

// Where selects with broadcasting for every dtype.
func TestWhere(t *testing.T) {
	rng := newRNG(4)
	c := lt([]float64{1, 0, 0, 1, 1, 0}, []int{2, 3}, backend.Bool)
	for _, dt := range append(append([]backend.DType{backend.Bool}, floatDTypes...), intDTypes...) {
		a := randVals(rng, 3, 1, 9, dt)
		b := randVals(rng, 2, 1, 9, dt)
		if dt == backend.Bool {
			a, b = []float64{1, 1, 0}, []float64{0, 1}
		}
		got := run1(t, ir.Op{Kind: ir.KindWhere, In: [3]ir.Tensor{c, lt(a, []int{3}, dt), lt(b, []int{2, 1}, dt)}})
		want := []float64{a[0], b[0], b[0], a[0], a[1], b[1]}
		expect(t, "where "+dt.String(), got, want, dt)
	}
}
