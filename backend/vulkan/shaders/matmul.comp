#version 450
// matmul.comp: batched matrix product (KindMatmul) for every dtype,
// tiled TILE×TILE in shared memory: each invocation computes one output
// element, accumulating in CTYPE (float for F32, F16 and BF16, double
// for F64, wrapping integers) over k in order. backend/vulkan uses
// sgemm.comp for F32 where its layout allows.
#define LOCAL_SIZE_2D 1
#include "common.glsl"
#include "dtype.glsl"
#include "matmul.glsl"

#define TILE 16
layout(local_size_x = TILE, local_size_y = TILE) in;

layout(std430, set = 0, binding = 1) writeonly restrict buffer Out { STYPE o[]; };
layout(std430, set = 0, binding = 2) readonly restrict buffer InA { STYPE a[]; };
layout(std430, set = 0, binding = 3) readonly restrict buffer InB { STYPE b[]; };

shared CTYPE As[TILE][TILE];
shared CTYPE Bs[TILE][TILE];

void main() {
	uint M = P[0], N = P[1], K = P[2], batches = P[3];
	uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
	uint col = gl_WorkGroupID.x * TILE + tx;
	uint row = gl_WorkGroupID.y * TILE + ty;
	uint ars = P[10], acs = P[11], brs = P[17], bcs = P[18];
	for (uint z = gl_WorkGroupID.z; z < batches; z += gl_NumWorkGroups.z) {
		uvec2 base = mm_batch(z);
		CTYPE acc = CTYPE(0);
		for (uint k0 = 0u; k0 < K; k0 += TILE) {
			uint ka = k0 + tx, kb = k0 + ty;
			As[ty][tx] = (row < M && ka < K) ? LD(a[base.x + row * ars + ka * acs]) : CTYPE(0);
			Bs[ty][tx] = (kb < K && col < N) ? LD(b[base.y + kb * brs + col * bcs]) : CTYPE(0);
			barrier();
			uint kn = min(uint(TILE), K - k0);
			for (uint k = 0u; k < kn; k++) {
				acc += As[ty][k] * Bs[k][tx];
			}
			barrier();
		}
		if (row < M && col < N) {
			o[P[23] + (z * M + row) * N + col] = ST(acc);
		}
	}
}
