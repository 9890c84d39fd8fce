/*
 * einsum_bench.c — nd_einsum's contraction order and lowering against the
 * library calls it should become, in the same run on the backend
 * ND_BACKEND picks:
 *   chain   einsum('ij,jk,kl->il') of three N x N float32 matrices, and
 *           the two matmuls (A @ B) @ C it should cost (target <= 1.05x);
 *   order   einsum('ij,jk,kl->il') of (N, K), (K, N), (N, K) float32
 *           (K = 64): the cheap order A @ (B @ C) against the left-to-right
 *           one (ND_EINSUM_LEFT), and the two matmuls in the cheap order.
 *
 * Rules (bench/README.md): random inputs made and synced outside the timed
 * part; one checked warm-up (einsum against the matmuls, relative to the
 * largest value); the median of R timed runs, each from the first call to
 * the nd_sync that waits for it; the variants interleaved run by run so
 * that clocks and temperature treat them alike.
 *
 * Usage: einsum_bench [N] [R]   (defaults 4096 7)
 * Prints the chosen path, then one line per variant: name median_ms, and
 * the ratios.
 */
#include <nd.h>

#include <math.h>

#include "bench_util.h"

static nd_array *rand32(int64_t r, int64_t c) {
    nd_array *x = nd_random_uniform(ND_FLOAT32, 2, (int64_t[]){r, c}, -1, 1);
    nd_sync();
    return x;
}

typedef nd_array *(*variant)(nd_array *const *ops);

static nd_array *v_einsum(nd_array *const *ops) { return nd_einsum("ij,jk,kl->il", 3, ops); }
static nd_array *v_left(nd_array *const *ops) {
    nd_einsum_options o = {ND_EINSUM_LEFT};
    return nd_einsum_ex("ij,jk,kl->il", 3, ops, &o);
}
static nd_array *v_mm_left(nd_array *const *ops) {
    nd_array *ab = nd_matmul(ops[0], ops[1]), *r = nd_matmul(ab, ops[2]);
    nd_free(ab);
    return r;
}
static nd_array *v_mm_right(nd_array *const *ops) {
    nd_array *bc = nd_matmul(ops[1], ops[2]), *r = nd_matmul(ops[0], bc);
    nd_free(bc);
    return r;
}

/* max |x - y| / max |y|, read back. */
static double rel_diff(nd_array *x, nd_array *y) {
    nd_scope_begin();
    double d = nd_item(nd_max(nd_abs(nd_sub(x, y)), ND_ALL_AXES));
    double m = nd_item(nd_max(nd_abs(y), ND_ALL_AXES));
    nd_scope_end();
    return d / (m + 1e-300);
}

static int run_case(const char *title, nd_array *const *ops, int nv, const char *const *names, const variant *vs,
                    int ref, int R) {
    char report[4096];
    if (nd_einsum_path("ij,jk,kl->il", 3, ops, NULL, NULL, NULL, NULL, report, sizeof report) != ND_OK) {
        fprintf(stderr, "%s: %s\n", title, nd_last_error());
        return 1;
    }
    printf("== %s\n%s", title, report);
    /* warm-up and check: every variant against the reference one */
    nd_array *want = vs[ref](ops);
    nd_sync();
    for (int v = 0; v < nv; v++) {
        nd_array *got = vs[v](ops);
        double d = got ? rel_diff(got, want) : INFINITY;
        nd_free(got);
        if (!(d < 1e-4)) {
            fprintf(stderr, "%s: %s differs from %s by %g (%s)\n", title, names[v], names[ref], d, nd_last_error());
            return 1;
        }
    }
    nd_free(want);
    double t[8][64], med[8];
    if (R > 64) R = 64;
    for (int i = 0; i < R; i++)
        for (int v = 0; v < nv; v++) {
            double t0 = bench_now();
            nd_array *x = vs[v](ops);
            nd_sync();
            t[v][i] = bench_now() - t0;
            nd_free(x);
        }
    for (int v = 0; v < nv; v++) {
        med[v] = bench_median(t[v], R);
        printf("%-34s %10.3f ms\n", names[v], 1e3 * med[v]);
    }
    for (int v = 0; v < nv; v++)
        if (v != ref) printf("ratio %s / %s: %.3f\n", names[v], names[ref], med[v] / med[ref]);
    return 0;
}

int main(int argc, char **argv) {
    int64_t N = argc > 1 ? atoll(argv[1]) : 4096;
    int R = argc > 2 ? atoi(argv[2]) : 7;
    const int64_t K = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "nd_init: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(1234);
    int rc = 0;
    {
        nd_array *ops[3] = {rand32(N, N), rand32(N, N), rand32(N, N)};
        const char *names[] = {"einsum ij,jk,kl->il", "two matmuls (A@B)@C"};
        const variant vs[] = {v_einsum, v_mm_left};
        char title[96];
        snprintf(title, sizeof title, "chain: three %lld x %lld float32", (long long)N, (long long)N);
        rc |= run_case(title, ops, 2, names, vs, 1, R);
        for (int i = 0; i < 3; i++) nd_free(ops[i]);
    }
    {
        nd_array *ops[3] = {rand32(N, K), rand32(K, N), rand32(N, K)};
        const char *names[] = {"einsum (chosen order)", "einsum left to right", "two matmuls A@(B@C)"};
        const variant vs[] = {v_einsum, v_left, v_mm_right};
        char title[96];
        snprintf(title, sizeof title, "order: (%lld,%lld) (%lld,%lld) (%lld,%lld) float32", (long long)N,
                 (long long)K, (long long)K, (long long)N, (long long)N, (long long)K);
        rc |= run_case(title, ops, 3, names, vs, 2, R);
        for (int i = 0; i < 3; i++) nd_free(ops[i]);
    }
    nd_shutdown();
    return rc;
}
