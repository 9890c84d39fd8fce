/* Float32/float64 transcendental tile loops through SLEEF's vector
 * functions, the 1-ulp variants (u10: at most 1.0 ulp from the correctly
 * rounded result, SLEEF's documented bound; an exhaustive-by-stride sweep
 * of float32 and 3.2M float64 inputs against double/long double libm found
 * at most 1.0 ulp on every function below). Each loop is built for AVX-512F
 * (16 floats a vector), AVX2+FMA (8) and baseline SSE2 (4) on x86-64, and
 * for Advanced SIMD on AArch64; the widest the CPU has is picked per call.
 * Signed zeros, subnormals, infinities and NaN come out as libm gives
 * them. Beyond SLEEF's documented 1-ulp domain of sinh, cosh, arcsinh,
 * arccosh and log1p it may return infinity for a finite result: a cheap
 * vectorised scan hands those arguments to libm. */
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/cpu_scalar.h"

#if defined(__x86_64__)
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
/* sleef.h declares each ISA's functions only where the compiler targets
 * that ISA; declare them all, and call each from a function built for it. */
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")
#include <sleef.h>
#pragma GCC pop_options
#define ND_SLEEF_WIDE 1
#else
#include <sleef.h>
#endif
#define ND_SLEEF 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#include <sleef.h>
#define ND_SLEEF 1
#endif

#ifdef ND_SLEEF

/* o[0..n) = VF(a[0..n)), W lanes at a time; the tail goes through a
 * zero-padded vector. Each vector is loaded before it is stored, so o may
 * be a. */
#define V_LOOP(NAME, ATTR, T, W, LOAD, STORE, VF)                                \
    ATTR static void NAME(T *o, const T *a, int64_t n) {                         \
        int64_t i = 0;                                                           \
        for (; i + W <= n; i += W) STORE(o + i, VF(LOAD(a + i)));                \
        if (i < n) {                                                             \
            T buf[W];                                                            \
            memset(buf, 0, sizeof buf);                                          \
            memcpy(buf, a + i, (size_t)(n - i) * sizeof(T));                     \
            STORE(buf, VF(LOAD(buf)));                                           \
            memcpy(o + i, buf, (size_t)(n - i) * sizeof(T));                     \
        }                                                                        \
    }

#if defined(__x86_64__)
#define BASE_F32(NAME, SL) V_LOOP(NAME, , float, 4, _mm_loadu_ps, _mm_storeu_ps, Sleef_##SL##f4_u10sse2)
#define BASE_F64(NAME, SL) V_LOOP(NAME, , double, 2, _mm_loadu_pd, _mm_storeu_pd, Sleef_##SL##d2_u10sse2)
#else
#define BASE_F32(NAME, SL) V_LOOP(NAME, , float, 4, vld1q_f32, vst1q_f32, Sleef_##SL##f4_u10advsimd)
#define BASE_F64(NAME, SL) V_LOOP(NAME, , double, 2, vld1q_f64, vst1q_f64, Sleef_##SL##d2_u10advsimd)
#endif

#ifdef ND_SLEEF_WIDE
#define AT512 __attribute__((target("avx2,fma,avx512f")))
#define AT256 __attribute__((target("avx2,fma")))
#define WIDE_F32(NAME, SL)                                                                     \
    V_LOOP(NAME##_512, AT512, float, 16, _mm512_loadu_ps, _mm512_storeu_ps,                    \
           Sleef_##SL##f16_u10avx512f)                                                         \
    V_LOOP(NAME##_256, AT256, float, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_##SL##f8_u10avx2)
#define WIDE_F64(NAME, SL)                                                                     \
    V_LOOP(NAME##_512, AT512, double, 8, _mm512_loadu_pd, _mm512_storeu_pd,                    \
           Sleef_##SL##d8_u10avx512f)                                                          \
    V_LOOP(NAME##_256, AT256, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, Sleef_##SL##d4_u10avx2)
/* 2: AVX-512F, 1: AVX2+FMA, 0: the baseline. Cached: the test is per tile. */
static int isa(void) {
    static int level = -1;
    int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (l < 0) {
        l = __builtin_cpu_supports("avx512f")                                      ? 2
            : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1
                                                                               : 0;
        __atomic_store_n(&level, l, __ATOMIC_RELAXED);
    }
    return l;
}
#define PICK(NAME, o, a, n)                                                      \
    do {                                                                         \
        int l_ = isa();                                                          \
        if (l_ == 2) NAME##_512(o, a, n);                                        \
        else if (l_ == 1) NAME##_256(o, a, n);                                   \
        else NAME##_base(o, a, n);                                               \
    } while (0)
#else
#define WIDE_F32(NAME, SL)
#define WIDE_F64(NAME, SL)
#define PICK(NAME, o, a, n) NAME##_base(o, a, n)
#endif

/* The tile loop label_S: SLEEF's SL, then libm (cpu_scalar.h's element
 * function) wherever FIX(x) holds. */
#define SLEEF_FN(label, SL, S, T, FIX)                                           \
    BASE_##S(label##_##S##_base, SL)                                             \
    WIDE_##S(label##_##S, SL)                                                    \
    static void label##_##S(void *restrict o_, const void *a_, const void *b_,   \
                            const void *c_, int64_t n) {                         \
        T *o = (T *)o_;                                                          \
        const T *a = (const T *)a_;                                              \
        (void)b_, (void)c_;                                                      \
        PICK(label##_##S, o, a, n);                                              \
        int bad = 0;                                                             \
        for (int64_t i = 0; i < n; i++) {                                        \
            T x = a[i];                                                          \
            bad |= (FIX);                                                        \
        }                                                                        \
        if (bad)                                                                 \
            for (int64_t i = 0; i < n; i++) {                                    \
                T x = a[i];                                                      \
                if (FIX) o[i] = nds_##label##_##S(x);                            \
            }                                                                    \
    }

/* FIX conditions: NONE (SLEEF agrees with libm everywhere), BEYOND(L)
 * (beyond |x| <= L, NaN included). */
#define NONE ((void)x, 0)
#define BEYOND(L) (!(fabs((double)x) <= (L)))

#define SLEEF_BOTH(label, SL, FIX32, FIX64)                                      \
    SLEEF_FN(label, SL, F32, float, FIX32)                                       \
    SLEEF_FN(label, SL, F64, double, FIX64)

SLEEF_BOTH(sin, sin, NONE, NONE)
SLEEF_BOTH(cos, cos, NONE, NONE)
SLEEF_BOTH(tan, tan, NONE, NONE)
SLEEF_BOTH(arcsin, asin, NONE, NONE)
SLEEF_BOTH(arccos, acos, NONE, NONE)
SLEEF_BOTH(arctan, atan, NONE, NONE)
SLEEF_BOTH(sinh, sinh, BEYOND(88.5), BEYOND(709.0))
SLEEF_BOTH(cosh, cosh, BEYOND(88.5), BEYOND(709.0))
SLEEF_BOTH(tanh, tanh, NONE, NONE)
SLEEF_BOTH(arcsinh, asinh, BEYOND(1e18), BEYOND(1e150))
SLEEF_BOTH(arccosh, acosh, BEYOND(1e18), BEYOND(1e150))
SLEEF_BOTH(arctanh, atanh, NONE, NONE)
SLEEF_BOTH(exp, exp, NONE, NONE)
SLEEF_BOTH(exp2, exp2, NONE, NONE)
SLEEF_BOTH(expm1, expm1, NONE, NONE)
SLEEF_BOTH(log, log, NONE, NONE)
SLEEF_BOTH(log2, log2, NONE, NONE)
SLEEF_BOTH(log10, log10, NONE, NONE)
SLEEF_BOTH(log1p, log1p, BEYOND(1e38), BEYOND(1e307))
SLEEF_BOTH(cbrt, cbrt, NONE, NONE)

#define ROW(OP, label) [OP] = {label##_F32, label##_F64}
static nd_cpu_fn const vmath_table[ND_NUM_ELEMENTWISE_OPS][2] = {
    ROW(ND_OP_SIN, sin),         ROW(ND_OP_COS, cos),         ROW(ND_OP_TAN, tan),
    ROW(ND_OP_ARCSIN, arcsin),   ROW(ND_OP_ARCCOS, arccos),   ROW(ND_OP_ARCTAN, arctan),
    ROW(ND_OP_SINH, sinh),       ROW(ND_OP_COSH, cosh),       ROW(ND_OP_TANH, tanh),
    ROW(ND_OP_ARCSINH, arcsinh), ROW(ND_OP_ARCCOSH, arccosh), ROW(ND_OP_ARCTANH, arctanh),
    ROW(ND_OP_EXP, exp),         ROW(ND_OP_EXP2, exp2),       ROW(ND_OP_EXPM1, expm1),
    ROW(ND_OP_LOG, log),         ROW(ND_OP_LOG2, log2),       ROW(ND_OP_LOG10, log10),
    ROW(ND_OP_LOG1P, log1p),     ROW(ND_OP_CBRT, cbrt),
};

nd_cpu_fn nd_cpu_vmath_fn(int op, int t) {
    if (op < 0 || op >= ND_NUM_ELEMENTWISE_OPS || (t != ND_FLOAT32 && t != ND_FLOAT64)) return NULL;
    return vmath_table[op][t == ND_FLOAT64];
}

#else

nd_cpu_fn nd_cpu_vmath_fn(int op, int t) {
    (void)op, (void)t;
    return NULL; /* no SLEEF for this ISA: cpu_ops.c's libm loops */
}

#endif
