// dmath.glsl: double-precision elementary functions, ported from Go's
// package math (itself from FreeBSD's msun and Cephes), because GLSL has
// no double-precision exp, log, sin, ... Every F32, F16 and BF16 value
// is computed here in double and rounded once, as backend/flex does
// (T(math.F(float64(x)))), and F64 values get Go's algorithms. Variables
// marked precise keep the compiler from contracting a*b+c into an FMA
// where the algorithms rely on separately rounded steps.

#ifdef HAVE_F64

const double D_PI = 3.14159265358979323846264338327950288419716939937510582097494459LF;
const double D_LN2 = 0.693147180559945309417232121458176568075500134360255254120680009LF;
const double D_SQRT2 = 1.41421356237309504880168872420969807856967187537694807317667974LF;

double d_inf() { return uint64BitsToDouble(0x7ff0000000000000ul); }
double d_nan() { return uint64BitsToDouble(0x7ff8000000000001ul); }
bool d_signbit(double x) { return (doubleBitsToUint64(x) >> 63) != 0ul; }
double d_copysign(double x, double s) {
	return uint64BitsToDouble((doubleBitsToUint64(x) & 0x7ffffffffffffffful) | (doubleBitsToUint64(s) & 0x8000000000000000ul));
}

// d_frexp splits f into a fraction in [0.5, 1) and a power of two (Go's Frexp).
double d_frexp(double f, out int e) {
	e = 0;
	if (f == 0.0LF || isinf(f) || isnan(f)) {
		return f;
	}
	if (abs(f) < 2.2250738585072014e-308LF) { // subnormal: normalize
		f *= 4503599627370496.0LF;            // 2^52
		e = -52;
	}
	uint64_t x = doubleBitsToUint64(f);
	e += int((x >> 52) & 0x7fful) - 1022;
	x &= ~(0x7fful << 52);
	x |= 1022ul << 52;
	return uint64BitsToDouble(x);
}

// d_ldexp returns frac × 2^e, with Go's Ldexp's handling of overflow,
// underflow and subnormal results.
double d_ldexp(double frac, int e) {
	if (frac == 0.0LF || isinf(frac) || isnan(frac)) {
		return frac;
	}
	int e2;
	frac = d_frexp(frac, e2);
	e += e2;
	uint64_t x = doubleBitsToUint64(frac);
	e += int((x >> 52) & 0x7fful) - 1023;
	if (e < -1075) {
		return d_copysign(0.0LF, frac);
	}
	if (e > 1023) {
		return frac < 0.0LF ? -d_inf() : d_inf();
	}
	double m = 1.0LF;
	if (e < -1022) { // denormal
		e += 53;
		m = 1.1102230246251565e-16LF; // 2^-53
	}
	x &= ~(0x7fful << 52);
	x |= uint64_t(e + 1023) << 52;
	return m * uint64BitsToDouble(x);
}

// d_modf splits f into integer and fractional parts of f's sign.
double d_modf(double f, out double ip) {
	ip = trunc(f);
	double fr = f - ip;
	return isinf(f) ? d_copysign(0.0LF, f) : d_copysign(fr, f);
}

double d_expmulti(double hi, double lo, int k) {
	const double P1 = 1.66666666666666657415e-01LF;
	const double P2 = -2.77777777770155933842e-03LF;
	const double P3 = 6.61375632143793436117e-05LF;
	const double P4 = -1.65339022054652515390e-06LF;
	const double P5 = 4.13813679705723846039e-08LF;
	precise double r = hi - lo;
	precise double t = r * r;
	precise double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
	precise double y = 1.0LF - ((lo - (r * c) / (2.0LF - c)) - hi);
	return d_ldexp(y, k);
}

double d_exp(double x) {
	const double Ln2Hi = 6.93147180369123816490e-01LF;
	const double Ln2Lo = 1.90821492927058770002e-10LF;
	const double Log2e = 1.44269504088896338700e+00LF;
	if (isnan(x)) {
		return x;
	}
	if (x > 7.09782712893383973096e+02LF) {
		return d_inf();
	}
	if (x < -7.45133219101941108420e+02LF) {
		return 0.0LF;
	}
	if (-3.725290298461914e-09LF < x && x < 3.725290298461914e-09LF) {
		return 1.0LF + x;
	}
	int k = 0;
	if (x < 0.0LF) {
		k = int(Log2e * x - 0.5LF);
	} else if (x > 0.0LF) {
		k = int(Log2e * x + 0.5LF);
	}
	precise double hi = x - double(k) * Ln2Hi;
	precise double lo = double(k) * Ln2Lo;
	return d_expmulti(hi, lo, k);
}

double d_log(double x) {
	const double Ln2Hi = 6.93147180369123816490e-01LF;
	const double Ln2Lo = 1.90821492927058770002e-10LF;
	const double L1 = 6.666666666666735130e-01LF;
	const double L2 = 3.999999999940941908e-01LF;
	const double L3 = 2.857142874366239149e-01LF;
	const double L4 = 2.222219843214978396e-01LF;
	const double L5 = 1.818357216161805012e-01LF;
	const double L6 = 1.531383769920937332e-01LF;
	const double L7 = 1.479819860511658591e-01LF;
	if (isnan(x) || (isinf(x) && x > 0.0LF)) {
		return x;
	}
	if (x < 0.0LF) {
		return d_nan();
	}
	if (x == 0.0LF) {
		return -d_inf();
	}
	int ki;
	double f1 = d_frexp(x, ki);
	if (f1 < D_SQRT2 / 2.0LF) {
		f1 *= 2.0LF;
		ki--;
	}
	precise double f = f1 - 1.0LF;
	double k = double(ki);
	precise double s = f / (2.0LF + f);
	precise double s2 = s * s;
	precise double s4 = s2 * s2;
	precise double t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
	precise double t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
	precise double R = t1 + t2;
	precise double hfsq = 0.5LF * f * f;
	precise double res = k * Ln2Hi - ((hfsq - (s * (hfsq + R) + k * Ln2Lo)) - f);
	return res;
}

double d_log1p(double x) {
	const double Sqrt2M1 = 4.142135623730950488017e-01LF;
	const double Sqrt2HalfM1 = -2.928932188134524755992e-01LF;
	const double Small = 1.862645149230957e-09LF; // 2^-29
	const double Tiny = 5.551115123125783e-17LF;  // 2^-54
	const double Two53 = 9007199254740992.0LF;
	const double Ln2Hi = 6.93147180369123816490e-01LF;
	const double Ln2Lo = 1.90821492927058770002e-10LF;
	const double Lp1 = 6.666666666666735130e-01LF;
	const double Lp2 = 3.999999999940941908e-01LF;
	const double Lp3 = 2.857142874366239149e-01LF;
	const double Lp4 = 2.222219843214978396e-01LF;
	const double Lp5 = 1.818357216161805012e-01LF;
	const double Lp6 = 1.531383769920937332e-01LF;
	const double Lp7 = 1.479819860511658591e-01LF;
	if (x < -1.0LF || isnan(x)) {
		return d_nan();
	}
	if (x == -1.0LF) {
		return -d_inf();
	}
	if (isinf(x)) {
		return d_inf();
	}
	double absx = abs(x);
	precise double f = 0.0LF;
	uint64_t iu = 0ul;
	int k = 1;
	if (absx < Sqrt2M1) {
		if (absx < Small) {
			if (absx < Tiny) {
				return x;
			}
			precise double r = x - x * x * 0.5LF;
			return r;
		}
		if (x > Sqrt2HalfM1) {
			k = 0;
			f = x;
			iu = 1ul;
		}
	}
	precise double c = 0.0LF;
	if (k != 0) {
		precise double u;
		if (absx < Two53) {
			u = 1.0LF + x;
			iu = doubleBitsToUint64(u);
			k = int((iu >> 52) - 1023ul);
			if (k > 0) {
				c = 1.0LF - (u - x);
			} else {
				c = x - (u - 1.0LF);
			}
			c /= u;
		} else {
			u = x;
			iu = doubleBitsToUint64(u);
			k = int((iu >> 52) - 1023ul);
			c = 0.0LF;
		}
		iu &= 0x000ffffffffffffful;
		if (iu < 0x0006a09e667f3bcdul) {
			u = uint64BitsToDouble(iu | 0x3ff0000000000000ul);
		} else {
			k++;
			u = uint64BitsToDouble(iu | 0x3fe0000000000000ul);
			iu = (0x0010000000000000ul - iu) >> 2;
		}
		f = u - 1.0LF;
	}
	precise double hfsq = 0.5LF * f * f;
	precise double s, R, z;
	if (iu == 0ul) {
		if (f == 0.0LF) {
			if (k == 0) {
				return 0.0LF;
			}
			c += double(k) * Ln2Lo;
			precise double r0 = double(k) * Ln2Hi + c;
			return r0;
		}
		R = hfsq * (1.0LF - 0.66666666666666666LF * f);
		if (k == 0) {
			precise double r1 = f - R;
			return r1;
		}
		precise double r2 = double(k) * Ln2Hi - ((R - (double(k) * Ln2Lo + c)) - f);
		return r2;
	}
	s = f / (2.0LF + f);
	z = s * s;
	R = z * (Lp1 + z * (Lp2 + z * (Lp3 + z * (Lp4 + z * (Lp5 + z * (Lp6 + z * Lp7))))));
	if (k == 0) {
		precise double r3 = f - (hfsq - s * (hfsq + R));
		return r3;
	}
	precise double r4 = double(k) * Ln2Hi - ((hfsq - (s * (hfsq + R) + (double(k) * Ln2Lo + c))) - f);
	return r4;
}

double d_expm1(double x) {
	const double Othreshold = 7.09782712893383973096e+02LF;
	const double Ln2X56 = 3.88162421113569373274e+01LF;
	const double Ln2HalfX3 = 1.03972077083991796413e+00LF;
	const double Ln2Half = 3.46573590279972654709e-01LF;
	const double Ln2Hi = 6.93147180369123816490e-01LF;
	const double Ln2Lo = 1.90821492927058770002e-10LF;
	const double InvLn2 = 1.44269504088896338700e+00LF;
	const double Tiny = 5.551115123125783e-17LF;
	const double Q1 = -3.33333333333331316428e-02LF;
	const double Q2 = 1.58730158725481460165e-03LF;
	const double Q3 = -7.93650757867487942473e-05LF;
	const double Q4 = 4.00821782732936239552e-06LF;
	const double Q5 = -2.01099218183624371326e-07LF;
	if ((isinf(x) && x > 0.0LF) || isnan(x)) {
		return x;
	}
	if (isinf(x)) {
		return -1.0LF;
	}
	double absx = x;
	bool sgn = false;
	if (x < 0.0LF) {
		absx = -absx;
		sgn = true;
	}
	if (absx >= Ln2X56) {
		if (sgn) {
			return -1.0LF;
		}
		if (absx >= Othreshold) {
			return d_inf();
		}
	}
	precise double c = 0.0LF;
	int k = 0;
	if (absx > Ln2Half) {
		precise double hi, lo;
		if (absx < Ln2HalfX3) {
			if (!sgn) {
				hi = x - Ln2Hi;
				lo = Ln2Lo;
				k = 1;
			} else {
				hi = x + Ln2Hi;
				lo = -Ln2Lo;
				k = -1;
			}
		} else {
			if (!sgn) {
				k = int(InvLn2 * x + 0.5LF);
			} else {
				k = int(InvLn2 * x - 0.5LF);
			}
			double t = double(k);
			hi = x - t * Ln2Hi;
			lo = t * Ln2Lo;
		}
		x = hi - lo;
		c = (hi - x) - lo;
	} else if (absx < Tiny) {
		return x;
	} else {
		k = 0;
	}
	precise double hfx = 0.5LF * x;
	precise double hxs = x * hfx;
	precise double r1 = 1.0LF + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
	precise double t = 3.0LF - r1 * hfx;
	precise double e = hxs * ((r1 - t) / (6.0LF - x * t));
	if (k == 0) {
		precise double r0 = x - (x * e - hxs);
		return r0;
	}
	e = (x * (e - c) - c);
	e -= hxs;
	if (k == -1) {
		precise double r = 0.5LF * (x - e) - 0.5LF;
		return r;
	}
	if (k == 1) {
		if (x < -0.25LF) {
			precise double r = -2.0LF * (e - (x + 0.5LF));
			return r;
		}
		precise double r = 1.0LF + 2.0LF * (x - e);
		return r;
	}
	if (k <= -2 || k > 56) {
		precise double y = 1.0LF - (e - x);
		y = uint64BitsToDouble(doubleBitsToUint64(y) + (uint64_t(int64_t(k)) << 52));
		return y - 1.0LF;
	}
	if (k < 20) {
		double tt = uint64BitsToDouble(0x3ff0000000000000ul - (0x20000000000000ul >> uint(k)));
		precise double y = tt - (e - x);
		y = uint64BitsToDouble(doubleBitsToUint64(y) + (uint64_t(k) << 52));
		return y;
	}
	double tt = uint64BitsToDouble(uint64_t(0x3ff - k) << 52);
	precise double y = x - (e + tt);
	y += 1.0LF;
	y = uint64BitsToDouble(doubleBitsToUint64(y) + (uint64_t(k) << 52));
	return y;
}

// mul64hi returns the high 64 bits of the 128-bit product of a and b,
// and the low 64 bits in lo (Go's bits.Mul64).
uint64_t mul64hi(uint64_t a, uint64_t b, out uint64_t lo) {
	uint a0 = uint(a), a1 = uint(a >> 32), b0 = uint(b), b1 = uint(b >> 32);
	uint h00, l00, h01, l01, h10, l10, h11, l11;
	umulExtended(a0, b0, h00, l00);
	umulExtended(a0, b1, h01, l01);
	umulExtended(a1, b0, h10, l10);
	umulExtended(a1, b1, h11, l11);
	uint64_t mid = uint64_t(h00) + uint64_t(l01) + uint64_t(l10);
	lo = (mid << 32) | uint64_t(l00);
	return (uint64_t(h11) << 32) + uint64_t(l11) + uint64_t(h01) + uint64_t(h10) + (mid >> 32);
}

// d_trig_reduce is Go's trigReduce: Payne-Hanek reduction of x >= 2^29
// by pi/4, returning the octant j and the remainder z.
double d_trig_reduce(double x, out uint j) {
	const uint64_t mPi4[20] = uint64_t[20](
		0x0000000000000001ul, 0x45f306dc9c882a53ul, 0xf84eafa3ea69bb81ul, 0xb6c52b3278872083ul,
		0xfca2c757bd778ac3ul, 0x6e48dc74849ba5c0ul, 0x0c925dd413a32439ul, 0xfc3bd63962534e7dul,
		0xd1046bea5d768909ul, 0xd338e04d68befc82ul, 0x7323ac7306a673e9ul, 0x3908bf177bf25076ul,
		0x3ff12fffbc0b301ful, 0xde5e2316b414da3eul, 0xda6cfd9e4f96136eul, 0x9e8c7ecd3cbfd45aul,
		0xea4f758fd7cbe2f6ul, 0x7a0e73ef14a525d4ul, 0xd7f6bf623f1aba10ul, 0xac06608df8f6d757ul);
	uint64_t ix = doubleBitsToUint64(x);
	int ex = int((ix >> 52) & 0x7fful) - 1023 - 52;
	ix &= ~(0x7fful << 52);
	ix |= 1ul << 52;
	uint digit = uint(ex + 61) / 64u, bitshift = uint(ex + 61) % 64u;
	uint64_t z0, z1, z2;
	if (bitshift == 0u) {
		z0 = mPi4[digit];
		z1 = mPi4[digit + 1u];
		z2 = mPi4[digit + 2u];
	} else {
		z0 = (mPi4[digit] << bitshift) | (mPi4[digit + 1u] >> (64u - bitshift));
		z1 = (mPi4[digit + 1u] << bitshift) | (mPi4[digit + 2u] >> (64u - bitshift));
		z2 = (mPi4[digit + 2u] << bitshift) | (mPi4[digit + 3u] >> (64u - bitshift));
	}
	uint64_t dummy, z1lo;
	uint64_t z2hi = mul64hi(z2, ix, dummy);
	uint64_t z1hi = mul64hi(z1, ix, z1lo);
	uint64_t z0lo = z0 * ix;
	uint64_t lo = z1lo + z2hi;
	uint64_t carry = lo < z1lo ? 1ul : 0ul;
	uint64_t hi = z0lo + z1hi + carry;
	j = uint(hi >> 61);
	hi = (hi << 3) | (lo >> 61);
	if (hi == 0ul) {
		return 0.0LF; // x is a multiple of pi/4 to 125 bits: unreachable for doubles
	}
	uint hh = uint(hi >> 32);
	uint lz = hh != 0u ? uint(31 - findMSB(hh)) : uint(63 - findMSB(uint(hi)));
	uint e = 1023u - (lz + 1u);
	uint sh = lz + 1u; // 1 .. 64; Go's shifts by 64 give 0
	hi = (sh >= 64u ? 0ul : (hi << sh)) | (lo >> (64u - sh));
	hi >>= 12u;
	hi |= uint64_t(e) << 52;
	double z = uint64BitsToDouble(hi);
	if ((j & 1u) == 1u) {
		j++;
		j &= 7u;
		z -= 1.0LF;
	}
	return z * (D_PI / 4.0LF);
}

// d_sincos_reduce maps |x| to an octant j and a remainder z in [-pi/4, pi/4].
double d_sincos_reduce(double x, out uint j) {
	const double PI4A = 7.85398125648498535156e-1LF;
	const double PI4B = 3.77489470793079817668e-8LF;
	const double PI4C = 2.69515142907905952645e-15LF;
	if (x >= 536870912.0LF) {
		return d_trig_reduce(x, j);
	}
	uint64_t jj = uint64_t(x * (4.0LF / D_PI));
	double y = double(jj);
	if ((jj & 1ul) == 1ul) {
		jj++;
		y += 1.0LF;
	}
	j = uint(jj & 7ul);
	precise double z = ((x - y * PI4A) - y * PI4B) - y * PI4C;
	return z;
}

double d_sin_poly(double z, double zz) {
	return z + z * zz * ((((((1.58962301576546568060e-10LF * zz) - 2.50507477628578072866e-8LF) * zz + 2.75573136213857245213e-6LF) * zz - 1.98412698295895385996e-4LF) * zz + 8.33333333332211858878e-3LF) * zz - 1.66666666666666307295e-1LF);
}
double d_cos_poly(double zz) {
	return 1.0LF - 0.5LF * zz + zz * zz * ((((((-1.13585365213876817300e-11LF * zz) + 2.08757008419747316778e-9LF) * zz - 2.75573141792967388112e-7LF) * zz + 2.48015872888517045348e-5LF) * zz - 1.38888888888730564116e-3LF) * zz + 4.16666666666665929218e-2LF);
}

double d_sin(double x) {
	if (x == 0.0LF || isnan(x)) {
		return x;
	}
	if (isinf(x)) {
		return d_nan();
	}
	bool sgn = false;
	if (x < 0.0LF) {
		x = -x;
		sgn = true;
	}
	uint j;
	double z = d_sincos_reduce(x, j);
	if (j > 3u) {
		sgn = !sgn;
		j -= 4u;
	}
	double zz = z * z;
	double y = (j == 1u || j == 2u) ? d_cos_poly(zz) : d_sin_poly(z, zz);
	return sgn ? -y : y;
}

double d_cos(double x) {
	if (isnan(x) || isinf(x)) {
		return d_nan();
	}
	bool sgn = false;
	x = abs(x);
	uint j;
	double z = d_sincos_reduce(x, j);
	if (j > 3u) {
		j -= 4u;
		sgn = !sgn;
	}
	if (j > 1u) {
		sgn = !sgn;
	}
	double zz = z * z;
	double y = (j == 1u || j == 2u) ? d_sin_poly(z, zz) : d_cos_poly(zz);
	return sgn ? -y : y;
}

double d_tanh(double x) {
	double z = abs(x);
	if (z > 0.5LF * 8.8029691931113054295988e+01LF) {
		return x < 0.0LF ? -1.0LF : 1.0LF;
	}
	if (z >= 0.625LF) {
		double s = d_exp(2.0LF * z);
		z = 1.0LF - 2.0LF / (s + 1.0LF);
		return x < 0.0LF ? -z : z;
	}
	if (x == 0.0LF) {
		return x;
	}
	double s = x * x;
	return x + x * s * ((-9.64399179425052238628e-1LF * s - 9.92877231001918586564e1LF) * s - 1.61468768441708447952e3LF) /
		(((s + 1.12811678491632931402e2LF) * s + 2.23548839060100448583e3LF) * s + 4.84406305325125486048e3LF);
}

double d_sigmoid(double x) {
	if (x >= 0.0LF) {
		return 1.0LF / (1.0LF + d_exp(-x));
	}
	double e = d_exp(x);
	return e / (1.0LF + e);
}

double d_erf(double x) {
	const double erx = 8.45062911510467529297e-01LF;
	const double efx = 1.28379167095512586316e-01LF;
	const double efx8 = 1.02703333676410069053e+00LF;
	if (isnan(x)) {
		return d_nan();
	}
	if (isinf(x)) {
		return x > 0.0LF ? 1.0LF : -1.0LF;
	}
	bool sgn = false;
	if (x < 0.0LF) {
		x = -x;
		sgn = true;
	}
	if (x < 0.84375LF) {
		double temp;
		if (x < 3.725290298461914e-09LF) {
			if (x < 2.848094538889218e-306LF) {
				temp = 0.125LF * (8.0LF * x + efx8 * x);
			} else {
				temp = x + efx * x;
			}
		} else {
			double z = x * x;
			double r = 1.28379167095512558561e-01LF + z * (-3.25042107247001499370e-01LF + z * (-2.84817495755985104766e-02LF + z * (-5.77027029648944159157e-03LF + z * -2.37630166566501626084e-05LF)));
			double s = 1.0LF + z * (3.97917223959155352819e-01LF + z * (6.50222499887672944485e-02LF + z * (5.08130628187576562776e-03LF + z * (1.32494738004321644526e-04LF + z * -3.96022827877536812320e-06LF))));
			double y = r / s;
			temp = x + x * y;
		}
		return sgn ? -temp : temp;
	}
	if (x < 1.25LF) {
		double s = x - 1.0LF;
		double Pp = -2.36211856075265944077e-03LF + s * (4.14856118683748331666e-01LF + s * (-3.72207876035701323847e-01LF + s * (3.18346619901161753674e-01LF + s * (-1.10894694282396677476e-01LF + s * (3.54783043256182359371e-02LF + s * -2.16637559486879084300e-03LF)))));
		double Qq = 1.0LF + s * (1.06420880400844228286e-01LF + s * (5.40397917702171048937e-01LF + s * (7.18286544141962662868e-02LF + s * (1.26171219808761642112e-01LF + s * (1.36370839120290507362e-02LF + s * 1.19844998467991074170e-02LF)))));
		return sgn ? -erx - Pp / Qq : erx + Pp / Qq;
	}
	if (x >= 6.0LF) {
		return sgn ? -1.0LF : 1.0LF;
	}
	double s = 1.0LF / (x * x);
	double R, S;
	if (x < 1.0LF / 0.35LF) {
		R = -9.86494403484714822705e-03LF + s * (-6.93858572707181764372e-01LF + s * (-1.05586262253232909814e+01LF + s * (-6.23753324503260060396e+01LF + s * (-1.62396669462573470355e+02LF + s * (-1.84605092906711035994e+02LF + s * (-8.12874355063065934246e+01LF + s * -9.81432934416914548592e+00LF))))));
		S = 1.0LF + s * (1.96512716674392571292e+01LF + s * (1.37657754143519042600e+02LF + s * (4.34565877475229228821e+02LF + s * (6.45387271733267880336e+02LF + s * (4.29008140027567833386e+02LF + s * (1.08635005541779435134e+02LF + s * (6.57024977031928170135e+00LF + s * -6.04244152148580987438e-02LF)))))));
	} else {
		R = -9.86494292470009928597e-03LF + s * (-7.99283237680523006574e-01LF + s * (-1.77579549177547519889e+01LF + s * (-1.60636384855821916062e+02LF + s * (-6.37566443368389627722e+02LF + s * (-1.02509513161107724954e+03LF + s * -4.83519191608651397019e+02LF)))));
		S = 1.0LF + s * (3.03380607434824582924e+01LF + s * (3.25792512996573918826e+02LF + s * (1.53672958608443695994e+03LF + s * (3.19985821950859553908e+03LF + s * (2.55305040643316442583e+03LF + s * (4.74528541206955367215e+02LF + s * -2.24409524465858183362e+01LF))))));
	}
	double z = uint64BitsToDouble(doubleBitsToUint64(x) & 0xffffffff00000000ul);
	precise double a = -z * z - 0.5625LF;
	precise double b = (z - x) * (z + x) + R / S;
	double r = d_exp(a) * d_exp(b);
	return sgn ? r / x - 1.0LF : 1.0LF - r / x;
}

// d_mod is Go's Mod: the exact remainder of x/y with x's sign.
double d_mod(double x, double y) {
	if (y == 0.0LF || isinf(x) || isnan(x) || isnan(y)) {
		return d_nan();
	}
	y = abs(y);
	int yexp;
	double yfr = d_frexp(y, yexp);
	double r = abs(x);
	for (int it = 0; it < 2200 && r >= y; it++) {
		int rexp;
		double rfr = d_frexp(r, rexp);
		if (rfr < yfr) {
			rexp--;
		}
		r = r - d_ldexp(y, rexp - yexp);
	}
	return x < 0.0LF ? -r : r;
}

// d_floordiv is PyTorch's div_floor_floating (flex's floorDiv).
double d_floordiv(double a, double b) {
	if (b == 0.0LF) {
		return a / b;
	}
	double m = d_mod(a, b);
	double div = (a - m) / b;
	if (m != 0.0LF && ((b < 0.0LF) != (m < 0.0LF))) {
		div -= 1.0LF;
	}
	if (div == 0.0LF) {
		return d_copysign(0.0LF, a / b);
	}
	double fl = floor(div);
	if (div - fl > 0.5LF) {
		fl += 1.0LF;
	}
	return fl;
}

// d_pymod is Python's float %: the remainder with the divisor's sign.
double d_pymod(double a, double b) {
	double r = d_mod(a, b);
	if (r != 0.0LF && ((r < 0.0LF) != (b < 0.0LF))) {
		r += b;
	}
	return r;
}

bool d_is_odd_int(double x) {
	if (abs(x) >= 9007199254740992.0LF) {
		return false;
	}
	double xi;
	double xf = d_modf(x, xi);
	return xf == 0.0LF && (int64_t(xi) & 1l) == 1l;
}

// d_pow is Go's Pow, special cases included.
double d_pow(double x, double y) {
	if (y == 0.0LF || x == 1.0LF) {
		return 1.0LF;
	}
	if (y == 1.0LF) {
		return x;
	}
	if (isnan(x) || isnan(y)) {
		return d_nan();
	}
	if (x == 0.0LF) {
		if (y < 0.0LF) {
			return (d_signbit(x) && d_is_odd_int(y)) ? -d_inf() : d_inf();
		}
		if (y > 0.0LF) {
			return (d_signbit(x) && d_is_odd_int(y)) ? x : 0.0LF;
		}
	}
	if (isinf(y)) {
		if (x == -1.0LF) {
			return 1.0LF;
		}
		return ((abs(x) < 1.0LF) == (y > 0.0LF)) ? 0.0LF : d_inf();
	}
	if (isinf(x)) {
		if (x < 0.0LF) {
			// Pow(-Inf, y) = Pow(-0, -y)
			double ny = -y;
			if (ny < 0.0LF) {
				return d_is_odd_int(ny) ? -d_inf() : d_inf();
			}
			return d_is_odd_int(ny) ? -0.0LF : 0.0LF;
		}
		return y < 0.0LF ? 0.0LF : d_inf();
	}
	if (y == 0.5LF) {
		return sqrt(x);
	}
	if (y == -0.5LF) {
		return 1.0LF / sqrt(x);
	}
	double yi;
	double yf = d_modf(abs(y), yi);
	if (yf != 0.0LF && x < 0.0LF) {
		return d_nan();
	}
	if (yi >= 9.223372036854775808e18LF) {
		if (x == -1.0LF) {
			return 1.0LF;
		}
		return ((abs(x) < 1.0LF) == (y > 0.0LF)) ? 0.0LF : d_inf();
	}
	double a1 = 1.0LF;
	int ae = 0;
	if (yf != 0.0LF) {
		if (yf > 0.5LF) {
			yf -= 1.0LF;
			yi += 1.0LF;
		}
		a1 = d_exp(yf * d_log(x));
	}
	int xe;
	double x1 = d_frexp(x, xe);
	for (int64_t i = int64_t(yi); i != 0l; i >>= 1) {
		if (xe < -4096 || 4096 < xe) {
			ae += xe;
			break;
		}
		if ((i & 1l) == 1l) {
			a1 *= x1;
			ae += xe;
		}
		x1 *= x1;
		xe <<= 1;
		if (x1 < 0.5LF) {
			x1 += x1;
			xe--;
		}
	}
	if (y < 0.0LF) {
		a1 = 1.0LF / a1;
		ae = -ae;
	}
	return d_ldexp(a1, ae);
}

double d_xatan(double x) {
	double z = x * x;
	z = z * ((((-8.750608600031904122785e-01LF * z - 1.615753718733365076637e+01LF) * z - 7.500855792314704667340e+01LF) * z - 1.228866684490136173410e+02LF) * z - 6.485021904942025371773e+01LF) /
		(((((z + 2.485846490142306297962e+01LF) * z + 1.650270098316988542046e+02LF) * z + 4.328810604912902668951e+02LF) * z + 4.853903996359136964868e+02LF) * z + 1.945506571482613964425e+02LF);
	return x * z + x;
}

double d_satan(double x) {
	const double Morebits = 6.123233995736765886130e-17LF;
	const double Tan3pio8 = 2.41421356237309504880LF;
	if (x <= 0.66LF) {
		return d_xatan(x);
	}
	if (x > Tan3pio8) {
		return D_PI / 2.0LF - d_xatan(1.0LF / x) + Morebits;
	}
	return D_PI / 4.0LF + d_xatan((x - 1.0LF) / (x + 1.0LF)) + 0.5LF * Morebits;
}

double d_atan(double x) {
	if (x == 0.0LF) {
		return x;
	}
	return x > 0.0LF ? d_satan(x) : -d_satan(-x);
}

double d_atan2(double y, double x) {
	if (isnan(y) || isnan(x)) {
		return d_nan();
	}
	if (y == 0.0LF) {
		if (x >= 0.0LF && !d_signbit(x)) {
			return d_copysign(0.0LF, y);
		}
		return d_copysign(D_PI, y);
	}
	if (x == 0.0LF) {
		return d_copysign(D_PI / 2.0LF, y);
	}
	if (isinf(x)) {
		if (x > 0.0LF) {
			return isinf(y) ? d_copysign(D_PI / 4.0LF, y) : d_copysign(0.0LF, y);
		}
		return isinf(y) ? d_copysign(3.0LF * D_PI / 4.0LF, y) : d_copysign(D_PI, y);
	}
	if (isinf(y)) {
		return d_copysign(D_PI / 2.0LF, y);
	}
	double q = d_atan(y / x);
	if (x < 0.0LF) {
		return q <= 0.0LF ? q + D_PI : q - D_PI;
	}
	return q;
}

#endif // HAVE_F64
