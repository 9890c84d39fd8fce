/*
 * nd/elementwise.h — Elementwise ops: arithmetic, comparisons, math, predicates, bit ops,
 * where and clip. Every one fuses into the generated kernels.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_ELEMENTWISE_H
#define ND_ELEMENTWISE_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Binary ops broadcast and promote as NumPy 2. nd_div is true division (an
 * integer pair gives float64). Comparisons give bool. Integer overflow wraps.
 * Errors: ND_ERR_SHAPE (no broadcast), ND_ERR_DTYPE (e.g. bool for nd_sub). */
ND_API nd_array *nd_add(nd_array *a, nd_array *b);
ND_API nd_array *nd_sub(nd_array *a, nd_array *b);
ND_API nd_array *nd_mul(nd_array *a, nd_array *b);
ND_API nd_array *nd_div(nd_array *a, nd_array *b);
ND_API nd_array *nd_pow(nd_array *a, nd_array *b);
ND_API nd_array *nd_maximum(nd_array *a, nd_array *b); /* NaN propagates */
ND_API nd_array *nd_minimum(nd_array *a, nd_array *b);
ND_API nd_array *nd_eq(nd_array *a, nd_array *b);
ND_API nd_array *nd_ne(nd_array *a, nd_array *b);
ND_API nd_array *nd_lt(nd_array *a, nd_array *b);
ND_API nd_array *nd_le(nd_array *a, nd_array *b);
ND_API nd_array *nd_gt(nd_array *a, nd_array *b);
ND_API nd_array *nd_ge(nd_array *a, nd_array *b);

/* Binary float math (NumPy's names; integer and bool operands give NumPy's
 * float dtype, e.g. int8 -> float16, and take any Python int). arctan2(a,
 * b) is the angle of (b, a); arctan2 and hypot are within 3 ulp on every
 * backend; copysign is exact (the sign of b, a NaN's sign bit too). Errors:
 * ND_ERR_SHAPE (no broadcast), ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_arctan2(nd_array *a, nd_array *b);
ND_API nd_array *nd_hypot(nd_array *a, nd_array *b);
ND_API nd_array *nd_copysign(nd_array *a, nd_array *b);
/* heaviside(x, h0): 0 where x < 0, h0 where x is +-0, 1 where x > 0, NaN
 * where x is NaN (float dtypes as above; exact). */
ND_API nd_array *nd_heaviside(nd_array *a, nd_array *b);
/* fmax/fmin ignore NaN (NaN only where both are; of +0 and -0 the first),
 * integers as nd_maximum/nd_minimum, bool as or/and. */
ND_API nd_array *nd_fmax(nd_array *a, nd_array *b);
ND_API nd_array *nd_fmin(nd_array *a, nd_array *b);

/* Integer division family, NumPy semantics without its warnings and never a
 * trap: nd_floor_divide (//) rounds toward -inf; nd_remainder (%, also
 * nd_mod) takes the sign of the divisor, nd_fmod that of the dividend.
 * Integers: x // 0, x % 0 and fmod(x, 0) are 0, MIN // -1 is MIN, MIN % -1
 * is 0. Floats: NumPy's divmod (x // 0.0 is x / 0.0, x % 0.0 NaN,
 * -0.5 % inf is inf as NumPy). bool computes in int8. Exact on every
 * backend. Errors: ND_ERR_DTYPE (a Python int out of the array's range),
 * ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_floor_divide(nd_array *a, nd_array *b);
ND_API nd_array *nd_remainder(nd_array *a, nd_array *b);
ND_API nd_array *nd_mod(nd_array *a, nd_array *b);
ND_API nd_array *nd_fmod(nd_array *a, nd_array *b);

/* Logical ops of any dtypes (each operand != 0, NaN is true), result bool. */
ND_API nd_array *nd_logical_and(nd_array *a, nd_array *b);
ND_API nd_array *nd_logical_or(nd_array *a, nd_array *b);
ND_API nd_array *nd_logical_xor(nd_array *a, nd_array *b);
/* Bitwise ops of integers in their promoted dtype; of bool they are the
 * logical ops. Errors: ND_ERR_DTYPE (a float operand, or a Python int out of
 * range), ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_bitwise_and(nd_array *a, nd_array *b);
ND_API nd_array *nd_bitwise_or(nd_array *a, nd_array *b);
ND_API nd_array *nd_bitwise_xor(nd_array *a, nd_array *b);

/* nextafter(a, b): the next float after a toward b, in NumPy's float dtype
 * of the operands (integers as for arctan2); float16 steps in float16
 * (nextafter(1, 2) of float16 is 1 + 2^-10). a == b gives b (float16 and
 * bfloat16: a, as NumPy's half loop), NaN gives NaN. Exact on every
 * backend. Errors: ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_nextafter(nd_array *a, nd_array *b);
/* ldexp(a, b) = a * 2^b, exact (rounded once where the result is
 * subnormal), overflowing to +-inf. a's float dtype as NumPy (integers as
 * for arctan2; a Python float gives float64, a Python int float16 as NumPy
 * 2.4); b must be bool or an integer dtype other than uint64, or a Python
 * int that fits int32 (NumPy's int32/int64 loops). Errors: ND_ERR_DTYPE (a
 * float or uint64 exponent, a Python int beyond int32), ND_ERR_SHAPE,
 * ND_ERR_ARG. */
ND_API nd_array *nd_ldexp(nd_array *a, nd_array *b);
/* logaddexp(a, b) = log(exp(a) + exp(b)), logaddexp2 the same in base 2,
 * computed as NumPy (max + log1p(exp(-|a - b|)), no overflow; equal
 * infinities give themselves). Float dtypes as arctan2. Within 4 ulp of
 * max(|result|, 1) on every backend (near a result of 0 the error is
 * absolute, as NumPy's own). Errors: ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_logaddexp(nd_array *a, nd_array *b);
ND_API nd_array *nd_logaddexp2(nd_array *a, nd_array *b);
/* float_power(a, b): a ** b in float64 whatever the real dtypes (NumPy's
 * float_power: a negative real base to a non-integer power is NaN), in
 * complex128 where either operand is complex. Within 4 ulp (CUDA's pow: 2). Errors:
 * ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_float_power(nd_array *a, nd_array *b);
/* Shifts of integers in their promoted dtype (bool shifts as int8), as
 * NumPy 2: a << b wraps; a count b that is negative or at least the bit
 * width gives 0, and for >> of a negative a -1 (NumPy:
 * left_shift(int32 1, 40) is 0, right_shift(int8 -128, 10) is -1); >> of a
 * negative a is arithmetic. Exact, never undefined, on every backend.
 * Errors: ND_ERR_DTYPE (a float operand, or int64 with uint64, which
 * promote to float64; a Python int out of range), ND_ERR_SHAPE,
 * ND_ERR_ARG. */
ND_API nd_array *nd_left_shift(nd_array *a, nd_array *b);
ND_API nd_array *nd_right_shift(nd_array *a, nd_array *b);
/* gcd and lcm of integers in their promoted dtype, as NumPy: of |a| and |b|,
 * gcd(0, 0) = 0, lcm(a, 0) = 0, results non-negative except where |MIN|
 * does not fit the dtype (gcd(MIN, 0) and gcd(MIN, MIN) are MIN) and where
 * lcm overflows (it wraps: lcm(int8 127, 126) is -126). Errors:
 * ND_ERR_DTYPE (bool or float operands), ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_gcd(nd_array *a, nd_array *b);
ND_API nd_array *nd_lcm(nd_array *a, nd_array *b);

/* round(a, decimals): NumPy's np.round, half to even. Floats:
 * rint(a * 10^d) / 10^d (d < 0: rint(a / 10^-d) * 10^-d) in a's dtype, with
 * 10^d as NumPy computes it, so float32 and float16 give NumPy's exact bits
 * (round(float32 1.005, 2) is 1.0); d = 0 is rint. Integers keep their
 * dtype: unchanged for d >= 0, for d < 0 through float64 and cast back as
 * NumPy (round(int8 15, -1) is 20, round(int8 127, -1) wraps to -126). Bool:
 * d = 0 gives float16 (rint), other d are ND_ERR_DTYPE as in NumPy. Errors:
 * ND_ERR_DTYPE, ND_ERR_ARG. */
ND_API nd_array *nd_round(nd_array *a, int decimals);
/* nan_to_num(a) with NumPy's defaults: NaN -> 0, +inf -> the dtype's
 * largest finite value, -inf -> its lowest; integers and bool come back as
 * a copy. nd_nan_to_num_ex takes the three replacements (NumPy's nan,
 * posinf, neginf keywords), each converted to a's dtype (1e300 is inf in
 * float32, as NumPy); pass NAN for posinf or neginf to get that default
 * (NumPy's None). Errors: ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_nan_to_num(nd_array *a);
ND_API nd_array *nd_nan_to_num_ex(nd_array *a, double nan, double posinf, double neginf);

/* isclose(a, b, rtol, atol, equal_nan): NumPy 2's elementwise
 * |a - b| <= atol + rtol * |b| (asymmetric: b is the reference), with b
 * converted to a float first (integers and bool to float64, as NumPy's
 * result_type(b, 1.0)) and the arithmetic in the promoted dtype of a and b;
 * infinities are close only to themselves (same sign); NaN is close to NaN
 * only with equal_nan. NumPy's defaults are rtol = 1e-5, atol = 1e-8.
 * Result bool, one fused elementwise chain. nd_allclose is all of it as a
 * 0-d bool array (a fused reduction; true for empty arrays). Errors:
 * ND_ERR_SHAPE (no broadcast), ND_ERR_ARG. */
ND_API nd_array *nd_isclose(nd_array *a, nd_array *b, double rtol, double atol, bool equal_nan);
ND_API nd_array *nd_allclose(nd_array *a, nd_array *b, double rtol, double atol, bool equal_nan);
/* array_equal(a, b): a 0-d bool array, true where a and b have the same
 * shape and every element compares equal (NaN != NaN); arrays of different
 * shapes give false, not an error (NumPy). Lazy, a fused reduction.
 * Errors: ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_array_equal(nd_array *a, nd_array *b);

/* Unary ops. Transcendentals of integer inputs give floats as NumPy
 * (int8 -> float16, int16 -> float32, int32/int64 -> float64). */
ND_API nd_array *nd_neg(nd_array *a);
ND_API nd_array *nd_abs(nd_array *a);
ND_API nd_array *nd_sqrt(nd_array *a);
ND_API nd_array *nd_exp(nd_array *a);
ND_API nd_array *nd_log(nd_array *a);
ND_API nd_array *nd_sin(nd_array *a);
ND_API nd_array *nd_cos(nd_array *a);
ND_API nd_array *nd_tanh(nd_array *a);
ND_API nd_array *nd_tan(nd_array *a); /* NumPy tan */
ND_API nd_array *nd_floor(nd_array *a);
ND_API nd_array *nd_ceil(nd_array *a);
ND_API nd_array *nd_square(nd_array *a);
ND_API nd_array *nd_logical_not(nd_array *a);

/* Unary float math, NumPy's names and rules: integer and bool inputs give
 * the float dtype of the note above (bool and int8 -> float16), float16 and
 * bfloat16 compute in float32. Out-of-domain inputs give NaN (arcsin(2),
 * arccosh(0.5), log2(-1)) and poles give +-inf (arctanh(1), log1p(-1)), as
 * NumPy without its warnings. Results are within 4 ulp of the correctly
 * rounded value on every backend (the largest documented error of CUDA's and
 * glibc's functions for these); NaN, +-inf and +-0 inputs give exact
 * results. nd_rint rounds half to even and is exact. Errors: ND_ERR_ARG
 * (NULL input). */
ND_API nd_array *nd_arcsin(nd_array *a);
ND_API nd_array *nd_arccos(nd_array *a);
ND_API nd_array *nd_arctan(nd_array *a);
ND_API nd_array *nd_sinh(nd_array *a);
ND_API nd_array *nd_cosh(nd_array *a);
ND_API nd_array *nd_arcsinh(nd_array *a);
ND_API nd_array *nd_arccosh(nd_array *a);
ND_API nd_array *nd_arctanh(nd_array *a);
ND_API nd_array *nd_exp2(nd_array *a);
ND_API nd_array *nd_expm1(nd_array *a);  /* exp(x) - 1, accurate near 0 */
ND_API nd_array *nd_log2(nd_array *a);
ND_API nd_array *nd_log10(nd_array *a);
ND_API nd_array *nd_log1p(nd_array *a);  /* log(1 + x), accurate near 0 */
ND_API nd_array *nd_cbrt(nd_array *a);
ND_API nd_array *nd_rint(nd_array *a);
/* a * (pi / 180) and a * (180 / pi) with NumPy's constant of the compute
 * dtype: one rounded multiply, exact on every backend. */
ND_API nd_array *nd_deg2rad(nd_array *a);
ND_API nd_array *nd_rad2deg(nd_array *a);

/* Unary ops that keep the dtype (exact on every backend):
 * nd_reciprocal: 1/x; of integers NumPy's integer 1/x: 1 and -1 give
 *   themselves, every other value (0 included) gives 0; bool gives int8.
 * nd_trunc: toward zero; integers and bool are returned as they are.
 * nd_sign: -1, 0 or 1 (NaN gives NaN, -0.0 gives +0.0); unsigned: 0 or 1.
 * nd_positive: a copy (+a).
 * Errors: ND_ERR_DTYPE for bool in nd_sign and nd_positive (NumPy has no
 * boolean loop for them), ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_reciprocal(nd_array *a);
ND_API nd_array *nd_trunc(nd_array *a);
ND_API nd_array *nd_sign(nd_array *a);
ND_API nd_array *nd_positive(nd_array *a);

/* Predicates, result bool, every dtype (NumPy's names): integers and bool
 * are finite and never NaN; nd_signbit is the sign bit of a float (of a NaN
 * too, as NumPy: signbit(-nan) is true) and x < 0 of an integer. Exact on
 * every backend. Errors: ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_isnan(nd_array *a);
ND_API nd_array *nd_isinf(nd_array *a);
ND_API nd_array *nd_isfinite(nd_array *a);
ND_API nd_array *nd_signbit(nd_array *a);
ND_API nd_array *nd_isposinf(nd_array *a);
ND_API nd_array *nd_isneginf(nd_array *a);

/* Complex numbers (ND_COMPLEX64, ND_COMPLEX128). These ops take complex
 * arrays, with NumPy's complex loops (common/ops.h and element_fns.h say
 * which formula): nd_add, nd_sub, nd_mul, nd_div (Smith's method, as
 * NumPy), nd_neg, nd_square, nd_reciprocal, nd_abs (a real result:
 * hypot(re, im)), nd_pow (NumPy's npy_cpow: z ** 0 = 1, 0 ** w = 0 for
 * Re w > 0 else NaN + NaNj, integer exponents |n| < 100 by repeated
 * squaring, otherwise exp(w log z) as C's cpow; complex ** real or int
 * promotes first), nd_sign (NumPy 2: z / |z|, 0 for 0), nd_rint (each
 * part), nd_exp, nd_exp2, nd_expm1, nd_log, nd_log2, nd_log10, nd_log1p,
 * nd_sqrt, nd_sin, nd_cos, nd_tan, nd_sinh, nd_cosh, nd_tanh, nd_arcsin,
 * nd_arccos, nd_arctan, nd_arcsinh, nd_arccosh, nd_arctanh (C99's cexp ..
 * catanh: Annex G's branch cuts, signed zeros on the cuts and special
 * values; complex64 computes them in complex128), nd_eq, nd_ne and nd_lt
 * .. nd_ge (lexicographic, NumPy's NaN rule), nd_maximum, nd_minimum,
 * nd_fmax, nd_fmin, nd_isnan, nd_isinf, nd_isfinite, nd_where, the logical
 * ops (nonzero when either part is), nd_astype both ways (to a real dtype
 * drops the imaginary part as NumPy does, without its warning; to bool:
 * either part nonzero), and the functions below. The reductions, scans and
 * products that take complex arrays say so in reductions.h, scans.h and
 * linalg.h.
 * Ops NumPy refuses for complex (floor, ceil, trunc, signbit, isposinf,
 * floor_divide, remainder, fmod, arctan2, hypot, copysign, bitwise, ...)
 * fail with ND_ERR_DTYPE at record time; nd_round and nd_nan_to_num of a
 * complex array (NumPy has them) fail with ND_ERR_UNSUPPORTED.
 *
 * nd_conj/nd_conjugate: the complex conjugate; of a real array its values
 * (NumPy), ND_ERR_DTYPE for bool. nd_real/nd_imag: the real and imaginary
 * parts (float32 of complex64, float64 of complex128) as views, as NumPy's
 * z.real and z.imag: they share z's memory (strides twice z's in their own
 * elements, the imaginary part one element further, which nd_strides,
 * nd_data and DLPack export report), so a write through them or through
 * any view of them (nd_assign, nd_fill, nd_index_assign, nd_put_along_axis,
 * nd_add_at, nd_mask_assign, an in-place user-kernel output, nd_data
 * read-write) changes z and is ordered like any write into z: reads of z
 * recorded before it see the old values, reads recorded after it the new.
 * Reading them costs no copy (they fuse into their consumers). Of a real
 * array: nd_real is a view of the array itself, nd_imag a new array of
 * zeros that is read-only (NumPy's is too; a write is ND_ERR_ARG); of a
 * weak scalar (nd_scalar) they are values. nd_angle: atan2(imag, real) in
 * radians (of a real array 0, or pi for negative values, NaN for NaN). */
ND_API nd_array *nd_conj(nd_array *a);
ND_API nd_array *nd_conjugate(nd_array *a);
ND_API nd_array *nd_real(nd_array *a);
ND_API nd_array *nd_imag(nd_array *a);
ND_API nd_array *nd_angle(nd_array *a);

/* Bitwise not (~a) of an integer array, keeping its dtype; of bool it is
 * logical not (NumPy). nd_bitwise_not is the same function under NumPy's
 * other name. Errors: ND_ERR_DTYPE (float input), ND_ERR_ARG (NULL). */
ND_API nd_array *nd_invert(nd_array *a);
ND_API nd_array *nd_bitwise_not(nd_array *a);

/* where(cond, a, b): cond is read as bool; the result promotes a and b. A
 * Python-int scalar that does not fit the other operand's integer dtype is
 * ND_ERR_DTYPE (NumPy 2 would wrap it: np.where(c, uint8_array, -1) gives
 * 255). */
ND_API nd_array *nd_where(nd_array *cond, nd_array *a, nd_array *b);
/* clip(a, lo, hi) = minimum(maximum(a, lo), hi). As NumPy 2, a Python-int
 * bound beyond an integer a's range on its own side cannot bind and is left
 * out (clip(uint8, -1, 300) is a copy of a); lo above a's maximum or hi
 * below its minimum is ND_ERR_DTYPE. */
ND_API nd_array *nd_clip(nd_array *a, nd_array *lo, nd_array *hi);

#ifdef __cplusplus
}
#endif
#endif /* ND_ELEMENTWISE_H */
