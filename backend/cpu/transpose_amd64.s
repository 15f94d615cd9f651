//go:build amd64

#include "textflag.h"

// func transpose8AVX(dst *float32, ldd int, src *float32, lds int, n int, sstep, dstep int)
//
// Transposes n 8×8 float32 blocks: block b reads 8 rows of 8 elements at
// src + b·sstep bytes (rows lds elements apart) and writes them as 8
// columns at dst + b·dstep bytes (rows ldd elements apart). Unpack,
// shuffle and 128-bit lane permutes (AVX).
TEXT ·transpose8AVX(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), CX
	SHLQ $2, CX
	MOVQ n+32(FP), R8
	LEAQ (CX)(CX*2), R9  // 3·lds bytes
	LEAQ (DX)(DX*2), R10 // 3·ldd bytes

loop:
	TESTQ R8, R8
	JE   done
	MOVQ SI, AX
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(CX*1), Y1
	VMOVUPS (AX)(CX*2), Y2
	VMOVUPS (AX)(R9*1), Y3
	LEAQ (AX)(CX*4), AX
	VMOVUPS (AX), Y4
	VMOVUPS (AX)(CX*1), Y5
	VMOVUPS (AX)(CX*2), Y6
	VMOVUPS (AX)(R9*1), Y7

	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	MOVQ DI, BX
	VMOVUPS Y8, (BX)
	VMOVUPS Y9, (BX)(DX*1)
	VMOVUPS Y10, (BX)(DX*2)
	VMOVUPS Y11, (BX)(R10*1)
	LEAQ (BX)(DX*4), BX
	VMOVUPS Y12, (BX)
	VMOVUPS Y13, (BX)(DX*1)
	VMOVUPS Y14, (BX)(DX*2)
	VMOVUPS Y15, (BX)(R10*1)

	ADDQ sstep+40(FP), SI
	ADDQ dstep+48(FP), DI
	DECQ R8
	JMP  loop

done:
	VZEROUPPER
	RET
