/* Float32 transcendental loops the compiler can vectorise: each element is
 * widened to double, reduced and evaluated with short polynomials (float32
 * needs only ~2^-25 relative accuracy, so the double arithmetic leaves the
 * result within ~1 ulp after rounding). A second, cheap pass hands inputs
 * outside the fast path's domain (NaN, infinities, huge arguments, results
 * that overflow) to libm, so special values are exactly libm's. */
#include "backends/cpu/cpu_vectorize.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"

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

/* sin(r), cos(r) for |r| <= pi/4: Taylor to degree 9 / 10 (error < 3e-9). */
static inline double sin_poly(double r) {
    double z = r * r;
    return r + r * z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880))));
}
static inline double cos_poly(double r) {
    double z = r * r;
    return 1.0 + z * (-0.5 + z * (1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 + z * (-1.0 / 3628800)))));
}

/* x = q*pi/2 + r; m = q mod 4. pio2_1 has 33 bits so q*pio2_1 is exact for
 * |q| < 2^20 and x - q*pio2_1 is exact (fdlibm's Cody-Waite split). */
#define REDUCE_PIO2(x, r, m)                                                     \
    double q = (x)*0.63661977236758134308 + MAGIC - MAGIC;                       \
    double r = ((x)-q * 1.57079632673412561417e+00) - q * 6.07710050650619224932e-11; \
    double k4 = (q * 0.25 - 0.375) + MAGIC - MAGIC;                              \
    double m = q - 4.0 * k4;

#define SIN_COS_RANGE 0x1p20f

void nd_cpu_vsinf(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        REDUCE_PIO2(x, r, m)
        double s = sin_poly(r), c = cos_poly(r);
        double v = ((m == 1.0) | (m == 3.0)) ? c : s;
        o[i] = (float)(m >= 2.0 ? -v : v);
    }
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(a[i]) <= SIN_COS_RANGE)) o[i] = sinf(a[i]);
}

void nd_cpu_vcosf(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        REDUCE_PIO2(x, r, m)
        double s = sin_poly(r), c = cos_poly(r);
        double v = ((m == 1.0) | (m == 3.0)) ? s : c;
        o[i] = (float)(((m == 1.0) | (m == 2.0)) ? -v : v);
    }
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(a[i]) <= SIN_COS_RANGE)) o[i] = cosf(a[i]);
}

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

void nd_cpu_vexpf(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float xf = a[i];
        double x = ((xf > -110.0f) & (xf < 89.0f)) ? (double)xf : 0.0;
        o[i] = (float)exp_d(x);
    }
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] > -110.0f && a[i] < 89.0f)) o[i] = expf(a[i]);
}

/* log(x) = e ln2 + log1p(f), m = 1 + f in [sqrt(1/2), sqrt(2)),
 * log1p(f) = 2 atanh(s), s = f / (2 + f), |s| < 0.172: series to s^9. */
void nd_cpu_vlogf(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float xf = a[i];
        double x = ((xf > 0.0f) & (xf < INFINITY)) ? (double)xf : 1.0;
        uint64_t b = bits_d(x);
        double m = from_bits((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
        double e = from_bits((b >> 52) | 0x4330000000000000ull) - (0x1p52 + 1023.0);
        int big = m > 1.41421356237309504880;
        m = big ? m * 0.5 : m;
        e = big ? e + 1.0 : e;
        double f = m - 1.0;
        double s = f / (2.0 + f), z = s * s;
        double l = 2.0 * s * (1.0 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9)))));
        o[i] = (float)(e * 6.93147180559945309417e-01 + l);
    }
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] > 0.0f && a[i] < INFINITY)) o[i] = logf(a[i]);
}

/* tanh: odd Taylor series to x^13 below 0.4 (error < 5e-9), otherwise
 * (e - 1) / (e + 1) with e = exp(2|x|), which no longer cancels; 1 beyond 9.1. */
void nd_cpu_vtanhf(float *restrict o, const float *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double x = a[i];
        double ax = fabs(x);
        double z = x * x;
        double sp = x + x * z * (-1.0 / 3 + z * (2.0 / 15 + z * (-17.0 / 315 + z * (62.0 / 2835 +
                    z * (-1382.0 / 155925 + z * (21844.0 / 6081075))))));
        double e = exp_d(2.0 * (ax < 9.5 ? ax : 9.5));
        double t = (e - 1.0) / (e + 1.0);
        t = x < 0 ? -t : t;
        o[i] = (float)(ax < 0.4 ? sp : t);
    }
    for (int64_t i = 0; i < n; i++)
        if (a[i] != a[i]) o[i] = a[i];
}
