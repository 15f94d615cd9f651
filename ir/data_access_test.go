package ir

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

type myFloat float32

func TestDTypeOf(t *testing.T) {
	got := []DType{
		DTypeOf[float64](), DTypeOf[float32](), DTypeOf[Float16](), DTypeOf[BFloat16](),
		DTypeOf[int64](), DTypeOf[int32](), DTypeOf[int16](), DTypeOf[int8](),
		DTypeOf[uint64](), DTypeOf[uint32](), DTypeOf[uint16](), DTypeOf[uint8](),
		DTypeOf[bool](), DTypeOf[myFloat](),
	}
	want := []DType{F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool, F32}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: DTypeOf = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestHalfElementTypes(t *testing.T) {
	// 0.1 = 1.6 * 2^-4: binary16 fraction round(0.6*1024) = 614 = 0x266;
	// float32 0x3DCCCCCD rounds up to bfloat16 0x3DCD.
	if h := NewFloat16(0.1); h != 0x2E66 || h.Float64() != 1638.0/16384 || h.Float32() != float32(1638.0/16384) {
		t.Errorf("NewFloat16(0.1) = %#04x (%v)", uint16(h), h.Float64())
	}
	if b := NewBFloat16(0.1); b != 0x3DCD || b.Float64() != 205.0/2048 || b.Float32() != float32(205.0/2048) {
		t.Errorf("NewBFloat16(0.1) = %#04x (%v)", uint16(b), b.Float64())
	}
}

func TestFromSliceLayout(t *testing.T) {
	cases := []struct {
		d     *TensorData
		dt    DType
		bytes []byte
	}{
		{FromSlice([]float32{1, -2}, []int{2}), F32, []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0}},
		{FromSlice([]float64{0.5}, nil), F64, []byte{0, 0, 0, 0, 0, 0, 0xE0, 0x3F}},
		{FromSlice([]int16{-2, 258}, []int{1, 2}), I16, []byte{0xFE, 0xFF, 0x02, 0x01}},
		{FromSlice([]uint32{0x01020304}, []int{1}), U32, []byte{4, 3, 2, 1}},
		{FromSlice([]int64{-1}, []int{1}), I64, bytes.Repeat([]byte{0xFF}, 8)},
		{FromSlice([]bool{true, false, true}, []int{3}), Bool, []byte{1, 0, 1}},
		{FromSlice([]Float16{NewFloat16(1), NewFloat16(-2)}, []int{2}), F16, []byte{0x00, 0x3C, 0x00, 0xC0}},
		{FromSlice([]BFloat16{NewBFloat16(1)}, []int{1}), BF16, []byte{0x80, 0x3F}},
		{FromSlice([]myFloat{1}, []int{1, 1}), F32, []byte{0, 0, 0x80, 0x3F}},
		{FromSlice([]int8{-128, 127}, []int{2}), I8, []byte{0x80, 0x7F}},
		{FromSlice([]uint8{}, []int{0, 4}), U8, []byte{}},
	}
	for i, c := range cases {
		if c.d.DType != c.dt || !bytes.Equal(c.d.Bytes, c.bytes) {
			t.Errorf("case %d: got %v % x, want %v % x", i, c.d.DType, c.d.Bytes, c.dt, c.bytes)
		}
	}
	shape := []int{2}
	d := FromSlice([]int8{1, 2}, shape)
	shape[0] = 5
	if d.Shape[0] != 2 {
		t.Error("FromSlice kept the caller's shape slice")
	}
}

func TestFromSlicePanics(t *testing.T) {
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { FromSlice([]float32{1, 2, 3}, []int{2, 2}) }, "3 values for shape [2 2], which holds 4"},
		{func() { FromSlice([]float32{1}, nil) }, ""}, // a scalar holds one value: no panic
		{func() { FromSlice([]int8{}, []int{-1}) }, "negative size"},
	} {
		msg := func() (m string) {
			defer func() {
				if r := recover(); r != nil {
					m = r.(string)
				}
			}()
			c.f()
			return ""
		}()
		if (c.want == "") != (msg == "") || !strings.Contains(msg, c.want) {
			t.Errorf("panic %q, want one containing %q", msg, c.want)
		}
	}
}

// exact is a reference value: NaN, or a (possibly infinite) big.Float.
type exact struct {
	nan bool
	v   *big.Float
}

func exactOf(x any) exact {
	f := func(v float64) exact {
		if math.IsNaN(v) {
			return exact{nan: true}
		}
		return exact{v: big.NewFloat(v)}
	}
	i := func(v int64) exact { return exact{v: new(big.Float).SetInt64(v)} }
	u := func(v uint64) exact { return exact{v: new(big.Float).SetUint64(v)} }
	switch x := x.(type) {
	case float64:
		return f(x)
	case float32:
		return f(float64(x))
	case Float16:
		return f(float64(x.Float32()))
	case BFloat16:
		return f(float64(x.Float32()))
	case int64:
		return i(x)
	case int32:
		return i(int64(x))
	case int16:
		return i(int64(x))
	case int8:
		return i(int64(x))
	case uint64:
		return u(x)
	case uint32:
		return u(uint64(x))
	case uint16:
		return u(uint64(x))
	case uint8:
		return u(uint64(x))
	case bool:
		if x {
			return u(1)
		}
		return u(0)
	}
	panic("exactOf: unexpected type")
}

func (e exact) same(o exact) bool {
	if e.nan || o.nan {
		return e.nan == o.nan
	}
	return e.v.Cmp(o.v) == 0 && e.v.Signbit() == o.v.Signbit()
}

func (e exact) String() string {
	if e.nan {
		return "NaN"
	}
	return e.v.Text('g', 25)
}

// refConvert converts x (of dtype src) to dtype dst with math/big: floats
// round to the target precision with ties to even (unbounded exponent, then
// overflow to ±Inf at 2^(emax+1)); float->int truncates and saturates, NaN
// gives 0; int->int wraps modulo 2^bits; to Bool is x != 0.
func refConvert(x exact, src, dst DType) exact {
	switch {
	case dst == Bool:
		if x.nan || x.v.Sign() != 0 {
			return exact{v: big.NewFloat(1)}
		}
		return exact{v: big.NewFloat(0)}
	case dst.IsFloat():
		if x.nan {
			return x
		}
		// significand bits and largest exponent of each float format
		format := map[DType]struct{ prec, emax int }{F64: {53, 1023}, F32: {24, 127}, Flex32: {24, 127}, F16: {11, 15}, BF16: {8, 127}}
		prec, emax := format[dst].prec, format[dst].emax
		y := new(big.Float).SetMode(big.ToNearestEven).SetPrec(uint(prec)).Set(x.v)
		if !y.IsInf() && y.MantExp(nil) > emax+1 {
			y.SetInf(y.Sign() < 0)
		}
		return exact{v: y}
	}
	bitsN := uint(dst.Size() * 8)
	lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), bitsN)
	hi.Sub(hi, big.NewInt(1))
	if dst.IsSigned() {
		lo.Lsh(big.NewInt(1), bitsN-1).Neg(lo)
		hi.Rsh(hi, 1)
	}
	var n *big.Int
	switch {
	case x.nan:
		n = new(big.Int)
	case x.v.IsInf():
		n = hi
		if x.v.Sign() < 0 {
			n = lo
		}
	default:
		n, _ = x.v.Int(nil) // truncates toward zero
		if src.IsFloat() {
			if n.Cmp(lo) < 0 {
				n = lo
			} else if n.Cmp(hi) > 0 {
				n = hi
			}
		} else { // wrap into [lo, hi]
			mod := new(big.Int).Lsh(big.NewInt(1), bitsN)
			n.Sub(n, lo).Mod(n, mod).Add(n, lo)
		}
	}
	return exact{v: new(big.Float).SetInt(n)}
}

// randomSource returns n random elements of dtype dt (non-zero mostly, of
// all magnitudes the dtype holds, a few NaN and ±Inf for floats) as data of
// shape [n].
func randomSource(rng *rand.Rand, dt DType, n int) *TensorData {
	f := func(maxExp int) float64 {
		switch rng.IntN(20) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*rng.IntN(2))
		case 2:
			return float64(rng.IntN(5) - 2) // small integers, 0 and ±1 included
		}
		v := math.Ldexp(rng.Float64()+0.5, rng.IntN(maxExp+8)-8)
		if rng.IntN(2) == 0 {
			v = -v
		}
		return v
	}
	u64 := func() uint64 {
		v := rng.Uint64()
		return v >> rng.UintN(64) // all magnitudes
	}
	s := []int{n}
	switch dt {
	case F64:
		return FromSlice(fill(n, func() float64 { return f(70) }), s)
	case F32, Flex32:
		d := FromSlice(fill(n, func() float32 { return float32(f(70)) }), s)
		d.DType = dt
		return d
	case F16:
		return FromSlice(fill(n, func() Float16 { return NewFloat16(f(17)) }), s)
	case BF16:
		return FromSlice(fill(n, func() BFloat16 { return NewBFloat16(f(70)) }), s)
	case I64:
		return FromSlice(fill(n, func() int64 { return int64(u64()) }), s)
	case I32:
		return FromSlice(fill(n, func() int32 { return int32(u64()) }), s)
	case I16:
		return FromSlice(fill(n, func() int16 { return int16(u64()) }), s)
	case I8:
		return FromSlice(fill(n, func() int8 { return int8(u64()) }), s)
	case U64:
		return FromSlice(fill(n, u64), s)
	case U32:
		return FromSlice(fill(n, func() uint32 { return uint32(u64()) }), s)
	case U16:
		return FromSlice(fill(n, func() uint16 { return uint16(u64()) }), s)
	case U8:
		return FromSlice(fill(n, func() uint8 { return uint8(u64()) }), s)
	}
	return FromSlice(fill(n, func() bool { return rng.IntN(2) == 0 }), s)
}

func fill[T any](n int, g func() T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = g()
	}
	return out
}

// sourceExact decodes src element i with the typed accessor of its own
// dtype (As to the same dtype is a plain copy).
func sourceExact(src *TensorData) []exact {
	var out []exact
	add := func(x any) { out = append(out, exactOf(x)) }
	switch src.DType {
	case F64:
		each(As[float64](src), add)
	case F32, Flex32:
		each(As[float32](src), add)
	case F16:
		each(As[Float16](src), add)
	case BF16:
		each(As[BFloat16](src), add)
	case I64:
		each(As[int64](src), add)
	case I32:
		each(As[int32](src), add)
	case I16:
		each(As[int16](src), add)
	case I8:
		each(As[int8](src), add)
	case U64:
		each(As[uint64](src), add)
	case U32:
		each(As[uint32](src), add)
	case U16:
		each(As[uint16](src), add)
	case U8:
		each(As[uint8](src), add)
	case Bool:
		each(As[bool](src), add)
	}
	return out
}

func each[T any](s []T, f func(any)) {
	for _, v := range s {
		f(v)
	}
}

// asAny runs As and TryAs to dst and returns As's elements and TryAs's error.
func asAny(src *TensorData, dst DType) ([]any, error) {
	var out []any
	var err error
	conv := func(f func() []any, tryErr error) { out, err = f(), tryErr }
	switch dst {
	case F64:
		_, e := TryAs[float64](src)
		conv(func() []any { return anys(As[float64](src)) }, e)
	case F32, Flex32:
		_, e := TryAs[float32](src)
		conv(func() []any { return anys(As[float32](src)) }, e)
	case F16:
		_, e := TryAs[Float16](src)
		conv(func() []any { return anys(As[Float16](src)) }, e)
	case BF16:
		_, e := TryAs[BFloat16](src)
		conv(func() []any { return anys(As[BFloat16](src)) }, e)
	case I64:
		_, e := TryAs[int64](src)
		conv(func() []any { return anys(As[int64](src)) }, e)
	case I32:
		_, e := TryAs[int32](src)
		conv(func() []any { return anys(As[int32](src)) }, e)
	case I16:
		_, e := TryAs[int16](src)
		conv(func() []any { return anys(As[int16](src)) }, e)
	case I8:
		_, e := TryAs[int8](src)
		conv(func() []any { return anys(As[int8](src)) }, e)
	case U64:
		_, e := TryAs[uint64](src)
		conv(func() []any { return anys(As[uint64](src)) }, e)
	case U32:
		_, e := TryAs[uint32](src)
		conv(func() []any { return anys(As[uint32](src)) }, e)
	case U16:
		_, e := TryAs[uint16](src)
		conv(func() []any { return anys(As[uint16](src)) }, e)
	case U8:
		_, e := TryAs[uint8](src)
		conv(func() []any { return anys(As[uint8](src)) }, e)
	case Bool:
		_, e := TryAs[bool](src)
		conv(func() []any { return anys(As[bool](src)) }, e)
	}
	return out, err
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestAsAllDTypePairs converts random values between every pair of dtypes
// and compares each element with a math/big reference, and checks that
// TryAs fails exactly when some element's value changed.
func TestAsAllDTypePairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sdt := range AllDTypes {
		src := randomSource(rng, sdt, 300)
		xs := sourceExact(src)
		for _, ddt := range AllDTypes {
			got, tryErr := asAny(src, ddt)
			lossy := -1
			for i, x := range xs {
				want := refConvert(x, sdt, ddt)
				g := exactOf(got[i])
				if !g.same(want) {
					t.Fatalf("%v -> %v: element %d: %v gave %v, want %v", sdt, ddt, i, x, g, want)
				}
				if lossy < 0 && !g.same(x) {
					lossy = i
				}
			}
			if (lossy >= 0) != (tryErr != nil) {
				t.Fatalf("%v -> %v: TryAs error %v, first changed element %d", sdt, ddt, tryErr, lossy)
			}
			if tryErr != nil {
				name := ddt.String()
				if ddt == Flex32 {
					name = "f32" // As[float32] converts to F32
				}
				want := []string{sdt.String(), name, "element " + itoa(lossy) + " "}
				for _, w := range want {
					if !strings.Contains(tryErr.Error(), w) {
						t.Fatalf("%v -> %v: TryAs error %q does not mention %q", sdt, ddt, tryErr, w)
					}
				}
			}
		}
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

func TestTryAsCases(t *testing.T) {
	i64 := func(v ...int64) *TensorData { return FromSlice(v, []int{len(v)}) }
	u64 := func(v ...uint64) *TensorData { return FromSlice(v, []int{len(v)}) }
	f32 := func(v ...float32) *TensorData { return FromSlice(v, []int{len(v)}) }
	f64 := func(v ...float64) *TensorData { return FromSlice(v, []int{len(v)}) }
	try := func(d *TensorData, dt DType) error { _, err := d.TryConvert(dt); return err }
	cases := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"f32 ints to i32", try(f32(2, -3, 0), I32), ""},
		{"f32 1.5 to i32", try(f32(2, 1.5), I32), "cannot convert f32 to i32 exactly: element 1 (index [1]) is 1.5"},
		{"f64 0.1 to f32", try(f64(0.5, 0.1), F32), "element 1 (index [1]) is 0.1"},
		{"f64 0.5 0.25 to f32", try(f64(0.5, 0.25, math.Inf(-1)), F32), ""},
		{"f64 1e39 to f32 overflows", try(f64(1e39), F32), "is 1e+39"},
		{"f64 NaN to f32", try(f64(math.NaN()), F32), ""},
		{"f64 NaN to i64", try(f64(math.NaN()), I64), "is nan"},
		{"f32 inf to i64", try(f32(float32(math.Inf(1))), I64), "is inf"},
		{"i64 300 to i8", try(i64(1, 300), I8), "i64 to i8 exactly: element 1 (index [1]) is 300"},
		{"i64 255 to u8", try(i64(255, 0), U8), ""},
		{"i64 -1 to u8", try(i64(-1), U8), "is -1"},
		{"i64 -128 to i8", try(i64(-128, 127), I8), ""},
		{"i64 2^53+1 to f64", try(i64(1<<53+1), F64), "is 9007199254740993"},
		{"i64 2^53 to f64", try(i64(1<<53), F64), ""},
		{"i64 min to f32", try(i64(math.MinInt64), F32), ""},
		{"i64 max to f64", try(i64(math.MaxInt64), F64), "is 9223372036854775807"},
		{"u64 max to i64", try(u64(math.MaxUint64), I64), "is 18446744073709551615"},
		{"u64 max to f64", try(u64(math.MaxUint64), F64), "is 18446744073709551615"},
		{"u64 2^63 to f32", try(u64(1<<63), F32), ""},
		{"f32 2^63 to i64", try(f32(0x1p63), I64), "is 9.223372e+18"},
		{"f32 -2^63 to i64", try(f32(-0x1p63), I64), ""},
		{"f32 2^64 to u64", try(f32(0x1p64), U64), "is 1.8446744e+19"},
		{"f32 -0.5 to u8", try(f32(-0.5), U8), "is -0.5"},
		{"i64 2 to bool", try(FromSlice([]int32{0, 1, 2, 1, 0, 1}, []int{2, 3}), Bool), "element 2 (index [0 2]) is 2"},
		{"i64 0 1 to bool", try(i64(0, 1, 1), Bool), ""},
		{"f32 0 -0 1 to bool", try(f32(0, float32(math.Copysign(0, -1)), 1), Bool), ""},
		{"f32 0.5 to bool", try(f32(1, 0.5), Bool), "is 0.5"},
		{"bool to f16", try(FromSlice([]bool{true, false}, []int{2}), F16), ""},
		{"f16 to bf16", try(FromSlice([]Float16{NewFloat16(1), NewFloat16(1 + 0x1p-10)}, []int{2}), BF16), "f16 to bf16 exactly: element 1 (index [1]) is 1.001"},
		{"bf16 1e30 to f16", try(FromSlice([]BFloat16{NewBFloat16(1e30)}, []int{1}), F16), "is 1e+30"},
		{"f32 70000 to f16", try(f32(65504, 70000), F16), "element 1"},
		{"f32 65504 to f16", try(f32(65504, -65504, 0x1p-24), F16), ""},
		{"i64 2049 to f16", try(i64(2048, 2049), F16), "is 2049"},
		{"i64 2^62 to bf16", try(i64(1<<62), BF16), ""},
		{"flex32 to f32", try(f32(0.1), Flex32), ""},
		{"multi-index", try(FromSlice([]float64{1, 2, 3, 4, 2.5, 6}, []int{2, 3}), I32), "element 4 (index [1 1]) is 2.5"},
	}
	for _, c := range cases {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: unexpected error %v", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	// TryAs returns the values when it accepts.
	v, err := TryAs[int8](f64(-3, 0, 127))
	if err != nil || len(v) != 3 || v[0] != -3 || v[1] != 0 || v[2] != 127 {
		t.Errorf("TryAs[int8] = %v, %v", v, err)
	}
	if v, err := TryAs[uint8](f64(-3)); err == nil || v != nil {
		t.Errorf("TryAs[uint8](-3) = %v, %v; want an error", v, err)
	}
}

// TestAsCastRules checks the documented edge cases of the cast semantics by
// hand: truncation toward zero, saturation, NaN to 0, wrap-around of ints,
// x != 0 for Bool, correct rounding of large ints.
func TestAsCastRules(t *testing.T) {
	f := FromSlice([]float64{-2.7, 2.7, -0.5, 1e10, -1e10, math.NaN(), math.Inf(1), 300.9}, []int{8})
	checkSlice(t, "f64->i32", As[int32](f), []int32{-2, 2, 0, math.MaxInt32, math.MinInt32, 0, math.MaxInt32, 300})
	checkSlice(t, "f64->u8", As[uint8](f), []uint8{0, 2, 0, 255, 0, 0, 255, 255})
	checkSlice(t, "f64->bool", As[bool](f), []bool{true, true, true, true, true, true, true, true})
	i := FromSlice([]int64{-1, 256, 257, -129, 0}, []int{5})
	checkSlice(t, "i64->u8", As[uint8](i), []uint8{255, 0, 1, 127, 0})
	checkSlice(t, "i64->i8", As[int8](i), []int8{-1, 0, 1, 127, 0})
	checkSlice(t, "i64->bool", As[bool](i), []bool{true, true, true, true, false})
	// 2^62 + 2^54 + 1 lies just above the midpoint between the bfloat16
	// values 2^62 and 2^62 + 2^55; rounding through float64 to nearest
	// would give the midpoint and then 2^62.
	big := FromSlice([]int64{1<<62 + 1<<54 + 1, 1<<62 + 1<<54, 1<<24 + 1<<0 + 1<<1}, []int{3})
	checkSlice(t, "i64->bf16", As[BFloat16](big), []BFloat16{NewBFloat16(0x1p62 + 0x1p55), NewBFloat16(0x1p62), NewBFloat16(0x1p24)})
	checkSlice(t, "i64->f32", As[float32](big), []float32{0x1p62 + 0x1p54, 0x1p62 + 0x1p54, 0x1p24 + 4})
	u := FromSlice([]uint64{1<<63 + 1<<39 + 1, math.MaxUint64}, []int{2})
	checkSlice(t, "u64->f32", As[float32](u), []float32{0x1p63 + 0x1p40, 0x1p64})
	checkSlice(t, "u64->i64", As[int64](u), []int64{math.MinInt64 + 1<<39 + 1, -1})
	checkSlice(t, "bool->f32", As[float32](FromSlice([]bool{true, false}, []int{2})), []float32{1, 0})
	checkSlice(t, "f32->f16", As[Float16](FromSlice([]float32{70000, 65519, 0x1p-25, 1 + 0x1p-11}, []int{4})),
		[]Float16{0x7C00, 0x7BFF, 0, 0x3C00})
}

func checkSlice[T comparable](t *testing.T, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
		}
	}
}

func TestAccessorMethods(t *testing.T) {
	d := FromSlice([]int32{-3, 0, 7, 1 << 30}, []int{2, 2})
	checkSlice(t, "Float32s", d.Float32s(), []float32{-3, 0, 7, 0x1p30})
	checkSlice(t, "Float64s", d.Float64s(), []float64{-3, 0, 7, 0x1p30})
	checkSlice(t, "Bools", d.Bools(), []bool{true, false, true, true})
	f := FromSlice([]float32{-2.75, 2.75, 0.1}, []int{3})
	checkSlice(t, "Int64s", f.Int64s(), []int64{-2, 2, 0})
	if v := f.Value(2); v != float64(float32(0.1)) {
		t.Errorf("Value(2) = %v, want %v", v, float64(float32(0.1)))
	}
	if v := d.Value(3); v != 0x1p30 {
		t.Errorf("Value(3) = %v", v)
	}
	if v := FromSlice([]Float16{NewFloat16(-1.5)}, []int{1, 1}).Scalar(); v != -1.5 {
		t.Errorf("Scalar = %v, want -1.5", v)
	}
	if v := FromSlice([]bool{true}, nil).Scalar(); v != 1 {
		t.Errorf("Scalar of true = %v, want 1", v)
	}
	// As does not alias the source bytes.
	g := As[float32](f)
	g[0] = 100
	if f.Value(0) != -2.75 {
		t.Error("As aliases the data")
	}
	// Convert between F32 and Flex32 keeps the bytes and relabels.
	c := f.Convert(Flex32)
	if c.DType != Flex32 || !bytes.Equal(c.Bytes, f.Bytes) || &c.Bytes[0] == &f.Bytes[0] {
		t.Errorf("Convert(Flex32) = %v", c)
	}
	for _, bad := range []func(){
		func() { f.Value(3) },
		func() { f.Value(-1) },
		func() { f.Scalar() },
		func() { FromSlice([]float32{}, []int{0}).Scalar() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}
