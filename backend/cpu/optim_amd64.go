package cpu

// The AVX2 loops of optim_amd64.s: n elements (a multiple of 8 for
// float32, of 4 for float64); for Adam constants c as adamScalars in the
// dtype and mode one of adamPlain, adamL2, adamDecoupled; for SGD c = lr,
// λ, μ and mode the sgd bits plus sgdStore. Every operation is one IEEE
// vector instruction (VMULPS, VADDPS, VSUBPS, VDIVPS, VSQRTPS and their
// double forms) in the order of the scalar loops, none fused.

//go:noescape
func adamF32AVX2(po, mo, vo, pi, gi, mi, vi *float32, n int, c *[9]float32, mode int)

//go:noescape
func adamF64AVX2(po, mo, vo, pi, gi, mi, vi *float64, n int, c *[9]float64, mode int)

// adamF32Vec runs the Adam update on the longest prefix the AVX2 loop
// takes (a multiple of 8 elements; none without AVX2) and returns its
// length.
func adamF32Vec(po, mo, vo, p, g, m, v []float32, c *[9]float32, mode int) int {
	k := len(po) &^ 7
	if !hasAVX2 || k == 0 {
		return 0
	}
	_, _, _, _, _, _ = mo[k-1], vo[k-1], p[k-1], g[k-1], m[k-1], v[k-1]
	adamF32AVX2(&po[0], &mo[0], &vo[0], &p[0], &g[0], &m[0], &v[0], k, c, mode)
	return k
}

// adamF64Vec is adamF32Vec for float64 (a multiple of 4 elements).
func adamF64Vec(po, mo, vo, p, g, m, v []float64, c *[9]float64, mode int) int {
	k := len(po) &^ 3
	if !hasAVX2 || k == 0 {
		return 0
	}
	_, _, _, _, _, _ = mo[k-1], vo[k-1], p[k-1], g[k-1], m[k-1], v[k-1]
	adamF64AVX2(&po[0], &mo[0], &vo[0], &p[0], &g[0], &m[0], &v[0], k, c, mode)
	return k
}

//go:noescape
func sgdF32AVX2(po, bo, pi, gi, bi *float32, n int, c *[3]float32, mode int)

//go:noescape
func sgdF64AVX2(po, bo, pi, gi, bi *float64, n int, c *[3]float64, mode int)

// sgdStore is the mode bit of the SGD loops that stores the new buffer.
const sgdStore = 16

// sgdF32Vec runs the SGD update of sgdChunk on the longest prefix the
// AVX2 loop takes (a multiple of 8 elements; none without AVX2) and
// returns its length.
func sgdF32Vec(po, bo, p, g, b []float32, c *[3]float32, mode int) int {
	k := len(po) &^ 7
	if !hasAVX2 || k == 0 {
		return 0
	}
	_, _ = p[k-1], g[k-1]
	var bop, bp *float32
	if bo != nil {
		_ = bo[k-1]
		bop, mode = &bo[0], mode|sgdStore
	}
	if mode&sgdBuffer != 0 {
		_ = b[k-1]
		bp = &b[0]
	}
	sgdF32AVX2(&po[0], bop, &p[0], &g[0], bp, k, c, mode)
	return k
}

// sgdF64Vec is sgdF32Vec for float64 (a multiple of 4 elements).
func sgdF64Vec(po, bo, p, g, b []float64, c *[3]float64, mode int) int {
	k := len(po) &^ 3
	if !hasAVX2 || k == 0 {
		return 0
	}
	_, _ = p[k-1], g[k-1]
	var bop, bp *float64
	if bo != nil {
		_ = bo[k-1]
		bop, mode = &bo[0], mode|sgdStore
	}
	if mode&sgdBuffer != 0 {
		_ = b[k-1]
		bp = &b[0]
	}
	sgdF64AVX2(&po[0], bop, &p[0], &g[0], bp, k, c, mode)
	return k
}

//go:noescape
func transposeF32AVX2(dst *float32, ds int, src *float32, ss int, rows, cols int)

// transposeTile sets dst[i*ds+j] = src[j*ss+i] for i < rows, j < cols:
// the float32 8×8 blocks on AVX2 where the CPU has it, the edges in Go.
func transposeTile[T float](dst []T, ds int, src []T, ss, rows, cols int) {
	r8, c8 := 0, 0
	if d, ok := any(dst).([]float32); ok && hasAVX2 && rows >= 8 && cols >= 8 {
		s := any(src).([]float32)
		r8, c8 = rows&^7, cols&^7
		_, _ = d[(r8-1)*ds+c8-1], s[(c8-1)*ss+r8-1]
		transposeF32AVX2(&d[0], ds, &s[0], ss, r8, c8)
	}
	transposeEdges(dst, ds, src, ss, rows, cols, r8, c8)
}
