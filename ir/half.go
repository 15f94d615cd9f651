package ir

import (
	"math"

	"github.com/x448/float16"
)

// This file converts between float32/float64 and the two 16-bit float
// formats Ember stores:
//
//   - F16: IEEE 754-2008 binary16 (1 sign bit, 5 exponent bits with bias 15,
//     10 fraction bits; subnormals, ±Inf and NaN as in IEEE 754).
//   - BF16: bfloat16, the upper 16 bits of an IEEE 754 binary32 (1 sign bit,
//     8 exponent bits with bias 127, 7 fraction bits), as PyTorch's
//     c10::BFloat16.
//
// Every conversion to a 16-bit format rounds to nearest, ties to even (the
// IEEE 754 default, and what PyTorch's c10::detail::round_to_nearest_even
// and c10::Half do); none truncates. Values too large for the format
// become ±Inf; NaN stays a quiet NaN with its sign.

// BF16FromFloat32 returns the bfloat16 bits nearest to f, ties to even, as
// PyTorch's c10::detail::round_to_nearest_even: the float32 bits plus
// 0x7FFF plus the lowest kept bit, shifted right by 16. Finite values whose
// magnitude is at least 0x1.FFp127 (halfway between the largest bfloat16,
// 0x1.FEp127, and 2^128) become ±Inf. A NaN gives a quiet NaN that keeps
// the sign and the top payload bits (PyTorch returns 0x7FC0 whatever the
// sign).
func BF16FromFloat32(f float32) uint16 {
	bits := math.Float32bits(f)
	if f != f { // NaN
		return uint16(bits>>16) | 0x0040
	}
	lsb := (bits >> 16) & 1
	return uint16((bits + 0x7FFF + lsb) >> 16)
}

// BF16ToFloat32 returns the float32 value of the bfloat16 bits b; the
// conversion is exact (b becomes the upper half of the float32 bits), so
// NaN payloads and signs are kept.
func BF16ToFloat32(b uint16) float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// BF16FromFloat64 returns the bfloat16 bits nearest to f, ties to even,
// rounded once from the float64 value (not float64 -> float32 -> bfloat16
// with two round-to-nearest steps, which can round a value just above a
// bfloat16 midpoint down to the midpoint and then to even). It first rounds
// f to float32 with round-to-odd, which keeps 16 more significant bits than
// bfloat16 in every binade (bfloat16 and float32 share their exponent range,
// subnormals included), so the second rounding to nearest even gives the
// correctly rounded result (Boldo and Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", 2008).
// Overflow gives ±Inf, NaN a quiet NaN with f's sign.
func BF16FromFloat64(f float64) uint16 {
	return BF16FromFloat32(float32RoundToOdd(f))
}

// F16FromFloat32 returns the IEEE 754 binary16 bits nearest to f, ties to
// even (github.com/x448/float16's Fromfloat32, as PyTorch's c10::Half).
// Finite values whose magnitude is at least 65520 (halfway between the
// largest binary16, 65504, and 2^16) become ±Inf; values at most 2^-25 in
// magnitude (half the smallest subnormal) become ±0. A NaN gives a quiet
// NaN with f's sign.
func F16FromFloat32(f float32) uint16 {
	return float16.Fromfloat32(f).Bits()
}

// F16ToFloat32 returns the float32 value of the IEEE 754 binary16 bits h
// (github.com/x448/float16's Float32); exact for every finite value and
// ±Inf, subnormals included. A NaN gives a quiet float32 NaN with h's sign.
func F16ToFloat32(h uint16) float32 {
	return float16.Frombits(h).Float32()
}

// F16FromFloat64 returns the IEEE 754 binary16 bits nearest to f, ties to
// even, rounded once from the float64 value. Converting through float32
// with round-to-nearest twice would round e.g. 1 + 2^-11 + 2^-40 (just
// above the midpoint between 1 and the next binary16) to the float32
// midpoint 1 + 2^-11 and then down to 1; instead f is first rounded to
// float32 with round-to-odd (float32 keeps at least 13 more significant bits
// than binary16 over binary16's whole range, subnormals included), then to
// binary16 with ties to even, which is the correctly rounded result (Boldo
// and Melquiond 2008). Overflow and underflow thresholds are those of
// F16FromFloat32; NaN gives a quiet NaN with f's sign.
func F16FromFloat64(f float64) uint16 {
	return F16FromFloat32(float32RoundToOdd(f))
}

// float32RoundToOdd rounds f to float32 with round-to-odd: exact values are
// kept; an inexact one is truncated toward zero and its last significand
// bit set to 1. Finite values beyond the float32 range give ±MaxFloat32
// (whose last bit is 1), values below the smallest subnormal give ±the
// smallest subnormal; ±Inf and NaN are kept.
func float32RoundToOdd(f float64) float32 {
	r := float32(f)
	if float64(r) == f || f != f {
		return r
	}
	bits := math.Float32bits(r)
	if math.Abs(float64(r)) > math.Abs(f) {
		bits-- // step the magnitude toward zero (Inf becomes MaxFloat32)
	}
	return math.Float32frombits(bits | 1)
}
