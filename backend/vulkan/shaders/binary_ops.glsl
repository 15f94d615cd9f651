// binary_ops.glsl: the arithmetic binary primitives (ir.BinaryOp codes
// 1-11 and 18-22) on CTYPE with backend/flex's semantics. Float Add, Sub
// and Mul run in CTYPE; Div in double and rounded once (exact quotients
// stay exact on every driver); FloorDiv, Rem, Mod, Pow and Atan2 in
// double (Go's algorithms); Max and Min propagate NaN and order -0 below
// +0 (Go's max and min). Integers wrap; Div truncates, FloorDiv floors,
// Rem takes the dividend's sign and Mod the divisor's, MIN / -1 wraps to
// MIN (Go); shifts outside [0, bits) give 0 (Shl) or the sign fill (Shr).
// On Bool, Max is Or and Min is And. Integer division by zero never
// reaches the device (the caller rejects it).

#if IS_FLOAT
CTYPE max_nan(CTYPE a, CTYPE b) {
	if (isnan(a)) return a;
	if (isnan(b)) return b;
	if (a > b) return a;
	if (b > a) return b;
	if (a == CTYPE(0)) return (CTYPE(1) / a) < CTYPE(0) ? b : a;
	return a;
}
CTYPE min_nan(CTYPE a, CTYPE b) {
	if (isnan(a)) return a;
	if (isnan(b)) return b;
	if (a < b) return a;
	if (b < a) return b;
	if (a == CTYPE(0)) return (CTYPE(1) / a) < CTYPE(0) ? a : b;
	return a;
}
CTYPE bin_apply(uint op, CTYPE a, CTYPE b) {
	switch (op) {
	case 1u: return a + b;
	case 2u: return a - b;
	case 3u: return a * b;
	case 4u: return CTYPE(double(a) / double(b));
	case 5u: return CTYPE(d_floordiv(double(a), double(b)));
	case 6u: return CTYPE(d_mod(double(a), double(b)));
	case 7u: return CTYPE(d_pymod(double(a), double(b)));
	case 8u: return CTYPE(d_pow(double(a), double(b)));
	case 9u: return max_nan(a, b);
	case 10u: return min_nan(a, b);
	case 11u: return CTYPE(d_atan2(double(a), double(b)));
	}
	return a;
}
#elif IS_INT
// idiv truncates toward zero through the magnitudes (no signed overflow).
CTYPE idiv(CTYPE a, CTYPE b) {
#if IS_SIGNED
	UTYPE ua = a < CTYPE(0) ? UTYPE(0) - UTYPE(a) : UTYPE(a);
	UTYPE ub = b < CTYPE(0) ? UTYPE(0) - UTYPE(b) : UTYPE(b);
	UTYPE q = ua / ub;
	return ((a < CTYPE(0)) != (b < CTYPE(0))) ? CTYPE(UTYPE(0) - q) : CTYPE(q);
#else
	return a / b;
#endif
}
CTYPE ipow(CTYPE a, CTYPE b) {
#if IS_SIGNED
	if (b < CTYPE(0)) {
		if (a == CTYPE(1)) return CTYPE(1);
		if (a == CTYPE(0) - CTYPE(1)) return (b & CTYPE(1)) != CTYPE(0) ? a : CTYPE(1);
		return CTYPE(0);
	}
#endif
	CTYPE r = CTYPE(1);
	CTYPE x = a;
	UTYPE e = UTYPE(b);
	while (e > UTYPE(0)) {
		if ((e & UTYPE(1)) != UTYPE(0)) r = r * x;
		x = x * x;
		e >>= 1;
	}
	return r;
}
CTYPE bin_apply(uint op, CTYPE a, CTYPE b) {
	const CTYPE bits = CTYPE(DT_BITS);
	switch (op) {
	case 1u: return a + b;
	case 2u: return a - b;
	case 3u: return a * b;
	case 4u: return idiv(a, b);
	case 5u: {
		CTYPE q = idiv(a, b);
		CTYPE r = a - q * b;
		if (r != CTYPE(0) && ((r < CTYPE(0)) != (b < CTYPE(0)))) q = q - CTYPE(1);
		return q;
	}
	case 6u: return a - idiv(a, b) * b;
	case 7u: {
		CTYPE r = a - idiv(a, b) * b;
		if (r != CTYPE(0) && ((r < CTYPE(0)) != (b < CTYPE(0)))) r = r + b;
		return r;
	}
	case 8u: return ipow(a, b);
	case 9u: return a > b ? a : b;
	case 10u: return a < b ? a : b;
	case 18u: return a & b;
	case 19u: return a | b;
	case 20u: return a ^ b;
	case 21u:
		if (b < CTYPE(0) || b >= bits) return CTYPE(0);
		return a << b;
	case 22u:
		if (b < CTYPE(0) || b >= bits) return a < CTYPE(0) ? CTYPE(0) - CTYPE(1) : CTYPE(0);
		return a >> b;
	}
	return a;
}
#else
CTYPE bin_apply(uint op, CTYPE a, CTYPE b) {
	switch (op) {
	case 1u: case 9u: case 19u: return a | b;
	case 3u: case 10u: case 18u: return a & b;
	case 2u: case 20u: return a ^ b;
	case 4u: case 5u: case 11u: return a;
	case 6u: case 7u: return 0u;
	case 8u: return (a != 0u || b == 0u) ? 1u : 0u;
	}
	return a;
}
#endif

