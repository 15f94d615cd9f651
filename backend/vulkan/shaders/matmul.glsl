// matmul.glsl: the operand layout of the matmul kernels. out[b] =
// a[b] × b[b] for every batch index b; operands are views with a row and
// a column stride (transposed views need no copy) and per-batch offsets
// over up to 4 broadcast batch axes; the output is contiguous.
//
//   P[0] M, P[1] N, P[2] K, P[3] batches, P[4] batch rank, P[5 .. 9) the
//   batch shape; a: P[9] offset, P[10] row stride, P[11] column stride,
//   P[12 .. 16) batch strides; b: P[16] offset, P[17] row stride, P[18]
//   column stride, P[19 .. 23) batch strides; P[23] the output's offset.

// mm_batch returns the offsets of batch z in a and b.
uvec2 mm_batch(uint z) {
	uint rank = P[4];
	uint oa = P[9], ob = P[16];
	uint rem = z;
	for (uint d = rank; d > 0u; d--) {
		uint s = P[4u + d];
		uint c = rem % s;
		rem /= s;
		oa += c * P[11u + d];
		ob += c * P[18u + d];
	}
	return uvec2(oa, ob);
}
