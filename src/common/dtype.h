/* Dtype facts shared by every layer: sizes, kinds, NumPy 2 promotion and
 * the float16/bfloat16 storage conversions. */
#ifndef ND_COMMON_DTYPE_H
#define ND_COMMON_DTYPE_H

#include "nd.h"

typedef enum { ND_KIND_BOOL, ND_KIND_INT, ND_KIND_UINT, ND_KIND_FLOAT, ND_KIND_COMPLEX } nd_dtype_kind;

/* A scalar value in the representation that suits its dtype kind: used for
 * kernel parameters (constants are launch arguments, never in the hash). */
typedef union {
    double f;
    int64_t i;
    uint64_t u;
} nd_scalar_bits;

static inline int nd_dtype_valid(int t) { return t >= 0 && t < ND_NUM_DTYPES; }
/* The tables behind the two below, inline because every recorded op asks
 * them (dtype.c). */
extern const uint8_t nd_dtype_kind_table[ND_NUM_DTYPES] __attribute__((visibility("hidden")));
extern const uint8_t nd_dtype_size_table[ND_NUM_DTYPES] __attribute__((visibility("hidden")));
static inline nd_dtype_kind nd_dtype_kind_of(nd_dtype t) {
    return nd_dtype_valid((int)t) ? (nd_dtype_kind)nd_dtype_kind_table[t] : ND_KIND_BOOL;
}
/* nd_dtype_size without the call (0 if invalid). */
static inline size_t nd_dtype_itemsize(nd_dtype t) {
    return nd_dtype_valid((int)t) ? nd_dtype_size_table[t] : 0;
}
static inline int nd_dtype_is_float(nd_dtype t) { return nd_dtype_kind_of(t) == ND_KIND_FLOAT; }
static inline int nd_dtype_is_complex(nd_dtype t) {
    return t == ND_COMPLEX64 || t == ND_COMPLEX128;
}
/* The dtype of a complex dtype's real and imaginary parts (float32 for
 * complex64, float64 for complex128); any other dtype is its own part. */
static inline nd_dtype nd_dtype_part(nd_dtype t) {
    return t == ND_COMPLEX64 ? ND_FLOAT32 : t == ND_COMPLEX128 ? ND_FLOAT64 : t;
}
/* The complex dtype whose parts hold a float dtype (float16, bfloat16 and
 * float32 -> complex64, float64 -> complex128); complex dtypes are their
 * own. */
static inline nd_dtype nd_dtype_complex_of(nd_dtype t) {
    return t == ND_FLOAT64 || t == ND_COMPLEX128 ? ND_COMPLEX128 : ND_COMPLEX64;
}
static inline int nd_dtype_is_int(nd_dtype t) {
    nd_dtype_kind k = nd_dtype_kind_of(t);
    return k == ND_KIND_INT || k == ND_KIND_UINT;
}

/* NumPy 2 promote_types for two strong dtypes (bfloat16 as ml_dtypes):
 * with a complex operand, the complex dtype whose parts hold the promoted
 * parts (complex64 + float64 and complex64 + int32 are complex128,
 * complex64 + int16 is complex64). */
nd_dtype nd_promote(nd_dtype a, nd_dtype b);
/* Dtype of a float result for an input of dtype t (sqrt, exp, true division
 * inputs): floats stay, int8/uint8/bool -> float16, int16/uint16 -> float32,
 * wider ints -> float64. */
nd_dtype nd_float_result(nd_dtype t);

float nd_half_to_float(uint16_t h);
uint16_t nd_float_to_half(float f); /* round to nearest even */
float nd_bf16_to_float(uint16_t h);
uint16_t nd_float_to_bf16(float f); /* round to nearest even */

/* Element access through a dtype, for slow paths (host reads, references).
 * A complex element loads as its real part and stores a double as (v, 0);
 * nd_load_complex gives both parts of any dtype (imag 0 for real ones). */
void nd_load_complex(const void *p, nd_dtype t, double *re, double *im);
void nd_store_complex(void *p, nd_dtype t, double re, double im);
double nd_load_double(const void *p, nd_dtype t);
void nd_store_double(void *p, nd_dtype t, double v);
/* Converts one element between dtypes with NumPy's unsafe-cast semantics. */
void nd_convert_element(void *dst, nd_dtype dt, const void *src, nd_dtype st);

#endif
