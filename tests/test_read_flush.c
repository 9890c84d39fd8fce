/* A read flushes what it reads (graph/read_split.h), and a value several
 * kernels would compute, one a library call's operand, is written once
 * (scheduler/shared_values.c): counted through nd_get_stats so that
 * neither can regress silently, and checked against float64 references,
 * also when the inputs are written in place after the read. */
#include <float.h>
#include <math.h>

#include "common.h"

#define N 4096

typedef struct {
    uint64_t values, kernels, libs, dropped;
    double peak;
} counts;

static void snap(nd_stats *s) { nd_get_stats(s); }

static counts since(const nd_stats *a) {
    nd_stats b;
    nd_get_stats(&b);
    return (counts){b.values_materialised - a->values_materialised, NDT_KERNELS(b) - NDT_KERNELS(*a),
                    b.library_calls - a->library_calls, b.nodes_dropped - a->nodes_dropped, 0};
}

/* One flush per read: the counts are those of the read's own flush. */
static void restart_without_early_flushes(void) {
    nd_config cfg = {0};
    cfg.early_flush = -1;
    ndt_restart(&cfg);
}

static nd_array *upload(const double *v, int64_t n) { return nd_from_host(v, ND_FLOAT64, ND_SHAPE(n)); }

static void fill(ndt_rng *r, double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = ndt_uniform(r, -2, 2);
}

/* z = sin(x*y) + cos(x), w = exp(-y^2) * sqrt(|x*y|): twelve named values. */
static double ref_z(double x, double y) { return sin(x * y) + cos(x); }
static double ref_w(double x, double y) { return exp(-(y * y)) * sqrt(fabs(x * y)); }

static nd_array *sum_of_z_plus_w(nd_array *x, nd_array *y, nd_array **z_out, nd_array **w_out) {
    nd_array *a = nd_mul(x, y);
    nd_array *z = nd_add(nd_sin(a), nd_cos(x));
    nd_array *w = nd_mul(nd_exp(nd_neg(nd_square(y))), nd_sqrt(nd_abs(a)));
    if (z_out) *z_out = z;
    if (w_out) *w_out = w;
    return nd_sum(nd_add(z, w), ND_ALL_AXES);
}

static double ref_sum(const double *x, const double *y, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += ref_z(x[i], y[i]) + ref_w(x[i], y[i]);
    return s;
}

/* The read inside the scope that owns z, w and their temporaries writes
 * what the read after nd_keep + nd_scope_end writes: the sum alone. Before,
 * every named value went to memory (12 values instead of 1). */
NDT_TEST(read_flush, in_scope_read_writes_what_the_kept_read_writes) {
    restart_without_early_flushes();
    NDT_RNG(r);
    static double xs[N], ys[N];
    fill(&r, xs, N);
    fill(&r, ys, N);
    nd_array *x = upload(xs, N), *y = upload(ys, N);
    cr_assert(nd_sync() == ND_OK);
    double want = ref_sum(xs, ys, N);

    nd_stats s0;
    snap(&s0);
    nd_scope_begin();
    nd_array *s = nd_keep(sum_of_z_plus_w(x, y, NULL, NULL));
    nd_scope_end();
    double kept = nd_item(s);
    counts ck = since(&s0);
    nd_free(s);

    snap(&s0);
    nd_scope_begin();
    double in_scope = nd_item(sum_of_z_plus_w(x, y, NULL, NULL));
    counts ci = since(&s0);
    /* From before the scope closes: its dead recipes are dropped as
     * their handles go (graph.h, nd_graph_drop_dead), the rest by the
     * flush. */
    snap(&s0);
    nd_scope_end();
    cr_assert(nd_sync() == ND_OK);
    counts after = since(&s0);

    cr_expect(fabs(kept - want) <= 1e-9 * fabs(want), "kept %.17g, want %.17g", kept, want);
    if (ndt_one_device("the two reads' bits: split, they agree to rounding (on CUDA under 0,0 "
                       "they differed by one ulp; cpu:3 gives the same bits)"))
        cr_expect(in_scope == kept, "in scope %.17g, kept %.17g", in_scope, kept);
    else
        cr_expect(fabs(in_scope - kept) <= 4 * DBL_EPSILON * fabs(kept), "in scope %.17g, kept %.17g", in_scope, kept);
    cr_expect_eq(ck.values, 1, "the kept read wrote %llu values", (unsigned long long)ck.values);
    cr_expect_eq(ci.values, ck.values, "the in-scope read wrote %llu values, the kept one %llu",
                 (unsigned long long)ci.values, (unsigned long long)ck.values);
    cr_expect_eq(ci.kernels, ck.kernels, "kernels: in scope %llu, kept %llu", (unsigned long long)ci.kernels,
                 (unsigned long long)ck.kernels);
    /* The recipes left pending died with the scope: dropped, never run. */
    cr_expect_eq(after.kernels, 0, "the scope's dead recipes ran %llu kernels", (unsigned long long)after.kernels);
    cr_expect_eq(after.values, 0);
    cr_expect_geq(after.dropped, 10, "dropped %llu", (unsigned long long)after.dropped);
    nd_free(x);
    nd_free(y);
}

/* nd's bytes in use and their peak, every memory. */
static uint64_t all_memories(const uint64_t *v) {
    uint64_t t = 0;
    for (int m = 0; m < ND_STATS_MEMORIES; m++) t += v[m];
    return t;
}

/* Memory: the in-scope read allocates no more than the kept one (before,
 * every named value was an N-element buffer). */
NDT_TEST(read_flush, in_scope_read_allocates_what_the_kept_read_allocates) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { M = 1 << 16 };
    static double xs[M], ys[M];
    fill(&r, xs, M);
    fill(&r, ys, M);
    nd_array *x = upload(xs, M), *y = upload(ys, M);
    cr_assert(nd_sync() == ND_OK);
    nd_stats s;
    nd_reset_peak();
    nd_get_stats(&s);
    uint64_t base = all_memories(s.bytes_in_use);
    nd_scope_begin();
    nd_array *k = nd_keep(sum_of_z_plus_w(x, y, NULL, NULL));
    nd_scope_end();
    (void)nd_item(k);
    nd_free(k);
    nd_get_stats(&s);
    uint64_t kept_peak = all_memories(s.bytes_peak) - base;
    nd_trim();
    nd_reset_peak();
    nd_get_stats(&s);
    base = all_memories(s.bytes_in_use);
    nd_scope_begin();
    (void)nd_item(sum_of_z_plus_w(x, y, NULL, NULL));
    nd_get_stats(&s);
    nd_scope_end();
    uint64_t in_scope_peak = all_memories(s.bytes_peak) - base;
    cr_expect(in_scope_peak <= kept_peak + kept_peak / 10 + 4096,
              "peak above the inputs: in scope %llu bytes, kept %llu (one value is %d bytes)",
              (unsigned long long)in_scope_peak, (unsigned long long)kept_peak, M * 8);
    nd_free(x);
    nd_free(y);
}

/* A value left pending as a recipe reads the versions it read when it was
 * recorded: in-place writes of its inputs after the read, nd_assign into a
 * view, and a store whose flush runs first do not change it. */
NDT_TEST(read_flush, recipes_keep_the_versions_they_read) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { M = 1000 };
    static double xs[M], ys[M], got[M];
    fill(&r, xs, M);
    fill(&r, ys, M);
    nd_array *x = upload(xs, M), *y = upload(ys, M);
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    nd_array *z, *w;
    double s = nd_item(sum_of_z_plus_w(x, y, &z, &w));
    cr_expect(fabs(s - ref_sum(xs, ys, M)) <= 1e-9 * fabs(s));
    /* x += 1 in place, y[10:20] = 0, then read x (its flush runs the
     * writes; z and w read the old x and y, so they run first). */
    cr_assert(nd_assign(x, nd_add(x, nd_scalar(1.0))) == ND_OK);
    nd_array *y10 = nd_view(y, "10:20");
    cr_assert(nd_fill(y10, 0.0) == ND_OK);
    cr_assert(nd_to_host(x, got, sizeof got) == ND_OK);
    for (int i = 0; i < M; i++) cr_expect(got[i] == xs[i] + 1.0, "x[%d]", i);
    cr_assert(nd_to_host(z, got, sizeof got) == ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++)
        cr_expect(fabs(got[i] - ref_z(xs[i], ys[i])) <= 1e-12, "z[%d] = %.17g, want %.17g (old x, old y)", i, got[i],
                  ref_z(xs[i], ys[i]));
    cr_assert(nd_to_host(w, got, sizeof got) == ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++)
        cr_expect(fabs(got[i] - ref_w(xs[i], ys[i])) <= 1e-12, "w[%d] = %.17g, want %.17g", i, got[i],
                  ref_w(xs[i], ys[i]));
    nd_scope_end();
    nd_free(x);
    nd_free(y);
}

/* A recipe still pending when its input is overwritten by a later flush
 * (a read that does not need the recipe): it runs in that flush, before
 * the write. */
NDT_TEST(read_flush, a_write_in_a_later_read_runs_the_recipes_that_read_the_old_version) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { M = 777 };
    static double xs[M], got[M];
    fill(&r, xs, M);
    nd_array *x = upload(xs, M);
    cr_assert(nd_sync() == ND_OK);
    nd_scope_begin();
    nd_array *z = nd_mul(x, nd_scalar(3.0));
    nd_array *q = nd_exp(z); /* stays pending: nothing reads it yet */
    double s = nd_item(nd_sum(z, ND_ALL_AXES));
    double want = 0;
    for (int i = 0; i < M; i++) want += 3.0 * xs[i];
    cr_expect(fabs(s - want) <= 1e-9 * (fabs(want) + 1));
    /* x[...] = -x: this read's flush overwrites x, which z and q read. */
    cr_assert(nd_assign(x, nd_neg(x)) == ND_OK);
    double s2 = nd_item(nd_sum(x, ND_ALL_AXES));
    double want2 = 0;
    for (int i = 0; i < M; i++) want2 -= xs[i];
    cr_expect(fabs(s2 - want2) <= 1e-9 * (fabs(want2) + 1));
    cr_assert(nd_to_host(q, got, sizeof got) == ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++) cr_expect(fabs(got[i] - exp(3.0 * xs[i])) <= 1e-12 * exp(3.0 * xs[i]), "q[%d]", i);
    cr_assert(nd_to_host(z, got, sizeof got) == ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++) cr_expect(got[i] == 3.0 * xs[i], "z[%d]", i);
    nd_scope_end();
    nd_free(x);
}

/* Random draws left pending draw the same values when they run later. */
NDT_TEST(read_flush, a_random_recipe_draws_the_same_values_later) {
    restart_without_early_flushes();
    enum { M = 5000 };
    static float got[M];
    nd_random_seed(1234);
    nd_scope_begin();
    nd_array *u = nd_random_uniform(ND_FLOAT32, ND_SHAPE(M), 0, 1);
    nd_array *v = nd_mul(u, nd_scalar(2.0));
    double s = nd_item(nd_sum(nd_astype(v, ND_FLOAT64), ND_ALL_AXES));
    cr_assert(nd_to_host(u, got, sizeof got) == ND_OK, "%s", nd_last_error());
    double t = 0;
    for (int i = 0; i < M; i++) t += 2.0 * (double)got[i];
    cr_expect(fabs(s - t) <= 1e-9 * t, "the sum read %.17g, the draws read later give %.17g", s, t);
    nd_scope_end();
}

/* Pending values still held by handles run at the next nd_sync, right. */
NDT_TEST(read_flush, nd_sync_after_a_read_computes_what_stayed) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { M = 300 };
    static double xs[M], ys[M], got[M];
    fill(&r, xs, M);
    fill(&r, ys, M);
    nd_array *x = upload(xs, M), *y = upload(ys, M);
    nd_array *z, *w;
    /* z, w, extra and s outlive the scope; the temporaries do not. */
    nd_scope_begin();
    nd_array *s = nd_keep(sum_of_z_plus_w(x, y, &z, &w));
    nd_keep(z);
    nd_keep(w);
    nd_scope_end();
    nd_array *extra = nd_sub(w, z); /* not needed by the read */
    (void)nd_item(s);
    nd_stats s0;
    snap(&s0);
    cr_assert(nd_sync() == ND_OK);
    counts c = since(&s0);
    cr_expect_geq(c.kernels, 1, "extra, z and w stayed pending: the sync computes them");
    cr_assert(nd_to_host(extra, got, sizeof got) == ND_OK);
    for (int i = 0; i < M; i++)
        cr_expect(fabs(got[i] - (ref_w(xs[i], ys[i]) - ref_z(xs[i], ys[i]))) <= 1e-12, "extra[%d]", i);
    nd_array *all[] = {s, z, w, extra, x, y};
    for (int i = 0; i < 6; i++) nd_free(all[i]);
}

/* ------------------------------------------------ shared library operands */

/* z = (x - mean) / std over axis 0; a = z @ w1, b = z @ w2, c = z.T @ z. */
static void normalise_then_matmul(nd_array *x, nd_array *w1, nd_array *w2, nd_array **out, int read_inside) {
    nd_scope_begin();
    int ax0[] = {0};
    nd_array *mean = nd_mean_axes(x, 1, ax0, true);
    nd_array *sd = nd_std_axes(x, 1, ax0, 0.0, true);
    nd_array *z = nd_div(nd_sub(x, mean), sd);
    out[0] = nd_keep(nd_matmul(z, w1));
    out[1] = nd_keep(nd_matmul(z, w2));
    out[2] = nd_keep(nd_matmul(nd_transpose(z, NULL), z));
    if (read_inside) (void)nd_item(nd_sum(out[0], ND_ALL_AXES));
    nd_scope_end();
}

static void ref_normalise(const double *x, int n, double *z) {
    for (int j = 0; j < n; j++) {
        double m = 0, v = 0;
        for (int i = 0; i < n; i++) m += x[i * n + j];
        m /= n;
        for (int i = 0; i < n; i++) v += (x[i * n + j] - m) * (x[i * n + j] - m);
        double sd = sqrt(v / n);
        for (int i = 0; i < n; i++) z[i * n + j] = (x[i * n + j] - m) / sd;
    }
}

static void check_product(nd_array *got, const double *a, int at, const double *b, int n, const char *what) {
    static double g[64 * 64];
    cr_assert(nd_to_host(got, g, sizeof g) == ND_OK, "%s: %s", what, nd_last_error());
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (at ? a[k * n + i] : a[i * n + k]) * b[k * n + j];
            cr_expect(fabs(g[i * n + j] - s) <= 1e-10 * (fabs(s) + n), "%s[%d,%d] = %.17g, want %.17g", what, i, j,
                      g[i * n + j], s);
        }
}

static void shared_operand_case(int read_inside) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { n = 64 };
    static double xs[n * n], w1s[n * n], w2s[n * n], z[n * n];
    fill(&r, xs, n * n);
    fill(&r, w1s, n * n);
    fill(&r, w2s, n * n);
    nd_array *x = nd_from_host(xs, ND_FLOAT64, ND_SHAPE(n, n));
    nd_array *w1 = nd_from_host(w1s, ND_FLOAT64, ND_SHAPE(n, n));
    nd_array *w2 = nd_from_host(w2s, ND_FLOAT64, ND_SHAPE(n, n));
    cr_assert(nd_sync() == ND_OK);

    /* The same work with z written by a flush of its own: its kernels are
     * the floor (z computed once). */
    nd_stats s0;
    snap(&s0);
    nd_scope_begin();
    int ax0[] = {0};
    nd_array *zk = nd_keep(nd_div(nd_sub(x, nd_mean_axes(x, 1, ax0, true)), nd_std_axes(x, 1, ax0, 0.0, true)));
    nd_scope_end();
    cr_assert(nd_sync() == ND_OK);
    nd_array *zkt = nd_transpose(zk, NULL);
    nd_array *floor_out[3] = {nd_matmul(zk, w1), nd_matmul(zk, w2), nd_matmul(zkt, zk)};
    cr_assert(nd_sync() == ND_OK);
    nd_free(zkt);
    counts floor = since(&s0);
    for (int i = 0; i < 3; i++) nd_free(floor_out[i]);
    nd_free(zk);

    nd_array *out[3];
    snap(&s0);
    normalise_then_matmul(x, w1, w2, out, read_inside);
    cr_assert(nd_sync() == ND_OK);
    counts c = since(&s0);
    if (ndt_one_device("the library call count: split, a matmul runs once per device (nd_stats.device_matmuls)"))
        cr_expect_eq(c.libs, 3);
    /* Before: z computed in each operand's kernel (6 kernels, 4 of them
     * writing a temporary z). */
    /* The read's own reduction: as many kernels as a sum of such an array. */
    uint64_t read_kernels = 0;
    if (read_inside) {
        nd_array *t = nd_matmul(w1, w2);
        cr_assert(nd_sync() == ND_OK);
        snap(&s0);
        nd_array *ts = nd_sum(t, ND_ALL_AXES);
        (void)nd_item(ts);
        read_kernels = since(&s0).kernels;
        nd_free(ts);
        nd_free(t);
    }
    cr_expect(c.kernels <= floor.kernels + read_kernels,
              "z should be computed once: %llu kernels, %llu when z is written first (+%llu for the read)",
              (unsigned long long)c.kernels, (unsigned long long)floor.kernels, (unsigned long long)read_kernels);
    ref_normalise(xs, n, z);
    check_product(out[0], z, 0, w1s, n, "z @ w1");
    check_product(out[1], z, 0, w2s, n, "z @ w2");
    check_product(out[2], z, 1, z, n, "z.T @ z");
    for (int i = 0; i < 3; i++) nd_free(out[i]);
    nd_free(x);
    nd_free(w1);
    nd_free(w2);
}

NDT_TEST(read_flush, a_value_feeding_several_matmuls_is_computed_once) { shared_operand_case(0); }

/* With a read inside the scope: z is left pending for b and c, unless the
 * read's flush writes it (it does: a's operand kernel writes it anyway). */
NDT_TEST(read_flush, a_shared_operand_read_inside_its_scope_is_computed_once) { shared_operand_case(1); }

/* ------------------------------------------------ shared between kernels */

/* z read by two reductions over different axes (kernels that cannot
 * merge): computing it in both costs its body twice, writing it once costs
 * a write and two reads. With three transcendental calls per element the
 * CPU writes it (a call costs about a memory pass there); a device, where
 * memory is cheap against arithmetic, computes it in both. A cheap z stays
 * inlined everywhere. Both answers are right either way. */
static void two_reductions_case(int expensive) {
    restart_without_early_flushes();
    NDT_RNG(r);
    enum { R = 48, C = 80 };
    static double xs[R * C], g0[C], g1[R];
    fill(&r, xs, R * C);
    nd_array *x = nd_from_host(xs, ND_FLOAT64, ND_SHAPE(R, C));
    cr_assert(nd_sync() == ND_OK);
    nd_stats s0;
    snap(&s0);
    nd_scope_begin();
    nd_array *z = expensive ? nd_add(nd_mul(nd_exp(nd_sin(x)), nd_cos(x)), nd_scalar(1.0))
                            : nd_add(nd_mul(x, nd_scalar(2.0)), nd_scalar(1.0));
    nd_array *r0 = nd_keep(nd_sum(z, 0)), *r1 = nd_keep(nd_sum(z, 1));
    nd_scope_end();
    cr_assert(nd_sync() == ND_OK);
    counts c = since(&s0);
    int written = expensive && !ndt_backend_is_cuda();
    cr_expect_eq(c.values, 2u + (uint64_t)written, "%s z on %s: %llu values written (z %s)",
                 expensive ? "an expensive" : "a cheap", ndt_backend_is_cuda() ? "a device" : "the CPU",
                 (unsigned long long)c.values, written ? "once, then read by both" : "computed in both kernels");
    cr_assert(nd_to_host(r0, g0, sizeof g0) == ND_OK);
    cr_assert(nd_to_host(r1, g1, sizeof g1) == ND_OK);
    for (int j = 0; j < C; j++) {
        double s = 0;
        for (int i = 0; i < R; i++) {
            double v = xs[i * C + j];
            s += expensive ? exp(sin(v)) * cos(v) + 1.0 : 2.0 * v + 1.0;
        }
        cr_expect(fabs(g0[j] - s) <= 1e-12 * (fabs(s) + R), "sum(z, 0)[%d] = %.17g, want %.17g", j, g0[j], s);
    }
    for (int i = 0; i < R; i++) {
        double s = 0;
        for (int j = 0; j < C; j++) {
            double v = xs[i * C + j];
            s += expensive ? exp(sin(v)) * cos(v) + 1.0 : 2.0 * v + 1.0;
        }
        cr_expect(fabs(g1[i] - s) <= 1e-12 * (fabs(s) + C), "sum(z, 1)[%d] = %.17g, want %.17g", i, g1[i], s);
    }
    nd_free(r0);
    nd_free(r1);
    nd_free(x);
}

NDT_TEST(read_flush, an_expensive_value_two_reductions_read_is_written_once_on_the_cpu) { two_reductions_case(1); }
NDT_TEST(read_flush, a_cheap_value_two_reductions_read_stays_inlined) { two_reductions_case(0); }
