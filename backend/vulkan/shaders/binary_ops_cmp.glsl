// binary_ops_cmp.glsl: the comparison primitives.

// cmp_apply is the comparison op (codes 12-17) as 0 or 1; NaN compares
// unequal to everything (IEEE 754).
uint cmp_apply(uint op, CTYPE a, CTYPE b) {
	switch (op) {
	case 12u: return a == b ? 1u : 0u;
	case 13u: return a != b ? 1u : 0u;
	case 14u: return a < b ? 1u : 0u;
	case 15u: return a <= b ? 1u : 0u;
	case 16u: return a > b ? 1u : 0u;
	case 17u: return a >= b ? 1u : 0u;
	}
	return 0u;
}
