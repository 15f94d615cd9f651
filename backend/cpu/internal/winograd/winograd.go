// Package winograd holds the tile transforms of the Winograd convolution
// F(4×4, 5×5) in float32 (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016; the Toom–Cook construction with
// the interpolation points 0, ±1, ±2, ±1/2 and ∞ of NNPACK's F(6×6, 3×3),
// which shares its input transform):
//
//	Y = Aᵀ·[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]·A
//
// turns an 8×8 input tile d and a 5×5 kernel g into the 4×4 outputs of
// their cross-correlation (Y[i][j] = Σ d[i+ky][j+kx]·g[ky][kx]) with 64
// element-wise products instead of 400. Its adjoint, the transposed
// algorithm
//
//	D = B·[(G·g·Gᵀ) ⊙ (A·y·Aᵀ)]·Bᵀ
//
// turns a 4×4 tile y into the 8×8 block of its full convolution with g
// (D[i][j] = Σ y[i−ky][j−kx]·g[ky][kx]); overlapping blocks of
// neighbouring tiles add up to a conv_transpose2d. The dual algorithm
// F(5×5, 4×4), from the same points (the transposition principle: its
// filter transform is A, its output transform G),
//
//	W = Gᵀ·[(A·y·Aᵀ) ⊙ (Bᵀ·d·B)]·G
//
// turns an 8×8 input tile d and a 4×4 output-gradient tile y into the 5×5
// kernel gradient W[ky][kx] = Σ y[i][j]·d[i+ky][j+kx] (the same identity
// Σ_ξ Aᵀ[i][ξ]·G[ξ][k]·Bᵀ[ξ][l] = [l = i + k] read with k as the output).
// Summed over channels (or, for the kernel gradient, over images and
// tiles), the products become 64 independent matrix products (the
// caller's GEMMs); this package transforms tiles in and out of that
// domain.
//
// Every transform works on L lanes at once (Lanes: 16 with AVX-512F, 8
// with AVX2+FMA, 8 for the portable loops): lane l of every vector
// belongs to an independent tile (an image of a batch, a channel), so the
// caller lays its data out with that axis innermost. Each transform is
// separable: one one-dimensional program (gen_winograd.go) run over the
// columns of the tile and then over the rows of the result, in float32
// with fused multiply-adds. The matrices (exactAT, exactG, exactBT in the
// tests) have dyadic entries, exact in float32, except G's 2/9, 1/90 and
// 32/45.
package winograd

import "fmt"

// Tile sizes of F(4×4, 5×5): Alpha×Alpha transformed tiles, M×M outputs
// (the transposed algorithm's inputs) and R×R kernels.
const (
	Alpha = 8
	M     = 4
	R     = 5
	// Points is the number of transformed positions of a tile (Alpha²).
	Points = Alpha * Alpha
)

// tableIn and tableOut are the shapes of the assembly transforms: tiles
// read through an offset table and written with a stride, or read with a
// stride and written through a table (see gen_winograd.go).
type (
	tableIn  func(n int, src *float32, sstep int, tab *int32, dst *float32, dstep, xistride int, tmp *float32)
	tableOut func(n int, src *float32, sstep, xistride int, dst *float32, dstep int, tab *int32, tmp *float32)
)

// Set is the transforms of one instruction set.
type Set struct {
	name    string
	lanes   int
	input   tableIn
	output  tableOut
	kernel  tableIn
	tinput  tableIn
	toutput tableOut
	wgrad   tableOut
}

// Name returns the set's name: "avx512", "avx2" or "generic".
func (s *Set) Name() string { return s.name }

// Lanes returns the float32 lanes of the set's vectors.
func (s *Set) Lanes() int { return s.lanes }

// Accelerated reports whether the set runs assembly (false: the portable
// loops, for tests and machines without the vector extensions).
func (s *Set) Accelerated() bool { return s.input != nil }

// generic is the portable set.
var generic = &Set{name: "generic", lanes: 8}

// ByName returns the named set ("avx512" and "avx2" where the CPU has
// them, "generic" always), or nil.
func ByName(name string) *Set {
	if name == "generic" {
		return generic
	}
	return setByName(name)
}

// Tmp is the scratch space a transform call needs: 64 vectors of the
// widest set.
type Tmp [Points * 16]float32

// Input transforms n input tiles (Bᵀ·d·B): for c < n, tile element (i, j)
// (row i, column j, i, j < 8) is the vector src[c·sstep + soff[8i+j] :][:L],
// and transformed position (ξ, η) is written to
// dst[c·dstep + (8ξ+η)·xistride :][:L]. Offsets are in elements and must
// not be negative (a zero-padded border reads a zero vector through soff).
// A read or write past a slice panics before any work.
func (s *Set) Input(n int, src []float32, sstep int, soff *[Points]int32, dst []float32, dstep, xistride int, tmp *Tmp) {
	s.in("Input", s.input, &inputProg, n, src, sstep, soff[:], dst, dstep, xistride, tmp)
}

// Output transforms n tiles back (Aᵀ·m·A): for c < n, transformed
// position (ξ, η) is the vector src[c·sstep + (8ξ+η)·xistride :][:L], and
// output (i, j) (i, j < 4) is written to dst[c·dstep + doff[4i+j] :][:L]
// (a cropped output can be pointed at a dummy vector). Bounds as in Input.
func (s *Set) Output(n int, src []float32, sstep, xistride int, dst []float32, dstep int, doff *[M * M]int32, tmp *Tmp) {
	s.out("Output", s.output, &outputProg, false, n, src, sstep, xistride, dst, dstep, doff[:], tmp)
}

// Kernel transforms n kernels (G·g·Gᵀ): for c < n, kernel element (i, j)
// (i, j < 5) is the vector src[c·sstep + koff[5i+j] :][:L], and transformed
// position (ξ, η) is written to dst[c·dstep + (8ξ+η)·xistride :][:L].
// Bounds as in Input.
func (s *Set) Kernel(n int, src []float32, sstep int, koff *[R * R]int32, dst []float32, dstep, xistride int, tmp *Tmp) {
	s.in("Kernel", s.kernel, &kernelProg, n, src, sstep, koff[:], dst, dstep, xistride, tmp)
}

// TransposedInput transforms n 4×4 tiles of the transposed algorithm
// (A·y·Aᵀ): for c < n, tile element (i, j) (i, j < 4) is the vector
// src[c·sstep + soff[4i+j] :][:L], and transformed position (ξ, η) is
// written to dst[c·dstep + (8ξ+η)·xistride :][:L]. Bounds as in Input.
func (s *Set) TransposedInput(n int, src []float32, sstep int, soff *[M * M]int32, dst []float32, dstep, xistride int, tmp *Tmp) {
	s.in("TransposedInput", s.tinput, &tinputProg, n, src, sstep, soff[:], dst, dstep, xistride, tmp)
}

// TransposedOutput transforms n tiles of the transposed algorithm back
// into 8×8 blocks (B·m·Bᵀ) and adds them to dst: for c < n, transformed
// position (ξ, η) is the vector src[c·sstep + (8ξ+η)·xistride :][:L], and
// block element (i, j) is added to dst[c·dstep + doff[8i+j] :][:L] (the
// 64 offsets must differ). Bounds as in Input.
func (s *Set) TransposedOutput(n int, src []float32, sstep, xistride int, dst []float32, dstep int, doff *[Points]int32, tmp *Tmp) {
	s.out("TransposedOutput", s.toutput, &toutputProg, true, n, src, sstep, xistride, dst, dstep, doff[:], tmp)
}

// WeightGrad transforms n tiles of the dual algorithm back into 5×5
// kernel gradients (Gᵀ·m·G): for c < n, transformed position (ξ, η) is
// the vector src[c·sstep + (8ξ+η)·xistride :][:L], and kernel element
// (i, j) (i, j < 5) is written to dst[c·dstep + doff[5i+j] :][:L]. Its
// operands are Input's transform of the 8×8 input tile and
// TransposedInput's of the 4×4 output-gradient tile. Bounds as in Input.
func (s *Set) WeightGrad(n int, src []float32, sstep, xistride int, dst []float32, dstep int, doff *[R * R]int32, tmp *Tmp) {
	s.out("WeightGrad", s.wgrad, &wgradProg, false, n, src, sstep, xistride, dst, dstep, doff[:], tmp)
}

// in runs a table-in transform: the assembly f, or prog in Go.
func (s *Set) in(what string, f tableIn, prog *program, n int, src []float32, sstep int, tab []int32, dst []float32, dstep, xistride int, tmp *Tmp) {
	if n <= 0 {
		return
	}
	s.checkTable(what, n, len(src), sstep, tab)
	s.checkStrided(what, n, len(dst), dstep, xistride)
	if f != nil {
		f(n, &src[0], sstep, &tab[0], &dst[0], dstep, xistride, &tmp[0])
		return
	}
	in := make([][]float32, len(tab))
	for c := range n {
		for k, o := range tab {
			in[k] = src[c*sstep+int(o):][:s.lanes]
		}
		d := dst[c*dstep:]
		transform2D(prog, s.lanes, in, func(xi, eta int) []float32 {
			return d[(Alpha*xi+eta)*xistride:][:s.lanes]
		}, false, tmp)
	}
}

// out runs a table-out transform: the assembly f, or prog in Go (adding
// to dst when add).
func (s *Set) out(what string, f tableOut, prog *program, add bool, n int, src []float32, sstep, xistride int, dst []float32, dstep int, tab []int32, tmp *Tmp) {
	if n <= 0 {
		return
	}
	s.checkStrided(what, n, len(src), sstep, xistride)
	s.checkTable(what, n, len(dst), dstep, tab)
	if f != nil {
		f(n, &src[0], sstep, xistride, &dst[0], dstep, &tab[0], &tmp[0])
		return
	}
	var in [Points][]float32
	for c := range n {
		for k := range in {
			in[k] = src[c*sstep+k*xistride:][:s.lanes]
		}
		d := dst[c*dstep:]
		transform2D(prog, s.lanes, in[:], func(i, j int) []float32 {
			return d[tab[prog.out*i+j]:][:s.lanes]
		}, add, tmp)
	}
}

// checkTable panics unless every vector at c·step + table[k] (c < n)
// lies in a slice of length size.
func (s *Set) checkTable(what string, n, size, step int, table []int32) {
	hi := int32(0)
	for _, o := range table {
		if o < 0 {
			panic(fmt.Sprintf("winograd: %s: negative offset %d", what, o))
		}
		hi = max(hi, o)
	}
	if step < 0 || (n-1)*step+int(hi)+s.lanes > size {
		panic(fmt.Sprintf("winograd: %s: %d tiles of step %d and largest offset %d past a slice of %d", what, n, step, hi, size))
	}
}

// checkStrided panics unless every vector at c·step + k·stride (c < n,
// k < 64) lies in a slice of length size.
func (s *Set) checkStrided(what string, n, size, step, stride int) {
	if step < 0 || stride < 0 || (n-1)*step+(Points-1)*stride+s.lanes > size {
		panic(fmt.Sprintf("winograd: %s: %d tiles of step %d, stride %d past a slice of %d", what, n, step, stride, size))
	}
}
