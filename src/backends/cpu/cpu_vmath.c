/* Float32 transcendental loops the compiler vectorises: short polynomials
 * in float (four lanes per SSE vector), with argument reductions in double
 * where float would lose bits; max error < 2 ulp (swept over 4M floats of
 * every exponent against double libm). A second, cheap pass hands inputs
 * outside the fast path's domain (NaN, infinities, huge arguments, results
 * that overflow or are subnormal) to libm, so special values are exactly
 * libm's. */
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"

/* Each loop is also built for AVX2+FMA (eight float lanes) and picked at run
 * time; the baseline x86-64 build only has SSE2. */
#if defined(__x86_64__) && defined(__GNUC__)
#define VM_LOOP static inline __attribute__((always_inline)) void
#define VM_CLONE_T(T, loop)                                                     \
    __attribute__((target("avx2,fma"))) static void loop##_avx2(T *restrict o, const T *a, \
                                                                int64_t n) {    \
        loop(o, a, n);                                                          \
    }
#define VM_CALL(loop, o, a, n)                                                  \
    do {                                                                        \
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))    \
            loop##_avx2(o, a, n);                                               \
        else                                                                    \
            loop(o, a, n);                                                      \
    } while (0)
#else
#define VM_LOOP static inline void
#define VM_CLONE_T(T, loop)
#define VM_CALL(loop, o, a, n) loop(o, a, n)
#endif

/* The fast loop, then a vectorised scan for inputs it does not cover, and
 * libm for those. */
#define VM_FUNC_T(T, IT, name, loop, bad_cond, fix)                               \
    VM_CLONE_T(T, loop)                                                         \
    void name(T *restrict o, const T *a, int64_t n) {                           \
        VM_CALL(loop, o, a, n);                                                 \
        IT bad = 0;                                                             \
        for (int64_t i = 0; i < n; i++) bad |= (bad_cond);                     \
        if (bad)                                                                \
            for (int64_t i = 0; i < n; i++)                                     \
                if (bad_cond) o[i] = fix(a[i]);                                 \
    }
#define VM_FUNC(name, loop, bad_cond, fix) VM_FUNC_T(float, int32_t, name, loop, bad_cond, fix)

#define MAGIC 0x1.8p52 /* adding and subtracting it rounds to an integer */

static inline uint64_t bits_d(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline double from_bits(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline uint32_t bits_f(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float from_bits_f(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* sin(r) on [-pi/2, pi/2] in float: SLEEF's degree-9 minimax polynomial. */
static inline float sin_poly_f(float r) {
    float s = r * r;
    float u = 2.6083159809786593541503e-06f;
    u = u * s - 0.0001981069071916863322258f;
    u = u * s + 0.00833307858556509017944336f;
    u = u * s - 0.166666597127914428710938f;
    /* r * s * u is +0 for r = -0 (u < 0), and -0 + +0 = +0: keep sin(-0) = -0 */
    return r == 0.0f ? r : r + r * s * u;
}

/* The reduction runs in double: x = t*pi + r with pi split in a 33-bit head
 * (t*PI_A exact for |t| < 2^19, and x - t*PI_A exact) and a tail, so r is
 * accurate even next to a multiple of pi. sin(x) = (-1)^t sin(r) = sin(+-r);
 * t's parity is the low bit of t + MAGIC. cos(x) = sin(x + pi/2) the same way
 * with x = (t + 1/2) pi + r, sign (-1)^(t+1). */
#define PI_A 3.14159265346825122833
#define PI_B 1.21542010130123844986e-10
#define SIN_COS_RANGE 0x1p18f

VM_LOOP sin_loop(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        double t = x * 0.31830988618379067154 + MAGIC;
        uint64_t tb = bits_d(t);
        t -= MAGIC;
        double r = (x - t * PI_A) - t * PI_B;
        r = from_bits(bits_d(r) ^ (tb << 63));
        o[i] = sin_poly_f((float)r);
    }
}
VM_FUNC(nd_cpu_vsinf, sin_loop, !(fabsf(a[i]) <= SIN_COS_RANGE), sinf)

VM_LOOP cos_loop(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        double t = x * 0.31830988618379067154 - 0.5 + MAGIC;
        uint64_t tb = bits_d(t);
        t = (t - MAGIC) + 0.5;
        double r = (x - t * PI_A) - t * PI_B;
        r = from_bits(bits_d(r) ^ ((tb ^ 1) << 63));
        o[i] = sin_poly_f((float)r);
    }
}
VM_FUNC(nd_cpu_vcosf, cos_loop, !(fabsf(a[i]) <= SIN_COS_RANGE), cosf)

/* exp(x) for |x| < ~700: x = k ln2 + r, |r| <= ln2/2, Taylor to degree 8
 * (error < 2e-10), 2^k assembled in the exponent bits. */
static inline double exp_d(double x) {
    double k = x * 1.44269504088896340736 + MAGIC;
    uint64_t kb = bits_d(k);
    k -= MAGIC;
    double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
    double p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 +
               r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320))))))));
    /* kb's low bits hold k (two's complement offset from MAGIC's pattern) */
    uint64_t e = (kb - bits_d(MAGIC) + 1023) << 52;
    return p * from_bits(e);
}

/* expf in float: x = k ln2 + r (ln2 split so k*LN2_HI is exact), Cephes'
 * degree-7 polynomial, 2^k in the exponent bits. Outside (-87, 88) (results
 * near overflow or subnormal) and NaN: libm. */
VM_LOOP exp_loop(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float xf = a[i];
        float x = ((xf > -87.0f) & (xf < 88.0f)) ? xf : 0.0f;
        float t = x * 1.44269504088896341f + 0x1.8p23f;
        uint32_t tb = bits_f(t);
        t -= 0x1.8p23f;
        float r = (x - t * 0.693359375f) - t * -2.12194440e-4f;
        float y = (((((1.9875691500E-4f * r + 1.3981999507E-3f) * r + 8.3334519073E-3f) * r +
                     4.1665795894E-2f) * r + 1.6666665459E-1f) * r + 5.0000001201E-1f) * (r * r) +
                  r + 1.0f;
        uint32_t e = (tb - bits_f(0x1.8p23f) + 127u) << 23;
        o[i] = y * from_bits_f(e);
    }
}
VM_FUNC(nd_cpu_vexpf, exp_loop, !((a[i] > -87.0f) & (a[i] < 88.0f)), expf)

/* logf in float (Cephes): x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1,
 * log = f - f^2/2 + f^3 P(f) + e ln2 (ln2 split). Zero, negatives,
 * subnormals, Inf and NaN: libm. */
VM_LOOP log_loop(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float xf = a[i];
        float x = ((xf >= 0x1p-126f) & (xf < INFINITY)) ? xf : 1.0f;
        uint32_t b = bits_f(x);
        float m = from_bits_f((b & 0x007fffffu) | 0x3f800000u);
        float e = from_bits_f((b >> 23) | 0x4b000000u) - (0x1p23f + 127.0f);
        int big = m > 1.41421356237309504880f;
        m = big ? m * 0.5f : m;
        e = big ? e + 1.0f : e;
        float f = m - 1.0f, z = f * f;
        float y = ((((((((7.0376836292E-2f * f - 1.1514610310E-1f) * f + 1.1676998740E-1f) * f -
                        1.2420140846E-1f) * f + 1.4249322787E-1f) * f - 1.6668057665E-1f) * f +
                     2.0000714765E-1f) * f - 2.4999993993E-1f) * f + 3.3333331174E-1f) * f * z;
        y += -2.12194440e-4f * e;
        y += -0.5f * z;
        o[i] = (f + y) + 0.693359375f * e;
    }
}
VM_FUNC(nd_cpu_vlogf, log_loop, !((a[i] >= 0x1p-126f) & (a[i] < INFINITY)), logf)

/* tanh: odd Taylor series to x^13 below 0.4 (error < 5e-9), otherwise
 * (e - 1) / (e + 1) with e = exp(2|x|), which no longer cancels; 1 beyond 9.1. */
VM_LOOP tanh_loop(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        double ax = fabs(x);
        double z = x * x;
        double sp = x + x * z * (-1.0 / 3 + z * (2.0 / 15 + z * (-17.0 / 315 + z * (62.0 / 2835 +
                    z * (-1382.0 / 155925 + z * (21844.0 / 6081075))))));
        double e = exp_d(2.0 * (ax < 9.5 ? ax : 9.5));
        double t = (e - 1.0) / (e + 1.0);
        t = x < 0 ? -t : t;
        o[i] = (float)(ax < 0.4 ? (x == 0 ? x : sp) : t); /* tanh(-0) = -0 */
    }
}
static inline float ident_f(float x) { return x; }
VM_FUNC(nd_cpu_vtanhf, tanh_loop, a[i] != a[i], ident_f)

/* ---------------------------------------------------------------- float64
 * Same structure in double: Cody-Waite reductions with fdlibm's split
 * constants, Taylor polynomials long enough for 2^-53 on the reduced range
 * (errors ~1-2 ulp). */

/* exp: |r| <= ln2/2, degree 13 (truncation < 5e-18). */
VM_LOOP exp_loop_d(double *restrict o, const double *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double xa = a[i];
        double x = ((xa > -708.0) & (xa < 709.0)) ? xa : 0.0;
        double k = x * 1.44269504088896340736 + MAGIC;
        uint64_t kb = bits_d(k);
        k -= MAGIC;
        double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
        double p = 1.0 / 6227020800.0;
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = 1.0 + (r + r * r * p);
        o[i] = p * from_bits((kb - bits_d(MAGIC) + 1023) << 52);
    }
}
VM_FUNC_T(double, int64_t, nd_cpu_vexp, exp_loop_d, !((a[i] > -708.0) & (a[i] < 709.0)), exp)

/* log: 2 atanh(s), s = f / (2 + f), |s| < 0.1716: series to s^21. */
VM_LOOP log_loop_d(double *restrict o, const double *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double xa = a[i];
        double x = ((xa >= 0x1p-1022) & (xa < INFINITY)) ? xa : 1.0;
        uint64_t b = bits_d(x);
        double m = from_bits((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
        double e = from_bits((b >> 52) | 0x4330000000000000ull) - (0x1p52 + 1023.0);
        int big = m > 1.41421356237309504880;
        m = big ? m * 0.5 : m;
        e = big ? e + 1.0 : e;
        double f = m - 1.0;
        double s = f / (2.0 + f), z = s * s;
        double p = 1.0 / 21;
        p = p * z + 1.0 / 19;
        p = p * z + 1.0 / 17;
        p = p * z + 1.0 / 15;
        p = p * z + 1.0 / 13;
        p = p * z + 1.0 / 11;
        p = p * z + 1.0 / 9;
        p = p * z + 1.0 / 7;
        p = p * z + 1.0 / 5;
        p = p * z + 1.0 / 3;
        double s2 = 2.0 * s;
        double l = s2 + s2 * z * p;
        o[i] = e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + l);
    }
}
VM_FUNC_T(double, int64_t, nd_cpu_vlog, log_loop_d, !((a[i] >= 0x1p-1022) & (a[i] < INFINITY)), log)

/* sin/cos: x = q pi/2 + r, pi/2 in three 33-bit pieces (every q*piece is
 * exact for |q| < 2^20) and fdlibm's tail pio2_3t (without it, sin(pi)
 * was 7 ulp off: the tail times q is what is left of r next to a multiple
 * of pi/2), |r| <= pi/4; quadrant from q's low bits. */
static inline void sincos_d(double x, double *sv, double *cv, uint64_t *q) {
    double t = x * 0.63661977236758134308 + MAGIC;
    *q = bits_d(t);
    t -= MAGIC;
    double r = (((x - t * 1.57079632673412561417e+00) - t * 6.07710050630396597660e-11) -
                t * 2.02226624871116645580e-21) -
               t * 8.47842766036889956997e-32;
    double z = r * r;
    double ps = -1.0 / 1307674368000.0 + z * (1.0 / 355687428096000.0);
    ps = ps * z + 1.0 / 6227020800.0;
    ps = ps * z - 1.0 / 39916800.0;
    ps = ps * z + 1.0 / 362880.0;
    ps = ps * z - 1.0 / 5040.0;
    ps = ps * z + 1.0 / 120.0;
    ps = ps * z - 1.0 / 6.0;
    *sv = r == 0 ? r : r + r * z * ps; /* sin(-0) = -0 (r * z * ps is +0) */
    double pc = -1.0 / 6402373705728000.0;
    pc = pc * z + 1.0 / 20922789888000.0;
    pc = pc * z - 1.0 / 87178291200.0;
    pc = pc * z + 1.0 / 479001600.0;
    pc = pc * z - 1.0 / 3628800.0;
    pc = pc * z + 1.0 / 40320.0;
    pc = pc * z - 1.0 / 720.0;
    pc = pc * z + 1.0 / 24.0;
    *cv = 1.0 + z * (-0.5 + z * pc);
}
#define SINCOS_D_RANGE 1e5

/* Quadrant q: sin = (s, c, -s, -c)[q], cos = (c, -s, -c, s)[q]; selected
 * and negated with integer masks, which vectorise. */
VM_LOOP sin_loop_d(double *restrict o, const double *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double s, c;
        uint64_t q;
        sincos_d(fabs(a[i]) <= SINCOS_D_RANGE ? a[i] : 0.0, &s, &c, &q);
        uint64_t odd = 0 - (q & 1);
        uint64_t v = (bits_d(c) & odd) | (bits_d(s) & ~odd);
        o[i] = from_bits(v ^ ((q & 2) << 62));
    }
}
VM_FUNC_T(double, int64_t, nd_cpu_vsin, sin_loop_d, !(fabs(a[i]) <= SINCOS_D_RANGE), sin)

VM_LOOP cos_loop_d(double *restrict o, const double *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double s, c;
        uint64_t q;
        sincos_d(fabs(a[i]) <= SINCOS_D_RANGE ? a[i] : 0.0, &s, &c, &q);
        uint64_t odd = 0 - (q & 1);
        uint64_t v = (bits_d(s) & odd) | (bits_d(c) & ~odd);
        o[i] = from_bits(v ^ (((q + 1) & 2) << 62));
    }
}
VM_FUNC_T(double, int64_t, nd_cpu_vcos, cos_loop_d, !(fabs(a[i]) <= SINCOS_D_RANGE), cos)
