/* One element function per elementwise op and compute dtype: what every
 * backend computes for one element. The same text is
 *   - compiled into the library (the CPU interpreter's tile loops, cpu_ops.c),
 *   - pasted into every CPU JIT kernel (cpu_jit_codegen.c) and
 *   - pasted into every CUDA kernel after NDS_CUDA is defined (codegen.c),
 *     where NVRTC compiles the functions as device code,
 * so an op means the same on every backend by construction. The ops, their
 * type rules and which compute dtypes they take are common/ops.h; the dtype
 * an op computes in is nd_op_compute_dtype (float16/bfloat16 in float32,
 * bool arithmetic in int8, integer transcendentals in float64).
 *
 * Names: nds_<label>_<dtype> with the labels of common/ops.h and the dtype
 * suffixes BOOL I8 I16 I32 I64 U8 U16 U32 U64 F32 F64. Comparisons return
 * BOOL_T. Integer arithmetic runs in unsigned types so that it wraps
 * without undefined behaviour.
 *
 * Self-contained on purpose: standard headers only (none under NVRTC, whose
 * math functions are built in), C11 and C++ alike, no nd types.
 *
 * Transcendentals (exp, log, sin, cos, tanh, tan, arcsin .. cbrt; pow of
 * floats) are the C99 functions here. The CPU backend computes
 * the float32/float64 transcendentals (exp, log, sin, tan, arcsinh, log1p,
 * cbrt, ...) with SLEEF's vector functions instead (cpu_sleef.c), and
 * CUDA's functions are its own: those ops agree across backends within the
 * ulps of their row in common/ops.h, every other op bit for bit. */
#ifndef ND_COMMON_ELEMENT_FNS_H
#define ND_COMMON_ELEMENT_FNS_H

#if defined(NDS_CUDA)
#define NDS_INLINE static __device__ __forceinline__
typedef unsigned char BOOL_T;
typedef signed char I8_T;
typedef short I16_T;
typedef int I32_T;
typedef long long I64_T;
typedef unsigned char U8_T;
typedef unsigned short U16_T;
typedef unsigned int U32_T;
typedef unsigned long long U64_T;
#else
#include <math.h>
#include <stdint.h>
#if defined(__GNUC__)
#define NDS_INLINE static inline __attribute__((always_inline))
#else
#define NDS_INLINE static inline
#endif
typedef uint8_t BOOL_T;
typedef int8_t I8_T;
typedef int16_t I16_T;
typedef int32_t I32_T;
typedef int64_t I64_T;
typedef uint8_t U8_T;
typedef uint16_t U16_T;
typedef uint32_t U32_T;
typedef uint64_t U64_T;
#endif
/* float16 and bfloat16 are stored as their bits and compute in float32 */
typedef U16_T F16_T;
typedef U16_T BF16_T;
typedef float F32_T;
typedef double F64_T;
/* complex64/complex128: real then imaginary part, as NumPy stores them (a
 * plain struct: NVRTC has no C99 _Complex, and the formulas below are
 * NumPy's loops, not C99's operators) */
typedef struct {
    F32_T re, im;
} C64_T;
typedef struct {
    F64_T re, im;
} C128_T;

#define NDS_UN(label, S, expr)                                                                 \
    NDS_INLINE S##_T nds_##label##_##S(S##_T x) { return (S##_T)(expr); }
#define NDS_BIN(label, S, expr)                                                                \
    NDS_INLINE S##_T nds_##label##_##S(S##_T x, S##_T y) { return (S##_T)(expr); }
#define NDS_PRED(label, S, expr)                                                               \
    NDS_INLINE BOOL_T nds_##label##_##S(S##_T x) { (void)x; return (BOOL_T)(expr); }
#define NDS_CMP(label, S, expr)                                                                \
    NDS_INLINE BOOL_T nds_##label##_##S(S##_T x, S##_T y) { return (BOOL_T)(expr); }

/* ------------------------------------------------------------ comparisons */

/* Floats: IEEE (NaN compares unequal to everything, ne is true). */
#define NDS_CMP_SET(S)                                                                         \
    NDS_CMP(eq, S, x == y)                                                                     \
    NDS_CMP(ne, S, x != y)                                                                     \
    NDS_CMP(lt, S, x < y)                                                                      \
    NDS_CMP(le, S, x <= y)                                                                     \
    NDS_CMP(gt, S, x > y)                                                                      \
    NDS_CMP(ge, S, x >= y)

NDS_CMP_SET(BOOL)
NDS_CMP_SET(I8)
NDS_CMP_SET(I16)
NDS_CMP_SET(I32)
NDS_CMP_SET(I64)
NDS_CMP_SET(U8)
NDS_CMP_SET(U16)
NDS_CMP_SET(U32)
NDS_CMP_SET(U64)
NDS_CMP_SET(F32)
NDS_CMP_SET(F64)

/* Predicates (NumPy isnan, isinf, isfinite, signbit, isposinf, isneginf):
 * integers and bool are finite, signbit of a signed integer is x < 0. The
 * float signbit reads the sign bit, a NaN's too (NumPy: signbit(-nan) is
 * True). */
#define NDS_PRED_INT(S, NEG)                                                                   \
    NDS_PRED(isnan, S, 0)                                                                      \
    NDS_PRED(isinf, S, 0)                                                                      \
    NDS_PRED(isfinite, S, 1)                                                                   \
    NDS_PRED(signbit, S, NEG)                                                                  \
    NDS_PRED(isposinf, S, 0)                                                                   \
    NDS_PRED(isneginf, S, 0)
NDS_PRED_INT(BOOL, 0)
NDS_PRED_INT(I8, x < 0)
NDS_PRED_INT(I16, x < 0)
NDS_PRED_INT(I32, x < 0)
NDS_PRED_INT(I64, x < 0)
NDS_PRED_INT(U8, 0)
NDS_PRED_INT(U16, 0)
NDS_PRED_INT(U32, 0)
NDS_PRED_INT(U64, 0)
/* x - x is 0 for finite x and NaN for NaN and +-inf: no isnan/isinf
 * macros (NVRTC's are functions, C's are macros). */
#define NDS_PRED_FLOAT(S, SUF)                                                                 \
    NDS_PRED(isnan, S, x != x)                                                                 \
    NDS_PRED(isinf, S, x == x && x - x != x - x)                                               \
    NDS_PRED(isfinite, S, x - x == x - x)                                                      \
    NDS_PRED(signbit, S, copysign##SUF((S##_T)1, x) < 0)                                       \
    NDS_PRED(isposinf, S, x > 0 && x - x != x - x)                                             \
    NDS_PRED(isneginf, S, x < 0 && x - x != x - x)
NDS_PRED_FLOAT(F32, f)
NDS_PRED_FLOAT(F64, )

/* --------------------------------------------------------------- integers */

/* Integer power by repeated squaring, wrapping. */
NDS_INLINE U64_T nds_ipow(U64_T base, U64_T e) {
    U64_T r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

/* W: the unsigned type the arithmetic wraps in (at least unsigned int, so
 * uint16 * uint16 never overflows a signed int). Floor and ceil of an
 * integer are the integer (NumPy >= 2.1 keeps the dtype). */
#define NDS_INT_COMMON(S, W)                                                                   \
    NDS_UN(square, S, (W)x * (W)x)                                                             \
    NDS_UN(floor, S, x)                                                                        \
    NDS_UN(ceil, S, x)                                                                         \
    NDS_UN(neg, S, (W)0 - (W)x)                                                                \
    NDS_UN(trunc, S, x)                                                                        \
    NDS_UN(invert, S, ~(W)x)                                                                   \
    NDS_BIN(add, S, (W)x + (W)y)                                                               \
    NDS_BIN(sub, S, (W)x - (W)y)                                                               \
    NDS_BIN(mul, S, (W)x * (W)y)                                                               \
    NDS_BIN(maximum, S, x > y ? x : y)                                                         \
    NDS_BIN(minimum, S, x < y ? x : y)                                                         \
    NDS_BIN(fmax, S, x > y ? x : y)                                                            \
    NDS_BIN(fmin, S, x < y ? x : y)                                                            \
    NDS_BIN(bitwise_and, S, (W)x & (W)y)                                                       \
    NDS_BIN(bitwise_or, S, (W)x | (W)y)                                                        \
    NDS_BIN(bitwise_xor, S, (W)x ^ (W)y)

/* Euclid's gcd in the unsigned work type W (gcd(0, 0) = 0). */
#define NDS_GCDW(W)                                                                            \
    NDS_INLINE W nds_gcdw_##W(W a, W b) {                                                      \
        while (b) {                                                                            \
            W t = a % b;                                                                       \
            a = b;                                                                             \
            b = t;                                                                             \
        }                                                                                      \
        return a;                                                                              \
    }
NDS_GCDW(U32_T)
NDS_GCDW(U64_T)

/* Shifts as NumPy 2 (npy_lshift/npy_rshift): a count y that is negative or
 * at least the bit width (compared as unsigned, so a negative count is
 * huge) gives 0, and for >> of a negative x -1 (the sign fills every bit);
 * within range << wraps and >> of a negative x is arithmetic, written as
 * ~(~x >> y) in W so that neither is undefined or implementation-defined.
 * gcd/lcm as NumPy's npy_gcd/npy_lcm: on |x| and |y| as W (|MIN| is
 * 2^(w-1)), wrapping, cast back: gcd(MIN, 0) = MIN, lcm(x, 0) = 0. */
#define NDS_INT_SHIFT_GCD(S, W, NEG_X, ABS_X, ABS_Y)                                           \
    NDS_INLINE S##_T nds_left_shift_##S(S##_T x, S##_T y) {                                    \
        return (S##_T)((U64_T)(I64_T)y < 8 * sizeof(S##_T) ? (W)x << y : (W)0);                \
    }                                                                                          \
    NDS_INLINE S##_T nds_right_shift_##S(S##_T x, S##_T y) {                                   \
        const W neg = (NEG_X) ? ~(W)0 : (W)0; /* all ones for a negative x */                  \
        if ((U64_T)(I64_T)y >= 8 * sizeof(S##_T)) return (S##_T)neg;                           \
        return (S##_T)(neg ^ ((neg ^ (W)x) >> y));                                             \
    }                                                                                          \
    NDS_BIN(gcd, S, nds_gcdw_##W(ABS_X, ABS_Y))                                                \
    NDS_INLINE S##_T nds_lcm_##S(S##_T x, S##_T y) {                                           \
        const W a = ABS_X, b = ABS_Y, g = nds_gcdw_##W(a, b);                                  \
        return (S##_T)(g == 0 ? (W)0 : a / g * b);                                             \
    }

/* reciprocal is NumPy's integer 1/x (truncating, without its warning for
 * 0): 1 and -1 are their own reciprocals, every other value gives 0.
 * Integer remainder takes the divisor's sign, fmod the dividend's; both give
 * 0 for x % 0 and MIN % -1 (no trap). fmax/fmin of integers are
 * maximum/minimum.
 * Integer DIV is NumPy's floor division (//) without its warnings and
 * traps: x // 0 is 0, MIN // -1 wraps to MIN. A negative exponent gives 0
 * unless the base is 1 or -1 (NumPy raises; the frontend refuses a negative
 * Python-int exponent at record time). */
#define NDS_INT_SIGNED(S, W)                                                                   \
    NDS_INT_COMMON(S, W)                                                                       \
    NDS_UN(abs, S, x < 0 ? (S##_T)((W)0 - (W)x) : x)                                           \
    NDS_UN(sign, S, (x > 0) - (x < 0))                                                         \
    NDS_UN(reciprocal, S, x == 1 ? 1 : x == -1 ? -1 : 0)                                       \
    NDS_INLINE S##_T nds_div_##S(S##_T x, S##_T y) {                                           \
        if (y == 0) return 0;                                                                  \
        if (y == -1) return (S##_T)((W)0 - (W)x);                                              \
        S##_T q = (S##_T)(x / y);                                                              \
        return (S##_T)(q - ((x % y != 0) & ((x < 0) != (y < 0))));                             \
    }                                                                                          \
    NDS_BIN(pow, S, y < 0 ? (x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0)                    \
                          : (S##_T)nds_ipow((U64_T)(I64_T)x, (U64_T)(I64_T)y))                \
    NDS_BIN(floor_divide, S, nds_div_##S(x, y))                                                \
    NDS_INLINE S##_T nds_remainder_##S(S##_T x, S##_T y) {                                     \
        if (y == 0 || y == -1) return 0;                                                       \
        S##_T r = (S##_T)(x % y);                                                              \
        return (S##_T)((r != 0 && ((r < 0) != (y < 0))) ? r + y : r);                          \
    }                                                                                          \
    NDS_BIN(fmod, S, (y == 0 || y == -1) ? 0 : x % y)                                          \
    NDS_INT_SHIFT_GCD(S, W, x < 0, x < 0 ? (W)0 - (W)x : (W)x, y < 0 ? (W)0 - (W)y : (W)y)

#define NDS_INT_UNSIGNED(S, W)                                                                 \
    NDS_INT_COMMON(S, W)                                                                       \
    NDS_UN(abs, S, x)                                                                          \
    NDS_UN(sign, S, x != 0)                                                                    \
    NDS_UN(reciprocal, S, x == 1)                                                              \
    NDS_BIN(div, S, y == 0 ? 0 : x / y)                                                        \
    NDS_BIN(floor_divide, S, y == 0 ? 0 : x / y)                                               \
    NDS_BIN(remainder, S, y == 0 ? 0 : x % y)                                                  \
    NDS_BIN(fmod, S, y == 0 ? 0 : x % y)                                                       \
    NDS_BIN(pow, S, nds_ipow(x, y))                                                            \
    NDS_INT_SHIFT_GCD(S, W, 0, (W)x, (W)y)

NDS_INT_SIGNED(I8, U32_T)
NDS_INT_SIGNED(I16, U32_T)
NDS_INT_SIGNED(I32, U32_T)
NDS_INT_SIGNED(I64, U64_T)
NDS_INT_UNSIGNED(U8, U32_T)
NDS_INT_UNSIGNED(U16, U32_T)
NDS_INT_UNSIGNED(U32, U32_T)
NDS_INT_UNSIGNED(U64, U64_T)

/* ----------------------------------------------------------------- floats */

/* rint rounds half to even (the default rounding mode, which nd never
 * changes). sign: NaN gives NaN, -0.0 gives +0.0 (NumPy).
 * maximum/minimum propagate NaN (x's if both are); of +0 and -0 they give
 * x (IEEE allows either; NumPy's float32/64 loops give y, its float16 loop
 * x). */
#define NDS_FLOAT_SET(S, SUF)                                                                  \
    NDS_UN(neg, S, -x)                                                                         \
    NDS_UN(abs, S, fabs##SUF(x))                                                               \
    NDS_UN(square, S, x * x)                                                                   \
    NDS_UN(sqrt, S, sqrt##SUF(x))                                                              \
    NDS_UN(exp, S, exp##SUF(x))                                                                \
    NDS_UN(log, S, log##SUF(x))                                                                \
    NDS_UN(sin, S, sin##SUF(x))                                                                \
    NDS_UN(cos, S, cos##SUF(x))                                                                \
    NDS_UN(tanh, S, tanh##SUF(x))                                                              \
    NDS_UN(tan, S, tan##SUF(x))                                                                \
    NDS_UN(arcsin, S, asin##SUF(x))                                                            \
    NDS_UN(arccos, S, acos##SUF(x))                                                            \
    NDS_UN(arctan, S, atan##SUF(x))                                                            \
    NDS_UN(sinh, S, sinh##SUF(x))                                                              \
    NDS_UN(cosh, S, cosh##SUF(x))                                                              \
    NDS_UN(arcsinh, S, asinh##SUF(x))                                                          \
    NDS_UN(arccosh, S, acosh##SUF(x))                                                          \
    NDS_UN(arctanh, S, atanh##SUF(x))                                                          \
    NDS_UN(exp2, S, exp2##SUF(x))                                                              \
    NDS_UN(expm1, S, expm1##SUF(x))                                                            \
    NDS_UN(log2, S, log2##SUF(x))                                                              \
    NDS_UN(log10, S, log10##SUF(x))                                                            \
    NDS_UN(log1p, S, log1p##SUF(x))                                                            \
    NDS_UN(cbrt, S, cbrt##SUF(x))                                                              \
    NDS_UN(rint, S, rint##SUF(x))                                                              \
    NDS_UN(deg2rad, S, x * ((S##_T)3.14159265358979323846264338327950288 / (S##_T)180))        \
    NDS_UN(rad2deg, S, x * ((S##_T)180 / (S##_T)3.14159265358979323846264338327950288))        \
    NDS_BIN(heaviside, S, x < 0 ? (S##_T)0 : x > 0 ? (S##_T)1 : x == 0 ? y : x)                 \
    NDS_UN(trunc, S, trunc##SUF(x))                                                            \
    NDS_UN(reciprocal, S, (S##_T)1 / x)                                                        \
    NDS_UN(sign, S, x > 0 ? (S##_T)1 : x < 0 ? (S##_T)-1 : x == 0 ? (S##_T)0 : x)              \
    NDS_BIN(add, S, x + y)                                                                     \
    NDS_BIN(sub, S, x - y)                                                                     \
    NDS_BIN(mul, S, x * y)                                                                     \
    NDS_BIN(div, S, x / y)                                                                     \
    NDS_BIN(pow, S, pow##SUF(x, y))                                                            \
    NDS_BIN(maximum, S, (x >= y || x != x) ? x : y)                                            \
    NDS_BIN(minimum, S, (x <= y || x != x) ? x : y)                                            \
    NDS_BIN(fmax, S, (x >= y || y != y) ? x : y)                                               \
    NDS_BIN(fmin, S, (x <= y || y != y) ? x : y)                                               \
    NDS_BIN(arctan2, S, atan2##SUF(x, y))                                                      \
    NDS_BIN(hypot, S, hypot##SUF(x, y))                                                        \
    NDS_BIN(copysign, S, copysign##SUF(x, y))                                                  \
    NDS_BIN(fmod, S, fmod##SUF(x, y))                                                          \
    NDS_BIN(nextafter, S, nextafter##SUF(x, y))                                                \
    /* x * 2^y for an integer y held in S: beyond +-2200 every finite x has                    \
     * already overflowed or underflowed, so the clamp changes nothing */                      \
    NDS_INLINE S##_T nds_ldexp_##S(S##_T x, S##_T y) {                                         \
        if (y != y) return y;                                                                  \
        const S##_T c = y < (S##_T)-2200 ? (S##_T)-2200 : y > (S##_T)2200 ? (S##_T)2200 : y;   \
        return ldexp##SUF(x, (int)c);                                                          \
    }                                                                                          \
    /* NumPy's npy_logaddexp and npy_logaddexp2, their constants too */                        \
    NDS_INLINE S##_T nds_logaddexp_##S(S##_T x, S##_T y) {                                     \
        if (x == y) return x + (S##_T)0.693147180559945309417232121458176568;                  \
        const S##_T d = x - y;                                                                 \
        if (d > 0) return x + log1p##SUF(exp##SUF(-d));                                        \
        if (d <= 0) return y + log1p##SUF(exp##SUF(d));                                        \
        return d;                                                                              \
    }                                                                                          \
    NDS_INLINE S##_T nds_logaddexp2_##S(S##_T x, S##_T y) {                                    \
        const S##_T log2e = (S##_T)1.442695040888963407359924681001892137;                     \
        if (x == y) return x + (S##_T)1;                                                       \
        const S##_T d = x - y;                                                                 \
        if (d > 0) return x + log2e * log1p##SUF(exp2##SUF(-d));                               \
        if (d <= 0) return y + log2e * log1p##SUF(exp2##SUF(d));                               \
        return d;                                                                              \
    }                                                                                          \
    /* NumPy's npy_divmod: the quotient and the remainder of floor division */                 \
    NDS_INLINE S##_T nds_divmod_##S(S##_T a, S##_T b, S##_T *mod) {                            \
        S##_T m = fmod##SUF(a, b);                                                             \
        if (b == 0) {                                                                          \
            *mod = m;                                                                          \
            return a / b;                                                                      \
        }                                                                                      \
        S##_T div = (a - m) / b;                                                               \
        if (m != 0) {                                                                          \
            if ((b < 0) != (m < 0)) {                                                          \
                m += b;                                                                        \
                div -= (S##_T)1;                                                               \
            }                                                                                  \
        } else {                                                                               \
            m = copysign##SUF((S##_T)0, b);                                                    \
        }                                                                                      \
        S##_T fl;                                                                              \
        if (div != 0) {                                                                        \
            fl = floor##SUF(div);                                                              \
            if (div - fl > (S##_T)0.5) fl += (S##_T)1;                                         \
        } else {                                                                               \
            fl = copysign##SUF((S##_T)0, a / b);                                               \
        }                                                                                      \
        *mod = m;                                                                              \
        return fl;                                                                             \
    }                                                                                          \
    NDS_INLINE S##_T nds_floor_divide_##S(S##_T x, S##_T y) {                                  \
        S##_T m;                                                                               \
        return nds_divmod_##S(x, y, &m);                                                       \
    }                                                                                          \
    NDS_INLINE S##_T nds_remainder_##S(S##_T x, S##_T y) {                                     \
        S##_T m;                                                                               \
        nds_divmod_##S(x, y, &m);                                                              \
        return m;                                                                              \
    }

NDS_FLOAT_SET(F32, f)
NDS_FLOAT_SET(F64, )

/* nextafter in a narrower binary format (p significant bits, smallest
 * normal exponent emin, largest finite value mx) for x and y of that
 * format held in float32: NumPy's npy_half_nextafter (x == y gives x, a
 * zero steps to the smallest subnormal with y's sign, an infinity to +-mx),
 * by adding the format's spacing at x (half of it below a power of two when
 * stepping toward zero, never less than the subnormal spacing). Every value
 * involved is a float32, so each operation is exact; stepping past mx gives
 * a value that the cast to the format rounds to infinity. */
NDS_INLINE F32_T nds_next_in_format(F32_T x, F32_T y, int p, int emin, F32_T mx) {
    if (x != x || y != y) return x + y;
    if (x == y) return x;
    const int qmin = emin - p + 1;
    if (x == 0) return y > 0 ? ldexpf(1.0f, qmin) : -ldexpf(1.0f, qmin);
    if (x - x != x - x) return x > 0 ? mx : -mx;
    int e;
    const F32_T m = frexpf(x, &e); /* |x| in [2^(e-1), 2^e) */
    int q = e - p;
    const int away = (y > x) == (x > 0);
    if (!away && (m == 0.5f || m == -0.5f)) q -= 1;
    if (q < qmin) q = qmin;
    const F32_T u = ldexpf(1.0f, q);
    return y > x ? x + u : x - u;
}
NDS_BIN(nextafter_f16, F32, nds_next_in_format(x, y, 11, -14, 65504.0f))
NDS_BIN(nextafter_bf16, F32, nds_next_in_format(x, y, 8, -126, 3.38953138925153547590470800371487866e38f))

/* floor/ceil of float32 without SSE4.1's roundps: truncate through int32
 * where |x| < 2^23 (every float beyond is already integral), then step;
 * copysign keeps -0.0. Exactly floorf/ceilf (the same bits for every float),
 * and vectorisable on baseline x86-64; a GPU has one instruction for each. */
#if defined(NDS_CUDA)
NDS_UN(floor, F32, floorf(x))
NDS_UN(ceil, F32, ceilf(x))
#else
NDS_UN(floor, F32,
       copysignf(fabsf(x) < 0x1p23f ? ((float)(I32_T)x > x ? (float)(I32_T)x - 1.0f
                                                          : (float)(I32_T)x)
                                    : x,
                 x))
NDS_UN(ceil, F32,
       copysignf(fabsf(x) < 0x1p23f ? ((float)(I32_T)x < x ? (float)(I32_T)x + 1.0f
                                                          : (float)(I32_T)x)
                                    : x,
                 x))
#endif
NDS_UN(floor, F64, floor(x))
NDS_UN(ceil, F64, ceil(x))


/* ---------------------------------------------------------------- complex */

/* NumPy's complex loops (umath/loops.c.src) for C64 (parts P = F32) and
 * C128 (P = F64):
 *   + - and negative componentwise; * and square the textbook formula
 *   (no C99 Annex G recovery of infinities: NumPy's neither); / by Smith's
 *   method as NumPy (a zero divisor divides each part by +0); reciprocal
 *   NumPy's; conj negates the imaginary part;
 *   comparisons lexicographic with NumPy's NaN rule (CLT etc.: the real
 *   parts decide only when neither imaginary part is NaN); maximum/minimum
 *   propagate a NaN in either part (the first operand's), fmax/fmin ignore
 *   one; isnan/isinf: either part, isfinite: both;
 *   abs hypot(re, im), angle atan2(im, re), real/imag the parts.
 * exp, log, sqrt, sin, cos, tan, sinh, cosh and tanh are C99's functions
 * (cexp, ...) with their special values
 * (Annex G; NumPy calls the C library's): complex64 computes them in
 * complex128 and rounds each part once, as FreeBSD's csqrtf does.
 *   exp: exp(x) cis(y); y == 0 gives (exp(x), y); x = +-inf as Annex G;
 *        x > 709 scales through exp(x / 2) so that a finite result does not
 *        overflow on the way
 *   log: (log|z|, atan2(y, x)), log|z| as log1p near |z| = 1 (no
 *        cancellation there)
 *   sqrt: FreeBSD's csqrt (Algorithm 312, CACM 10), scaled by 1/4 near
 *        overflow */
#define NDS_CPLX_BASE(S, P, SUF)                                                               \
    NDS_INLINE S##_T nds_mk_##S(P##_T re, P##_T im) {                                          \
        S##_T z;                                                                               \
        z.re = re;                                                                             \
        z.im = im;                                                                             \
        return z;                                                                              \
    }                                                                                          \
    NDS_INLINE BOOL_T nds_pnan_##S(P##_T v) { return v != v; }                                 \
    NDS_INLINE BOOL_T nds_pinf_##S(P##_T v) { return v == v && v - v != v - v; }               \
    NDS_INLINE S##_T nds_add_##S(S##_T x, S##_T y) { return nds_mk_##S(x.re + y.re, x.im + y.im); } \
    NDS_INLINE S##_T nds_sub_##S(S##_T x, S##_T y) { return nds_mk_##S(x.re - y.re, x.im - y.im); } \
    NDS_INLINE S##_T nds_mul_##S(S##_T x, S##_T y) {                                           \
        return nds_mk_##S(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re);               \
    }                                                                                          \
    NDS_INLINE S##_T nds_square_##S(S##_T x) { return nds_mul_##S(x, x); }                    \
    NDS_INLINE S##_T nds_neg_##S(S##_T x) { return nds_mk_##S(-x.re, -x.im); }                \
    NDS_INLINE S##_T nds_conj_##S(S##_T x) { return nds_mk_##S(x.re, -x.im); }               \
    NDS_INLINE S##_T nds_div_##S(S##_T a, S##_T b) {                                           \
        const P##_T br = fabs##SUF(b.re), bi = fabs##SUF(b.im);                                \
        if (br >= bi) {                                                                        \
            if (br == 0 && bi == 0) return nds_mk_##S(a.re / br, a.im / br);                   \
            const P##_T rat = b.im / b.re, scl = (P##_T)1 / (b.re + b.im * rat);               \
            return nds_mk_##S((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);           \
        }                                                                                      \
        const P##_T rat = b.re / b.im, scl = (P##_T)1 / (b.im + b.re * rat);                   \
        return nds_mk_##S((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);              \
    }                                                                                          \
    NDS_INLINE S##_T nds_reciprocal_##S(S##_T x) {                                             \
        if (fabs##SUF(x.im) <= fabs##SUF(x.re)) {                                              \
            const P##_T r = x.im / x.re, d = x.re + x.im * r;                                  \
            return nds_mk_##S((P##_T)1 / d, -r / d);                                           \
        }                                                                                      \
        const P##_T r = x.re / x.im, d = x.re * r + x.im;                                      \
        return nds_mk_##S(r / d, (P##_T)-1 / d);                                               \
    }                                                                                          \
    NDS_CMP(eq, S, x.re == y.re && x.im == y.im)                                               \
    NDS_CMP(ne, S, x.re != y.re || x.im != y.im)                                               \
    NDS_CMP(lt, S, (x.re < y.re && !nds_pnan_##S(x.im) && !nds_pnan_##S(y.im)) ||              \
                       (x.re == y.re && x.im < y.im))                                          \
    NDS_CMP(le, S, (x.re < y.re && !nds_pnan_##S(x.im) && !nds_pnan_##S(y.im)) ||              \
                       (x.re == y.re && x.im <= y.im))                                         \
    NDS_CMP(gt, S, (x.re > y.re && !nds_pnan_##S(x.im) && !nds_pnan_##S(y.im)) ||              \
                       (x.re == y.re && x.im > y.im))                                          \
    NDS_CMP(ge, S, (x.re > y.re && !nds_pnan_##S(x.im) && !nds_pnan_##S(y.im)) ||              \
                       (x.re == y.re && x.im >= y.im))                                         \
    NDS_INLINE S##_T nds_maximum_##S(S##_T x, S##_T y) {                                       \
        return (nds_pnan_##S(x.re) || nds_pnan_##S(x.im) || nds_ge_##S(x, y)) ? x : y;         \
    }                                                                                          \
    NDS_INLINE S##_T nds_minimum_##S(S##_T x, S##_T y) {                                       \
        return (nds_pnan_##S(x.re) || nds_pnan_##S(x.im) || nds_le_##S(x, y)) ? x : y;         \
    }                                                                                          \
    NDS_INLINE S##_T nds_fmax_##S(S##_T x, S##_T y) {                                          \
        return (nds_pnan_##S(y.re) || nds_pnan_##S(y.im) || nds_ge_##S(x, y)) ? x : y;         \
    }                                                                                          \
    NDS_INLINE S##_T nds_fmin_##S(S##_T x, S##_T y) {                                          \
        return (nds_pnan_##S(y.re) || nds_pnan_##S(y.im) || nds_le_##S(x, y)) ? x : y;         \
    }                                                                                          \
    NDS_PRED(isnan, S, nds_pnan_##S(x.re) || nds_pnan_##S(x.im))                               \
    NDS_PRED(isinf, S, nds_pinf_##S(x.re) || nds_pinf_##S(x.im))                               \
    NDS_PRED(isfinite, S, x.re - x.re == x.re - x.re && x.im - x.im == x.im - x.im)            \
    NDS_INLINE S##_T nds_make_complex_##S(P##_T re, P##_T im) { return nds_mk_##S(re, im); }   \
    NDS_INLINE P##_T nds_real_##S(S##_T x) { return x.re; }                                    \
    NDS_INLINE P##_T nds_imag_##S(S##_T x) { return x.im; }                                    \
    NDS_INLINE P##_T nds_cabs_##S(S##_T x) { return hypot##SUF(x.re, x.im); }                  \
    NDS_INLINE P##_T nds_angle_##S(S##_T x) { return atan2##SUF(x.im, x.re); }

NDS_CPLX_BASE(C64, F32, f)
NDS_CPLX_BASE(C128, F64, )

NDS_INLINE C128_T nds_exp_C128(C128_T z) {
    const F64_T x = z.re, y = z.im;
    if (y == 0) return nds_mk_C128(exp(x), y);
    if (nds_pinf_C128(x)) {
        if (y - y != y - y) return x > 0 ? nds_mk_C128(x, y - y) : nds_mk_C128(0.0, 0.0);
        const F64_T m = x > 0 ? x : 0.0;
        return nds_mk_C128(m * cos(y), m * sin(y));
    }
    if (x != x || y - y != y - y) {
        const F64_T nan = x + (y - y);
        return nds_mk_C128(nan, nan);
    }
    if (x > 709.0) {
        const F64_T e = exp(x * 0.5);
        return nds_mk_C128(e * cos(y) * e, e * sin(y) * e);
    }
    const F64_T e = exp(x);
    return nds_mk_C128(e * cos(y), e * sin(y));
}

NDS_INLINE C128_T nds_log_C128(C128_T z) {
    const F64_T ax = fabs(z.re), ay = fabs(z.im);
    const F64_T big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    F64_T lr;
    if (nds_pinf_C128(ax) || nds_pinf_C128(ay))
        lr = nds_pinf_C128(ax) ? ax : ay; /* +inf, a NaN other part too */
    else if (big != big || small != small)
        lr = big + small; /* NaN */
    else if (big == 0)
        lr = -1.0 / big; /* -inf */
    else if (big > 0.5 && big < 2.0 && small < 1.0) /* |z| near 1: no cancellation */
        lr = 0.5 * log1p((big - 1.0) * (big + 1.0) + small * small);
    else { /* log|z| without forming |z|, which overflows or is subnormal at the ends */
        const F64_T r = small / big;
        lr = log(big) + 0.5 * log1p(r * r);
    }
    return nds_mk_C128(lr, atan2(z.im, z.re));
}

NDS_INLINE C128_T nds_sqrt_C128(C128_T z) {
    F64_T a = z.re, b = z.im;
    if (a == 0 && b == 0) return nds_mk_C128(0.0, b);
    if (nds_pinf_C128(b)) return nds_mk_C128(b > 0 ? b : -b, b);
    if (a != a) {
        const F64_T t = (b - b) / (b - b);
        return nds_mk_C128(a, t);
    }
    if (nds_pinf_C128(a)) {
        if (a < 0) return nds_mk_C128(fabs(b - b), copysign(a, b));
        return nds_mk_C128(a, copysign(b - b, b));
    }
    /* 0x1.a827999fcef32p+1022: (a + hypot(a, b)) / 2 stays finite below */
    const F64_T thresh = 7.446288774449766e307;
    const int scale = fabs(a) >= thresh || fabs(b) >= thresh;
    if (scale) {
        a *= 0.25;
        b *= 0.25;
    }
    /* both parts below the normal range: 2^54 up, 2^-27 back (newer
     * FreeBSD; otherwise t underflows and b / (2 t) is inf) */
    const int tiny = fabs(a) < 4.450147717014403e-308 && fabs(b) < 4.450147717014403e-308;
    if (tiny) {
        a *= 18014398509481984.0;
        b *= 18014398509481984.0;
    }
    C128_T r;
    if (a >= 0) {
        const F64_T t = sqrt((a + hypot(a, b)) * 0.5);
        r = nds_mk_C128(t, b / (2 * t));
    } else {
        const F64_T t = sqrt((-a + hypot(a, b)) * 0.5);
        r = nds_mk_C128(fabs(b) / (2 * t), copysign(t, b));
    }
    if (tiny) return nds_mk_C128(r.re * 7.450580596923828125e-9, r.im * 7.450580596923828125e-9);
    return scale ? nds_mk_C128(r.re * 2, r.im * 2) : r;
}


/* C99's csinh/ccosh/ctanh (FreeBSD's, Annex G's special values; ctanh is
 * Kahan's algorithm); csin, ccos, ctan through them: sin z = -i sinh(iz),
 * cos z = cosh(iz), tan z = -i tanh(iz). Beyond |x| = 22 exp(-|x|) is
 * below an ulp of cosh(x): the exponential alone, scaled through
 * exp(|x| / 2) where exp(|x|) overflows and the result need not. */
NDS_INLINE F64_T nds_halfexp_C128(F64_T ax) { return ax < 709.0 ? 0.5 * exp(ax) : 0.5 * exp(0.5 * ax); }
NDS_INLINE C128_T nds_sinh_C128(C128_T z) {
    const F64_T x = z.re, y = z.im, ax = fabs(x);
    if (y == 0) return nds_mk_C128(sinh(x), y);
    if (x != x) return nds_mk_C128(x, x);
    if (nds_pinf_C128(x)) {
        if (y - y != y - y) return nds_mk_C128(x * x, x * (y - y));
        return nds_mk_C128(x * cos(y), x * x * sin(y));
    }
    if (y - y != y - y) return x == 0 ? nds_mk_C128(x, y - y) : nds_mk_C128(y - y, y - y);
    if (ax < 22) return nds_mk_C128(sinh(x) * cos(y), cosh(x) * sin(y));
    const F64_T h = nds_halfexp_C128(ax), e = ax < 709.0 ? 1.0 : h * 2.0;
    return nds_mk_C128(copysign(h, x) * cos(y) * e, h * sin(y) * e);
}
NDS_INLINE C128_T nds_cosh_C128(C128_T z) {
    const F64_T x = z.re, y = z.im, ax = fabs(x);
    if (y == 0) return nds_mk_C128(cosh(x), x == x ? copysign(0.0, x) * y : y);
    if (x != x) return nds_mk_C128(x, x);
    if (nds_pinf_C128(x)) {
        if (y - y != y - y) return nds_mk_C128(x * x, x * (y - y));
        return nds_mk_C128(x * x * cos(y), x * sin(y));
    }
    if (y - y != y - y) return x == 0 ? nds_mk_C128(y - y, x * copysign(0.0, y)) : nds_mk_C128(y - y, x * (y - y));
    if (ax < 22) return nds_mk_C128(cosh(x) * cos(y), sinh(x) * sin(y));
    const F64_T h = nds_halfexp_C128(ax), e = ax < 709.0 ? 1.0 : h * 2.0;
    return nds_mk_C128(h * cos(y) * e, copysign(h, x) * sin(y) * e);
}
NDS_INLINE C128_T nds_tanh_C128(C128_T z) {
    const F64_T x = z.re, y = z.im;
    if (x != x) return nds_mk_C128(x, y == 0 ? y : x);
    if (nds_pinf_C128(x)) return nds_mk_C128(copysign(1.0, x), copysign(0.0, nds_pinf_C128(y) ? y : sin(y) * cos(y)));
    if (y - y != y - y) return nds_mk_C128(x != 0 ? y - y : x, y - y);
    if (fabs(x) >= 22) {
        const F64_T em = exp(-fabs(x));
        return nds_mk_C128(copysign(1.0, x), 4 * sin(y) * cos(y) * em * em);
    }
    const F64_T t = tan(y), beta = 1.0 + t * t, sh = sinh(x), rho = sqrt(1 + sh * sh);
    const F64_T denom = 1 + beta * sh * sh;
    return nds_mk_C128((beta * rho * sh) / denom, t / denom);
}
NDS_INLINE C128_T nds_sin_C128(C128_T z) {
    const C128_T w = nds_sinh_C128(nds_mk_C128(-z.im, z.re));
    return nds_mk_C128(w.im, -w.re);
}
NDS_INLINE C128_T nds_cos_C128(C128_T z) { return nds_cosh_C128(nds_mk_C128(-z.im, z.re)); }
NDS_INLINE C128_T nds_tan_C128(C128_T z) {
    const C128_T w = nds_tanh_C128(nds_mk_C128(-z.im, z.re));
    return nds_mk_C128(w.im, -w.re);
}

/* Inverse trigonometric and hyperbolic functions (C99's casin .. catanh,
 * Annex G's special values, which NumPy gets from the C library): Kahan's
 * formulas ("Branch cuts for complex elementary functions", 1987), which
 * keep the signed zeros on the branch cuts and need no scaling, since
 * sqrt(1 - z) sqrt(1 + z) is of the size of z:
 *   asin z  = (atan2(x, Re(sqrt(1-z) sqrt(1+z))), asinh(Im(conj(sqrt(1-z)) sqrt(1+z))))
 *   acos z  = (2 atan2(Re sqrt(1-z), Re sqrt(1+z)), asinh(Im(conj(sqrt(1+z)) sqrt(1-z))))
 *   atanh z: Kahan's ATANH (Re z >= 0 through atanh(-conj z) = -conj atanh z)
 *   asinh z = -i asin(iz), atan z = -i atanh(iz), acosh z = +-i acos z
 *   (FreeBSD's cacosh: the sign that makes the real part >= 0).
 * Non-finite operands take Annex G's table before the formulas. */
NDS_INLINE C128_T nds_casin_fin_C128(C128_T z) {
    if (fabs(z.re) > 1e150 || fabs(z.im) > 1e150) {
        /* beyond it sqrt(1 - z) sqrt(1 + z) may overflow: asin z =
         * -i asinh(iz), asinh w = log(2w) + O(1/w^2) for Re w >= +0, odd */
        const F64_T s = copysign(1.0, -z.im);
        const C128_T l = nds_log_C128(nds_mk_C128(-s * z.im, s * z.re));
        return nds_mk_C128(s * l.im, -s * (l.re + 0.6931471805599453));
    }
    const C128_T a = nds_sqrt_C128(nds_mk_C128(1.0 - z.re, -z.im));
    const C128_T b = nds_sqrt_C128(nds_mk_C128(1.0 + z.re, z.im));
    return nds_mk_C128(atan2(z.re, a.re * b.re - a.im * b.im), asinh(a.re * b.im - a.im * b.re));
}
NDS_INLINE C128_T nds_arcsinh_C128(C128_T z) {
    const F64_T x = z.re, y = z.im, ax = fabs(x), ay = fabs(y);
    if (x - x == 0 && y - y == 0) { /* finite: -i asin(iz) */
        const C128_T w = nds_casin_fin_C128(nds_mk_C128(-y, x));
        return nds_mk_C128(w.im, -w.re);
    }
    F64_T re, im;
    if (x != x) {
        if (y == 0) return nds_mk_C128(x, y);
        re = nds_pinf_C128(ay) ? ay : x;
        im = x;
    } else if (nds_pinf_C128(ax)) {
        re = ax;
        im = y != y ? y : nds_pinf_C128(ay) ? 0.7853981633974483 : 0.0;
    } else { /* x finite, y infinite or NaN */
        re = y != y ? y : ay;
        im = y != y ? y : 1.5707963267948966;
    }
    return nds_mk_C128(x != x ? re : copysign(re, x), im != im ? im : copysign(im, y));
}
NDS_INLINE C128_T nds_arcsin_C128(C128_T z) {
    if (z.re - z.re == 0 && z.im - z.im == 0) return nds_casin_fin_C128(z);
    const C128_T w = nds_arcsinh_C128(nds_mk_C128(-z.im, z.re)); /* asin z = -i asinh(iz) */
    /* asin(+-inf + NaN i) = NaN +- inf i, the sign unspecified: glibc's + */
    return nds_mk_C128(w.im, z.im != z.im ? fabs(w.re) : -w.re);
}
NDS_INLINE C128_T nds_arccos_C128(C128_T z) {
    const F64_T x = z.re, y = z.im;
    if (x - x == 0 && y - y == 0) {
        if (fabs(x) > 1e150 || fabs(y) > 1e150) { /* acos z = -i log(2z) for Im z >= 0 */
            const C128_T l = nds_log_C128(nds_mk_C128(x, fabs(y)));
            return nds_mk_C128(l.im, copysign(l.re + 0.6931471805599453, -y));
        }
        const C128_T a = nds_sqrt_C128(nds_mk_C128(1.0 - x, -y));
        const C128_T b = nds_sqrt_C128(nds_mk_C128(1.0 + x, y));
        return nds_mk_C128(2.0 * atan2(a.re, b.re), asinh(b.re * a.im - b.im * a.re));
    }
    F64_T re, im;
    const F64_T pi = 3.141592653589793, inf = fabs(nds_pinf_C128(x) ? x : y);
    if (x != x) {
        re = x;
        im = nds_pinf_C128(y) ? -inf : x;
    } else if (nds_pinf_C128(x)) {
        if (y != y) return nds_mk_C128(y, -inf); /* NaN -+ i inf, the sign unspecified: glibc's */
        re = nds_pinf_C128(y) ? (x > 0 ? pi / 4 : 3 * pi / 4) : (x > 0 ? 0.0 : pi);
        im = -inf;
    } else if (y != y) {
        re = x == 0 ? pi / 2 : y;
        im = y;
    } else {
        re = pi / 2;
        im = -inf;
    }
    return nds_mk_C128(re, y == y && copysign(1.0, y) < 0 ? -im : im); /* acos conj z = conj acos z */
}
NDS_INLINE C128_T nds_arccosh_C128(C128_T z) {
    const C128_T w = nds_arccos_C128(z);
    if (w.re != w.re && w.im != w.im) return nds_mk_C128(w.im, w.re);
    if (w.re != w.re) return nds_mk_C128(fabs(w.im), w.re);
    if (w.im != w.im) return nds_mk_C128(w.im, z.re == 0 ? w.re : w.im); /* glibc: acosh(0 + NaN i) = NaN + pi/2 i */
    return nds_mk_C128(fabs(w.im), copysign(w.re, z.im));
}
NDS_INLINE C128_T nds_arctanh_C128(C128_T z) {
    const F64_T x0 = z.re, y0 = z.im;
    const F64_T half_pi = 1.5707963267948966;
    if (x0 != x0 || y0 != y0) {
        if (nds_pinf_C128(y0)) return nds_mk_C128(copysign(0.0, x0), copysign(half_pi, y0));
        if (nds_pinf_C128(x0) || x0 == 0) return nds_mk_C128(copysign(0.0, x0), y0 + x0);
        return nds_mk_C128(x0 + y0, x0 + y0);
    }
    if (nds_pinf_C128(x0) || nds_pinf_C128(y0))
        return nds_mk_C128(copysign(0.0, x0), copysign(half_pi, y0));
    /* theta = sqrt(DBL_MAX) / 4: beyond it atanh z = 1/z + O(1/z^3) (Kahan's
     * rho = 1 / theta, added to |y| so that y^2 cannot underflow, is left
     * out: it changes atanh(1 + yi) for |y| < rho, and (1 - x)^2 >=
     * 2^-106 dominates a lost y^2 everywhere else) */
    const F64_T theta = 3.3519519824856493e153;
    const F64_T beta = copysign(1.0, x0), x = fabs(x0), y = -beta * y0;
    F64_T xi, eta;
    if (x == 1 && y == 0) {
        xi = 1.0 / (x - 1.0); /* the pole: 1 / +0 = +inf */
        eta = y;
    } else if (x > theta || fabs(y) > theta) {
        eta = copysign(half_pi, y);
        xi = nds_reciprocal_C128(nds_mk_C128(x, y)).re;
    } else if (x == 1) {
        const F64_T ay = fabs(y);
        xi = 0.25 * log(4.0 + y * y) - 0.5 * log(ay);
        eta = copysign(half_pi + atan(ay / 2.0), y) / 2.0;
    } else {
        const F64_T t = fabs(y);
        xi = log1p(4.0 * x / ((1.0 - x) * (1.0 - x) + t * t)) / 4.0;
        eta = atan2(2.0 * y, (1.0 - x) * (1.0 + x) - t * t) / 2.0;
    }
    return nds_mk_C128(beta * xi, -beta * eta);
}
NDS_INLINE C128_T nds_arctan_C128(C128_T z) {
    const C128_T w = nds_arctanh_C128(nds_mk_C128(-z.im, z.re)); /* atan z = -i atanh(iz) */
    return nds_mk_C128(w.im, -w.re);
}

/* NumPy's nc_log10/nc_log2 (log z scaled by log10(e), log2(e)), nc_exp2
 * (exp(z ln 2)) and nc_expm1 ((expm1(x) cos y - 2 sin^2(y/2), e^x sin y)
 * for |x| < 1; beyond it exp(z) - 1, so that e^x past
 * overflow stays as finite as exp z, and non-finite parts as cexp's; a
 * real z gives expm1(x) + 0j, where NumPy's formula gives inf * 0 = NaN
 * for x = inf); log1p as log(1 + z), with
 * log|1 + z| = log1p(2x + x^2 + y^2) / 2 near 0 (NumPy's
 * log(hypot(1 + x, y)) loses the digits of a small z). */
NDS_INLINE C128_T nds_log10_C128(C128_T z) {
    const C128_T w = nds_log_C128(z);
    return nds_mk_C128(w.re * 0.4342944819032518, w.im * 0.4342944819032518);
}
NDS_INLINE C128_T nds_log2_C128(C128_T z) {
    const C128_T w = nds_log_C128(z);
    return nds_mk_C128(w.re * 1.4426950408889634, w.im * 1.4426950408889634);
}
NDS_INLINE C128_T nds_exp2_C128(C128_T z) {
    return nds_exp_C128(nds_mk_C128(z.re * 0.6931471805599453, z.im * 0.6931471805599453));
}
NDS_INLINE C128_T nds_expm1_C128(C128_T z) {
    const F64_T x = z.re, y = z.im;
    if (y == 0) return nds_mk_C128(expm1(x), y);
    if (!(fabs(x) < 1)) { /* |e^z| >= e or <= 1/e: no cancellation; scaled past overflow */
        const C128_T e = nds_exp_C128(z);
        return nds_mk_C128(e.re - 1.0, e.im);
    }
    const F64_T s = sin(y * 0.5);
    return nds_mk_C128(expm1(x) * cos(y) - 2.0 * s * s, exp(x) * sin(y));
}
NDS_INLINE C128_T nds_log1p_C128(C128_T z) {
    const F64_T x = z.re, y = z.im;
    if (fabs(x) < 0.5 && fabs(y) < 0.5)
        return nds_mk_C128(0.5 * log1p(x * (2.0 + x) + y * y), atan2(y, 1.0 + x));
    return nds_log_C128(nds_mk_C128(1.0 + x, y));
}

/* NumPy 2's sign: z / |z|, 0 for 0; an infinite part gives the unit in its
 * direction (a NaN beside it too: NumPy's hypot(inf, nan) is inf), two
 * infinite parts NaN (umath's CDOUBLE_sign). z is scaled by its larger
 * part first, so that |z| neither overflows nor loses digits below the
 * normal range (NumPy divides by hypot(re, im) unscaled). */
#define NDS_CPLX_SIGN(S, P, SUF)                                                                \
    NDS_INLINE S##_T nds_sign_##S(S##_T z) {                                                   \
        const P##_T zero = 0, ar = fabs##SUF(z.re), ai = fabs##SUF(z.im);                      \
        if (nds_pinf_##S(z.re) || nds_pinf_##S(z.im)) {                                        \
            if (nds_pinf_##S(z.re))                                                            \
                return nds_pinf_##S(z.im) ? nds_mk_##S(z.re - z.re, z.re - z.re)              \
                                          : nds_mk_##S(z.re > 0 ? 1 : -1, zero);               \
            return nds_mk_##S(zero, z.im > 0 ? 1 : -1);                                        \
        }                                                                                      \
        if (z.re != z.re || z.im != z.im) return nds_mk_##S(z.re + z.im, z.re + z.im);         \
        const P##_T m = ar > ai ? ar : ai;                                                     \
        if (m == 0) return nds_mk_##S(zero, zero);                                             \
        const P##_T u = z.re / m, v = z.im / m, r = hypot##SUF(u, v);                          \
        return nds_mk_##S(u / r, v / r);                                                       \
    }                                                                                          \
    NDS_INLINE S##_T nds_rint_##S(S##_T z) { return nds_mk_##S(rint##SUF(z.re), rint##SUF(z.im)); }
NDS_CPLX_SIGN(C64, F32, f)
NDS_CPLX_SIGN(C128, F64, )

/* NumPy's power (npy_cpow): z ** 0 = 1 (0 ** 0 too); 0 ** w = 0 for
 * Re w > 0, else NaN + NaNj; an integer exponent |n| < 100 by repeated
 * squaring in the dtype's own precision, as NumPy (n = 1, 2, 3 unrolled,
 * so infinities fare better; a negative one as 1 / z**|n|, Smith's
 * division); otherwise C's cpow, exp(w log z) (complex64 through
 * complex128, each part rounded once). */
/* C99's complex multiply (Annex G.5.1's _Cmultd): the textbook product,
 * with an infinite operand recovered where that gives NaN + NaNj, as the
 * C library's cpow computes w log z */
NDS_INLINE C128_T nds_cmul_annexg_C128(C128_T z, C128_T w) {
    F64_T a = z.re, b = z.im, c = w.re, d = w.im;
    const F64_T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    const F64_T x = ac - bd, y = ad + bc, inf = 1e308 * 10.0;
    if (x == x || y == y) return nds_mk_C128(x, y);
    int recalc = 0;
    if (nds_pinf_C128(a) || nds_pinf_C128(b)) {
        a = copysign(nds_pinf_C128(a) ? 1.0 : 0.0, a);
        b = copysign(nds_pinf_C128(b) ? 1.0 : 0.0, b);
        if (c != c) c = copysign(0.0, c);
        if (d != d) d = copysign(0.0, d);
        recalc = 1;
    }
    if (nds_pinf_C128(c) || nds_pinf_C128(d)) {
        c = copysign(nds_pinf_C128(c) ? 1.0 : 0.0, c);
        d = copysign(nds_pinf_C128(d) ? 1.0 : 0.0, d);
        if (a != a) a = copysign(0.0, a);
        if (b != b) b = copysign(0.0, b);
        recalc = 1;
    }
    if (!recalc && (nds_pinf_C128(ac) || nds_pinf_C128(bd) || nds_pinf_C128(ad) || nds_pinf_C128(bc))) {
        if (a != a) a = copysign(0.0, a);
        if (b != b) b = copysign(0.0, b);
        if (c != c) c = copysign(0.0, c);
        if (d != d) d = copysign(0.0, d);
        recalc = 1;
    }
    if (!recalc) return nds_mk_C128(x, y);
    return nds_mk_C128(inf * (a * c - b * d), inf * (a * d + b * c));
}
NDS_INLINE C128_T nds_cpow_C128(C128_T a, C128_T b) {
    return nds_exp_C128(nds_cmul_annexg_C128(b, nds_log_C128(a)));
}
NDS_INLINE C64_T nds_cpow_C64(C64_T a, C64_T b) {
    const C128_T r = nds_cpow_C128(nds_mk_C128((F64_T)a.re, (F64_T)a.im), nds_mk_C128((F64_T)b.re, (F64_T)b.im));
    return nds_mk_C64((F32_T)r.re, (F32_T)r.im);
}
#define NDS_CPLX_POW(S, P)                                                                      \
    NDS_INLINE S##_T nds_pow_##S(S##_T a, S##_T b) {                                           \
        const P##_T br = b.re, bi = b.im, zero = 0, one = 1;                                   \
        if (br == 0 && bi == 0) return nds_mk_##S(one, zero);                                  \
        if (a.re == 0 && a.im == 0) {                                                          \
            if (br > 0) return nds_mk_##S(zero, zero);                                         \
            const P##_T nan = a.re / a.re; /* 0 / 0 */                                         \
            return nds_mk_##S(nan, nan);                                                       \
        }                                                                                      \
        if (bi == 0 && br > -100 && br < 100 && br == (P##_T)(int)br) {                        \
            const int n = (int)br;                                                             \
            if (n == 1) return a;                                                              \
            if (n == 2) return nds_mul_##S(a, a);                                              \
            if (n == 3) return nds_mul_##S(a, nds_mul_##S(a, a));                              \
            int m = n < 0 ? -n : n, mask = 1;                                                  \
            S##_T acc = nds_mk_##S(one, zero), p = a;                                          \
            for (;;) {                                                                         \
                if (m & mask) acc = nds_mul_##S(acc, p);                                       \
                mask <<= 1;                                                                    \
                if (m < mask) break;                                                           \
                p = nds_mul_##S(p, p);                                                         \
            }                                                                                  \
            return n < 0 ? nds_div_##S(nds_mk_##S(one, zero), acc) : acc;                      \
        }                                                                                      \
        return nds_cpow_##S(a, b);                                                             \
    }
NDS_CPLX_POW(C64, F32)
NDS_CPLX_POW(C128, F64)

/* complex64: the complex128 function, each part rounded once */
#define NDS_C64_VIA_C128(label)                                                                \
    NDS_INLINE C64_T nds_##label##_C64(C64_T z) {                                              \
        const C128_T r = nds_##label##_C128(nds_mk_C128((F64_T)z.re, (F64_T)z.im));            \
        return nds_mk_C64((F32_T)r.re, (F32_T)r.im);                                           \
    }
NDS_C64_VIA_C128(exp)
NDS_C64_VIA_C128(log)
NDS_C64_VIA_C128(sqrt)
NDS_C64_VIA_C128(sinh)
NDS_C64_VIA_C128(cosh)
NDS_C64_VIA_C128(tanh)
NDS_C64_VIA_C128(sin)
NDS_C64_VIA_C128(cos)
NDS_C64_VIA_C128(tan)
NDS_C64_VIA_C128(arcsin)
NDS_C64_VIA_C128(arccos)
NDS_C64_VIA_C128(arctan)
NDS_C64_VIA_C128(arcsinh)
NDS_C64_VIA_C128(arccosh)
NDS_C64_VIA_C128(arctanh)
NDS_C64_VIA_C128(log10)
NDS_C64_VIA_C128(log2)
NDS_C64_VIA_C128(log1p)
NDS_C64_VIA_C128(expm1)
/* complex64: z ln 2 rounded to float32 parts, as NumPy's nc_exp2f */
NDS_INLINE C64_T nds_exp2_C64(C64_T z) {
    return nds_exp_C64(nds_mk_C64(z.re * 0.693147180559945309f, z.im * 0.693147180559945309f));
}

/* ------------------------------------------------------------------- bool */

NDS_UN(not, BOOL, x == 0)
NDS_BIN(and, BOOL, (x != 0) & (y != 0))
NDS_BIN(or, BOOL, (x != 0) | (y != 0))
NDS_BIN(xor, BOOL, (x != 0) ^ (y != 0))

#endif
