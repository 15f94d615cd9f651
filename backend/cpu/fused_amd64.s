#include "textflag.h"

// Float32 loops of the fused programs: n (a multiple of 16) elements,
// 16 per iteration, unaligned loads and stores. Each instruction rounds
// as the scalar Go loops do (IEEE 754, to nearest even).

// func addVSF32(o, a *float32, s float32, n int)
TEXT ·addVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           addvsdone

addvsloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VADDPS  Y2, Y0, Y0
	VADDPS  Y2, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     addvsloop

addvsdone:
	VZEROUPPER
	RET

// func addSVF32(o *float32, s float32, b *float32, n int)
TEXT ·addSVF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	VBROADCASTSS s+8(FP), Y2
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           addsvdone

addsvloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VADDPS  Y0, Y2, Y0
	VADDPS  Y1, Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     addsvloop

addsvdone:
	VZEROUPPER
	RET

// func subVVF32(o, a, b *float32, n int)
TEXT ·subVVF32(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   subvvdone

subvvloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  (DX), Y0, Y0
	VSUBPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     subvvloop

subvvdone:
	VZEROUPPER
	RET

// func subVSF32(o, a *float32, s float32, n int)
TEXT ·subVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           subvsdone

subvsloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  Y2, Y0, Y0
	VSUBPS  Y2, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     subvsloop

subvsdone:
	VZEROUPPER
	RET

// func subSVF32(o *float32, s float32, b *float32, n int)
TEXT ·subSVF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	VBROADCASTSS s+8(FP), Y2
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           subsvdone

subsvloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSUBPS  Y0, Y2, Y0
	VSUBPS  Y1, Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     subsvloop

subsvdone:
	VZEROUPPER
	RET

// func mulVVF32(o, a, b *float32, n int)
TEXT ·mulVVF32(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   mulvvdone

mulvvloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMULPS  (DX), Y0, Y0
	VMULPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     mulvvloop

mulvvdone:
	VZEROUPPER
	RET

// func mulVSF32(o, a *float32, s float32, n int)
TEXT ·mulVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           mulvsdone

mulvsloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMULPS  Y2, Y0, Y0
	VMULPS  Y2, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     mulvsloop

mulvsdone:
	VZEROUPPER
	RET

// func mulSVF32(o *float32, s float32, b *float32, n int)
TEXT ·mulSVF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	VBROADCASTSS s+8(FP), Y2
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           mulsvdone

mulsvloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMULPS  Y0, Y2, Y0
	VMULPS  Y1, Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     mulsvloop

mulsvdone:
	VZEROUPPER
	RET

// func divVVF32(o, a, b *float32, n int)
TEXT ·divVVF32(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   divvvdone

divvvloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VDIVPS  (DX), Y0, Y0
	VDIVPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     divvvloop

divvvdone:
	VZEROUPPER
	RET

// func divVSF32(o, a *float32, s float32, n int)
TEXT ·divVSF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	VBROADCASTSS s+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           divvsdone

divvsloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VDIVPS  Y2, Y0, Y0
	VDIVPS  Y2, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     divvsloop

divvsdone:
	VZEROUPPER
	RET

// func divSVF32(o *float32, s float32, b *float32, n int)
TEXT ·divSVF32(SB), NOSPLIT, $0-32
	MOVQ         o+0(FP), DI
	VBROADCASTSS s+8(FP), Y2
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           divsvdone

divsvloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VDIVPS  Y0, Y2, Y0
	VDIVPS  Y1, Y2, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     divsvloop

divsvdone:
	VZEROUPPER
	RET

// func sqrtF32AVX(o, a *float32, n int)
TEXT ·sqrtF32AVX(SB), NOSPLIT, $0-24
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   sqrtdone

sqrtloop:
	VSQRTPS (SI), Y0
	VSQRTPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     sqrtloop

sqrtdone:
	VZEROUPPER
	RET
