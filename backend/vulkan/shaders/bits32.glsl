// bits32.glsl: conversions between a 4-byte dtype's values and raw bits,
// for the 16-byte vector loads of the elementwise fast path.
#if DT_BITS == 32
#if defined(DT_F32)
#define FROM_BITS(u) uintBitsToFloat(u)
#define TO_BITS(v) floatBitsToUint(v)
#elif defined(DT_I32)
#define FROM_BITS(u) int(u)
#define TO_BITS(v) uint(v)
#else
#define FROM_BITS(u) (u)
#define TO_BITS(v) (v)
#endif
#endif
