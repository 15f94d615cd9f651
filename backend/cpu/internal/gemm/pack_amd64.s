//go:build amd64

#include "textflag.h"

// func packA14S(k int, a *float32, idx *int32, alpha float32, dst *float32)
// dst[p*14+r] = alpha * a[idx[r]+p] for r < 14, p < k (k >= 1): one
// masked 14-lane gather and one masked store per column.
TEXT ·packA14S(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ idx+16(FP), AX
	MOVQ dst+32(FP), DI
	VMOVDQU32 (AX), Z1
	VBROADCASTSS alpha+24(FP), Z2
	MOVL $0x3fff, AX
	KMOVW AX, K2

packA14S_loop:
	KMOVW K2, K1
	VPXORD Z0, Z0, Z0
	VGATHERDPS (SI)(Z1*4), K1, Z0
	VMULPS Z2, Z0, Z0
	VMOVUPS Z0, K2, (DI)
	ADDQ $4, SI
	ADDQ $56, DI
	DECQ CX
	JNZ packA14S_loop
	VZEROUPPER
	RET

// func packA14D(k int, a *float64, idx *int32, alpha float64, dst *float64)
// dst[p*14+r] = alpha * a[idx[r]+p] for r < 14, p < k (k >= 1): two
// gathers (rows 0–7 and 8–13) and two stores per column.
TEXT ·packA14D(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ idx+16(FP), AX
	MOVQ dst+32(FP), DI
	VMOVDQU32 (AX), Y3
	VMOVDQU32 32(AX), Y4
	VBROADCASTSD alpha+24(FP), Z2
	MOVL $0xff, AX
	KMOVW AX, K3
	MOVL $0x3f, AX
	KMOVW AX, K4

packA14D_loop:
	KMOVW K3, K1
	VPXORQ Z0, Z0, Z0
	VGATHERDPD (SI)(Y3*8), K1, Z0
	KMOVW K4, K1
	VPXORQ Z5, Z5, Z5
	VGATHERDPD (SI)(Y4*8), K1, Z5
	VMULPD Z2, Z0, Z0
	VMULPD Z2, Z5, Z5
	VMOVUPD Z0, (DI)
	VMOVUPD Z5, K4, 64(DI)
	ADDQ $8, SI
	ADDQ $112, DI
	DECQ CX
	JNZ packA14D_loop
	VZEROUPPER
	RET

// func packT8S(k int, src *float32, lds int, dst *float32, ldd int)
// dst[p*ldd+r] = src[r*lds+p] for r < 8, p < k (k a multiple of 8, at
// least 8): an 8×8 transposition in registers (AVX) per 8 columns.
TEXT ·packT8S(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	MOVQ dst+24(FP), DI
	MOVQ ldd+32(FP), DX
	SHLQ $2, R8
	SHLQ $2, DX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	LEAQ (DX)(DX*2), R12
	LEAQ (DX)(DX*4), R13
	LEAQ (R12)(DX*4), BX
	SHRQ $3, CX

packT8S_loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (SI)(R8*4), Y4
	VMOVUPS (SI)(R10*1), Y5
	VMOVUPS (SI)(R9*2), Y6
	VMOVUPS (SI)(R11*1), Y7
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
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y10, (DI)(DX*2)
	VMOVUPS Y11, (DI)(R12*1)
	VMOVUPS Y12, (DI)(DX*4)
	VMOVUPS Y13, (DI)(R13*1)
	VMOVUPS Y14, (DI)(R12*2)
	VMOVUPS Y15, (DI)(BX*1)
	ADDQ $32, SI
	LEAQ (DI)(DX*8), DI
	DECQ CX
	JNZ  packT8S_loop
	VZEROUPPER
	RET
