// dtype.glsl: the element type of a shader variant, chosen by one of the
// DT_* macros the generator defines. It declares
//
//   STYPE     the storage type of a buffer element
//   CTYPE     the type arithmetic runs in (float for F32, F16 and BF16,
//             32-bit integers for the 8- and 16-bit integer dtypes)
//   UTYPE     the unsigned type of CTYPE's width (integers)
//   LD(x)     STYPE -> CTYPE;  ST(x) CTYPE -> STYPE (rounding to nearest
//             even for F16/BF16, wrapping for narrow integers)
//   DT_BITS   the storage width in bits
//   IS_FLOAT, IS_HALF, IS_INT, IS_SIGNED, IS_BOOL, IS_WIDE (64-bit CTYPE)

#if defined(DT_F64)
#define STYPE double
#define CTYPE double
#define LD(x) (x)
#define ST(x) (x)
#define IS_FLOAT 1
#define IS_SIGNED 1
#define IS_WIDE 1
#define DT_BITS 64
#elif defined(DT_F32)
#define STYPE float
#define CTYPE float
#define LD(x) (x)
#define ST(x) (x)
#define IS_FLOAT 1
#define IS_SIGNED 1
#define DT_BITS 32
#elif defined(DT_F16)
#define STYPE uint16_t
#define CTYPE float
#define LD(x) f16_to_f32(uint(x))
#define ST(x) uint16_t(f32_to_f16(x))
#define IS_FLOAT 1
#define IS_HALF 1
#define IS_SIGNED 1
#define DT_BITS 16
#elif defined(DT_BF16)
#define STYPE uint16_t
#define CTYPE float
#define LD(x) bf16_to_f32(uint(x))
#define ST(x) uint16_t(f32_to_bf16(x))
#define IS_FLOAT 1
#define IS_HALF 1
#define IS_SIGNED 1
#define DT_BITS 16
#elif defined(DT_I64)
#define STYPE int64_t
#define CTYPE int64_t
#define UTYPE uint64_t
#define LD(x) (x)
#define ST(x) (x)
#define IS_INT 1
#define IS_SIGNED 1
#define IS_WIDE 1
#define DT_BITS 64
#elif defined(DT_I32)
#define STYPE int
#define CTYPE int
#define UTYPE uint
#define LD(x) (x)
#define ST(x) (x)
#define IS_INT 1
#define IS_SIGNED 1
#define DT_BITS 32
#elif defined(DT_I16)
#define STYPE int16_t
#define CTYPE int
#define UTYPE uint
#define LD(x) int(x)
#define ST(x) int16_t(x)
#define IS_INT 1
#define IS_SIGNED 1
#define DT_BITS 16
#elif defined(DT_I8)
#define STYPE int8_t
#define CTYPE int
#define UTYPE uint
#define LD(x) int(x)
#define ST(x) int8_t(x)
#define IS_INT 1
#define IS_SIGNED 1
#define DT_BITS 8
#elif defined(DT_U64)
#define STYPE uint64_t
#define CTYPE uint64_t
#define UTYPE uint64_t
#define LD(x) (x)
#define ST(x) (x)
#define IS_INT 1
#define IS_WIDE 1
#define DT_BITS 64
#elif defined(DT_U32)
#define STYPE uint
#define CTYPE uint
#define UTYPE uint
#define LD(x) (x)
#define ST(x) (x)
#define IS_INT 1
#define DT_BITS 32
#elif defined(DT_U16)
#define STYPE uint16_t
#define CTYPE uint
#define UTYPE uint
#define LD(x) uint(x)
#define ST(x) uint16_t(x)
#define IS_INT 1
#define DT_BITS 16
#elif defined(DT_U8)
#define STYPE uint8_t
#define CTYPE uint
#define UTYPE uint
#define LD(x) uint(x)
#define ST(x) uint8_t(x)
#define IS_INT 1
#define DT_BITS 8
#elif defined(DT_BOOL)
#define STYPE uint8_t
#define CTYPE uint
#define UTYPE uint
#define LD(x) uint(x)
#define ST(x) uint8_t(x)
#define IS_BOOL 1
#define DT_BITS 8
#else
#error "no DT_* dtype macro defined"
#endif

// The raw storage word of the same width, for bit copies.
#if DT_BITS == 64
#define RTYPE uint64_t
#elif DT_BITS == 32
#define RTYPE uint
#elif DT_BITS == 16
#define RTYPE uint16_t
#else
#define RTYPE uint8_t
#endif
