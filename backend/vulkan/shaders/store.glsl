// store.glsl: stores to an output buffer (binding 1) of any dtype, the
// dtype being specialization constant ODT (an ir.DType code). Values come
// as double (floats), int64 or uint64 and convert as Cast does
// (backend/flex): floats round to nearest even (a double to F16/BF16
// once, through round-to-odd), floats to integers truncate toward zero
// and saturate with NaN giving 0, integers wrap, anything to Bool is
// x != 0 (NaN is true).

layout(constant_id = 2) const uint ODT = 2u;

layout(std430, set = 0, binding = 1) writeonly restrict buffer OutF64 { double o_f64[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutF32 { float o_f32[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutI64 { int64_t o_i64[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutI32 { int o_i32[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutI16 { int16_t o_i16[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutI8 { int8_t o_i8[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutU64 { uint64_t o_u64[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutU32 { uint o_u32[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutU16 { uint16_t o_u16[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer OutU8 { uint8_t o_u8[]; };

// sat_d truncates x toward zero into [lo, hi] (as doubles); NaN gives 0.
double sat_d(double x, double lo, double hi) {
	x = trunc(x);
	if (isnan(x)) return 0.0LF;
	return x <= lo ? lo : (x >= hi ? hi : x);
}

void store_d(uint i, double v) {
	switch (ODT) {
	case 1u: o_f64[i] = v; break;
	case 2u: case 3u: o_f32[i] = float(v); break;
	case 4u: o_u16[i] = uint16_t(f64_to_f16(v)); break;
	case 5u: o_u16[i] = uint16_t(f64_to_bf16(v)); break;
	case 6u: {
		double t = trunc(v);
		int64_t r = isnan(t) ? 0l : (t <= -9.223372036854775808e18LF ? int64_t(0x8000000000000000ul) : (t >= 9.223372036854775807e18LF ? 0x7fffffffffffffffl : int64_t(t)));
		o_i64[i] = r;
		break;
	}
	case 7u: o_i32[i] = int(sat_d(v, -2147483648.0LF, 2147483647.0LF)); break;
	case 8u: o_i16[i] = int16_t(int(sat_d(v, -32768.0LF, 32767.0LF))); break;
	case 9u: o_i8[i] = int8_t(int(sat_d(v, -128.0LF, 127.0LF))); break;
	case 10u: {
		double t = trunc(v);
		uint64_t r = (isnan(t) || t <= 0.0LF) ? 0ul : (t >= 1.8446744073709551615e19LF ? 0xfffffffffffffffful : uint64_t(t));
		o_u64[i] = r;
		break;
	}
	case 11u: o_u32[i] = uint(sat_d(v, 0.0LF, 4294967295.0LF)); break;
	case 12u: o_u16[i] = uint16_t(uint(sat_d(v, 0.0LF, 65535.0LF))); break;
	case 13u: o_u8[i] = uint8_t(uint(sat_d(v, 0.0LF, 255.0LF))); break;
	default: o_u8[i] = uint8_t(v != 0.0LF ? 1u : 0u); break;
	}
}

void store_i(uint i, int64_t v) {
	switch (ODT) {
	case 1u: o_f64[i] = double(v); break;
	case 2u: case 3u: o_f32[i] = float(v); break;
	case 4u: o_u16[i] = uint16_t(f64_to_f16(double(v))); break;
	case 5u: o_u16[i] = uint16_t(f64_to_bf16(double(v))); break;
	case 6u: o_i64[i] = v; break;
	case 7u: o_i32[i] = int(v); break;
	case 8u: o_i16[i] = int16_t(int(v)); break;
	case 9u: o_i8[i] = int8_t(int(v)); break;
	case 10u: o_u64[i] = uint64_t(v); break;
	case 11u: o_u32[i] = uint(v); break;
	case 12u: o_u16[i] = uint16_t(uint(v)); break;
	case 13u: o_u8[i] = uint8_t(uint(v)); break;
	default: o_u8[i] = uint8_t(v != 0l ? 1u : 0u); break;
	}
}

void store_u(uint i, uint64_t v) {
	switch (ODT) {
	case 1u: o_f64[i] = double(v); break;
	case 2u: case 3u: o_f32[i] = float(v); break;
	case 4u: o_u16[i] = uint16_t(f64_to_f16(double(v))); break;
	case 5u: o_u16[i] = uint16_t(f64_to_bf16(double(v))); break;
	default: store_i(i, int64_t(v)); break;
	}
}
