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

#ifndef ND_COMMON_ELEMENT_FNS_H /* the JIT pastes element_fns.h first */
#include "common/element_fns.h"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* Complex sources and destinations (NumPy's casts): real -> complex is
 * (x, 0) with x converted to the part dtype (int64 -> complex64 rounds
 * once, straight to float32); complex -> real drops the imaginary part and
 * converts the real part (to float16 through float32 rounded to odd, as
 * any wide source), except to bool: true when either part is nonzero;
 * complex -> complex converts each part. NDS_CAST dispatches on the two
 * dtypes' classes R (real) and C (complex). */
#define NDS_CLS_BOOL R
#define NDS_CLS_I8 R
#define NDS_CLS_I16 R
#define NDS_CLS_I32 R
#define NDS_CLS_I64 R
#define NDS_CLS_U8 R
#define NDS_CLS_U16 R
#define NDS_CLS_U32 R
#define NDS_CLS_U64 R
#define NDS_CLS_F16 R
#define NDS_CLS_BF16 R
#define NDS_CLS_F32 R
#define NDS_CLS_F64 R
#define NDS_CLS_C64 C
#define NDS_CLS_C128 C
#define NDS_PART_C64 F32
#define NDS_PART_C128 F64
#define NDS_CAST_RR(S, D, x) ((D##_T)NDS_TO_##D(NDS_FROM_##S(x)))
#define NDS_CAST_RC(S, D, x) NDS_CAST_RC_(S, D, NDS_PART_##D, x)
#define NDS_CAST_RC_(S, D, P, x) NDS_CAST_RC__(S, D, P, x)
#define NDS_CAST_RC__(S, D, P, x) nds_mk_##D(NDS_CAST_RR(S, P, x), (P##_T)0)
#define NDS_CAST_CR(S, D, x) NDS_CAST_CR_(S, D, NDS_PART_##S, x)
#define NDS_CAST_CR_(S, D, P, x) NDS_CAST_CR__(S, D, P, x)
#define NDS_CAST_CR__(S, D, P, x) NDS_CAST_CR_##D(S, D, P, x)
#define NDS_CAST_CR_BOOL(S, D, P, x) ((BOOL_T)((x).re != 0 || (x).im != 0))
#define NDS_CAST_CR_ANY(S, D, P, x) NDS_CAST_RR(P, D, (x).re)
#define NDS_CAST_CR_I8 NDS_CAST_CR_ANY
#define NDS_CAST_CR_I16 NDS_CAST_CR_ANY
#define NDS_CAST_CR_I32 NDS_CAST_CR_ANY
#define NDS_CAST_CR_I64 NDS_CAST_CR_ANY
#define NDS_CAST_CR_U8 NDS_CAST_CR_ANY
#define NDS_CAST_CR_U16 NDS_CAST_CR_ANY
#define NDS_CAST_CR_U32 NDS_CAST_CR_ANY
#define NDS_CAST_CR_U64 NDS_CAST_CR_ANY
#define NDS_CAST_CR_F16 NDS_CAST_CR_ANY
#define NDS_CAST_CR_BF16 NDS_CAST_CR_ANY
#define NDS_CAST_CR_F32 NDS_CAST_CR_ANY
#define NDS_CAST_CR_F64 NDS_CAST_CR_ANY
#define NDS_CAST_CC(S, D, x) NDS_CAST_CC_(D, NDS_PART_##D, x)
#define NDS_CAST_CC_(D, P, x) NDS_CAST_CC__(D, P, x)
#define NDS_CAST_CC__(D, P, x) nds_mk_##D((P##_T)(x).re, (P##_T)(x).im)
#define NDS_CAST_K(cs, cd, S, D, x) NDS_CAST_##cs##cd(S, D, x)
#define NDS_CAST_K_(cs, cd, S, D, x) NDS_CAST_K(cs, cd, S, D, x)
#define NDS_CAST(S, D, x) NDS_CAST_K_(NDS_CLS_##S, NDS_CLS_##D, S, D, x)

#endif
