#version 450
// sgemm.comp: batched F32 matrix product (KindMatmul) for large
// matrices, the classic register-blocked design (as in Volkov and
// Demmel, "Benchmarking GPUs to tune dense linear algebra", SC 2008, and
// the CUDA SGEMM kernels after it): a workgroup of 256 invocations
// computes a 128×128 block of the output in steps of 8 along k; each
// invocation owns an 8×8 micro-tile (two 4×4 quadrants 64 rows and
// columns apart, so that its shared-memory reads are 16-byte vectors
// without bank conflicts) held in registers. Tiles of a and b go through
// shared memory, double-buffered, and the next tile's global loads are
// issued before the current tile's arithmetic. Global loads move 16-byte
// vectors along the contiguous axis of each operand where its strides
// and alignment allow (P[24] bit 0: a's rows are contiguous, and bit 3:
// 4-aligned; bit 1: a's columns are contiguous and 4-aligned; bit 2: b's
// rows are contiguous and 4-aligned), single elements otherwise; edge
// blocks load zeros outside the matrices and store only inside them.
// Every output element is the float sum over k in order of 8-step tiles
// (each step in k order).
#define LOCAL_SIZE_2D 1
#include "common.glsl"
#include "matmul.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { float o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer InA { float a[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer InB { float b[]; };
layout(std430, set = 0, binding = 1) writeonly restrict buffer Out4 { vec4 o4[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer InA4 { vec4 a4[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer InB4 { vec4 b4[]; };

shared vec4 As[2][8][32]; // [buffer][k][m / 4]
shared vec4 Bs[2][8][32]; // [buffer][k][n / 4]

uint M, N, K, ars, acs, brs, bcs, flags;
uint m0, n0;
uvec2 base;

// loadA returns the 4 elements of a's tile (k0) that invocation tid
// stores: for row-major a, row tid/2 and columns k0 + 4*(tid%2) .. +3;
// otherwise column k0 + tid/32 and rows 4*(tid%32) .. +3.
vec4 loadA(uint tid, uint k0) {
	if ((flags & 1u) != 0u) {
		uint r = m0 + (tid >> 1u), k = k0 + ((tid & 1u) << 2u);
		if ((flags & 8u) != 0u && r < M && k + 3u < K) {
			return a4[(base.x + r * ars + k) >> 2u];
		}
		uint at = base.x + r * ars + k;
		bool in0 = r < M;
		return vec4(in0 && k < K ? a[at] : 0.0, in0 && k + 1u < K ? a[at + 1u] : 0.0,
			in0 && k + 2u < K ? a[at + 2u] : 0.0, in0 && k + 3u < K ? a[at + 3u] : 0.0);
	}
	uint k = k0 + (tid >> 5u), r = m0 + ((tid & 31u) << 2u);
	if ((flags & 2u) != 0u && k < K && r + 3u < M) {
		return a4[(base.x + k * acs + r) >> 2u];
	}
	uint at = base.x + r * ars + k * acs;
	bool in0 = k < K;
	return vec4(in0 && r < M ? a[at] : 0.0, in0 && r + 1u < M ? a[at + ars] : 0.0,
		in0 && r + 2u < M ? a[at + 2u * ars] : 0.0, in0 && r + 3u < M ? a[at + 3u * ars] : 0.0);
}

void storeA(uint buf, uint tid, vec4 v) {
	if ((flags & 1u) != 0u) {
		uint r = tid >> 1u, k = (tid & 1u) << 2u;
		As[buf][k][r >> 2u][r & 3u] = v.x;
		As[buf][k + 1u][r >> 2u][r & 3u] = v.y;
		As[buf][k + 2u][r >> 2u][r & 3u] = v.z;
		As[buf][k + 3u][r >> 2u][r & 3u] = v.w;
	} else {
		As[buf][tid >> 5u][tid & 31u] = v;
	}
}

// loadB returns b's elements at row k0 + tid/32, columns 4*(tid%32) .. +3.
vec4 loadB(uint tid, uint k0) {
	uint k = k0 + (tid >> 5u), c = n0 + ((tid & 31u) << 2u);
	if ((flags & 4u) != 0u && k < K && c + 3u < N) {
		return b4[(base.y + k * brs + c) >> 2u];
	}
	uint at = base.y + k * brs + c * bcs;
	bool in0 = k < K;
	return vec4(in0 && c < N ? b[at] : 0.0, in0 && c + 1u < N ? b[at + bcs] : 0.0,
		in0 && c + 2u < N ? b[at + 2u * bcs] : 0.0, in0 && c + 3u < N ? b[at + 3u * bcs] : 0.0);
}

// storeQuad writes v to the output's row m0 + row, columns n0 + col ..
// +3, inside the matrix.
void storeQuad(uint obase, bool vecOut, uint row, uint col, vec4 v) {
	uint r = m0 + row, cc = n0 + col;
	if (r >= M) {
		return;
	}
	uint at = obase + r * N + cc;
	if (vecOut && cc + 3u < N) {
		o4[at >> 2u] = v;
		return;
	}
	if (cc < N) o[at] = v.x;
	if (cc + 1u < N) o[at + 1u] = v.y;
	if (cc + 2u < N) o[at + 2u] = v.z;
	if (cc + 3u < N) o[at + 3u] = v.w;
}

void main() {
	M = P[0];
	N = P[1];
	K = P[2];
	ars = P[10];
	acs = P[11];
	brs = P[17];
	bcs = P[18];
	flags = P[24];
	uint batches = P[3];
	uint tid = gl_LocalInvocationIndex;
	uint tx = tid & 15u, ty = tid >> 4u;
	m0 = gl_WorkGroupID.y * 128u;
	n0 = gl_WorkGroupID.x * 128u;
	uint nk = (K + 7u) >> 3u;
	for (uint z = gl_WorkGroupID.z; z < batches; z += gl_NumWorkGroups.z) {
		base = mm_batch(z);
		vec4 c[8][2];
		[[unroll]] for (uint i = 0u; i < 8u; i++) {
			c[i][0] = vec4(0.0);
			c[i][1] = vec4(0.0);
		}
		vec4 ra = loadA(tid, 0u), rb = loadB(tid, 0u);
		storeA(0u, tid, ra);
		Bs[0][tid >> 5u][tid & 31u] = rb;
		barrier();
		for (uint kt = 0u; kt < nk; kt++) {
			uint buf = kt & 1u;
			bool more = kt + 1u < nk;
			if (more) {
				ra = loadA(tid, (kt + 1u) << 3u);
				rb = loadB(tid, (kt + 1u) << 3u);
			}
			[[unroll]] for (uint k = 0u; k < 8u; k++) {
				vec4 a0 = As[buf][k][ty], a1 = As[buf][k][ty + 16u];
				vec4 b0 = Bs[buf][k][tx], b1 = Bs[buf][k][tx + 16u];
				c[0][0] += a0.x * b0; c[0][1] += a0.x * b1;
				c[1][0] += a0.y * b0; c[1][1] += a0.y * b1;
				c[2][0] += a0.z * b0; c[2][1] += a0.z * b1;
				c[3][0] += a0.w * b0; c[3][1] += a0.w * b1;
				c[4][0] += a1.x * b0; c[4][1] += a1.x * b1;
				c[5][0] += a1.y * b0; c[5][1] += a1.y * b1;
				c[6][0] += a1.z * b0; c[6][1] += a1.z * b1;
				c[7][0] += a1.w * b0; c[7][1] += a1.w * b1;
			}
			if (more) {
				storeA(buf ^ 1u, tid, ra);
				Bs[buf ^ 1u][tid >> 5u][tid & 31u] = rb;
			}
			barrier();
		}
		uint obase = P[23] + z * M * N;
		bool vecOut = (obase & 3u) == 0u && (N & 3u) == 0u;
		// Every accumulator is named by constant indices (an indexed one
		// would make the compiler keep them all in memory).
		storeQuad(obase, vecOut, ty * 4u, tx * 4u, c[0][0]);
		storeQuad(obase, vecOut, ty * 4u, 64u + tx * 4u, c[0][1]);
		storeQuad(obase, vecOut, ty * 4u + 1u, tx * 4u, c[1][0]);
		storeQuad(obase, vecOut, ty * 4u + 1u, 64u + tx * 4u, c[1][1]);
		storeQuad(obase, vecOut, ty * 4u + 2u, tx * 4u, c[2][0]);
		storeQuad(obase, vecOut, ty * 4u + 2u, 64u + tx * 4u, c[2][1]);
		storeQuad(obase, vecOut, ty * 4u + 3u, tx * 4u, c[3][0]);
		storeQuad(obase, vecOut, ty * 4u + 3u, 64u + tx * 4u, c[3][1]);
		storeQuad(obase, vecOut, 64u + ty * 4u, tx * 4u, c[4][0]);
		storeQuad(obase, vecOut, 64u + ty * 4u, 64u + tx * 4u, c[4][1]);
		storeQuad(obase, vecOut, 65u + ty * 4u, tx * 4u, c[5][0]);
		storeQuad(obase, vecOut, 65u + ty * 4u, 64u + tx * 4u, c[5][1]);
		storeQuad(obase, vecOut, 66u + ty * 4u, tx * 4u, c[6][0]);
		storeQuad(obase, vecOut, 66u + ty * 4u, 64u + tx * 4u, c[6][1]);
		storeQuad(obase, vecOut, 67u + ty * 4u, tx * 4u, c[7][0]);
		storeQuad(obase, vecOut, 67u + ty * 4u, 64u + tx * 4u, c[7][1]);
		barrier();
	}
}
