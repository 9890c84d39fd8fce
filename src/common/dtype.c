#include "common/dtype.h"

#include <math.h>
#include <string.h>

#include "common/api_guard.h"

const uint8_t nd_dtype_size_table[ND_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
#define dtype_sizes nd_dtype_size_table
static const char *const dtype_names[ND_NUM_DTYPES] = {
    "bool",   "int8",    "int16",    "int32",   "int64",  "uint8",  "uint16",
    "uint32", "uint64",  "float16",  "bfloat16", "float32", "float64",
    "complex64", "complex128"};
const uint8_t nd_dtype_kind_table[ND_NUM_DTYPES] = {
    ND_KIND_BOOL, ND_KIND_INT,  ND_KIND_INT,  ND_KIND_INT,   ND_KIND_INT,
    ND_KIND_UINT, ND_KIND_UINT, ND_KIND_UINT, ND_KIND_UINT,  ND_KIND_FLOAT,
    ND_KIND_FLOAT, ND_KIND_FLOAT, ND_KIND_FLOAT, ND_KIND_COMPLEX, ND_KIND_COMPLEX};

/* Constant tables: no API lock (common/api_guard.h). */
const char *nd_dtype_name(nd_dtype t) {
    ND_API_UNLOCKED();
    return nd_dtype_valid((int)t) ? dtype_names[t] : "?";
}
size_t nd_dtype_size(nd_dtype t) {
    ND_API_UNLOCKED();
    return nd_dtype_valid((int)t) ? dtype_sizes[t] : 0;
}
#define dtype_kinds nd_dtype_kind_table

static nd_dtype signed_of_size(size_t n) {
    return n == 1 ? ND_INT8 : n == 2 ? ND_INT16 : n == 4 ? ND_INT32 : ND_INT64;
}

static nd_dtype promote_float(nd_dtype a, nd_dtype b) {
    if (a == b) return a;
    /* float16 and bfloat16 share no wider 16-bit type: both fit float32. */
    if ((a == ND_FLOAT16 && b == ND_BFLOAT16) || (a == ND_BFLOAT16 && b == ND_FLOAT16))
        return ND_FLOAT32;
    return dtype_sizes[a] >= dtype_sizes[b] ? a : b;
}

nd_dtype nd_float_result(nd_dtype t) {
    switch (dtype_kinds[t]) {
    case ND_KIND_FLOAT:
    case ND_KIND_COMPLEX: return t;
    default: break;
    }
    size_t n = dtype_sizes[t];
    return n == 1 ? ND_FLOAT16 : n == 2 ? ND_FLOAT32 : ND_FLOAT64;
}

nd_dtype nd_promote(nd_dtype a, nd_dtype b) {
    if (!nd_dtype_valid((int)a) || !nd_dtype_valid((int)b)) return ND_NUM_DTYPES;
    if (a == b) return a;
    nd_dtype_kind ka = dtype_kinds[a], kb = dtype_kinds[b];
    if (ka == ND_KIND_COMPLEX || kb == ND_KIND_COMPLEX) {
        /* the parts promote as real dtypes (a real operand as the float it
         * would become), then take the complex dtype holding them */
        nd_dtype pa = ka == ND_KIND_COMPLEX ? nd_dtype_part(a) : a;
        nd_dtype pb = kb == ND_KIND_COMPLEX ? nd_dtype_part(b) : b;
        return nd_dtype_complex_of(nd_float_result(nd_promote(pa, pb)));
    }
    if (ka == ND_KIND_BOOL) return b;
    if (kb == ND_KIND_BOOL) return a;
    if (ka == ND_KIND_FLOAT && kb == ND_KIND_FLOAT) return promote_float(a, b);
    if (ka == ND_KIND_FLOAT || kb == ND_KIND_FLOAT) {
        nd_dtype f = ka == ND_KIND_FLOAT ? a : b, i = ka == ND_KIND_FLOAT ? b : a;
        /* ml_dtypes: bfloat16 holds every 8-bit integer exactly enough. */
        if (f == ND_BFLOAT16 && dtype_sizes[i] == 1) return ND_BFLOAT16;
        return promote_float(nd_float_result(i), f);
    }
    if (ka == kb) return dtype_sizes[a] >= dtype_sizes[b] ? a : b;
    nd_dtype s = ka == ND_KIND_INT ? a : b, u = ka == ND_KIND_INT ? b : a;
    if (dtype_sizes[u] < dtype_sizes[s]) return s;
    if (dtype_sizes[u] == 8) return ND_FLOAT64; /* NumPy: no integer holds both */
    return signed_of_size(dtype_sizes[u] * 2);
}

float nd_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-8f; /* 2^-24: zero and subnormals */
        return sign ? -f : f;
    }
    if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);
    else bits = sign | ((exp + 112u) << 23) | (mant << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t nd_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* quiet NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (ax < 0x38800000u) {
        /* Below 2^-14: a half subnormal counts units of 2^-24. Scaling by a
         * power of two is exact, and rintf rounds to nearest even. */
        float a;
        memcpy(&a, &ax, sizeof a);
        return (uint16_t)(sign | (uint16_t)rintf(a * 16777216.0f));
    }
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* carries into the exponent */
    return (uint16_t)(sign | h);
}

float nd_bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t nd_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

double nd_load_double(const void *p, nd_dtype t) {
    switch (t) {
    case ND_BOOL: { uint8_t v; memcpy(&v, p, 1); return v != 0; }
    case ND_INT8: { int8_t v; memcpy(&v, p, 1); return v; }
    case ND_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ND_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ND_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case ND_UINT8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case ND_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ND_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case ND_UINT64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    case ND_FLOAT16: { uint16_t v; memcpy(&v, p, 2); return nd_half_to_float(v); }
    case ND_BFLOAT16: { uint16_t v; memcpy(&v, p, 2); return nd_bf16_to_float(v); }
    case ND_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case ND_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    case ND_COMPLEX64: { float v; memcpy(&v, p, 4); return v; }
    case ND_COMPLEX128: { double v; memcpy(&v, p, 8); return v; }
    default: return NAN;
    }
}

void nd_load_complex(const void *p, nd_dtype t, double *re, double *im) {
    *re = nd_load_double(p, t);
    *im = 0;
    if (t == ND_COMPLEX64) { float v; memcpy(&v, (const char *)p + 4, 4); *im = v; }
    if (t == ND_COMPLEX128) memcpy(im, (const char *)p + 8, 8);
}

void nd_store_complex(void *p, nd_dtype t, double re, double im) {
    if (t == ND_COMPLEX64) {
        float v[2] = {(float)re, (float)im};
        memcpy(p, v, 8);
    } else if (t == ND_COMPLEX128) {
        double v[2] = {re, im};
        memcpy(p, v, 16);
    } else if (t == ND_BOOL) {
        uint8_t b = re != 0 || im != 0; /* NumPy: a complex is true when either part is */
        memcpy(p, &b, 1);
    } else {
        nd_store_double(p, t, re); /* NumPy drops the imaginary part */
    }
}

/* Integer bits of a double under NumPy's unsafe cast: truncation toward
 * zero; values no integer holds (NaN, inf, out of range) give INT64_MIN's
 * bits as x86 NumPy does, without C's undefined behaviour. */
static uint64_t double_to_int_bits(double v) {
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return (uint64_t)(int64_t)v;
    if (v >= 0 && v < 18446744073709551616.0) return (uint64_t)v;
    return (uint64_t)1 << 63;
}

static void store_int_bits(void *p, nd_dtype t, uint64_t bits) {
    switch (dtype_sizes[t]) {
    case 1: { uint8_t v = (uint8_t)bits; memcpy(p, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: memcpy(p, &bits, 8); break;
    }
}

void nd_store_double(void *p, nd_dtype t, double v) {
    switch (t) {
    case ND_BOOL: { uint8_t b = v != 0; memcpy(p, &b, 1); break; }
    case ND_FLOAT16: { uint16_t h = nd_float_to_half((float)v); memcpy(p, &h, 2); break; }
    case ND_BFLOAT16: { uint16_t h = nd_float_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case ND_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case ND_FLOAT64: memcpy(p, &v, 8); break;
    case ND_COMPLEX64:
    case ND_COMPLEX128: nd_store_complex(p, t, v, 0); break;
    default:
        if (nd_dtype_valid((int)t)) store_int_bits(p, t, double_to_int_bits(v));
        break;
    }
}

void nd_convert_element(void *dst, nd_dtype dt, const void *src, nd_dtype st) {
    nd_dtype_kind sk = nd_dtype_kind_of(st);
    if (sk == ND_KIND_COMPLEX || nd_dtype_kind_of(dt) == ND_KIND_COMPLEX) {
        if (sk != ND_KIND_COMPLEX && sk != ND_KIND_FLOAT) {
            /* an integer through its exact float64-rounded value */
            double v;
            nd_convert_element(&v, ND_FLOAT64, src, st);
            nd_store_complex(dst, dt, v, 0);
            return;
        }
        double re, im;
        nd_load_complex(src, st, &re, &im);
        nd_store_complex(dst, dt, re, im);
        return;
    }
    if (sk == ND_KIND_FLOAT) {
        nd_store_double(dst, dt, nd_load_double(src, st));
        return;
    }
    /* Integers go through 64-bit integers so int64/uint64 stay exact. */
    uint64_t bits = 0;
    switch (st) {
    case ND_BOOL: { uint8_t v; memcpy(&v, src, 1); bits = v != 0; break; }
    case ND_INT8: { int8_t v; memcpy(&v, src, 1); bits = (uint64_t)(int64_t)v; break; }
    case ND_INT16: { int16_t v; memcpy(&v, src, 2); bits = (uint64_t)(int64_t)v; break; }
    case ND_INT32: { int32_t v; memcpy(&v, src, 4); bits = (uint64_t)(int64_t)v; break; }
    case ND_INT64: memcpy(&bits, src, 8); break;
    case ND_UINT8: { uint8_t v; memcpy(&v, src, 1); bits = v; break; }
    case ND_UINT16: { uint16_t v; memcpy(&v, src, 2); bits = v; break; }
    case ND_UINT32: { uint32_t v; memcpy(&v, src, 4); bits = v; break; }
    case ND_UINT64: memcpy(&bits, src, 8); break;
    default: return;
    }
    nd_dtype_kind dk = nd_dtype_kind_of(dt);
    if (dk == ND_KIND_FLOAT) {
        double v = sk == ND_KIND_UINT ? (double)bits : (double)(int64_t)bits;
        nd_store_double(dst, dt, v);
    } else if (dk == ND_KIND_BOOL) {
        uint8_t b = bits != 0;
        memcpy(dst, &b, 1);
    } else {
        store_int_bits(dst, dt, bits);
    }
}
