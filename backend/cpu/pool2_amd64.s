//go:build amd64

#include "textflag.h"

// Lane constants: compress the even lanes of a YMM register to its low
// half, duplicate each of the low four lanes, and a mask of the odd lanes.
DATA pool2Even<>+0(SB)/4, $0
DATA pool2Even<>+4(SB)/4, $2
DATA pool2Even<>+8(SB)/4, $4
DATA pool2Even<>+12(SB)/4, $6
DATA pool2Even<>+16(SB)/4, $0
DATA pool2Even<>+20(SB)/4, $2
DATA pool2Even<>+24(SB)/4, $4
DATA pool2Even<>+28(SB)/4, $6
GLOBL pool2Even<>(SB), RODATA|NOPTR, $32

DATA pool2Dup<>+0(SB)/4, $0
DATA pool2Dup<>+4(SB)/4, $0
DATA pool2Dup<>+8(SB)/4, $1
DATA pool2Dup<>+12(SB)/4, $1
DATA pool2Dup<>+16(SB)/4, $2
DATA pool2Dup<>+20(SB)/4, $2
DATA pool2Dup<>+24(SB)/4, $3
DATA pool2Dup<>+28(SB)/4, $3
GLOBL pool2Dup<>(SB), RODATA|NOPTR, $32

DATA pool2Odd<>+0(SB)/4, $0
DATA pool2Odd<>+4(SB)/4, $0xffffffff
DATA pool2Odd<>+8(SB)/4, $0
DATA pool2Odd<>+12(SB)/4, $0xffffffff
DATA pool2Odd<>+16(SB)/4, $0
DATA pool2Odd<>+20(SB)/4, $0xffffffff
DATA pool2Odd<>+24(SB)/4, $0
DATA pool2Odd<>+28(SB)/4, $0xffffffff
GLOBL pool2Odd<>(SB), RODATA|NOPTR, $32

// TAP folds tap v into the running maximum m (even lanes): m = v where
// v > m, or where v is NaN and m is not (so the first NaN in tap order
// wins and stays). Clobbers Y12-Y14.
#define TAP(v, m) \
	VCMPPS $0x1e, m, v, Y12 \
	VCMPPS $3, v, v, Y13 \
	VCMPPS $7, m, m, Y14 \
	VANDPS Y14, Y13, Y13 \
	VORPS Y13, Y12, Y12 \
	VBLENDVPS Y12, v, m, m

// func maxPool2F32AVX2(out, x *float32, rows, w int)
//
// 2×2 max pooling with stride 2 of rows row pairs of w floats (w a
// multiple of 8, the pairs contiguous: 2w floats apart) into rows·w/2
// outputs. Taps in kernel order (top left, top right, bottom left, bottom
// right) as maxRowExact.
TEXT ·maxPool2F32AVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ w+24(FP), DX
	SHLQ $2, DX          // row bytes
	VMOVDQU pool2Even<>(SB), Y15

fwdRow:
	TESTQ CX, CX
	JE    fwdDone
	XORQ  R11, R11
	LEAQ  (SI)(DX*1), R8 // the bottom row

fwdChunk:
	VMOVUPS   (SI)(R11*1), Y0   // top: x00 in even lanes
	VMOVUPS   (R8)(R11*1), Y1   // bottom: x10 in even lanes
	VPERMILPS $0xb1, Y0, Y2     // x01 in even lanes
	VPERMILPS $0xb1, Y1, Y3     // x11 in even lanes
	TAP(Y2, Y0)
	TAP(Y1, Y0)
	TAP(Y3, Y0)
	VPERMPS   Y0, Y15, Y0
	VMOVUPS   X0, (DI)
	ADDQ      $16, DI
	ADDQ      $32, R11
	CMPQ      R11, DX
	JLT       fwdChunk

	LEAQ (SI)(DX*2), SI
	DECQ CX
	JMP  fwdRow

fwdDone:
	VZEROUPPER
	RET

// EQ sets e to the lanes of v equal to m (duplicated maxima), NaN equal
// to NaN. Clobbers Y12.
#define EQ(v, m, e) \
	VCMPPS $0, m, v, e \
	VCMPPS $3, v, v, Y12 \
	VANDPS Y11, Y12, Y12 \
	VORPS Y12, e, e

// func maxPool2GradF32AVX2(out, x, y, gy *float32, rows, w int)
//
// The gradient of maxPool2F32AVX2's pooling: each window's g + 0 goes to
// its selected tap (the first in kernel order equal to its maximum y, or
// the first NaN when y is NaN), +0 to the other three. x and out are
// rows row pairs of w floats (w a multiple of 8), y and g rows·w/2 floats.
TEXT ·maxPool2GradF32AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), R9
	MOVQ gy+24(FP), R10
	MOVQ rows+32(FP), CX
	MOVQ w+40(FP), DX
	SHLQ $2, DX
	VMOVDQU pool2Dup<>(SB), Y15
	VMOVDQU pool2Odd<>(SB), Y14
	VXORPS  Y13, Y13, Y13

bwdRow:
	TESTQ CX, CX
	JE    bwdDone
	XORQ  R11, R11
	LEAQ  (SI)(DX*1), R8
	LEAQ  (DI)(DX*1), BX

bwdChunk:
	VMOVUPS (R9), X4
	VPERMPS Y4, Y15, Y4         // maxima, each twice
	VMOVUPS (R10), X5
	VPERMPS Y5, Y15, Y5
	VADDPS  Y13, Y5, Y5         // g + 0
	VCMPPS  $3, Y4, Y4, Y11     // maxima that are NaN
	VMOVUPS (SI)(R11*1), Y0
	VMOVUPS (R8)(R11*1), Y1
	EQ(Y0, Y4, Y2)              // top taps equal to their maximum
	EQ(Y1, Y4, Y3)              // bottom taps
	VPERMILPS $0xa0, Y2, Y6     // e00 in both lanes of a window
	VPERMILPS $0xf5, Y2, Y7     // e01 in both lanes
	VORPS   Y7, Y6, Y7          // any top tap
	VANDPS  Y14, Y6, Y6         // before a top-right tap: e00
	VANDNPS Y2, Y6, Y2          // selected top taps
	VPERMILPS $0xa0, Y3, Y6
	VANDPS  Y14, Y6, Y6
	VORPS   Y7, Y6, Y6          // before a bottom tap: any top, or e10 before the right
	VANDNPS Y3, Y6, Y3          // selected bottom taps
	VANDPS  Y5, Y2, Y2
	VANDPS  Y5, Y3, Y3
	VMOVUPS Y2, (DI)(R11*1)
	VMOVUPS Y3, (BX)(R11*1)
	ADDQ    $16, R9
	ADDQ    $16, R10
	ADDQ    $32, R11
	CMPQ    R11, DX
	JLT     bwdChunk

	LEAQ (SI)(DX*2), SI
	LEAQ (DI)(DX*2), DI
	DECQ CX
	JMP  bwdRow

bwdDone:
	VZEROUPPER
	RET
