#include "textflag.h"

// Row kernels of softmax.go and norm.go: n (a multiple of 8) float32
// elements, unaligned loads and stores. Sums are accumulated in float64.
//
// EXP8 computes e^x for the 8 lanes of xv (destroyed) into pv, with nv
// and tv as temporaries, Y13 = 89 and Y14 = -110 (the clamps): Cephes'
// expf range reduction and polynomial with fused multiply-adds. x is
// clamped to [-110, 89] with VMINPS/VMAXPS taking x as the second source,
// so a NaN lane stays NaN throughout (the result is NaN); -Inf becomes
// -110, whose e^x rounds to 0; 89 overflows to +Inf as e^x does. The
// scale 2^n is applied as 2^(n>>1)·2^(n−(n>>1)), two normal factors, so
// results in the subnormal range round once, like e^x's.
#define EXP8(xv, nv, pv, tv) \
	VMINPS       xv, Y13, xv; \
	VMAXPS       xv, Y14, xv; \
	VMULPS       smaxLog2e<>(SB), xv, nv; \
	VROUNDPS     $0, nv, nv; \
	VFNMADD231PS smaxC1<>(SB), nv, xv; \
	VFNMADD231PS smaxC2<>(SB), nv, xv; \
	VMOVUPS      smaxP0<>(SB), pv; \
	VFMADD213PS  smaxP1<>(SB), xv, pv; \
	VFMADD213PS  smaxP2<>(SB), xv, pv; \
	VFMADD213PS  smaxP3<>(SB), xv, pv; \
	VFMADD213PS  smaxP4<>(SB), xv, pv; \
	VFMADD213PS  smaxP5<>(SB), xv, pv; \
	VMULPS       xv, xv, tv; \
	VFMADD213PS  xv, tv, pv; \
	VADDPS       smaxOne<>(SB), pv, pv; \
	VCVTPS2DQ    nv, nv; \
	VPSRAD       $1, nv, tv; \
	VPSUBD       tv, nv, nv; \
	VPADDD       smaxBias<>(SB), tv, tv; \
	VPADDD       smaxBias<>(SB), nv, nv; \
	VPSLLD       $23, tv, tv; \
	VPSLLD       $23, nv, nv; \
	VMULPS       tv, pv, pv; \
	VMULPS       nv, pv, pv

// ACC64 adds the 8 float32 lanes of py (destroyed; px is its low half)
// to the float64 accumulators a (low 4 lanes) and b (high 4), with ty/tx
// a temporary.
#define ACC64(py, px, ty, tx, a, b) \
	VEXTRACTF128 $1, py, tx; \
	VCVTPS2PD    px, py; \
	VCVTPS2PD    tx, ty; \
	VADDPD       py, a, a; \
	VADDPD       ty, b, b

// HSUM64 leaves the sum of the float64 lanes of Y10, Y11, Y8 and Y9 in X10.
#define HSUM64 \
	VADDPD       Y8, Y10, Y10; \
	VADDPD       Y9, Y11, Y11; \
	VADDPD       Y11, Y10, Y10; \
	VEXTRACTF128 $1, Y10, X11; \
	VADDPD       X11, X10, X10; \
	VHADDPD      X10, X10, X10

#define ZERO64 \
	VXORPD Y8, Y8, Y8; \
	VXORPD Y9, Y9, Y9; \
	VXORPD Y10, Y10, Y10; \
	VXORPD Y11, Y11, Y11

#define CLAMPS \
	VMOVUPS smaxHi<>(SB), Y13; \
	VMOVUPS smaxLo<>(SB), Y14

// func smaxMaxF32(x *float32, n int) float32
// The largest of n values (a NaN may or may not be returned).
TEXT ·smaxMaxF32(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS smaxNegInf<>(SB), Y0
	VMOVUPS Y0, Y1
	VMOVUPS Y0, Y2
	VMOVUPS Y0, Y3
	CMPQ    CX, $32
	JLT     mx8

mx32:
	VMAXPS (SI), Y0, Y0
	VMAXPS 32(SI), Y1, Y1
	VMAXPS 64(SI), Y2, Y2
	VMAXPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	CMPQ   CX, $32
	JGE    mx32

mx8:
	CMPQ   CX, $8
	JLT    mxdone
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    mx8

mxdone:
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func smaxExpSumF32(o, x *float32, n int, m float32, pf int) float64
// o[i] = e^(x[i]−m); returns the float64 sum of the o[i]. Each 64 bytes
// read prefetch the line pf bytes further (the next row of a row-wise
// caller, which this pass, bound by arithmetic, leaves the memory idle
// for).
TEXT ·smaxExpSumF32(SB), NOSPLIT, $0-48
	MOVQ         o+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ         pf+32(FP), R8
	CLAMPS
	ZERO64
	CMPQ         CX, $16
	JLT          es8

es16:
	PREFETCHT0 (SI)(R8*1)
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  Y15, Y0, Y0
	VSUBPS  Y15, Y1, Y1
	EXP8(Y0, Y2, Y3, Y4)
	EXP8(Y1, Y5, Y6, Y7)
	VMOVUPS Y3, (DI)
	VMOVUPS Y6, 32(DI)
	ACC64(Y3, X3, Y4, X4, Y10, Y11)
	ACC64(Y6, X6, Y7, X7, Y8, Y9)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     es16

es8:
	CMPQ    CX, $8
	JLT     esdone
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	EXP8(Y0, Y2, Y3, Y4)
	VMOVUPS Y3, (DI)
	ACC64(Y3, X3, Y4, X4, Y10, Y11)

esdone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+40(FP)
	RET

// func smaxExpSumOnlyF32(x *float32, n int, m float32, pf int) float64
// The float64 sum of e^(x[i]−m), prefetching as smaxExpSumF32.
TEXT ·smaxExpSumOnlyF32(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	MOVQ         pf+24(FP), R8
	CLAMPS
	ZERO64
	CMPQ         CX, $16
	JLT          eo8

eo16:
	PREFETCHT0 (SI)(R8*1)
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  Y15, Y0, Y0
	VSUBPS  Y15, Y1, Y1
	EXP8(Y0, Y2, Y3, Y4)
	EXP8(Y1, Y5, Y6, Y7)
	ACC64(Y3, X3, Y4, X4, Y10, Y11)
	ACC64(Y6, X6, Y7, X7, Y8, Y9)
	ADDQ    $64, SI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     eo16

eo8:
	CMPQ    CX, $8
	JLT     eodone
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	EXP8(Y0, Y2, Y3, Y4)
	ACC64(Y3, X3, Y4, X4, Y10, Y11)

eodone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+32(FP)
	RET

// func smaxExpSubF32(o, x, m *float32, n int)
// o[i] = e^(x[i]−m[i]).
TEXT ·smaxExpSubF32(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ n+24(FP), CX
	CLAMPS
	CMPQ CX, $16
	JLT  ev8

ev16:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  (DX), Y0, Y0
	VSUBPS  32(DX), Y1, Y1
	EXP8(Y0, Y2, Y3, Y4)
	EXP8(Y1, Y5, Y6, Y7)
	VMOVUPS Y3, (DI)
	VMOVUPS Y6, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     ev16

ev8:
	CMPQ    CX, $8
	JLT     evdone
	VMOVUPS (SI), Y0
	VSUBPS  (DX), Y0, Y0
	EXP8(Y0, Y2, Y3, Y4)
	VMOVUPS Y3, (DI)

evdone:
	VZEROUPPER
	RET

// func normSumF32(x *float32, n int) float64
// The float64 sum of n values.
TEXT ·normSumF32(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	ZERO64
	CMPQ CX, $16
	JLT  ns8

ns16:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VCVTPS2PD 32(SI), Y2
	VCVTPS2PD 48(SI), Y3
	VADDPD    Y0, Y10, Y10
	VADDPD    Y1, Y11, Y11
	VADDPD    Y2, Y8, Y8
	VADDPD    Y3, Y9, Y9
	ADDQ      $64, SI
	SUBQ      $16, CX
	CMPQ      CX, $16
	JGE       ns16

ns8:
	CMPQ      CX, $8
	JLT       nsdone
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VADDPD    Y0, Y10, Y10
	VADDPD    Y1, Y11, Y11

nsdone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+16(FP)
	RET

// func normSqDevSumF32(x *float32, n int, mean float32, pf int) float64
// The float64 sum of the float32 squares (x[i]−mean)·(x[i]−mean), each
// difference and square rounded to float32, prefetching as
// smaxExpSumF32.
TEXT ·normSqDevSumF32(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS mean+16(FP), Y15
	MOVQ         pf+24(FP), R8
	ZERO64
	CMPQ         CX, $16
	JLT          nq8

nq16:
	PREFETCHT0 (SI)(R8*1)
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  Y15, Y0, Y0
	VSUBPS  Y15, Y1, Y1
	VMULPS  Y0, Y0, Y0
	VMULPS  Y1, Y1, Y1
	ACC64(Y0, X0, Y2, X2, Y10, Y11)
	ACC64(Y1, X1, Y3, X3, Y8, Y9)
	ADDQ    $64, SI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     nq16

nq8:
	CMPQ    CX, $8
	JLT     nqdone
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  Y0, Y0, Y0
	ACC64(Y0, X0, Y2, X2, Y10, Y11)

nqdone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+32(FP)
	RET

// func normDotF32(a, b *float32, n int) float64
// The float64 sum of the float32 products a[i]·b[i].
TEXT ·normDotF32(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+16(FP), CX
	ZERO64
	CMPQ CX, $16
	JLT  nd8

nd16:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMULPS  (DX), Y0, Y0
	VMULPS  32(DX), Y1, Y1
	ACC64(Y0, X0, Y2, X2, Y10, Y11)
	ACC64(Y1, X1, Y3, X3, Y8, Y9)
	ADDQ    $64, SI
	ADDQ    $64, DX
	SUBQ    $16, CX
	CMPQ    CX, $16
	JGE     nd16

nd8:
	CMPQ    CX, $8
	JLT     nddone
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	ACC64(Y0, X0, Y2, X2, Y10, Y11)

nddone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+24(FP)
	RET


// The output passes. Each writes n (a multiple of 8) float32 results to o,
// with VMOVNTPS (non-temporal: o must be 32-byte aligned; an SFENCE ends
// the function) when nt, else VMOVUPS; each rounds as the scalar Go
// expression in its comment does (no fused multiply-adds, except in e^y).

// func smaxScaleF32(o, e *float32, n int, r float32, nt bool)
// o[i] = e[i]·r.
TEXT ·smaxScaleF32(SB), NOSPLIT, $0-29
	MOVQ         o+0(FP), DI
	MOVQ         e+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS r+24(FP), Y15
	MOVBLZX      nt+28(FP), AX
	SHRQ         $3, CX
	JZ           scdone
	TESTQ        AX, AX
	JNZ          scnt

scloop:
	VMULPS  (SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scloop
	JMP     scdone

scnt:
	VMULPS   (SI), Y15, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DI
	DECQ     CX
	JNZ      scnt
	SFENCE

scdone:
	VZEROUPPER
	RET

// func smaxShiftF32(o, x *float32, n int, m, ls float32, nt bool)
// o[i] = (x[i] − m) − ls.
TEXT ·smaxShiftF32(SB), NOSPLIT, $0-33
	MOVQ         o+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	VBROADCASTSS ls+28(FP), Y14
	MOVBLZX      nt+32(FP), AX
	SHRQ         $3, CX
	JZ           shdone
	TESTQ        AX, AX
	JNZ          shnt

shloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	VSUBPS  Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     shloop
	JMP     shdone

shnt:
	VMOVUPS  (SI), Y0
	VSUBPS   Y15, Y0, Y0
	VSUBPS   Y14, Y0, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DI
	DECQ     CX
	JNZ      shnt
	SFENCE

shdone:
	VZEROUPPER
	RET

// func smaxGradF32(o, y, gr *float32, n int, d float32, pf int, nt bool)
// o[i] = y[i]·(g[i] − d), prefetching y and g pf bytes ahead (the next
// row).
TEXT ·smaxGradF32(SB), NOSPLIT, $0-49
	MOVQ         o+0(FP), DI
	MOVQ         y+8(FP), SI
	MOVQ         gr+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS d+32(FP), Y15
	MOVQ         pf+40(FP), R8
	MOVBLZX      nt+48(FP), AX
	SHRQ         $3, CX
	JZ           sgdone
	TESTQ        AX, AX
	JNZ          sgnt

sgloop:
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DX)(R8*1)
	VMOVUPS (DX), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     sgloop
	JMP     sgdone

sgnt:
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DX)(R8*1)
	VMOVUPS  (DX), Y0
	VSUBPS   Y15, Y0, Y0
	VMULPS   (SI), Y0, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	DECQ     CX
	JNZ      sgnt
	SFENCE

sgdone:
	VZEROUPPER
	RET

// func smaxLogGradF32(o, y, gr *float32, n int, s float32, pf int, nt bool)
// o[i] = g[i] − e^y[i]·s, e^y by EXP8, prefetching as smaxGradF32.
TEXT ·smaxLogGradF32(SB), NOSPLIT, $0-49
	MOVQ         o+0(FP), DI
	MOVQ         y+8(FP), SI
	MOVQ         gr+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS s+32(FP), Y15
	MOVQ         pf+40(FP), R8
	MOVBLZX      nt+48(FP), AX
	CLAMPS
	SHRQ         $3, CX
	JZ           lgdone
	TESTQ        AX, AX
	JNZ          lgnt

lgloop:
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DX)(R8*1)
	VMOVUPS (SI), Y0
	EXP8(Y0, Y2, Y3, Y4)
	VMULPS  Y15, Y3, Y3
	VMOVUPS (DX), Y0
	VSUBPS  Y3, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     lgloop
	JMP     lgdone

lgnt:
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DX)(R8*1)
	VMOVUPS  (SI), Y0
	EXP8(Y0, Y2, Y3, Y4)
	VMULPS   Y15, Y3, Y3
	VMOVUPS  (DX), Y0
	VSUBPS   Y3, Y0, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	DECQ     CX
	JNZ      lgnt
	SFENCE

lgdone:
	VZEROUPPER
	RET

// func normApplyF32(o, x, w, b *float32, n int, mean, rstd float32, wstep, bstep int, nt bool)
// o[i] = ((x[i] − mean)·rstd)·w[i] + b[i]; w and b advance by wstep and
// bstep bytes per 8 elements (0: a constant vector of 8).
TEXT ·normApplyF32(SB), NOSPLIT, $0-65
	MOVQ         o+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), R8
	MOVQ         b+24(FP), R9
	MOVQ         n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y15
	VBROADCASTSS rstd+44(FP), Y14
	MOVQ         wstep+48(FP), R10
	MOVQ         bstep+56(FP), R11
	MOVBLZX      nt+64(FP), AX
	SHRQ         $3, CX
	JZ           nadone
	TESTQ        AX, AX
	JNZ          nant

naloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  Y14, Y0, Y0
	VMULPS  (R8), Y0, Y0
	VADDPS  (R9), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    R10, R8
	ADDQ    R11, R9
	ADDQ    $32, DI
	DECQ    CX
	JNZ     naloop
	JMP     nadone

nant:
	VMOVUPS  (SI), Y0
	VSUBPS   Y15, Y0, Y0
	VMULPS   Y14, Y0, Y0
	VMULPS   (R8), Y0, Y0
	VADDPS   (R9), Y0, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     R10, R8
	ADDQ     R11, R9
	ADDQ     $32, DI
	DECQ     CX
	JNZ      nant
	SFENCE

nadone:
	VZEROUPPER
	RET

// func normGradSumsF32(xh, gh, x, gr, w *float32, n int, mean, rstd float32, wstep, pf int) (sa, sb float64)
// xh[i] = (x[i] − mean)·rstd, gh[i] = g[i]·w[i] (w advancing by wstep
// bytes per 8 elements); returns the float64 sums of gh[i] and of the
// float32 products gh[i]·xh[i]. It prefetches g pf bytes ahead (the next
// row).
TEXT ·normGradSumsF32(SB), NOSPLIT, $0-88
	MOVQ         xh+0(FP), DI
	MOVQ         gh+8(FP), BX
	MOVQ         x+16(FP), SI
	MOVQ         gr+24(FP), DX
	MOVQ         w+32(FP), R8
	MOVQ         n+40(FP), CX
	VBROADCASTSS mean+48(FP), Y15
	VBROADCASTSS rstd+52(FP), Y14
	MOVQ         wstep+56(FP), R10
	MOVQ         pf+64(FP), R11
	ZERO64
	SHRQ         $3, CX
	JZ           gsdone

gsloop:
	PREFETCHT0 (DX)(R11*1)
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	VMOVUPS (DX), Y1
	VMULPS  (R8), Y1, Y1
	VMOVUPS Y1, (BX)
	VMULPS  Y1, Y0, Y0
	ACC64(Y1, X1, Y2, X2, Y10, Y11)
	ACC64(Y0, X0, Y3, X3, Y8, Y9)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    R10, R8
	ADDQ    $32, DI
	ADDQ    $32, BX
	DECQ    CX
	JNZ     gsloop

gsdone:
	VADDPD       Y11, Y10, Y10
	VEXTRACTF128 $1, Y10, X11
	VADDPD       X11, X10, X10
	VHADDPD      X10, X10, X10
	VADDPD       Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD       X9, X8, X8
	VHADDPD      X8, X8, X8
	VZEROUPPER
	MOVSD        X10, sa+72(FP)
	MOVSD        X8, sb+80(FP)
	RET

// func normGradApplyF32(o, xh, gh *float32, n int, a, b, rstd float32, nt bool)
// o[i] = ((gh[i] − a) − xh[i]·b)·rstd.
TEXT ·normGradApplyF32(SB), NOSPLIT, $0-45
	MOVQ         o+0(FP), DI
	MOVQ         xh+8(FP), SI
	MOVQ         gh+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS a+32(FP), Y15
	VBROADCASTSS b+36(FP), Y14
	VBROADCASTSS rstd+40(FP), Y13
	MOVBLZX      nt+44(FP), AX
	SHRQ         $3, CX
	JZ           gadone
	TESTQ        AX, AX
	JNZ          gant

galoop:
	VMOVUPS (DX), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  (SI), Y14, Y1
	VSUBPS  Y1, Y0, Y0
	VMULPS  Y13, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     galoop
	JMP     gadone

gant:
	VMOVUPS  (DX), Y0
	VSUBPS   Y15, Y0, Y0
	VMULPS   (SI), Y14, Y1
	VSUBPS   Y1, Y0, Y0
	VMULPS   Y13, Y0, Y0
	VMOVNTPS Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	DECQ     CX
	JNZ      gant
	SFENCE

gadone:
	VZEROUPPER
	RET

// The pipelined row passes: the arithmetic of one row (e^(x−m) and its
// sum) interleaved with the output of the previous row, whose stores then
// drain while the exponentials are computed.

#define ESS16(st) \
	PREFETCHT0 (SI)(R8*1); \
	VMOVUPS    (SI), Y0; \
	VMOVUPS    32(SI), Y1; \
	VSUBPS     Y15, Y0, Y0; \
	VSUBPS     Y15, Y1, Y1; \
	EXP8(Y0, Y2, Y3, Y4); \
	EXP8(Y1, Y5, Y6, Y7); \
	VMOVUPS    Y3, (DI); \
	VMOVUPS    Y6, 32(DI); \
	ACC64(Y3, X3, Y4, X4, Y10, Y11); \
	ACC64(Y6, X6, Y7, X7, Y8, Y9); \
	VMULPS     (DX), Y12, Y0; \
	VMULPS     32(DX), Y12, Y1; \
	st         Y0, (BX); \
	st         Y1, 32(BX); \
	ADDQ       $64, SI; \
	ADDQ       $64, DI; \
	ADDQ       $64, DX; \
	ADDQ       $64, BX

#define ESS8(st) \
	VMOVUPS (SI), Y0; \
	VSUBPS  Y15, Y0, Y0; \
	EXP8(Y0, Y2, Y3, Y4); \
	VMOVUPS Y3, (DI); \
	ACC64(Y3, X3, Y4, X4, Y10, Y11); \
	VMULPS  (DX), Y12, Y0; \
	st      Y0, (BX)

#define ESH16(st) \
	PREFETCHT0   (SI)(R8*1); \
	VMOVUPS      (SI), Y0; \
	VMOVUPS      32(SI), Y1; \
	VSUBPS       Y15, Y0, Y0; \
	VSUBPS       Y15, Y1, Y1; \
	EXP8(Y0, Y2, Y3, Y4); \
	EXP8(Y1, Y5, Y6, Y7); \
	ACC64(Y3, X3, Y4, X4, Y10, Y11); \
	ACC64(Y6, X6, Y7, X7, Y8, Y9); \
	VBROADCASTSS (R9), Y2; \
	VMOVUPS      (DX), Y0; \
	VMOVUPS      32(DX), Y1; \
	VSUBPS       Y12, Y0, Y0; \
	VSUBPS       Y12, Y1, Y1; \
	VSUBPS       Y2, Y0, Y0; \
	VSUBPS       Y2, Y1, Y1; \
	st           Y0, (BX); \
	st           Y1, 32(BX); \
	ADDQ         $64, SI; \
	ADDQ         $64, DX; \
	ADDQ         $64, BX

#define ESH8(st) \
	VMOVUPS      (SI), Y0; \
	VSUBPS       Y15, Y0, Y0; \
	EXP8(Y0, Y2, Y3, Y4); \
	ACC64(Y3, X3, Y4, X4, Y10, Y11); \
	VBROADCASTSS (R9), Y2; \
	VMOVUPS      (DX), Y0; \
	VSUBPS       Y12, Y0, Y0; \
	VSUBPS       Y2, Y0, Y0; \
	st           Y0, (BX)

// func smaxExpSumScaleF32(e, x *float32, n int, m float32, pf int, o, ep *float32, r float32, nt bool) float64
// e[i] = e^(x[i]−m), prefetching as smaxExpSumF32, and o[i] = ep[i]·r
// (the previous row's output); returns the float64 sum of the e[i].
TEXT ·smaxExpSumScaleF32(SB), NOSPLIT, $0-72
	MOVQ         e+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ         pf+32(FP), R8
	MOVQ         o+40(FP), BX
	MOVQ         ep+48(FP), DX
	VBROADCASTSS r+56(FP), Y12
	MOVBLZX      nt+60(FP), AX
	CLAMPS
	ZERO64
	TESTQ        AX, AX
	JNZ          essnt

ess16:
	CMPQ CX, $16
	JLT  ess8
	ESS16(VMOVUPS)
	SUBQ $16, CX
	JMP  ess16

ess8:
	CMPQ CX, $8
	JLT  essdone
	ESS8(VMOVUPS)
	JMP  essdone

essnt:
	CMPQ CX, $16
	JLT  essnt8
	ESS16(VMOVNTPS)
	SUBQ $16, CX
	JMP  essnt

essnt8:
	CMPQ CX, $8
	JLT  essntdone
	ESS8(VMOVNTPS)

essntdone:
	SFENCE

essdone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+64(FP)
	RET

// func smaxExpSumShiftF32(x *float32, n int, m float32, pf int, o, xp *float32, mp, lsp float32, nt bool) float64
// The float64 sum of e^(x[i]−m), prefetching as smaxExpSumF32, with
// o[i] = (xp[i] − mp) − lsp (the previous row's log-softmax).
TEXT ·smaxExpSumShiftF32(SB), NOSPLIT, $0-72
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	MOVQ         pf+24(FP), R8
	MOVQ         o+32(FP), BX
	MOVQ         xp+40(FP), DX
	VBROADCASTSS mp+48(FP), Y12
	LEAQ         lsp+52(FP), R9
	MOVBLZX      nt+56(FP), AX
	CLAMPS
	ZERO64
	TESTQ        AX, AX
	JNZ          eshnt

esh16:
	CMPQ CX, $16
	JLT  esh8
	ESH16(VMOVUPS)
	SUBQ $16, CX
	JMP  esh16

esh8:
	CMPQ CX, $8
	JLT  eshdone
	ESH8(VMOVUPS)
	JMP  eshdone

eshnt:
	CMPQ CX, $16
	JLT  eshnt8
	ESH16(VMOVNTPS)
	SUBQ $16, CX
	JMP  eshnt

eshnt8:
	CMPQ CX, $8
	JLT  eshntdone
	ESH8(VMOVNTPS)

eshntdone:
	SFENCE

eshdone:
	HSUM64
	VZEROUPPER
	MOVSD X10, ret+64(FP)
	RET

DATA smaxLog2e<>+0(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+4(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+8(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+12(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+16(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+20(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+24(SB)/4, $0x3fb8aa3b
DATA smaxLog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL smaxLog2e<>(SB), RODATA|NOPTR, $32

DATA smaxC1<>+0(SB)/4, $0x3f318000
DATA smaxC1<>+4(SB)/4, $0x3f318000
DATA smaxC1<>+8(SB)/4, $0x3f318000
DATA smaxC1<>+12(SB)/4, $0x3f318000
DATA smaxC1<>+16(SB)/4, $0x3f318000
DATA smaxC1<>+20(SB)/4, $0x3f318000
DATA smaxC1<>+24(SB)/4, $0x3f318000
DATA smaxC1<>+28(SB)/4, $0x3f318000
GLOBL smaxC1<>(SB), RODATA|NOPTR, $32

DATA smaxC2<>+0(SB)/4, $0xb95e8083
DATA smaxC2<>+4(SB)/4, $0xb95e8083
DATA smaxC2<>+8(SB)/4, $0xb95e8083
DATA smaxC2<>+12(SB)/4, $0xb95e8083
DATA smaxC2<>+16(SB)/4, $0xb95e8083
DATA smaxC2<>+20(SB)/4, $0xb95e8083
DATA smaxC2<>+24(SB)/4, $0xb95e8083
DATA smaxC2<>+28(SB)/4, $0xb95e8083
GLOBL smaxC2<>(SB), RODATA|NOPTR, $32

DATA smaxP0<>+0(SB)/4, $0x39506967
DATA smaxP0<>+4(SB)/4, $0x39506967
DATA smaxP0<>+8(SB)/4, $0x39506967
DATA smaxP0<>+12(SB)/4, $0x39506967
DATA smaxP0<>+16(SB)/4, $0x39506967
DATA smaxP0<>+20(SB)/4, $0x39506967
DATA smaxP0<>+24(SB)/4, $0x39506967
DATA smaxP0<>+28(SB)/4, $0x39506967
GLOBL smaxP0<>(SB), RODATA|NOPTR, $32

DATA smaxP1<>+0(SB)/4, $0x3ab743ce
DATA smaxP1<>+4(SB)/4, $0x3ab743ce
DATA smaxP1<>+8(SB)/4, $0x3ab743ce
DATA smaxP1<>+12(SB)/4, $0x3ab743ce
DATA smaxP1<>+16(SB)/4, $0x3ab743ce
DATA smaxP1<>+20(SB)/4, $0x3ab743ce
DATA smaxP1<>+24(SB)/4, $0x3ab743ce
DATA smaxP1<>+28(SB)/4, $0x3ab743ce
GLOBL smaxP1<>(SB), RODATA|NOPTR, $32

DATA smaxP2<>+0(SB)/4, $0x3c088908
DATA smaxP2<>+4(SB)/4, $0x3c088908
DATA smaxP2<>+8(SB)/4, $0x3c088908
DATA smaxP2<>+12(SB)/4, $0x3c088908
DATA smaxP2<>+16(SB)/4, $0x3c088908
DATA smaxP2<>+20(SB)/4, $0x3c088908
DATA smaxP2<>+24(SB)/4, $0x3c088908
DATA smaxP2<>+28(SB)/4, $0x3c088908
GLOBL smaxP2<>(SB), RODATA|NOPTR, $32

DATA smaxP3<>+0(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+4(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+8(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+12(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+16(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+20(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+24(SB)/4, $0x3d2aa9c1
DATA smaxP3<>+28(SB)/4, $0x3d2aa9c1
GLOBL smaxP3<>(SB), RODATA|NOPTR, $32

DATA smaxP4<>+0(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+4(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+8(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+12(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+16(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+20(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+24(SB)/4, $0x3e2aaaaa
DATA smaxP4<>+28(SB)/4, $0x3e2aaaaa
GLOBL smaxP4<>(SB), RODATA|NOPTR, $32

DATA smaxP5<>+0(SB)/4, $0x3f000000
DATA smaxP5<>+4(SB)/4, $0x3f000000
DATA smaxP5<>+8(SB)/4, $0x3f000000
DATA smaxP5<>+12(SB)/4, $0x3f000000
DATA smaxP5<>+16(SB)/4, $0x3f000000
DATA smaxP5<>+20(SB)/4, $0x3f000000
DATA smaxP5<>+24(SB)/4, $0x3f000000
DATA smaxP5<>+28(SB)/4, $0x3f000000
GLOBL smaxP5<>(SB), RODATA|NOPTR, $32

DATA smaxOne<>+0(SB)/4, $0x3f800000
DATA smaxOne<>+4(SB)/4, $0x3f800000
DATA smaxOne<>+8(SB)/4, $0x3f800000
DATA smaxOne<>+12(SB)/4, $0x3f800000
DATA smaxOne<>+16(SB)/4, $0x3f800000
DATA smaxOne<>+20(SB)/4, $0x3f800000
DATA smaxOne<>+24(SB)/4, $0x3f800000
DATA smaxOne<>+28(SB)/4, $0x3f800000
GLOBL smaxOne<>(SB), RODATA|NOPTR, $32

DATA smaxBias<>+0(SB)/4, $0x0000007f
DATA smaxBias<>+4(SB)/4, $0x0000007f
DATA smaxBias<>+8(SB)/4, $0x0000007f
DATA smaxBias<>+12(SB)/4, $0x0000007f
DATA smaxBias<>+16(SB)/4, $0x0000007f
DATA smaxBias<>+20(SB)/4, $0x0000007f
DATA smaxBias<>+24(SB)/4, $0x0000007f
DATA smaxBias<>+28(SB)/4, $0x0000007f
GLOBL smaxBias<>(SB), RODATA|NOPTR, $32

DATA smaxHi<>+0(SB)/4, $0x42b20000
DATA smaxHi<>+4(SB)/4, $0x42b20000
DATA smaxHi<>+8(SB)/4, $0x42b20000
DATA smaxHi<>+12(SB)/4, $0x42b20000
DATA smaxHi<>+16(SB)/4, $0x42b20000
DATA smaxHi<>+20(SB)/4, $0x42b20000
DATA smaxHi<>+24(SB)/4, $0x42b20000
DATA smaxHi<>+28(SB)/4, $0x42b20000
GLOBL smaxHi<>(SB), RODATA|NOPTR, $32

DATA smaxLo<>+0(SB)/4, $0xc2dc0000
DATA smaxLo<>+4(SB)/4, $0xc2dc0000
DATA smaxLo<>+8(SB)/4, $0xc2dc0000
DATA smaxLo<>+12(SB)/4, $0xc2dc0000
DATA smaxLo<>+16(SB)/4, $0xc2dc0000
DATA smaxLo<>+20(SB)/4, $0xc2dc0000
DATA smaxLo<>+24(SB)/4, $0xc2dc0000
DATA smaxLo<>+28(SB)/4, $0xc2dc0000
GLOBL smaxLo<>(SB), RODATA|NOPTR, $32

DATA smaxNegInf<>+0(SB)/4, $0xff800000
DATA smaxNegInf<>+4(SB)/4, $0xff800000
DATA smaxNegInf<>+8(SB)/4, $0xff800000
DATA smaxNegInf<>+12(SB)/4, $0xff800000
DATA smaxNegInf<>+16(SB)/4, $0xff800000
DATA smaxNegInf<>+20(SB)/4, $0xff800000
DATA smaxNegInf<>+24(SB)/4, $0xff800000
DATA smaxNegInf<>+28(SB)/4, $0xff800000
GLOBL smaxNegInf<>(SB), RODATA|NOPTR, $32
