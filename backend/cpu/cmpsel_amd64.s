//go:build amd64

#include "textflag.h"

// CMPSEL(PRED, LOOP, DONE) is the body of the cmpSel*F32 loops:
// o[i] = a[i] PRED s ? x[i] : y[i], 8 elements an iteration, x and y
// advancing xstep and ystep bytes per 8 elements (0: a repeated scalar).
// VBLENDVPS takes each lane's bits from one branch unchanged.
#define CMPSEL(PRED, LOOP, DONE) \
	MOVQ         o+0(FP), DI; \
	MOVQ         a+8(FP), SI; \
	VBROADCASTSS s+16(FP), Y5; \
	MOVQ         x+24(FP), AX; \
	MOVQ         xstep+32(FP), R8; \
	MOVQ         y+40(FP), BX; \
	MOVQ         ystep+48(FP), R9; \
	MOVQ         n+56(FP), CX; \
	SHRQ         $3, CX; \
	JZ           DONE; \
LOOP:; \
	VMOVUPS      (SI), Y0; \
	VCMPPS       PRED, Y5, Y0, Y0; \
	VMOVUPS      (AX), Y1; \
	VMOVUPS      (BX), Y2; \
	VBLENDVPS    Y0, Y1, Y2, Y3; \
	VMOVUPS      Y3, (DI); \
	ADDQ         $32, SI; \
	ADDQ         $32, DI; \
	ADDQ         R8, AX; \
	ADDQ         R9, BX; \
	DECQ         CX; \
	JNZ          LOOP; \
DONE:; \
	VZEROUPPER; \
	RET

// Comparisons of float32 vectors with a scalar into Go bools (bytes 0 or
// 1), and the float32 select on a bool mask: n elements (a multiple of
// 16), AVX2. Ordered predicates, quiet (NaN compares false, and true for
// Ne), as Go's operators.

DATA cmpOnes<>+0(SB)/8, $0x0101010101010101
DATA cmpOnes<>+8(SB)/8, $0x0101010101010101
GLOBL cmpOnes<>(SB), RODATA|NOPTR, $16

// func cmpEqVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] == s
TEXT ·cmpEqVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpEqdone
	VMOVDQU      cmpOnes<>(SB), X4

cmpEqloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x0, Y5, Y0, Y0
	VCMPPS       $0x0, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpEqloop

cmpEqdone:
	VZEROUPPER
	RET

// func cmpNeVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] != s
TEXT ·cmpNeVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpNedone
	VMOVDQU      cmpOnes<>(SB), X4

cmpNeloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x4, Y5, Y0, Y0
	VCMPPS       $0x4, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpNeloop

cmpNedone:
	VZEROUPPER
	RET

// func cmpLtVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] < s
TEXT ·cmpLtVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpLtdone
	VMOVDQU      cmpOnes<>(SB), X4

cmpLtloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x11, Y5, Y0, Y0
	VCMPPS       $0x11, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpLtloop

cmpLtdone:
	VZEROUPPER
	RET

// func cmpLeVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] <= s
TEXT ·cmpLeVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpLedone
	VMOVDQU      cmpOnes<>(SB), X4

cmpLeloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x12, Y5, Y0, Y0
	VCMPPS       $0x12, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpLeloop

cmpLedone:
	VZEROUPPER
	RET

// func cmpGtVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] > s
TEXT ·cmpGtVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpGtdone
	VMOVDQU      cmpOnes<>(SB), X4

cmpGtloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x1e, Y5, Y0, Y0
	VCMPPS       $0x1e, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpGtloop

cmpGtdone:
	VZEROUPPER
	RET

// func cmpGeVSF32(o *bool, a *float32, s float32, n int): o[i] = a[i] >= s
TEXT ·cmpGeVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y5
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           cmpGedone
	VMOVDQU      cmpOnes<>(SB), X4

cmpGeloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VCMPPS       $0x1d, Y5, Y0, Y0
	VCMPPS       $0x1d, Y5, Y1, Y1
	VPACKSSDW    Y1, Y0, Y2
	VPERMQ       $0xd8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKSSWB    X3, X2, X2
	VPAND        X4, X2, X2
	VMOVDQU      X2, (DI)
	ADDQ         $64, SI
	ADDQ         $16, DI
	DECQ         CX
	JNZ          cmpGeloop

cmpGedone:
	VZEROUPPER
	RET

// func selectF32AVX2(o *float32, c *bool, a *float32, astep int, b *float32, bstep int, n int)
//
// o[i] = c[i] ? a[i] : b[i], a and b advancing astep and bstep bytes per
// 8 elements (0: the same 8 values each time, a repeated scalar).
TEXT ·selectF32AVX2(SB), NOSPLIT, $0-56
	MOVQ o+0(FP), DI
	MOVQ c+8(FP), SI
	MOVQ a+16(FP), AX
	MOVQ astep+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bstep+40(FP), R9
	MOVQ n+48(FP), CX
	SHRQ $3, CX
	JZ   seldone

selloop:
	VPMOVZXBD (SI), Y0
	VPSLLD    $31, Y0, Y0
	VMOVUPS   (AX), Y1
	VMOVUPS   (BX), Y2
	VBLENDVPS Y0, Y1, Y2, Y3
	VMOVUPS   Y3, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	ADDQ      R8, AX
	ADDQ      R9, BX
	DECQ      CX
	JNZ       selloop

seldone:
	VZEROUPPER
	RET

// func cmpSelEqF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelEqF32(SB), NOSPLIT, $0-64
	CMPSEL($0x0, cseqloop, cseqdone)

// func cmpSelNeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelNeF32(SB), NOSPLIT, $0-64
	CMPSEL($0x4, csneloop, csnedone)

// func cmpSelLtF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelLtF32(SB), NOSPLIT, $0-64
	CMPSEL($0x11, csltloop, csltdone)

// func cmpSelLeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelLeF32(SB), NOSPLIT, $0-64
	CMPSEL($0x12, csleloop, csledone)

// func cmpSelGtF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelGtF32(SB), NOSPLIT, $0-64
	CMPSEL($0x1e, csgtloop, csgtdone)

// func cmpSelGeF32(o, a *float32, s float32, x *float32, xstep int, y *float32, ystep int, n int)
TEXT ·cmpSelGeF32(SB), NOSPLIT, $0-64
	CMPSEL($0x1d, csgeloop, csgedone)
