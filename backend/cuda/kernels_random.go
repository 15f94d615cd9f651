package cuda

import "github.com/emberml/ember/backend"

// The random family: one kernel per dtype fills a contiguous tensor from
// the counter-based Philox4x32-10 generator (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011). Element i uses counter
// offset+i (from Backend.NextPhilox) under the device seed as key; its four
// 32-bit outputs give two 53-bit uniforms u1, u2 in [0, 1). Further
// counters (word 2 = attempt) serve the rare resampling of Uniform.
//
// Semantics follow backend/flex's Random: Default and Uniform are uniform
// on [A, B) ([0, 1) for Default), resampled when rounding to the dtype
// would reach B, floored for integer dtypes, Bernoulli(0.5) for Bool;
// Normal is A + B·N(0, 1) by Box-Muller (sqrt(-2 ln(1-u1))·cos(2π u2));
// Bernoulli is 1 with probability A. Values convert to the dtype as Cast
// from F64 does. The streams differ from flex's (another generator).

type randomSpec struct {
	Name, S     string
	Store       string // stores double v as S
	Round       string // double value of v rounded to the dtype
	Int, IsBool bool
}

var randomTmpl = mustTemplate("random", `
typedef {{.S}} S;
__device__ __forceinline__ void philox(u32 c[4], u32 k0, u32 k1) {
#pragma unroll
	for (int r = 0; r < 10; r++) {
		u32 hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
		u32 hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
		u32 n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
		c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
}
__device__ __forceinline__ double u53(u32 a, u32 b) {
	return (double)(((u64)(a >> 5) << 26) | (u64)(b >> 6)) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ double rounded(double v) { return {{.Round}}; }
extern "C" __global__ void {{.Name}}(i64 n, u64 seed, u64 offset, int kind, double A, double B, u64 pout) {
	S* out = (S*)pout;
	const u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
		const u64 ctr = offset + (u64)i;
		u32 c[4] = {(u32)ctr, (u32)(ctr >> 32), 0u, 0u};
		philox(c, k0, k1);
		double u1 = u53(c[0], c[1]), u2 = u53(c[2], c[3]);
		double v;
		if (kind == 2) {
			v = A + B * (sqrt(-2.0 * log(1.0 - u1)) * cospi(2.0 * u2));
		} else if (kind == 3) {
			v = u1 < A ? 1.0 : 0.0;
		} else {
{{- if .IsBool}}
			v = u1 < 0.5 ? 1.0 : 0.0;
{{- else}}
			const double lo = kind == 1 ? A : 0.0, hi = kind == 1 ? B : 1.0;
			for (int t = 0; t < 64; t++) {
				double u = (t & 1) ? u2 : u1;
				if (t > 0 && (t & 1) == 0) {
					u32 d[4] = {(u32)ctr, (u32)(ctr >> 32), (u32)(t / 2), 0u};
					philox(d, k0, k1);
					u1 = u53(d[0], d[1]);
					u2 = u53(d[2], d[3]);
					u = u1;
				}
				v = lo + u * (hi - lo);
{{- if .Int}}
				v = floor(v);
{{- end}}
				if (!(hi > lo) || rounded(v) < hi) break;
			}
{{- end}}
		}
		out[i] = {{.Store}};
	}
}
`)

// randomSource renders the random kernel for dt.
func randomSource(dt backend.DType, name string) string {
	c := ctypeOf(dt)
	sp := randomSpec{Name: name, S: c.S, Store: std(c, "v"), Round: "v", Int: c.Kind == 'i', IsBool: c.Kind == 'b'}
	switch dt {
	case backend.F32, backend.Flex32:
		sp.Round = "(double)(float)v"
	case backend.F16:
		sp.Round = "(double)f16_to_f32(f64_to_f16(v))"
	case backend.BF16:
		sp.Round = "(double)bf16_to_f32(f64_to_bf16(v))"
	}
	return render(randomTmpl, sp)
}

// random samples a contiguous tensor of shape (kept by the result) and dt
// from dist with the device's Philox stream (see the family doc above;
// Seed makes the sequence of random ops reproducible).
func (b *Backend) random(shape []int, dt backend.DType, dist backend.Distribution) *Tensor {
	out := b.emptyOf(shape, dt)
	n := backend.NumElements(shape)
	if n == 0 {
		return out
	}
	seed, off := b.NextPhilox(uint64(n))
	name := "ember_random_" + ctypeOf(dt).Name
	k := b.kernel(name, func() string { return randomSource(dt, name) })
	b.Launch(k, grid1(n, blockSize), block1, 0, int64(n), seed, off, int32(dist.Kind), dist.A, dist.B, out.Ptr())
	return out
}
