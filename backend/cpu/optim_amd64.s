#include "textflag.h"

// Register use of the Adam loops: DI, R8, R9 the outputs param, m, v; SI,
// DX, R10, R11 the inputs param, grad, m, v; R12 the byte offset; CX the
// vector count; Y7..Y15 the constants decay, λ, β₁, 1−β₁, β₂, 1−β₂,
// √(1−β₂ᵗ), ε, lr/(1−β₁ᵗ); Y0 θ, Y1 g, Y2 m, Y3 v, Y4, Y5 temporaries.
// Go's operand order: VDIVPS b, a, d is d = a / b.

#define LOADARGS \
	MOVQ po+0(FP), DI; \
	MOVQ mo+8(FP), R8; \
	MOVQ vo+16(FP), R9; \
	MOVQ pi+24(FP), SI; \
	MOVQ gi+32(FP), DX; \
	MOVQ mi+40(FP), R10; \
	MOVQ vi+48(FP), R11; \
	MOVQ n+56(FP), CX; \
	MOVQ c+64(FP), AX; \
	MOVQ mode+72(FP), BX; \
	XORQ R12, R12

// m ← m·β₁ + g·(1−β₁); v ← v·β₂ + (g·g)·(1−β₂);
// θ ← θ − (m / (√v / √(1−β₂ᵗ) + ε))·(lr/(1−β₁ᵗ)); store θ, m, v.
#define ADAMCORE(MUL, ADD, SUB, DIV, SQRT, MOV) \
	MUL  (R10)(R12*1), Y9, Y2; \
	MUL  Y10, Y1, Y3; \
	ADD  Y3, Y2, Y2; \
	MUL  (R11)(R12*1), Y11, Y3; \
	MUL  Y1, Y1, Y4; \
	MUL  Y12, Y4, Y4; \
	ADD  Y4, Y3, Y3; \
	SQRT Y3, Y4; \
	DIV  Y13, Y4, Y4; \
	ADD  Y14, Y4, Y4; \
	DIV  Y4, Y2, Y5; \
	MUL  Y15, Y5, Y5; \
	SUB  Y5, Y0, Y0; \
	MOV  Y0, (DI)(R12*1); \
	MOV  Y2, (R8)(R12*1); \
	MOV  Y3, (R9)(R12*1); \
	ADDQ $32, R12

// Register use of the SGD loops: DI, R8 the outputs param and buffer (R8
// nil without a buffer to store); SI, DX, R10 the inputs param, grad and
// buffer; R12 the byte offset; CX the vector count; BX the mode bits
// (sgdDecay 1, sgdMomentum 2, sgdBuffer 4, sgdNesterov 8, 16: store the
// buffer); Y13, Y14, Y15 the constants lr, λ, μ; Y0 θ, Y1 g, Y3 b.

#define SGDARGS \
	MOVQ po+0(FP), DI; \
	MOVQ bo+8(FP), R8; \
	MOVQ pi+16(FP), SI; \
	MOVQ gi+24(FP), DX; \
	MOVQ bi+32(FP), R10; \
	MOVQ n+40(FP), CX; \
	MOVQ c+48(FP), AX; \
	MOVQ mode+56(FP), BX; \
	XORQ R12, R12

// g ← g + θ·λ; b ← b·μ + g (or g); g ← g + b·μ (or b); θ ← θ − g·lr.
#define SGDBODY(MUL, ADD, SUB, MOV, MOVA, NODECAY, NOBUF, NOSTORE, PLAIN, STEP) \
	MOV  (SI)(R12*1), Y0; \
	MOV  (DX)(R12*1), Y1; \
	TESTQ $1, BX; \
	JZ   NODECAY; \
	MUL  Y14, Y0, Y2; \
	ADD  Y2, Y1, Y1; \
NODECAY:; \
	TESTQ $2, BX; \
	JZ   STEP; \
	MOVA Y1, Y3; \
	TESTQ $4, BX; \
	JZ   NOBUF; \
	MUL  (R10)(R12*1), Y15, Y3; \
	ADD  Y1, Y3, Y3; \
NOBUF:; \
	TESTQ $16, BX; \
	JZ   NOSTORE; \
	MOV  Y3, (R8)(R12*1); \
NOSTORE:; \
	TESTQ $8, BX; \
	JZ   PLAIN; \
	MUL  Y15, Y3, Y4; \
	ADD  Y4, Y1, Y1; \
	JMP  STEP; \
PLAIN:; \
	MOVA Y3, Y1; \
STEP:; \
	MUL  Y13, Y1, Y1; \
	SUB  Y1, Y0, Y0; \
	MOV  Y0, (DI)(R12*1); \
	ADDQ $32, R12

// func adamF32AVX2(po, mo, vo, pi, gi, mi, vi *float32, n int, c *[9]float32, mode int)
TEXT ·adamF32AVX2(SB), NOSPLIT, $0-80
	LOADARGS
	SHRQ $3, CX
	JZ   f32done
	VBROADCASTSS 0(AX), Y7
	VBROADCASTSS 4(AX), Y8
	VBROADCASTSS 8(AX), Y9
	VBROADCASTSS 12(AX), Y10
	VBROADCASTSS 16(AX), Y11
	VBROADCASTSS 20(AX), Y12
	VBROADCASTSS 24(AX), Y13
	VBROADCASTSS 28(AX), Y14
	VBROADCASTSS 32(AX), Y15
	CMPQ BX, $1
	JEQ  f32l2
	CMPQ BX, $2
	JEQ  f32dec

f32plain:
	VMOVUPS (SI)(R12*1), Y0
	VMOVUPS (DX)(R12*1), Y1
	ADAMCORE(VMULPS, VADDPS, VSUBPS, VDIVPS, VSQRTPS, VMOVUPS)
	DECQ CX
	JNZ  f32plain
	JMP  f32done

f32l2:
	VMOVUPS (SI)(R12*1), Y0
	VMULPS  Y8, Y0, Y4
	VADDPS  (DX)(R12*1), Y4, Y1
	ADAMCORE(VMULPS, VADDPS, VSUBPS, VDIVPS, VSQRTPS, VMOVUPS)
	DECQ CX
	JNZ  f32l2
	JMP  f32done

f32dec:
	VMOVUPS (SI)(R12*1), Y0
	VMULPS  Y7, Y0, Y0
	VMOVUPS (DX)(R12*1), Y1
	ADAMCORE(VMULPS, VADDPS, VSUBPS, VDIVPS, VSQRTPS, VMOVUPS)
	DECQ CX
	JNZ  f32dec

f32done:
	VZEROUPPER
	RET

// func adamF64AVX2(po, mo, vo, pi, gi, mi, vi *float64, n int, c *[9]float64, mode int)
TEXT ·adamF64AVX2(SB), NOSPLIT, $0-80
	LOADARGS
	SHRQ $2, CX
	JZ   f64done
	VBROADCASTSD 0(AX), Y7
	VBROADCASTSD 8(AX), Y8
	VBROADCASTSD 16(AX), Y9
	VBROADCASTSD 24(AX), Y10
	VBROADCASTSD 32(AX), Y11
	VBROADCASTSD 40(AX), Y12
	VBROADCASTSD 48(AX), Y13
	VBROADCASTSD 56(AX), Y14
	VBROADCASTSD 64(AX), Y15
	CMPQ BX, $1
	JEQ  f64l2
	CMPQ BX, $2
	JEQ  f64dec

f64plain:
	VMOVUPD (SI)(R12*1), Y0
	VMOVUPD (DX)(R12*1), Y1
	ADAMCORE(VMULPD, VADDPD, VSUBPD, VDIVPD, VSQRTPD, VMOVUPD)
	DECQ CX
	JNZ  f64plain
	JMP  f64done

f64l2:
	VMOVUPD (SI)(R12*1), Y0
	VMULPD  Y8, Y0, Y4
	VADDPD  (DX)(R12*1), Y4, Y1
	ADAMCORE(VMULPD, VADDPD, VSUBPD, VDIVPD, VSQRTPD, VMOVUPD)
	DECQ CX
	JNZ  f64l2
	JMP  f64done

f64dec:
	VMOVUPD (SI)(R12*1), Y0
	VMULPD  Y7, Y0, Y0
	VMOVUPD (DX)(R12*1), Y1
	ADAMCORE(VMULPD, VADDPD, VSUBPD, VDIVPD, VSQRTPD, VMOVUPD)
	DECQ CX
	JNZ  f64dec

f64done:
	VZEROUPPER
	RET

// func sgdF32AVX2(po, bo, pi, gi, bi *float32, n int, c *[3]float32, mode int)
TEXT ·sgdF32AVX2(SB), NOSPLIT, $0-64
	SGDARGS
	SHRQ $3, CX
	JZ   sf32done
	VBROADCASTSS 0(AX), Y13
	VBROADCASTSS 4(AX), Y14
	VBROADCASTSS 8(AX), Y15

sf32loop:
	SGDBODY(VMULPS, VADDPS, VSUBPS, VMOVUPS, VMOVAPS, sf32nodecay, sf32nobuf, sf32nostore, sf32plain, sf32step)
	DECQ CX
	JNZ  sf32loop

sf32done:
	VZEROUPPER
	RET

// func sgdF64AVX2(po, bo, pi, gi, bi *float64, n int, c *[3]float64, mode int)
TEXT ·sgdF64AVX2(SB), NOSPLIT, $0-64
	SGDARGS
	SHRQ $2, CX
	JZ   sf64done
	VBROADCASTSD 0(AX), Y13
	VBROADCASTSD 8(AX), Y14
	VBROADCASTSD 16(AX), Y15

sf64loop:
	SGDBODY(VMULPD, VADDPD, VSUBPD, VMOVUPD, VMOVAPD, sf64nodecay, sf64nobuf, sf64nostore, sf64plain, sf64step)
	DECQ CX
	JNZ  sf64loop

sf64done:
	VZEROUPPER
	RET

// func transposeF32AVX2(dst *float32, ds int, src *float32, ss int, rows, cols int)
// dst[i*ds+j] = src[j*ss+i] for i < rows, j < cols (both multiples of 8),
// in 8×8 blocks transposed in registers: eight rows of the source (eight
// columns of dst) loaded, interleaved pairwise (VUNPCKLPS/VUNPCKHPS),
// combined in fours (VSHUFPS) and their 128-bit halves exchanged
// (VPERM2F128) into eight rows of dst.
TEXT ·transposeF32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ds+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ss+24(FP), R9
	MOVQ rows+32(FP), R10
	MOVQ cols+40(FP), R11
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R12 // 3 source strides
	LEAQ (R8)(R8*2), R13 // 3 destination strides
	XORQ CX, CX          // j0

tcols:
	CMPQ CX, R11
	JGE  tdone
	XORQ BX, BX // i0

trows:
	CMPQ BX, R10
	JGE  tnextcol
	// AX = &src[j0*ss + i0], DX = &dst[i0*ds + j0]
	MOVQ CX, AX
	IMULQ R9, AX
	LEAQ (SI)(AX*1), AX
	LEAQ (AX)(BX*4), AX
	MOVQ BX, DX
	IMULQ R8, DX
	LEAQ (DI)(DX*1), DX
	LEAQ (DX)(CX*4), DX
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R9*1), Y1
	VMOVUPS (AX)(R9*2), Y2
	VMOVUPS (AX)(R12*1), Y3
	LEAQ    (AX)(R9*4), AX
	VMOVUPS (AX), Y4
	VMOVUPS (AX)(R9*1), Y5
	VMOVUPS (AX)(R9*2), Y6
	VMOVUPS (AX)(R12*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, (DX)(R8*1)
	VMOVUPS Y10, (DX)(R8*2)
	VMOVUPS Y11, (DX)(R13*1)
	LEAQ    (DX)(R8*4), DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(R8*1)
	VMOVUPS Y14, (DX)(R8*2)
	VMOVUPS Y15, (DX)(R13*1)
	ADDQ $8, BX
	JMP  trows

tnextcol:
	ADDQ $8, CX
	JMP  tcols

tdone:
	VZEROUPPER
	RET
