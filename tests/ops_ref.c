/* The reference of the cross-backend op test (test_ops.c): which dtypes
 * each elementwise op of common/ops.h takes, its tolerance, and its result
 * for one element, written here from NumPy 2's definitions independently
 * of the library (exact integer math in 64 bits, the float ops in double or
 * long double, NumPy's own algorithms where it defines one, e.g. divmod). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ops_ref.h"
#include "ref.h"

#include <complex.h>
#include <float.h>

/* A new op needs its reference and its dtypes here (op_takes, op_result,
 * ulp_bound, ref_elem); the switches below have no default, so -Wswitch
 * names the place. */
_Static_assert(ND_NUM_ELEMENTWISE_OPS == 86, "tests/ops_ref.c: add the new op's reference");

static int is_c(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_COMPLEX128; }
static int complex_takes(nd_op op);
static void complex_elem(nd_op op, nd_dtype t, ref_arr *const in[3], int64_t i, ref_arr *out);

/* The unary float math of NumPy's ufuncs beyond exp/log/sin/cos/tanh/tan:
 * float-only operands, libm references in long double. */
#define FLOAT_MATH_CASES                                                             \
    case ND_OP_ARCSIN: case ND_OP_ARCCOS: case ND_OP_ARCTAN: case ND_OP_SINH:        \
    case ND_OP_COSH: case ND_OP_ARCSINH: case ND_OP_ARCCOSH: case ND_OP_ARCTANH:     \
    case ND_OP_EXP2: case ND_OP_EXPM1: case ND_OP_LOG2: case ND_OP_LOG10:            \
    case ND_OP_LOG1P: case ND_OP_CBRT

/* Predicates: one operand of any dtype, result bool. */
#define PRED_CASES                                                                   \
    case ND_OP_ISNAN: case ND_OP_ISINF: case ND_OP_ISFINITE: case ND_OP_SIGNBIT:     \
    case ND_OP_ISPOSINF: case ND_OP_ISNEGINF

/* Binary ops with an integer meaning (every dtype, bool in
 * int8). */
#define NUM_BIN_CASES                                                                \
    case ND_OP_FMAX: case ND_OP_FMIN: case ND_OP_FLOOR_DIVIDE: case ND_OP_REMAINDER: \
    case ND_OP_FMOD
#define BITWISE_CASES case ND_OP_BITWISE_AND: case ND_OP_BITWISE_OR: case ND_OP_BITWISE_XOR
/* Integer-only binary ops beyond the bitwise ones (no bool loops). */
#define SHIFT_GCD_CASES                                                              \
    case ND_OP_LEFT_SHIFT: case ND_OP_RIGHT_SHIFT: case ND_OP_GCD: case ND_OP_LCM
#define NEXTAFTER_CASES case ND_OP_NEXTAFTER: case ND_OP_NEXTAFTER_F16: case ND_OP_NEXTAFTER_BF16


/* ------------------------------------------------------------ the ops */


/* Which dtypes the op's IR instruction takes as operands. Ops with an
 * integer meaning take every dtype (bool computes in int8, as NumPy's bool
 * loops do); transcendental ones are IR over float dtypes only (the
 * frontend converts integers to a float dtype first). */
int op_takes(nd_op op, nd_dtype t) {
    if (is_c(t)) return complex_takes(op);
    switch (op) {
    case ND_OP_CAST: case ND_OP_NEG: case ND_OP_ABS: case ND_OP_FLOOR: case ND_OP_CEIL:
    case ND_OP_SQUARE: case ND_OP_ADD: case ND_OP_SUB: case ND_OP_MUL: case ND_OP_DIV:
    case ND_OP_POW: case ND_OP_MAX: case ND_OP_MIN: case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT:
    case ND_OP_LE: case ND_OP_GT: case ND_OP_GE: case ND_OP_WHERE: case ND_OP_RECIPROCAL:
    case ND_OP_TRUNC: case ND_OP_SIGN:
    PRED_CASES:
        return 1;
    NUM_BIN_CASES:
        return 1;
    case ND_OP_INVERT: /* integers; the frontend maps bool to logical_not */
    BITWISE_CASES:
    SHIFT_GCD_CASES:
        return !is_f(t) && t != ND_BOOL;
    /* each nextafter row steps in its own format (common/ops.h) */
    case ND_OP_NEXTAFTER: return t == ND_FLOAT32 || t == ND_FLOAT64;
    case ND_OP_NEXTAFTER_F16: return t == ND_FLOAT16;
    case ND_OP_NEXTAFTER_BF16: return t == ND_BFLOAT16;
    case ND_OP_LDEXP: case ND_OP_LOGADDEXP: case ND_OP_LOGADDEXP2:
        return is_f(t);
    case ND_OP_ARCTAN2: case ND_OP_HYPOT: case ND_OP_COPYSIGN: case ND_OP_DEG2RAD:
    case ND_OP_RAD2DEG: case ND_OP_HEAVISIDE:
        return is_f(t);
    case ND_OP_LOGICAL_XOR:
        return t == ND_BOOL;
    case ND_OP_SQRT: case ND_OP_EXP: case ND_OP_LOG: case ND_OP_SIN: case ND_OP_COS:
    case ND_OP_TANH: case ND_OP_TAN: case ND_OP_RINT:
    FLOAT_MATH_CASES:
        return is_f(t);
    case ND_OP_LOGICAL_NOT: case ND_OP_LOGICAL_AND: case ND_OP_LOGICAL_OR:
        return t == ND_BOOL;
    /* complex only (the frontend gives real inputs their identities) */
    case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE: case ND_OP_MAKE_COMPLEX:
        return 0;
    }
    return 0;
}

static int op_is_cmp(nd_op op) {
    switch (op) {
    case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE:
    PRED_CASES:
        return 1;
    default:
        return 0;
    }
}

nd_dtype op_result(nd_op op, nd_dtype t) {
    if (op == ND_OP_REAL || op == ND_OP_IMAG || op == ND_OP_CABS || op == ND_OP_ANGLE)
        return t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    return op_is_cmp(op) ? ND_BOOL : t;
}

/* Allowed distance from the correctly rounded result, in ulps of the
 * result dtype; 0 = bits. float32/float64 transcendentals: the CPU's
 * vectorised loops (SLEEF's u10, cpu_sleef.c) stay within 1 ulp, CUDA's documented
 * maxima are 2 ulp (expf, sinf, cosf, tanhf, sin, cos) or less; float pow:
 * CUDA documents 4 ulp for powf and 2 for pow. float16/bfloat16 compute in
 * float32 and round once, which can land one ulp of the short dtype away. */
int ulp_bound(nd_op op, nd_dtype t) {
    if (!is_f(t)) return 0;
    int short_float = t == ND_FLOAT16 || t == ND_BFLOAT16;
    switch (op) {
    case ND_OP_EXP: case ND_OP_LOG: case ND_OP_SIN: case ND_OP_COS: case ND_OP_TANH:
        return short_float ? 1 : 2;
    case ND_OP_POW:
    case ND_OP_TAN: /* CUDA: tanf 4 ulp, tan 2 ulp; the CPU uses libm (< 1) */
        return short_float ? 1 : t == ND_FLOAT32 ? 4 : 2;
    /* common/ops.h: CUDA documents up to 4 ulp (acoshf; 1 to 3 for the
     * others), glibc's libm-test-ulps up to 4 (cbrt of double) */
    FLOAT_MATH_CASES:
        return short_float ? 1 : 4;
    /* CUDA documents 3 ulp for atan2f and hypotf, 2 for atan2 and hypot */
    case ND_OP_ARCTAN2: case ND_OP_HYPOT: case ND_OP_CABS: case ND_OP_ANGLE:
        return short_float ? 1 : 3;
    /* in ulps of max(|result|, 1) (ulp_floor): CUDA's expf/exp2f (2) and
     * log1pf (1) inside the log1p term, which cancels against a negative
     * max near -ln 2 */
    case ND_OP_LOGADDEXP: case ND_OP_LOGADDEXP2:
        return short_float ? 1 : 4;
    NEXTAFTER_CASES:
    case ND_OP_LDEXP:
    SHIFT_GCD_CASES:
        return 0;
    case ND_OP_RINT: case ND_OP_RECIPROCAL: case ND_OP_TRUNC: case ND_OP_SIGN: case ND_OP_INVERT:
    case ND_OP_COPYSIGN: case ND_OP_LOGICAL_XOR: case ND_OP_DEG2RAD: case ND_OP_RAD2DEG:
    case ND_OP_HEAVISIDE:
    NUM_BIN_CASES:
    BITWISE_CASES:
    PRED_CASES:
    case ND_OP_CAST: case ND_OP_NEG: case ND_OP_ABS: case ND_OP_SQRT: case ND_OP_FLOOR:
    case ND_OP_CEIL: case ND_OP_SQUARE: case ND_OP_LOGICAL_NOT: case ND_OP_ADD: case ND_OP_SUB:
    case ND_OP_MUL: case ND_OP_DIV: case ND_OP_MAX: case ND_OP_MIN: case ND_OP_EQ: case ND_OP_NE:
    case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE: case ND_OP_LOGICAL_AND:
    case ND_OP_LOGICAL_OR: case ND_OP_WHERE: case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG:
    case ND_OP_MAKE_COMPLEX:
        return 0;
    }
    return 0;
}

double ulp_floor(nd_op op) {
    return op == ND_OP_LOGADDEXP || op == ND_OP_LOGADDEXP2 ? 1.0 : 0.0;
}

/* ------------------------------------------------------- the reference */

int bits_of(nd_dtype t) { return 8 * (int)ref_itemsize(t); }

/* Two's complement value of an integer element (bool: 0/1). */
int64_t sval(const ref_arr *a, int64_t i) { return (int64_t)ref_getu(a, i); }
uint64_t uval(const ref_arr *a, int64_t i) {
    uint64_t u = ref_getu(a, i);
    int b = bits_of(a->dt);
    return b == 64 ? u : u & ((1ull << b) - 1);
}

/* NumPy's floor_divide on integers (without its warnings): x // 0 is 0 and
 * MIN // -1 wraps to MIN. */
static uint64_t floor_div_s(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return 0 - (uint64_t)x;
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0))) q--;
    return (uint64_t)q;
}

/* Integer power, wrapping: left-to-right binary exponentiation modulo 2^64
 * (the library squares right to left; the results agree). A negative
 * exponent gives 0 unless the base is 1 or -1 (NumPy raises instead; nd's
 * documented choice, common/ops.h). */
static uint64_t int_pow(uint64_t x, uint64_t e, int neg_exp) {
    if (neg_exp) return x == 1 ? 1 : x == (uint64_t)-1 ? ((e & 1) ? (uint64_t)-1 : 1) : 0;
    uint64_t r = 1;
    for (int b = 63; b >= 0; b--) {
        r *= r;
        if ((e >> b) & 1) r *= x;
    }
    return r;
}

/* NumPy's npy_divmod in float (the double one is ref.c's ref_np_divmod):
 * floor division's quotient and the remainder with the divisor's sign,
 * rounded as float32 computes them. */
static float np_divmod_f(float a, float b, float *modulus) {
    float mod = fmodf(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    float div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= 1.0f;
        }
    } else {
        mod = copysignf(0.0f, b);
    }
    float floordiv;
    if (div != 0) {
        floordiv = floorf(div);
        if (div - floordiv > 0.5f) floordiv += 1.0f;
    } else {
        floordiv = copysignf(0.0f, a / b);
    }
    *modulus = mod;
    return floordiv;
}

/* The float result of op for double operands (exact for the exact ops: the
 * double result of + - * / sqrt on float32/16 operands rounds once more
 * without error, 53 >= 2 * 24 + 2). */
static double float_ref(nd_op op, double x, double y, nd_dtype t) {
    switch (op) {
    /* complex only: complex_elem */
    case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE: case ND_OP_MAKE_COMPLEX:
        return NAN;
    case ND_OP_NEG: return -x;
    case ND_OP_ABS: return fabs(x);
    case ND_OP_SQRT: return sqrt(x);
    case ND_OP_EXP: return (double)expl((long double)x);
    case ND_OP_LOG: return (double)logl((long double)x);
    case ND_OP_SIN: return (double)sinl((long double)x);
    case ND_OP_COS: return (double)cosl((long double)x);
    case ND_OP_TANH: return (double)tanhl((long double)x);
    case ND_OP_TAN: return (double)tanl((long double)x);
    case ND_OP_ARCSIN: return (double)asinl((long double)x);
    case ND_OP_ARCCOS: return (double)acosl((long double)x);
    case ND_OP_ARCTAN: return (double)atanl((long double)x);
    case ND_OP_SINH: return (double)sinhl((long double)x);
    case ND_OP_COSH: return (double)coshl((long double)x);
    case ND_OP_ARCSINH: return (double)asinhl((long double)x);
    case ND_OP_ARCCOSH: return (double)acoshl((long double)x);
    case ND_OP_ARCTANH: return (double)atanhl((long double)x);
    case ND_OP_EXP2: return (double)exp2l((long double)x);
    case ND_OP_EXPM1: return (double)expm1l((long double)x);
    case ND_OP_LOG2: return (double)log2l((long double)x);
    case ND_OP_LOG10: return (double)log10l((long double)x);
    case ND_OP_LOG1P: return (double)log1pl((long double)x);
    case ND_OP_CBRT: return (double)cbrtl((long double)x);
    /* round half to even, written out rather than rint() */
    case ND_OP_RINT: {
        if (!isfinite(x) || fabs(x) >= 0x1p52) return x;
        double f = floor(x), d = x - f;
        double r = d > 0.5 ? f + 1 : d < 0.5 ? f : (fmod(f, 2) == 0 ? f : f + 1);
        return copysign(r, x);
    }
    /* the double quotient of a float operand, rounded once more to the
     * dtype, is the correctly rounded float quotient (53 >= 2 * 24 + 2) */
    case ND_OP_RECIPROCAL: return 1.0 / x;
    /* every double of magnitude 2^52 or more is whole */
    case ND_OP_TRUNC: return fabs(x) < 0x1p52 ? copysign((double)(int64_t)x, x) : x;
    case ND_OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
    case ND_OP_ARCTAN2: return (double)atan2l((long double)x, (long double)y);
    case ND_OP_HYPOT: return (double)hypotl((long double)x, (long double)y);
    case ND_OP_COPYSIGN: return copysign(x, y);
    /* NumPy: x * (NPY_PI / 180) with the constant of the dtype
     * (npy_deg2radf: NPY_PIf / 180.0f in float32), one rounding */
    case ND_OP_DEG2RAD:
        return t == ND_FLOAT64 ? x * (M_PI / 180.0) : (double)((float)x * ((float)M_PI / 180.0f));
    case ND_OP_RAD2DEG:
        return t == ND_FLOAT64 ? x * (180.0 / M_PI) : (double)((float)x * (180.0f / (float)M_PI));
    case ND_OP_HEAVISIDE: return isnan(x) ? x : x < 0 ? 0.0 : x > 0 ? 1.0 : y;
    /* NaN only where both are; of equal values (+-0) the first */
    case ND_OP_FMAX: return isnan(y) ? x : isnan(x) ? y : x >= y ? x : y;
    case ND_OP_FMIN: return isnan(y) ? x : isnan(x) ? y : x <= y ? x : y;
    case ND_OP_FMOD: return fmod(x, y); /* exact in any precision */
    /* NumPy's divmod, in the compute dtype's own precision (float32 for
     * the 16-bit floats: every backend computes there and rounds once) */
    case ND_OP_FLOOR_DIVIDE: case ND_OP_REMAINDER: {
        double q, m;
        if (t == ND_FLOAT64) {
            q = ref_np_divmod(x, y, &m);
        } else {
            float mf;
            q = np_divmod_f((float)x, (float)y, &mf);
            m = mf;
        }
        return op == ND_OP_FLOOR_DIVIDE ? q : m;
    }
    /* x * 2^y for the integer y (truncated, clamped where the result has
     * saturated anyway); exact in double, which rounds once to the dtype */
    case ND_OP_LDEXP:
        return isnan(y) ? y : ldexp(x, (int)(y < -2200 ? -2200 : y > 2200 ? 2200 : y));
    /* log(e^x + e^y) = max + log(1 + e^-|x - y|) in long double; equal
     * values (infinities too) give x + ln 2 */
    case ND_OP_LOGADDEXP: case ND_OP_LOGADDEXP2: {
        const int two = op == ND_OP_LOGADDEXP2;
        if (isnan(x) || isnan(y)) return NAN;
        long double X = x, Y = y;
        if (x == y) return (double)(X + (two ? 1.0L : M_LN2l));
        long double m = X > Y ? X : Y, d = fabsl(X - Y);
        return (double)(two ? m + log1pl(exp2l(-d)) * M_LOG2El : m + log1pl(expl(-d)));
    }
    case ND_OP_FLOOR: return floor(x);
    case ND_OP_CEIL: return ceil(x);
    case ND_OP_SQUARE: return x * x;
    case ND_OP_ADD: return x + y;
    case ND_OP_SUB: return x - y;
    case ND_OP_MUL: return x * y;
    case ND_OP_DIV: return x / y;
    case ND_OP_POW: return (double)powl((long double)x, (long double)y);
    /* NaN propagates; for +-0 against -+0 the first operand (NumPy's
     * float32/64 loops give the second, its float16 loop the first: IEEE
     * allows either; nd is the same on every dtype and backend) */
    case ND_OP_MAX: return isnan(x) ? x : isnan(y) ? y : x >= y ? x : y;
    case ND_OP_MIN: return isnan(x) ? x : isnan(y) ? y : x <= y ? x : y;
    case ND_OP_CAST: case ND_OP_LOGICAL_NOT: case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT:
    case ND_OP_LE: case ND_OP_GT: case ND_OP_GE: case ND_OP_LOGICAL_AND: case ND_OP_LOGICAL_OR:
    case ND_OP_WHERE: case ND_OP_INVERT: case ND_OP_LOGICAL_XOR:
    BITWISE_CASES:
    SHIFT_GCD_CASES:
    NEXTAFTER_CASES:
    PRED_CASES:
        break;
    }
    return NAN;
}

/* The integer result of op (two's complement bits; the store wraps them to
 * the dtype). Bool operands compute as int8 0/1. */
static uint64_t int_ref(nd_op op, nd_dtype t, const ref_arr *a, const ref_arr *b, int64_t i) {
    int sgn = ref_is_signed(t) || t == ND_BOOL;
    int64_t xs = sval(a, i), ys = b ? sval(b, i) : 0;
    uint64_t xu = uval(a, i), yu = b ? uval(b, i) : 0;
    uint64_t x = sgn ? (uint64_t)xs : xu, y = sgn ? (uint64_t)ys : yu;
    switch (op) {
    case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE: case ND_OP_MAKE_COMPLEX:
        return 0; /* complex only: complex_elem */
    case ND_OP_NEG: return 0 - x;
    case ND_OP_ABS: return sgn && xs < 0 ? 0 - x : x;
    case ND_OP_FLOOR: case ND_OP_CEIL: case ND_OP_TRUNC: return x;
    /* NumPy's integer 1/x truncates: only 1 and -1 give nonzero */
    case ND_OP_RECIPROCAL: return sgn ? (xs == 1 || xs == -1 ? x : 0) : (xu == 1);
    case ND_OP_SIGN: return sgn ? (uint64_t)(int64_t)((xs > 0) - (xs < 0)) : (xu != 0);
    case ND_OP_INVERT: return ~x;
    case ND_OP_BITWISE_AND: return x & y;
    case ND_OP_BITWISE_OR: return x | y;
    case ND_OP_BITWISE_XOR: return x ^ y;
    case ND_OP_FMAX: return sgn ? (xs >= ys ? x : y) : (xu >= yu ? x : y);
    case ND_OP_FMIN: return sgn ? (xs <= ys ? x : y) : (xu <= yu ? x : y);
    case ND_OP_FLOOR_DIVIDE: return sgn ? floor_div_s(xs, ys) : (yu ? xu / yu : 0);
    /* x % 0 = 0; MIN % -1 = 0 (y == -1 divides everything) */
    case ND_OP_REMAINDER:
        if (!sgn) return yu ? xu % yu : 0;
        if (ys == 0 || ys == -1) return 0;
        return (uint64_t)(xs % ys != 0 && ((xs % ys < 0) != (ys < 0)) ? xs % ys + ys : xs % ys);
    case ND_OP_FMOD:
        if (!sgn) return yu ? xu % yu : 0;
        return ys == 0 || ys == -1 ? 0 : (uint64_t)(xs % ys);
    /* NumPy 2: a count that is negative (huge as unsigned) or >= the
     * width gives 0, for >> of a negative x -1; >> is floor(x / 2^c) */
    case ND_OP_LEFT_SHIFT: {
        uint64_t cnt = sgn ? (uint64_t)ys : yu;
        return cnt < (uint64_t)bits_of(t) ? x << cnt : 0;
    }
    case ND_OP_RIGHT_SHIFT: {
        uint64_t cnt = sgn ? (uint64_t)ys : yu;
        if (cnt >= (uint64_t)bits_of(t)) return sgn && xs < 0 ? (uint64_t)-1 : 0;
        if (!sgn) return xu >> cnt;
        return xs >= 0 ? (uint64_t)(xs >> cnt) : (uint64_t)(-((-(xs + 1)) >> cnt) - 1);
    }
    /* NumPy: of |x| and |y| (|MIN| = 2^(w-1) as unsigned), the store wraps */
    case ND_OP_GCD: case ND_OP_LCM: {
        uint64_t ua = sgn && xs < 0 ? 0 - (uint64_t)xs : x, ub = sgn && ys < 0 ? 0 - (uint64_t)ys : y;
        uint64_t g = ua, h = ub;
        while (h) {
            uint64_t r = g % h;
            g = h;
            h = r;
        }
        if (op == ND_OP_GCD) return g;
        return g ? ua / g * ub : 0;
    }
    case ND_OP_SQUARE: return x * x;
    case ND_OP_ADD: return x + y;
    case ND_OP_SUB: return x - y;
    case ND_OP_MUL: return x * y;
    case ND_OP_DIV: return sgn ? floor_div_s(xs, ys) : (yu ? xu / yu : 0);
    case ND_OP_POW: return int_pow(x, y, sgn && ys < 0);
    case ND_OP_MAX: return sgn ? (xs >= ys ? x : y) : (xu >= yu ? x : y);
    case ND_OP_MIN: return sgn ? (xs <= ys ? x : y) : (xu <= yu ? x : y);
    case ND_OP_CAST: case ND_OP_SQRT: case ND_OP_EXP: case ND_OP_LOG: case ND_OP_SIN:
    case ND_OP_COS: case ND_OP_TANH: case ND_OP_TAN: case ND_OP_LOGICAL_NOT: case ND_OP_EQ: case ND_OP_NE:
    case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE: case ND_OP_LOGICAL_AND:
    case ND_OP_LOGICAL_OR: case ND_OP_WHERE: case ND_OP_RINT: case ND_OP_LOGICAL_XOR:
    case ND_OP_ARCTAN2: case ND_OP_HYPOT: case ND_OP_COPYSIGN: case ND_OP_DEG2RAD:
    case ND_OP_RAD2DEG: case ND_OP_HEAVISIDE: case ND_OP_LDEXP: case ND_OP_LOGADDEXP:
    case ND_OP_LOGADDEXP2:
    NEXTAFTER_CASES:
    FLOAT_MATH_CASES:
    PRED_CASES:
        break;
    }
    return 0;
}

static int cmp_ref(nd_op op, nd_dtype t, const ref_arr *a, const ref_arr *b, int64_t i) {
    int lt, eq, un = 0;
    if (is_f(t)) {
        double x = ref_getd(a, i), y = ref_getd(b, i);
        un = isnan(x) || isnan(y);
        lt = x < y, eq = x == y;
    } else if (ref_is_unsigned(t)) {
        lt = uval(a, i) < uval(b, i), eq = uval(a, i) == uval(b, i);
    } else {
        lt = sval(a, i) < sval(b, i), eq = sval(a, i) == sval(b, i);
    }
    switch (op) {
    case ND_OP_EQ: return eq;
    case ND_OP_NE: return !eq || un;
    case ND_OP_LT: return lt;
    case ND_OP_LE: return lt || eq;
    case ND_OP_GT: return !lt && !eq && !un;
    case ND_OP_GE: return !lt && !un;
    default: return -1;
    }
}

/* NumPy's isnan .. isneginf: integers and bool are finite; signbit is the
 * top bit of a float's storage (a NaN's too) and x < 0 of a signed
 * integer. */
static int pred_ref(nd_op op, nd_dtype t, const ref_arr *a, int64_t i) {
    double v = is_f(t) ? ref_getd(a, i) : (double)sval(a, i);
    int neg;
    if (is_f(t)) {
        size_t sz = ref_itemsize(t);
        uint64_t bits = 0;
        memcpy(&bits, a->data + (size_t)i * sz, sz);
        neg = (int)(bits >> (8 * sz - 1)) & 1;
    } else {
        neg = ref_is_signed(t) && sval(a, i) < 0;
    }
    switch (op) {
    case ND_OP_ISNAN: return isnan(v);
    case ND_OP_ISINF: return isinf(v);
    case ND_OP_ISFINITE: return isfinite(v);
    case ND_OP_SIGNBIT: return neg;
    case ND_OP_ISPOSINF: return isinf(v) && v > 0;
    case ND_OP_ISNEGINF: return isinf(v) && v < 0;
    default: return -1;
    }
}

/* NumPy's unsafe float -> integer cast as nd defines it on every backend:
 * truncate toward zero through 64 bits (uint64 for [2^63, 2^64)), then wrap
 * to the width; NaN and values out of that range give the bits 2^63 (x86's
 * "integer indefinite"). */
static uint64_t f2i_ref(double v) {
    if (v >= -0x1p63 && v < 0x1p63) return (uint64_t)(int64_t)trunc(v);
    if (v >= 0 && v < 0x1p64) return (uint64_t)v;
    return 1ull << 63;
}

/* nextafter on the storage bits of t: the neighbour is one step of the
 * magnitude's bits (an infinity steps to the largest finite value, the
 * largest finite value to infinity); a zero steps to the smallest subnormal
 * with y's sign; x == y gives y (C's nextafter), for float16 and bfloat16
 * x (NumPy's npy_half_nextafter). */
static void nextafter_ref(nd_dtype t, const ref_arr *a, const ref_arr *b, int64_t i,
                          ref_arr *out) {
    const size_t sz = ref_itemsize(t);
    const double x = ref_getd(a, i), y = ref_getd(b, i);
    uint64_t xb = 0, yb = 0, r;
    memcpy(&xb, a->data + (size_t)i * sz, sz);
    memcpy(&yb, b->data + (size_t)i * sz, sz);
    const uint64_t sign = 1ull << (8 * sz - 1);
    if (isnan(x) || isnan(y)) {
        ref_setd(out, i, NAN);
        return;
    }
    if (x == y) r = t == ND_FLOAT16 || t == ND_BFLOAT16 ? xb : yb;
    else if (x == 0) r = (yb & sign) | 1;
    else r = (x < y) == (x > 0) ? xb + 1 : xb - 1;
    memcpy(out->data + (size_t)i * sz, &r, sz);
}

/* out[i] = op(in...)[i] for operands of dtype t. */
void ref_elem(nd_op op, nd_dtype t, ref_arr *const in[3], int64_t i, ref_arr *out) {
    const ref_arr *a = in[0], *b = in[1], *c = in[2];
    nd_dtype r = out->dt;
    if (is_c(t) || (op == ND_OP_CAST && is_c(r))) {
        complex_elem(op, t, in, i, out);
        return;
    }
    switch (op) {
    case ND_OP_CAST:
        if (is_f(t) && !is_f(r) && r != ND_BOOL) ref_setu(out, i, f2i_ref(ref_getd(a, i)));
        else if (!is_f(t) && r == ND_FLOAT32) {
            /* one rounding from the exact integer (long double holds 64 bits;
             * through double, 2^62 + 2^38 + 1 would round twice) */
            long double v = ref_is_unsigned(t) ? (long double)uval(a, i) : (long double)sval(a, i);
            float f = (float)v;
            memcpy(out->data + (size_t)i * 4, &f, 4);
        } else ref_cast_elem(out, i, a, i);
        return;
    case ND_OP_WHERE:
        memcpy(out->data + (size_t)i * ref_itemsize(r), (ref_getu(a, i) ? b : c)->data +
               (size_t)i * ref_itemsize(r), ref_itemsize(r));
        return;
    case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE:
        ref_setu(out, i, (uint64_t)cmp_ref(op, t, a, b, i));
        return;
    PRED_CASES:
        ref_setu(out, i, (uint64_t)pred_ref(op, t, a, i));
        return;
    NEXTAFTER_CASES:
        nextafter_ref(t, a, b, i, out);
        return;
    case ND_OP_LOGICAL_NOT: ref_setu(out, i, !ref_getu(a, i)); return;
    case ND_OP_LOGICAL_AND: ref_setu(out, i, ref_getu(a, i) && ref_getu(b, i)); return;
    case ND_OP_LOGICAL_OR: ref_setu(out, i, ref_getu(a, i) || ref_getu(b, i)); return;
    case ND_OP_LOGICAL_XOR: ref_setu(out, i, !ref_getu(a, i) != !ref_getu(b, i)); return;
    case ND_OP_NEG: case ND_OP_ABS: case ND_OP_SQRT: case ND_OP_EXP: case ND_OP_LOG:
    case ND_OP_SIN: case ND_OP_COS: case ND_OP_TANH: case ND_OP_TAN: case ND_OP_FLOOR:
    case ND_OP_CEIL: case ND_OP_SQUARE: case ND_OP_ADD: case ND_OP_SUB: case ND_OP_MUL: case ND_OP_DIV:
    case ND_OP_POW: case ND_OP_MAX: case ND_OP_MIN: case ND_OP_RINT: case ND_OP_RECIPROCAL:
    case ND_OP_TRUNC: case ND_OP_SIGN: case ND_OP_INVERT: case ND_OP_ARCTAN2: case ND_OP_HYPOT:
    case ND_OP_COPYSIGN: case ND_OP_DEG2RAD: case ND_OP_RAD2DEG: case ND_OP_HEAVISIDE:
    case ND_OP_LDEXP: case ND_OP_LOGADDEXP: case ND_OP_LOGADDEXP2:
    NUM_BIN_CASES:
    BITWISE_CASES:
    SHIFT_GCD_CASES:
    FLOAT_MATH_CASES:
    case ND_OP_CONJ: case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE: case ND_OP_MAKE_COMPLEX:
        break;
    }
    if (is_f(t)) ref_setd(out, i, float_ref(op, ref_getd(a, i), b ? ref_getd(b, i) : 0, t));
    else ref_setu(out, i, int_ref(op, t, a, b, i));
}

/* ------------------------------------------------------------- complex */

/* The complex rows: NumPy's complex loops that nd has. */
static int complex_takes(nd_op op) {
    switch (op) {
    case ND_OP_CAST: case ND_OP_WHERE: case ND_OP_NEG: case ND_OP_SQRT: case ND_OP_EXP:
    case ND_OP_LOG: case ND_OP_RECIPROCAL: case ND_OP_SQUARE: case ND_OP_ISNAN: case ND_OP_ISINF:
    case ND_OP_ISFINITE: case ND_OP_ADD: case ND_OP_SUB: case ND_OP_MUL: case ND_OP_DIV:
    case ND_OP_MAX: case ND_OP_MIN: case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT: case ND_OP_LE:
    case ND_OP_GT: case ND_OP_GE: case ND_OP_FMAX: case ND_OP_FMIN: case ND_OP_CONJ:
    case ND_OP_REAL: case ND_OP_IMAG: case ND_OP_CABS: case ND_OP_ANGLE: case ND_OP_MAKE_COMPLEX:
    case ND_OP_SIN: case ND_OP_COS: case ND_OP_TAN: case ND_OP_SINH: case ND_OP_COSH: case ND_OP_TANH:
    case ND_OP_ARCSIN: case ND_OP_ARCCOS: case ND_OP_ARCTAN: case ND_OP_ARCSINH: case ND_OP_ARCCOSH:
    case ND_OP_ARCTANH: case ND_OP_LOG10: case ND_OP_LOG2: case ND_OP_LOG1P: case ND_OP_EXPM1:
    case ND_OP_EXP2: case ND_OP_SIGN: case ND_OP_RINT: case ND_OP_POW:
        return 1;
    default:
        return 0;
    }
}

void cref_get(const ref_arr *a, int64_t i, double *re, double *im) {
    if (a->dt == ND_COMPLEX64) {
        float v[2];
        memcpy(v, a->data + (size_t)i * 8, 8);
        *re = v[0], *im = v[1];
    } else {
        double v[2];
        memcpy(v, a->data + (size_t)i * 16, 16);
        *re = v[0], *im = v[1];
    }
}

void cref_set(ref_arr *a, int64_t i, double re, double im) {
    if (a->dt == ND_COMPLEX64) {
        float v[2] = {(float)re, (float)im};
        memcpy(a->data + (size_t)i * 8, v, 8);
    } else {
        double v[2] = {re, im};
        memcpy(a->data + (size_t)i * 16, v, 16);
    }
}

/* NumPy's complex loops (umath/loops.c.src) evaluated in the parts' own
 * precision P: what NumPy's scalar loop computes (the library's backends
 * may contract into FMAs, so test_ops compares them to a tolerance). */
#define NP_CPLX(P, SUF)                                                                         \
    static void np_mul_##P(P ar, P ai, P br, P bi, P *r, P *i) {                                \
        *r = ar * br - ai * bi;                                                                 \
        *i = ar * bi + ai * br;                                                                 \
    }                                                                                           \
    static void np_div_##P(P ar, P ai, P br, P bi, P *r, P *i) {                                \
        const P bra = fabs##SUF(br), bia = fabs##SUF(bi);                                       \
        if (bra >= bia) {                                                                       \
            if (bra == 0 && bia == 0) {                                                         \
                *r = ar / bra;                                                                  \
                *i = ai / bra;                                                                  \
            } else {                                                                            \
                const P rat = bi / br, scl = (P)1 / (br + bi * rat);                            \
                *r = (ar + ai * rat) * scl;                                                     \
                *i = (ai - ar * rat) * scl;                                                     \
            }                                                                                   \
        } else {                                                                                \
            const P rat = br / bi, scl = (P)1 / (bi + br * rat);                                \
            *r = (ar * rat + ai) * scl;                                                         \
            *i = (ai * rat - ar) * scl;                                                         \
        }                                                                                       \
    }                                                                                           \
    static void np_recip_##P(P xr, P xi, P *r, P *i) {                                          \
        if (fabs##SUF(xi) <= fabs##SUF(xr)) {                                                   \
            const P q = xi / xr, d = xr + xi * q;                                               \
            *r = (P)1 / d;                                                                      \
            *i = -q / d;                                                                        \
        } else {                                                                                \
            const P q = xr / xi, d = xr * q + xi;                                               \
            *r = q / d;                                                                         \
            *i = (P)-1 / d;                                                                     \
        }                                                                                       \
    }
NP_CPLX(float, f)
NP_CPLX(double, )

/* Taylor series of log1p and expm1 in long double for |z| < 2^-10 (11
 * terms: the next is below 2^-110 of the first), where 1 + z would round
 * z away; clogl(1 + z) and cexpl(z) - 1 beyond. The signed zero of a
 * zero imaginary part is the operand's (Annex G's conj symmetry). */
static long double complex ref_log1p(long double complex z) {
    if (!(cabsl(z) < 0x1p-10L)) return clogl(1.0L + z);
    long double complex t = z, s = 0;
    for (int k = 1; k <= 11; k++, t *= -z) s += t / k;
    return CMPLXL(creall(s), cimagl(z) == 0 ? cimagl(z) : cimagl(s));
}
static long double complex ref_expm1(long double complex z) {
    if (cimagl(z) == 0) return CMPLXL(expm1l(creall(z)), cimagl(z));
    if (!(cabsl(z) < 0x1p-10L)) return cexpl(z) - 1.0L;
    long double complex t = z, s = 0;
    for (int k = 1; k <= 11; k++) s += t, t *= z / (k + 1);
    return s;
}

/* NumPy's npy_cpow: the rules for 0 and integer exponents, repeated
 * squaring with NumPy's multiply in the parts' precision (overflow and
 * all), cpowl in long double otherwise */
#define NP_CPOW(P)                                                                              \
    static void np_pow_##P(P ar, P ai, P br, P bi, double *zr, double *zi) {                    \
        if (br == 0 && bi == 0) { *zr = 1, *zi = 0; return; }                                   \
        if (ar == 0 && ai == 0) {                                                               \
            *zr = *zi = br > 0 ? 0.0 : NAN;                                                     \
            return;                                                                             \
        }                                                                                       \
        if (bi == 0 && br > -100 && br < 100 && br == (P)(int)br) {                             \
            int n = (int)br, m = n < 0 ? -n : n;                                                \
            P pr = ar, pi = ai, r = 1, i = 0;                                                   \
            if (n == 2 || n == 3) { np_mul_##P(ar, ai, ar, ai, &r, &i); }                       \
            if (n == 3) { np_mul_##P(ar, ai, r, i, &r, &i); }                                   \
            if (n == 1) r = ar, i = ai;                                                         \
            if (n < 1 || n > 3)                                                                 \
                for (int mask = 1;; mask <<= 1) {                                               \
                    if (m & mask) np_mul_##P(r, i, pr, pi, &r, &i);                             \
                    if (m < (mask << 1)) break;                                                 \
                    np_mul_##P(pr, pi, pr, pi, &pr, &pi);                                       \
                }                                                                               \
            if (n < 0) np_div_##P(1, 0, r, i, &r, &i);                                          \
            *zr = r, *zi = i;                                                                   \
            return;                                                                             \
        }                                                                                       \
        /* glibc's cpow in double (NumPy's npy_cpow calls it): long double's \
         * range would keep what double arithmetic loses */                    \
        double complex w = cpow(CMPLX(ar, ai), CMPLX(br, bi));                                  \
        *zr = (double)(P)creal(w), *zi = (double)(P)cimag(w);                                   \
    }
NP_CPOW(float)
NP_CPOW(double)

/* NumPy 2's sign of a complex: z / |z| (umath's CDOUBLE_sign) */
static void np_csign(double xr, double xi, double *zr, double *zi) {
    long double h = hypotl(xr, xi); /* long double: no overflow, no subnormal |z| */
    if (isnan(h)) *zr = *zi = NAN;
    else if (isinf(h)) {
        if (isinf(xr)) {
            if (isinf(xi)) *zr = *zi = NAN;
            else *zr = xr > 0 ? 1 : -1, *zi = 0;
        } else {
            *zr = 0, *zi = xi > 0 ? 1 : -1;
        }
    } else if (h == 0) *zr = *zi = 0;
    else *zr = (double)(xr / h), *zi = (double)(xi / h);
}

/* NumPy's complex comparisons (CLT etc.) */
static int np_cmp(nd_op op, double xr, double xi, double yr, double yi) {
    int nan_i = isnan(xi) || isnan(yi);
    switch (op) {
    case ND_OP_EQ: return xr == yr && xi == yi;
    case ND_OP_NE: return xr != yr || xi != yi;
    case ND_OP_LT: return (xr < yr && !nan_i) || (xr == yr && xi < yi);
    case ND_OP_LE: return (xr < yr && !nan_i) || (xr == yr && xi <= yi);
    case ND_OP_GT: return (xr > yr && !nan_i) || (xr == yr && xi > yi);
    default: return (xr > yr && !nan_i) || (xr == yr && xi >= yi);
    }
}

static void complex_elem(nd_op op, nd_dtype t, ref_arr *const in[3], int64_t i, ref_arr *out) {
    const ref_arr *a = in[0], *b = in[1];
    nd_dtype r = out->dt;
    double xr = 0, xi = 0, yr = 0, yi = 0, zr = 0, zi = 0;
    if (op == ND_OP_CAST) {
        if (is_c(t) && is_c(r)) {
            cref_get(a, i, &xr, &xi);
            cref_set(out, i, xr, xi);
        } else if (is_c(t)) { /* to a real dtype: the real part; bool: either part */
            cref_get(a, i, &xr, &xi);
            if (r == ND_BOOL) ref_setu(out, i, xr != 0 || xi != 0);
            else if (!is_f(r)) ref_setu(out, i, f2i_ref(xr));
            else ref_setd(out, i, xr);
        } else if (is_f(t) || t == ND_BOOL) {
            cref_set(out, i, ref_getd(a, i), 0.0);
        } else { /* an integer: rounded once into the part dtype */
            long double v = ref_is_unsigned(t) ? (long double)uval(a, i) : (long double)sval(a, i);
            if (r == ND_COMPLEX64) cref_set(out, i, (float)v, 0.0);
            else cref_set(out, i, (double)v, 0.0);
        }
        return;
    }
    if (op == ND_OP_WHERE) {
        size_t sz = ref_itemsize(r);
        memcpy(out->data + (size_t)i * sz, (ref_getu(in[0], i) ? in[1] : in[2])->data + (size_t)i * sz, sz);
        return;
    }
    if (op == ND_OP_MAKE_COMPLEX) { /* real operands of the part dtype */
        cref_set(out, i, ref_getd(a, i), ref_getd(b, i));
        return;
    }
    cref_get(a, i, &xr, &xi);
    if (b && nd_op_arity(op) == 2) cref_get(b, i, &yr, &yi);
    const int f = t == ND_COMPLEX64;
    /* CMPLXL: xr + xi * I would make inf * I a NaN real part */
    long double complex lz = CMPLXL((long double)xr, (long double)xi), lw;
    switch (op) {
    case ND_OP_EQ: case ND_OP_NE: case ND_OP_LT: case ND_OP_LE: case ND_OP_GT: case ND_OP_GE:
        ref_setu(out, i, (uint64_t)np_cmp(op, xr, xi, yr, yi));
        return;
    case ND_OP_ISNAN: ref_setu(out, i, isnan(xr) || isnan(xi)); return;
    case ND_OP_ISINF: ref_setu(out, i, isinf(xr) || isinf(xi)); return;
    case ND_OP_ISFINITE: ref_setu(out, i, isfinite(xr) && isfinite(xi)); return;
    case ND_OP_REAL: ref_setd(out, i, xr); return;
    case ND_OP_IMAG: ref_setd(out, i, xi); return;
    case ND_OP_CABS: ref_setd(out, i, (double)hypotl(xr, xi)); return;
    case ND_OP_ANGLE: ref_setd(out, i, (double)atan2l(xi, xr)); return;
    case ND_OP_ADD: zr = xr + yr, zi = xi + yi; break;
    case ND_OP_SUB: zr = xr - yr, zi = xi - yi; break;
    case ND_OP_NEG: zr = -xr, zi = -xi; break;
    case ND_OP_CONJ: zr = xr, zi = -xi; break;
    case ND_OP_MUL: case ND_OP_SQUARE:
        if (op == ND_OP_SQUARE) yr = xr, yi = xi;
        if (f) {
            float pr, pi;
            np_mul_float((float)xr, (float)xi, (float)yr, (float)yi, &pr, &pi);
            zr = pr, zi = pi;
        } else {
            np_mul_double(xr, xi, yr, yi, &zr, &zi);
        }
        break;
    case ND_OP_DIV:
        if (f) {
            float pr, pi;
            np_div_float((float)xr, (float)xi, (float)yr, (float)yi, &pr, &pi);
            zr = pr, zi = pi;
        } else {
            np_div_double(xr, xi, yr, yi, &zr, &zi);
        }
        break;
    case ND_OP_RECIPROCAL:
        if (f) {
            float pr, pi;
            np_recip_float((float)xr, (float)xi, &pr, &pi);
            zr = pr, zi = pi;
        } else {
            np_recip_double(xr, xi, &zr, &zi);
        }
        break;
    case ND_OP_MAX: case ND_OP_MIN: case ND_OP_FMAX: case ND_OP_FMIN: {
        int ge = np_cmp(op == ND_OP_MAX || op == ND_OP_FMAX ? ND_OP_GE : ND_OP_LE, xr, xi, yr, yi);
        int first = op == ND_OP_MAX || op == ND_OP_MIN ? (isnan(xr) || isnan(xi) || ge)
                                                       : (isnan(yr) || isnan(yi) || ge);
        zr = first ? xr : yr, zi = first ? xi : yi;
        break;
    }
    /* C99's complex functions in long double (glibc, Annex G special
     * values): what NumPy's npy_cexp/npy_clog/npy_csqrt call */
    case ND_OP_EXP: lw = cexpl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_LOG: lw = clogl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_SQRT: lw = csqrtl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_SIN: lw = csinl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_COS: lw = ccosl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_TAN: lw = ctanl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_SINH: lw = csinhl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_COSH: lw = ccoshl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_TANH: lw = ctanhl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCSIN: lw = casinl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCCOS: lw = cacosl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCTAN: lw = catanl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCSINH: lw = casinhl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCCOSH: lw = cacoshl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_ARCTANH: lw = catanhl(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    /* NumPy's nc_log10/nc_log2: log z times log10(e) / log2(e) */
    case ND_OP_LOG10:
        lw = clogl(lz);
        zr = (double)(creall(lw) / logl(10.0L)), zi = (double)(cimagl(lw) / logl(10.0L));
        break;
    case ND_OP_LOG2:
        lw = clogl(lz);
        zr = (double)(creall(lw) / logl(2.0L)), zi = (double)(cimagl(lw) / logl(2.0L));
        break;
    case ND_OP_LOG1P: lw = ref_log1p(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_EXPM1: lw = ref_expm1(lz); zr = (double)creall(lw), zi = (double)cimagl(lw); break;
    case ND_OP_EXP2: { /* NumPy's nc_exp2: exp(z ln 2), z ln 2 rounded to the parts' precision */
        double ar = f ? (double)((float)xr * 0.693147180559945309f) : xr * 0.6931471805599453;
        double ai = f ? (double)((float)xi * 0.693147180559945309f) : xi * 0.6931471805599453;
        lw = cexpl(CMPLXL(ar, ai));
        zr = (double)creall(lw), zi = (double)cimagl(lw);
        break;
    }
    case ND_OP_SIGN: np_csign(xr, xi, &zr, &zi); break;
    case ND_OP_RINT: zr = f ? rintf((float)xr) : rint(xr), zi = f ? rintf((float)xi) : rint(xi); break;
    case ND_OP_POW:
        if (f) np_pow_float((float)xr, (float)xi, (float)yr, (float)yi, &zr, &zi);
        else np_pow_double(xr, xi, yr, yi, &zr, &zi);
        break;
    default: zr = zi = NAN; break;
    }
    cref_set(out, i, zr, zi);
}
