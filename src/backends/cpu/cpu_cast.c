/* Cast loops for every (source, destination) dtype pair, NumPy unsafe
 * casting. Float -> int truncates toward zero through int64 and wraps (see
 * f2i_bits): defined where C leaves it undefined, and the same answer as the
 * frontend and the CUDA backend. Narrowing int -> int wraps. Wide sources -> float16/bfloat16 go through float32 with round-to-odd
 * so the final round-to-nearest-even is not a double rounding. */
#include <limits.h>
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"


/* double -> float rounded to odd: exact values stay, inexact ones get their
 * lowest mantissa bit set, which a later shorter rounding sees as "beyond
 * the halfway point" exactly when the true value is. */
static inline float d2f_odd(double d) {
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
 * encodings included) but inlined so the cast loops vectorise. */
static inline uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float ffrom(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline float h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t sub = fbits((float)(em & 0x3ffu) * 0x1p-24f);
    uint32_t nrm = (em >> 10) == 31u ? (0x7f800000u | ((em & 0x3ffu) << 13)) : (em << 13) + (112u << 23);
    return ffrom((em < 0x400u ? sub : nrm) | sign);
}
static inline uint16_t f2h(float f) {
    uint32_t x = fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    uint32_t nan = sign | 0x7e00u | ((ax >> 13) & 0x3ffu), inf = sign | 0x7c00u;
    int small = ax < 0x38800000u;
    float a = small ? ffrom(ax) * 16777216.0f : 0.0f; /* units of 2^-24, < 1024 */
    float rs = (a + 0x1.8p23f) - 0x1.8p23f;           /* round to nearest even */
    uint32_t sub = sign | (uint32_t)(int32_t)rs;
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
    uint32_t rem = ax & 0x1fffu;
    h += (uint32_t)((rem > 0x1000u) | ((rem == 0x1000u) & (h & 1u)));
    uint32_t r = ax > 0x7f800000u ? nan : ax >= 0x477ff000u ? inf : small ? sub : (sign | h);
    return (uint16_t)r;
}
static inline float bf2f(uint16_t h) { return ffrom((uint32_t)h << 16); }
static inline uint16_t f2bf(float f) {
    uint32_t x = fbits(f);
    uint32_t nan = (x >> 16) | 0x40u, rne = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

#define FROM_BOOL(x) (x)
#define FROM_I8(x) (x)
#define FROM_I16(x) (x)
#define FROM_I32(x) (x)
#define FROM_I64(x) (x)
#define FROM_U8(x) (x)
#define FROM_U16(x) (x)
#define FROM_U32(x) (x)
#define FROM_U64(x) (x)
#define FROM_F16(x) h2f(x)
#define FROM_BF16(x) bf2f(x)
#define FROM_F32(x) (x)
#define FROM_F64(x) (x)

/* float -> int: truncate to 64 bits (uint64 for [2^63, 2^64)), then wrap to
 * the target width; NaN and out-of-range give the bit pattern 2^63 (x86's
 * "integer indefinite", so NumPy's results on x86). The same rule as
 * dtype.c's nd_convert_element and the CUDA code generator's ndk_f2i. */
static inline uint64_t f2i_bits(double v) {
    return (v >= -0x1p63 && v < 0x1p63) ? (uint64_t)(int64_t)v
           : (v >= 0 && v < 0x1p64)     ? (uint64_t)v
                                        : (uint64_t)1 << 63;
}

#define TO_INT(S, x) _Generic((x), float: (S##_T)f2i_bits((double)(x)), double: (S##_T)f2i_bits((double)(x)), default: (S##_T)(x))
#define TO_BOOL(x) ((x) != 0)
#define TO_I8(x) TO_INT(I8, x)
#define TO_I16(x) TO_INT(I16, x)
#define TO_I32(x) TO_INT(I32, x)
#define TO_I64(x) TO_INT(I64, x)
#define TO_U8(x) TO_INT(U8, x)
#define TO_U16(x) TO_INT(U16, x)
#define TO_U32(x) TO_INT(U32, x)
#define TO_U64(x) TO_INT(U64, x)
#define TO_F32(x) ((float)(x))
#define TO_F64(x) ((double)(x))
#define TO_F16(x) f2h(_Generic((x), float: (x), default: d2f_odd((double)(x))))
#define TO_BF16(x) f2bf(_Generic((x), float: (x), default: d2f_odd((double)(x))))

#define MK_CAST(S, D)                                                            \
    static void cast_##S##_##D(void *restrict o_, const void *a_, const void *b_, \
                               const void *c_, int64_t n) {                      \
        D##_T *restrict o = (D##_T *)o_;                                         \
        const S##_T *a = (const S##_T *)a_;                                      \
        (void)b_, (void)c_;                                                      \
        for (int64_t i = 0; i < n; i++) o[i] = (D##_T)TO_##D(FROM_##S(a[i]));   \
    }

#define FOR_DST(X, S)                                                            \
    X(S, BOOL) X(S, I8) X(S, I16) X(S, I32) X(S, I64) X(S, U8) X(S, U16) X(S, U32) \
    X(S, U64) X(S, F16) X(S, BF16) X(S, F32) X(S, F64)
#define FOR_SRC(Y)                                                               \
    Y(BOOL) Y(I8) Y(I16) Y(I32) Y(I64) Y(U8) Y(U16) Y(U32) Y(U64) Y(F16) Y(BF16) Y(F32) Y(F64)

#define MK_SRC(S) FOR_DST(MK_CAST, S)
FOR_SRC(MK_SRC)

#define ENTRY(S, D) cast_##S##_##D,
#define ROW(S) {FOR_DST(ENTRY, S)},
/* Rows and columns in nd_dtype order. */
static nd_cpu_fn const cast_table[ND_NUM_DTYPES][ND_NUM_DTYPES] = {FOR_SRC(ROW)};

nd_cpu_fn nd_cpu_cast_fn(int src, int dst) {
    if (!nd_dtype_valid(src) || !nd_dtype_valid(dst)) return NULL;
    return cast_table[src][dst];
}
