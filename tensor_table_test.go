package ember

import (
	"math"
	"testing"
)

// The cross-backend numerical table: every primitive and composed op runs
// on every local device that initializes (testDevices), in each dtype, on
// random non-zero inputs of several shapes (rank 0, size-0 and size-1 axes,
// broadcasting) presented through several layouts (contiguous, permuted,
// stepped slice, flipped, combined), against float64 references computed
// with plain loops in table_helpers_test.go. Tolerances: see tolerances.

// tableShapes are the input shapes of elementwise ops.
var tableShapes = [][]int{{}, {0}, {1}, {7}, {3, 4}, {0, 3}, {2, 1, 3}, {2, 3, 4}}

type unaryCase struct {
	name string
	f    func(*Tensor) *Tensor
	ref  func(float64) float64
	dom  func(*randSrc) func() float64
}

// randSrc wraps the generator so domains can be declared as values.
type randSrc struct {
	r interface{ Float64() float64 }
}

func signRef(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0 // ±0 and NaN, as PyTorch's sign
}

func sigmoidRef(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var unaryCases = []unaryCase{
	{"neg", (*Tensor).Neg, func(x float64) float64 { return -x }, nil},
	{"abs", (*Tensor).Abs, math.Abs, nil},
	{"sign", (*Tensor).Sign, signRef, nil},
	{"exp", (*Tensor).Exp, math.Exp, nil},
	{"log", (*Tensor).Log, math.Log, positive},
	{"log1p", (*Tensor).Log1p, math.Log1p, positive},
	{"expm1", (*Tensor).Expm1, math.Expm1, nil},
	{"sqrt", (*Tensor).Sqrt, math.Sqrt, positive},
	{"rsqrt", (*Tensor).Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, positive},
	{"recip", (*Tensor).Recip, func(x float64) float64 { return 1 / x }, nil},
	{"sin", (*Tensor).Sin, math.Sin, nil},
	{"cos", (*Tensor).Cos, math.Cos, nil},
	{"tanh", (*Tensor).Tanh, math.Tanh, nil},
	{"sigmoid", (*Tensor).Sigmoid, sigmoidRef, nil},
	{"erf", (*Tensor).Erf, math.Erf, nil},
	{"floor", (*Tensor).Floor, math.Floor, wide},
	{"ceil", (*Tensor).Ceil, math.Ceil, wide},
	{"round", (*Tensor).Round, math.RoundToEven, halves},
}

func positive(s *randSrc) func() float64 {
	return func() float64 { return 0.1 + 3.9*s.r.Float64() }
}

func wide(s *randSrc) func() float64 {
	return func() float64 { return -6 + 12*s.r.Float64() }
}

// halves mixes exact halves (to test ties to even) with arbitrary values.
func halves(s *randSrc) func() float64 {
	return func() float64 {
		v := -6 + 12*s.r.Float64()
		if s.r.Float64() < 0.5 {
			v = math.Floor(v) + 0.5
		}
		return v
	}
}

func TestTableUnaryFloat(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(1)
		src := &randSrc{rng}
		for _, dt := range floatDTypes {
			for _, c := range unaryCases {
				gen := nonZero(rng, 0.1, 3)
				if c.dom != nil {
					gen = c.dom(src)
				}
				for _, shape := range tableShapes {
					x := randRef(shape, dt, gen)
					want := mapRef(x, func(v float64) float64 { return quantize(c.ref(v), dt) })
					for _, l := range layoutsFor(len(shape)) {
						got := c.f(l.view(dev, x, dt))
						check(t, c.name+" "+dt.String()+" "+shapeName(shape)+" "+l.name, got, want, dt, 1, nil)
					}
				}
			}
			// An expanded (stride-0) input.
			x := randRef([]int{1, 4}, dt, nonZero(rng, 0.1, 3))
			want := build([]int{3, 4}, func(idx []int) float64 { return quantize(math.Exp(x.at(0, idx[1])), dt) })
			checkEq(t, "exp of expanded "+dt.String(), mk(dev, x, dt).Expand(3, 4).Exp(), want, dt)
		}
		// Special values: NaN and infinities.
		sp := ref{[]int{5}, []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.0}}
		for _, dt := range floatDTypes {
			x := mk(dev, sp, dt)
			checkEq(t, "sign special "+dt.String(), x.Sign(), ref{sp.shape, []float64{0, 1, -1, 0, 0}}, dt)
			checkEq(t, "exp special "+dt.String(), x.Exp(), ref{sp.shape, []float64{math.NaN(), math.Inf(1), 0, 1, 1}}, dt)
			checkEq(t, "sigmoid special "+dt.String(), x.Sigmoid(), ref{sp.shape, []float64{math.NaN(), 1, 0, 0.5, 0.5}}, dt)
			checkEq(t, "tanh special "+dt.String(), x.Tanh(), ref{sp.shape, []float64{math.NaN(), 1, -1, 0, 0}}, dt)
			big := mk(dev, ref{[]int{2}, []float64{-60, 60}}, dt).Sigmoid() // no overflow to NaN
			checkEq(t, "sigmoid large "+dt.String(), big, ref{[]int{2}, []float64{quantize(sigmoidRef(-60), dt), 1}}, dt)
		}
	})
}

func TestTableUnaryIntBool(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(2)
		for _, dt := range intDTypes {
			for _, shape := range tableShapes {
				x := randRef(shape, dt, ints(rng, -9, 9))
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " " + shapeName(shape) + " " + l.name
					checkEq(t, "neg "+name, xt.Neg(), mapRef(x, func(v float64) float64 { return -v }), dt)
					checkEq(t, "abs "+name, xt.Abs(), mapRef(x, math.Abs), dt)
					checkEq(t, "sign "+name, xt.Sign(), mapRef(x, signRef), dt)
					checkEq(t, "floor "+name, xt.Floor(), x, dt)
					checkEq(t, "round "+name, xt.Round(), x, dt)
					// Float-only ops cast ints to the device's float dtype (F32).
					checkEq(t, "exp "+name, xt.Exp(), mapRef(x, func(v float64) float64 { return quantize(math.Exp(v), F32) }), F32)
				}
			}
		}
		b := randRef([]int{3, 4}, Bool, ints(rng, 0, 1))
		for _, l := range layoutsFor(2) {
			checkEq(t, "not "+l.name, l.view(dev, b, Bool).Not(), mapRef(b, func(v float64) float64 { return 1 - v }), Bool)
		}
		expectPanic(t, "neg of bool", func() { mk(dev, b, Bool).Neg() }, "neg", "Bool")
		expectPanic(t, "not of f32", func() { mk(dev, b, F32).Not() }, "not", "Bool")
	})
}

// binaryPairs are operand shapes that broadcast.
var binaryPairs = [][2][]int{
	{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{}, {2, 3}}, {{2, 3}, {}},
	{{0, 3}, {1, 3}}, {{1}, {5}}, {{2, 3, 4}, {2, 1, 4}},
}

type binaryCase struct {
	name string
	f    func(a, b *Tensor) *Tensor
	ref  func(a, b float64) float64
}

func floorDivRef(a, b float64) float64 { return math.Floor(a / b) }

func modRef(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

func maxRef(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func minRef(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

var floatBinaryCases = []binaryCase{
	{"add", (*Tensor).Add, func(a, b float64) float64 { return a + b }},
	{"sub", (*Tensor).Sub, func(a, b float64) float64 { return a - b }},
	{"mul", (*Tensor).Mul, func(a, b float64) float64 { return a * b }},
	{"div", (*Tensor).Div, func(a, b float64) float64 { return a / b }},
	{"maximum", (*Tensor).Maximum, maxRef},
	{"minimum", (*Tensor).Minimum, minRef},
	{"atan2", (*Tensor).Atan2, math.Atan2},
	{"floor_div", (*Tensor).FloorDiv, floorDivRef},
	{"rem", (*Tensor).Rem, math.Mod},
	{"mod", (*Tensor).Mod, modRef},
}

func TestTableBinaryFloat(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(3)
		for _, dt := range floatDTypes {
			for _, p := range binaryPairs {
				a := randRef(p[0], dt, nonZero(rng, 0.1, 3))
				b := randRef(p[1], dt, nonZero(rng, 0.1, 3))
				base := randRef(p[0], dt, uniform(rng, 0.5, 2))
				for _, l := range layoutsFor(len(p[0])) {
					at := l.view(dev, a, dt)
					bt := mk(dev, b, dt)
					name := dt.String() + " " + shapeName(p[0]) + "," + shapeName(p[1]) + " " + l.name
					for _, c := range floatBinaryCases {
						want := bcast2(a, b, func(x, y float64) float64 { return quantize(c.ref(x, y), dt) })
						// rem/mod lose the quotient's precision in low-precision dtypes.
						check(t, c.name+" "+name, c.f(at, bt), want, dt, 1, nil)
					}
					want := bcast2(base, b, func(x, y float64) float64 { return quantize(math.Pow(x, y), dt) })
					checkEq(t, "pow "+name, l.view(dev, base, dt).Pow(bt), want, dt)
				}
			}
			// NaN propagates through Maximum and Minimum.
			n := mk(dev, ref{[]int{2}, []float64{math.NaN(), 1}}, dt)
			o := mk(dev, ref{[]int{2}, []float64{0, math.NaN()}}, dt)
			checkEq(t, "maximum NaN "+dt.String(), n.Maximum(o), ref{[]int{2}, []float64{math.NaN(), math.NaN()}}, dt)
			checkEq(t, "minimum NaN "+dt.String(), n.Minimum(o), ref{[]int{2}, []float64{math.NaN(), math.NaN()}}, dt)
			// Both operands expanded and permuted.
			a := randRef([]int{4, 1}, dt, nonZero(rng, 0.1, 3))
			b := randRef([]int{3, 4}, dt, nonZero(rng, 0.1, 3))
			at := mk(dev, a, dt).Expand(4, 3)
			bt := layoutsFor(2)[1].view(dev, b, dt).Transpose() // [4, 3] non-contiguous
			want := build([]int{4, 3}, func(idx []int) float64 { return quantize(a.at(idx[0], 0)*b.at(idx[1], idx[0]), dt) })
			checkEq(t, "mul expanded×transposed "+dt.String(), at.Mul(bt), want, dt)
		}
	})
}

func TestTableBinaryInt(t *testing.T) {
	divisor := func(rng interface{ IntN(int) int }) func() float64 {
		return func() float64 {
			v := float64(1 + rng.IntN(7))
			if rng.IntN(2) == 0 {
				v = -v
			}
			return v
		}
	}
	cases := []binaryCase{
		{"add", (*Tensor).Add, func(a, b float64) float64 { return a + b }},
		{"sub", (*Tensor).Sub, func(a, b float64) float64 { return a - b }},
		{"mul", (*Tensor).Mul, func(a, b float64) float64 { return a * b }},
		{"div", (*Tensor).Div, func(a, b float64) float64 { return float64(int64(a) / int64(b)) }},
		{"floor_div", (*Tensor).FloorDiv, floorDivRef},
		{"rem", (*Tensor).Rem, func(a, b float64) float64 { return float64(int64(a) % int64(b)) }},
		{"mod", (*Tensor).Mod, modRef},
		{"maximum", (*Tensor).Maximum, math.Max},
		{"minimum", (*Tensor).Minimum, math.Min},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(4)
		for _, dt := range intDTypes {
			for _, p := range binaryPairs {
				a := randRef(p[0], dt, ints(rng, -20, 20))
				b := randRef(p[1], dt, divisor(rng))
				for _, l := range layoutsFor(len(p[0])) {
					at, bt := l.view(dev, a, dt), mk(dev, b, dt)
					for _, c := range cases {
						name := c.name + " " + dt.String() + " " + shapeName(p[0]) + "," + shapeName(p[1]) + " " + l.name
						checkEq(t, name, c.f(at, bt), bcast2(a, b, c.ref), dt)
					}
				}
			}
			// Hand-worked signs: 7 and -7 by 2 and -2.
			a := mk(dev, ref{[]int{4}, []float64{7, -7, 7, -7}}, dt)
			b := mk(dev, ref{[]int{4}, []float64{2, 2, -2, -2}}, dt)
			checkEq(t, "div signs "+dt.String(), a.Div(b), ref{[]int{4}, []float64{3, -3, -3, 3}}, dt)
			checkEq(t, "floor_div signs "+dt.String(), a.FloorDiv(b), ref{[]int{4}, []float64{3, -4, -4, 3}}, dt)
			checkEq(t, "rem signs "+dt.String(), a.Rem(b), ref{[]int{4}, []float64{1, -1, 1, -1}}, dt)
			checkEq(t, "mod signs "+dt.String(), a.Mod(b), ref{[]int{4}, []float64{1, 1, -1, -1}}, dt)
			z := mk(dev, ref{[]int{2}, []float64{1, 0}}, dt)
			for _, c := range cases[3:7] {
				expectDivisorError(t, c.name+" by zero "+dt.String(), dev, func() *Tensor { return c.f(a.Narrow(0, 0, 2), z) }, c.name, "division by zero")
			}
		}
	})
}

func TestTableCompareLogical(t *testing.T) {
	cmp := []binaryCase{
		{"eq", (*Tensor).Eq, func(a, b float64) float64 { return b2f(a == b) }},
		{"ne", (*Tensor).Ne, func(a, b float64) float64 { return b2f(a != b) }},
		{"lt", (*Tensor).Lt, func(a, b float64) float64 { return b2f(a < b) }},
		{"le", (*Tensor).Le, func(a, b float64) float64 { return b2f(a <= b) }},
		{"gt", (*Tensor).Gt, func(a, b float64) float64 { return b2f(a > b) }},
		{"ge", (*Tensor).Ge, func(a, b float64) float64 { return b2f(a >= b) }},
	}
	logic := []binaryCase{
		{"and", (*Tensor).And, func(a, b float64) float64 { return b2f(a != 0 && b != 0) }},
		{"or", (*Tensor).Or, func(a, b float64) float64 { return b2f(a != 0 || b != 0) }},
		{"xor", (*Tensor).Xor, func(a, b float64) float64 { return b2f((a != 0) != (b != 0)) }},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(5)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			for _, p := range binaryPairs {
				a := randRef(p[0], dt, ints(rng, -2, 2))
				b := randRef(p[1], dt, ints(rng, -2, 2))
				for _, l := range layoutsFor(len(p[0])) {
					at, bt := l.view(dev, a, dt), mk(dev, b, dt)
					for _, c := range cmp {
						name := c.name + " " + dt.String() + " " + shapeName(p[0]) + "," + shapeName(p[1]) + " " + l.name
						checkEq(t, name, c.f(at, bt), bcast2(a, b, c.ref), Bool)
					}
				}
			}
			n := mk(dev, ref{[]int{1}, []float64{math.NaN()}}, F32)
			checkEq(t, "NaN eq NaN", n.Eq(n), ref{[]int{1}, []float64{0}}, Bool)
			checkEq(t, "NaN ne NaN", n.Ne(n), ref{[]int{1}, []float64{1}}, Bool)
		}
		for _, p := range binaryPairs {
			a := randRef(p[0], Bool, ints(rng, 0, 1))
			b := randRef(p[1], Bool, ints(rng, 0, 1))
			for _, l := range layoutsFor(len(p[0])) {
				at, bt := l.view(dev, a, Bool), mk(dev, b, Bool)
				for _, c := range logic {
					checkEq(t, c.name+" "+shapeName(p[0])+","+shapeName(p[1])+" "+l.name, c.f(at, bt), bcast2(a, b, c.ref), Bool)
				}
			}
		}
	})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestTablePromotion(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(6)
		cases := []struct{ a, b, want DType }{
			{I32, F32, F32}, {I64, I32, I64}, {F16, BF16, F32}, {F64, F32, F64}, {Bool, Bool, I64}, {Bool, F16, F16}, {I32, Bool, I32},
		}
		for _, c := range cases {
			a := randRef([]int{2, 3}, c.a, ints(rng, -4, 4))
			b := randRef([]int{3}, c.b, ints(rng, -4, 4))
			got := mk(dev, a, c.a).Add(mk(dev, b, c.b))
			checkEq(t, "add "+c.a.String()+"+"+c.b.String(), got, bcast2(a, b, func(x, y float64) float64 { return x + y }), c.want)
		}
	})
}

func TestTableWhere(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(7)
		shapes := [][3][]int{{{3, 1}, {3, 4}, {4}}, {{2, 3}, {2, 3}, {2, 3}}, {{}, {2, 2}, {}}, {{0, 2}, {1, 2}, {2}}, {{2, 3, 4}, {3, 4}, {2, 1, 4}}}
		for _, dt := range append(append([]DType{}, floatDTypes...), append(intDTypes, Bool)...) {
			for _, s := range shapes {
				c := randRef(s[0], Bool, ints(rng, 0, 1))
				a := randRef(s[1], dt, nonZero(rng, 1, 9))
				b := randRef(s[2], dt, nonZero(rng, 1, 9))
				shape, _ := BroadcastShapes(s[0], s[1])
				shape, _ = BroadcastShapes(shape, s[2])
				want := build(shape, func(idx []int) float64 {
					if c.bcastAt(idx) != 0 {
						return a.bcastAt(idx)
					}
					return b.bcastAt(idx)
				})
				for _, l := range layoutsFor(len(s[0])) {
					got := Where(l.view(dev, c, Bool), mk(dev, a, dt), mk(dev, b, dt))
					checkEq(t, "where "+dt.String()+" "+shapeName(s[0])+" "+l.name, got, want, dt)
				}
			}
		}
	})
}

func TestTableCast(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(8)
		fracs := ref{[]int{10}, []float64{-2.7, -2.5, -0.5, 0, 0.5, 1.5, 2.5, 2.7, 100.9, -100.9}}
		for _, from := range floatDTypes {
			x := mk(dev, mapRef(fracs, func(v float64) float64 { return quantize(v, from) }), from)
			for _, to := range intDTypes {
				checkEq(t, "cast "+from.String()+"->"+to.String()+" truncates", x.Cast(to),
					mapRef(fracs, func(v float64) float64 { return math.Trunc(quantize(v, from)) }), to)
			}
			checkEq(t, "cast "+from.String()+"->bool", x.Cast(Bool), mapRef(fracs, func(v float64) float64 { return b2f(v != 0) }), Bool)
			nan := mk(dev, ref{[]int{2}, []float64{math.NaN(), -0.0}}, from)
			checkEq(t, "cast NaN,-0 "+from.String()+"->bool", nan.Cast(Bool), ref{[]int{2}, []float64{1, 0}}, Bool)
			// Float to float rounds to nearest even (inputs exact in F32).
			for _, to := range floatDTypes {
				r := randRef([]int{3, 5}, F32, nonZero(rng, 0.001, 100))
				if from == F16 || from == BF16 {
					r = mapRef(r, func(v float64) float64 { return quantize(v, from) })
				}
				for _, l := range layoutsFor(2) {
					checkEq(t, "cast "+from.String()+"->"+to.String()+" "+l.name, l.view(dev, r, from).Cast(to),
						mapRef(r, func(v float64) float64 { return quantize(v, to) }), to)
				}
			}
		}
		// Ties to even: 1+2⁻¹¹ is halfway between F16 neighbours, 1+2⁻⁸ between BF16 ones.
		ties := ref{[]int{4}, []float64{1 + 0x1p-11, 1 + 3*0x1p-11, 1 + 0x1p-8, 1 + 3*0x1p-8}}
		checkEq(t, "f32->f16 ties", mk(dev, ties, F32).Cast(F16), ref{[]int{4}, []float64{1, 1 + 0x1p-9, 1 + 0x1p-8, 1 + 3*0x1p-8}}, F16)
		checkEq(t, "f32->bf16 ties", mk(dev, ties, F32).Cast(BF16), ref{[]int{4}, []float64{1, 1, 1, 1 + 0x1p-6}}, BF16)
		for _, from := range append(intDTypes, Bool) {
			v := randRef([]int{2, 3}, from, ints(rng, -50, 50))
			if from == Bool {
				v = randRef([]int{2, 3}, Bool, ints(rng, 0, 1))
			}
			for _, to := range append(append([]DType{}, floatDTypes...), append(intDTypes, Bool)...) {
				want := mapRef(v, func(x float64) float64 { return quantize(x, to) })
				checkEq(t, "cast "+from.String()+"->"+to.String(), layoutsFor(2)[1].view(dev, v, from).Cast(to), want, to)
			}
		}
	})
}
