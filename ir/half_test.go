package ir

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halfFormat describes a 16-bit float format for the exhaustive tests, with
// an independent decoder written from the format's definition.
type halfFormat struct {
	name     string
	fracBits int // stored fraction bits
	bias     int
	expMask  uint16 // exponent field, in place
	fracMask uint16
	// 2^(emax+1): the value an Inf pattern stands for when it is the
	// "next" value after the largest finite one.
	overflow float64
	from32   func(float32) uint16
	from64   func(float64) uint16
	to32     func(uint16) float32
}

var halfFormats = []halfFormat{
	{"f16", 10, 15, 0x7C00, 0x03FF, 65536, F16FromFloat32, F16FromFloat64, F16ToFloat32},
	{"bf16", 7, 127, 0x7F80, 0x007F, math.Ldexp(1, 128), BF16FromFloat32, BF16FromFloat64, BF16ToFloat32},
}

// decode returns the value of bits b by sign/exponent/fraction arithmetic.
func (f halfFormat) decode(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	e := int((b & f.expMask) >> f.fracBits)
	m := float64(b & f.fracMask)
	emaxField := int(f.expMask >> f.fracBits)
	switch e {
	case emaxField:
		if m == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	case 0: // subnormal or zero: m * 2^(1-bias-fracBits)
		return sign * math.Ldexp(m, 1-f.bias-f.fracBits)
	}
	return sign * math.Ldexp(m+math.Ldexp(1, f.fracBits), e-f.bias-f.fracBits)
}

func (f halfFormat) isNaN(b uint16) bool { return b&f.expMask == f.expMask && b&f.fracMask != 0 }

func TestHalfDecodeAllPatterns(t *testing.T) {
	for _, f := range halfFormats {
		for i := 0; i < 1<<16; i++ {
			b := uint16(i)
			got := float64(f.to32(b))
			want := f.decode(b)
			if f.isNaN(b) {
				if !math.IsNaN(got) {
					t.Fatalf("%s: to float32 of NaN %#04x = %v, want NaN", f.name, b, got)
				}
				if math.Signbit(got) != (b&0x8000 != 0) {
					t.Fatalf("%s: to float32 of NaN %#04x lost its sign", f.name, b)
				}
				continue
			}
			if got != want || math.Signbit(got) != math.Signbit(want) {
				t.Fatalf("%s: to float32 of %#04x = %v, want %v", f.name, b, got, want)
			}
		}
	}
}

func TestHalfRoundTripAllPatterns(t *testing.T) {
	for _, f := range halfFormats {
		for i := 0; i < 1<<16; i++ {
			b := uint16(i)
			v := f.to32(b)
			if f.isNaN(b) {
				continue
			}
			if got := f.from32(v); got != b {
				t.Fatalf("%s: from float32(%v) = %#04x, want %#04x", f.name, v, got, b)
			}
			if got := f.from64(float64(v)); got != b {
				t.Fatalf("%s: from float64(%v) = %#04x, want %#04x", f.name, v, got, b)
			}
		}
	}
}

// TestHalfRoundingAllMidpoints checks, for every pair of adjacent
// non-negative values (the largest finite one paired with 2^(emax+1),
// which stands for +Inf), that the exact midpoint rounds to the pattern
// with the even fraction, the next float above it rounds up and the next
// float below it rounds down, for both signs and both entry points.
func TestHalfRoundingAllMidpoints(t *testing.T) {
	for _, f := range halfFormats {
		inf := f.expMask
		for lo := uint16(0); lo < inf; lo++ {
			hi := lo + 1
			vlo := f.decode(lo)
			vhi := f.decode(hi)
			if hi == inf {
				vhi = f.overflow
			}
			mid := (vlo + vhi) / 2 // exact: both have at most fracBits+1 significant bits
			even := lo
			if lo&1 != 0 {
				even = hi
			}
			for _, sign := range []float64{1, -1} {
				sb := uint16(0)
				if sign < 0 {
					sb = 0x8000
				}
				m := sign * mid
				cases := []struct {
					kind string
					x64  float64
					x32  float32
					want uint16
				}{
					{"midpoint", m, float32(m), even | sb},
					{"above midpoint", math.Nextafter(m, sign*math.Inf(1)), math.Nextafter32(float32(m), float32(sign*math.Inf(1))), hi | sb},
					{"below midpoint", math.Nextafter(m, 0), math.Nextafter32(float32(m), 0), lo | sb},
				}
				if float64(float32(m)) != m {
					t.Fatalf("%s: midpoint %v not a float32", f.name, m)
				}
				for _, c := range cases {
					if got := f.from64(c.x64); got != c.want {
						t.Fatalf("%s: from float64 %s %v (between %#04x and %#04x) = %#04x, want %#04x",
							f.name, c.kind, c.x64, lo, hi, got, c.want)
					}
					if got := f.from32(c.x32); got != c.want {
						t.Fatalf("%s: from float32 %s %v (between %#04x and %#04x) = %#04x, want %#04x",
							f.name, c.kind, c.x32, lo, hi, got, c.want)
					}
				}
			}
		}
	}
}

// TestHalfFromFloat64Nearest checks on random float64 values over the whole
// range of each format that the result is at least as near as both of its
// neighbours (a check independent of the midpoint construction).
func TestHalfFromFloat64Nearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range halfFormats {
		maxExp := f.bias + 1
		minExp := 2 - f.bias - f.fracBits - 2
		for range 100000 {
			x := math.Ldexp(rng.Float64()+0.5, minExp+rng.IntN(maxExp-minExp))
			if rng.IntN(2) == 0 {
				x = -x
			}
			b := f.from64(x)
			v := f.decode(b)
			if math.IsInf(v, 0) {
				if math.Abs(x) < (f.decode(f.expMask-1)+f.overflow)/2 {
					t.Fatalf("%s: %v overflowed to %v", f.name, x, v)
				}
				continue
			}
			mag := b &^ 0x8000
			d := math.Abs(x - v)
			for _, nb := range []uint16{mag - 1, mag + 1} {
				if mag == 0 && nb == mag-1 {
					nb = 1 | 0x8000 // the neighbour below +0 is the smallest negative subnormal
				} else {
					nb |= b & 0x8000
				}
				if nb&f.expMask == f.expMask {
					continue
				}
				if dn := math.Abs(x - f.decode(nb)); dn < d {
					t.Fatalf("%s: %v rounded to %#04x (%v), but %#04x (%v) is nearer", f.name, x, b, v, nb, f.decode(nb))
				}
			}
		}
	}
}

func TestHalfHandWorked(t *testing.T) {
	cases := []struct {
		name string
		got  uint16
		want uint16
	}{
		// Values as printed by PyTorch's torch.tensor(x, dtype=...).view(torch.int16).
		{"f16(1)", F16FromFloat32(1), 0x3C00},
		{"f16(pi)", F16FromFloat32(math.Pi), 0x4248},
		{"f16(-2.5)", F16FromFloat64(-2.5), 0xC100},
		{"f16(65504)", F16FromFloat32(65504), 0x7BFF},
		{"f16(65519.99)", F16FromFloat32(65519.99), 0x7BFF},
		{"f16(65520)", F16FromFloat32(65520), 0x7C00},
		{"f16(-65520)", F16FromFloat64(-65520), 0xFC00},
		{"f16(1e10)", F16FromFloat32(1e10), 0x7C00},
		{"f16(1e300)", F16FromFloat64(1e300), 0x7C00},
		{"f16(2^-24)", F16FromFloat64(math.Ldexp(1, -24)), 0x0001},
		{"f16(2^-25)", F16FromFloat64(math.Ldexp(1, -25)), 0x0000},
		{"f16(-1e-300)", F16FromFloat64(-1e-300), 0x8000},
		{"f16(+Inf)", F16FromFloat64(math.Inf(1)), 0x7C00},
		{"bf16(1)", BF16FromFloat32(1), 0x3F80},
		{"bf16(pi)", BF16FromFloat32(math.Pi), 0x4049},
		{"bf16(-2.5)", BF16FromFloat64(-2.5), 0xC020},
		{"bf16(1+2^-8)", BF16FromFloat32(1 + 1.0/256), 0x3F80},                 // tie, to even
		{"bf16(1+3*2^-8)", BF16FromFloat32(1 + 3.0/256), 0x3F82},               // tie, to even (up)
		{"bf16(1+2^-8+2^-40)", BF16FromFloat64(1 + 1.0/256 + 0x1p-40), 0x3F81}, // double rounding would give 0x3F80
		{"bf16(max f32)", BF16FromFloat32(math.MaxFloat32), 0x7F80},
		{"bf16(0x1.FEp127)", BF16FromFloat64(0x1.FEp127), 0x7F7F},
		{"bf16(1e300)", BF16FromFloat64(1e300), 0x7F80},
		{"bf16(-1e-300)", BF16FromFloat64(-1e-300), 0x8000},
		{"bf16(-Inf)", BF16FromFloat32(float32(math.Inf(-1))), 0xFF80},
		{"f16(1+2^-11+2^-40)", F16FromFloat64(1 + 0x1p-11 + 0x1p-40), 0x3C01}, // double rounding would give 0x3C00
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#04x, want %#04x", c.name, c.got, c.want)
		}
	}
}

func TestHalfNaN(t *testing.T) {
	nan32 := float32(math.NaN())
	negNaN64 := math.Copysign(math.NaN(), -1)
	for _, f := range halfFormats {
		quiet := uint16(1) << (f.fracBits - 1)
		for _, c := range []struct {
			kind string
			b    uint16
			neg  bool
		}{
			{"float32 NaN", f.from32(nan32), math.Signbit(float64(nan32))},
			{"float64 NaN", f.from64(math.NaN()), math.Signbit(math.NaN())},
			{"float64 -NaN", f.from64(negNaN64), true},
			{"float32 -NaN", f.from32(float32(negNaN64)), math.Signbit(float64(float32(negNaN64)))},
			// a signalling float32 NaN with only low payload bits must not become Inf
			{"float32 sNaN", f.from32(math.Float32frombits(0x7F800001)), false},
		} {
			if !f.isNaN(c.b) || c.b&quiet == 0 {
				t.Errorf("%s: from %s = %#04x, want a quiet NaN", f.name, c.kind, c.b)
			}
			if (c.b&0x8000 != 0) != c.neg {
				t.Errorf("%s: from %s = %#04x, sign not kept", f.name, c.kind, c.b)
			}
		}
	}
}
