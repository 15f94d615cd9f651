//go:build ignore

// Command gen_winograd writes winograd_amd64.s, winograd_amd64.go and
// programs.go, the transforms of the Winograd convolution F(4×4, 5×5):
//
//	go run gen_winograd.go
//
// Each transform is a separable 2D linear map applied to L lanes at once
// (L = 16 with AVX-512F, 8 with AVX2+FMA): a one-dimensional program (a
// list of vector additions, subtractions, multiplications by a constant
// and multiply-adds, written to share the even and odd parts of the
// symmetric interpolation points) is run once per column of the tile
// into a scratch buffer, then once per row of that. The same programs are
// written out as data for the portable Go loops (programs.go), which tests
// check against the exact matrices (winograd_test.go).
//
//   - Bᵀ (8×8, input tiles): rows 0…7 for the points 0, 1, −1, 2, −2,
//     1/2, −1/2, ∞; row 0 is negated with row 0 of G (their signs cancel
//     in the element-wise product), which saves a negation in both.
//   - Aᵀ (4×8, output tiles).
//   - G (8×5, kernels).
//   - The transposed algorithm (the adjoint, for conv_transpose2d), whose
//     4×4 input tiles become 8×8 blocks of a full convolution: A (8×4,
//     input tiles) and B (8×8, output blocks, added into the output).
//   - The dual algorithm F(5×5, 4×4) (the weight gradient, a correlation
//     of an 8×8 input tile with a 4×4 output-gradient tile): Bᵀ and A for
//     its two operands, and Gᵀ (5×8, kernel-gradient tiles).
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"math/big"
	"os"
	"strings"
)

// op is one vector instruction of a program on registers r0…r15 (the
// inputs arrive in r0…r(in−1)).
type op struct {
	code    string // add: d = a + b; sub: d = a − b; mul: d = a·c; fma: d += a·c; out: output b = register a
	d, a, b int
	c       float32
}

type prog struct {
	name    string
	in, out int
	ops     []op
}

func (p *prog) add(d, a, b int) { p.ops = append(p.ops, op{code: "add", d: d, a: a, b: b}) }
func (p *prog) sub(d, a, b int) { p.ops = append(p.ops, op{code: "sub", d: d, a: a, b: b}) }
func (p *prog) mul(d, a int, c *big.Rat) {
	p.ops = append(p.ops, op{code: "mul", d: d, a: a, c: f32(c)})
}
func (p *prog) fma(d, a int, c *big.Rat) {
	p.ops = append(p.ops, op{code: "fma", d: d, a: a, c: f32(c)})
}
func (p *prog) put(k, a int) { p.ops = append(p.ops, op{code: "out", a: a, b: k}) }

func f32(r *big.Rat) float32 { f, _ := r.Float32(); return f }
func q(a, b int64) *big.Rat  { return big.NewRat(a, b) }

// inputProg is Bᵀ·d for one column d0…d7 of an 8×8 input tile.
func inputProg() *prog {
	p := &prog{name: "input", in: 8, out: 8}
	// row 0: d0 − d6 + 21/4·(d4 − d2)
	p.sub(8, 0, 6)
	p.sub(9, 4, 2)
	p.fma(8, 9, q(21, 4))
	p.put(0, 8)
	// row 7: d7 − d1 + 21/4·(d3 − d5)
	p.sub(8, 7, 1)
	p.sub(9, 3, 5)
	p.fma(8, 9, q(21, 4))
	p.put(7, 8)
	// rows 1, 2: (d2 + d6 − 17/4·d4) ± (d1 + d5 − 17/4·d3)
	p.add(8, 2, 6)
	p.fma(8, 4, q(-17, 4))
	p.add(9, 1, 5)
	p.fma(9, 3, q(-17, 4))
	p.add(10, 8, 9)
	p.put(1, 10)
	p.sub(10, 8, 9)
	p.put(2, 10)
	// rows 3, 4: (d2/4 + d6 − 5/4·d4) ± (d1/2 − 5/2·d3 + 2·d5)
	p.mul(8, 2, q(1, 4))
	p.add(8, 8, 6)
	p.fma(8, 4, q(-5, 4))
	p.mul(9, 1, q(1, 2))
	p.fma(9, 3, q(-5, 2))
	p.fma(9, 5, q(2, 1))
	p.add(10, 8, 9)
	p.put(3, 10)
	p.sub(10, 8, 9)
	p.put(4, 10)
	// rows 5, 6: (4·d2 + d6 − 5·d4) ± (2·d1 − 5/2·d3 + d5/2)
	p.mul(8, 2, q(4, 1))
	p.add(8, 8, 6)
	p.fma(8, 4, q(-5, 1))
	p.mul(9, 1, q(2, 1))
	p.fma(9, 3, q(-5, 2))
	p.fma(9, 5, q(1, 2))
	p.add(10, 8, 9)
	p.put(5, 10)
	p.sub(10, 8, 9)
	p.put(6, 10)
	return p
}

// outputProg is Aᵀ·m for one column m0…m7 of a transformed output tile.
func outputProg() *prog {
	p := &prog{name: "output", in: 8, out: 4}
	p.add(8, 1, 2)  // s1
	p.sub(9, 1, 2)  // d1
	p.add(10, 3, 4) // s2
	p.sub(11, 3, 4) // d2
	p.add(12, 5, 6) // s3
	p.sub(13, 5, 6) // d3
	// row 0: m0 + s1 + s2 + s3
	p.add(14, 0, 8)
	p.add(14, 14, 10)
	p.add(14, 14, 12)
	p.put(0, 14)
	// row 1: d1 + 2·d2 + d3/2
	p.mul(14, 11, q(2, 1))
	p.add(14, 14, 9)
	p.fma(14, 13, q(1, 2))
	p.put(1, 14)
	// row 2: s1 + 4·s2 + s3/4
	p.mul(14, 10, q(4, 1))
	p.add(14, 14, 8)
	p.fma(14, 12, q(1, 4))
	p.put(2, 14)
	// row 3: d1 + 8·d2 + d3/8 + m7
	p.mul(14, 11, q(8, 1))
	p.add(14, 14, 9)
	p.fma(14, 13, q(1, 8))
	p.add(14, 14, 7)
	p.put(3, 14)
	return p
}

// kernelProg is G·g for one column g0…g4 of a 5×5 kernel.
func kernelProg() *prog {
	p := &prog{name: "kernel", in: 5, out: 8}
	p.put(0, 0) // row 0: g0
	p.put(7, 4) // row 7: g4
	// rows 1, 2: −2/9·((g0 + g2 + g4) ± (g1 + g3))
	p.add(5, 0, 2)
	p.add(5, 5, 4)
	p.add(6, 1, 3)
	p.add(7, 5, 6)
	p.mul(7, 7, q(-2, 9))
	p.put(1, 7)
	p.sub(7, 5, 6)
	p.mul(7, 7, q(-2, 9))
	p.put(2, 7)
	// rows 3, 4: 1/90·((g0 + 4·g2 + 16·g4) ± (2·g1 + 8·g3))
	p.mul(5, 2, q(4, 1))
	p.add(5, 5, 0)
	p.fma(5, 4, q(16, 1))
	p.mul(6, 1, q(2, 1))
	p.fma(6, 3, q(8, 1))
	p.add(7, 5, 6)
	p.mul(7, 7, q(1, 90))
	p.put(3, 7)
	p.sub(7, 5, 6)
	p.mul(7, 7, q(1, 90))
	p.put(4, 7)
	// rows 5, 6: 32/45·((g0 + g2/4 + g4/16) ± (g1/2 + g3/8))
	p.mul(5, 2, q(1, 4))
	p.add(5, 5, 0)
	p.fma(5, 4, q(1, 16))
	p.mul(6, 1, q(1, 2))
	p.fma(6, 3, q(1, 8))
	p.add(7, 5, 6)
	p.mul(7, 7, q(32, 45))
	p.put(5, 7)
	p.sub(7, 5, 6)
	p.mul(7, 7, q(32, 45))
	p.put(6, 7)
	return p
}

// tinputProg is A·y for one column y0…y3 of a 4×4 input tile of the
// transposed algorithm: the cubic with coefficients y evaluated at the
// points (Aᵀ's columns).
func tinputProg() *prog {
	p := &prog{name: "tinput", in: 4, out: 8}
	p.put(0, 0) // point 0: y0
	p.put(7, 3) // ∞: y3
	// ±1: (y0 + y2) ± (y1 + y3)
	p.add(4, 0, 2)
	p.add(5, 1, 3)
	p.add(6, 4, 5)
	p.put(1, 6)
	p.sub(6, 4, 5)
	p.put(2, 6)
	// ±2: (y0 + 4·y2) ± (2·y1 + 8·y3)
	p.mul(4, 2, q(4, 1))
	p.add(4, 4, 0)
	p.mul(5, 1, q(2, 1))
	p.fma(5, 3, q(8, 1))
	p.add(6, 4, 5)
	p.put(3, 6)
	p.sub(6, 4, 5)
	p.put(4, 6)
	// ±1/2: (y0 + y2/4) ± (y1/2 + y3/8)
	p.mul(4, 2, q(1, 4))
	p.add(4, 4, 0)
	p.mul(5, 1, q(1, 2))
	p.fma(5, 3, q(1, 8))
	p.add(6, 4, 5)
	p.put(5, 6)
	p.sub(6, 4, 5)
	p.put(6, 6)
	return p
}

// toutputProg is B·m (Bᵀ's columns) for one column m0…m7 of a transformed
// tile of the transposed algorithm, giving the 8 outputs of one 4-input
// tile's full convolution.
func toutputProg() *prog {
	p := &prog{name: "toutput", in: 8, out: 8}
	p.add(8, 1, 2)  // s1
	p.sub(9, 1, 2)  // d1
	p.add(10, 3, 4) // s2
	p.sub(11, 3, 4) // d2
	p.add(12, 5, 6) // s3
	p.sub(13, 5, 6) // d3
	// 1: d1 + d2/2 + 2·d3 − m7
	p.sub(14, 9, 7)
	p.fma(14, 11, q(1, 2))
	p.fma(14, 13, q(2, 1))
	p.put(1, 14)
	// 2: s1 + s2/4 + 4·s3 − 21/4·m0
	p.mul(14, 0, q(-21, 4))
	p.add(14, 14, 8)
	p.fma(14, 10, q(1, 4))
	p.fma(14, 12, q(4, 1))
	p.put(2, 14)
	// 3: 21/4·m7 − 17/4·d1 − 5/2·(d2 + d3)
	p.add(15, 11, 13)
	p.mul(14, 7, q(21, 4))
	p.fma(14, 9, q(-17, 4))
	p.fma(14, 15, q(-5, 2))
	p.put(3, 14)
	// 4: 21/4·m0 − 17/4·s1 − 5/4·s2 − 5·s3
	p.mul(14, 0, q(21, 4))
	p.fma(14, 8, q(-17, 4))
	p.fma(14, 10, q(-5, 4))
	p.fma(14, 12, q(-5, 1))
	p.put(4, 14)
	// 5: d1 + 2·d2 + d3/2 − 21/4·m7
	p.mul(14, 7, q(-21, 4))
	p.add(14, 14, 9)
	p.fma(14, 11, q(2, 1))
	p.fma(14, 13, q(1, 2))
	p.put(5, 14)
	// 6: s1 + s2 + s3 − m0
	p.sub(14, 8, 0)
	p.add(14, 14, 10)
	p.add(14, 14, 12)
	p.put(6, 14)
	// Last, as the adding store overwrites the register it adds to.
	p.put(0, 0) // m0
	p.put(7, 7) // m7
	return p
}

// wgradProg is Gᵀ·m for one column m0…m7 of a transformed tile of the
// dual algorithm, giving 5 kernel-gradient values: Σ_ξ G[ξ][k]·m_ξ, with
// G's rows for the points 0, ±1, ±2, ±1/2, ∞ (see kernelProg).
func wgradProg() *prog {
	p := &prog{name: "wgrad", in: 8, out: 5}
	p.add(8, 1, 2)  // s1
	p.sub(9, 1, 2)  // d1
	p.add(10, 3, 4) // s2
	p.sub(11, 3, 4) // d2
	p.add(12, 5, 6) // s3
	p.sub(13, 5, 6) // d3
	// 0: m0 − 2/9·s1 + 1/90·s2 + 32/45·s3
	p.mul(14, 8, q(-2, 9))
	p.fma(14, 10, q(1, 90))
	p.fma(14, 12, q(32, 45))
	p.add(14, 14, 0)
	p.put(0, 14)
	// 1: −2/9·d1 + 2/90·d2 + 16/45·d3
	p.mul(14, 9, q(-2, 9))
	p.fma(14, 11, q(2, 90))
	p.fma(14, 13, q(16, 45))
	p.put(1, 14)
	// 2: −2/9·s1 + 4/90·s2 + 8/45·s3
	p.mul(14, 8, q(-2, 9))
	p.fma(14, 10, q(4, 90))
	p.fma(14, 12, q(8, 45))
	p.put(2, 14)
	// 3: −2/9·d1 + 8/90·d2 + 4/45·d3
	p.mul(14, 9, q(-2, 9))
	p.fma(14, 11, q(8, 90))
	p.fma(14, 13, q(4, 45))
	p.put(3, 14)
	// 4: −2/9·s1 + 16/90·s2 + 2/45·s3 + m7
	p.mul(14, 8, q(-2, 9))
	p.fma(14, 10, q(16, 90))
	p.fma(14, 12, q(2, 45))
	p.add(14, 14, 7)
	p.put(4, 14)
	return p
}

// checkClobber panics unless every register pr stores is rewritten (or
// unused) before it is read again: an adding store (genTableOut) leaves
// the sum in it.
func checkClobber(pr *prog) {
	reads := func(o op, r int) bool {
		switch o.code {
		case "add", "sub":
			return o.a == r || o.b == r
		case "fma":
			return o.a == r || o.d == r
		}
		return o.a == r // mul, out
	}
	for i, o := range pr.ops {
		if o.code != "out" {
			continue
		}
		for _, later := range pr.ops[i+1:] {
			if reads(later, o.a) {
				panic(fmt.Sprintf("%s: register %d read after an adding store", pr.name, o.a))
			}
			if later.code != "out" && later.d == o.a {
				break
			}
		}
	}
}

type isa struct {
	name  string // AVX512 or AVX2
	reg   string // Z or Y
	lanes int
}

var isas = []isa{{"AVX512", "Z", 16}, {"AVX2", "Y", 8}}

// consts collects the distinct constants of the programs; each is stored
// as 16 copies (64 bytes) in winoConst<>.
var consts []float32

func constOff(c float32) int {
	for i, v := range consts {
		if math.Float32bits(v) == math.Float32bits(c) {
			return 64 * i
		}
	}
	consts = append(consts, c)
	return 64 * (len(consts) - 1)
}

type emitter struct {
	w  *bytes.Buffer
	is isa
}

func (e *emitter) p(format string, args ...any) { fmt.Fprintf(e.w, "\t"+format+"\n", args...) }

func (e *emitter) r(i int) string {
	if i > 15 {
		panic("register out of range")
	}
	return fmt.Sprintf("%s%d", e.is.reg, i)
}

// run emits program pr; store(k, reg) emits the store of output k.
func (e *emitter) run(pr *prog, store func(k int, reg string)) {
	for _, o := range pr.ops {
		switch o.code {
		case "add":
			e.p("VADDPS %s, %s, %s", e.r(o.b), e.r(o.a), e.r(o.d))
		case "sub":
			e.p("VSUBPS %s, %s, %s", e.r(o.b), e.r(o.a), e.r(o.d))
		case "mul":
			e.p("VMULPS winoConst<>+%d(SB), %s, %s", constOff(o.c), e.r(o.a), e.r(o.d))
		case "fma":
			e.p("VFMADD231PS winoConst<>+%d(SB), %s, %s", constOff(o.c), e.r(o.a), e.r(o.d))
		case "out":
			store(o.b, e.r(o.a))
		}
	}
}

// strided returns the address of element k·(R8 bytes) from base, with
// R9 = 3·R8, R11 = 5·R8 and R12 = 7·R8 (k < 8).
func strided(base string, k int) string {
	switch k {
	case 0:
		return fmt.Sprintf("(%s)", base)
	case 1:
		return fmt.Sprintf("(%s)(R8*1)", base)
	case 2:
		return fmt.Sprintf("(%s)(R8*2)", base)
	case 3:
		return fmt.Sprintf("(%s)(R9*1)", base)
	case 4:
		return fmt.Sprintf("(%s)(R8*4)", base)
	case 5:
		return fmt.Sprintf("(%s)(R11*1)", base)
	case 6:
		return fmt.Sprintf("(%s)(R9*2)", base)
	case 7:
		return fmt.Sprintf("(%s)(R12*1)", base)
	}
	panic("stride index")
}

// strides loads R8 = 4·xistride (the argument at off) and its multiples.
func (e *emitter) strides(off int) {
	e.p("MOVQ xistride+%d(FP), R8", off)
	e.p("SHLQ $2, R8")
	e.p("LEAQ (R8)(R8*2), R9")
	e.p("LEAQ (R8)(R8*4), R11")
	e.p("LEAQ (R9)(R8*4), R12")
	e.p("MOVQ R8, R13")
	e.p("SHLQ $3, R13")
}

func (e *emitter) header(name, sig string, frame int) {
	fmt.Fprintf(e.w, "\n// func %s%s\n", name, sig)
	fmt.Fprintf(e.w, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", name, frame)
}

const (
	tableInSig  = "(n int, src *float32, sstep int, tab *int32, dst *float32, dstep, xistride int, tmp *float32)"
	tableOutSig = "(n int, src *float32, sstep, xistride int, dst *float32, dstep int, tab *int32, tmp *float32)"
)

// genTableIn writes a transform whose nin×nin input tile is read through
// an offset table (element (i, j) at src + tab[nin·i+j]) and whose
// out×out results go to dst + (8ξ+η)·xistride, for n items sstep and
// dstep elements apart.
func genTableIn(e *emitter, base string, pr *prog) {
	name := base + e.is.name
	vb := 4 * e.is.lanes
	nin, nout := pr.in, pr.out
	e.header(name, tableInSig, 64)
	e.p("MOVQ n+0(FP), CX")
	e.p("MOVQ src+8(FP), AX")
	e.p("MOVQ tab+24(FP), SI")
	e.p("MOVQ dst+32(FP), BX")
	e.p("MOVQ tmp+56(FP), DI")
	e.strides(48)
	fmt.Fprintf(e.w, "\n%s_loop:\n", name)
	e.p("TESTQ CX, CX")
	e.p("JE %s_done", name)
	for j := range nin {
		for i := range nin {
			e.p("MOVLQSX %d(SI), R10", 4*(nin*i+j))
			e.p("VMOVUPS (AX)(R10*4), %s", e.r(i))
		}
		e.run(pr, func(k int, reg string) { e.p("VMOVUPS %s, %d(DI)", reg, (nin*k+j)*vb) })
	}
	e.p("MOVQ BX, DX")
	for xi := range nout {
		for j := range nin {
			e.p("VMOVUPS %d(DI), %s", (nin*xi+j)*vb, e.r(j))
		}
		e.run(pr, func(k int, reg string) { e.p("VMOVUPS %s, %s", reg, strided("DX", k)) })
		if xi < nout-1 {
			e.p("ADDQ R13, DX")
		}
	}
	e.tail(name)
}

// genTableOut writes a transform whose 8×8 input is read at
// src + (8ξ+η)·xistride and whose out×out results go through an offset
// table (result (i, j) at dst + tab[out·i+j]), stored or, with add, added
// to what is there, for n items sstep and dstep elements apart.
func genTableOut(e *emitter, base string, pr *prog, add bool) {
	if add {
		checkClobber(pr)
	}
	name := base + e.is.name
	vb := 4 * e.is.lanes
	nin, nout := pr.in, pr.out
	e.header(name, tableOutSig, 64)
	e.p("MOVQ n+0(FP), CX")
	e.p("MOVQ src+8(FP), AX")
	e.p("MOVQ dst+32(FP), BX")
	e.p("MOVQ tab+48(FP), SI")
	e.p("MOVQ tmp+56(FP), DI")
	e.strides(24)
	fmt.Fprintf(e.w, "\n%s_loop:\n", name)
	e.p("TESTQ CX, CX")
	e.p("JE %s_done", name)
	e.p("MOVQ AX, DX")
	for j := range nin {
		e.p("MOVQ DX, R10")
		for i := range nin {
			e.p("VMOVUPS (R10), %s", e.r(i))
			if i < nin-1 {
				e.p("ADDQ R13, R10")
			}
		}
		e.run(pr, func(k int, reg string) { e.p("VMOVUPS %s, %d(DI)", reg, (nin*k+j)*vb) })
		if j < nin-1 {
			e.p("ADDQ R8, DX")
		}
	}
	for i := range nout {
		for j := range nin {
			e.p("VMOVUPS %d(DI), %s", (nin*i+j)*vb, e.r(j))
		}
		e.run(pr, func(k int, reg string) {
			e.p("MOVLQSX %d(SI), R10", 4*(nout*i+k))
			if add {
				e.p("VADDPS (BX)(R10*4), %s, %s", reg, reg)
			}
			e.p("VMOVUPS %s, (BX)(R10*4)", reg)
		})
	}
	e.tail(name)
}

// tail advances to the next item and closes the loop.
func (e *emitter) tail(name string) {
	e.p("MOVQ sstep+16(FP), R10")
	e.p("LEAQ (AX)(R10*4), AX")
	e.p("MOVQ dstep+40(FP), R10")
	e.p("LEAQ (BX)(R10*4), BX")
	e.p("DECQ CX")
	e.p("JMP %s_loop", name)
	fmt.Fprintf(e.w, "\n%s_done:\n", name)
	e.p("VZEROUPPER")
	e.p("RET")
}

// goProgram writes pr as a Go composite literal of the portable loops.
func goProgram(w *bytes.Buffer, pr *prog) {
	fmt.Fprintf(w, "\n// %sProg is the %s transform's one-dimensional program (gen_winograd.go).\n", pr.name, pr.name)
	fmt.Fprintf(w, "var %sProg = program{in: %d, out: %d, ops: []op{\n", pr.name, pr.in, pr.out)
	codes := map[string]string{"add": "opAdd", "sub": "opSub", "mul": "opMul", "fma": "opFMA", "out": "opOut"}
	for _, o := range pr.ops {
		c := ""
		if o.code == "mul" || o.code == "fma" {
			c = fmt.Sprintf(", c: math.Float32frombits(%#08x)", math.Float32bits(o.c))
		}
		fmt.Fprintf(w, "\t{code: %s, d: %d, a: %d, b: %d%s},\n", codes[o.code], o.d, o.a, o.b, c)
	}
	w.WriteString("}}\n")
}

func main() {
	progs := []*prog{inputProg(), outputProg(), kernelProg(), tinputProg(), toutputProg(), wgradProg()}
	funcs := []struct {
		name, sig string
		gen       func(e *emitter)
	}{
		{"input", tableInSig, func(e *emitter) { genTableIn(e, "input", progs[0]) }},
		{"output", tableOutSig, func(e *emitter) { genTableOut(e, "output", progs[1], false) }},
		{"kernel", tableInSig, func(e *emitter) { genTableIn(e, "kernel", progs[2]) }},
		{"tinput", tableInSig, func(e *emitter) { genTableIn(e, "tinput", progs[3]) }},
		{"toutput", tableOutSig, func(e *emitter) { genTableOut(e, "toutput", progs[4], true) }},
		{"wgrad", tableOutSig, func(e *emitter) { genTableOut(e, "wgrad", progs[5], false) }},
	}
	var body, s, g, gp bytes.Buffer
	for _, is := range isas {
		e := &emitter{w: &body, is: is}
		for _, f := range funcs {
			f.gen(e)
		}
	}
	s.WriteString("// Code generated by gen_winograd.go; DO NOT EDIT.\n\n//go:build amd64\n\n#include \"textflag.h\"\n\n")
	s.WriteString("// winoConst<>: the programs' constants, 16 copies of each.\n")
	for i, c := range consts {
		u := uint64(math.Float32bits(c))
		for k := range 8 {
			fmt.Fprintf(&s, "DATA winoConst<>+%d(SB)/8, $%#016x\n", 64*i+8*k, u<<32|u)
		}
	}
	fmt.Fprintf(&s, "GLOBL winoConst<>(SB), RODATA|NOPTR, $%d\n", 64*len(consts))
	s.Write(body.Bytes())

	g.WriteString("// Code generated by gen_winograd.go; DO NOT EDIT.\n\n//go:build amd64\n\npackage winograd\n")
	for _, is := range isas {
		for _, f := range funcs {
			fmt.Fprintf(&g, "\n//go:noescape\nfunc %s%s%s\n", f.name, is.name, f.sig)
		}
	}
	gp.WriteString("// Code generated by gen_winograd.go; DO NOT EDIT.\n\npackage winograd\n\nimport \"math\"\n")
	for _, pr := range progs {
		goProgram(&gp, pr)
	}
	for name, b := range map[string][]byte{"winograd_amd64.s": s.Bytes(), "winograd_amd64.go": g.Bytes(), "programs.go": gp.Bytes()} {
		if strings.HasSuffix(name, ".go") {
			src, err := format.Source(b)
			if err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				os.Exit(1)
			}
			b = src
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
