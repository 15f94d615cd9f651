//go:build linux && (amd64 || arm64)

package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Every unary op in its domain, every dtype the device supports and every
// layout give flex's values: on random non-zero data and, for floats, on
// the IEEE edge values.
func TestUnaryMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(1, 2))
	shape := []int{3, 5, 7}
	for _, dt := range dtypesOf(b, append(append([]backend.DType{}, floatDTypes...), append(intDTypes, backend.Bool)...)...) {
		for u := ir.OpNeg; u <= ir.OpNot; u++ {
			op := ir.Op{Kind: ir.KindUnary, Sub: uint8(u), In: [3]ir.Tensor{&Tensor{shape: shape, dtype: dt}}}
			if op.Infer() != nil {
				continue // outside the op's domain
			}
			for _, l := range layouts {
				x, fx := randomPair(b, rng, shape, dt, l)
				same(t, b, unaryOn(b, u, x), unaryOn(flexRef, u, fx), name(u, " ", dt, " ", l.name))
			}
			if dt.IsFloat() {
				x, fx := pair(b, specialData(shape, dt), layouts[0], shape)
				same(t, b, unaryOn(b, u, x), unaryOn(flexRef, u, fx), name(u, " ", dt, " edge values"))
			}
		}
	}
}

// Every binary op (comparisons included) on every dtype gives flex's
// values, with broadcasting of a row, a column and a scalar; integer
// divisors are non-zero (the caller rejects zero).
func TestBinaryMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range dtypesOf(b, append(append([]backend.DType{}, floatDTypes...), append(intDTypes, backend.Bool)...)...) {
		for o := ir.OpAdd; o <= ir.OpShr; o++ {
			op := ir.Op{Kind: ir.KindBinary, Sub: uint8(o), In: [3]ir.Tensor{&Tensor{shape: []int{2}, dtype: dt}, &Tensor{shape: []int{2}, dtype: dt}}}
			if op.Infer() != nil {
				continue
			}
			for _, sh := range [][2][]int{{{4, 9}, {4, 9}}, {{4, 9}, {9}}, {{4, 1}, {1, 9}}, {{4, 9}, {}}, {{}, {4, 9}}, {{1030}, {1030}}} {
				for _, l := range layouts {
					x, fx := randomPair(b, rng, sh[0], dt, l)
					y, fy := randomPair(b, rng, sh[1], dt, layouts[0])
					if o.IsShift() {
						// amounts in and out of [0, bits)
						d := fromF64(sh[1], dt, func() float64 { return float64(rng.IntN(80) - 10*btoi(dt.IsSigned())) })
						y, fy = pair(b, d, layouts[0], sh[1])
					}
					same(t, b, binaryOn(b, o, x, y), binaryOn(flexRef, o, fx, fy), name(o, " ", dt, " ", sh, " ", l.name))
				}
			}
			if dt.IsFloat() {
				x, fx := pair(b, specialData([]int{27}, dt), layouts[0], []int{27})
				for k := range 27 {
					d := specialData([]int{27}, dt)
					rot := append(append([]byte{}, d.Bytes[k*dt.Size():]...), d.Bytes[:k*dt.Size()]...)
					y, fy := pair(b, &backend.TensorData{Shape: []int{27}, DType: dt, Bytes: rot}, layouts[0], []int{27})
					same(t, b, binaryOn(b, o, x, y), binaryOn(flexRef, o, fx, fy), name(o, " ", dt, " edge values rotated ", k))
				}
			}
		}
	}
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Integer division at the edges: MIN / -1 wraps to MIN, FloorDiv and Mod
// of mixed signs, as Go and flex define them.
func TestIntegerDivisionEdges(t *testing.T) {
	b := testBackend(t)
	for _, dt := range []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8} {
		lo, _ := ir.IntRange(dt)
		xs := []float64{float64(lo), float64(lo), 7, -7, 7, -7, 0, 1}
		ys := []float64{-1, 1, 2, 2, -2, -2, -3, float64(lo)}
		i, j := 0, 0
		dx := fromF64([]int{8}, dt, func() float64 { i++; return xs[i-1] })
		dy := fromF64([]int{8}, dt, func() float64 { j++; return ys[j-1] })
		x, fx := pair(b, dx, layouts[0], []int{8})
		y, fy := pair(b, dy, layouts[0], []int{8})
		for _, o := range []backend.BinaryOp{ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod, ir.OpMul, ir.OpPow} {
			same(t, b, binaryOn(b, o, x, y), binaryOn(flexRef, o, fx, fy), name(o, " ", dt))
		}
	}
}

// Casts between every pair of dtypes give flex's values on random data
// and on values that round, saturate, wrap or are NaN.
func TestCastMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(5, 6))
	all := dtypesOf(b, backend.AllDTypes...)
	edges := []float64{0, -1, 1, 127.5, -128.5, 255.9, 256, -129, 32767.5, 65535.7, 65536, -32769, 2147483647.9, -2147483649,
		4294967296, 9.3e18, -9.3e18, 1.9e19, math.NaN(), math.Inf(1), math.Inf(-1), 0.5, 1.5, 2.5, -0.5, 1e-40, 3.4e38, 1e300}
	for _, from := range all {
		for _, to := range all {
			op := ir.Op{Kind: ir.KindCast, DType: to, In: [3]ir.Tensor{&Tensor{shape: []int{2}, dtype: from}}}
			if op.Infer() != nil {
				continue
			}
			for _, l := range layouts[:2] {
				x, fx := randomPair(b, rng, []int{5, 6}, from, l)
				same(t, b, ir.Cast(b, x, to), ir.Cast(flexRef, fx, to), name(from, "->", to, " ", l.name))
			}
			i := 0
			d := fromF64([]int{len(edges)}, from, func() float64 { i++; return edges[i-1] })
			x, fx := pair(b, d, layouts[0], []int{len(edges)})
			same(t, b, ir.Cast(b, x, to), ir.Cast(flexRef, fx, to), name(from, "->", to, " edge values"))
		}
	}
}

// The 16-bit float conversions of the shaders are bit-exact with package
// ir's: every F16 and BF16 value widens exactly, and float32 values
// (random bit patterns, every halfway point between neighbouring F16
// values of one binade, subnormal boundaries) round to the same bits.
func TestHalfConversionsBitExact(t *testing.T) {
	b := testBackend(t)
	for _, dt := range dtypesOf(b, backend.F16, backend.BF16) {
		all := make([]byte, 2*65536)
		for i := range 65536 {
			all[2*i], all[2*i+1] = byte(i), byte(i>>8)
		}
		x := b.FromData(&backend.TensorData{Shape: []int{65536}, DType: dt, Bytes: all})
		got := toData(t, b, ir.Cast(b, x, backend.F32))
		for i := range 65536 {
			var want float32
			if dt == backend.F16 {
				want = ir.F16ToFloat32(uint16(i))
			} else {
				want = ir.BF16ToFloat32(uint16(i))
			}
			g := math.Float32frombits(leU32(got.Bytes[4*i:]))
			if math.Float32bits(g) != math.Float32bits(want) && !(g != g && want != want) {
				t.Fatalf("%v bits %#04x widen to %v (%#08x), want %v", dt, i, g, math.Float32bits(g), want)
			}
		}
		rng := rand.New(rand.NewPCG(7, 8))
		n := 1 << 16
		fs := make([]float32, 0, n+4096)
		for range n {
			fs = append(fs, math.Float32frombits(rng.Uint32()))
		}
		for h := uint32(0); h < 2048; h++ { // halfway points in [1, 2) and the subnormal range
			fs = append(fs, math.Float32frombits(0x3f800000|h<<13|1<<12), math.Float32frombits(0x33800000+h<<12))
		}
		raw := make([]byte, 4*len(fs))
		for i, f := range fs {
			putU32(raw[4*i:], math.Float32bits(f))
		}
		y := b.FromData(&backend.TensorData{Shape: []int{len(fs)}, DType: backend.F32, Bytes: raw})
		got = toData(t, b, ir.Cast(b, y, dt))
		bad := 0
		for i, f := range fs {
			g := uint16(got.Bytes[2*i]) | uint16(got.Bytes[2*i+1])<<8
			var want uint16
			if dt == backend.F16 {
				want = ir.F16FromFloat32(f)
			} else {
				want = ir.BF16FromFloat32(f)
			}
			if g != want && bad < 5 {
				t.Errorf("%v: %v (%#08x) rounds to %#04x, want %#04x", dt, f, math.Float32bits(f), g, want)
				bad++
			}
		}
	}
}

func toData(t *testing.T, b *Backend, x backend.Tensor) *backend.TensorData {
	t.Helper()
	d, err := b.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// Where picks bit for bit with broadcasting on every element width.
func TestWhereMatchesFlex(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dt := range dtypesOf(b, backend.F64, backend.F32, backend.F16, backend.I8, backend.Bool) {
		for _, l := range layouts {
			c, fc := randomPair(b, rng, []int{4, 1}, backend.Bool, layouts[0])
			x, fx := randomPair(b, rng, []int{4, 6}, dt, l)
			y, fy := randomPair(b, rng, []int{6}, dt, layouts[0])
			same(t, b, ir.Where(b, c, x, y), ir.Where(flexRef, fc, fx, fy), name("where ", dt, " ", l.name))
		}
	}
}

// A view of rank above the shaders' 8 axes that no merge collapses is
// split into several dispatches over its leading axes.
func TestElementwiseHighRank(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(11, 12))
	shape := []int{2, 3, 2, 2, 3, 2, 2, 3, 2, 2}
	for _, l := range layouts[1:] {
		x, fx := randomPair(b, rng, shape, backend.F32, l)
		y, fy := randomPair(b, rng, shape, backend.F32, layouts[0])
		same(t, b, binaryOn(b, ir.OpSub, x, y), binaryOn(flexRef, ir.OpSub, fx, fy), "rank 10 "+l.name)
		same(t, b, unaryOn(b, ir.OpExp, x), unaryOn(flexRef, ir.OpExp, fx), "rank 10 exp "+l.name)
	}
}

// The logarithm of a subnormal is exact: log(2^-1074) = -1074·ln 2
// (PyTorch's value; Go's math.Log on amd64, which flex uses, returns the
// logarithm of the smallest normal instead).
func TestLogSubnormal(t *testing.T) {
	b := testBackend(t)
	if !b.SupportsDType(backend.F64) {
		t.Skip("no F64")
	}
	x := b.FromData(fromF64([]int{2}, backend.F64, func() float64 { return math.SmallestNonzeroFloat64 }))
	got := toData(t, b, ir.Unary(b, ir.OpLog, x)).Float64s()
	want := -1074 * math.Ln2
	for _, g := range got {
		if math.Abs(g-want) > 1e-15*math.Abs(want) {
			t.Errorf("log(2^-1074) = %v, want %v", g, want)
		}
	}
}
