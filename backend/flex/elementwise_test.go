package flex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

var floatUnaryOps = []backend.UnaryOp{
	backend.OpNeg, backend.OpAbs, backend.OpSign, backend.OpExp, backend.OpLog, backend.OpLog1p,
	backend.OpExpm1, backend.OpSqrt, backend.OpRsqrt, backend.OpRecip, backend.OpSin, backend.OpCos,
	backend.OpTanh, backend.OpSigmoid, backend.OpErf, backend.OpFloor, backend.OpCeil, backend.OpRound,
}

// refUnary is the float64 definition of each unary op.
func refUnary(op backend.UnaryOp, x float64) float64 {
	switch op {
	case backend.OpNeg:
		return -x
	case backend.OpAbs:
		return math.Abs(x)
	case backend.OpSign:
		if x > 0 {
			return 1
		} else if x < 0 {
			return -1
		}
		return 0 // ±0 and NaN, as PyTorch's sign
	case backend.OpExp:
		return math.Exp(x)
	case backend.OpLog:
		return math.Log(x)
	case backend.OpLog1p:
		return math.Log(1 + x)
	case backend.OpExpm1:
		return math.Exp(x) - 1
	case backend.OpSqrt:
		return math.Sqrt(x)
	case backend.OpRsqrt:
		return 1 / math.Sqrt(x)
	case backend.OpRecip:
		return 1 / x
	case backend.OpSin:
		return math.Sin(x)
	case backend.OpCos:
		return math.Cos(x)
	case backend.OpTanh:
		return (math.Exp(2*x) - 1) / (math.Exp(2*x) + 1)
	case backend.OpSigmoid:
		return 1 / (1 + math.Exp(-x))
	case backend.OpErf:
		return math.Erf(x)
	case backend.OpFloor:
		return math.Floor(x)
	case backend.OpCeil:
		return math.Ceil(x)
	case backend.OpRound:
		return math.RoundToEven(x)
	case backend.OpNot:
		if x == 0 {
			return 1
		}
		return 0
	}
	panic(op)
}

// positiveDomain reports whether the op needs x > 0 for the test inputs.
func positiveDomain(op backend.UnaryOp) bool {
	return op == backend.OpLog || op == backend.OpLog1p || op == backend.OpSqrt || op == backend.OpRsqrt
}

var testShapes = [][]int{{}, {1}, {5}, {2, 3}, {3, 0, 2}, {2, 3, 4}}

func mapRef(r ref, f func(float64) float64) ref {
	out := ref{shape: r.shape, v: make([]float64, len(r.v))}
	for i, v := range r.v {
		out.v[i] = f(v)
	}
	return out
}

func TestUnaryFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range floatDTypes {
		for _, op := range floatUnaryOps {
			for _, shape := range testShapes {
				r := randRef(rng, shape, dt)
				if positiveDomain(op) {
					r = mapRef(r, math.Abs)
				}
				for _, l := range layouts {
					x := l.make(r, dt)
					in := read(t, mk(r, dt)) // the values as stored in dt
					what := fmt.Sprintf("%v %v %v %s", op, dt, shape, l.name)
					check(t, what, ir.Unary(tb, op, x), mapRef(in, func(v float64) float64 { return refUnary(op, v) }), dt)
				}
			}
		}
	}
}

// wrapTo reduces an integral value into dt's range modulo 2^bits.
func wrapTo(v float64, dt backend.DType) float64 {
	bits := float64(8 * dt.Size())
	m := math.Pow(2, bits)
	if bits == 64 { // float64 cannot hold the range exactly; the tests stay small
		if v < 0 && !dt.IsSigned() {
			v += m
		}
		return v
	}
	v = math.Mod(v, m)
	if v < 0 {
		v += m
	}
	if dt.IsSigned() && v >= m/2 {
		v -= m
	}
	return v
}

func TestUnaryInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ops := []backend.UnaryOp{backend.OpNeg, backend.OpAbs, backend.OpSign, backend.OpFloor, backend.OpCeil, backend.OpRound, backend.OpSqrt}
	for _, dt := range intDTypes {
		for _, op := range ops {
			for _, l := range layouts {
				r := randRef(rng, []int{3, 4}, dt)
				if op == backend.OpSqrt {
					r = mapRef(r, math.Abs)
				}
				want := mapRef(r, func(v float64) float64 {
					if op == backend.OpSqrt {
						return math.Trunc(math.Sqrt(v))
					}
					return wrapTo(refUnary(op, v), dt)
				})
				x := l.make(r, dt)
				var got ir.Tensor
				if op.FloatOnly() { // ir rejects it; the kernel truncates
					got = execRaw(ir.Op{Kind: ir.KindUnary, Sub: uint8(op), In: [3]ir.Tensor{x}}, x.Shape(), dt)
				} else {
					got = ir.Unary(tb, op, x)
				}
				check(t, fmt.Sprintf("%v %v %s", op, dt, l.name), got, want, dt)
			}
		}
	}
	// Neg wraps at the ends of the range.
	check(t, "neg i8", ir.Unary(tb, backend.OpNeg, mk(ref{[]int{3}, []float64{-128, 127, 5}}, backend.I8)), ref{[]int{3}, []float64{-128, -127, -5}}, backend.I8)
	check(t, "neg u8", ir.Unary(tb, backend.OpNeg, mk(ref{[]int{2}, []float64{1, 200}}, backend.U8)), ref{[]int{2}, []float64{255, 56}}, backend.U8)
}

func TestUnaryBool(t *testing.T) {
	r := ref{[]int{4}, []float64{1, 0, 0, 1}}
	check(t, "not", ir.Unary(tb, backend.OpNot, mk(r, backend.Bool)), ref{[]int{4}, []float64{0, 1, 1, 0}}, backend.Bool)
	check(t, "not flipped", ir.Unary(tb, backend.OpNot, layouts[3].make(r, backend.Bool)), ref{[]int{4}, []float64{0, 1, 1, 0}}, backend.Bool)
}

func TestUnarySemantics(t *testing.T) {
	nan := math.NaN()
	for _, dt := range floatDTypes {
		x := mk(ref{[]int{7}, []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5}}, dt)
		check(t, "round half even "+dt.String(), ir.Unary(tb, backend.OpRound, x), ref{[]int{7}, []float64{0, 2, 2, 0, -2, -2, 4}}, dt)
		s := mk(ref{[]int{4}, []float64{-1000, 1000, 0, -30}}, dt)
		check(t, "sigmoid extremes "+dt.String(), ir.Unary(tb, backend.OpSigmoid, s), ref{[]int{4}, []float64{0, 1, 0.5, 1 / (1 + math.Exp(30))}}, dt)
		n := mk(ref{[]int{3}, []float64{nan, -2, 0}}, dt)
		check(t, "sign nan "+dt.String(), ir.Unary(tb, backend.OpSign, n), ref{[]int{3}, []float64{0, -1, 0}}, dt)
	}
}

var floatBinaryOps = []backend.BinaryOp{
	backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpFloorDiv, backend.OpRem,
	backend.OpMod, backend.OpPow, backend.OpMax, backend.OpMin, backend.OpAtan2,
	backend.OpEq, backend.OpNe, backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe,
}

// refBinary is the float64 definition of each binary op; isInt selects
// truncating integer division.
func refBinary(op backend.BinaryOp, a, b float64, isInt bool) float64 {
	bf := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case backend.OpAdd:
		return a + b
	case backend.OpSub:
		return a - b
	case backend.OpMul:
		return a * b
	case backend.OpDiv:
		if isInt {
			return math.Trunc(a / b)
		}
		return a / b
	case backend.OpFloorDiv:
		return math.Floor(a / b)
	case backend.OpRem:
		return a - b*math.Trunc(a/b)
	case backend.OpMod:
		return a - b*math.Floor(a/b)
	case backend.OpPow:
		return math.Pow(a, b)
	case backend.OpMax:
		return math.Max(a, b)
	case backend.OpMin:
		return math.Min(a, b)
	case backend.OpAtan2:
		v := math.Atan2(a, b)
		if isInt {
			return math.Trunc(v)
		}
		return v
	case backend.OpEq:
		return bf(a == b)
	case backend.OpNe:
		return bf(a != b)
	case backend.OpLt:
		return bf(a < b)
	case backend.OpLe:
		return bf(a <= b)
	case backend.OpGt:
		return bf(a > b)
	case backend.OpGe:
		return bf(a >= b)
	case backend.OpAnd:
		return bf(a != 0 && b != 0)
	case backend.OpOr:
		return bf(a != 0 || b != 0)
	case backend.OpXor:
		return bf((a != 0) != (b != 0))
	}
	panic(op)
}

var binaryShapes = [][2][]int{
	{{2, 3}, {2, 3}}, {{3, 4}, {4}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 3}}, {{5}, {}},
	{{0, 3}, {3}}, {{1}, {1}}, {{2, 3, 4}, {2, 1, 4}},
}

// testBinary checks op on every shape pair and layout against refBinary.
func testBinary(t *testing.T, rng *rand.Rand, op backend.BinaryOp, dt backend.DType, prep func(a, b ref) (ref, ref)) {
	t.Helper()
	for _, sh := range binaryShapes {
		a, b := randRef(rng, sh[0], dt), randRef(rng, sh[1], dt)
		if prep != nil {
			a, b = prep(a, b)
		}
		ia, ib := read(t, mk(a, dt)), read(t, mk(b, dt))
		shape, pa, pb := broadcastRef(a.shape, b.shape)
		want := ref{shape: shape, v: make([]float64, size(shape))}
		for i := range want.v {
			want.v[i] = refBinary(op, ia.v[pa[i]], ib.v[pb[i]], dt.IsInt())
			if dt.IsInt() && !op.IsComparison() {
				want.v[i] = wrapTo(want.v[i], dt)
			}
		}
		outDT := dt
		if op.IsComparison() || op.IsLogical() {
			outDT = backend.Bool
		}
		for li, l := range layouts {
			x, y := l.make(a, dt), layouts[(li+1)%len(layouts)].make(b, dt)
			var got ir.Tensor
			if op == backend.OpAtan2 && dt.IsInt() { // ir rejects it; the kernel truncates
				got = execRaw(ir.Op{Kind: ir.KindBinary, Sub: uint8(op), In: [3]ir.Tensor{x, y}}, shape, outDT)
			} else {
				got = ir.Binary(tb, op, x, y)
			}
			check(t, fmt.Sprintf("%v %v %v,%v %s", op, dt, a.shape, b.shape, l.name), got, want, outDT)
		}
	}
}

func TestBinaryFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dt := range floatDTypes {
		for _, op := range floatBinaryOps {
			var prep func(a, b ref) (ref, ref)
			if op == backend.OpPow {
				prep = func(a, b ref) (ref, ref) { return mapRef(a, math.Abs), b }
			}
			testBinary(t, rng, op, dt, prep)
		}
	}
}

func TestBinaryInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ops := []backend.BinaryOp{
		backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpFloorDiv, backend.OpRem,
		backend.OpMod, backend.OpPow, backend.OpMax, backend.OpMin, backend.OpAtan2,
		backend.OpEq, backend.OpNe, backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe,
	}
	small := func(a, b ref) (ref, ref) { // keep powers in range of i8
		f := func(v float64) float64 { return math.Mod(math.Abs(v), 3) }
		return mapRef(a, func(v float64) float64 { return math.Copysign(f(v)+1, v) }), mapRef(b, f)
	}
	for _, dt := range intDTypes {
		for _, op := range ops {
			var prep func(a, b ref) (ref, ref)
			if op == backend.OpPow {
				prep = small
			}
			if op == backend.OpSub && !dt.IsSigned() {
				prep = func(a, b ref) (ref, ref) { return a, b } // wraps, checked with wrapTo
			}
			testBinary(t, rng, op, dt, prep)
		}
	}
}

func TestBinaryBool(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, op := range []backend.BinaryOp{backend.OpAnd, backend.OpOr, backend.OpXor, backend.OpEq, backend.OpNe, backend.OpLt, backend.OpGe} {
		testBinary(t, rng, op, backend.Bool, nil)
	}
}

func TestIntegerDivision(t *testing.T) {
	a := ref{[]int{4}, []float64{7, -7, 7, -7}}
	b := ref{[]int{4}, []float64{2, 2, -2, -2}}
	want := map[backend.BinaryOp][]float64{
		backend.OpDiv:      {3, -3, -3, 3},
		backend.OpFloorDiv: {3, -4, -4, 3},
		backend.OpRem:      {1, -1, 1, -1},
		backend.OpMod:      {1, 1, -1, -1},
	}
	for _, dt := range []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8} {
		for op, w := range want {
			check(t, fmt.Sprintf("%v %v", op, dt), ir.Binary(tb, op, mk(a, dt), mk(b, dt)), ref{[]int{4}, w}, dt)
		}
	}
	// floats: floor division and Python modulo, C fmod for Rem
	fa, fb := ref{[]int{2}, []float64{7.5, -7.5}}, ref{[]int{2}, []float64{-2, -2}}
	check(t, "floordiv f32", ir.Binary(tb, backend.OpFloorDiv, mk(fa, backend.F32), mk(fb, backend.F32)), ref{[]int{2}, []float64{-4, 3}}, backend.F32)
	check(t, "mod f32", ir.Binary(tb, backend.OpMod, mk(fa, backend.F32), mk(fb, backend.F32)), ref{[]int{2}, []float64{-0.5, -1.5}}, backend.F32)
	check(t, "rem f32", ir.Binary(tb, backend.OpRem, mk(fa, backend.F32), mk(fb, backend.F32)), ref{[]int{2}, []float64{1.5, -1.5}}, backend.F32)
	// the most negative value divided by -1 wraps instead of trapping
	check(t, "i8 min / -1", ir.Binary(tb, backend.OpDiv, mk(ref{[]int{1}, []float64{-128}}, backend.I8), mk(ref{[]int{1}, []float64{-1}}, backend.I8)), ref{[]int{1}, []float64{-128}}, backend.I8)
	// division by zero panics with a message naming the op
	err := catch(func() {
		ir.Binary(tb, backend.OpDiv, mk(ref{[]int{1}, []float64{1}}, backend.I32), mk(ref{[]int{1}, []float64{0}}, backend.I32))
	})
	if err == nil || !strings.Contains(err.Error(), "div") || !strings.Contains(err.Error(), "zero") {
		t.Errorf("integer division by zero: got %v, want a panic naming div and zero", err)
	}
}

func TestIntPow(t *testing.T) {
	a := ref{[]int{6}, []float64{3, 2, -2, 2, 1, -1}}
	b := ref{[]int{6}, []float64{4, 10, 3, -1, -3, -3}}
	check(t, "pow i32", ir.Binary(tb, backend.OpPow, mk(a, backend.I32), mk(b, backend.I32)), ref{[]int{6}, []float64{81, 1024, -8, 0, 1, -1}}, backend.I32)
	check(t, "pow wraps i8", ir.Binary(tb, backend.OpPow, mk(ref{[]int{1}, []float64{2}}, backend.I8), mk(ref{[]int{1}, []float64{7}}, backend.I8)), ref{[]int{1}, []float64{-128}}, backend.I8)
}

func TestMaxMinNaN(t *testing.T) {
	nan := math.NaN()
	a := ref{[]int{4}, []float64{nan, 1, nan, 2}}
	b := ref{[]int{4}, []float64{1, nan, nan, 3}}
	for _, dt := range floatDTypes {
		check(t, "max nan "+dt.String(), ir.Binary(tb, backend.OpMax, mk(a, dt), mk(b, dt)), ref{[]int{4}, []float64{nan, nan, nan, 3}}, dt)
		check(t, "min nan "+dt.String(), ir.Binary(tb, backend.OpMin, mk(a, dt), mk(b, dt)), ref{[]int{4}, []float64{nan, nan, nan, 2}}, dt)
		check(t, "ne nan "+dt.String(), ir.Binary(tb, backend.OpNe, mk(a, dt), mk(b, dt)), ref{[]int{4}, []float64{1, 1, 1, 1}}, backend.Bool)
	}
}

func TestExpandOperand(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.I32, backend.BF16} {
		a := randRef(rng, []int{3, 1}, dt)
		b := randRef(rng, []int{2, 3, 4}, dt)
		x := ir.Expand(tb, mk(a, dt), []int{2, 3, 4})
		ia, ib := read(t, mk(a, dt)), read(t, mk(b, dt))
		want := ref{shape: b.shape, v: make([]float64, len(b.v))}
		for i := range want.v {
			idx := unflat(b.shape, i)
			want.v[i] = ia.v[idx[1]] * ib.v[i]
		}
		check(t, "expanded mul "+dt.String(), ir.Binary(tb, backend.OpMul, x, mk(b, dt)), want, dt)
		check(t, "expanded to data "+dt.String(), ir.Binary(tb, backend.OpMul, x, ir.Full(tb, b.shape, dt, 1)), want.withVals(func(i int) float64 { return ia.v[unflat(b.shape, i)[1]] }), dt)
	}
}

// withVals returns r with element i set to f(i).
func (r ref) withVals(f func(i int) float64) ref {
	out := ref{shape: r.shape, v: make([]float64, len(r.v))}
	for i := range out.v {
		out.v[i] = f(i)
	}
	return out
}

func TestWhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	shapes := [][3][]int{{{2, 3}, {2, 3}, {2, 3}}, {{3}, {2, 3}, {1}}, {{2, 1}, {}, {4}}, {{0, 2}, {2}, {1}}}
	for _, dt := range backend.AllDTypes {
		for _, sh := range shapes {
			c, a, b := randRef(rng, sh[0], backend.Bool), randRef(rng, sh[1], dt), randRef(rng, sh[2], dt)
			ia, ib := read(t, mk(a, dt)), read(t, mk(b, dt))
			s1, pc, pa := broadcastRef(c.shape, a.shape)
			shape, _, pb := broadcastRef(s1, b.shape)
			_, pc2, _ := broadcastRef(s1, b.shape)
			want := ref{shape: shape, v: make([]float64, size(shape))}
			for i := range want.v {
				j := pc2[i] // position in the c/a broadcast
				if c.v[pc[j]] != 0 {
					want.v[i] = ia.v[pa[j]]
				} else {
					want.v[i] = ib.v[pb[i]]
				}
			}
			for _, l := range layouts {
				got := ir.Where(tb, l.make(c, backend.Bool), l.make(a, dt), mk(b, dt))
				check(t, fmt.Sprintf("where %v %v %s", dt, sh, l.name), got, want, dt)
			}
		}
	}
}

// catch runs f and returns the error it panics with (nil if none).
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	f()
	return nil
}
