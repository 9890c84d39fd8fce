/* What every op and cast of the CPU backend does to one element: the
 * register element types, the conversions (NumPy unsafe casting) and the
 * elementwise ops, as inline functions. The interpreter's tile loops
 * (cpu_ops.c, cpu_cast.c) apply them over tiles; the JIT pastes this file
 * verbatim at the top of every generated kernel (cpu_jit_codegen.c), so a
 * compiled kernel computes the interpreter's bits by construction.
 *
 * Self-contained on purpose (standard headers only, no nd types): it is
 * compiled outside the library too. Names: nds_<op label>_<dtype> (labels
 * of common/ops.h), NDS_CAST(S, D, x). Integer arithmetic runs in unsigned
 * types so that it wraps without undefined behaviour. */
#ifndef ND_BACKENDS_CPU_SCALAR_H
#define ND_BACKENDS_CPU_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define NDS_INLINE static inline __attribute__((always_inline))
#else
#define NDS_INLINE static inline
#endif

/* Register element types, one per dtype (float16 and bfloat16 are stored
 * as their bits). */
typedef uint8_t BOOL_T;
typedef int8_t I8_T;
typedef int16_t I16_T;
typedef int32_t I32_T;
typedef int64_t I64_T;
typedef uint8_t U8_T;
typedef uint16_t U16_T;
typedef uint32_t U32_T;
typedef uint64_t U64_T;
typedef uint16_t F16_T;
typedef uint16_t BF16_T;
typedef float F32_T;
typedef double F64_T;

/* ------------------------------------------------------------ conversions */

/* double -> float rounded to odd: exact values stay, inexact ones get their
 * lowest mantissa bit set, which a later shorter rounding sees as "beyond
 * the halfway point" exactly when the true value is. */
NDS_INLINE float nds_d2f_odd(double d) {
    float f = (float)d;
    if (f != f) return f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (fabs((double)f) > fabs(d)) bits -= 1; /* towards zero */
    float t;
    memcpy(&t, &bits, sizeof t);
    if ((double)t != d) bits |= 1;
    memcpy(&t, &bits, sizeof t);
    return t;
}

/* Branch-free float16/bfloat16 conversions, bit-identical to dtype.c's
 * nd_half_to_float/nd_float_to_half/nd_bf16_to_float/nd_float_to_bf16 (NaN
 * encodings included), inline so that cast loops vectorise. */
NDS_INLINE uint32_t nds_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
NDS_INLINE float nds_ffrom(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
NDS_INLINE float nds_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t sub = nds_fbits((float)(em & 0x3ffu) * 0x1p-24f);
    uint32_t nrm = (em >> 10) == 31u ? (0x7f800000u | ((em & 0x3ffu) << 13)) : (em << 13) + (112u << 23);
    return nds_ffrom((em < 0x400u ? sub : nrm) | sign);
}
NDS_INLINE uint16_t nds_f2h(float f) {
    uint32_t x = nds_fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    uint32_t nan = sign | 0x7e00u | ((ax >> 13) & 0x3ffu), inf = sign | 0x7c00u;
    int small = ax < 0x38800000u;
    float a = small ? nds_ffrom(ax) * 16777216.0f : 0.0f; /* units of 2^-24, < 1024 */
    float rs = (a + 0x1.8p23f) - 0x1.8p23f;               /* round to nearest even */
    uint32_t sub = sign | (uint32_t)(int32_t)rs;
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
    uint32_t rem = ax & 0x1fffu;
    /* round half to even: up when rem > half, or rem == half and h is odd
     * (one compare; the two-compare form keeps GCC 12 from vectorising any
     * loop that contains it; same result for all 2^32 floats) */
    h += (uint32_t)(rem + (h & 1u) > 0x1000u);
    uint32_t r = ax > 0x7f800000u ? nan : ax >= 0x477ff000u ? inf : small ? sub : (sign | h);
    return (uint16_t)r;
}
NDS_INLINE float nds_bf2f(uint16_t h) { return nds_ffrom((uint32_t)h << 16); }
NDS_INLINE uint16_t nds_f2bf(float f) {
    uint32_t x = nds_fbits(f);
    uint32_t nan = (x >> 16) | 0x40u, rne = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

/* float -> int: truncate to 64 bits (uint64 for [2^63, 2^64)), then wrap to
 * the target width; NaN and out-of-range give the bit pattern 2^63 (x86's
 * "integer indefinite", so NumPy's results on x86). The same rule as
 * dtype.c's nd_convert_element and the CUDA code generator's ndk_f2i. */
NDS_INLINE uint64_t nds_f2i_bits(double v) {
    return (v >= -0x1p63 && v < 0x1p63) ? (uint64_t)(int64_t)v
           : (v >= 0 && v < 0x1p64)     ? (uint64_t)v
                                        : (uint64_t)1 << 63;
}

/* NDS_CAST(S, D, x): element x of dtype S converted to dtype D. Wide sources
 * -> float16/bfloat16 go through float32 rounded to odd, so the final
 * rounding to nearest even is not a double rounding. */
#define NDS_FROM_BOOL(x) (x)
#define NDS_FROM_I8(x) (x)
#define NDS_FROM_I16(x) (x)
#define NDS_FROM_I32(x) (x)
#define NDS_FROM_I64(x) (x)
#define NDS_FROM_U8(x) (x)
#define NDS_FROM_U16(x) (x)
#define NDS_FROM_U32(x) (x)
#define NDS_FROM_U64(x) (x)
#define NDS_FROM_F16(x) nds_h2f(x)
#define NDS_FROM_BF16(x) nds_bf2f(x)
#define NDS_FROM_F32(x) (x)
#define NDS_FROM_F64(x) (x)

#define NDS_TO_INT(D, x)                                                                       \
    _Generic((x), float: (D##_T)nds_f2i_bits((double)(x)),                                     \
             double: (D##_T)nds_f2i_bits((double)(x)), default: (D##_T)(x))
#define NDS_TO_BOOL(x) ((x) != 0)
#define NDS_TO_I8(x) NDS_TO_INT(I8, x)
#define NDS_TO_I16(x) NDS_TO_INT(I16, x)
#define NDS_TO_I32(x) NDS_TO_INT(I32, x)
#define NDS_TO_I64(x) NDS_TO_INT(I64, x)
#define NDS_TO_U8(x) NDS_TO_INT(U8, x)
#define NDS_TO_U16(x) NDS_TO_INT(U16, x)
#define NDS_TO_U32(x) NDS_TO_INT(U32, x)
#define NDS_TO_U64(x) NDS_TO_INT(U64, x)
#define NDS_TO_F32(x) ((float)(x))
#define NDS_TO_F64(x) ((double)(x))
#define NDS_TO_F16(x) nds_f2h(_Generic((x), float: (x), default: nds_d2f_odd((double)(x))))
#define NDS_TO_BF16(x) nds_f2bf(_Generic((x), float: (x), default: nds_d2f_odd((double)(x))))

#define NDS_CAST(S, D, x) ((D##_T)NDS_TO_##D(NDS_FROM_##S(x)))

/* -------------------------------------------------------------------- ops */

#define NDS_UN(label, S, expr)                                                                 \
    NDS_INLINE S##_T nds_##label##_##S(S##_T x) { return (S##_T)(expr); }
#define NDS_BIN(label, S, expr)                                                                \
    NDS_INLINE S##_T nds_##label##_##S(S##_T x, S##_T y) { return (S##_T)(expr); }
#define NDS_CMP(label, S, expr)                                                                \
    NDS_INLINE BOOL_T nds_##label##_##S(S##_T x, S##_T y) { return (BOOL_T)(expr); }

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

/* Integer power by repeated squaring, wrapping. */
NDS_INLINE uint64_t nds_ipow(uint64_t base, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

/* W: the unsigned type the arithmetic wraps in (at least unsigned int, so
 * uint16 * uint16 never overflows a signed int). Floor and ceil of an
 * integer are the integer. */
#define NDS_INT_COMMON(S, W)                                                                   \
    NDS_UN(square, S, (W)x * (W)x)                                                             \
    NDS_UN(floor, S, x)                                                                        \
    NDS_UN(ceil, S, x)                                                                         \
    NDS_UN(neg, S, (W)0 - (W)x)                                                                \
    NDS_BIN(add, S, (W)x + (W)y)                                                               \
    NDS_BIN(sub, S, (W)x - (W)y)                                                               \
    NDS_BIN(mul, S, (W)x * (W)y)                                                               \
    NDS_BIN(maximum, S, x > y ? x : y)                                                         \
    NDS_BIN(minimum, S, x < y ? x : y)

/* Division by zero gives 0, and so does MIN / -1 (which overflows); a
 * negative exponent gives 0 unless the base is 1 or -1. */
#define NDS_INT_SIGNED(S, W)                                                                   \
    NDS_INT_COMMON(S, W)                                                                       \
    NDS_UN(abs, S, x < 0 ? (S##_T)((W)0 - (W)x) : x)                                           \
    NDS_BIN(div, S, (y == 0 || (y == -1 && x == (S##_T)((W)1 << (sizeof(S##_T) * 8 - 1)))) ? 0 \
                                                                                    : x / y)   \
    NDS_BIN(pow, S, y < 0 ? (x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0)                    \
                          : (S##_T)nds_ipow((uint64_t)(int64_t)x, (uint64_t)(int64_t)y))

#define NDS_INT_UNSIGNED(S, W)                                                                 \
    NDS_INT_COMMON(S, W)                                                                       \
    NDS_UN(abs, S, x)                                                                          \
    NDS_BIN(div, S, y == 0 ? 0 : x / y)                                                        \
    NDS_BIN(pow, S, nds_ipow(x, y))

NDS_INT_SIGNED(I8, uint32_t)
NDS_INT_SIGNED(I16, uint32_t)
NDS_INT_SIGNED(I32, uint32_t)
NDS_INT_SIGNED(I64, uint64_t)
NDS_INT_UNSIGNED(U8, uint32_t)
NDS_INT_UNSIGNED(U16, uint32_t)
NDS_INT_UNSIGNED(U32, uint32_t)
NDS_INT_UNSIGNED(U64, uint64_t)

/* maximum/minimum propagate NaN (x's if both are). */
#define NDS_FLOAT_SET(S, SUF)                                                                  \
    NDS_UN(neg, S, -x)                                                                         \
    NDS_UN(abs, S, fabs##SUF(x))                                                               \
    NDS_UN(square, S, x * x)                                                                   \
    NDS_UN(sqrt, S, sqrt##SUF(x))                                                              \
    NDS_BIN(add, S, x + y)                                                                     \
    NDS_BIN(sub, S, x - y)                                                                     \
    NDS_BIN(mul, S, x * y)                                                                     \
    NDS_BIN(div, S, x / y)                                                                     \
    NDS_BIN(pow, S, pow##SUF(x, y))                                                            \
    NDS_BIN(maximum, S, (x >= y || x != x) ? x : y)                                            \
    NDS_BIN(minimum, S, (x <= y || x != x) ? x : y)

NDS_FLOAT_SET(F32, f)
NDS_FLOAT_SET(F64, )

/* floor/ceil of float32 without SSE4.1: truncate through int32 where
 * |x| < 2^23 (every float beyond is already integral), then step; copysign
 * keeps -0.0. */
NDS_UN(floor, F32,
       copysignf(fabsf(x) < 0x1p23f ? ((float)(int32_t)x > x ? (float)(int32_t)x - 1.0f
                                                            : (float)(int32_t)x)
                                    : x,
                 x))
NDS_UN(ceil, F32,
       copysignf(fabsf(x) < 0x1p23f ? ((float)(int32_t)x < x ? (float)(int32_t)x + 1.0f
                                                            : (float)(int32_t)x)
                                    : x,
                 x))
NDS_UN(floor, F64, floor(x))
NDS_UN(ceil, F64, ceil(x))
/* float64 tanh is libm's; the other transcendentals are the vectorised
 * loops of cpu_vmath.c, which work on whole tiles. */
NDS_UN(tanh, F64, tanh(x))

NDS_UN(not, BOOL, x == 0)
NDS_BIN(and, BOOL, (x != 0) & (y != 0))
NDS_BIN(or, BOOL, (x != 0) | (y != 0))

#endif
