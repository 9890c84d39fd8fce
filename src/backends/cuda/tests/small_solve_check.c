/* Checks the small batched solve kernel (lib_small_solve.c) where there is
 * no GPU (see small_solve_check.sh): its device source compiles with NVRTC
 * for sm_90, and the same template, compiled as C++ for the host against
 * emulate_shim.h (emulate_harness.h), is run with the backend's
 * geometry (ND_CUDA_SMALL_SOLVE_BLOCK threads a block, one system a thread)
 * on every n = 1..32 and dtype against a reference made here in long
 * double by Gaussian elimination with partial pivoting: the answer (error
 * relative to the reference's norm) and the residual |A x - b| (relative to
 * |A| |x| + |b|), on matrices whose leading pivot is zero (unpivoted
 * elimination divides by it), batches of 0, 1 and several blocks, 0, 1 and
 * 3 right-hand sides, and batches with singular members (a zero column:
 * an exact zero pivot), where the lowest singular matrix and its column
 * must come back and no other word may. Usage:
 *   small_solve_check WORKDIR [n]   (n: skip NVRTC) */
#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_loader.h"
#include "backends/cuda/lib_linalg.h"
#include "common/strbuf.h"
#include "emulate_harness.h"

static int fails, checks;
#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        checks++;                                                                                            \
        if (!(c)) {                                                                                          \
            if (fails++ < 40) {                                                                              \
                printf("FAIL: ");                                                                            \
                printf(__VA_ARGS__);                                                                         \
                printf("\n");                                                                                \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

static const nd_dtype types[4] = {ND_FLOAT32, ND_FLOAT64, ND_COMPLEX64, ND_COMPLEX128};
static const char *const ctypes[4] = {"float", "double", "ndk_c64", "ndk_c128"};

typedef int (*solve_fn)(int kind, int n, const void *A, const void *Bt, void *Xt, long long batch, int m,
                        unsigned long long *bad);

/* The host build: the source, and a launcher that runs every block's
 * threads one after another (the kernel does not synchronise). */
static solve_fn build_host(const char *workdir) {
    nd_strbuf f = {0};
    char *src = nd_cuda_small_solve_host_source();
    nd_strbuf_printf(&f, "%s\n", src ? src : "#error no source");
    free(src);
    nd_strbuf_printf(&f, "extern \"C\" int emu_solve(int kind, int n, const void *A, const void *Bt, void *Xt, long long batch,\n"
                         "                          int m, unsigned long long *bad) {\n"
                         "  emu_dim3 grid = {(unsigned)((batch + %d - 1) / %d), 1, 1};\n"
                         "  switch (kind * 100 + n) {\n",
                     ND_CUDA_SMALL_SOLVE_BLOCK, ND_CUDA_SMALL_SOLVE_BLOCK);
    for (int k = 0; k < 4; k++)
        for (int n = 1; n <= ND_CUDA_SMALL_SOLVE_MAX_N; n++) {
            char name[64];
            nd_cuda_small_solve_name(name, sizeof name, n, types[k]);
            nd_strbuf_printf(&f, "  case %d: emu_launch(grid, {%d, 1, 1}, 0, [&] { %s((const %s *)A, (const %s *)Bt, "
                                 "(%s *)Xt, batch, m, bad); }); return 1;\n",
                             k * 100 + n, ND_CUDA_SMALL_SOLVE_BLOCK, name, ctypes[k], ctypes[k], ctypes[k]);
        }
    nd_strbuf_printf(&f, "  default: return 0;\n  }\n}\n");
    void *h = f.failed ? NULL : emu_build(f.buf, workdir, "small_solve_host", NULL);
    nd_strbuf_free(&f);
    return h ? (solve_fn)dlsym(h, "emu_solve") : NULL;
}

/* ------------------------------------------------------------ reference */

typedef long double complex cld;

static uint64_t rng_state = 12345;
static double uniform(void) { /* [-1, 1) */
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

/* Element i of a buffer of dtype kind k, and storing one (rounded to it). */
static cld get(int k, const void *p, int64_t i) {
    switch (k) {
    case 0: return ((const float *)p)[i];
    case 1: return ((const double *)p)[i];
    case 2: return ((const float *)p)[2 * i] + I * (long double)((const float *)p)[2 * i + 1];
    default: return ((const double *)p)[2 * i] + I * (long double)((const double *)p)[2 * i + 1];
    }
}
static void put(int k, void *p, int64_t i, cld v) {
    switch (k) {
    case 0: ((float *)p)[i] = (float)creall(v); break;
    case 1: ((double *)p)[i] = (double)creall(v); break;
    case 2: ((float *)p)[2 * i] = (float)creall(v), ((float *)p)[2 * i + 1] = (float)cimagl(v); break;
    default: ((double *)p)[2 * i] = (double)creall(v), ((double *)p)[2 * i + 1] = (double)cimagl(v); break;
    }
}
static size_t esize(int k) { return k == 0 ? 4 : k == 3 ? 16 : 8; }

/* x = A^-1 b in long double; 0 if singular. a is n x n row-major. */
static int ref_solve(int n, const cld *a_in, const cld *b, cld *x) {
    cld a[32 * 32];
    memcpy(a, a_in, sizeof(cld) * (size_t)(n * n));
    memcpy(x, b, sizeof(cld) * (size_t)n);
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (cabsl(a[r * n + c]) > cabsl(a[p * n + c])) p = r;
        if (a[p * n + c] == 0) return 0;
        for (int q = 0; q < n; q++) {
            cld t = a[c * n + q];
            a[c * n + q] = a[p * n + q], a[p * n + q] = t;
        }
        cld t = x[c];
        x[c] = x[p], x[p] = t;
        for (int r = c + 1; r < n; r++) {
            cld f = a[r * n + c] / a[c * n + c];
            for (int q = c; q < n; q++) a[r * n + q] -= f * a[c * n + q];
            x[r] -= f * x[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        cld acc = x[r];
        for (int c = r + 1; c < n; c++) acc -= a[r * n + c] * x[c];
        x[r] = acc / a[r * n + r];
    }
    return 1;
}

/* |A|_inf |A^-1|_inf, A^-1 by the reference a column at a time. */
static long double cond_inf(int n, const cld *a) {
    long double rows[32] = {0}, anorm = 0, inorm = 0;
    cld e[32], col[32];
    for (int c = 0; c < n; c++) {
        for (int i = 0; i < n; i++) e[i] = i == c;
        if (!ref_solve(n, a, e, col)) return INFINITY;
        for (int i = 0; i < n; i++) rows[i] += cabsl(col[i]);
    }
    for (int i = 0; i < n; i++) {
        long double r = 0;
        for (int c = 0; c < n; c++) r += cabsl(a[i * n + c]);
        anorm = fmaxl(anorm, r);
        inorm = fmaxl(inorm, rows[i]);
    }
    return anorm * inorm;
}

/* One batch of `batch` systems of n with m right-hand sides through the
 * kernel; singular[] (-1 ended) lists the members given a zero column. */
static void run_case(solve_fn solve, int k, int n, long long batch, int m, const long long *singular) {
    int cx = k >= 2;
    size_t es = esize(k);
    int64_t na = batch * n * n, nb = batch * m * n;
    void *A = malloc(na * es + 1), *Bt = malloc(nb * es + 1), *Xt = malloc(nb * es + 1);
    for (int64_t i = 0; i < na; i++) put(k, A, i, uniform() + (cx ? I * uniform() : 0));
    for (int64_t i = 0; i < nb; i++) put(k, Bt, i, uniform() + (cx ? I * uniform() : 0));
    memset(Xt, 0xff, nb * es + 1); /* poisoned: NaN in every dtype */
    /* every third member: a zero leading pivot (a permutation is needed) */
    for (long long b = 0; b < batch && n > 1; b += 3) put(k, A, b * n * n, 0);
    long long want_b = -1;
    int zcol = n > 2 ? 2 : n - 1;
    for (int s = 0; singular && singular[s] >= 0; s++) {
        long long b = singular[s];
        for (int r = 0; r < n; r++) put(k, A, b * n * n + r * n + zcol, 0);
        if (want_b < 0 || b < want_b) want_b = b;
    }
    unsigned long long bad = ~0ull;
    int ran = solve(k, n, A, Bt, Xt, batch, m, &bad);
    CHECK(ran, "%s n=%d: no host entry", ctypes[k], n);
    if (want_b >= 0) {
        unsigned long long want = ((unsigned long long)want_b << 8) | (unsigned long long)(zcol + 1);
        CHECK(bad == want, "%s n=%d batch=%lld: singular word %llx, expected matrix %lld column %d (%llx)", ctypes[k], n,
              batch, bad, want_b, zcol, want);
    } else {
        CHECK(bad == ~0ull, "%s n=%d batch=%lld m=%d: singular word %llx for a nonsingular batch", ctypes[k], n, batch,
              m, bad);
    }
    long double eps = k == 0 || k == 2 ? FLT_EPSILON : DBL_EPSILON;
    long double worst_res = 0, worst_fwd = 0;
    cld a[32 * 32], rhs[32], x[32], xr[32];
    for (long long b = 0; b < batch; b++) {
        int is_singular = 0;
        for (int s = 0; singular && singular[s] >= 0; s++) is_singular |= singular[s] == b;
        if (is_singular) continue; /* its X is not defined (the step fails) */
        long double anorm = 0;
        for (int r = 0; r < n; r++) {
            long double row = 0;
            for (int c = 0; c < n; c++) row += cabsl(a[r * n + c] = get(k, A, b * n * n + r * n + c));
            anorm = fmaxl(anorm, row);
        }
        for (int q = 0; q < m; q++) {
            long double bnorm = 0, xnorm = 0, rnorm = 0, rxn = 0, dn = 0;
            for (int i = 0; i < n; i++) {
                rhs[i] = get(k, Bt, (b * m + q) * n + i);
                x[i] = get(k, Xt, (b * m + q) * n + i);
                bnorm = fmaxl(bnorm, cabsl(rhs[i]));
                xnorm = fmaxl(xnorm, cabsl(x[i]));
            }
            CHECK(ref_solve(n, a, rhs, xr), "%s n=%d: the reference found member %lld singular", ctypes[k], n, b);
            for (int i = 0; i < n; i++) {
                cld r = -rhs[i];
                for (int c = 0; c < n; c++) r += a[i * n + c] * x[c];
                long double ar = cabsl(r);
                rnorm = isnan(ar) ? INFINITY : fmaxl(rnorm, ar);
                long double d = cabsl(x[i] - xr[i]);
                dn = isnan(d) ? INFINITY : fmaxl(dn, d);
                rxn = fmaxl(rxn, cabsl(xr[i]));
            }
            long double res = rnorm / (anorm * xnorm + bnorm), fwd = dn / rxn;
            if (fwd > 1e4L * eps) /* allowed: eps times A's condition number, worked out where needed */
                fwd = fwd / fmaxl(cond_inf(n, a), 1);
            if (!(res <= worst_res)) worst_res = isnan(res) ? INFINITY : res;
            if (!(fwd <= worst_fwd)) worst_fwd = isnan(fwd) ? INFINITY : fwd;
        }
    }
    /* backward error: a few n eps; forward error: below 1e4 eps, or else
     * 1e4 eps times A's condition number (then divided by it above) */
    CHECK(worst_res <= 16 * n * eps, "%s n=%d batch=%lld m=%d: residual %.3Lg > %.3Lg", ctypes[k], n, batch, m,
          worst_res, 16 * n * eps);
    CHECK(worst_fwd <= 1e4L * eps, "%s n=%d batch=%lld m=%d: error %.3Lg against the reference > %.3Lg (times the "
          "condition number where over)", ctypes[k], n, batch, m, worst_fwd, 1e4L * eps);
    free(A), free(Bt), free(Xt);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORKDIR [n]\n", argv[0]);
        return 2;
    }
    int nvrtc_on = !(argc > 2 && strchr(argv[2], 'n'));
    if (nvrtc_on && nd_cuda_load_nvrtc() != ND_OK) {
        fprintf(stderr, "small_solve_check: %s\n", nd_last_error());
        return 2;
    }
    /* NVRTC: every dtype at the sizes where the code changes shape
     * (1, unrolled, the largest unrolled, rolled, the largest) */
    static const int sizes[] = {1, 2, 3, 8, 16, 17, 32};
    for (int k = 0; nvrtc_on && k < 4; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            char *src = nd_cuda_small_solve_source(sizes[i], types[k]);
            char name[64];
            nd_cuda_small_solve_name(name, sizeof name, sizes[i], types[k]);
            CHECK(src && emu_nvrtc_compiles(src, name, NULL), "NVRTC: %s", name);
            CHECK(src && strstr(src, name), "the source of %s defines another entry", name);
            free(src);
        }
    CHECK(!nd_cuda_small_solve_source(0, ND_FLOAT32) && !nd_cuda_small_solve_source(33, ND_FLOAT32) &&
              !nd_cuda_small_solve_source(8, ND_INT32),
          "a source for n = 0, n = 33 or int32");
    solve_fn solve = build_host(argv[1]);
    if (!solve) return 1;
    static const long long sing_mid[] = {170, 250, -1}, sing_first[] = {0, -1}, sing_one[] = {0, -1};
    static const long long sing_last[] = {299, -1};
    for (int k = 0; k < 4; k++)
        for (int n = 1; n <= ND_CUDA_SMALL_SOLVE_MAX_N; n++) {
            run_case(solve, k, n, 300, 1, NULL);      /* three blocks, the last partial */
            run_case(solve, k, n, 300, 1, sing_mid);  /* the lowest of two singular members */
            if (n % 5 == 1 || n == 8 || n == 32) {
                run_case(solve, k, n, 0, 1, NULL);    /* no systems */
                run_case(solve, k, n, 1, 1, NULL);
                run_case(solve, k, n, 1, 1, sing_one);
                run_case(solve, k, n, 129, 3, NULL);  /* several right-hand sides */
                run_case(solve, k, n, 129, 0, NULL);  /* none: still factored */
                run_case(solve, k, n, 129, 0, sing_first);
                run_case(solve, k, n, 300, 2, sing_last);
            }
        }
    printf("small_solve_check: %d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
