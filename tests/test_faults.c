/* Faults never give a wrong answer (DESIGN.md "Errors").
 *
 * The sweep: for each representative program (an in-place stencil loop,
 * matmul, reductions, concatenate, an overlapping assign, random draws, a
 * host array streamed in chunks) count the injection points of each kind
 * (common/fault.h: host allocations, backend allocations, kernel compiles,
 * backend calls) the program passes, then for every N start a fresh
 * runtime, make the inputs and an unrelated bystander array and sync them,
 * fail the N-th point (once, then in a second run every point from the
 * N-th on), run the program and read back every result into poisoned
 * buffers. Each read must give the float64 reference value or an error
 * whose message names the function (nd_...:) and the cause; the bystander
 * and the inputs the program does not write keep their values; once the
 * fault is disarmed a new flush works. Nothing may crash, and the
 * sanitised run (scripts/test.sh) checks that nothing leaks.
 *
 * Every point is failed (CUDA samples host allocations: see stride());
 * ND_TEST_FAULT_STRIDE=k fails every k-th point only (1: every point on
 * every backend); the first and last points are always swept. The tally (runs, harmless, reported,
 * silently wrong) is printed per program and kind.
 *
 * The focused tests at the end each pin one cause of a wrong answer found
 * by the sweep. */
#include "common.h"
#include "common/alloc.h"
#include "common/fault.h"
#include "common/philox.h"

#include <stdarg.h>
#include <unistd.h>

static const double x5[5] = {1.5, -2.25, 3.0, 0.5, -4.0};

typedef struct {
    /* Tally of one program's sweep over one kind. */
    int64_t runs, harmless, reported, wrong, unnamed;
    /* The run in progress. */
    int run_reported, run_wrong, run_unnamed;
    char unnamed_message[512];
    int record_failed; /* a recording call returned NULL or an error */
    char problem[768];
    /* What the harness does in this run. */
    int counting;
    nd_fault_kind kind;
    int64_t n;
    int persistent;
} sweep;

static void problem(sweep *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(sweep *s, const char *fmt, ...) {
    s->run_wrong = 1;
    if (s->problem[0]) return; /* the first one says most */
    int k = snprintf(s->problem, sizeof s->problem, "%s N=%lld%s: ", nd_fault_kind_name(s->kind),
                     (long long)s->n, s->persistent ? "+" : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->problem + k, sizeof s->problem - (size_t)k, fmt, ap);
    va_end(ap);
}

static void arm(sweep *s) {
    nd_clear_error();
    if (s->counting) nd_fault_arm(s->kind, 0, 0);
    else nd_fault_arm(s->kind, s->n, s->persistent);
}

/* A recording call's result: NULL or an error means the program was told
 * at once, so what it meant to write may keep its old value. */
static nd_array *rec(sweep *s, nd_array *a) {
    if (!a) s->record_failed = 1;
    return a;
}
static void rec_status(sweep *s, nd_status st) {
    if (st != ND_OK) s->record_failed = 1;
}

static int names_cause(const char *m) {
    return strstr(m, "memory") || strstr(m, "compile") || strstr(m, "backend") || strstr(m, "fault") ||
           strstr(m, "NVRTC") || strstr(m, "cuda");
}

/* An error message names the function and the cause. */
static int good_message(const char *m) {
    if (strncmp(m, "nd_", 3) != 0) return 0;
    const char *colon = strchr(m, ':');
    if (!colon || colon - m > 40) return 0;
    return names_cause(m);
}

/* How a read is judged. */
enum {
    ANY = 0,  /* the value, or an error naming function and cause */
    MUST = 1, /* the value (bystanders, unwritten inputs, reads after disarming) */
    /* As ANY; also the old value when a store into the array (or into one
     * it is computed from) was refused when recorded: nd_assign returned
     * the error then. */
    AFTER_STORES = 2,
};

/* Reads a into a poisoned buffer (in its own dtype) and checks it against
 * want[0..n) as `how` says. */
static void check_read(sweep *s, nd_array *a, const double *want, int64_t n, double rtol, const char *what,
                       int how) {
    const int must = how == MUST;
    nd_dtype t = a ? nd_dtype_of(a) : ND_FLOAT64;
    size_t item = nd_dtype_size(t);
    unsigned char *buf = malloc((size_t)n * item + 16);
    cr_assert(buf);
    memset(buf, 0xA5, (size_t)n * item + 16);
    nd_status st = nd_to_host(a, buf, (size_t)n * item);
    if (st != ND_OK) {
        const char *m = nd_last_error();
        if (must) problem(s, "%s: read failed although it must not: %s", what, m);
        else if (!good_message(m)) {
            s->run_unnamed = 1;
            if (!s->unnamed_message[0])
                snprintf(s->unnamed_message, sizeof s->unnamed_message, "%s: %s", what, m);
        } else {
            s->run_reported = 1;
        }
        free(buf);
        return;
    }
    if (!a) {
        problem(s, "%s: nd_to_host(NULL) returned ND_OK", what);
        free(buf);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double got = ref_decode(buf, t, i);
        double tol = rtol * (fabs(want[i]) + 1.0);
        if (!(fabs(got - want[i]) <= tol)) {
            if (s->record_failed && how == AFTER_STORES) {
                s->run_reported = 1; /* the program was told when it recorded */
            } else {
                problem(s, "%s: ND_OK but element %lld is %.17g, want %.17g", what, (long long)i, got, want[i]);
            }
            break;
        }
    }
    for (int b = 0; b < 16; b++)
        if (buf[(size_t)n * item + (size_t)b] != 0xA5) {
            problem(s, "%s: nd_to_host wrote past the end", what);
            break;
        }
    free(buf);
}

static nd_array *upload(const double *v, int ndim, const int64_t *shape) {
    nd_array *a = nd_from_host(v, ND_FLOAT64, ndim, shape);
    cr_assert(a, "nd_from_host: %s", nd_last_error());
    return a;
}

static void fill_random(ndt_rng *r, double *v, int64_t n, double lo, double hi) {
    for (int64_t i = 0; i < n; i++) v[i] = ndt_uniform(r, lo, hi);
}

/* --------------------------------------------------------- the programs */

typedef struct {
    ndt_rng rng;
    nd_array *bystander;
    double by[8];
} world;

/* Before arming: the bystander, made and synced without faults. */
static void world_begin(world *w, sweep *s, const char *name) {
    (void)s;
    ndt_rng_init(&w->rng, name);
    fill_random(&w->rng, w->by, 8, -3, 3);
    w->bystander = upload(w->by, 1, (int64_t[]){8});
}

/* After the reads: disarm; the bystander keeps its value; a new flush
 * works. Frees every handle the program made (its scope). */
static void world_end(world *w, sweep *s) {
    nd_fault_disarm();
    nd_scope_end();
    (void)nd_sync(); /* an error of the failed flush may surface here: fine */
    nd_clear_error();
    check_read(s, w->bystander, w->by, 8, 0, "bystander", MUST);
    nd_scope_begin();
    nd_array *two = nd_full(ND_FLOAT64, ND_SHAPE(8), 2.0);
    nd_array *y = nd_mul(nd_add(w->bystander, two), two);
    double want[8];
    for (int i = 0; i < 8; i++) want[i] = (w->by[i] + 2.0) * 2.0;
    nd_clear_error();
    check_read(s, y, want, 8, 0, "a new flush after the fault", MUST);
    nd_scope_end();
    nd_free(w->bystander);
    w->bystander = NULL;
    nd_clear_error();
}

/* In-place Jacobi sweeps on a 12x10 grid through shifted views, with an
 * early flush after the first, plus x += 1 on an unrelated existing array
 * in the same flushes. */
static void prog_stencil(sweep *s) {
    world w;
    world_begin(&w, s, "stencil");
    enum { R = 12, C = 10, SWEEPS = 4 };
    double u0[R * C], x0[7];
    fill_random(&w.rng, u0, R * C, -1, 1);
    fill_random(&w.rng, x0, 7, -5, 5);
    nd_array *u = upload(u0, 2, (int64_t[]){R, C});
    nd_array *x = upload(x0, 1, (int64_t[]){7});
    nd_array *keep = upload(x0, 1, (int64_t[]){7}); /* an input nobody writes */
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *one = nd_scalar(1.0), *quarter = nd_scalar(0.25);
    for (int k = 0; k < SWEEPS; k++) {
        nd_scope_begin();
        nd_array *c = nd_view(u, "1:-1, 1:-1");
        nd_array *sum = nd_add(nd_add(nd_view(u, ":-2, 1:-1"), nd_view(u, "2:, 1:-1")),
                               nd_add(nd_view(u, "1:-1, :-2"), nd_view(u, "1:-1, 2:")));
        if (!c || !sum) s->record_failed = 1;
        else rec_status(s, nd_assign(c, rec(s, nd_mul(sum, quarter))));
        rec_status(s, nd_assign(x, rec(s, nd_add(x, nd_add(keep, one)))));
        nd_scope_end();
        if (k == 0) (void)nd_flush();
    }
    double ur[R * C], xr[7];
    memcpy(ur, u0, sizeof ur);
    memcpy(xr, x0, sizeof xr);
    for (int k = 0; k < SWEEPS; k++) {
        double nu[R * C];
        memcpy(nu, ur, sizeof nu);
        for (int i = 1; i < R - 1; i++)
            for (int j = 1; j < C - 1; j++)
                nu[i * C + j] = 0.25 * ((ur[(i - 1) * C + j] + ur[(i + 1) * C + j]) +
                                        (ur[i * C + j - 1] + ur[i * C + j + 1]));
        memcpy(ur, nu, sizeof ur);
        for (int i = 0; i < 7; i++) xr[i] += x0[i] + 1.0;
    }
    check_read(s, u, ur, R * C, 1e-14, "stencil u", AFTER_STORES);
    check_read(s, x, xr, 7, 1e-14, "x += keep + 1", AFTER_STORES);
    check_read(s, keep, x0, 7, 0, "an input nobody writes", MUST);
    world_end(&w, s);
    nd_free(u);
    nd_free(x);
    nd_free(keep);
}

static void prog_matmul(sweep *s) {
    world w;
    world_begin(&w, s, "matmul");
    enum { M = 7, K = 5, N = 6 };
    double a0[M * K], b0[K * N], c0[N];
    fill_random(&w.rng, a0, M * K, -2, 2);
    fill_random(&w.rng, b0, K * N, -2, 2);
    fill_random(&w.rng, c0, N, -2, 2);
    nd_array *a = upload(a0, 2, (int64_t[]){M, K});
    nd_array *b = upload(b0, 2, (int64_t[]){K, N});
    nd_array *c = upload(c0, 1, (int64_t[]){N});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *d = rec(s, nd_add(rec(s, nd_matmul(a, b)), c));
    nd_array *e = rec(s, nd_matmul(rec(s, nd_transpose(d, NULL)), a)); /* (N,M)@(M,K) */
    nd_array *tot = rec(s, nd_sum(d, ND_ALL_AXES));
    double dr[M * N], er[N * K], tr = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += a0[i * K + k] * b0[k * N + j];
            dr[i * N + j] = acc + c0[j];
            tr += dr[i * N + j];
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < K; j++) {
            double acc = 0;
            for (int k = 0; k < M; k++) acc += dr[k * N + i] * a0[k * K + j];
            er[i * K + j] = acc;
        }
    check_read(s, d, dr, M * N, 1e-12, "a@b + c", 0);
    check_read(s, e, er, N * K, 1e-12, "(a@b + c).T @ a", 0);
    check_read(s, tot, &tr, 1, 1e-12, "sum(a@b + c)", 0);
    check_read(s, a, a0, M * K, 0, "input a", MUST);
    world_end(&w, s);
    nd_free(a);
    nd_free(b);
    nd_free(c);
}

static void prog_reductions(sweep *s) {
    world w;
    world_begin(&w, s, "reductions");
    enum { R = 6, C = 9 };
    double x0[R * C];
    fill_random(&w.rng, x0, R * C, -4, 4);
    nd_array *x = upload(x0, 2, (int64_t[]){R, C});
    double w0[C];
    for (int j = 0; j < C; j++) w0[j] = j + 1;
    nd_array *wt = upload(w0, 1, (int64_t[]){C});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *s0 = rec(s, nd_sum(x, 0));
    nd_array *m1 = rec(s, nd_mean(rec(s, nd_square(x)), 1));
    nd_array *am = rec(s, nd_argmax(x, 1));
    nd_array *mx = rec(s, nd_max(x, ND_ALL_AXES));
    (void)nd_flush();
    nd_array *sd = rec(s, nd_std(x, 0));
    /* composed reductions: several nodes each, every error path */
    nd_array *nv = rec(s, nd_nanvar_axes(x, 2, (const int[]){1, 0}, 1.0, false));
    nd_array *an = rec(s, nd_nanargmin(x, 1));
    nd_array *av = rec(s, nd_average(x, -1, wt));
    double s0r[C] = {0}, m1r[R] = {0}, amr[R], mxr = -INFINITY, sdr[C];
    double nvr = 0, tot = 0, anr[R], avr[R] = {0};
    for (int i = 0; i < R * C; i++) tot += x0[i];
    for (int i = 0; i < R * C; i++) nvr += (x0[i] - tot / (R * C)) * (x0[i] - tot / (R * C));
    nvr /= R * C - 1;
    for (int i = 0; i < R; i++) {
        int lo = 0;
        for (int j = 0; j < C; j++) {
            if (x0[i * C + j] < x0[i * C + lo]) lo = j;
            avr[i] += x0[i * C + j] * w0[j] / (C * (C + 1) / 2);
        }
        anr[i] = lo;
    }
    for (int i = 0; i < R; i++) {
        int best = 0;
        for (int j = 0; j < C; j++) {
            double v = x0[i * C + j];
            s0r[j] += v;
            m1r[i] += v * v / C;
            if (v > x0[i * C + best]) best = j;
            if (v > mxr) mxr = v;
        }
        amr[i] = best;
    }
    for (int j = 0; j < C; j++) {
        double mean = s0r[j] / R, acc = 0;
        for (int i = 0; i < R; i++) acc += (x0[i * C + j] - mean) * (x0[i * C + j] - mean);
        sdr[j] = sqrt(acc / R);
    }
    check_read(s, s0, s0r, C, 1e-12, "sum axis 0", 0);
    check_read(s, m1, m1r, R, 1e-12, "mean(x^2) axis 1", 0);
    check_read(s, am, amr, R, 0, "argmax axis 1", 0);
    check_read(s, mx, &mxr, 1, 0, "max", 0);
    check_read(s, sd, sdr, C, 1e-12, "std axis 0", 0);
    check_read(s, nv, &nvr, 1, 1e-12, "nanvar axes (1, 0) ddof 1", 0);
    check_read(s, an, anr, R, 0, "nanargmin axis 1", 0);
    check_read(s, av, avr, R, 1e-12, "average axis -1, 1-d weights", 0);
    world_end(&w, s);
    nd_free(wt);
    nd_free(x);
}

static void prog_concatenate(sweep *s) {
    world w;
    world_begin(&w, s, "concatenate");
    double a0[3 * 4], b0[2 * 4];
    fill_random(&w.rng, a0, 12, -2, 2);
    fill_random(&w.rng, b0, 8, -2, 2);
    nd_array *a = upload(a0, 2, (int64_t[]){3, 4});
    nd_array *b = upload(b0, 2, (int64_t[]){2, 4});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *two = nd_scalar(2.0);
    nd_array *ab = rec(s, nd_concatenate(2, (nd_array *[]){a, rec(s, nd_mul(b, two))}, 0)); /* (5,4) */
    nd_array *side = rec(s, nd_concatenate(2, (nd_array *[]){rec(s, nd_transpose(a, NULL)),
                                                             rec(s, nd_transpose(b, NULL))}, 1)); /* (4,5) */
    nd_array *tot = rec(s, nd_sum(rec(s, nd_add(ab, rec(s, nd_transpose(side, NULL)))), 1));
    double abr[20], sider[20], totr[5];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) abr[i * 4 + j] = i < 3 ? a0[i * 4 + j] : 2 * b0[(i - 3) * 4 + j];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) sider[i * 5 + j] = j < 3 ? a0[j * 4 + i] : b0[(j - 3) * 4 + i];
    for (int i = 0; i < 5; i++) {
        totr[i] = 0;
        for (int j = 0; j < 4; j++) totr[i] += abr[i * 4 + j] + sider[j * 5 + i];
    }
    check_read(s, ab, abr, 20, 0, "concatenate axis 0", 0);
    check_read(s, side, sider, 20, 0, "concatenate axis 1", 0);
    check_read(s, tot, totr, 5, 1e-14, "sum of both", 0);
    world_end(&w, s);
    nd_free(a);
    nd_free(b);
}

/* x[1:] = x[:-1] (NumPy copies the right-hand side first), then
 * x[2:12] = 2 * x[0:10], then y = x * 3. */
static void prog_overlap(sweep *s) {
    world w;
    world_begin(&w, s, "overlap");
    enum { N = 20 };
    double x0[N];
    fill_random(&w.rng, x0, N, -3, 3);
    nd_array *x = upload(x0, 1, (int64_t[]){N});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    rec_status(s, nd_assign(rec(s, nd_view(x, "1:")), rec(s, nd_view(x, ":-1"))));
    rec_status(s, nd_assign(rec(s, nd_view(x, "2:12")), rec(s, nd_mul(rec(s, nd_view(x, "0:10")), nd_scalar(2.0)))));
    nd_array *y = rec(s, nd_mul(x, nd_scalar(3.0)));
    double xr[N], t[N], yr[N];
    memcpy(xr, x0, sizeof xr);
    memcpy(t, xr, sizeof t);
    for (int i = 1; i < N; i++) xr[i] = t[i - 1];
    memcpy(t, xr, sizeof t);
    for (int i = 2; i < 12; i++) xr[i] = 2 * t[i - 2];
    for (int i = 0; i < N; i++) yr[i] = 3 * xr[i];
    check_read(s, x, xr, N, 0, "overlapping assigns", AFTER_STORES);
    check_read(s, y, yr, N, 0, "3 * x", AFTER_STORES);
    world_end(&w, s);
    nd_free(x);
}

static void prog_random(sweep *s) {
    world w;
    world_begin(&w, s, "random");
    enum { N = 40 };
    nd_scope_begin();
    arm(s);
    nd_random_seed(7);
    nd_array *u = rec(s, nd_random_uniform(ND_FLOAT64, ND_SHAPE(N), -1.0, 3.0));
    nd_array *z = rec(s, nd_random_normal(ND_FLOAT64, ND_SHAPE(N), 0.5, 2.0));
    nd_array *t = rec(s, nd_add(rec(s, nd_mul(u, nd_scalar(2.0))), z));
    double ur[N], zr[N], tr[N];
    for (int i = 0; i < N; i++) {
        ur[i] = -1.0 + 4.0 * nd_philox_uniform_f64(7, 0, (uint64_t)i);
        zr[i] = 0.5 + 2.0 * nd_philox_normal_f64(7, 1, (uint64_t)i);
        tr[i] = ur[i] * 2.0 + zr[i];
    }
    check_read(s, u, ur, N, 1e-15, "uniform", 0);
    check_read(s, z, zr, N, 1e-12, "normal", 0);
    check_read(s, t, tr, N, 1e-12, "2u + z", 0);
    world_end(&w, s);
}

/* Sorting routines (library call steps that allocate scratch on the CPU):
 * sort, argsort and a median of one array, and a quantile computed from
 * the sort. */
static void prog_sorting(sweep *s) {
    world w;
    world_begin(&w, s, "sorting");
    enum { N = 40 };
    double v[N], sr[N], ir[N];
    fill_random(&w.rng, v, N, -5, 5);
    v[3] = v[7]; /* a tie: the stable order is part of the answer */
    for (int i = 0; i < N; i++) ir[i] = i;
    for (int i = 1; i < N; i++) /* stable insertion sort of the indices */
        for (int j = i; j > 0 && v[(int)ir[j - 1]] > v[(int)ir[j]]; j--) {
            double t = ir[j];
            ir[j] = ir[j - 1];
            ir[j - 1] = t;
        }
    for (int i = 0; i < N; i++) sr[i] = v[(int)ir[i]];
    double med = (sr[N / 2 - 1] + sr[N / 2]) / 2;
    nd_array *a = upload(v, ND_SHAPE(N));
    nd_scope_begin();
    arm(s);
    nd_array *st = rec(s, nd_sort(a, 0));
    nd_array *ix = rec(s, nd_argsort(a, -1));
    nd_array *m = rec(s, nd_median(a, ND_ALL_AXES));
    check_read(s, st, sr, N, 0, "sort", 0);
    check_read(s, ix, ir, N, 0, "argsort", 0);
    check_read(s, m, &med, 1, 0, "median", 0);
    world_end(&w, s);
    nd_free(a);
}

/* Scatters in one flush with the work around them (the gather and scatter
 * routines file bad indices in fail records, so the plan runs whole): a
 * put of computed values with repeated indices (the last write wins), an
 * add_at, a stacked gather of five index arrays (the routine) and values
 * computed from each. */
static void prog_scatter(sweep *s) {
    world w;
    world_begin(&w, s, "scatter");
    enum { N = 9, M = 12 };
    double x0[M], tr[N], ar[N], yr[N], gr[2];
    const int64_t iv[M] = {3, -1, 0, 3, 8, 2, -9, 5, 3, 7, 1, 0};
    fill_random(&w.rng, x0, M, -4, 4);
    for (int j = 0; j < N; j++) tr[j] = ar[j] = j;
    for (int i = 0; i < M; i++) {
        int64_t j = iv[i] < 0 ? iv[i] + N : iv[i];
        tr[j] = x0[i] * 2.0;
        ar[j] += x0[i] * 2.0;
    }
    for (int j = 0; j < N; j++) yr[j] = tr[j] + ar[j];
    double s32[32];
    for (int i = 0; i < 32; i++) s32[i] = i * 0.5;
    gr[0] = s32[31] * 2.0; /* [1, 1, 1, 1, 1] */
    gr[1] = s32[0] * 2.0;  /* [0, 0, 0, 0, 0] */
    nd_array *x = upload(x0, ND_SHAPE(M));
    nd_array *ix = nd_from_host(iv, ND_INT64, ND_SHAPE(M));
    nd_array *src = upload(s32, 5, (int64_t[]){2, 2, 2, 2, 2});
    nd_array *five = nd_from_host((int64_t[]){1, 0}, ND_INT64, ND_SHAPE(2));
    cr_assert(ix && five && nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *t = rec(s, nd_arange(ND_FLOAT64, 0, N, 1)), *a = rec(s, nd_arange(ND_FLOAT64, 0, N, 1));
    nd_array *x2 = rec(s, nd_mul(x, nd_scalar(2.0)));
    rec_status(s, nd_put(t, ix, x2));
    rec_status(s, nd_add_at(a, ix, x2));
    nd_array *y = rec(s, nd_add(t, a));
    nd_array *g = rec(s, nd_mul(rec(s, nd_index(src, "$0, $1, $2, $3, $4", 5,
                                                (nd_array *[]){five, five, five, five, five})),
                                nd_scalar(2.0)));
    /* a put or add_at refused when recorded left its target as it was */
    check_read(s, t, tr, N, 0, "put (last write wins)", AFTER_STORES);
    check_read(s, a, ar, N, 1e-15, "add_at", AFTER_STORES);
    check_read(s, y, yr, N, 1e-15, "put + add_at", AFTER_STORES);
    check_read(s, g, gr, 2, 0, "a stacked gather of five arrays", 0);
    world_end(&w, s);
    nd_free(x);
    nd_free(ix);
    nd_free(src);
    nd_free(five);
}

/* A host array read by one reduction: on CUDA (ND_CHUNK_BYTES=4096 in the
 * test's environment) it streams through the device in 16 chunks. */
static void prog_stream(sweep *s) {
    world w;
    world_begin(&w, s, "stream");
    enum { N = 16384 };
    float *x0 = malloc(N * sizeof *x0);
    cr_assert(x0);
    double want = 0, wmax = -INFINITY;
    for (int i = 0; i < N; i++) {
        x0[i] = (float)ndt_uniform(&w.rng, -4, 4);
        want += sqrt(fabs((double)x0[i]));
        if (x0[i] > wmax) wmax = x0[i];
    }
    nd_array *x = nd_from_host(x0, ND_FLOAT32, ND_SHAPE(N));
    cr_assert(x);
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *sum = rec(s, nd_sum(rec(s, nd_astype(rec(s, nd_sqrt(rec(s, nd_abs(x)))), ND_FLOAT64)), ND_ALL_AXES));
    (void)nd_sync();
    nd_array *mx = rec(s, nd_max(x, ND_ALL_AXES));
    check_read(s, sum, &want, 1, 1e-6, "sum(sqrt|x|) streamed", 0);
    check_read(s, mx, &wmax, 1, 0, "max(x) streamed", 0);
    world_end(&w, s);
    nd_free(x);
    free(x0);
}

/* A user kernel with two outputs, a new one (x + 1) and one in place
 * (y = 3 x), between nd ops. Contiguous inputs only (the sweep's are). */
static int plus1_times3(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    (void)ctx, (void)n_in, (void)n_out;
    const double *x = in[0].data;
    for (int64_t i = 0; i < in[0].size; i++) {
        ((double *)out[0].data)[i] = x[i] + 1;
        ((double *)out[1].data)[i] = 3 * x[i];
    }
    return 0;
}
static const char plus1_times3_cuda[] =
    "extern \"C\" __global__ void plus1_times3(nd_kernel_arg x, nd_kernel_arg a, nd_kernel_arg b) {\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i >= x.size) return;\n"
    "    double v = ((const double *)x.data)[i];\n"
    "    ((double *)a.data)[i] = v + 1;\n"
    "    ((double *)b.data)[i] = 3 * v;\n"
    "}\n";

static void prog_user_kernel(sweep *s) {
    world w;
    world_begin(&w, s, "user_kernel");
    enum { N = 24 };
    double x0[N], y0[N], tr[N], ar[N], yr[N], ur[N];
    fill_random(&w.rng, x0, N, -3, 3);
    fill_random(&w.rng, y0, N, -3, 3);
    nd_array *x = upload(x0, 1, (int64_t[]){N}), *y = upload(y0, 1, (int64_t[]){N});
    nd_user_kernel *k = nd_user_kernel_new("plus1_times3", 1, 2);
    cr_assert(k && nd_user_kernel_set_cpu(k, plus1_times3, NULL) == ND_OK &&
              nd_user_kernel_set_cuda_source(k, plus1_times3_cuda, "plus1_times3", NULL, NULL, NULL) == ND_OK);
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *t = rec(s, nd_mul(x, nd_scalar(2.0)));
    nd_array *res[2] = {NULL, NULL};
    nd_kernel_output o[2] = {{NULL, ND_FLOAT64, 1, (int64_t[]){N}}, {y, ND_FLOAT64, -1, NULL}};
    if (t) rec_status(s, nd_user_kernel_call(k, 1, (nd_array *[]){t}, 2, o, res));
    nd_array *u = rec(s, nd_add(res[0], y));
    for (int i = 0; i < N; i++) {
        tr[i] = 2 * x0[i];
        ar[i] = tr[i] + 1;
        yr[i] = 3 * tr[i];
        ur[i] = ar[i] + yr[i];
    }
    check_read(s, t, tr, N, 0, "2x", 0);
    check_read(s, res[0], ar, N, 0, "kernel: 2x + 1", 0);
    check_read(s, y, yr, N, 0, "kernel: y = 3 (2x) in place", AFTER_STORES);
    check_read(s, u, ur, N, 0, "(2x + 1) + y", 0);
    check_read(s, x, x0, N, 0, "input x", MUST);
    world_end(&w, s); /* frees t, res[0], u: they are in its scope */
    nd_user_kernel_free(k);
    nd_free(x);
    nd_free(y);
}

/* A loop body (include/nd/body.h) traced and called six times while
 * faults are armed: the trace records and takes back its ops, each call
 * is one node expanded where the kernel is built. */
static nd_array *halve_add(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *r = nd_keep(nd_add(nd_mul(in[0], nd_scalar(0.5)), in[1]));
    nd_scope_end();
    return r;
}

/* Two random float64 vectors of n, uploaded and synced before arming. */
static void two_inputs(world *w, double *x0, double *c0, int64_t n, nd_array **x, nd_array **c) {
    fill_random(&w->rng, x0, n, -3, 3);
    fill_random(&w->rng, c0, n, -3, 3);
    *x = upload(x0, 1, &n);
    *c = upload(c0, 1, &n);
    cr_assert(nd_sync() == ND_OK);
}

static void prog_body(sweep *s) {
    world w;
    world_begin(&w, s, "body");
    enum { N = 24, STEPS = 6 };
    double x0[N], c0[N], want[N];
    nd_array *x, *c;
    two_inputs(&w, x0, c0, N, &x, &c);
    nd_scope_begin();
    arm(s);
    nd_array *in[2] = {x, c};
    nd_body *b = nd_body_trace("halve_add", 2, in, halve_add, NULL);
    if (!b) s->record_failed = 1;
    nd_array *y = x;
    for (int k = 0; k < STEPS; k++) {
        nd_array *args[2] = {y, c};
        y = rec(s, nd_body_call(b, args)); /* b NULL: an error, y NULL */
    }
    nd_body_free(b); /* the pending calls keep it */
    for (int i = 0; i < N; i++) {
        want[i] = x0[i];
        for (int k = 0; k < STEPS; k++) want[i] = want[i] * 0.5 + c0[i];
    }
    check_read(s, y, want, N, 0, "six body calls", 0);
    check_read(s, x, x0, N, 0, "input x", MUST);
    world_end(&w, s); /* frees the calls' results: they are in its scope */
    nd_free(x);
    nd_free(c);
}

/* A loop whose scope is replayed (README, "Loops: scope replay"): learnt
 * in its first iteration, then one body call an iteration, all under the
 * fault; y = y*0.5 + (c - 1), exact in float64. */
static nd_array *replayed_step(nd_array *y, nd_array *c) {
    nd_scope_begin();
    nd_array *r = nd_keep(nd_add(nd_mul(y, nd_scalar(0.5)), nd_sub(c, nd_scalar(1.0))));
    nd_scope_end();
    return r;
}

static void prog_scope_replay(sweep *s) {
    world w;
    world_begin(&w, s, "scope_replay");
    enum { N = 24, STEPS = 6 };
    double x0[N], c0[N], want[N];
    nd_array *x, *c;
    two_inputs(&w, x0, c0, N, &x, &c);
    nd_scope_begin();
    arm(s);
    nd_array *y = x;
    for (int k = 0; k < STEPS; k++) y = rec(s, replayed_step(y, c)); /* kept into the world's scope */
#ifndef NDT_TSAN /* (no replay under ThreadSanitizer: the API lock is not biased there) */
    if (s->counting) { /* without faults every step after the first replays */
        nd_stats st;
        nd_get_stats(&st);
        if (st.scopes_replayed != STEPS - 1)
            problem(s, "%llu scopes replayed without faults, not %d", (unsigned long long)st.scopes_replayed,
                    STEPS - 1);
    }
#endif
    for (int i = 0; i < N; i++) {
        want[i] = x0[i];
        for (int k = 0; k < STEPS; k++) want[i] = want[i] * 0.5 + (c0[i] - 1.0);
    }
    check_read(s, y, want, N, 0, "six replayed scopes", 0);
    /* the loop again, each old value freed: the replayed calls join the
     * loop call before them (ND_BODY_LOOPS) */
    nd_array *z = rec(s, replayed_step(x, c));
    for (int k = 1; k < STEPS; k++) {
        nd_array *next = rec(s, replayed_step(z, c));
        nd_free(z);
        z = next;
    }
#ifndef NDT_TSAN
    if (s->counting) { /* the first call reads x; each later one joins the call before */
        nd_stats st;
        nd_get_stats(&st);
        if (st.body_calls_merged != STEPS - 1)
            problem(s, "%llu calls joined without faults, not %d", (unsigned long long)st.body_calls_merged, STEPS - 1);
    }
#endif
    check_read(s, z, want, N, 0, "six replayed scopes joined", 0);
    check_read(s, x, x0, N, 0, "input x", MUST);
    world_end(&w, s);
    nd_free(x);
    nd_free(c);
}

/* Library routines: a scan fed by a map, and a weighted histogram. */
static void prog_scan_hist(sweep *s) {
    world w;
    world_begin(&w, s, "scan_hist");
    enum { N = 40, B = 5 };
    double x0[N], w0[N], cr[N], hr[B] = {0};
    fill_random(&w.rng, x0, N, 0, 1);
    fill_random(&w.rng, w0, N, -1, 1);
    nd_array *x = upload(x0, 1, (int64_t[]){N}), *wt = upload(w0, 1, (int64_t[]){N});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *c = rec(s, nd_cumsum(rec(s, nd_mul(x, nd_scalar(2.0))), 0));
    nd_array *h = rec(s, nd_histogram(x, B, 0, 1, wt));
    for (int i = 0; i < N; i++) {
        cr[i] = (i ? cr[i - 1] : 0) + 2 * x0[i];
        int b = (int)(x0[i] * B);
        hr[b < B ? b : B - 1] += w0[i];
    }
    check_read(s, c, cr, N, 1e-12, "cumsum(2x)", 0);
    check_read(s, h, hr, B, 1e-12, "weighted histogram", 0);
    check_read(s, x, x0, N, 0, "input x", MUST);
    world_end(&w, s);
    nd_free(x);
    nd_free(wt);
}

/* Library routines of the linear algebra family (LAPACK / cuSOLVER with
 * a workspace): a Cholesky factor and a solve of a batch, whose answers
 * are known exactly: A = L0 L0^T has factor L0, and A x0 = b has x0. */
static void prog_linalg(sweep *s) {
    world w;
    world_begin(&w, s, "linalg");
    enum { B = 3, N = 4 };
    double l0[B * N * N] = {0}, a0[B * N * N], x0[B * N], b0[B * N];
    fill_random(&w.rng, x0, B * N, -2, 2);
    for (int b = 0; b < B; b++) {
        double *l = l0 + b * N * N, *a = a0 + b * N * N;
        for (int i = 0; i < N; i++)
            for (int j = 0; j <= i; j++) l[i * N + j] = i == j ? 1.5 + 0.25 * i : 0.125 * (i - j) - 0.2;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < N; k++) acc += l[i * N + k] * l[j * N + k];
                a[i * N + j] = acc;
            }
        for (int i = 0; i < N; i++) {
            double acc = 0;
            for (int k = 0; k < N; k++) acc += a[i * N + k] * x0[b * N + k];
            b0[b * N + i] = acc;
        }
    }
    nd_array *a = upload(a0, 3, (int64_t[]){B, N, N}), *bb = upload(b0, 3, (int64_t[]){B, N, 1});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *l = rec(s, nd_linalg_cholesky(a));
    nd_array *x = rec(s, nd_linalg_solve(a, bb));
    check_read(s, l, l0, B * N * N, 1e-12, "cholesky(L0 L0^T)", 0);
    check_read(s, x, x0, B * N, 1e-10, "solve(A, A x0)", 0);
    check_read(s, a, a0, B * N * N, 0, "input a", MUST);
    world_end(&w, s);
    nd_free(a);
    nd_free(bb);
}

/* numpy.fft's routine (nd's own FFT on the CPU, cuFFT with a plan and a
 * workspace on CUDA) fed by a map and feeding a scale: the round trip
 * irfft(rfft(2x)) and the real part of fft(x), against sums done here. */
static void prog_fft(sweep *s) {
    world w;
    world_begin(&w, s, "fft");
    enum { N = 24 };
    double x0[N], d0[N], fr[N];
    fill_random(&w.rng, x0, N, -1, 1);
    for (int k = 0; k < N; k++) {
        d0[k] = 2 * x0[k];
        fr[k] = 0;
        for (int j = 0; j < N; j++) fr[k] += x0[j] * cos(2 * 3.14159265358979323846 * (double)(j * k % N) / N);
    }
    nd_array *x = upload(x0, 1, (int64_t[]){N});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *sp = rec(s, nd_fft_rfft(rec(s, nd_mul(x, nd_scalar(2.0))), -1, 0, ND_FFT_BACKWARD));
    nd_array *r = rec(s, nd_fft_irfft(sp, N, 0, ND_FFT_BACKWARD));
    nd_array *f = rec(s, nd_real(rec(s, nd_fft_fft(x, -1, 0, ND_FFT_BACKWARD))));
    check_read(s, r, d0, N, 1e-12, "irfft(rfft(2x))", 0);
    check_read(s, f, fr, N, 1e-12, "real(fft(x))", 0);
    check_read(s, x, x0, N, 0, "input x", MUST);
    world_end(&w, s);
    nd_free(x);
}

/* ------------------------------------------------------------ the sweep */

static int split_sweep; /* set by split_env: the sweep runs over cpu:3 */

/* Which points to fail: every one, unless ND_TEST_FAULT_STRIDE=k says every
 * k-th. On CUDA a run starts a CUDA context and a cuBLAS handle (tens of
 * milliseconds), so host allocations, hundreds of points that are nd's own
 * code and the same on both backends (swept in full on the CPU), are
 * sampled at about 40 points per program and mode there; the CUDA
 * backend's own points (device allocations, compiles, backend calls) are
 * swept in full. */
static int64_t stride(nd_fault_kind kind, int64_t points) {
    const char *e = getenv("ND_TEST_FAULT_STRIDE");
    if (e && *e) {
        int64_t k = strtoll(e, NULL, 10);
        return k < 1 ? 1 : k;
    }
    if (kind == ND_FAULT_HOST_ALLOC && ndt_backend_is_cuda()) return points / 40 + 1;
#ifdef NDT_ASAN
    /* The sweeps over three devices (the release build's several-devices
     * stage sweeps every point of every program split, checking values):
     * every other point under AddressSanitizer, where they were 25 of the
     * suite's 54 s on CI's 2-core VM. */
    if (split_sweep) return 2;
#endif
    return 1;
}

/* nd_config.device_memory_limit of the runs (0: none). */
static int64_t sweep_memory_limit;

static void fresh(void) {
    nd_fault_disarm();
    nd_config c;
    memset(&c, 0, sizeof c);
    c.device_memory_limit = sweep_memory_limit;
    ndt_restart(&c);
}

/* bytes_in_use of every memory after nd_trim, summed. */
static uint64_t bytes_held(void) {
    nd_trim();
    nd_stats st;
    nd_get_stats(&st);
    uint64_t b = 0;
    for (int m = 0; m < ND_STATS_MEMORIES; m++) b += st.bytes_in_use[m];
    return b;
}

/* Bytes in use per memory ("host 0, pinned 64, ..."), for messages. */
static const char *held_by_memory(char *text, size_t cap) {
    nd_trim();
    nd_stats st;
    nd_get_stats(&st);
    size_t len = 0;
    text[0] = '\0';
    for (int m = 0; m < ND_STATS_MEMORIES && len < cap; m++)
        len += (size_t)snprintf(text + len, cap - len, "%smemory %d: %llu", m ? ", " : "", m,
                                (unsigned long long)st.bytes_in_use[m]);
    return text;
}

static void one_run(sweep *s, void (*prog)(sweep *)) {
    fresh();
    s->run_reported = s->run_wrong = s->run_unnamed = s->record_failed = 0;
    prog(s);
    nd_fault_disarm();
    /* Nothing left in use: the program freed every array it made, and
     * nd_trim gives back what the CPU backend keeps. Memory a fault's path
     * lost stays counted. (The CUDA backend keeps its cuBLAS workspace and
     * pinned staging in use until nd_shutdown, so there this check would
     * need a baseline; nd_shutdown's own warning covers it.) */
    uint64_t held;
    if (!ndt_backend_is_cuda() && (held = bytes_held()) > 0)
        problem(s, "%llu bytes still in use after every array was freed and nd_trim", (unsigned long long)held);
    s->runs++;
    s->unnamed += s->run_unnamed;
    if (s->run_wrong) s->wrong++;
    else if (s->run_unnamed) s->reported++;
    else if (s->run_reported) s->reported++;
    else s->harmless++;
}

static const nd_fault_kind all_kinds[] = {ND_FAULT_HOST_ALLOC, ND_FAULT_DEVICE_ALLOC, ND_FAULT_COMPILE,
                                          ND_FAULT_BACKEND_CALL};

static void run_sweep(const char *name, void (*prog)(sweep *)) {
    int64_t total_wrong = 0, total_unnamed = 0;
    char first[768] = "", first_unnamed[512] = "";
    for (size_t ki = 0; ki < sizeof all_kinds / sizeof all_kinds[0]; ki++) {
        sweep s;
        memset(&s, 0, sizeof s);
        s.kind = all_kinds[ki];
        s.counting = 1;
        one_run(&s, prog);
        cr_assert(!s.run_wrong, "%s without faults: %s", name, s.problem);
        int64_t points = nd_fault_count(s.kind);
        memset(&s, 0, sizeof s);
        s.kind = all_kinds[ki];
        int64_t k = stride(s.kind, points);
        for (int64_t n = 1; n <= points; n += (n + k > points && n < points) ? points - n : k) {
            for (int p = 0; p < 2; p++) {
                s.n = n;
                s.persistent = p;
                one_run(&s, prog);
            }
        }
        /* One point past the end: nothing fails, everything is right. */
        s.n = points + 1;
        s.persistent = 0;
        one_run(&s, prog);
        fprintf(stderr, "fault sweep %-12s %-12s %4lld points: %4lld runs, %4lld harmless, %4lld reported, "
                "%lld silently wrong, %lld messages without function or cause\n", name, nd_fault_kind_name(s.kind),
                (long long)points, (long long)s.runs, (long long)s.harmless, (long long)s.reported, (long long)s.wrong,
                (long long)s.unnamed);
        total_unnamed += s.unnamed;
        if (s.unnamed && !first_unnamed[0]) snprintf(first_unnamed, sizeof first_unnamed, "%s", s.unnamed_message);
        total_wrong += s.wrong;
        if (s.wrong && !first[0]) snprintf(first, sizeof first, "%s", s.problem);
    }
    cr_expect(total_wrong == 0, "%s: %lld silently wrong runs; the first: %s", name, (long long)total_wrong, first);
    cr_expect(total_unnamed == 0, "%s: %lld runs with an error message that names no function or cause; the "
              "first: %s", name, (long long)total_unnamed, first_unnamed);
}

#undef NDT_TIMEOUT
#define NDT_TIMEOUT 600

NDT_TEST(faults, sweep_stencil) { run_sweep("stencil", prog_stencil); }
NDT_TEST(faults, sweep_matmul) { run_sweep("matmul", prog_matmul); }
NDT_TEST(faults, sweep_reductions) { run_sweep("reductions", prog_reductions); }
NDT_TEST(faults, sweep_concatenate) { run_sweep("concatenate", prog_concatenate); }
NDT_TEST(faults, sweep_overlap) { run_sweep("overlap", prog_overlap); }
NDT_TEST(faults, sweep_random) { run_sweep("random", prog_random); }
NDT_TEST(faults, sweep_user_kernel) { run_sweep("user_kernel", prog_user_kernel); }
NDT_TEST(faults, sweep_body) { run_sweep("body", prog_body); }
NDT_TEST(faults, sweep_scope_replay) { run_sweep("scope_replay", prog_scope_replay); }
NDT_TEST(faults, sweep_sorting) { run_sweep("sorting", prog_sorting); }
NDT_TEST(faults, sweep_scatter) { run_sweep("scatter", prog_scatter); }
NDT_TEST(faults, sweep_scan_hist) { run_sweep("scan_hist", prog_scan_hist); }
NDT_TEST(faults, sweep_linalg) { run_sweep("linalg", prog_linalg); }
NDT_TEST(faults, sweep_fft) { run_sweep("fft", prog_fft); }
NDT_TEST(faults, sweep_stream) {
    setenv("ND_CHUNK_BYTES", "4096", 1);
    run_sweep("stream", prog_stream);
}

/* Several devices (ND_DEVICES=cpu:3, every array split): a flush that
 * fails leaves no piece marked as holding a value it never got (a scatter
 * that did not run; a region store into pieces one of which could not be
 * made), a gather of the pieces of a failed value keeps it failed, and a
 * bad index in one device's rows fails only what is computed from it.
 * These sweeps gave values ND_OK but wrong (zeros, NaN, garbage) before.
 * CPU only: cpu:N names CPU memories (the CUDA registration of
 * test_partition runs logical GPU devices). */
static void prog_composed(sweep *s);
static void split_env(void) {
    if (ndt_backend_is_cuda()) cr_skip_test("cpu:3 names CPU memories; the backend is cuda");
    setenv("ND_DEVICES", "cpu:3", 1);
    setenv("ND_SPLIT_MIN_BYTES", "0", 1);
    split_sweep = 1;
}
NDT_TEST(faults, sweep_matmul_split) {
    split_env();
    run_sweep("matmul/3", prog_matmul);
}
NDT_TEST(faults, sweep_reductions_split) {
    split_env();
    run_sweep("reductions/3", prog_reductions);
}
NDT_TEST(faults, sweep_composed_split) {
    split_env();
    run_sweep("composed/3", prog_composed);
}

/* The sweep with flushes run on the caller's thread (ND_EXECUTOR_THREAD=0):
 * errors surface at once instead of at the next drain. */
NDT_TEST(faults, sweep_stencil_without_executor_thread) {
    setenv("ND_EXECUTOR_THREAD", "0", 1);
    run_sweep("stencil/0", prog_stencil);
}
NDT_TEST(faults, sweep_overlap_without_executor_thread) {
    setenv("ND_EXECUTOR_THREAD", "0", 1);
    run_sweep("overlap/0", prog_overlap);
}

/* A device memory limit below what the programs need (on CUDA; the CPU
 * backend has none): every value right or an error naming the cause,
 * nothing unrelated lost, the next flush works. */
NDT_TEST(faults, device_memory_limit_below_need) {
    static void (*const progs[])(sweep *) = {prog_stencil, prog_matmul, prog_reductions, prog_concatenate,
                                             prog_overlap, prog_random, prog_stream};
    static const int64_t limits[] = {4096, 16384, 65536};
    sweep s;
    memset(&s, 0, sizeof s);
    s.counting = 1;
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        sweep_memory_limit = limits[l];
        s.n = limits[l];
        for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) one_run(&s, progs[p]);
    }
    sweep_memory_limit = 0;
    fprintf(stderr, "device memory limit: %lld runs, %lld harmless, %lld reported, %lld silently wrong, %lld "
            "messages without function or cause\n", (long long)s.runs, (long long)s.harmless, (long long)s.reported,
            (long long)s.wrong, (long long)s.unnamed);
    cr_expect(s.wrong == 0 && s.unnamed == 0, "%s %s", s.problem, s.unnamed_message);
}

/* ND_FAULT, the environment's way in (scripts/fault_sweep.sh, programs
 * swept from outside): a bad value is nd_init's error; KIND:N fails the
 * N-th point after nd_init. */
NDT_TEST(faults, nd_fault_environment_variable) {
    nd_shutdown();
    setenv("ND_FAULT", "host_alloc:x", 1);
    cr_assert_eq(nd_init(NULL), ND_ERR_ARG);
    cr_assert(strstr(nd_last_error(), "ND_FAULT"), "%s", nd_last_error());
    nd_clear_error();
    setenv("ND_FAULT", "device_alloc:1", 1);
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    unsetenv("ND_FAULT");
    nd_array *x = nd_from_host(x5, ND_FLOAT64, ND_SHAPE(5));
    cr_assert_null(x, "the first backend allocation after nd_init was to fail");
    cr_assert_eq(nd_last_status(), ND_ERR_OOM);
    nd_clear_error();
    x = nd_from_host(x5, ND_FLOAT64, ND_SHAPE(5)); /* only the first */
    cr_assert(x, "%s", nd_last_error());
    cr_assert_eq(nd_fault_count(ND_FAULT_DEVICE_ALLOC), 2);
    nd_fault_disarm();
    nd_free(x);
}

/* ------------------------------------------------- focused regressions */

/* Planning fails (every host allocation from the first on fails during
 * the read's flush): the read reports it. nd_to_host used to ignore
 * nd_sync's status and read the never-written buffer as zeros. */
NDT_TEST(faults, read_after_failed_planning_reports) {
    nd_array *x = upload(x5, 1, (int64_t[]){5});
    nd_array *one = nd_scalar(1.0);
    nd_array *y = nd_add(x, one);
    cr_assert(y);
    double got[5];
    nd_fault_arm(ND_FAULT_HOST_ALLOC, 1, 1);
    nd_status st = nd_to_host(y, got, sizeof got);
    nd_fault_disarm();
    cr_assert_eq(st, ND_ERR_OOM, "nd_to_host returned %s (%s); got[0] = %g", nd_status_name(st), nd_last_error(),
                 got[0]);
    cr_assert(strstr(nd_last_error(), "nd_to_host: ") == nd_last_error(), "%s", nd_last_error());
    cr_assert(strstr(nd_last_error(), "nd_add"), "names the recording function: %s", nd_last_error());
    cr_assert(strstr(nd_last_error(), "memory"), "%s", nd_last_error());
    nd_clear_error();
    /* x was not involved: it keeps its value; the next flush works. */
    double xs[5], ys[5];
    cr_assert(nd_to_host(x, xs, sizeof xs) == ND_OK);
    cr_assert(memcmp(xs, x5, sizeof xs) == 0);
    nd_array *two = nd_scalar(2.0);
    nd_array *z = nd_mul(x, two);
    cr_assert(nd_to_host(z, ys, sizeof ys) == ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_assert_eq(ys[i], 2 * x5[i]);
    nd_free(x), nd_free(one), nd_free(y), nd_free(two), nd_free(z);
}

/* nd_flush's planning fails: the pending values are marked failed, not
 * dropped (nd_graph_clear used to drop them: a later read, with nothing
 * pending, read zeros). */
NDT_TEST(faults, flush_that_fails_to_plan_marks_its_values) {
    nd_array *x = upload(x5, 1, (int64_t[]){5});
    nd_array *ax = nd_abs(x);
    nd_array *y = nd_sqrt(ax);
    cr_assert(y);
    nd_fault_arm(ND_FAULT_HOST_ALLOC, 1, 1);
    nd_status st = nd_flush();
    st = st != ND_OK ? st : nd_sync();
    nd_fault_disarm();
    cr_assert_neq(st, ND_OK, "the flush failed to plan but returned ND_OK");
    nd_clear_error();
    double got[5];
    st = nd_to_host(y, got, sizeof got);
    cr_assert_eq(st, ND_ERR_OOM, "%s; got[0] = %g", nd_status_name(st), got[0]);
    cr_assert(strstr(nd_last_error(), "nd_sqrt"), "%s", nd_last_error());
    nd_free(x), nd_free(ax), nd_free(y);
}

/* Each single host allocation failure while recording and planning a
 * store into an array written twice before (its writer list grows) and an
 * elementwise chain with random draws (many kernel-builder allocations):
 * every value right or the failure reported. Before the fixes: nd_assign
 * returned ND_OK for a store it had not recorded (nd_graph_set_output
 * ignored nd_buffer_add_writer's failure), plan_build skipped a store whose
 * kernel ran out of memory, and one point crashed in nd_kb_try_merge. */
static void prog_small_store(sweep *s) {
    world w;
    world_begin(&w, s, "small_store");
    nd_array *x = upload(x5, 1, (int64_t[]){5});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    rec_status(s, nd_assign(rec(s, nd_view(x, "0:2")), nd_scalar(7.0)));
    rec_status(s, nd_assign(rec(s, nd_view(x, "2:4")), nd_scalar(8.0)));
    rec_status(s, nd_assign(rec(s, nd_view(x, "4:")), nd_scalar(9.0)));
    nd_random_seed(3);
    nd_array *r = rec(s, nd_random_uniform(ND_FLOAT64, ND_SHAPE(5), 0.0, 1.0));
    nd_array *t = rec(s, nd_add(rec(s, nd_mul(x, r)), rec(s, nd_exp(r))));
    double want[5] = {7, 7, 8, 8, 9}, rt[5];
    for (int i = 0; i < 5; i++) {
        double u = nd_philox_uniform_f64(3, 0, (uint64_t)i);
        rt[i] = want[i] * u + exp(u);
    }
    check_read(s, x, want, 5, 0, "x after three stores", AFTER_STORES);
    check_read(s, t, rt, 5, 1e-14, "x * r + exp(r)", AFTER_STORES);
    world_end(&w, s);
    nd_free(x);
}

NDT_TEST(faults, small_store_every_host_allocation) { run_sweep("small_store", prog_small_store); }

/* One step of a flush fails (the allocation of z's memory): x += 1 and
 * w = x * 3 in the same flush do not depend on it and get their values;
 * z reports the error. (Every later output used to be marked failed, x's
 * old value lost with it.) A step fused with the failing one into one
 * kernel (same iteration space) fails with it: z has another shape here. */
NDT_TEST(faults, unrelated_step_failure_spares_other_outputs) {
    nd_array *x = upload(x5, 1, (int64_t[]){5});
    nd_array *a = upload(x5, 1, (int64_t[]){5});
    /* Both where the backend computes (CUDA: copied to the device), so
     * that z's memory is the flush's only allocation before w's. */
    nd_array *warm = nd_add(x, a);
    cr_assert(nd_sync() == ND_OK);
    nd_free(warm);
    nd_array *a03 = nd_view(a, "0:3"), *a14 = nd_view(a, "1:4");
    nd_array *z = nd_mul(a03, a14); /* (3,): a kernel of its own */
    nd_array *one = nd_scalar(1.0), *x1 = nd_add(x, one);
    cr_assert(nd_assign(x, x1) == ND_OK);
    nd_array *three = nd_scalar(3.0);
    nd_array *w = nd_mul(x, three);
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 0); /* z's memory: the flush's first allocation */
    nd_status st = nd_sync();
    int64_t failed = nd_fault_failed();
    nd_fault_disarm();
    cr_assert_eq(failed, 1);
    nd_clear_error();
    double got[5];
    nd_status zs = nd_to_host(z, got, 3 * sizeof *got);
    if (!ndt_backend_is_cuda()) {
        /* (CUDA binds a whole plan first; when that fails it runs the
         * steps one by one, and z's allocation, tried again, succeeds.) */
        cr_assert_eq(st, ND_ERR_OOM, "%s", nd_status_name(st));
        cr_assert_eq(zs, ND_ERR_OOM);
    }
    if (zs != ND_OK) {
        cr_assert(strstr(nd_last_error(), "nd_mul"), "%s", nd_last_error());
    } else {
        for (int i = 0; i < 3; i++) cr_assert_eq(got[i], x5[i] * x5[i + 1]);
    }
    nd_clear_error();
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_OK, "x: %s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_assert_eq(got[i], x5[i] + 1.0);
    cr_assert_eq(nd_to_host(w, got, sizeof got), ND_OK, "w: %s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_assert_eq(got[i], (x5[i] + 1.0) * 3.0);
    nd_free(x), nd_free(a), nd_free(z), nd_free(w);
    nd_free(a03), nd_free(a14), nd_free(one), nd_free(x1), nd_free(three);
}

/* A failed array stays failed until a write of all of it: a region store
 * leaves it failed (the rest has no value), values computed from it fail
 * with its cause, and nd_fill of the whole array makes it right again. */
NDT_TEST(faults, failed_array_stays_failed_until_rewritten) {
    nd_array *a = upload(x5, 1, (int64_t[]){5});
    cr_assert(nd_sync() == ND_OK);
    nd_array *x = nd_add(a, a);
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 1); /* every one: x gets no memory */
    (void)nd_sync();
    nd_fault_disarm();
    nd_clear_error();
    double got[5];
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_ERR_OOM);
    nd_clear_error();
    nd_array *x13 = nd_view(x, "1:3"), *four = nd_scalar(4.0);
    cr_assert(nd_assign(x13, four) == ND_OK);
    nd_array *two = nd_scalar(2.0);
    nd_array *y = nd_mul(x, two);
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_ERR_OOM, "a region store left x readable");
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_ERR_OOM, "y computed from failed x was readable");
    /* The cause is the first failure's: host memory on the CPU backend,
     * device memory on CUDA. */
    cr_assert(strstr(nd_last_error(), ndt_backend_is_cuda() ? "out of device memory" : "out of host memory"),
              "%s", nd_last_error());
    nd_clear_error();
    cr_assert(nd_fill(x, 6.0) == ND_OK);
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 6.0);
    nd_array *two_again = nd_scalar(2.0);
    nd_array *y2 = nd_mul(x, two_again);
    cr_assert_eq(nd_to_host(y2, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 12.0);
    nd_free(a), nd_free(x), nd_free(y), nd_free(y2);
    nd_free(x13), nd_free(four), nd_free(two), nd_free(two_again);
}

/* A lazy 512 GiB array: recording succeeds; the read fails, naming the
 * reading function, the array (shape, dtype, its creation), the cause with
 * the size and what to do. */
NDT_TEST(faults, huge_lazy_array_names_its_creation) {
    nd_array *z = nd_zeros(ND_FLOAT64, ND_SHAPE((int64_t)1 << 18, (int64_t)1 << 18));
    cr_assert(z, "recording is lazy: %s", nd_last_error());
    nd_array *e = nd_view(z, "3, 4:6");
    double got[2];
#ifdef NDT_ASAN
    /* AddressSanitizer aborts on a 512 GiB host request rather than fail
     * it (allocator_may_return_null=0): fail it by injection instead. */
    if (!ndt_backend_is_cuda()) nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 1);
#endif
    nd_status st = nd_to_host(e, got, sizeof got);
    nd_fault_disarm();
    cr_assert_eq(st, ND_ERR_OOM, "%s", nd_status_name(st));
    const char *m = nd_last_error();
    cr_assert(strstr(m, "nd_to_host: ") == m, "%s", m);
    cr_assert(strstr(m, "nd_zeros"), "names the creation: %s", m);
    cr_assert(strstr(m, "(2,) float64"), "names the array read: %s", m);
    cr_assert(strstr(m, "512 GiB"), "names the size: %s", m);
    cr_assert(strstr(m, "free arrays you no longer need"), "says what to do: %s", m);
    nd_clear_error();
    nd_array *first = nd_view(z, "0, 0");
    cr_assert(isnan(nd_item(first)));
    cr_assert(strstr(nd_last_error(), "nd_item: ") == nd_last_error(), "%s", nd_last_error());
    nd_clear_error();
    nd_free(first);
    nd_free(e);
    nd_free(z);
}

/* On CUDA, an array larger than the GPU's free memory fails to allocate
 * and the failed request leaves nothing behind: nd's pool holds no more
 * than its live arrays use (under a split, the piece that did fit belongs
 * to the failed array until it is freed), and after nd_free and nd_trim
 * it holds nothing. (A stream-ordered pool asked for
 * more than is free first maps every free byte, and kept them reserved
 * after the failure: other processes sharing the GPU ran out.) */
NDT_TEST(faults, allocation_beyond_free_memory_holds_nothing) {
    if (!ndt_backend_is_cuda()) cr_skip_test("CUDA only: the CPU backend's allocations are the C library's");
    /* 1.25x the free memory of the GPUs nd uses (split over several, each
     * holds its rows): beyond it, within what the pools try to map */
    uint64_t free_bytes = 0;
    for (int d = 0; d < nd_device_count(); d++) {
        nd_device_info info;
        cr_assert_eq(nd_get_device_info(d, &info), ND_OK, "%s", nd_last_error());
        if (info.used_by_nd) free_bytes += info.free_memory;
    }
    int64_t n = (int64_t)(free_bytes / 8 / 4 * 5);
    nd_array *z = nd_full(ND_FLOAT64, ND_SHAPE(n), 2.5);
    nd_array *first = nd_view(z, "0");
    cr_assert(isnan(nd_item(first)), "an array of %lld float64 cannot fit", (long long)n);
    cr_assert(strstr(nd_last_error(), "out of device memory"), "%s", nd_last_error());
    nd_clear_error();
    const uint64_t slack = (uint64_t)1 << 30;
    for (int d = 0; d < nd_device_count(); d++) {
        nd_device_info after;
        cr_assert_eq(nd_get_device_info(d, &after), ND_OK, "%s", nd_last_error());
        cr_assert(after.nd_bytes_reserved < after.nd_bytes_in_use + slack,
                  "GPU %d: nd's pool holds %llu bytes after the failure, its arrays use %llu", d,
                  (unsigned long long)after.nd_bytes_reserved, (unsigned long long)after.nd_bytes_in_use);
    }
    nd_free(first), nd_free(z);
    nd_trim();
    for (int d = 0; d < nd_device_count(); d++) {
        nd_device_info after;
        cr_assert_eq(nd_get_device_info(d, &after), ND_OK, "%s", nd_last_error());
        cr_assert(after.nd_bytes_reserved < slack, "GPU %d: nd's pool holds %llu bytes after nd_free and nd_trim",
                  d, (unsigned long long)after.nd_bytes_reserved);
    }
    /* The GPU's free memory is not compared with `before`: other processes
     * sharing the GPU (the suites run four at a time) change it. The pool's
     * reserve above is this process's share of it. */
    /* and the next array of a size that fits is computed */
    nd_array *small = nd_full(ND_FLOAT64, ND_SHAPE(1000), 2.5);
    nd_array *total = nd_sum(small, ND_ALL_AXES);
    cr_assert_eq(nd_item(total), 2500.0, "%s", nd_last_error());
    nd_free(total), nd_free(small);
}

/* Out of memory, the executor gives its cached temporaries back and tries
 * once more before failing (a single failed allocation then costs
 * nothing). */
static void releases_cached_temporaries(void) {
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = i * 0.5 - 3;
    nd_array *x = upload(v, 1, (int64_t[]){64});
    /* x[1:] = x[:-1] computes its right-hand side into a temporary, which
     * goes to the executor's pool afterwards. */
    nd_array *dst = nd_view(x, "1:"), *src = nd_view(x, ":-1");
    cr_assert(nd_assign(dst, src) == ND_OK);
    cr_assert(nd_sync() == ND_OK, "%s", nd_last_error());
    nd_array *y = nd_add(x, x);
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 0);
    nd_status st = nd_sync();
    int64_t failed = nd_fault_failed();
    nd_fault_disarm();
    cr_assert_eq(failed, 1);
    cr_assert_eq(st, ND_OK, "%s", nd_last_error());
    double got[64];
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 64; i++) cr_assert_eq(got[i], 2 * (i ? v[i - 1] : v[0]));
    nd_free(x), nd_free(y), nd_free(dst), nd_free(src);
}
NDT_TEST(faults, out_of_memory_releases_cached_temporaries) { releases_cached_temporaries(); }
/* The same for the pieces of split arrays (they were allocated without
 * the retry: the flush failed). */
NDT_TEST(faults, out_of_memory_releases_cached_temporaries_split) {
    split_env();
    ndt_restart(NULL);
    releases_cached_temporaries();
}

/* A flush nd starts on its own (early, or at max_pending) runs inside some
 * other call whose caller does not look at it. Its error must still come
 * out of the next nd_sync: a loop of in-place sweeps flushes early every
 * few sweeps, and the first early flush fails its first backend call. */
NDT_TEST(faults, error_of_an_early_flush_reaches_nd_sync) {
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = (double)i * 0.25;
    nd_array *g = upload(v, 2, (int64_t[]){8, 8});
    cr_assert(nd_sync() == ND_OK);
    nd_fault_arm(ND_FAULT_BACKEND_CALL, 1, 0);
    for (int sweep = 0; sweep < 40; sweep++) {
        nd_scope_begin();
        nd_array *in = nd_view(g, "1:-1, 1:-1");
        nd_array *s = nd_add(nd_add(nd_view(g, ":-2, 1:-1"), nd_view(g, "2:, 1:-1")),
                             nd_add(nd_view(g, "1:-1, :-2"), nd_view(g, "1:-1, 2:")));
        cr_assert(nd_assign(in, nd_mul(nd_add(in, s), nd_scalar(0.2))) == ND_OK, "%s", nd_last_error());
        nd_scope_end();
    }
    nd_status st = nd_sync();
    int64_t failed = nd_fault_failed();
    nd_fault_disarm();
    cr_assert_eq(failed, 1);
    cr_assert_neq(st, ND_OK, "nd_sync returned ND_OK after a failed early flush");
    cr_assert(strstr(nd_last_error(), "injected fault"), "%s", nd_last_error());
    /* g depends on the failed sweep: its read reports it too. */
    nd_clear_error();
    cr_assert_neq(nd_to_host(g, v, sizeof v), ND_OK);
    /* The error was returned once: the next nd_sync is clean. */
    nd_clear_error();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(g);
}

/* Functions composed from several nodes and views (matrix and grid
 * creation, view shaping): a fault while one records its pieces gives NULL
 * (or an error status) and leaks nothing; one while it runs is reported
 * when a result is read. */
static void prog_composed(sweep *s) {
    world w;
    world_begin(&w, s, "composed");
    double x0[12];
    fill_random(&w.rng, x0, 12, -2, 2);
    nd_array *x = upload(x0, 2, (int64_t[]){3, 4});
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *lo = rec(s, nd_tril(x, 0));
    nd_array *g = rec(s, nd_geomspace(ND_FLOAT64, 1, 1000, 4));
    nd_array *in[2] = {g, g ? rec(s, nd_flip(g, 0)) : NULL}, *grid[2] = {NULL, NULL};
    rec_status(s, nd_meshgrid(2, in, "ij", grid));
    nd_array *sum = rec(s, nd_add(grid[0], grid[1]));
    nd_array *d = rec(s, nd_diag(rec(s, nd_diagonal(x, 1, 0, 1)), 0));
    nd_array *t = rec(s, nd_trace(x));
    nd_array *ind = rec(s, nd_indices(ND_FLOAT64, ND_SHAPE(2, 3)));
    double lor[12], gr[4] = {1, 10, 100, 1000}, sumr[16], dr[9] = {0}, tr, indr[12];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) lor[i * 4 + j] = j <= i ? x0[i * 4 + j] : 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) sumr[i * 4 + j] = gr[i] + gr[3 - j];
    for (int i = 0; i < 3; i++) dr[i * 4] = x0[i * 5 + 1];
    tr = x0[0] + x0[5] + x0[10];
    for (int k = 0; k < 12; k++) indr[k] = k < 6 ? k / 3 : k % 3;
    check_read(s, lo, lor, 12, 0, "tril(x)", 0);
    check_read(s, g, gr, 4, 1e-15, "geomspace(1, 1000, 4)", 0);
    check_read(s, sum, sumr, 16, 1e-15, "meshgrid(g, flip(g)) summed", 0);
    check_read(s, d, dr, 9, 0, "diag(diagonal(x, 1))", 0);
    check_read(s, t, &tr, 1, 1e-15, "trace(x)", 0);
    check_read(s, ind, indr, 12, 0, "indices((2,3))", 0);
    check_read(s, x, x0, 12, 0, "x (only read)", MUST);
    world_end(&w, s);
    nd_free(x);
}

NDT_TEST(faults, sweep_composed) { run_sweep("composed", prog_composed); }

/* Gathers, a scatter into an existing array and a mask selection (which
 * synchronises inside the call): each read is its value or an error naming
 * its cause; the array scattered into keeps its old value only where the
 * store was refused at the call. */
static void prog_indexing(sweep *s) {
    world w;
    world_begin(&w, s, "indexing");
    double x0[12], acc0[4] = {1, 2, 3, 4};
    fill_random(&w.rng, x0, 12, -2, 2);
    nd_array *x = upload(x0, 2, (int64_t[]){3, 4});
    nd_array *acc = upload(acc0, 1, (int64_t[]){4});
    const int64_t iv[5] = {2, -1, 0, 2, 1};
    nd_array *idx = nd_from_host(iv, ND_INT64, ND_SHAPE(5));
    cr_assert(idx && nd_sync() == ND_OK);
    nd_scope_begin();
    arm(s);
    nd_array *t = rec(s, nd_take(x, idx, 1));                 /* (3, 5) */
    nd_array *tm = rec(s, nd_mul(t, nd_scalar(2)));
    rec_status(s, nd_add_at(acc, idx, nd_scalar(0.5)));        /* acc[2] += 1, acc[3] += .5, ... */
    nd_array *sel = rec(s, nd_mask_select(x, rec(s, nd_gt(x, nd_scalar(0)))));
    double tr[15], tmr[15], accr[4] = {1.5, 2.5, 4, 4.5}, selr[12];
    int64_t ns = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 5; k++) {
            int64_t j = iv[k] < 0 ? iv[k] + 4 : iv[k];
            tr[i * 5 + k] = x0[i * 4 + j];
            tmr[i * 5 + k] = 2 * x0[i * 4 + j];
        }
    for (int i = 0; i < 12; i++)
        if (x0[i] > 0) selr[ns++] = x0[i];
    check_read(s, t, tr, 15, 0, "take(x, idx, 1)", 0);
    check_read(s, tm, tmr, 15, 0, "take(x, idx, 1) * 2", 0);
    check_read(s, acc, accr, 4, 0, "add_at(acc, idx, 0.5)", AFTER_STORES);
    if (sel && nd_shape(sel)[0] != ns) problem(s, "x[x > 0]: %lld elements, want %lld", (long long)nd_shape(sel)[0],
                                               (long long)ns);
    else if (sel) check_read(s, sel, selr, ns, 0, "x[x > 0]", 0);
    check_read(s, x, x0, 12, 0, "x (only read)", MUST);
    world_end(&w, s);
    nd_free(x);
    nd_free(acc);
    nd_free(idx);
}

NDT_TEST(faults, sweep_indexing) { run_sweep("indexing", prog_indexing); }

/* A handle made while its scope's stack cannot grow (its host allocation
 * fails) is still the scope's: the call succeeds, the scope's end frees
 * it, and nd_keep moves it to the next scope out. It used to stay alive,
 * untracked, until nd_shutdown: the sweeps' check that nothing stays in
 * use after a run found it (14 sweeps). The stack's first handle grows it
 * (from nothing), the last host allocation of that call. */
NDT_TEST(faults, scope_stack_that_cannot_grow_keeps_its_handles) {
    for (int keep = 0; keep < 2; keep++) {
        /* how many host allocations the first tracked call makes (a fresh
         * runtime: its scope stack has no room yet) */
        ndt_restart(NULL);
        nd_array *x = nd_full(ND_FLOAT64, ND_SHAPE(1000), 1.5);
        cr_assert(nd_sync() == ND_OK, "%s", nd_last_error());
        nd_scope_begin();
        nd_fault_arm(ND_FAULT_HOST_ALLOC, 0, 0);
        nd_array *probe = nd_add(x, x);
        const int64_t points = nd_fault_count(ND_FAULT_HOST_ALLOC);
        nd_fault_disarm();
        cr_assert(probe, "%s", nd_last_error());
        nd_scope_end();
        nd_free(x); /* (the restart below would drop it too, reported as alive) */
        /* again, its last host allocation (the stack's growth) failing */
        ndt_restart(NULL);
        x = nd_full(ND_FLOAT64, ND_SHAPE(1000), 1.5);
        cr_assert(nd_sync() == ND_OK, "%s", nd_last_error());
        /* a first read of each end, so that what a backend keeps for reads
         * (CUDA's pinned staging, one per GPU: split over two GPUs, y's
         * last element is read from the second) is in the baseline */
        for (int end = 0; end < 2; end++) {
            nd_array *x0 = nd_view(x, end ? "999" : "0");
            cr_assert_eq(nd_item(x0), 1.5, "%s", nd_last_error());
            nd_free(x0);
        }
        const uint64_t base = bytes_held();
        char base_text[200], now_text[200];
        held_by_memory(base_text, sizeof base_text);
        nd_scope_begin(); /* the outer scope (keep = 1) */
        nd_scope_begin();
        nd_fault_arm(ND_FAULT_HOST_ALLOC, points, 0);
        nd_array *y = nd_add(x, x);
        const int64_t failed = nd_fault_failed();
        nd_fault_disarm();
        cr_assert_eq(failed, 1, "the %lld-th host allocation did not fail", (long long)points);
        cr_assert(y, "the stack's growth is not the call's business: %s", nd_last_error());
        cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_item(nd_view(y, "999")), 3.0, "%s", nd_last_error());
        cr_assert_gt(bytes_held(), base, "y's memory is in use while its scope is open");
        if (keep) cr_assert_eq(nd_keep(y), y);
        nd_scope_end();
        if (keep) {
            cr_assert_eq(nd_item(nd_view(y, "0")), 3.0, "kept into the outer scope: %s", nd_last_error());
            cr_assert_gt(bytes_held(), base, "kept: still in use after the inner scope");
        }
        nd_scope_end();
        cr_assert_eq(bytes_held(), base, "%s: y's memory still in use after its scope closed (before: %s; now: %s)",
                     keep ? "kept" : "not kept", base_text, held_by_memory(now_text, sizeof now_text));
        nd_free(x);
    }
}

/* A planning pass short of host memory skips its work (fusion, the
 * shared-operand saving, the rows of collapsed kernels): the plan is right
 * but slower. It runs once and is not cached; it used to stay in the plan
 * cache, so one failed allocation left every later flush of that shape
 * unfused (here 9 values written to memory a sync instead of 1: the kernel
 * merge still makes one kernel of them). Each host allocation of the
 * first flush on a fresh runtime fails in turn; the next flush of the same
 * program must write as few values as an unfaulted one, with the right
 * values. */
static void record_chain(nd_array *out, nd_array *x) {
    nd_scope_begin();
    nd_array *t = nd_mul(x, nd_scalar(1.5));
    t = nd_add(t, x);
    t = nd_sin(t);
    t = nd_mul(t, t);
    t = nd_sub(t, nd_scalar(0.25));
    t = nd_exp(t);
    t = nd_add(t, x);
    t = nd_sqrt(nd_abs(t));
    cr_assert_eq(nd_assign(out, t), ND_OK, "%s", nd_last_error());
    nd_scope_end();
}

static double chain_ref(double x) {
    double t = x * 1.5 + x;
    t = sin(t);
    t = t * t - 0.25;
    return sqrt(fabs(exp(t) + x));
}

/* Records the chain on fresh arrays, syncs (a host allocation fault armed
 * at `n` for the sync: 0 none) and returns the values the sync wrote to
 * memory; with check, the values against chain_ref. */
static uint64_t chain_run(const double *v, int64_t n_elems, int64_t n, int check) {
    nd_array *x = upload(v, 1, &n_elems);
    nd_array *out = nd_zeros(ND_FLOAT64, 1, &n_elems);
    cr_assert(out && nd_sync() == ND_OK, "%s", nd_last_error());
    record_chain(out, x);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    if (n > 0) nd_fault_arm(ND_FAULT_HOST_ALLOC, n, 0);
    (void)nd_sync();
    nd_fault_disarm();
    nd_clear_error();
    nd_get_stats(&s1);
    if (check) {
        double got[64];
        cr_assert_eq(nd_to_host(out, got, sizeof got), ND_OK, "%s", nd_last_error());
        for (int64_t i = 0; i < n_elems; i++)
            cr_assert(fabs(got[i] - chain_ref(v[i])) <= 1e-12 * (1 + fabs(chain_ref(v[i]))), "element %lld: %.17g, "
                      "want %.17g", (long long)i, got[i], chain_ref(v[i]));
    }
    nd_free(out);
    nd_free(x);
    return s1.values_materialised - s0.values_materialised;
}

NDT_TEST(faults, plan_built_short_of_memory_is_not_cached) {
    NDT_RNG(r);
    double v[64];
    const int64_t n_elems = 64;
    fill_random(&r, v, n_elems, -2, 2);
    fresh();
    const uint64_t want = chain_run(v, n_elems, 0, 1);
    /* the host allocations of a first flush: planning and running it */
    fresh();
    nd_array *x = upload(v, 1, &n_elems);
    nd_array *out = nd_zeros(ND_FLOAT64, 1, &n_elems);
    cr_assert(out && nd_sync() == ND_OK, "%s", nd_last_error());
    record_chain(out, x);
    nd_fault_arm(ND_FAULT_HOST_ALLOC, 0, 0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    const int64_t points = nd_fault_count(ND_FAULT_HOST_ALLOC);
    nd_fault_disarm();
    nd_free(out);
    nd_free(x);
    cr_assert_gt(points, 10, "the first flush made %lld host allocations", (long long)points);
    int degraded_seen = 0;
    for (int64_t n = 1; n <= points; n++) {
        fresh();
        uint64_t first = chain_run(v, n_elems, n, 0);
        degraded_seen |= first > want;
        uint64_t next = chain_run(v, n_elems, 0, 1);
        cr_expect_eq(next, want, "host allocation %lld of the first flush failing: the next flush of the same "
                     "program wrote %llu values to memory, an unfaulted one %llu", (long long)n,
                     (unsigned long long)next, (unsigned long long)want);
    }
    /* The sweep reached a pass that skips its work (else it proves nothing). */
    cr_expect(degraded_seen, "no fault point of %lld made a slower first flush", (long long)points);
}

/* ND_FAULT_TRACE=1: a failed point prints its kind, its number and its
 * call stack on stderr; unset, it prints nothing. */
static void failed_point_stderr(const char *trace, char *out, size_t cap) {
    if (trace) setenv("ND_FAULT_TRACE", trace, 1);
    else unsetenv("ND_FAULT_TRACE");
    FILE *tmp = tmpfile();
    cr_assert(tmp);
    fflush(stderr);
    int saved = dup(2);
    cr_assert(saved >= 0 && dup2(fileno(tmp), 2) >= 0);
    nd_fault_arm(ND_FAULT_HOST_ALLOC, 2, 0);
    void *a = nd_malloc(16), *b = nd_malloc(16), *c = nd_malloc(16);
    nd_fault_disarm();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("ND_FAULT_TRACE");
    cr_assert(a && !b && c, "the second host allocation should fail, and only it");
    free(a);
    free(c);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

NDT_TEST(faults, trace_prints_the_failed_points_stack) {
    char text[8192];
    failed_point_stderr("1", text, sizeof text);
    cr_expect(strstr(text, "nd fault: host_alloc point 2 failed (injected); its call stack:\n"), "%s", text);
    cr_expect(!strstr(text, "point 1 ") && !strstr(text, "point 3 "), "only the failed point: %s", text);
    /* glibc's frame lines: "binary(function+offset)[address]" */
    cr_expect(strstr(text, ")[0x"), "no stack frame: %s", text);
    failed_point_stderr(NULL, text, sizeof text);
    cr_expect_eq(text[0], '\0', "ND_FAULT_TRACE unset, yet: %s", text);
}
