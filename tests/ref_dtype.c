/* Reference dtype storage and casts, written from the IEEE formats and NumPy's
 * documented rules rather than from the library, so the two can disagree. */
#include "ref.h"

#include <math.h>
#include <string.h>

#define B_ ND_BOOL
#define I8 ND_INT8
#define I16 ND_INT16
#define I32 ND_INT32
#define I64 ND_INT64
#define U8 ND_UINT8
#define U16 ND_UINT16
#define U32 ND_UINT32
#define U64 ND_UINT64
#define F16 ND_FLOAT16
#define BF ND_BFLOAT16
#define F32 ND_FLOAT32
#define F64 ND_FLOAT64

/* np.promote_types for the NumPy dtypes (generated with NumPy), bfloat16 as
 * ml_dtypes (int8/uint8/bool cast safely into it; float16 and wider ints
 * meet it in float32/float64). */
static const unsigned char promote_table[13][13] = {
    /*          B    I8   I16  I32  I64  U8   U16  U32  U64  F16  BF   F32  F64 */
    /* B   */ {B_,  I8,  I16, I32, I64, U8,  U16, U32, U64, F16, BF,  F32, F64},
    /* I8  */ {I8,  I8,  I16, I32, I64, I16, I32, I64, F64, F16, BF,  F32, F64},
    /* I16 */ {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F32, F32, F64},
    /* I32 */ {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, F64, F64},
    /* I64 */ {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64, F64},
    /* U8  */ {U8,  I16, I16, I32, I64, U8,  U16, U32, U64, F16, BF,  F32, F64},
    /* U16 */ {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F32, F32, F64},
    /* U32 */ {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, F64, F64},
    /* U64 */ {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, F64, F64},
    /* F16 */ {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F32, F64},
    /* BF  */ {BF,  BF,  F32, F64, F64, BF,  F32, F64, F64, F32, BF,  F32, F64},
    /* F32 */ {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F32, F32, F64},
    /* F64 */ {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64},
};

nd_dtype ref_promote(nd_dtype a, nd_dtype b) { return (nd_dtype)promote_table[a][b]; }

size_t ref_itemsize(nd_dtype t) {
    static const size_t sz[15] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
    return (unsigned)t < 15 ? sz[t] : 0;
}

const char *ref_dtype_name(nd_dtype t) {
    static const char *const n[13] = {"bool",   "int8",    "int16",    "int32",   "int64",
                                      "uint8",  "uint16",  "uint32",   "uint64",  "float16",
                                      "bfloat16", "float32", "float64"};
    if (t == ND_COMPLEX64) return "complex64";
    if (t == ND_COMPLEX128) return "complex128";
    return (unsigned)t < 13 ? n[t] : "?";
}

int ref_is_float(nd_dtype t) { return t == F16 || t == BF || t == F32 || t == F64; }
int ref_is_signed(nd_dtype t) { return t == I8 || t == I16 || t == I32 || t == I64; }
int ref_is_unsigned(nd_dtype t) { return t == U8 || t == U16 || t == U32 || t == U64; }
int ref_is_int(nd_dtype t) { return ref_is_signed(t) || ref_is_unsigned(t); }

nd_dtype ref_float_result(nd_dtype t) {
    switch (t) {
    case B_: case I8: case U8: return ND_FLOAT16;
    case I16: case U16: return ND_FLOAT32;
    case I32: case U32: case I64: case U64: return ND_FLOAT64;
    default: return t;
    }
}

/* Round |v| to a binary format with p significant bits and minimum normal
 * exponent emin / maximum exponent emax, ties to even (nearbyint in the
 * default rounding mode; scaling by powers of two is exact). */
static double round_format(double v, int p, int emin, int emax) {
    if (isnan(v) || isinf(v) || v == 0) return v;
    double a = fabs(v);
    int e;
    frexp(a, &e);
    int E = e - 1;
    if (E < emin) E = emin;
    double q = ldexp(1.0, E - p + 1);
    double r = nearbyint(a / q) * q;
    if (r >= ldexp(1.0, emax + 1)) r = INFINITY;
    return v < 0 ? -r : r;
}

double ref_round_to(nd_dtype t, double v) {
    switch (t) {
    case F16: return round_format(v, 11, -14, 15);
    case BF: return round_format(v, 8, -126, 127);
    case F32: return (double)(float)v;
    default: return v;
    }
}

static uint16_t half_bits(double v) { /* v exactly representable in float16 */
    uint16_t s = signbit(v) ? 0x8000u : 0u;
    if (isnan(v)) return 0x7e00u;
    double a = fabs(v);
    if (isinf(a)) return s | 0x7c00u;
    if (a == 0) return s;
    int e;
    frexp(a, &e);
    int E = e - 1;
    if (E < -14) return s | (uint16_t)(a * 0x1p24);
    uint16_t m = (uint16_t)((a * ldexp(1.0, -E) - 1.0) * 1024.0);
    return s | (uint16_t)((E + 15) << 10) | m;
}

static double half_value(uint16_t h) {
    int s = h >> 15, E = (h >> 10) & 31, m = h & 1023;
    double v;
    if (E == 31) v = m ? NAN : INFINITY;
    else if (E == 0) v = m * 0x1p-24;
    else v = ldexp(1.0 + m / 1024.0, E - 15);
    return s ? -v : v;
}

static uint16_t bf16_bits(double v) { /* v exactly representable in bfloat16 */
    if (isnan(v)) return 0x7fc0u;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static double bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double ref_decode(const void *buf, nd_dtype t, int64_t i) {
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * ref_itemsize(t);
    switch (t) {
    case B_: return *p != 0;
    case I8: { int8_t x; memcpy(&x, p, 1); return x; }
    case I16: { int16_t x; memcpy(&x, p, 2); return x; }
    case I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case I64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case U8: return *p;
    case U16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case U64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    case F16: { uint16_t x; memcpy(&x, p, 2); return half_value(x); }
    case BF: { uint16_t x; memcpy(&x, p, 2); return bf16_value(x); }
    case F32: { float x; memcpy(&x, p, 4); return x; }
    case F64: { double x; memcpy(&x, p, 8); return x; }
    default: return NAN;
    }
}

uint64_t ref_decode_u(const void *buf, nd_dtype t, int64_t i) {
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * ref_itemsize(t);
    switch (t) {
    case B_: return *p; /* raw byte: a bool must be stored as 0 or 1 */
    case I8: { int8_t x; memcpy(&x, p, 1); return (uint64_t)(int64_t)x; }
    case I16: { int16_t x; memcpy(&x, p, 2); return (uint64_t)(int64_t)x; }
    case I32: { int32_t x; memcpy(&x, p, 4); return (uint64_t)(int64_t)x; }
    case I64: { int64_t x; memcpy(&x, p, 8); return (uint64_t)x; }
    case U8: return *p;
    case U16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case U64: { uint64_t x; memcpy(&x, p, 8); return x; }
    default: return (uint64_t)(int64_t)ref_decode(buf, t, i);
    }
}

double ref_getd(const ref_arr *a, int64_t i) { return ref_decode(a->data, a->dt, i); }
uint64_t ref_getu(const ref_arr *a, int64_t i) { return ref_decode_u(a->data, a->dt, i); }

void ref_setu(ref_arr *a, int64_t i, uint64_t v) {
    unsigned char *p = a->data + (size_t)i * ref_itemsize(a->dt);
    switch (a->dt) {
    case B_: *p = v != 0; break;
    case I8: case U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case I16: case U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case I32: case U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case I64: case U64: memcpy(p, &v, 8); break;
    default: ref_setd(a, i, (double)(int64_t)v); break;
    }
}

void ref_setd(ref_arr *a, int64_t i, double v) {
    unsigned char *p = a->data + (size_t)i * ref_itemsize(a->dt);
    switch (a->dt) {
    case B_: *p = v != 0; return; /* NaN != 0 is true, as NumPy */
    case F16: { uint16_t x = half_bits(ref_round_to(F16, v)); memcpy(p, &x, 2); return; }
    case BF: { uint16_t x = bf16_bits(ref_round_to(BF, v)); memcpy(p, &x, 2); return; }
    case F32: { float x = (float)v; memcpy(p, &x, 4); return; }
    case F64: memcpy(p, &v, 8); return;
    default: break;
    }
    /* float -> int truncates toward zero; only in-range values are meaningful */
    double t = trunc(v);
    uint64_t u;
    if (isnan(t)) u = 0;
    else if (t >= 0x1p63) u = t < 0x1p64 ? (uint64_t)t : UINT64_MAX;
    else if (t < -0x1p63) u = (uint64_t)INT64_MIN;
    else u = (uint64_t)(int64_t)t;
    ref_setu(a, i, u);
}

void ref_cast_elem(ref_arr *b, int64_t j, const ref_arr *a, int64_t i) {
    if (ref_is_float(a->dt)) {
        ref_setd(b, j, ref_getd(a, i));
    } else if (ref_is_float(b->dt)) {
        /* int -> float: round the exact integer once */
        uint64_t u = ref_getu(a, i);
        double v = ref_is_unsigned(a->dt) || a->dt == B_ ? (double)u : (double)(int64_t)u;
        if (b->dt == F16 || b->dt == BF) {
            /* (double)int64 may already have rounded; large ints are not exact anyway */
            v = ref_round_to(b->dt, v);
        }
        ref_setd(b, j, v);
    } else {
        ref_setu(b, j, ref_getu(a, i));
    }
}
