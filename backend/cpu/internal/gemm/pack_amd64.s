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
