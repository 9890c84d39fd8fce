/*
 * sort_bench.c — nd's sorts at the sizes, on either backend.
 *
 *     sort      nd_sort of N float32 (1-d)             issue: N = 2^28 (H100)
 *     argsort   nd_argsort of M float64 (1-d)          issue: M = 2^26
 *     rows      nd_sort(x, -1) of R x C float32        issue: 4096 x 65536
 *
 * Each timed run gets fresh random inputs (nd_random_uniform, synced outside
 * the timed part); the time covers recording, running and waiting
 * (nd_sync). Median of RUNS (>= 7) after a warm-up run, whose answer is
 * checked on the host: the values are non-decreasing and sum to the input's
 * sum (float64, exact for float32 inputs up to 2^29 elements of [0, 1)),
 * the indices are a permutation that orders the input. Reports the median
 * in ms and the sorted keys per second.
 *
 * Usage: bench_sort_bench [N [M [R C [RUNS]]]]   (ND_BACKEND picks the backend)
 * Defaults: N = 2^24, M = 2^22, R x C = 64 x 65536, RUNS = 7.
 * CUB alone at N: bench/sort_variants.cu.
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

typedef enum { B_SORT, B_ARGSORT, B_ROWS } which;

static const char *names[] = {"sort_f32", "argsort_f64", "sort_rows_f32"};

/* Checks the warm-up's answer; returns 0 when right. */
static int check(which w, nd_array *x, nd_array *y, int64_t rows, int64_t n) {
    int64_t total = rows * n;
    int f64 = w == B_ARGSORT;
    double *xv = malloc((size_t)total * sizeof *xv);
    float *xf = malloc((size_t)total * sizeof *xf);
    int64_t *iv = w == B_ARGSORT ? malloc((size_t)total * sizeof *iv) : NULL;
    float *yf = w != B_ARGSORT ? malloc((size_t)total * sizeof *yf) : NULL;
    int bad = 0;
    if (f64) bad |= nd_to_host(x, xv, (size_t)total * 8) != ND_OK || nd_to_host(y, iv, (size_t)total * 8) != ND_OK;
    else bad |= nd_to_host(x, xf, (size_t)total * 4) != ND_OK || nd_to_host(y, yf, (size_t)total * 4) != ND_OK;
    if (!bad && f64) {
        char *seen = calloc((size_t)total, 1);
        for (int64_t i = 0; i < total && !bad; i++) {
            int64_t k = iv[i];
            bad = k < 0 || k >= total || seen[k] || (i && xv[iv[i - 1]] > xv[k]);
            if (!bad) seen[k] = 1;
        }
        free(seen);
    } else if (!bad) {
        for (int64_t r = 0; r < rows && !bad; r++) {
            double sx = 0, sy = 0;
            for (int64_t i = 0; i < n; i++) {
                sx += xf[r * n + i];
                sy += yf[r * n + i];
                if (i && yf[r * n + i - 1] > yf[r * n + i]) bad = 1;
            }
            if (fabs(sx - sy) > 1e-9 * (double)n) bad = 1;
        }
    }
    free(xv);
    free(xf);
    free(iv);
    free(yf);
    return bad;
}

static double run(which w, int64_t rows, int64_t n, int runs) {
    double *t = malloc((size_t)runs * sizeof *t);
    int64_t shape[2] = {rows, n};
    int nd = w == B_ROWS ? 2 : 1;
    const int64_t *sh = w == B_ROWS ? shape : &shape[1];
    nd_dtype dt = w == B_ARGSORT ? ND_FLOAT64 : ND_FLOAT32;
    for (int k = -1; k < runs; k++) {
        nd_array *x = nd_random_uniform(dt, nd, sh, 0, 1);
        if (!x || nd_sync() != ND_OK) {
            fprintf(stderr, "input: %s\n", nd_last_error());
            exit(1);
        }
        double t0 = bench_now();
        nd_array *y = w == B_ARGSORT ? nd_argsort(x, 0) : nd_sort(x, -1);
        if (!y || nd_sync() != ND_OK) {
            fprintf(stderr, "%s: %s\n", names[w], nd_last_error());
            exit(1);
        }
        double dt_s = bench_now() - t0;
        if (k < 0 && check(w, x, y, rows, n)) {
            fprintf(stderr, "%s: WRONG ANSWER\n", names[w]);
            exit(1);
        }
        if (k >= 0) t[k] = dt_s;
        nd_free(x);
        nd_free(y);
    }
    double m = bench_median(t, runs);
    free(t);
    return m;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 24;
    int64_t m = argc > 2 ? atoll(argv[2]) : (int64_t)1 << 22;
    int64_t r = argc > 3 ? atoll(argv[3]) : 64, c = argc > 4 ? atoll(argv[4]) : 65536;
    int runs = argc > 5 ? atoi(argv[5]) : 7;
    if (runs < 7) runs = 7;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "nd_init: %s\n", nd_last_error());
        return 1;
    }
    struct {
        which w;
        int64_t rows, n;
    } cases[] = {{B_SORT, 1, n}, {B_ARGSORT, 1, m}, {B_ROWS, r, c}};
    for (int i = 0; i < 3; i++) {
        if (cases[i].n <= 0 || cases[i].rows <= 0) continue;
        double s = run(cases[i].w, cases[i].rows, cases[i].n, runs);
        double keys = (double)(cases[i].rows * cases[i].n);
        printf("{\"bench\": \"sort_bench\", \"case\": \"%s\", \"backend\": \"%s\", \"rows\": %" PRId64 ", \"n\": %" PRId64
               ", \"median_ms\": %.3f, \"gkeys_per_s\": %.4f, \"runs\": %d}\n",
               names[cases[i].w], nd_backend_name(), cases[i].rows, cases[i].n, s * 1e3, keys / s * 1e-9, runs);
        fflush(stdout);
    }
    nd_shutdown();
    return 0;
}
