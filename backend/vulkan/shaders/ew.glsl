// ew.glsl: the operand layout of the elementwise family (unary, binary,
// compare, where, cast, copy, fill). The host writes, from P[0]:
//
//   P[0]  n, the number of output elements
//   P[1]  rank r <= 8 of the (collapsed) output shape
//   P[2]  1: every operand is contiguous or a broadcast scalar (the
//         fast path); 0: strided
//   P[3]  bit k set: operand k is one element broadcast everywhere
//   P[4]  1: the fast path may move 16-byte vectors (offsets and n are
//         multiples of 4 and the element is 4 bytes wide)
//   P[5 .. 13)             the output shape (r entries used)
//   P[13 + 9k]             operand k's offset in elements (k = 0 is the
//                          output, 1 .. 3 the inputs)
//   P[14 + 9k .. 22 + 9k)  operand k's strides in elements (may be
//                          negative for flipped views, 0 for broadcast axes)
//
// Kernel-specific parameters start at EW_EXTRA.

#define EW_EXTRA 49u

bool ew_contig() { return P[2] != 0u; }
bool ew_scalar(uint k) { return (P[3] & (1u << k)) != 0u; }
bool ew_vec4() { return P[4] != 0u; }
uint ew_off(uint k) { return P[13u + 9u * k]; }

// ew_pos returns the element offsets of output element i for the output
// and up to three inputs (strided path).
uvec4 ew_pos(uint i) {
	uint r = P[1];
	ivec4 o = ivec4(int(P[13]), int(P[22]), int(P[31]), int(P[40]));
	uint rem = i;
	for (uint d = r; d > 0u; d--) {
		uint a = d - 1u;
		uint s = P[5u + a];
		uint c = rem % s;
		rem /= s;
		ivec4 st = ivec4(int(P[14u + a]), int(P[23u + a]), int(P[32u + a]), int(P[41u + a]));
		o += int(c) * st;
	}
	return uvec4(o);
}

// ew_index returns input k's offset of output element i on the fast path.
uint ew_index(uint k, uint i) { return ew_scalar(k) ? ew_off(k) : ew_off(k) + i; }

// ew_step returns 0 for a broadcast scalar input k, 1 otherwise: on the
// fast path input k's element i is at ew_off(k) + i*ew_step(k). Kernels
// read both before their loops (the parameter block may alias a data
// buffer as far as the compiler knows, so reads inside a loop repeat).
uint ew_step(uint k) { return ew_scalar(k) ? 0u : 1u; }
