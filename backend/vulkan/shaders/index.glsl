// index.glsl: the element type of the indexing copies (gather,
// index-select), chosen by WBITS; values move bit for bit.
#if WBITS == 64
#define WTYPE uint64_t
#elif WBITS == 32
#define WTYPE uint
#elif WBITS == 16
#define WTYPE uint16_t
#else
#define WTYPE uint8_t
#endif

// clampIndex keeps a device read in bounds: indices were checked by the
// caller, so clamping changes nothing for valid programs.
uint clampIndex(int64_t v, uint size) {
	return v < 0l ? 0u : (v >= int64_t(size) ? size - 1u : uint(v));
}
