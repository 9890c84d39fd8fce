/* Order-preserving unsigned keys for sorting and searching (the library
 * routines SORT and SEARCHSORTED, common/lib_calls.h), shared by the CPU
 * backend and the CUDA plugin so that both order every value the same way.
 *
 * A value's key is an unsigned integer of the dtype's width whose unsigned
 * order is NumPy's sort order:
 *   - unsigned integers and bool: the bits themselves;
 *   - signed integers: the bits with the sign bit flipped;
 *   - floats (float16, bfloat16, float32, float64): every NaN (either sign,
 *     any payload) is first made the dtype's default quiet NaN, so all NaNs
 *     sort last, after +inf, and are equal; -0.0 is made +0.0, so the two
 *     are equal and a stable sort keeps their order (as CUB's radix sort
 *     treats them); then a positive value gets its sign bit set and a
 *     negative one all bits flipped.
 * Sorted values are the input's bits moved, with NaNs made the default NaN
 * (nd_sort_canon), as NumPy's sort returns them.
 *
 * ND_SK_FN is `static inline` in C and `__host__ __device__ inline` in
 * CUDA. */
#ifndef ND_COMMON_SORT_KEYS_H
#define ND_COMMON_SORT_KEYS_H

#include <stdint.h>

#include "nd.h"

#ifdef __CUDACC__
#define ND_SK_FN static __host__ __device__ inline
#else
#define ND_SK_FN static inline
#endif

/* What the bits of a dtype are: unsigned (and bool), signed integer, or a
 * float (sign, exponent, mantissa; bfloat16 too). */
enum { ND_SK_UINT = 0, ND_SK_INT = 1, ND_SK_FLOAT = 2 };

/* A dtype's facts: kind, width in bytes (0: not a dtype), a float's
 * exponent field (all ones: inf or NaN) and default quiet NaN. */
typedef struct {
    int kind, width;
    uint64_t exp_mask, qnan;
} nd_sort_key_info;

/* Bits b (the low 8 * width) with a NaN made the default NaN. */
ND_SK_FN uint64_t nd_sort_canon(uint64_t b, nd_sort_key_info f) {
    if (f.kind != ND_SK_FLOAT) return b;
    uint64_t sign = (uint64_t)1 << (8 * f.width - 1);
    return (b & ~sign) > f.exp_mask ? f.qnan : b;
}

/* The key of bits b. */
ND_SK_FN uint64_t nd_sort_key_bits(uint64_t b, nd_sort_key_info f) {
    uint64_t sign = (uint64_t)1 << (8 * f.width - 1);
    uint64_t all = f.width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * f.width)) - 1);
    if (f.kind == ND_SK_UINT) return b;
    if (f.kind == ND_SK_INT) return b ^ sign;
    b = nd_sort_canon(b, f);
    if (b == sign) b = 0; /* -0.0 as +0.0 */
    return (b & sign) ? (~b & all) : (b | sign);
}

/* The bits whose key is k: the inverse of nd_sort_key_bits except that
 * -0.0 comes back as +0.0 and a NaN as the default NaN. */
ND_SK_FN uint64_t nd_sort_key_value(uint64_t k, nd_sort_key_info f) {
    uint64_t sign = (uint64_t)1 << (8 * f.width - 1);
    uint64_t all = f.width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * f.width)) - 1);
    if (f.kind == ND_SK_UINT) return k;
    if (f.kind == ND_SK_INT) return k ^ sign;
    return (k & sign) ? (k ^ sign) : (~k & all);
}

/* The facts of an nd_dtype value. */
ND_SK_FN nd_sort_key_info nd_sort_key_info_of(int dtype) {
    nd_sort_key_info f = {ND_SK_UINT, 1, 0, 0};
    switch (dtype) {
    case ND_BOOL: break;
    case ND_INT8: f.kind = ND_SK_INT; f.width = 1; break;
    case ND_INT16: f.kind = ND_SK_INT; f.width = 2; break;
    case ND_INT32: f.kind = ND_SK_INT; f.width = 4; break;
    case ND_INT64: f.kind = ND_SK_INT; f.width = 8; break;
    case ND_UINT8: f.width = 1; break;
    case ND_UINT16: f.width = 2; break;
    case ND_UINT32: f.width = 4; break;
    case ND_UINT64: f.width = 8; break;
    case ND_FLOAT16: f.kind = ND_SK_FLOAT; f.width = 2; f.exp_mask = 0x7C00u; f.qnan = 0x7E00u; break;
    case ND_BFLOAT16: f.kind = ND_SK_FLOAT; f.width = 2; f.exp_mask = 0x7F80u; f.qnan = 0x7FC0u; break;
    case ND_FLOAT32: f.kind = ND_SK_FLOAT; f.width = 4; f.exp_mask = 0x7F800000u; f.qnan = 0x7FC00000u; break;
    case ND_FLOAT64:
        f.kind = ND_SK_FLOAT;
        f.width = 8;
        f.exp_mask = 0x7FF0000000000000ull;
        f.qnan = 0x7FF8000000000000ull;
        break;
    default: f.width = 0;
    }
    return f;
}

/* The bits of the element at p (f.width bytes). */
ND_SK_FN uint64_t nd_sort_load_bits(const void *p, nd_sort_key_info f) {
    switch (f.width) {
    case 1: return *(const uint8_t *)p;
    case 2: return *(const uint16_t *)p;
    case 4: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

#endif
