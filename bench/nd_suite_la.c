/*
 * nd_suite_la.c — the suite's linear algebra and FFT workloads through nd
 * (bench/peers/suite_common.py's LA_WORKLOADS, run when named: bench/
 * suite.sh run --workloads la): cholesky, solve (one right-hand side
 * vector), eigh and svd (reduced, with vectors) of one n x n matrix in
 * float32 and float64, 10^5 batched 8x8 float32 solves, 10^4 batched
 * 32x32 float32 SVDs (reduced, with vectors), fft of 2^26
 * complex64, rfft2 of 8192^2 float32, fft(x * w) and einsum
 * 'ij,jk,kl->il' of three 4096^2 float32 matrices.
 *
 * Inputs, as every peer makes them: the matrices of cholesky, solve, eigh
 * and svd are A = (G + G^T)/2 + I with G = P P^T / n, P uniform [-1, 1)
 * (symmetric positive definite, condition number about 5); right-hand
 * sides uniform [-1, 1); the batch's matrices uniform [-1, 1) plus 2 on
 * the diagonal (partial pivoting still swaps rows), the SVD batch's
 * uniform [-1, 1); complex inputs with
 * both parts uniform [-1, 1), the window w uniform [0, 1).
 *
 * Checks (float64 on the host, before anything is timed; the peers check
 * the same quantities, where cheap on the whole output): sampled entries
 * of L L^T - A, of A x - b, of A V - V diag(w) and V^T V - I, of
 * U diag(S) Vh - A, U^T U - I and Vh Vh^T - I (the largest of the
 * norm-relative errors), each entry a float64 dot product of a row and a
 * column read back; eigenvalues ascending and singular values descending
 * and >= 0; the batch's normwise backward error |A x - b| / (|A| |x| + |b|)
 * on sampled systems; for sampled matrices of the SVD batch |U diag(S) Vh -
 * A|_F / |A|_F, U^T U - I and Vh Vh^T - I (largest entry), the largest of
 * them; sampled transform bins against the DFT summed in
 * float64 (exact twiddles: k j mod N indexes two tables); sampled rows of
 * (A @ B) @ C in float64. Tolerances: 4 n eps for the factorisations, 16 n
 * eps for the iterative eigh and svd, 1e-5 for the batched solves and the
 * transforms, 1e-4 for the batched SVDs, 1e-3 for einsum (as matmul_chain).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"

#define LA_SAMPLES 256  /* entries of a factorisation's residual checked */
#define FFT_BINS 8      /* bins of a 1-d transform checked */
#define RFFT2_COLS 4    /* rfft2: columns of bins checked, RFFT2_COLS^2 bins */
#define EINSUM_ROWS 16  /* rows of the einsum checked */
#define PI 3.14159265358979323846

/* ------------------------------------------------------------- helpers */

/* a in float64 (complex128 for complex a) on the host, malloc'd; NULL
 * with a line on stderr when reading back failed. */
static double *host_f64(nd_array *a)
{
    bool cx = nd_dtype_of(a) == ND_COMPLEX64 || nd_dtype_of(a) == ND_COMPLEX128;
    nd_array *d = nd_astype(a, cx ? ND_COMPLEX128 : ND_FLOAT64);
    double *h = d ? suite_host_copy(d, cx ? 16 : 8) : NULL;
    nd_free(d);
    return h;
}

/* A = (G + G^T)/2 + I, G = P P^T / n: symmetric positive definite. */
static nd_array *spd(nd_dtype t, int64_t n)
{
    nd_scope_begin();
    nd_array *p = nd_random_uniform(t, ND_SHAPE(n, n), -1, 1);
    nd_array *g = nd_div(nd_matmul(p, nd_swapaxes(p, -1, -2)), nd_scalar((double)n));
    nd_array *a = nd_add(nd_mul(nd_add(g, nd_swapaxes(g, -1, -2)), nd_scalar(0.5)), nd_eye(t, n, n, 0));
    nd_keep(a);
    nd_scope_end();
    return a;
}

static void clear_inputs(suite_state *s)
{
    for (int i = 0; i < 3; i++)
        suite_replace(&s->in[i], NULL);
}

/* x . y over n elements with strides (float64). */
static double dot(const double *x, int64_t sx, const double *y, int64_t sy, int64_t n)
{
    double acc = 0;
    for (int64_t k = 0; k < n; k++)
        acc += x[k * sx] * y[k * sy];
    return acc;
}

/* ----------------------------------------------- the factorisations */

typedef enum { LA_CHOLESKY, LA_SOLVE, LA_EIGH, LA_SVD } la_kind;

static int64_t la_size(const suite_sizes *sz, la_kind k) { return k == LA_SVD ? sz->svd_n : sz->la_n; }

static void la_measure_n(const suite_sizes *sz, suite_measure *m, la_kind k)
{
    double n = (double)la_size(sz, k);
    static const double per_n3[4] = {1.0 / 3, 2.0 / 3, 9.0, 12.0}; /* nominal flop counts / n^3 */
    m->n = la_size(sz, k);
    m->bytes = -1; /* compute-bound: no floor */
    m->flops = per_n3[k] * n * n * n;
}

static nd_status la_prepare_n(suite_state *s, la_kind k, nd_dtype t)
{
    int64_t n = la_size(s->sz, k);
    clear_inputs(s);
    s->in[0] = spd(t, n);
    if (k == LA_SOLVE)
        s->in[1] = nd_random_uniform(t, ND_SHAPE(n), -1, 1);
    return suite_settle(s->in, k == LA_SOLVE ? 2 : 1);
}

static nd_status la_run_n(suite_state *s, la_kind k)
{
    nd_status st = ND_OK;
    switch (k) {
    case LA_CHOLESKY:
        s->out[0] = nd_linalg_cholesky(s->in[0]);
        return suite_settle(s->out, 1);
    case LA_SOLVE:
        s->out[0] = nd_linalg_solve(s->in[0], s->in[1]);
        return suite_settle(s->out, 1);
    case LA_EIGH:
        st = nd_linalg_eigh(s->in[0], &s->out[0], &s->out[1]);
        return st != ND_OK ? st : suite_settle(s->out, 2);
    default:
        st = nd_linalg_svd(s->in[0], false, true, &s->out[0], &s->out[1], &s->out[2]);
        return st != ND_OK ? st : suite_settle(s->out, 3);
    }
}

/* The norm-relative error of sampled entries: got[i] against ref[i]. */
static double sampled_err(const double *got, const double *ref, int count)
{
    suite_norm_err e = {0, 0};
    for (int i = 0; i < count; i++)
        suite_norm_add(&e, got[i], ref[i]);
    return suite_norm_value(&e);
}

/* The largest |Q^T Q - I| over sampled pairs of Q's cols vectors of n
 * elements, element e of vector k at q[k * col_stride + e * elem_stride]. */
static double orth_err(const double *q, int64_t n, int64_t cols, int64_t elem_stride, int64_t col_stride,
                       uint64_t seed)
{
    double worst = 0;
    for (int i = 0; i < LA_SAMPLES; i++) {
        int64_t k = suite_next_index(&seed, cols), l = i % 4 == 0 ? k : suite_next_index(&seed, cols);
        double d = fabs(dot(q + k * col_stride, elem_stride, q + l * col_stride, elem_stride, n) - (k == l));
        worst = !(d <= worst) ? d : worst;
    }
    return worst;
}

static double la_check_n(suite_state *s, la_kind k, nd_dtype t)
{
    int64_t n = la_size(s->sz, k);
    for (int i = 0; i < (k == LA_EIGH ? 2 : k == LA_SVD ? 3 : 1); i++)
        if (!suite_dtype_is(s->out[i], t, "the result"))
            return INFINITY;
    double *a = host_f64(s->in[0]);
    double *o[3] = {NULL, NULL, NULL};
    double got[LA_SAMPLES], ref[LA_SAMPLES], err = NAN;
    uint64_t st = 11;
    bool ok = a != NULL;
    for (int i = 0; ok && i < (k == LA_EIGH ? 2 : k == LA_SVD ? 3 : 1); i++)
        ok = (o[i] = host_f64(s->out[i])) != NULL;
    double *b = ok && k == LA_SOLVE ? host_f64(s->in[1]) : NULL;
    if (ok && k == LA_CHOLESKY) { /* (L L^T)[i, j] = L[i, :] . L[j, :]: an upper triangle left in L shows */
        for (int q = 0; q < LA_SAMPLES; q++) {
            int64_t i = suite_next_index(&st, n), j = q % 8 == 0 ? i : suite_next_index(&st, n);
            got[q] = dot(o[0] + i * n, 1, o[0] + j * n, 1, n);
            ref[q] = a[i * n + j];
        }
        err = sampled_err(got, ref, LA_SAMPLES);
    } else if (ok && k == LA_SOLVE && b) {
        for (int q = 0; q < LA_SAMPLES; q++) {
            int64_t i = suite_next_index(&st, n);
            got[q] = dot(a + i * n, 1, o[0], 1, n);
            ref[q] = b[i];
        }
        err = sampled_err(got, ref, LA_SAMPLES);
    } else if (ok && k == LA_EIGH) { /* w ascending; A V[:, c] = w[c] V[:, c]; V^T V = I */
        const double *w = o[0], *v = o[1];
        for (int64_t i = 1; i < n; i++)
            if (!(w[i - 1] <= w[i])) {
                fprintf(stderr, "nd_suite: the eigenvalues are not ascending at %lld\n", (long long)i);
                err = INFINITY;
            }
        for (int q = 0; q < LA_SAMPLES && !(err == INFINITY); q++) {
            int64_t i = suite_next_index(&st, n), c = suite_next_index(&st, n);
            got[q] = dot(a + i * n, 1, v + c, n, n);
            ref[q] = w[c] * v[i * n + c];
        }
        if (!(err == INFINITY))
            err = fmax(sampled_err(got, ref, LA_SAMPLES), orth_err(v, n, n, n, 1, 12));
    } else if (ok && k == LA_SVD) { /* S descending >= 0; U diag(S) Vh = A; U, Vh^T orthonormal */
        const double *u = o[0], *sv = o[1], *vh = o[2];
        for (int64_t i = 0; i < n; i++)
            if (!(sv[i] >= 0) || (i && !(sv[i - 1] >= sv[i]))) {
                fprintf(stderr, "nd_suite: the singular values are not descending and >= 0 at %lld\n",
                        (long long)i);
                err = INFINITY;
                break;
            }
        for (int q = 0; q < LA_SAMPLES && !(err == INFINITY); q++) {
            int64_t i = suite_next_index(&st, n), j = suite_next_index(&st, n);
            double acc = 0;
            for (int64_t c = 0; c < n; c++)
                acc += u[i * n + c] * sv[c] * vh[c * n + j];
            got[q] = acc;
            ref[q] = a[i * n + j];
        }
        if (!(err == INFINITY))
            err = fmax(sampled_err(got, ref, LA_SAMPLES),
                       fmax(orth_err(u, n, n, n, 1, 13), orth_err(vh, n, n, 1, n, 14)));
    }
    free(a);
    free(b);
    for (int i = 0; i < 3; i++)
        free(o[i]);
    return err;
}

#define LA_FNS(NAME, KIND, DT)                                                                        \
    static void NAME##_measure(const suite_sizes *sz, suite_measure *m) { la_measure_n(sz, m, KIND); } \
    static nd_status NAME##_prepare(suite_state *s, bool for_check)                                   \
    {                                                                                                 \
        (void)for_check;                                                                              \
        return la_prepare_n(s, KIND, DT);                                                             \
    }                                                                                                 \
    static nd_status NAME##_run(suite_state *s) { return la_run_n(s, KIND); }                         \
    static double NAME##_check(suite_state *s) { return la_check_n(s, KIND, DT); }

LA_FNS(cholesky_f32, LA_CHOLESKY, ND_FLOAT32)
LA_FNS(cholesky_f64, LA_CHOLESKY, ND_FLOAT64)
LA_FNS(solve_f32, LA_SOLVE, ND_FLOAT32)
LA_FNS(solve_f64, LA_SOLVE, ND_FLOAT64)
LA_FNS(eigh_f32, LA_EIGH, ND_FLOAT32)
LA_FNS(eigh_f64, LA_EIGH, ND_FLOAT64)
LA_FNS(svd_f32, LA_SVD, ND_FLOAT32)
LA_FNS(svd_f64, LA_SVD, ND_FLOAT64)

/* ------------------------------------------------ batched small solves */

#define BSOLVE_N 8

static void bsolve_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->bsolve_b;
    m->bytes = -1;
    m->flops = (double)sz->bsolve_b * (2.0 / 3 * BSOLVE_N * BSOLVE_N * BSOLVE_N + 2.0 * BSOLVE_N * BSOLVE_N);
}

static nd_status bsolve_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t b = s->sz->bsolve_b;
    clear_inputs(s);
    nd_scope_begin();
    nd_array *p = nd_random_uniform(ND_FLOAT32, ND_SHAPE(b, BSOLVE_N, BSOLVE_N), -1, 1);
    s->in[0] = nd_keep(nd_add(p, nd_mul(nd_eye(ND_FLOAT32, BSOLVE_N, BSOLVE_N, 0), nd_scalar(2.0))));
    nd_scope_end();
    s->in[1] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(b, BSOLVE_N, 1), -1, 1);
    return suite_settle(s->in, 2);
}

static nd_status bsolve_run(suite_state *s)
{
    s->out[0] = nd_linalg_solve(s->in[0], s->in[1]);
    return suite_settle(s->out, 1);
}

/* The largest normwise backward error |A x - b| / (|A| |x| + |b|) (infinity
 * norms) over sampled systems. */
static double bsolve_check(suite_state *s)
{
    int64_t nb = s->sz->bsolve_b, n = BSOLVE_N;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the solutions"))
        return INFINITY;
    double *a = host_f64(s->in[0]), *b = a ? host_f64(s->in[1]) : NULL, *x = b ? host_f64(s->out[0]) : NULL;
    double worst = NAN;
    if (x) {
        worst = 0;
        uint64_t st = 15;
        for (int q = 0; q < SUITE_SAMPLES; q++) {
            int64_t m = suite_next_index(&st, nb);
            const double *am = a + m * n * n, *bm = b + m * n, *xm = x + m * n;
            double rn = 0, an = 0, xn = 0, bn = 0;
            for (int64_t i = 0; i < n; i++) {
                double row = 0;
                for (int64_t j = 0; j < n; j++)
                    row += fabs(am[i * n + j]);
                an = fmax(an, row);
                xn = fmax(xn, fabs(xm[i]));
                bn = fmax(bn, fabs(bm[i]));
                double r = fabs(dot(am + i * n, 1, xm, 1, n) - bm[i]);
                rn = !(r <= rn) ? r : rn;
            }
            double e = rn / (an * xn + bn);
            worst = !(e <= worst) ? e : worst;
        }
    }
    free(a);
    free(b);
    free(x);
    return worst;
}

/* ------------------------------------------------ batched small SVDs */

#define BSVD_N 32

static void bsvd_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->bsvd_b;
    m->bytes = -1;
    m->flops = (double)sz->bsvd_b * 12.0 * BSVD_N * BSVD_N * BSVD_N; /* svd's nominal 12 n^3 each */
}

static nd_status bsvd_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    clear_inputs(s);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(s->sz->bsvd_b, BSVD_N, BSVD_N), -1, 1);
    return suite_settle(s->in, 1);
}

static nd_status bsvd_run(suite_state *s)
{
    nd_status st = nd_linalg_svd(s->in[0], false, true, &s->out[0], &s->out[1], &s->out[2]);
    return st != ND_OK ? st : suite_settle(s->out, 3);
}

/* Over sampled matrices, the largest of |U diag(S) Vh - A|_F / |A|_F,
 * |U^T U - I| and |Vh Vh^T - I| (largest entry); S descending and >= 0. */
static double bsvd_check(suite_state *s)
{
    const int64_t nb = s->sz->bsvd_b, n = BSVD_N, nn = n * n;
    for (int i = 0; i < 3; i++)
        if (!suite_dtype_is(s->out[i], ND_FLOAT32, "the result"))
            return INFINITY;
    double *a = host_f64(s->in[0]), *u = a ? host_f64(s->out[0]) : NULL;
    double *sv = u ? host_f64(s->out[1]) : NULL, *vh = sv ? host_f64(s->out[2]) : NULL;
    double worst = NAN;
    if (vh) {
        worst = 0;
        uint64_t st = 16;
        for (int q = 0; q < SUITE_SAMPLES && !(worst == INFINITY); q++) {
            int64_t m = suite_next_index(&st, nb);
            const double *am = a + m * nn, *um = u + m * nn, *sm = sv + m * n, *vm = vh + m * nn;
            double rec = 0, an = 0, orth = 0;
            for (int64_t i = 0; i < n; i++)
                if (!(sm[i] >= 0) || (i && !(sm[i - 1] >= sm[i]))) {
                    fprintf(stderr, "nd_suite: matrix %lld's singular values are not descending and >= 0\n",
                            (long long)m);
                    worst = INFINITY;
                }
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double r = -am[i * n + j];
                    for (int64_t c = 0; c < n; c++)
                        r += um[i * n + c] * sm[c] * vm[c * n + j];
                    rec += r * r;
                    an += am[i * n + j] * am[i * n + j];
                    double e = fabs(dot(um + i, n, um + j, n, n) - (i == j)); /* U^T U */
                    double f = fabs(dot(vm + i * n, 1, vm + j * n, 1, n) - (i == j)); /* Vh Vh^T */
                    orth = fmax(orth, fmax(e, f));
                }
            double err = fmax(sqrt(rec / an), orth);
            worst = !(err <= worst) ? err : worst;
        }
    }
    free(a);
    free(u);
    free(sv);
    free(vh);
    return worst;
}

/* ------------------------------------------------------------ the FFTs */

/* exp(-2 pi i t / n) for t in [0, n) as lo[t % w] * hi[t / w], w^2 >= n:
 * exact twiddles from two small tables. */
typedef struct {
    int64_t n, w;
    double *lo, *hi; /* interleaved re, im */
} twiddles;

static bool twiddles_make(twiddles *tw, int64_t n)
{
    tw->n = n;
    tw->w = (int64_t)ceil(sqrt((double)n));
    tw->lo = malloc(sizeof(double) * 2 * (size_t)tw->w);
    tw->hi = malloc(sizeof(double) * 2 * (size_t)tw->w);
    if (!tw->lo || !tw->hi)
        return false;
    for (int64_t t = 0; t < tw->w; t++) {
        tw->lo[2 * t] = cos(-2 * PI * (double)t / (double)n);
        tw->lo[2 * t + 1] = sin(-2 * PI * (double)t / (double)n);
        tw->hi[2 * t] = cos(-2 * PI * (double)(t * tw->w) / (double)n);
        tw->hi[2 * t + 1] = sin(-2 * PI * (double)(t * tw->w) / (double)n);
    }
    return true;
}

static void twiddles_free(twiddles *tw)
{
    free(tw->lo);
    free(tw->hi);
}

/* sum_j x[j * stride] exp(-2 pi i k j / n), x complex (interleaved) or
 * real; into out[0..1]. */
static void dft_bin(const twiddles *tw, const double *x, int64_t stride, bool cx, int64_t k, double *out)
{
    int64_t n = tw->n;
    double re = 0, im = 0;
    uint64_t t = 0, step = (uint64_t)(k % n);
    for (int64_t j = 0; j < n; j++) {
        const double *l = tw->lo + 2 * (t % (uint64_t)tw->w), *h = tw->hi + 2 * (t / (uint64_t)tw->w);
        double wr = l[0] * h[0] - l[1] * h[1], wi = l[0] * h[1] + l[1] * h[0];
        double xr = cx ? x[2 * j * stride] : x[j * stride], xi = cx ? x[2 * j * stride + 1] : 0;
        re += xr * wr - xi * wi;
        im += xr * wi + xi * wr;
        t += step;
        if (t >= (uint64_t)n)
            t -= (uint64_t)n;
    }
    out[0] = re;
    out[1] = im;
}

static void fft_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->fft_n;
    m->bytes = -1;
    m->flops = 5.0 * (double)m->n * log2((double)m->n);
}

static void rfft2_measure(const suite_sizes *sz, suite_measure *m)
{
    double n2 = (double)sz->rfft2_n * (double)sz->rfft2_n;
    m->n = sz->rfft2_n;
    m->bytes = -1;
    m->flops = 2.5 * n2 * log2(n2);
}

static nd_array *random_c64(int64_t n)
{
    nd_scope_begin();
    nd_array *re = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -1, 1);
    nd_array *im = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -1, 1);
    nd_array *j = nd_full_complex(ND_COMPLEX64, ND_SCALAR_SHAPE, 0, 1);
    nd_array *x = nd_keep(nd_add(nd_astype(re, ND_COMPLEX64), nd_mul(im, j)));
    nd_scope_end();
    return x;
}

static nd_status fft_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    clear_inputs(s);
    s->in[0] = random_c64(s->sz->fft_n);
    return suite_settle(s->in, 1);
}

static void window_measure(const suite_sizes *sz, suite_measure *m) { fft_measure(sz, m); }

static nd_status window_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    clear_inputs(s);
    s->in[0] = random_c64(s->sz->fft_n);
    s->in[1] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(s->sz->fft_n), 0, 1);
    return suite_settle(s->in, 2);
}

static nd_status rfft2_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    clear_inputs(s);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(s->sz->rfft2_n, s->sz->rfft2_n), -1, 1);
    return suite_settle(s->in, 1);
}

static nd_status fft_run(suite_state *s)
{
    s->out[0] = nd_fft_fft(s->in[0], -1, -1, ND_FFT_BACKWARD);
    return suite_settle(s->out, 1);
}

static nd_status window_run(suite_state *s)
{
    nd_scope_begin();
    s->out[0] = nd_keep(nd_fft_fft(nd_mul(s->in[0], s->in[1]), -1, -1, ND_FFT_BACKWARD));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static nd_status rfft2_run(suite_state *s)
{
    s->out[0] = nd_fft_rfft2(s->in[0], 0, NULL, 0, NULL, ND_FFT_BACKWARD);
    return suite_settle(s->out, 1);
}

/* Sampled bins of fft(x) or fft(x * w) against the DFT in float64. */
static double fft_check_common(suite_state *s, bool windowed)
{
    int64_t n = s->sz->fft_n;
    if (!suite_dtype_is(s->out[0], ND_COMPLEX64, "the transform"))
        return INFINITY;
    double *x = host_f64(s->in[0]), *w = windowed && x ? host_f64(s->in[1]) : NULL;
    double *y = x && (w || !windowed) ? host_f64(s->out[0]) : NULL;
    twiddles tw = {0};
    double err = NAN;
    if (y && twiddles_make(&tw, n)) {
        if (windowed)
            for (int64_t j = 0; j < n; j++) /* the product in float64 */
                x[2 * j] *= w[j], x[2 * j + 1] *= w[j];
        suite_norm_err e = {0, 0};
        uint64_t st = 16;
        for (int q = 0; q < FFT_BINS; q++) {
            int64_t k = q == 0 ? 0 : q == 1 ? 1 : q == 2 ? n / 2 : q == 3 ? n - 1 : suite_next_index(&st, n);
            double ref[2];
            dft_bin(&tw, x, 1, true, k, ref);
            suite_norm_add(&e, y[2 * k], ref[0]);
            suite_norm_add(&e, y[2 * k + 1], ref[1]);
        }
        err = suite_norm_value(&e);
    }
    twiddles_free(&tw);
    free(x);
    free(w);
    free(y);
    return err;
}

static double fft_check(suite_state *s) { return fft_check_common(s, false); }
static double window_check(suite_state *s) { return fft_check_common(s, true); }

/* Bins (k1, k2) for RFFT2_COLS columns k2 (0, the last and random) and as
 * many rows k1: each row's DFT at k2, then their DFT at k1. */
static double rfft2_check(suite_state *s)
{
    int64_t n = s->sz->rfft2_n, nc = n / 2 + 1;
    if (!suite_dtype_is(s->out[0], ND_COMPLEX64, "the transform"))
        return INFINITY;
    double *x = host_f64(s->in[0]), *y = x ? host_f64(s->out[0]) : NULL;
    double *rows = malloc(sizeof(double) * 2 * (size_t)n);
    twiddles tw = {0};
    double err = NAN;
    if (y && rows && twiddles_make(&tw, n)) {
        suite_norm_err e = {0, 0};
        uint64_t st = 17;
        for (int c = 0; c < RFFT2_COLS; c++) {
            int64_t k2 = c == 0 ? 0 : c == 1 ? nc - 1 : suite_next_index(&st, nc);
            for (int64_t r = 0; r < n; r++)
                dft_bin(&tw, x + r * n, 1, false, k2, rows + 2 * r);
            for (int q = 0; q < RFFT2_COLS; q++) {
                int64_t k1 = q == 0 ? 0 : suite_next_index(&st, n);
                double ref[2];
                dft_bin(&tw, rows, 1, true, k1, ref);
                suite_norm_add(&e, y[2 * (k1 * nc + k2)], ref[0]);
                suite_norm_add(&e, y[2 * (k1 * nc + k2) + 1], ref[1]);
            }
        }
        err = suite_norm_value(&e);
    }
    twiddles_free(&tw);
    free(x);
    free(y);
    free(rows);
    return err;
}

/* -------------------------------------------------------------- einsum */

static void einsum_measure(const suite_sizes *sz, suite_measure *m)
{
    double n = (double)sz->einsum_n;
    m->n = sz->einsum_n;
    m->bytes = -1;
    m->flops = 4.0 * n * n * n;
}

static nd_status einsum_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = s->sz->einsum_n;
    clear_inputs(s);
    for (int i = 0; i < 3; i++)
        s->in[i] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1, 1);
    return suite_settle(s->in, 3);
}

static nd_status einsum_run(suite_state *s)
{
    s->out[0] = nd_einsum("ij,jk,kl->il", 3, s->in);
    return suite_settle(s->out, 1);
}

static double einsum_check(suite_state *s)
{
    int64_t n = s->sz->einsum_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the contraction"))
        return INFINITY;
    double *a = host_f64(s->in[0]), *b = a ? host_f64(s->in[1]) : NULL, *c = b ? host_f64(s->in[2]) : NULL;
    double *y = c ? host_f64(s->out[0]) : NULL, *t = malloc(sizeof(double) * (size_t)n);
    double err = NAN;
    if (y && t) {
        suite_norm_err e = {0, 0};
        uint64_t st = 18;
        for (int q = 0; q < EINSUM_ROWS; q++) {
            int64_t i = suite_next_index(&st, n);
            for (int64_t k = 0; k < n; k++)
                t[k] = dot(a + i * n, 1, b + k, n, n);
            for (int64_t l = 0; l < n; l++)
                suite_norm_add(&e, y[i * n + l], dot(t, 1, c + l, n, n));
        }
        err = suite_norm_value(&e);
    }
    free(a);
    free(b);
    free(c);
    free(y);
    free(t);
    return err;
}

/* ---------------------------------------------------------- the table */

#define LA_WORKLOAD(NAME, DTYPE, KIND, TOL, PFX, RUNS)                                                       \
    const suite_workload suite_##NAME = {                                                                    \
        .name = #NAME, .dtype = DTYPE, .check_kind = KIND, .tol = TOL, .named_only = true,                  \
        .max_runs = RUNS, .tol_per_n_eps = TOL < 0,                                                         \
        .measure = PFX##_measure, .prepare = PFX##_prepare, .run = PFX##_run, .check = PFX##_check,         \
    };

/* A negative tolerance is -c: c n eps of the workload's dtype and size
 * (suite_tolerance). svd runs 3 timed runs (bench/README.md). */
LA_WORKLOAD(cholesky_f32, "float32", "sampled", -4, cholesky_f32, 0)
LA_WORKLOAD(cholesky_f64, "float64", "sampled", -4, cholesky_f64, 0)
LA_WORKLOAD(solve_f32, "float32", "sampled", -4, solve_f32, 0)
LA_WORKLOAD(solve_f64, "float64", "sampled", -4, solve_f64, 0)
LA_WORKLOAD(eigh_f32, "float32", "sampled", -16, eigh_f32, 0)
LA_WORKLOAD(eigh_f64, "float64", "sampled", -16, eigh_f64, 0)
LA_WORKLOAD(svd_f32, "float32", "sampled", -16, svd_f32, 3)
LA_WORKLOAD(svd_f64, "float64", "sampled", -16, svd_f64, 3)
LA_WORKLOAD(batched_solve, "float32", "backward", 1e-5, bsolve, 0)
LA_WORKLOAD(batched_svd, "float32", "backward", 1e-4, bsvd, 0)
LA_WORKLOAD(fft, "complex64", "sampled", 1e-5, fft, 0)
LA_WORKLOAD(rfft2, "complex64", "sampled", 1e-5, rfft2, 0)
LA_WORKLOAD(fft_window, "complex64", "sampled", 1e-5, window, 0)
LA_WORKLOAD(einsum3, "float32", "sampled", 1e-3, einsum, 0)

double suite_tolerance(const suite_workload *w, const suite_sizes *sz)
{
    if (!w->tol_per_n_eps)
        return w->tol;
    suite_measure m;
    w->measure(sz, &m);
    return -w->tol * (double)m.n * (strcmp(w->dtype, "float32") == 0 ? FLT_EPSILON : DBL_EPSILON);
}
