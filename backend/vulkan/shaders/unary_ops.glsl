// unary_ops.glsl: the unary primitives (ir.UnaryOp codes) on CTYPE,
// with backend/flex's semantics: float functions are computed in double
// and rounded once (exactly for F64's own precision), integer Neg wraps,
// Sign gives +0 for ±0 and NaN, rounding ops are the identity on
// integers, Not is logical on Bool and bitwise on integers.

#if IS_FLOAT
CTYPE un_apply(uint op, CTYPE x) {
	double d = double(x);
	switch (op) {
	case 1u: return -x;
	case 2u: return abs(x);
	// Sign through an integer: drivers fold the select chain into an
	// fsign that keeps the sign of zero.
	case 3u: return CTYPE(int(x > CTYPE(0)) - int(x < CTYPE(0)));
	case 4u: return CTYPE(d_exp(d));
	case 5u: return CTYPE(d_log(d));
	case 6u: return CTYPE(d_log1p(d));
	case 7u: return CTYPE(d_expm1(d));
	case 8u: return CTYPE(sqrt(d));
	case 9u: return CTYPE(1.0LF / sqrt(d));
	case 10u: return CTYPE(1.0LF / d);
	case 11u: return CTYPE(d_sin(d));
	case 12u: return CTYPE(d_cos(d));
	case 13u: return CTYPE(d_tanh(d));
	case 14u: return CTYPE(d_sigmoid(d));
	case 15u: return CTYPE(d_erf(d));
	case 16u: return floor(x);
	case 17u: return ceil(x);
	case 18u: return roundEven(x);
	case 19u: return x == CTYPE(0) ? CTYPE(1) : CTYPE(0);
	}
	return x;
}
#elif IS_INT
CTYPE un_apply(uint op, CTYPE x) {
	switch (op) {
	case 1u: return CTYPE(0) - x;
	case 2u:
#if IS_SIGNED
		return x < CTYPE(0) ? CTYPE(0) - x : x;
#else
		return x;
#endif
	case 3u:
#if IS_SIGNED
		return x > CTYPE(0) ? CTYPE(1) : (x < CTYPE(0) ? CTYPE(0) - CTYPE(1) : CTYPE(0));
#else
		return x > CTYPE(0) ? CTYPE(1) : CTYPE(0);
#endif
	case 19u: return ~x;
	}
	return x;
}
#else
CTYPE un_apply(uint op, CTYPE x) {
	if (op == 19u) {
		return x != 0u ? 0u : 1u;
	}
	return x;
}
#endif
