package ir

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecodeHalfSlicesExhaustive compares DecodeBF16 and DecodeF16 with
// the scalar conversions on all 65536 bit patterns (NaN payloads
// included: the float32 bits must be equal).
func TestDecodeHalfSlicesExhaustive(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]float32, len(src))
	DecodeBF16(dst, src)
	for i, h := range src {
		if got, want := math.Float32bits(dst[i]), math.Float32bits(BF16ToFloat32(h)); got != want {
			t.Fatalf("DecodeBF16(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
	DecodeF16(dst, src)
	for i, h := range src {
		if got, want := math.Float32bits(dst[i]), math.Float32bits(F16ToFloat32(h)); got != want {
			t.Fatalf("DecodeF16(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
}

// TestEncodeHalfSlices compares EncodeBF16 and EncodeF16 with the scalar
// conversions on every float32 exponent and sign with all 2^13 patterns
// of the low mantissa bits (which decide F16's rounding; BF16's are the
// low 16, covered by the exhaustive low-bits run below) under random high
// mantissa bits, every pattern of the low 16 bits under a few high parts,
// and the special values.
func TestEncodeHalfSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var src []float32
	for exp := uint32(0); exp < 256; exp++ {
		for _, sign := range []uint32{0, 1 << 31} {
			high := r.Uint32() & 0x7fe000
			for low := uint32(0); low < 1<<13; low++ {
				src = append(src, math.Float32frombits(sign|exp<<23|high|low))
			}
		}
	}
	for _, high := range []uint32{0x3f800000, 0x47000000, 0x387f0000, 0x00000000, 0x7f7f0000, 0x7f800000, 0xc2340000} {
		for low := uint32(0); low < 1<<16; low++ {
			src = append(src, math.Float32frombits(high|low))
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 65504, 65519.99, 65520, 65536, 1e-8, 2.98e-8, 5.96e-8, 6.1e-5,
		math.MaxFloat32, math.SmallestNonzeroFloat32, math.Inf(1), math.Inf(-1), math.NaN()} {
		src = append(src, float32(f), -float32(f))
	}
	h := make([]uint16, len(src))
	EncodeBF16(h, src)
	for i, f := range src {
		if want := BF16FromFloat32(f); h[i] != want {
			t.Fatalf("EncodeBF16(%#08x) = %#04x, want %#04x", math.Float32bits(f), h[i], want)
		}
	}
	EncodeF16(h, src)
	for i, f := range src {
		if want := F16FromFloat32(f); h[i] != want {
			t.Fatalf("EncodeF16(%#08x = %g) = %#04x, want %#04x", math.Float32bits(f), f, h[i], want)
		}
	}
}

// BenchmarkHalfSlices times the slice conversions against the scalar
// functions called through a function value (as a generic kernel would).
func BenchmarkHalfSlices(b *testing.B) {
	const n = 1 << 16
	f := make([]float32, n)
	h := make([]uint16, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	EncodeF16(h, f)
	b.Run("DecodeF16", func(b *testing.B) {
		b.SetBytes(n * 2)
		for b.Loop() {
			DecodeF16(f, h)
		}
	})
	b.Run("EncodeF16", func(b *testing.B) {
		b.SetBytes(n * 4)
		for b.Loop() {
			EncodeF16(h, f)
		}
	})
	b.Run("DecodeBF16", func(b *testing.B) {
		b.SetBytes(n * 2)
		for b.Loop() {
			DecodeBF16(f, h)
		}
	})
	b.Run("EncodeBF16", func(b *testing.B) {
		b.SetBytes(n * 4)
		for b.Loop() {
			EncodeBF16(h, f)
		}
	})
	conv := []struct {
		name string
		dec  func(uint16) float32
		enc  func(float32) uint16
	}{{"F16", F16ToFloat32, F16FromFloat32}, {"BF16", BF16ToFloat32, BF16FromFloat32}}
	for _, c := range conv {
		b.Run("scalar-decode-"+c.name, func(b *testing.B) {
			b.SetBytes(n * 2)
			for b.Loop() {
				for i, v := range h {
					f[i] = c.dec(v)
				}
			}
		})
		b.Run("scalar-encode-"+c.name, func(b *testing.B) {
			b.SetBytes(n * 4)
			for b.Loop() {
				for i, v := range f {
					h[i] = c.enc(v)
				}
			}
		})
	}
}
