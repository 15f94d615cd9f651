package ir

import (
	"math"
	"sync"
)

// Slice conversions between float32 and the 16-bit float formats, for
// kernels that convert whole buffers (casts, GEMM packing of F16 and BF16
// operands). Each gives, for every input, exactly the bits of the scalar
// function it is named after (BF16ToFloat32, BF16FromFloat32,
// F16ToFloat32, F16FromFloat32), NaN payloads included, but runs as a
// tight loop without calls: bit manipulation for BF16, a table for F16 to
// float32, and for float32 to F16 the branch-light rounding of Fabian
// Giesen's float_to_half_fast3_rtne (public domain), with NaN handed to
// the scalar function.

// DecodeBF16 sets dst[i] to the float32 value of the bfloat16 bits src[i]
// (exact). It panics if dst is shorter than src.
func DecodeBF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = math.Float32frombits(uint32(b) << 16)
	}
}

// EncodeBF16 sets dst[i] to the bfloat16 bits nearest to src[i], ties to
// even (BF16FromFloat32). It panics if dst is shorter than src.
func EncodeBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, f := range src {
		bits := math.Float32bits(f)
		if bits&0x7fffffff > 0x7f800000 { // NaN: quiet, sign and top payload kept
			dst[i] = uint16(bits>>16) | 0x0040
			continue
		}
		dst[i] = uint16((bits + 0x7fff + (bits>>16)&1) >> 16)
	}
}

// DecodeF16 sets dst[i] to the float32 value of the binary16 bits src[i]
// (exact, F16ToFloat32), by lookup in a table of all 65536 values (256
// KiB, built on first use). It panics if dst is shorter than src.
func DecodeF16(dst []float32, src []uint16) {
	f16TableOnce.Do(func() {
		f16Table = new([1 << 16]float32)
		for i := range f16Table {
			f16Table[i] = F16ToFloat32(uint16(i))
		}
	})
	dst = dst[:len(src)]
	t := f16Table
	for i, h := range src {
		dst[i] = t[h]
	}
}

var (
	f16TableOnce sync.Once
	f16Table     *[1 << 16]float32
)

// EncodeF16 sets dst[i] to the binary16 bits nearest to src[i], ties to
// even (F16FromFloat32: overflow to ±Inf, underflow to ±0, subnormals
// rounded once). It panics if dst is shorter than src.
func EncodeF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	const (
		f32Inf      = 0xff << 23
		f16Max      = (127 + 16) << 23                   // 2^16: from here on the result is Inf
		denormMagic = ((127 - 15) + (23 - 10) + 1) << 23 // 0.5: aligns subnormal mantissas
		minNormal   = 113 << 23                          // 2^-14, the smallest normal binary16
	)
	for i, f := range src {
		u := math.Float32bits(f)
		sign := u & 0x80000000
		u ^= sign
		var o uint32
		switch {
		case u > f32Inf: // NaN
			dst[i] = F16FromFloat32(f)
			continue
		case u >= f16Max:
			o = 0x7c00
		case u < minNormal:
			// Adding 0.5 puts the subnormal's 10 bits at the bottom of the
			// float32 mantissa, rounded to nearest even by the addition.
			o = math.Float32bits(math.Float32frombits(u)+math.Float32frombits(denormMagic)) - denormMagic
		default:
			odd := (u >> 13) & 1
			// Rebias the exponent and round to nearest even: add just
			// under half an ulp of the result, plus the ulp's parity.
			u = u - (127-15)<<23 + 0xfff + odd
			o = u >> 13
		}
		dst[i] = uint16(o | sign>>16)
	}
}
