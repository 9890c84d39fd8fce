/* The per-(op, dtype) tile loops. Each is a plain loop the compiler
 * vectorises; integer arithmetic runs in unsigned types so it wraps without
 * undefined behaviour. Float16/bfloat16 and bool arithmetic have no loops
 * here: the interpreter computes them in float32 / int8 and casts back. */
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif


size_t nd_cpu_dtype_size(int t) {
    static const unsigned char sz[ND_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};
    return nd_dtype_valid(t) ? sz[t] : 0;
}

#define FN_ARGS void *restrict o_, const void *a_, const void *b_, const void *c_, int64_t n
#define UNUSED3 (void)a_, (void)b_, (void)c_

/* Every loop is built twice, for baseline x86-64 (SSE2) and for AVX2, and
 * picked per call (a tile) by a cached CPU-feature test. */
#if defined(__x86_64__) && defined(__GNUC__)
#define MULTI(name)                                                              \
    static inline __attribute__((always_inline)) void name##_impl(FN_ARGS);      \
    __attribute__((target("avx2,fma"))) static void name##_avx2(FN_ARGS) {      \
        name##_impl(o_, a_, b_, c_, n);                                          \
    }                                                                            \
    static void name(FN_ARGS) {                                                  \
        if (__builtin_cpu_supports("avx2")) name##_avx2(o_, a_, b_, c_, n);      \
        else name##_impl(o_, a_, b_, c_, n);                                     \
    }                                                                            \
    static inline __attribute__((always_inline)) void name##_impl(FN_ARGS)
#else
#define MULTI(name) static void name(FN_ARGS)
#endif

#define UNARY(name, T, expr)                                \
    MULTI(name) {                                           \
        T *restrict o = (T *)o_;                            \
        const T *a = (const T *)a_;                         \
        (void)b_, (void)c_;                                 \
        for (int64_t i = 0; i < n; i++) {                   \
            T x = a[i];                                     \
            o[i] = (expr);                                  \
        }                                                   \
    }
#define BINARY(name, T, R, expr)                            \
    MULTI(name) {                                           \
        R *restrict o = (R *)o_;                            \
        const T *a = (const T *)a_, *b = (const T *)b_;     \
        (void)c_;                                           \
        for (int64_t i = 0; i < n; i++) {                   \
            T x = a[i], y = b[i];                           \
            o[i] = (R)(expr);                               \
        }                                                   \
    }

/* ------------------------------------------------------------ comparisons */
#define CMP_SET(S, T)                                      \
    BINARY(eq_##S, T, uint8_t, x == y)                     \
    BINARY(ne_##S, T, uint8_t, x != y)                     \
    BINARY(lt_##S, T, uint8_t, x < y)                      \
    BINARY(le_##S, T, uint8_t, x <= y)                     \
    BINARY(gt_##S, T, uint8_t, x > y)                      \
    BINARY(ge_##S, T, uint8_t, x >= y)

CMP_SET(BOOL, uint8_t)
CMP_SET(I8, int8_t)
CMP_SET(I16, int16_t)
CMP_SET(I32, int32_t)
CMP_SET(I64, int64_t)
CMP_SET(U8, uint8_t)
CMP_SET(U16, uint16_t)
CMP_SET(U32, uint32_t)
CMP_SET(U64, uint64_t)
CMP_SET(F32, float)
CMP_SET(F64, double)

/* -------------------------------------------------------------- integers */
static uint64_t ipow_u(uint64_t base, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

/* W: the unsigned type the arithmetic wraps in (at least unsigned int, so
 * uint16 * uint16 never overflows a signed int). */
#define INT_COMMON(S, T, W)                                                      \
    UNARY(square_##S, T, (T)((W)x * (W)x))                                       \
    UNARY(ident_##S, T, x)                                                       \
    BINARY(add_##S, T, T, (W)x + (W)y)                                           \
    BINARY(sub_##S, T, T, (W)x - (W)y)                                           \
    BINARY(mul_##S, T, T, (W)x * (W)y)                                           \
    BINARY(max_##S, T, T, x > y ? x : y)                                         \
    BINARY(min_##S, T, T, x < y ? x : y)

#define INT_SIGNED(S, T, W)                                                      \
    INT_COMMON(S, T, W)                                                          \
    UNARY(neg_##S, T, (T)((W)0 - (W)x))                                          \
    UNARY(abs_##S, T, x < 0 ? (T)((W)0 - (W)x) : x)                              \
    BINARY(div_##S, T, T,                                                        \
           (y == 0 || (y == -1 && x == (T)((W)1 << (sizeof(T) * 8 - 1)))) ? 0 : x / y) \
    static void pow_##S(FN_ARGS) {                                               \
        T *restrict o = (T *)o_;                                                 \
        const T *a = (const T *)a_, *b = (const T *)b_;                          \
        (void)c_;                                                                \
        for (int64_t i = 0; i < n; i++) {                                        \
            T x = a[i], y = b[i];                                                \
            if (y < 0)                                                           \
                o[i] = x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;            \
            else                                                                 \
                o[i] = (T)ipow_u((uint64_t)(int64_t)x, (uint64_t)(int64_t)y);    \
        }                                                                        \
    }

#define INT_UNSIGNED(S, T, W)                                                    \
    INT_COMMON(S, T, W)                                                          \
    UNARY(neg_##S, T, (T)((W)0 - (W)x))                                          \
    BINARY(div_##S, T, T, y == 0 ? 0 : x / y)                                    \
    static void pow_##S(FN_ARGS) {                                               \
        T *restrict o = (T *)o_;                                                 \
        const T *a = (const T *)a_, *b = (const T *)b_;                          \
        (void)c_;                                                                \
        for (int64_t i = 0; i < n; i++) o[i] = (T)ipow_u(a[i], b[i]);            \
    }

INT_SIGNED(I8, int8_t, uint32_t)
INT_SIGNED(I16, int16_t, uint32_t)
INT_SIGNED(I32, int32_t, uint32_t)
INT_SIGNED(I64, int64_t, uint64_t)
INT_UNSIGNED(U8, uint8_t, uint32_t)
INT_UNSIGNED(U16, uint16_t, uint32_t)
INT_UNSIGNED(U32, uint32_t, uint32_t)
INT_UNSIGNED(U64, uint64_t, uint64_t)
#define abs_U8 ident_U8
#define abs_U16 ident_U16
#define abs_U32 ident_U32
#define abs_U64 ident_U64

/* ---------------------------------------------------------------- floats */
#define FLOAT_SET(S, T, SUF)                                                     \
    UNARY(neg_##S, T, -x)                                                        \
    UNARY(abs_##S, T, fabs##SUF(x))                                              \
    UNARY(square_##S, T, x * x)                                                  \
    BINARY(add_##S, T, T, x + y)                                                 \
    BINARY(sub_##S, T, T, x - y)                                                 \
    BINARY(mul_##S, T, T, x * y)                                                 \
    BINARY(div_##S, T, T, x / y)                                                 \
    BINARY(pow_##S, T, T, pow##SUF(x, y))                                        \
    BINARY(max_##S, T, T, (x >= y || x != x) ? x : y)                            \
    BINARY(min_##S, T, T, (x <= y || x != x) ? x : y)

FLOAT_SET(F32, float, f)
FLOAT_SET(F64, double, )

/* floor/ceil without SSE4.1: truncate through int32 where |x| < 2^23 (every
 * float beyond is already integral), then step; copysign keeps -0.0. */
UNARY(floor_F32, float,
      copysignf(fabsf(x) < 0x1p23f ? ((float)(int32_t)x > x ? (float)(int32_t)x - 1.0f
                                                           : (float)(int32_t)x)
                                   : x,
                x))
UNARY(ceil_F32, float,
      copysignf(fabsf(x) < 0x1p23f ? ((float)(int32_t)x < x ? (float)(int32_t)x + 1.0f
                                                           : (float)(int32_t)x)
                                   : x,
                x))
UNARY(floor_F64, double, floor(x))
UNARY(ceil_F64, double, ceil(x))
UNARY(tanh_F64, double, tanh(x))

static void sqrt_F32(FN_ARGS) {
    float *restrict o = (float *)o_;
    const float *a = (const float *)a_;
    UNUSED3;
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, _mm_sqrt_ps(_mm_loadu_ps(a + i)));
#endif
    for (; i < n; i++) o[i] = sqrtf(a[i]);
}
static void sqrt_F64(FN_ARGS) {
    double *restrict o = (double *)o_;
    const double *a = (const double *)a_;
    UNUSED3;
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(o + i, _mm_sqrt_pd(_mm_loadu_pd(a + i)));
#endif
    for (; i < n; i++) o[i] = sqrt(a[i]);
}

#define VM_WRAP(name, vf)                                                        \
    static void name(FN_ARGS) {                                                  \
        UNUSED3;                                                                 \
        vf((float *)o_, (const float *)a_, n);                                   \
    }
VM_WRAP(exp_F32, nd_cpu_vexpf)
VM_WRAP(log_F32, nd_cpu_vlogf)
VM_WRAP(sin_F32, nd_cpu_vsinf)
VM_WRAP(cos_F32, nd_cpu_vcosf)
VM_WRAP(tanh_F32, nd_cpu_vtanhf)
#define VM_WRAP_D(name, vf)                                                      \
    static void name(FN_ARGS) {                                                  \
        UNUSED3;                                                                 \
        vf((double *)o_, (const double *)a_, n);                                 \
    }
VM_WRAP_D(exp_F64, nd_cpu_vexp)
VM_WRAP_D(log_F64, nd_cpu_vlog)
VM_WRAP_D(sin_F64, nd_cpu_vsin)
VM_WRAP_D(cos_F64, nd_cpu_vcos)

/* --------------------------------------------------------- bool and where */
UNARY(not_BOOL, uint8_t, x == 0)
BINARY(and_BOOL, uint8_t, uint8_t, (x != 0) & (y != 0))
BINARY(or_BOOL, uint8_t, uint8_t, (x != 0) | (y != 0))

#define WHERE_FN(name, T)                                                        \
    static void name(FN_ARGS) {                                                  \
        T *restrict o = (T *)o_;                                                 \
        const uint8_t *a = (const uint8_t *)a_;                                  \
        const T *b = (const T *)b_, *c = (const T *)c_;                          \
        for (int64_t i = 0; i < n; i++) o[i] = a[i] ? b[i] : c[i];               \
    }
WHERE_FN(where_1, uint8_t)
WHERE_FN(where_2, uint16_t)
WHERE_FN(where_4, uint32_t)
WHERE_FN(where_8, uint64_t)

/* ----------------------------------------------------------------- table */
#define ROW_CMP(S, D)                                                            \
    [ND_OP_EQ][D] = eq_##S, [ND_OP_NE][D] = ne_##S, [ND_OP_LT][D] = lt_##S,      \
    [ND_OP_LE][D] = le_##S, [ND_OP_GT][D] = gt_##S, [ND_OP_GE][D] = ge_##S
#define ROW_NUM(S, D)                                                            \
    [ND_OP_NEG][D] = neg_##S, [ND_OP_ABS][D] = abs_##S,                          \
    [ND_OP_SQUARE][D] = square_##S, [ND_OP_ADD][D] = add_##S,                    \
    [ND_OP_SUB][D] = sub_##S, [ND_OP_MUL][D] = mul_##S, [ND_OP_DIV][D] = div_##S, \
    [ND_OP_POW][D] = pow_##S, [ND_OP_MAX][D] = max_##S, [ND_OP_MIN][D] = min_##S, \
    ROW_CMP(S, D)
#define ROW_INT(S, D) ROW_NUM(S, D), [ND_OP_FLOOR][D] = ident_##S, [ND_OP_CEIL][D] = ident_##S
#define ROW_FLOAT(S, D)                                                          \
    ROW_NUM(S, D), [ND_OP_FLOOR][D] = floor_##S, [ND_OP_CEIL][D] = ceil_##S,     \
    [ND_OP_SQRT][D] = sqrt_##S, [ND_OP_EXP][D] = exp_##S, [ND_OP_LOG][D] = log_##S, \
    [ND_OP_SIN][D] = sin_##S, [ND_OP_COS][D] = cos_##S, [ND_OP_TANH][D] = tanh_##S

static nd_cpu_fn const op_table[ND_NUM_ELEMENTWISE_OPS][ND_NUM_DTYPES] = {
    ROW_INT(I8, ND_INT8),      ROW_INT(I16, ND_INT16),   ROW_INT(I32, ND_INT32),
    ROW_INT(I64, ND_INT64),    ROW_INT(U8, ND_UINT8),    ROW_INT(U16, ND_UINT16),
    ROW_INT(U32, ND_UINT32),   ROW_INT(U64, ND_UINT64),  ROW_FLOAT(F32, ND_FLOAT32),
    ROW_FLOAT(F64, ND_FLOAT64), ROW_CMP(BOOL, ND_BOOL),
    [ND_OP_LOGICAL_NOT][ND_BOOL] = not_BOOL, [ND_OP_LOGICAL_AND][ND_BOOL] = and_BOOL,
    [ND_OP_LOGICAL_OR][ND_BOOL] = or_BOOL,
    [ND_OP_WHERE] = {[ND_BOOL] = where_1, [ND_INT8] = where_1, [ND_UINT8] = where_1,
                     [ND_INT16] = where_2, [ND_UINT16] = where_2, [ND_FLOAT16] = where_2,
                     [ND_BFLOAT16] = where_2, [ND_INT32] = where_4, [ND_UINT32] = where_4,
                     [ND_FLOAT32] = where_4, [ND_INT64] = where_8, [ND_UINT64] = where_8,
                     [ND_FLOAT64] = where_8},
};

nd_cpu_fn nd_cpu_op_fn(int op, int t) {
    if (op < 0 || op >= ND_NUM_ELEMENTWISE_OPS || !nd_dtype_valid(t)) return NULL;
    return op_table[op][t];
}

int nd_cpu_compute_dtype(int op, int t) {
    if (op == ND_OP_WHERE || op == ND_OP_CAST) return t;
    if (op == ND_OP_LOGICAL_NOT || op == ND_OP_LOGICAL_AND || op == ND_OP_LOGICAL_OR)
        return ND_BOOL;
    if (t == ND_FLOAT16 || t == ND_BFLOAT16) return ND_FLOAT32;
    if (nd_op_is_comparison((nd_op)op)) return t;
    if (op_table[op][t] == NULL) {
        if (t == ND_BOOL && op_table[op][ND_INT8] != NULL) return ND_INT8;
        return ND_FLOAT64;
    }
    return t;
}
