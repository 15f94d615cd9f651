#include "textflag.h"

// Register use of the row loops: DI the accumulators, SI the current row
// group, DX the row stride in bytes, R8 three strides, BX the rows left,
// CX the lanes; R9 the lane offset in x (bytes), R10 in the accumulators,
// R11 the vector count, R12 the current column of the row group. Rows
// are taken four at a time (one load and store of the accumulators per
// four rows), then one at a time.

#define ROWARGS \
	MOVQ acc+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ n+16(FP), CX; \
	MOVQ rows+24(FP), BX; \
	MOVQ stride+32(FP), DX; \
	SHLQ $2, DX; \
	LEAQ (DX)(DX*2), R8

// FOLD64(OP, ADDR) folds the 8 floats at ADDR into Y0 (lanes 0-3) and Y1
// (lanes 4-7), widened to float64.
#define FOLD64(OP, ADDR0, ADDR1) \
	VCVTPS2PD ADDR0, Y2; \
	VCVTPS2PD ADDR1, Y3; \
	OP        Y2, Y0, Y0; \
	OP        Y3, Y1, Y1

// ACCROWS(OP, name) is the body of sumRowsF32AVX2 / prodRowsF32AVX2.
#define ACCROWS(OP, L4, L4LOOP, L1, L1LOOP, DONE) \
	ROWARGS; \
L4:; \
	CMPQ BX, $4; \
	JLT  L1; \
	XORQ R9, R9; \
	XORQ R10, R10; \
	MOVQ CX, R11; \
	SHRQ $3, R11; \
L4LOOP:; \
	VMOVUPD (DI)(R10*1), Y0; \
	VMOVUPD 32(DI)(R10*1), Y1; \
	LEAQ    (SI)(R9*1), R12; \
	FOLD64(OP, (R12), 16(R12)); \
	FOLD64(OP, (R12)(DX*1), 16(R12)(DX*1)); \
	FOLD64(OP, (R12)(DX*2), 16(R12)(DX*2)); \
	FOLD64(OP, (R12)(R8*1), 16(R12)(R8*1)); \
	VMOVUPD Y0, (DI)(R10*1); \
	VMOVUPD Y1, 32(DI)(R10*1); \
	ADDQ    $32, R9; \
	ADDQ    $64, R10; \
	DECQ    R11; \
	JNZ     L4LOOP; \
	LEAQ    (SI)(DX*4), SI; \
	SUBQ    $4, BX; \
	JMP     L4; \
L1:; \
	TESTQ BX, BX; \
	JZ    DONE; \
	XORQ  R9, R9; \
	XORQ  R10, R10; \
	MOVQ  CX, R11; \
	SHRQ  $3, R11; \
L1LOOP:; \
	VMOVUPD (DI)(R10*1), Y0; \
	VMOVUPD 32(DI)(R10*1), Y1; \
	FOLD64(OP, (SI)(R9*1), 16(SI)(R9*1)); \
	VMOVUPD Y0, (DI)(R10*1); \
	VMOVUPD Y1, 32(DI)(R10*1); \
	ADDQ    $32, R9; \
	ADDQ    $64, R10; \
	DECQ    R11; \
	JNZ     L1LOOP; \
	ADDQ    DX, SI; \
	DECQ    BX; \
	JMP     L1; \
DONE:; \
	VZEROUPPER; \
	RET

// func sumRowsF32AVX2(acc *float64, x *float32, n, rows, stride int)
TEXT ·sumRowsF32AVX2(SB), NOSPLIT, $0-40
	ACCROWS(VADDPD, s4, s4loop, s1, s1loop, sdone)

// func prodRowsF32AVX2(acc *float64, x *float32, n, rows, stride int)
TEXT ·prodRowsF32AVX2(SB), NOSPLIT, $0-40
	ACCROWS(VMULPD, p4, p4loop, p1, p1loop, pdone)

// PICK(CMP, ADDR) replaces the lanes of Y0 by those of the 8 floats at
// ADDR that compare CMP (0x1e: greater, 0x11: less, ordered) with them,
// or that are NaN where Y0 is not: upd = cmp(v, best) | (isnan(v) &^
// isnan(best)); best = upd ? v : best.
#define PICK(CMP, ADDR) \
	VMOVUPS   ADDR, Y2; \
	VCMPPS    CMP, Y0, Y2, Y3; \
	VCMPPS    $3, Y2, Y2, Y4; \
	VCMPPS    $3, Y0, Y0, Y5; \
	VANDNPS   Y4, Y5, Y5; \
	VORPS     Y5, Y3, Y3; \
	VBLENDVPS Y3, Y2, Y0, Y0

// EXTROWS(CMP, ...) is the body of maxRowsF32AVX2 / minRowsF32AVX2.
#define EXTROWS(CMP, L4, L4LOOP, L1, L1LOOP, DONE) \
	ROWARGS; \
L4:; \
	CMPQ BX, $4; \
	JLT  L1; \
	XORQ R9, R9; \
	MOVQ CX, R11; \
	SHRQ $3, R11; \
L4LOOP:; \
	VMOVUPS (DI)(R9*1), Y0; \
	LEAQ    (SI)(R9*1), R12; \
	PICK(CMP, (R12)); \
	PICK(CMP, (R12)(DX*1)); \
	PICK(CMP, (R12)(DX*2)); \
	PICK(CMP, (R12)(R8*1)); \
	VMOVUPS Y0, (DI)(R9*1); \
	ADDQ    $32, R9; \
	DECQ    R11; \
	JNZ     L4LOOP; \
	LEAQ    (SI)(DX*4), SI; \
	SUBQ    $4, BX; \
	JMP     L4; \
L1:; \
	TESTQ BX, BX; \
	JZ    DONE; \
	XORQ  R9, R9; \
	MOVQ  CX, R11; \
	SHRQ  $3, R11; \
L1LOOP:; \
	VMOVUPS (DI)(R9*1), Y0; \
	PICK(CMP, (SI)(R9*1)); \
	VMOVUPS Y0, (DI)(R9*1); \
	ADDQ    $32, R9; \
	DECQ    R11; \
	JNZ     L1LOOP; \
	ADDQ    DX, SI; \
	DECQ    BX; \
	JMP     L1; \
DONE:; \
	VZEROUPPER; \
	RET

// func maxRowsF32AVX2(acc, x *float32, n, rows, stride int)
TEXT ·maxRowsF32AVX2(SB), NOSPLIT, $0-40
	EXTROWS($0x1e, m4, m4loop, m1, m1loop, mdone)

// func minRowsF32AVX2(acc, x *float32, n, rows, stride int)
TEXT ·minRowsF32AVX2(SB), NOSPLIT, $0-40
	EXTROWS($0x11, n4, n4loop, n1, n1loop, ndone)
