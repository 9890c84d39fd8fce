/* The per-(op, dtype) tile loops: plain loops over the element functions of
 * cpu_scalar.h, which the compiler vectorises. Float16/bfloat16 and bool
 * arithmetic have no loops here: the interpreter computes them in float32 /
 * int8 and casts back. */
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/cpu_scalar.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif


size_t nd_cpu_dtype_size(int t) {
    static const unsigned char sz[ND_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
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

/* Tile loops over the element functions of cpu_scalar.h. */
#define LOOP_UN(label, S)                                                        \
    MULTI(label##_##S) {                                                         \
        S##_T *restrict o = (S##_T *)o_;                                         \
        const S##_T *a = (const S##_T *)a_;                                      \
        (void)b_, (void)c_;                                                      \
        for (int64_t i = 0; i < n; i++) o[i] = nds_##label##_##S(a[i]);          \
    }
#define LOOP_BIN(label, S, R)                                                    \
    MULTI(label##_##S) {                                                         \
        R *restrict o = (R *)o_;                                                 \
        const S##_T *a = (const S##_T *)a_, *b = (const S##_T *)b_;              \
        (void)c_;                                                                \
        for (int64_t i = 0; i < n; i++) o[i] = nds_##label##_##S(a[i], b[i]);    \
    }

#define LOOP_PRED(label, S)                                                      \
    MULTI(label##_##S) {                                                         \
        BOOL_T *restrict o = (BOOL_T *)o_;                                       \
        const S##_T *a = (const S##_T *)a_;                                      \
        (void)b_, (void)c_;                                                      \
        for (int64_t i = 0; i < n; i++) o[i] = nds_##label##_##S(a[i]);          \
    }

#define CMP_SET(S)                                                               \
    LOOP_BIN(eq, S, BOOL_T) LOOP_BIN(ne, S, BOOL_T) LOOP_BIN(lt, S, BOOL_T)      \
    LOOP_BIN(le, S, BOOL_T) LOOP_BIN(gt, S, BOOL_T) LOOP_BIN(ge, S, BOOL_T)      \
    LOOP_PRED(isnan, S) LOOP_PRED(isinf, S) LOOP_PRED(isfinite, S)               \
    LOOP_PRED(signbit, S) LOOP_PRED(isposinf, S) LOOP_PRED(isneginf, S)
CMP_SET(BOOL)
CMP_SET(I8)
CMP_SET(I16)
CMP_SET(I32)
CMP_SET(I64)
CMP_SET(U8)
CMP_SET(U16)
CMP_SET(U32)
CMP_SET(U64)
CMP_SET(F32)
CMP_SET(F64)

#define NUM_SET(S)                                                               \
    LOOP_UN(neg, S) LOOP_UN(abs, S) LOOP_UN(square, S) LOOP_UN(floor, S)         \
    LOOP_UN(ceil, S) LOOP_BIN(add, S, S##_T) LOOP_BIN(sub, S, S##_T)             \
    LOOP_BIN(mul, S, S##_T) LOOP_BIN(div, S, S##_T) LOOP_BIN(pow, S, S##_T)      \
    LOOP_BIN(maximum, S, S##_T) LOOP_BIN(minimum, S, S##_T) LOOP_UN(trunc, S)    \
    LOOP_UN(sign, S) LOOP_UN(reciprocal, S) LOOP_BIN(fmax, S, S##_T)              \
    LOOP_BIN(fmin, S, S##_T) LOOP_BIN(floor_divide, S, S##_T)                     \
    LOOP_BIN(remainder, S, S##_T) LOOP_BIN(fmod, S, S##_T)
NUM_SET(F32)
NUM_SET(F64)
#define INT_SET(S)                                                               \
    NUM_SET(S) LOOP_UN(invert, S) LOOP_BIN(bitwise_and, S, S##_T)                 \
    LOOP_BIN(bitwise_or, S, S##_T) LOOP_BIN(bitwise_xor, S, S##_T)                \
    LOOP_BIN(left_shift, S, S##_T) LOOP_BIN(right_shift, S, S##_T)                \
    LOOP_BIN(gcd, S, S##_T) LOOP_BIN(lcm, S, S##_T)
INT_SET(I8)
INT_SET(I16)
INT_SET(I32)
INT_SET(I64)
INT_SET(U8)
INT_SET(U16)
INT_SET(U32)
INT_SET(U64)
/* The float-only math: libm per element. The transcendentals among them
 * run through cpu_sleef.c's vector loops instead (nd_cpu_op_fn); these are
 * the loops of a build without SLEEF for its ISA. */
#define FLOAT_MATH_SET(S)                                                        \
    LOOP_UN(exp, S) LOOP_UN(log, S) LOOP_UN(sin, S) LOOP_UN(cos, S) LOOP_UN(tanh, S) \
    LOOP_UN(tan, S) LOOP_UN(arcsin, S) LOOP_UN(arccos, S) LOOP_UN(arctan, S)     \
    LOOP_UN(sinh, S) LOOP_UN(cosh, S) LOOP_UN(arcsinh, S) LOOP_UN(arccosh, S)    \
    LOOP_UN(arctanh, S) LOOP_UN(exp2, S) LOOP_UN(expm1, S) LOOP_UN(log2, S)      \
    LOOP_UN(log10, S) LOOP_UN(log1p, S) LOOP_UN(cbrt, S) LOOP_UN(rint, S)         \
    LOOP_BIN(arctan2, S, S##_T) LOOP_BIN(hypot, S, S##_T) LOOP_BIN(copysign, S, S##_T) \
    LOOP_UN(deg2rad, S) LOOP_UN(rad2deg, S) LOOP_BIN(heaviside, S, S##_T)        \
    LOOP_BIN(nextafter, S, S##_T) LOOP_BIN(ldexp, S, S##_T)                        \
    LOOP_BIN(logaddexp, S, S##_T) LOOP_BIN(logaddexp2, S, S##_T)
FLOAT_MATH_SET(F32)
FLOAT_MATH_SET(F64)
/* float16/bfloat16 nextafter: their own step, computed in float32 */
LOOP_BIN(nextafter_f16, F32, F32_T)
LOOP_BIN(nextafter_bf16, F32, F32_T)

static void sqrt_F32(FN_ARGS) {
    float *restrict o = (float *)o_;
    const float *a = (const float *)a_;
    UNUSED3;
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(o + i, _mm_sqrt_ps(_mm_loadu_ps(a + i)));
#endif
    for (; i < n; i++) o[i] = nds_sqrt_F32(a[i]);
}
static void sqrt_F64(FN_ARGS) {
    double *restrict o = (double *)o_;
    const double *a = (const double *)a_;
    UNUSED3;
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(o + i, _mm_sqrt_pd(_mm_loadu_pd(a + i)));
#endif
    for (; i < n; i++) o[i] = nds_sqrt_F64(a[i]);
}

/* ---------------------------------------------------------------- complex */
/* complex -> real part dtype (abs, angle, real, imag) */
#define LOOP_C2R(label, S, P)                                                    \
    MULTI(label##_##S) {                                                         \
        P##_T *restrict o = (P##_T *)o_;                                         \
        const S##_T *a = (const S##_T *)a_;                                      \
        (void)b_, (void)c_;                                                      \
        for (int64_t i = 0; i < n; i++) o[i] = nds_##label##_##S(a[i]);          \
    }
/* (real, real) -> complex */
#define LOOP_R2C(label, S, P)                                                    \
    MULTI(label##_##S) {                                                         \
        S##_T *restrict o = (S##_T *)o_;                                         \
        const P##_T *a = (const P##_T *)a_, *b = (const P##_T *)b_;              \
        (void)c_;                                                                \
        for (int64_t i = 0; i < n; i++) o[i] = nds_##label##_##S(a[i], b[i]);    \
    }
#define CPLX_SET(S, P)                                                           \
    LOOP_BIN(eq, S, BOOL_T) LOOP_BIN(ne, S, BOOL_T) LOOP_BIN(lt, S, BOOL_T)      \
    LOOP_BIN(le, S, BOOL_T) LOOP_BIN(gt, S, BOOL_T) LOOP_BIN(ge, S, BOOL_T)      \
    LOOP_PRED(isnan, S) LOOP_PRED(isinf, S) LOOP_PRED(isfinite, S)               \
    LOOP_UN(neg, S) LOOP_UN(square, S) LOOP_UN(reciprocal, S) LOOP_UN(conj, S)   \
    LOOP_BIN(add, S, S##_T) LOOP_BIN(sub, S, S##_T) LOOP_BIN(mul, S, S##_T)      \
    LOOP_BIN(div, S, S##_T) LOOP_BIN(maximum, S, S##_T) LOOP_BIN(minimum, S, S##_T) \
    LOOP_BIN(fmax, S, S##_T) LOOP_BIN(fmin, S, S##_T)                            \
    LOOP_UN(exp, S) LOOP_UN(log, S) LOOP_UN(sqrt, S) LOOP_UN(sin, S) LOOP_UN(cos, S) \
    LOOP_UN(tan, S) LOOP_UN(sinh, S) LOOP_UN(cosh, S) LOOP_UN(tanh, S)           \
    LOOP_UN(arcsin, S) LOOP_UN(arccos, S) LOOP_UN(arctan, S) LOOP_UN(arcsinh, S) \
    LOOP_UN(arccosh, S) LOOP_UN(arctanh, S) LOOP_UN(log10, S) LOOP_UN(log2, S)   \
    LOOP_UN(log1p, S) LOOP_UN(exp2, S) LOOP_UN(expm1, S) LOOP_UN(sign, S)        \
    LOOP_UN(rint, S) LOOP_BIN(pow, S, S##_T)                                     \
    LOOP_C2R(real, S, P) LOOP_C2R(imag, S, P) LOOP_C2R(cabs, S, P) LOOP_C2R(angle, S, P) \
    LOOP_R2C(make_complex, S, P)
CPLX_SET(C64, F32)
CPLX_SET(C128, F64)

/* --------------------------------------------------------- bool and where */
LOOP_UN(not, BOOL)
LOOP_BIN(and, BOOL, BOOL_T)
LOOP_BIN(or, BOOL, BOOL_T)
LOOP_BIN(xor, BOOL, BOOL_T)

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
WHERE_FN(where_16, C128_T)

/* ----------------------------------------------------------------- table */
#define ROW_CMP(S, D)                                                            \
    [ND_OP_EQ][D] = eq_##S, [ND_OP_NE][D] = ne_##S, [ND_OP_LT][D] = lt_##S,      \
    [ND_OP_LE][D] = le_##S, [ND_OP_GT][D] = gt_##S, [ND_OP_GE][D] = ge_##S,      \
    [ND_OP_ISNAN][D] = isnan_##S, [ND_OP_ISINF][D] = isinf_##S,                  \
    [ND_OP_ISFINITE][D] = isfinite_##S, [ND_OP_SIGNBIT][D] = signbit_##S,        \
    [ND_OP_ISPOSINF][D] = isposinf_##S, [ND_OP_ISNEGINF][D] = isneginf_##S
#define ROW_NUM(S, D)                                                            \
    [ND_OP_NEG][D] = neg_##S, [ND_OP_ABS][D] = abs_##S,                          \
    [ND_OP_SQUARE][D] = square_##S, [ND_OP_ADD][D] = add_##S,                    \
    [ND_OP_SUB][D] = sub_##S, [ND_OP_MUL][D] = mul_##S, [ND_OP_DIV][D] = div_##S, \
    [ND_OP_POW][D] = pow_##S, [ND_OP_MAX][D] = maximum_##S, [ND_OP_MIN][D] = minimum_##S, \
    [ND_OP_FLOOR][D] = floor_##S, [ND_OP_CEIL][D] = ceil_##S, [ND_OP_TRUNC][D] = trunc_##S, \
    [ND_OP_SIGN][D] = sign_##S, [ND_OP_RECIPROCAL][D] = reciprocal_##S,          \
    [ND_OP_FMAX][D] = fmax_##S, [ND_OP_FMIN][D] = fmin_##S,                      \
    [ND_OP_FLOOR_DIVIDE][D] = floor_divide_##S, [ND_OP_REMAINDER][D] = remainder_##S, \
    [ND_OP_FMOD][D] = fmod_##S, ROW_CMP(S, D)
#define ROW_INT(S, D)                                                            \
    ROW_NUM(S, D), [ND_OP_INVERT][D] = invert_##S, [ND_OP_BITWISE_AND][D] = bitwise_and_##S, \
    [ND_OP_BITWISE_OR][D] = bitwise_or_##S, [ND_OP_BITWISE_XOR][D] = bitwise_xor_##S, \
    [ND_OP_LEFT_SHIFT][D] = left_shift_##S, [ND_OP_RIGHT_SHIFT][D] = right_shift_##S, \
    [ND_OP_GCD][D] = gcd_##S, [ND_OP_LCM][D] = lcm_##S
#define ROW_FLOAT(S, D)                                                          \
    ROW_NUM(S, D), [ND_OP_SQRT][D] = sqrt_##S, [ND_OP_EXP][D] = exp_##S, [ND_OP_LOG][D] = log_##S, \
    [ND_OP_SIN][D] = sin_##S, [ND_OP_COS][D] = cos_##S, [ND_OP_TANH][D] = tanh_##S, \
    [ND_OP_TAN][D] = tan_##S, [ND_OP_ARCSIN][D] = arcsin_##S, [ND_OP_ARCCOS][D] = arccos_##S,  \
    [ND_OP_ARCTAN][D] = arctan_##S, [ND_OP_SINH][D] = sinh_##S, [ND_OP_COSH][D] = cosh_##S,    \
    [ND_OP_ARCSINH][D] = arcsinh_##S, [ND_OP_ARCCOSH][D] = arccosh_##S,                       \
    [ND_OP_ARCTANH][D] = arctanh_##S, [ND_OP_EXP2][D] = exp2_##S, [ND_OP_EXPM1][D] = expm1_##S, \
    [ND_OP_LOG2][D] = log2_##S, [ND_OP_LOG10][D] = log10_##S, [ND_OP_LOG1P][D] = log1p_##S,    \
    [ND_OP_CBRT][D] = cbrt_##S, [ND_OP_RINT][D] = rint_##S, [ND_OP_ARCTAN2][D] = arctan2_##S, \
    [ND_OP_HYPOT][D] = hypot_##S, [ND_OP_COPYSIGN][D] = copysign_##S,                        \
    [ND_OP_DEG2RAD][D] = deg2rad_##S, [ND_OP_RAD2DEG][D] = rad2deg_##S,                        \
    [ND_OP_HEAVISIDE][D] = heaviside_##S, [ND_OP_NEXTAFTER][D] = nextafter_##S,            \
    [ND_OP_LDEXP][D] = ldexp_##S, [ND_OP_LOGADDEXP][D] = logaddexp_##S,                      \
    [ND_OP_LOGADDEXP2][D] = logaddexp2_##S

/* The complex loops: NumPy's complex ufuncs that nd has (the frontend
 * refuses the others at record time). */
#define ROW_CPLX(S, D)                                                           \
    [ND_OP_EQ][D] = eq_##S, [ND_OP_NE][D] = ne_##S, [ND_OP_LT][D] = lt_##S,      \
    [ND_OP_LE][D] = le_##S, [ND_OP_GT][D] = gt_##S, [ND_OP_GE][D] = ge_##S,      \
    [ND_OP_ISNAN][D] = isnan_##S, [ND_OP_ISINF][D] = isinf_##S,                  \
    [ND_OP_ISFINITE][D] = isfinite_##S, [ND_OP_NEG][D] = neg_##S,                \
    [ND_OP_SQUARE][D] = square_##S, [ND_OP_RECIPROCAL][D] = reciprocal_##S,      \
    [ND_OP_CONJ][D] = conj_##S, [ND_OP_ADD][D] = add_##S, [ND_OP_SUB][D] = sub_##S, \
    [ND_OP_MUL][D] = mul_##S, [ND_OP_DIV][D] = div_##S, [ND_OP_MAX][D] = maximum_##S, \
    [ND_OP_MIN][D] = minimum_##S, [ND_OP_FMAX][D] = fmax_##S, [ND_OP_FMIN][D] = fmin_##S, \
    [ND_OP_EXP][D] = exp_##S, [ND_OP_LOG][D] = log_##S, [ND_OP_SQRT][D] = sqrt_##S, \
    [ND_OP_SIN][D] = sin_##S, [ND_OP_COS][D] = cos_##S, [ND_OP_TAN][D] = tan_##S, \
    [ND_OP_SINH][D] = sinh_##S, [ND_OP_COSH][D] = cosh_##S, [ND_OP_TANH][D] = tanh_##S, \
    [ND_OP_REAL][D] = real_##S, [ND_OP_IMAG][D] = imag_##S, [ND_OP_CABS][D] = cabs_##S, \
    [ND_OP_ANGLE][D] = angle_##S, [ND_OP_MAKE_COMPLEX][D] = make_complex_##S,    \
    [ND_OP_ARCSIN][D] = arcsin_##S, [ND_OP_ARCCOS][D] = arccos_##S,              \
    [ND_OP_ARCTAN][D] = arctan_##S, [ND_OP_ARCSINH][D] = arcsinh_##S,            \
    [ND_OP_ARCCOSH][D] = arccosh_##S, [ND_OP_ARCTANH][D] = arctanh_##S,          \
    [ND_OP_LOG10][D] = log10_##S, [ND_OP_LOG2][D] = log2_##S,                    \
    [ND_OP_LOG1P][D] = log1p_##S, [ND_OP_EXP2][D] = exp2_##S,                    \
    [ND_OP_EXPM1][D] = expm1_##S, [ND_OP_SIGN][D] = sign_##S,                    \
    [ND_OP_RINT][D] = rint_##S, [ND_OP_POW][D] = pow_##S

/* One loop per (op, compute dtype) of common/ops.h's table; a new op
 * needs its row here (the assertions below fail the build until it has one,
 * and the cross-backend op test names any pair that is still missing). */
_Static_assert(ND_NUM_ELEMENTWISE_OPS == 86, "cpu_ops.c: add the new op's loops to op_table");
static nd_cpu_fn const op_table[ND_NUM_ELEMENTWISE_OPS][ND_NUM_DTYPES] = {
    ROW_INT(I8, ND_INT8),      ROW_INT(I16, ND_INT16),   ROW_INT(I32, ND_INT32),
    ROW_INT(I64, ND_INT64),    ROW_INT(U8, ND_UINT8),    ROW_INT(U16, ND_UINT16),
    ROW_INT(U32, ND_UINT32),   ROW_INT(U64, ND_UINT64),  ROW_FLOAT(F32, ND_FLOAT32),
    ROW_FLOAT(F64, ND_FLOAT64), ROW_CMP(BOOL, ND_BOOL),
    ROW_CPLX(C64, ND_COMPLEX64), ROW_CPLX(C128, ND_COMPLEX128),
    [ND_OP_LOGICAL_NOT][ND_BOOL] = not_BOOL, [ND_OP_LOGICAL_AND][ND_BOOL] = and_BOOL,
    [ND_OP_LOGICAL_OR][ND_BOOL] = or_BOOL, [ND_OP_LOGICAL_XOR][ND_BOOL] = xor_BOOL,
    [ND_OP_NEXTAFTER_F16][ND_FLOAT32] = nextafter_f16_F32,
    [ND_OP_NEXTAFTER_BF16][ND_FLOAT32] = nextafter_bf16_F32,
    [ND_OP_WHERE] = {[ND_BOOL] = where_1, [ND_INT8] = where_1, [ND_UINT8] = where_1,
                     [ND_INT16] = where_2, [ND_UINT16] = where_2, [ND_FLOAT16] = where_2,
                     [ND_BFLOAT16] = where_2, [ND_INT32] = where_4, [ND_UINT32] = where_4,
                     [ND_FLOAT32] = where_4, [ND_INT64] = where_8, [ND_UINT64] = where_8,
                     [ND_FLOAT64] = where_8, [ND_COMPLEX64] = where_8,
                     [ND_COMPLEX128] = where_16},
};

nd_cpu_fn nd_cpu_op_fn(int op, int t) {
    if (op < 0 || op >= ND_NUM_ELEMENTWISE_OPS || !nd_dtype_valid(t)) return NULL;
    nd_cpu_fn v = nd_cpu_vmath_fn(op, t);
    return v ? v : op_table[op][t];
}

int nd_cpu_compute_dtype(int op, int t) { return nd_op_compute_dtype((nd_op)op, t); }

int nd_cpu_op_is_array_fn(int op, int t) { return nd_cpu_vmath_fn(op, t) != NULL; }
