/* Building and caching the CPU FFT plans (fft_plan.h). */
#include "backends/cpu/fft_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

struct nd_fft_cache {
    pthread_mutex_t lock;
    nd_fft_plan *plans;
};

nd_fft_cache *nd_fft_cache_new(void) {
    nd_fft_cache *c = nd_calloc(1, sizeof *c);
    if (c) pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void plan_free(nd_fft_plan *p) {
    if (!p) return;
    free(p->tw);
    free(p->chirp);
    free(p->kernel);
    free(p);
}

void nd_fft_cache_free(nd_fft_cache *c) {
    if (!c) return;
    for (nd_fft_plan *p = c->plans, *next; p; p = next) {
        next = p->next;
        plan_free(p);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* exp(-2 pi i j / n) from its first-octant equivalent, so that the
 * symmetric values (+-1, +-i, the octant diagonals) come out exactly
 * symmetric; long double keeps the rounded result within half an ulp of
 * float64 in practice. */
static void unit_root(int64_t j, int64_t n, long double *re, long double *im) {
    /* the angle as p / (4n) turns, reflected into [0, 1/8] */
    int64_t q = 4 * n, p = (int64_t)(((__int128)4 * j) % q);
    if (p < 0) p += q;
    int conj = 0, negc = 0, swap = 0;
    if (p > 2 * n) p = q - p, conj = 1;
    if (p > n) p = 2 * n - p, negc = 1;
    if (2 * p > n) p = n - p, swap = 1;
    long double a = 2.0L * 3.14159265358979323846264338327950288L * (long double)p / (long double)q;
    long double c = cosl(a), s = sinl(a);
    if (swap) {
        long double t = c;
        c = s;
        s = t;
    }
    if (negc) c = -c;
    if (conj) s = -s;
    *re = c;
    *im = -s; /* the forward sign */
}

static void put(const nd_fft_plan *p, void *table, size_t k, long double re, long double im) {
    if (p->f64) {
        ((double *)table)[2 * k] = (double)re;
        ((double *)table)[2 * k + 1] = (double)im;
    } else {
        ((float *)table)[2 * k] = (float)re;
        ((float *)table)[2 * k + 1] = (float)im;
    }
}

/* The smallest 2*3*5-smooth length >= n. */
static int64_t smooth_at_least(int64_t n) {
    int64_t best = 1;
    while (best < n) best *= 2;
    for (int64_t f5 = 1; f5 < best; f5 *= 5)
        for (int64_t f35 = f5; f35 < best; f35 *= 3) {
            int64_t v = f35;
            while (v < n) v *= 2;
            if (v < best) best = v;
        }
    return best;
}

static int factorize(int64_t n, int *f) {
    int k = 0;
    while (n % 4 == 0) f[k++] = 4, n /= 4;
    if (n % 2 == 0) f[k++] = 2, n /= 2;
    for (int64_t p = 3; p * p <= n; p += 2)
        while (n % p == 0) f[k++] = (int)p, n /= p;
    if (n > 1) f[k++] = n > ND_FFT_MAX_RADIX ? 0 : (int)n; /* 0: too large a prime */
    return k;
}

static nd_fft_plan *build(nd_fft_cache *c, int64_t n, int f64, int real, int64_t n1) {
    nd_fft_plan *p = nd_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n;
    p->f64 = f64;
    p->real = real;
    size_t cplx = f64 ? 2 * sizeof(double) : 2 * sizeof(float);
    if (n1) {
        /* exp(-2 pi i r / n) as the product of a coarse and a fine root in
         * long double: n values for 2 sqrt(n) sines and cosines */
        p->split = 1;
        p->n1 = n1;
        p->sub = nd_fft_plan_get(c, n1, f64);
        p->sub2 = nd_fft_plan_get(c, n / n1, f64);
        int64_t fine = 1;
        while (fine * fine < n) fine *= 2;
        int64_t coarse = (n + fine - 1) / fine;
        long double *t = nd_malloc((size_t)(fine + coarse) * 2 * sizeof(long double));
        p->tw = nd_malloc((size_t)n * cplx);
        if (!p->sub || !p->sub2 || !p->tw || !t) {
            free(t);
            plan_free(p);
            return NULL;
        }
        for (int64_t r = 0; r < fine; r++) unit_root(r, n, &t[2 * r], &t[2 * r + 1]);
        for (int64_t r = 0; r < coarse; r++) unit_root(r * fine, n, &t[2 * (fine + r)], &t[2 * (fine + r) + 1]);
        for (int64_t r = 0; r < n; r++) {
            const long double *a = &t[2 * (fine + r / fine)], *b = &t[2 * (r % fine)];
            put(p, p->tw, (size_t)r, a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]);
        }
        free(t);
        return p;
    }
    if (real) {
        p->sub = nd_fft_plan_get(c, n / 2, f64);
        p->tw = nd_malloc((size_t)(n / 2) * cplx);
        if (!p->sub || !p->tw) {
            plan_free(p);
            return NULL;
        }
        for (int64_t k = 0; k < n / 2; k++) {
            long double re, im;
            unit_root(k, n, &re, &im);
            put(p, p->tw, (size_t)k, re, im);
        }
        return p;
    }
    int f[ND_FFT_MAX_FACTORS];
    int nf = factorize(n, f), blue = 0;
    for (int k = 0; k < nf; k++)
        if (f[k] == 0) blue = 1;
    if (blue) {
        /* Bluestein: X[k] = w[k] sum_j (x[j] w[j]) conj(w[k - j]), a
         * convolution of length m done with the plan of length m. */
        p->m = smooth_at_least(2 * n - 1);
        p->sub = nd_fft_plan_get(c, p->m, f64);
        p->chirp = nd_malloc((size_t)n * cplx);
        p->kernel = nd_calloc((size_t)p->m, cplx);
        void *scratch = nd_malloc((size_t)p->m * cplx);
        if (!p->sub || !p->chirp || !p->kernel || !scratch) {
            free(scratch);
            plan_free(p);
            return NULL;
        }
        int64_t sq = 0; /* j^2 mod 2n, updated as (j + 1)^2 = j^2 + 2j + 1 */
        long double inv_m = 1.0L / (long double)p->m;
        for (int64_t j = 0; j < n; j++) {
            long double re, im;
            unit_root(sq, 2 * n, &re, &im); /* exp(-i pi j^2 / n) */
            put(p, p->chirp, (size_t)j, re, im);
            put(p, p->kernel, (size_t)j, re * inv_m, -im * inv_m);
            if (j) put(p, p->kernel, (size_t)(p->m - j), re * inv_m, -im * inv_m);
            sq = (sq + 2 * j + 1) % (2 * n);
        }
        if (f64) nd_fft_exec_d(p->sub, p->kernel, scratch, -1);
        else nd_fft_exec_f(p->sub, p->kernel, scratch, -1);
        free(scratch);
        return p;
    }
    /* Twiddles: pass k needs (ip - 1) * (ido - 1) of them, a generic
     * radix also its ip roots. */
    size_t total = 0;
    int64_t l1 = 1;
    for (int k = 0; k < nf; k++) {
        nd_fft_pass *ps = &p->pass[k];
        ps->ip = f[k];
        ps->l1 = l1;
        ps->ido = n / (l1 * f[k]);
        ps->tw = total;
        total += (size_t)(f[k] - 1) * (size_t)(ps->ido - 1);
        ps->roots = total;
        if (f[k] > 5) total += (size_t)f[k];
        l1 *= f[k];
    }
    p->npass = nf;
    p->tw = nd_malloc((total ? total : 1) * cplx);
    if (!p->tw) {
        plan_free(p);
        return NULL;
    }
    for (int k = 0; k < nf; k++) {
        const nd_fft_pass *ps = &p->pass[k];
        for (int j = 1; j < ps->ip; j++)
            for (int64_t i = 1; i < ps->ido; i++) {
                long double re, im;
                unit_root((int64_t)j * ps->l1 * i, n, &re, &im);
                put(p, p->tw, ps->tw + (size_t)(j - 1) * (size_t)(ps->ido - 1) + (size_t)(i - 1), re, im);
            }
        if (ps->ip > 5)
            for (int j = 0; j < ps->ip; j++) {
                long double re, im;
                unit_root(j, ps->ip, &re, &im);
                put(p, p->tw, ps->roots + (size_t)j, re, im);
            }
    }
    return p;
}

static const nd_fft_plan *get(nd_fft_cache *c, int64_t n, int f64, int real, int64_t n1) {
    pthread_mutex_lock(&c->lock);
    for (nd_fft_plan *p = c->plans; p; p = p->next)
        if (p->n == n && p->f64 == f64 && p->real == real && p->n1 == n1) {
            pthread_mutex_unlock(&c->lock);
            return p;
        }
    pthread_mutex_unlock(&c->lock);
    /* Built outside the lock (a Bluestein plan gets its sub-plan here). */
    nd_fft_plan *made = build(c, n, f64, real, n1);
    if (!made) return NULL;
    pthread_mutex_lock(&c->lock);
    for (nd_fft_plan *p = c->plans; p; p = p->next)
        if (p->n == n && p->f64 == f64 && p->real == real && p->n1 == n1) { /* another thread was first */
            pthread_mutex_unlock(&c->lock);
            plan_free(made);
            return p;
        }
    made->next = c->plans;
    c->plans = made;
    pthread_mutex_unlock(&c->lock);
    return made;
}

const nd_fft_plan *nd_fft_plan_get(nd_fft_cache *c, int64_t n, int f64) { return get(c, n, f64, 0, 0); }

const nd_fft_plan *nd_fft_rplan_get(nd_fft_cache *c, int64_t n, int f64) { return get(c, n, f64, 1, 0); }

const nd_fft_plan *nd_fft_split_plan_get(nd_fft_cache *c, int64_t n, int64_t n1, int f64) {
    return get(c, n, f64, 0, n1);
}

int64_t nd_fft_scratch_elems(const nd_fft_plan *p) {
    if (p->split) {
        int64_t a = p->n1 + nd_fft_scratch_elems(p->sub), b = nd_fft_scratch_elems(p->sub2);
        return a > b ? a : b; /* a column and its scratch, or a row's scratch */
    }
    if (p->real) return nd_fft_scratch_elems(p->sub);
    return p->sub ? p->m + nd_fft_scratch_elems(p->sub) : p->n; /* Bluestein: its line of m, then the sub-plan's */
}
