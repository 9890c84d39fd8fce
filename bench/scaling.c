/*
 * scaling.c — one case of the several-device scaling run
 * (scripts/gpu/scaling.sh runs every case on 1, 2, 4, 8 devices and
 * tabulates; docs/scaling.md is the model the results are read against).
 * The devices are whatever ND_DEVICES names (0,1,2,3; 0,0; cpu:4) and the
 * program never says how many there are but through --parts, which only
 * sizes the weak-scaling grid: the same source runs on any device count.
 *
 *   bench_scaling CASE [--parts P] [--n N] [--sweeps S] [--runs R] [--small] [--check]
 *
 * CASE
 *   heat       5-point heat stencil, float32, (P*N) x N grid (N x N per
 *              device), S sweeps (default 20) per nd_sync
 *   heat-norm  the same with a residual norm (a global sum) every sweep,
 *              folded into one scalar read once per nd_sync
 *   strong     heat on one N x N grid (default 32768) whatever P is
 *   cg         conjugate gradients on the 2-D Poisson matrix in stencil
 *              form (no matrix), (P*N) x N unknowns, two dot products per
 *              iteration (the allreduces), S iterations per nd_sync, the
 *              scalars kept on the device (0-d arrays)
 *   matmul     a chain of S float32 N x N matmuls (default N 16384, S 4):
 *              over several devices C's rows follow A's and B rotates in
 *              a ring of blocks (docs/internals.md "Matmul over pieces")
 *   matmul-tall  X = X @ W, S times: X (P*N) x K, W K x K with K = N/16
 *              (a small B: replicated once per device, then kept)
 *   bcast      u = 0.5 + (u - 0.5) * w in place, S times: u (P*N) x N
 *              float32, w a row of N broadcast along axis 0 (a small
 *              array kept whole: every device's kernels read it)
 *
 * Prints one CSV line (scripts/gpu/scaling.sh reads it):
 *   case,parts,n,rows,cols,seconds,points_per_s,points_per_s_per_part,checksum
 * seconds: the median of R timed batches (after one untimed), one batch
 * = S sweeps (iterations, matmuls) and one nd_sync; points: grid points
 * updated (matmul: multiply-adds). checksum: with --check or --small, the
 * final grid's float64 sum taken on the host in row order (the same bits
 * for every device count where the run is bitwise equal); else nan.
 * --small: N 256 (strong 512, matmul 256), R 3: for ND_DEVICES=cpu:N here.
 */
#include <math.h>
#include <nd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static void die(const char *what) {
    fprintf(stderr, "bench_scaling: %s: %s\n", what, nd_last_error());
    exit(1);
}

/* One heat sweep in place: u[1:-1,1:-1] = 0.2 * (centre + 4 neighbours).
 * With norm: *acc += sum((new - old)^2) (a 0-d array, never read here). */
static void heat_sweep(nd_array *u, nd_array **acc) {
    nd_scope_begin();
    nd_array *c = nd_view(u, "1:-1, 1:-1");
    nd_array *sum = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                  nd_view(u, "1:-1, :-2")),
                           nd_view(u, "1:-1, 2:"));
    nd_array *next = nd_mul(nd_scalar(0.2), sum);
    if (acc) {
        nd_array *d = nd_sub(next, c);
        nd_array *r = nd_sum(nd_mul(d, d), ND_ALL_AXES);
        nd_array *t = nd_add(*acc, r);
        nd_keep(t);
        nd_free(*acc);
        *acc = t;
    }
    if (nd_assign(c, next) != ND_OK) die("nd_assign");
    nd_scope_end();
}

/* The 2-D Poisson operator (4 u - neighbours) on the interior of a grid
 * with a zero border: the result has the grid's shape and a zero border. */
static nd_array *poisson(nd_array *p, nd_array *out) {
    nd_array *c = nd_view(p, "1:-1, 1:-1");
    nd_array *nb = nd_add(nd_add(nd_add(nd_view(p, ":-2, 1:-1"), nd_view(p, "2:, 1:-1")), nd_view(p, "1:-1, :-2")),
                          nd_view(p, "1:-1, 2:"));
    if (nd_assign(nd_view(out, "1:-1, 1:-1"), nd_sub(nd_mul(nd_scalar(4.0), c), nb)) != ND_OK)
        die("nd_assign");
    return out;
}

static nd_array *dot(nd_array *a, nd_array *b) { return nd_sum(nd_mul(a, b), ND_ALL_AXES); }

typedef struct {
    nd_array *x, *r, *p, *ap, *rr;
} cg_state;

/* One CG iteration, every scalar a 0-d array: nothing waits for the host. */
static void cg_iter(cg_state *s) {
    nd_scope_begin();
    poisson(s->p, s->ap);
    nd_array *alpha = nd_div(s->rr, dot(s->p, s->ap));
    if (nd_assign(s->x, nd_add(s->x, nd_mul(alpha, s->p))) != ND_OK) die("nd_assign x");
    if (nd_assign(s->r, nd_sub(s->r, nd_mul(alpha, s->ap))) != ND_OK) die("nd_assign r");
    nd_array *rr = dot(s->r, s->r);
    nd_array *beta = nd_div(rr, s->rr);
    if (nd_assign(s->p, nd_add(s->r, nd_mul(beta, s->p))) != ND_OK) die("nd_assign p");
    nd_keep(rr);
    nd_free(s->rr);
    s->rr = rr;
    nd_scope_end();
}

/* The matmul chains: runs + 1 times (the first untimed), x = x0 then
 * `sweeps` times x = x @ w and one sync, each run's seconds in t[r]; the
 * last run's x is returned. */
static nd_array *matmul_chain(nd_array *x0, nd_array *w, int sweeps, int runs, double *t) {
    nd_array *x = NULL;
    for (int r = -1; r < runs; r++) {
        double t0 = bench_now();
        nd_free(x);
        x = nd_copy(x0);
        for (int k = 0; k < sweeps; k++) {
            nd_array *next = nd_matmul(x, w);
            nd_free(x);
            x = next;
        }
        if (nd_sync() != ND_OK) die("nd_sync");
        if (r >= 0) t[r] = bench_now() - t0;
    }
    return x;
}

/* One bcast sweep: u = 0.5 + (u - 0.5) * w, w broadcast along axis 0. */
static void bcast_sweep(nd_array *u, nd_array *w) {
    nd_scope_begin();
    nd_array *half = nd_scalar(0.5);
    if (nd_assign(u, nd_add(half, nd_mul(nd_sub(u, half), w))) != ND_OK) die("nd_assign");
    nd_scope_end();
}

static double host_checksum(nd_array *a) {
    int64_t n = nd_size(a);
    nd_array *d = nd_astype(a, ND_FLOAT64);
    double *h = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!d || !h || nd_to_host(d, h, sizeof(double) * (size_t)n) != ND_OK) die("nd_to_host");
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += h[i];
    free(h);
    nd_free(d);
    return s;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_scaling heat|heat-norm|strong|cg|matmul|matmul-tall|bcast [--parts P] [--n N] [--sweeps S] "
                        "[--runs R] [--small] [--check]\n");
        return 2;
    }
    const char *which = argv[1];
    int64_t parts = 1, n = 0;
    int sweeps = 0, runs = 0, small = 0, check = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--parts") && i + 1 < argc) parts = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--sweeps") && i + 1 < argc) sweeps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--small")) small = 1;
        else if (!strcmp(argv[i], "--check")) check = 1;
        else {
            fprintf(stderr, "bench_scaling: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    int heat = !strcmp(which, "heat"), norm = !strcmp(which, "heat-norm"), strong = !strcmp(which, "strong");
    int cg = !strcmp(which, "cg"), mm = !strcmp(which, "matmul"), tall = !strcmp(which, "matmul-tall");
    int bcast = !strcmp(which, "bcast");
    if (!(heat || norm || strong || cg || mm || tall || bcast) || parts < 1) {
        fprintf(stderr, "bench_scaling: unknown case %s\n", which);
        return 2;
    }
    if (!n) n = strong ? (small ? 512 : 32768) : small ? 256 : 16384;
    if (!sweeps) sweeps = mm || tall ? 4 : 20;
    if (!runs) runs = small ? 3 : 5;
    check |= small;
    if (nd_init(NULL) != ND_OK) die("nd_init");
    nd_scope_begin(); /* the setup's temporaries (views, scalars) end with it */
    int64_t rows = strong || mm ? n : parts * n, cols = tall ? (n / 16 > 0 ? n / 16 : 1) : n;
    double points = 0, seconds = 0, checksum = NAN;
    double *t = calloc((size_t)runs, sizeof *t);
    nd_random_seed(42);
    if (heat || norm || strong) {
        nd_array *u = nd_random_uniform(ND_FLOAT32, ND_SHAPE(rows, cols), 0.0, 1.0);
        nd_array *acc = norm ? nd_zeros(ND_FLOAT32, 0, NULL) : NULL;
        if (!u || nd_sync() != ND_OK) die("setup");
        for (int r = -1; r < runs; r++) {
            double t0 = bench_now();
            for (int s = 0; s < sweeps; s++) heat_sweep(u, norm ? &acc : NULL);
            if (norm && !isfinite(nd_item(acc))) die("residual norm");
            if (nd_sync() != ND_OK) die("nd_sync");
            if (r >= 0) t[r] = bench_now() - t0;
        }
        points = (double)(rows - 2) * (double)(cols - 2) * sweeps;
        if (check) checksum = host_checksum(u);
        nd_free(acc);
        nd_free(u);
    } else if (bcast) {
        nd_array *u = nd_random_uniform(ND_FLOAT32, ND_SHAPE(rows, cols), 0.0, 1.0);
        nd_array *w = nd_random_uniform(ND_FLOAT32, ND_SHAPE(cols), 0.0, 1.0);
        if (!u || !w || nd_sync() != ND_OK) die("bcast setup");
        for (int r = -1; r < runs; r++) {
            double t0 = bench_now();
            for (int s = 0; s < sweeps; s++) bcast_sweep(u, w);
            if (nd_sync() != ND_OK) die("nd_sync");
            if (r >= 0) t[r] = bench_now() - t0;
        }
        points = (double)rows * (double)cols * sweeps;
        if (check) checksum = host_checksum(u);
        nd_free(w);
        nd_free(u);
    } else if (cg) {
        /* b = 1 inside, x0 = 0: r = b, p = r, rr = r.r */
        cg_state s;
        s.x = nd_zeros(ND_FLOAT32, ND_SHAPE(rows + 2, cols + 2));
        s.r = nd_zeros(ND_FLOAT32, ND_SHAPE(rows + 2, cols + 2));
        s.ap = nd_zeros(ND_FLOAT32, ND_SHAPE(rows + 2, cols + 2));
        if (!s.x || !s.r || !s.ap || nd_assign(nd_view(s.r, "1:-1, 1:-1"), nd_scalar(1.0)) != ND_OK)
            die("cg setup");
        s.p = nd_copy(s.r);
        s.rr = dot(s.r, s.r);
        if (!s.p || !s.rr || nd_sync() != ND_OK) die("cg setup");
        for (int r = -1; r < runs; r++) {
            double t0 = bench_now();
            for (int k = 0; k < sweeps; k++) cg_iter(&s);
            if (!isfinite(nd_item(s.rr))) die("cg residual");
            if (nd_sync() != ND_OK) die("nd_sync");
            if (r >= 0) t[r] = bench_now() - t0;
        }
        points = (double)rows * (double)cols * sweeps;
        if (check) checksum = host_checksum(s.x);
        nd_free(s.x), nd_free(s.r), nd_free(s.p), nd_free(s.ap), nd_free(s.rr);
    } else if (tall) {
        /* W's entries in [0, 2/K): X stays near its start. */
        nd_array *x0 = nd_random_uniform(ND_FLOAT32, ND_SHAPE(rows, cols), 0.0, 1.0);
        nd_array *w = nd_random_uniform(ND_FLOAT32, ND_SHAPE(cols, cols), 0.0, 2.0 / (double)cols);
        if (!x0 || !w || nd_sync() != ND_OK) die("matmul-tall setup");
        nd_array *x = matmul_chain(x0, w, sweeps, runs, t);
        points = (double)rows * (double)cols * (double)cols * sweeps;
        if (check) checksum = host_checksum(x);
        nd_free(x), nd_free(x0), nd_free(w);
    } else {
        /* Scaled so that the chain stays near 1: B's entries in [0, 2/n). */
        nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), 0.0, 1.0);
        nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), 0.0, 2.0 / (double)n);
        if (!a || !b || nd_sync() != ND_OK) die("matmul setup");
        nd_array *c = matmul_chain(a, b, sweeps, runs, t);
        points = (double)n * (double)n * (double)n * sweeps;
        if (check) checksum = host_checksum(c);
        nd_free(c), nd_free(a), nd_free(b);
    }
    seconds = bench_median(t, runs);
    free(t);
    printf("%s,%lld,%lld,%lld,%lld,%.6g,%.6g,%.6g,%.17g\n", which, (long long)parts, (long long)n, (long long)rows,
           (long long)cols, seconds, points / seconds, points / seconds / (double)parts, checksum);
    nd_scope_end();
    nd_shutdown();
    return 0;
}
