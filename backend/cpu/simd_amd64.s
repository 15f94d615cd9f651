#include "textflag.h"

// func sumF32AVX2(x *float32, n int) float64
// Sums n (a multiple of 16) float32 values in float64, four accumulators.
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHRQ $4, CX
	JZ   sumdone

sumloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	DECQ      CX
	JNZ       sumloop

sumdone:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+16(FP)
	RET

// func addF32AVX2(o, a, b *float32, n int, nt bool)
// o[i] = a[i] + b[i] for n (a multiple of 16) values; nt selects
// non-temporal stores (o must then be 32-byte aligned).
TEXT ·addF32AVX2(SB), NOSPLIT, $0-33
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	MOVB nt+32(FP), AX
	SHRQ $4, CX
	JZ   adddone
	TESTB AL, AL
	JNZ  addnt

addloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     addloop
	JMP     adddone

addnt:
	VMOVUPS  (SI), Y0
	VMOVUPS  32(SI), Y1
	VADDPS   (DX), Y0, Y0
	VADDPS   32(DX), Y1, Y1
	VMOVNTPS Y0, (DI)
	VMOVNTPS Y1, 32(DI)
	ADDQ     $64, SI
	ADDQ     $64, DX
	ADDQ     $64, DI
	DECQ     CX
	JNZ      addnt
	SFENCE

adddone:
	VZEROUPPER
	RET

// func prefetchT0(p unsafe.Pointer, lines int)
// Prefetches lines cache lines (64 bytes) from p into all cache levels.
TEXT ·prefetchT0(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE  pfdone

pfloop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	DECQ       CX
	JNZ        pfloop

pfdone:
	RET

// func streamF32AVX2(o, a *float32, n int)
// o[i] = a[i] for n (a multiple of 16) values with non-temporal stores;
// o is 32-byte aligned.
TEXT ·streamF32AVX2(SB), NOSPLIT, $0-24
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   streamdone

streamloop:
	VMOVUPS  (SI), Y0
	VMOVUPS  32(SI), Y1
	VMOVNTPS Y0, (DI)
	VMOVNTPS Y1, 32(DI)
	ADDQ     $64, SI
	ADDQ     $64, DI
	DECQ     CX
	JNZ      streamloop
	SFENCE

streamdone:
	VZEROUPPER
	RET

// func copyRowsAVX(dst *float32, ldd int, src *float32, lds int, rows, cols int)
// Copies rows rows of cols (at least 8) float32 values, src rows lds
// elements apart to dst rows ldd apart, 8 at a time; a row's last 8 are
// copied from its end (overlapping the previous vector where cols is not
// a multiple of 8).
TEXT ·copyRowsAVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), CX
	SHLQ $2, CX
	MOVQ rows+32(FP), R8
	MOVQ cols+40(FP), R9
	SUBQ $8, R9
	SHLQ $2, R9 // the last vector's byte offset

copyrows_row:
	TESTQ R8, R8
	JE    copyrows_done
	XORQ  AX, AX

copyrows_col:
	CMPQ    AX, R9
	JGE     copyrows_last
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     copyrows_col

copyrows_last:
	VMOVUPS (SI)(R9*1), Y0
	VMOVUPS Y0, (DI)(R9*1)
	ADDQ    CX, SI
	ADDQ    DX, DI
	DECQ    R8
	JMP     copyrows_row

copyrows_done:
	VZEROUPPER
	RET
