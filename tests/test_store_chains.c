/* Chains of hazardous stores: several in-place stencil sweeps recorded before
 * one sync, each reading the grid's previous version through shifted views
 * of the region it overwrites. The scheduler keeps the versions alternately
 * in the grid and one temporary (one kernel per sweep) and must still give
 * NumPy's answer: odd and even chain lengths, 1-d to 3-d, strided regions,
 * grids that are views of a larger buffer, other values reading the
 * intermediate versions, chains broken by other writes or by a change of
 * region, two chains interleaved, a cached plan run again, and grids large
 * enough that the fill before an even chain copies only the part outside
 * the region (every version checked whole). Results are checked against a
 * float64 host reference of the same sums in the same order. */
#include "common.h"

#include <stdlib.h>

/* A stencil sweep: region[p] = coef * (sum over nb of grid[p + nb]) with the
 * right-hand side read before the region is written. Each axis of the region
 * is start:stop:step (explicit, non-negative). */
typedef struct {
    int ndim;
    int64_t shape[3];
    int64_t start[3], stop[3], step[3];
    int n_nb;
    int64_t nb[8][3];
    double coef;
} stencil;

/* Every test counts the kernels of chains recorded before one nd_sync, so
 * early flushes, which would cut a chain in pieces, are off. */
static void one_flush_setup(void) {
    ndt_setup();
    ndt_restart(&(nd_config){.early_flush = -1});
}
#define CHAIN_TEST(name) NDT_TEST_WITH(store_chains, name, one_flush_setup, ndt_teardown, NDT_TIMEOUT)

static const stencil FIVE_POINT_2D = {
    2, {19, 23}, {1, 1}, {18, 22}, {1, 1}, 5, {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};

static void index_string(char *out, size_t cap, const stencil *s, const int64_t *d) {
    size_t len = 0;
    for (int k = 0; k < s->ndim; k++)
        len += (size_t)snprintf(out + len, cap - len, "%s%lld:%lld:%lld", k ? ", " : "",
                                (long long)(s->start[k] + d[k]), (long long)(s->stop[k] + d[k]),
                                (long long)s->step[k]);
}

/* Records one sweep over u (not run). */
static void sweep(nd_array *u, const stencil *s) {
    char idx[160];
    const int64_t zero[3] = {0, 0, 0};
    nd_scope_begin();
    nd_array *sum = NULL;
    for (int j = 0; j < s->n_nb; j++) {
        index_string(idx, sizeof idx, s, s->nb[j]);
        nd_array *v = nd_view(u, idx);
        sum = sum ? nd_add(sum, v) : v;
    }
    index_string(idx, sizeof idx, s, zero);
    nd_array *dst = nd_view(u, idx);
    cr_assert_eq(nd_assign(dst, nd_mul(nd_scalar(s->coef), sum)), ND_OK, "%s", nd_last_error());
    nd_scope_end();
}

/* The same sweep on a row-major float64 host grid. */
static void sweep_ref(double *g, const stencil *s) {
    int64_t total = 1, strides[3] = {1, 1, 1}, count[3] = {1, 1, 1};
    for (int k = 0; k < s->ndim; k++) total *= s->shape[k];
    for (int k = s->ndim - 2; k >= 0; k--) strides[k] = strides[k + 1] * s->shape[k + 1];
    for (int k = 0; k < s->ndim; k++) count[k] = (s->stop[k] - s->start[k] + s->step[k] - 1) / s->step[k];
    double *t = malloc(sizeof(double) * (size_t)total);
    memcpy(t, g, sizeof(double) * (size_t)total);
    for (int64_t a = 0; a < count[0]; a++)
        for (int64_t b = 0; b < count[1]; b++)
            for (int64_t c = 0; c < count[2]; c++) {
                int64_t i[3] = {a, b, c}, p = 0;
                for (int k = 0; k < s->ndim; k++) p += (s->start[k] + i[k] * s->step[k]) * strides[k];
                double acc = 0;
                for (int j = 0; j < s->n_nb; j++) {
                    int64_t q = p;
                    for (int k = 0; k < s->ndim; k++) q += s->nb[j][k] * strides[k];
                    acc = j ? acc + t[q] : t[q];
                }
                g[p] = s->coef * acc;
            }
    free(t);
}

static double *ref_doubles(const ref_arr *a) {
    double *g = malloc(sizeof(double) * (size_t)a->size);
    for (int64_t i = 0; i < a->size; i++) g[i] = ref_getd(a, i);
    return g;
}

static uint64_t kernels_run(void) {
    nd_stats st;
    nd_get_stats(&st);
    return NDT_KERNELS(st);
}

/* `iters` sweeps of s over a fresh random grid, one sync; returns the
 * number of kernels the sync ran. */
static uint64_t run_chain(ndt_rng *r, const stencil *s, nd_dtype dt, int iters, const char *what) {
    ref_arr *init = ndt_rand(r, dt, s->ndim, s->shape, -1, 1);
    nd_array *u = ndt_upload(init);
    for (int it = 0; it < iters; it++) sweep(u, s);
    uint64_t k0 = kernels_run();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t kernels = kernels_run() - k0;
    double *g = ref_doubles(init);
    for (int it = 0; it < iters; it++) sweep_ref(g, s);
    ref_arr *want = ref_from_doubles(dt, s->ndim, s->shape, g);
    double tol = dt == ND_FLOAT64 ? 1e-12 : 1e-5;
    ndt_check(u, want, tol, tol, NULL, "%s: %d sweeps", what, iters);
    ref_free(want);
    ref_free(init);
    free(g);
    nd_free(u);
    return kernels;
}

/* One kernel per sweep plus the temporary's fill; a lone sweep keeps the
 * two kernels of a temporary and a copy. */
static void expect_kernels(uint64_t kernels, int iters, const char *what) {
    uint64_t want = iters == 1 ? 2 : (uint64_t)iters + 1;
    cr_expect_eq(kernels, want, "%s, %d sweeps: %llu kernels, want %llu", what, iters,
                 (unsigned long long)kernels, (unsigned long long)want);
}

CHAIN_TEST(chain_lengths_2d_float64) {
    NDT_RNG(r);
    const int lengths[] = {1, 2, 3, 4, 5, 50};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        expect_kernels(run_chain(&r, &FIVE_POINT_2D, ND_FLOAT64, lengths[i], "5-point 2-d"),
                       lengths[i], "5-point 2-d");
}

CHAIN_TEST(chain_2d_float32) {
    NDT_RNG(r);
    run_chain(&r, &FIVE_POINT_2D, ND_FLOAT32, 7, "5-point 2-d float32");
    run_chain(&r, &FIVE_POINT_2D, ND_FLOAT32, 20, "5-point 2-d float32");
}

CHAIN_TEST(chain_1d) {
    NDT_RNG(r);
    const stencil s = {1, {41}, {1}, {40}, {1}, 3, {{0}, {-1}, {1}}, 1.0 / 3.0};
    for (int iters = 2; iters <= 9; iters += 7)
        expect_kernels(run_chain(&r, &s, ND_FLOAT64, iters, "3-point 1-d"), iters, "3-point 1-d");
    /* a wider reach: x[2:-2] from x[:-4] .. x[4:] */
    const stencil w = {1, {37}, {2}, {35}, {1}, 5, {{0}, {-2}, {-1}, {1}, {2}}, 0.2};
    run_chain(&r, &w, ND_FLOAT64, 6, "5-point 1-d");
}

CHAIN_TEST(chain_3d) {
    NDT_RNG(r);
    const stencil s = {3,
                       {6, 7, 9},
                       {1, 1, 1},
                       {5, 6, 8},
                       {1, 1, 1},
                       7,
                       {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}},
                       1.0 / 7.0};
    for (int iters = 5; iters <= 6; iters++)
        expect_kernels(run_chain(&r, &s, ND_FLOAT64, iters, "7-point 3-d"), iters, "7-point 3-d");
}

CHAIN_TEST(strided_regions) {
    NDT_RNG(r);
    /* Even interior columns from their even neighbours two apart and the odd
     * column to their left, which the chain never writes. */
    const stencil cols = {2, {11, 20}, {1, 2}, {10, 18}, {1, 2}, 6,
                          {{0, 0}, {-1, 0}, {1, 0}, {0, -2}, {0, 2}, {0, -1}}, 1.0 / 6.0};
    for (int iters = 3; iters <= 4; iters++) run_chain(&r, &cols, ND_FLOAT64, iters, "::2 columns");
    /* Every other row, reading the rows between. */
    const stencil rows = {2, {17, 9}, {2, 1}, {15, 8}, {2, 1}, 5,
                          {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    for (int iters = 3; iters <= 4; iters++) run_chain(&r, &rows, ND_FLOAT64, iters, "::2 rows");
    const stencil odd = {1, {40}, {3}, {37}, {2}, 3, {{0}, {-2}, {2}}, 0.25};
    run_chain(&r, &odd, ND_FLOAT64, 5, "1-d 3:37:2");
}

/* The grid is itself a strided view of a larger buffer: the temporary spans
 * the whole buffer, and what lies outside the grid stays as it was. */
CHAIN_TEST(grid_is_a_view) {
    NDT_RNG(r);
    enum { BR = 21, BC = 31 };
    for (int iters = 4; iters <= 5; iters++) {
        ref_arr *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(BR, BC), -1, 1);
        nd_array *base = ndt_upload(rb);
        nd_array *u = nd_view(base, "2:, 1::2"); /* (19, 15) */
        stencil s = FIVE_POINT_2D;
        s.shape[0] = 19;
        s.shape[1] = 15;
        s.stop[0] = 18;
        s.stop[1] = 14;
        for (int it = 0; it < iters; it++) sweep(u, &s);
        uint64_t k0 = kernels_run();
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        expect_kernels(kernels_run() - k0, iters, "view of a larger buffer");
        double *g = malloc(sizeof(double) * 19 * 15);
        for (int i = 0; i < 19; i++)
            for (int j = 0; j < 15; j++) g[i * 15 + j] = ref_getd(rb, (2 + i) * BC + 1 + 2 * j);
        for (int it = 0; it < iters; it++) sweep_ref(g, &s);
        for (int i = 0; i < 19; i++)
            for (int j = 0; j < 15; j++) ref_setd(rb, (2 + i) * BC + 1 + 2 * j, g[i * 15 + j]);
        ndt_check(base, rb, 1e-12, 1e-12, NULL, "base buffer after %d sweeps of its view", iters);
        free(g);
        ref_free(rb);
        nd_free(u);
        nd_free(base);
    }
}

/* A few sweeps over a small corner of a large buffer keep two kernels per
 * sweep: copying the whole buffer once would cost more than it saves. */
CHAIN_TEST(small_region_of_large_buffer) {
    NDT_RNG(r);
    enum { BN = 40 };
    ref_arr *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(BN, BN), -1, 1);
    nd_array *base = ndt_upload(rb);
    nd_array *u = nd_view(base, "3:9, 5:11");
    stencil s = FIVE_POINT_2D;
    s.shape[0] = s.shape[1] = 6;
    s.stop[0] = s.stop[1] = 5;
    for (int it = 0; it < 3; it++) sweep(u, &s);
    uint64_t k0 = kernels_run();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t kernels = kernels_run() - k0;
    cr_expect_eq(kernels, 6, "3 sweeps of a 4x4 region in a 40x40 buffer: %llu kernels, want 6",
                 (unsigned long long)kernels);
    double g[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) g[i * 6 + j] = ref_getd(rb, (3 + i) * BN + 5 + j);
    for (int it = 0; it < 3; it++) sweep_ref(g, &s);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) ref_setd(rb, (3 + i) * BN + 5 + j, g[i * 6 + j]);
    ndt_check(base, rb, 1e-12, 1e-12, NULL, "base after 3 sweeps of a corner");
    ref_free(rb);
    nd_free(u);
    nd_free(base);
}

/* Values that read the grid between sweeps: a copy (kept), a reduction, a
 * matmul operand, a value of the stored region itself, and one recorded
 * early but consumed sweeps later (it must see the version of its time). */
static void readers_of_intermediates(int iters) {
    NDT_RNG(r);
    enum { N = 16 };
    const stencil s = {2, {N, N}, {1, 1}, {N - 1, N - 1}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(N, N), -1, 1);
    ref_arr *rw = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(N, 3), -1, 1);
    nd_array *u = ndt_upload(init), *w = ndt_upload(rw);
    nd_array *snap[8] = {0}, *total[8] = {0}, *prod[8] = {0}, *centre[8] = {0};
    nd_array *early = NULL, *late = NULL;
    for (int it = 0; it < iters; it++) {
        sweep(u, &s);
        /* after sweep it + 1 */
        nd_scope_begin();
        if (it == 0) snap[it] = nd_keep(nd_copy(u));
        if (it == 1) total[it] = nd_keep(nd_sum(u, ND_ALL_AXES));
        if (it == 2) prod[it] = nd_keep(nd_matmul(u, w));
        if (it == iters - 2) centre[it] = nd_keep(nd_mul(nd_view(u, "1:-1, 1:-1"), nd_scalar(3.0)));
        if (it == 1) early = nd_keep(nd_sub(nd_view(u, "2:, :"), nd_scalar(1.0)));
        if (it == iters - 1) late = nd_keep(nd_add(early, nd_view(u, ":-2, :")));
        nd_scope_end();
    }
    /* Only `late` reads it now: inlined or not, it must see version 2. */
    nd_free(early);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    double *g = ref_doubles(init), *v2 = NULL;
    for (int it = 0; it < iters; it++) {
        sweep_ref(g, &s);
        ref_arr *ver = ref_from_doubles(ND_FLOAT64, ND_SHAPE(N, N), g);
        if (snap[it]) ndt_check(snap[it], ver, 0, 0, NULL, "copy after sweep 1 of %d", iters);
        if (total[it]) {
            double t = 0;
            for (int i = 0; i < N * N; i++) t += g[i];
            double got = nd_item(total[it]);
            cr_expect(fabs(got - t) <= 1e-12 * (1 + fabs(t)), "sum after sweep 2 of %d: %.17g, want %.17g",
                      iters, got, t);
        }
        if (prod[it]) {
            ref_arr *want = ref_matmul(ver, rw, ND_FLOAT64, NULL);
            ndt_check(prod[it], want, 1e-12, 1e-12, NULL, "matmul after sweep 3 of %d", iters);
            ref_free(want);
        }
        if (centre[it]) {
            ref_arr *want = ref_new(ND_FLOAT64, ND_SHAPE(N - 2, N - 2));
            for (int i = 0; i < N - 2; i++)
                for (int j = 0; j < N - 2; j++) ref_setd(want, i * (N - 2) + j, 3.0 * g[(i + 1) * N + j + 1]);
            ndt_check(centre[it], want, 1e-12, 1e-12, NULL, "centre*3 after sweep %d of %d", it + 1, iters);
            ref_free(want);
        }
        if (it == 1) {
            v2 = malloc(sizeof(double) * N * N);
            memcpy(v2, g, sizeof(double) * N * N);
        }
        ref_free(ver);
    }
    ref_arr *want = ref_new(ND_FLOAT64, ND_SHAPE(N - 2, N));
    for (int i = 0; i < (N - 2) * N; i++) ref_setd(want, i, (v2[i + 2 * N] - 1.0) + g[i]);
    ndt_check(late, want, 1e-12, 1e-12, NULL, "value of sweep 2 used after sweep %d", iters);
    ref_arr *wu = ref_from_doubles(ND_FLOAT64, ND_SHAPE(N, N), g);
    ndt_check(u, wu, 1e-12, 1e-12, NULL, "grid after %d sweeps read in between", iters);
    for (int i = 0; i < 8; i++) {
        nd_free(snap[i]);
        nd_free(total[i]);
        nd_free(prod[i]);
        nd_free(centre[i]);
    }
    nd_free(late);
    nd_free(u);
    nd_free(w);
    ref_free(want);
    ref_free(wu);
    ref_free(init);
    ref_free(rw);
    free(g);
    free(v2);
}

CHAIN_TEST(intermediate_versions_read_even_chain) { readers_of_intermediates(6); }
CHAIN_TEST(intermediate_versions_read_odd_chain) { readers_of_intermediates(7); }

/* Sweeps over two different regions: each run of one region is its own
 * chain (or a lone hazardous store), and the values stay NumPy's. */
CHAIN_TEST(regions_that_differ) {
    NDT_RNG(r);
    stencil a = FIVE_POINT_2D, b = FIVE_POINT_2D;
    b.start[1] = 2; /* u[1:-1, 2:-1] */
    const char *pattern[] = {"abab", "aabbb", "abbba", "aaab"};
    for (size_t p = 0; p < sizeof pattern / sizeof pattern[0]; p++) {
        ref_arr *init = ndt_rand(&r, ND_FLOAT64, 2, a.shape, -1, 1);
        nd_array *u = ndt_upload(init);
        double *g = ref_doubles(init);
        uint64_t want_kernels = 0;
        for (const char *c = pattern[p]; *c; c++) {
            sweep(u, *c == 'a' ? &a : &b);
            sweep_ref(g, *c == 'a' ? &a : &b);
            /* a run of L sweeps over one region: L + 1 kernels (a lone
             * sweep: the temporary and the copy; else the fill) */
            want_kernels += c == pattern[p] || c[-1] != *c ? 2 : 1;
        }
        uint64_t k0 = kernels_run();
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        cr_expect_eq(kernels_run() - k0, want_kernels, "regions %s: %llu kernels, want %llu", pattern[p],
                     (unsigned long long)(kernels_run() - k0), (unsigned long long)want_kernels);
        ref_arr *want = ref_from_doubles(ND_FLOAT64, 2, a.shape, g);
        ndt_check(u, want, 1e-12, 1e-12, NULL, "regions %s", pattern[p]);
        ref_free(want);
        ref_free(init);
        free(g);
        nd_free(u);
    }
}

/* A write outside the region between sweeps (the fixed edge moves) ends the
 * chain: the sweeps after it must see the new edge. */
CHAIN_TEST(edge_written_between_sweeps) {
    NDT_RNG(r);
    const stencil *s = &FIVE_POINT_2D;
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, 2, s->shape, -1, 1);
    nd_array *u = ndt_upload(init);
    double *g = ref_doubles(init);
    for (int it = 0; it < 9; it++) {
        sweep(u, s);
        sweep_ref(g, s);
        if (it % 3 == 2) {
            nd_array *edge = nd_view(u, "0, :");
            cr_assert_eq(nd_fill(edge, 1.0 + it), ND_OK, "%s", nd_last_error());
            nd_free(edge);
            for (int j = 0; j < s->shape[1]; j++) g[j] = 1.0 + it;
        }
    }
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *want = ref_from_doubles(ND_FLOAT64, 2, s->shape, g);
    ndt_check(u, want, 1e-12, 1e-12, NULL, "sweeps with the edge refilled every third");
    ref_free(want);
    ref_free(init);
    free(g);
    nd_free(u);
}

/* Two grids swept in turn: both chains' temporaries are alive at once and
 * must not share memory. The second grid's sweep also reads the first's. */
CHAIN_TEST(two_chains_interleaved) {
    NDT_RNG(r);
    const stencil *s = &FIVE_POINT_2D;
    for (int iters = 4; iters <= 5; iters++) {
        ref_arr *ia = ndt_rand(&r, ND_FLOAT64, 2, s->shape, -1, 1);
        ref_arr *ib = ndt_rand(&r, ND_FLOAT64, 2, s->shape, -1, 1);
        nd_array *ua = ndt_upload(ia), *ub = ndt_upload(ib);
        double *ga = ref_doubles(ia), *gb = ref_doubles(ib);
        for (int it = 0; it < iters; it++) {
            sweep(ua, s);
            sweep_ref(ga, s);
            sweep(ub, s);
            sweep_ref(gb, s);
            nd_scope_begin();
            nd_array *dst = nd_view(ub, "1:-1, 1:-1");
            nd_array *rhs = nd_add(nd_view(ub, ":-2, 1:-1"), nd_view(ua, "1:-1, 1:-1"));
            cr_assert_eq(nd_assign(dst, nd_mul(rhs, nd_scalar(0.5))), ND_OK, "%s", nd_last_error());
            nd_scope_end();
            double *t = malloc(sizeof(double) * 19 * 23);
            memcpy(t, gb, sizeof(double) * 19 * 23);
            for (int i = 1; i < 18; i++)
                for (int j = 1; j < 22; j++) gb[i * 23 + j] = (t[(i - 1) * 23 + j] + ga[i * 23 + j]) * 0.5;
            free(t);
        }
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        ref_arr *wa = ref_from_doubles(ND_FLOAT64, 2, s->shape, ga);
        ref_arr *wb = ref_from_doubles(ND_FLOAT64, 2, s->shape, gb);
        ndt_check(ua, wa, 1e-12, 1e-12, NULL, "first grid, %d rounds", iters);
        ndt_check(ub, wb, 1e-12, 1e-12, NULL, "second grid, %d rounds", iters);
        ref_free(wa);
        ref_free(wb);
        ref_free(ia);
        ref_free(ib);
        free(ga);
        free(gb);
        nd_free(ua);
        nd_free(ub);
    }
}

/* The same flush three times with fresh data: the second and third take the
 * cached plan (and on CUDA replay its graph). */
CHAIN_TEST(cached_plan_runs_again) {
    NDT_RNG(r);
    nd_stats before, after;
    nd_get_stats(&before);
    for (int rep = 0; rep < 3; rep++) run_chain(&r, &FIVE_POINT_2D, ND_FLOAT64, 5, "cached plan");
    nd_get_stats(&after);
    cr_expect_geq(after.plan_cache_hits - before.plan_cache_hits, 2, "the repeated flush should hit the plan cache");
}

/* ND_FUSION=0 plans every store on its own: the same values. */
CHAIN_TEST(fusion_off_same_values) {
    nd_config cfg = {0};
    cfg.fusion = -1;
    ndt_restart(&cfg);
    NDT_RNG(r);
    run_chain(&r, &FIVE_POINT_2D, ND_FLOAT64, 4, "fusion off");
    run_chain(&r, &FIVE_POINT_2D, ND_FLOAT64, 5, "fusion off");
}

/* Chains whose right-hand side is a plain view (no computed value), in an
 * integer buffer: x[1:] = x[:-1] k times shifts by k; x[:] = x[::-1] (the
 * region is the whole buffer) three times reverses. */
CHAIN_TEST(plain_view_chains_int32) {
    NDT_RNG(r);
    enum { N = 29 };
    ref_arr *init = ndt_rand_small(&r, ND_INT32, ND_SHAPE(N));
    for (int k = 2; k <= 5; k++) {
        nd_array *x = ndt_upload(init);
        nd_array *dst = nd_view(x, "1:"), *src = nd_view(x, ":-1");
        for (int it = 0; it < k; it++) cr_assert_eq(nd_assign(dst, src), ND_OK, "%s", nd_last_error());
        ref_arr *want = ref_new(ND_INT32, ND_SHAPE(N));
        for (int i = 0; i < N; i++) ref_setd(want, i, ref_getd(init, i - k < 0 ? 0 : i - k));
        ndt_check(x, want, 0, 0, NULL, "x[1:] = x[:-1], %d times", k);
        ref_free(want);
        nd_free(dst);
        nd_free(src);
        nd_free(x);
    }
    nd_array *y = ndt_upload(init), *rev = nd_view(y, "::-1");
    for (int it = 0; it < 3; it++) cr_assert_eq(nd_assign(y, rev), ND_OK, "%s", nd_last_error());
    ref_arr *want = ref_new(ND_INT32, ND_SHAPE(N));
    for (int i = 0; i < N; i++) ref_setd(want, i, ref_getd(init, N - 1 - i));
    ndt_check(y, want, 0, 0, NULL, "x[:] = x[::-1], three times");
    ref_free(want);
    ref_free(init);
    nd_free(rev);
    nd_free(y);
}

/* Grids whose region holds at least 4 MiB (store_chains.c's
 * PARTIAL_FILL_MIN_BYTES): for an even chain the fill copies only the part
 * of the grid outside the region, in `parts` kernels, when the region is a
 * box of the buffer; an odd chain, or a region that is no box, keeps the
 * one copy of the whole grid. The grid is kept after every sweep and every
 * version checked whole, border included: the odd versions of an even chain
 * live in the temporary, so a missing or misplaced part shows in them even
 * where no sweep reads it. */
/* 1 when a split plan's fill takes one copy more than `parts`: the rows
 * before and after the region on axis 0, as many of each, are one copy
 * on one device and two on several (src/scheduler/store_chains.c,
 * outside_parts: one copy striding from the first rows to the last cannot
 * be split in row blocks). A fill of one copy (the whole array) is the
 * same on both. */
static uint64_t split_row_copies(const stencil *s, int parts) {
    int64_t before = s->start[0], after = s->shape[0] - s->stop[0];
    return ndt_devices_split() && parts > 1 && s->step[0] == 1 && before > 0 && before == after ? 1 : 0;
}

static void big_chain(ndt_rng *r, const stencil *s, nd_dtype dt, int iters, int parts, const char *what) {
    enum { MAX_ITERS = 6 };
    cr_assert_leq(iters, MAX_ITERS);
    ref_arr *init = ndt_rand(r, dt, s->ndim, s->shape, -1, 1);
    nd_array *u = ndt_upload(init), *snap[MAX_ITERS] = {0};
    for (int it = 0; it < iters; it++) {
        sweep(u, s);
        nd_scope_begin();
        snap[it] = nd_keep(nd_copy(u));
        nd_scope_end();
    }
    uint64_t k0 = kernels_run();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t kernels = kernels_run() - k0;
    /* a sweep and a copy per version, and the fill */
    uint64_t want_kernels = 2 * (uint64_t)iters + (iters % 2 == 0 ? (uint64_t)parts + split_row_copies(s, parts) : 1);
    cr_expect_eq(kernels, want_kernels, "%s, %d sweeps: %llu kernels, want %llu", what, iters,
                 (unsigned long long)kernels, (unsigned long long)want_kernels);
    double *g = ref_doubles(init);
    double tol = dt == ND_FLOAT64 ? 1e-12 : 1e-5;
    for (int it = 0; it < iters; it++) {
        sweep_ref(g, s);
        ref_arr *want = ref_from_doubles(dt, s->ndim, s->shape, g);
        ndt_check(snap[it], want, tol, tol, NULL, "%s: version %d of %d", what, it + 1, iters);
        if (it == iters - 1) ndt_check(u, want, tol, tol, NULL, "%s: grid after %d sweeps", what, iters);
        ref_free(want);
        nd_free(snap[it]);
    }
    ref_free(init);
    free(g);
    nd_free(u);
}

/* Under the sanitizers the big chains (each a 4 MiB grid swept and checked
 * whole, every access instrumented) run their shortest and longest
 * lengths only: store_chains was the longest test of CI's TSan stage (110
 * s of 2 shared cores; its tests' times summed 81 s alone on 2 cores, 49 s
 * thinned) and the second longest of its ASan stage (45 s). What the
 * sanitizers check here, the executor thread and the pool around the fill
 * (TSan) and the fill's reads and writes against the buffers' ends (ASan),
 * is the same for every length; the release build runs them all, checking
 * every value. */
#if defined(NDT_TSAN) || defined(NDT_ASAN)
#define BIG_CHAIN_STEP 3 /* lengths 2 and 5 (3 and 5 where the loop starts at 3) */
#else
#define BIG_CHAIN_STEP 1
#endif
#ifdef NDT_TSAN
/* The fills of more parts and other region shapes: under ThreadSanitizer
 * the two-part symmetric border, the cached plan and the twin keep the
 * executor thread and the pool around a fill in view (a race between two
 * parts shows with two). With them store_chains took 45 s of CI's TSan
 * stage; without them 18 s, alone on the idle 2-core VM. */
#define TSAN_LEAVES_OUT(what) cr_skip_test(what ": more parts of the same fill, left out under ThreadSanitizer")
#else
#define TSAN_LEAVES_OUT(what) (void)0
#endif

static void big_chain_lengths(const stencil *s, nd_dtype dt, int parts, const char *what) {
    NDT_RNG(r);
    for (int iters = 2; iters <= 5; iters += BIG_CHAIN_STEP) big_chain(&r, s, dt, iters, parts, what);
}

/* u[1:-1, 1:-1]: the first and last rows in one kernel, the first and last
 * columns in another. */
CHAIN_TEST(fill_outside_symmetric_border_2d) {
    const stencil s = {2, {1030, 520}, {1, 1}, {1029, 519}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain_lengths(&s, ND_FLOAT64, 2, "[1:-1, 1:-1] of 1030x520");
}

CHAIN_TEST(fill_outside_symmetric_border_2d_float32) {
    TSAN_LEAVES_OUT("float64's parts with another element size");
    NDT_RNG(r);
    const stencil s = {2, {1030, 1040}, {1, 1}, {1029, 1039}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain(&r, &s, ND_FLOAT32, 4, 2, "float32 [1:-1, 1:-1] of 1030x1040");
    big_chain(&r, &s, ND_FLOAT32, 5, 2, "float32 [1:-1, 1:-1] of 1030x1040");
}

/* u[2:-1, 3:-5]: borders of different widths, four parts. */
CHAIN_TEST(fill_outside_asymmetric_border_2d) {
    TSAN_LEAVES_OUT("four parts");
    const stencil s = {2, {1030, 530}, {2, 3}, {1029, 525}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain_lengths(&s, ND_FLOAT64, 4, "[2:-1, 3:-5] of 1030x530");
}

/* u[1:-1, 3:-5] (one part for the rows, two for the columns) and u[:-1,
 * 1:-1] (nothing before the region on axis 0: one part for the last row,
 * one for the columns), swept from the south and the sides only. */
CHAIN_TEST(fill_outside_mixed_borders_2d) {
    TSAN_LEAVES_OUT("three and two parts");
    const stencil a = {2, {1030, 530}, {1, 3}, {1029, 525}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain_lengths(&a, ND_FLOAT64, 3, "[1:-1, 3:-5] of 1030x530");
    const stencil b = {2, {1030, 520}, {0, 1}, {1029, 519}, {1, 1}, 4,
                       {{0, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.25};
    big_chain_lengths(&b, ND_FLOAT64, 2, "[:-1, 1:-1] of 1030x520");
}

#define SEVEN_POINT_3D {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}

/* u[1:-1, 1:-1, 1:-1]: one part per axis. u[1:-1, 2:-1, 1:-3]: one for
 * axis 0, two each for axes 1 and 2. */
CHAIN_TEST(fill_outside_border_3d) {
    TSAN_LEAVES_OUT("3-d parts");
    const stencil s = {3, {68, 130, 66}, {1, 1, 1}, {67, 129, 65}, {1, 1, 1}, 7, SEVEN_POINT_3D, 1.0 / 7.0};
    big_chain_lengths(&s, ND_FLOAT64, 3, "[1:-1, 1:-1, 1:-1] of 68x130x66");
    NDT_RNG(r);
    const stencil a = {3, {68, 131, 68}, {1, 2, 1}, {67, 130, 65}, {1, 1, 1}, 7, SEVEN_POINT_3D, 1.0 / 7.0};
    big_chain(&r, &a, ND_FLOAT64, 2, 5, "[1:-1, 2:-1, 1:-3] of 68x131x68");
    big_chain(&r, &a, ND_FLOAT64, 3, 5, "[1:-1, 2:-1, 1:-3] of 68x131x68");
}

/* Regions that are no box of the grid's rows and columns (sweeping about
 * half the grid: a chain of two would not pay for the fill, so 3 to 5).
 * Every other column: the whole copy. Every other row of 2051 rows: the
 * whole copy (no row-major shape of the buffer has it as a box). Every
 * other row of 2050: a box of the buffer seen as 1025 rows of two grid rows
 * each, whose complement (the first pair of rows; the first column of the
 * even rows; the rest of them with all odd rows) is three parts. */
CHAIN_TEST(fill_of_strided_regions) {
    TSAN_LEAVES_OUT("strided regions");
    NDT_RNG(r);
    const stencil cols = {2, {1030, 1040}, {1, 2}, {1029, 1038}, {1, 2}, 6,
                          {{0, 0}, {-1, 0}, {1, 0}, {0, -2}, {0, 2}, {0, -1}}, 1.0 / 6.0};
    for (int iters = 3; iters <= 5; iters += BIG_CHAIN_STEP == 1 ? 1 : 2)
        big_chain(&r, &cols, ND_FLOAT64, iters, 1, "[1:-1, 2:-2:2] of 1030x1040");
    const stencil rows = {2, {2051, 520}, {2, 1}, {2049, 519}, {2, 1}, 5,
                          {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain(&r, &rows, ND_FLOAT64, 3, 1, "[2:-2:2, 1:-1] of 2051x520");
    big_chain(&r, &rows, ND_FLOAT64, 4, 1, "[2:-2:2, 1:-1] of 2051x520");
    const stencil pairs = {2, {2050, 520}, {2, 1}, {2049, 519}, {2, 1}, 5,
                           {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    big_chain(&r, &pairs, ND_FLOAT64, 4, 3, "[2:-1:2, 1:-1] of 2050x520");
    big_chain(&r, &pairs, ND_FLOAT64, 5, 3, "[2:-1:2, 1:-1] of 2050x520");
}

/* The same even chain on a 4 MiB grid flushed three times: the cached plan
 * fills the same parts. */
CHAIN_TEST(fill_outside_cached_plan) {
    NDT_RNG(r);
    const stencil s = {2, {1030, 520}, {2, 3}, {1029, 515}, {1, 1}, 5,
                       {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    nd_stats before, after;
    nd_get_stats(&before);
    for (int rep = 0; rep < 3; rep++) big_chain(&r, &s, ND_FLOAT64, 4, 4, "cached plan");
    nd_get_stats(&after);
    cr_expect_geq(after.plan_cache_hits - before.plan_cache_hits, 2, "the repeated flush should hit the plan cache");
}

/* ------------------------------------------------ chains across flushes */

/* A loop that syncs every `per_sync` sweeps, `syncs` times, on one grid:
 * the grid's twin keeps the part outside the region between flushes, so
 * only the first even chain fills it (`first_fill` kernels) and the later
 * even ones run one kernel per sweep. The whole grid is checked after every
 * sync. */
static void chain_per_sync(const stencil *s, int per_sync, int syncs, int first_fill, const char *what) {
    NDT_RNG(r);
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, s->ndim, s->shape, -1, 1);
    nd_array *u = ndt_upload(init);
    double *g = ref_doubles(init);
    for (int k = 0; k < syncs; k++) {
        for (int it = 0; it < per_sync; it++) sweep(u, s);
        uint64_t k0 = kernels_run();
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        uint64_t kernels = kernels_run() - k0;
        uint64_t want = (uint64_t)per_sync + (k == 0 ? (uint64_t)first_fill + split_row_copies(s, first_fill) : 0);
        cr_expect_eq(kernels, want, "%s, sync %d of %d sweeps: %llu kernels, want %llu", what, k + 1, per_sync,
                     (unsigned long long)kernels, (unsigned long long)want);
        for (int it = 0; it < per_sync; it++) sweep_ref(g, s);
        ref_arr *want_grid = ref_from_doubles(ND_FLOAT64, s->ndim, s->shape, g);
        ndt_check(u, want_grid, 1e-12, 1e-12, NULL, "%s: after sync %d", what, k + 1);
        ref_free(want_grid);
    }
    ref_free(init);
    free(g);
    nd_free(u);
}

CHAIN_TEST(twin_spares_the_fill_of_later_syncs) {
    chain_per_sync(&FIVE_POINT_2D, 2, 4, 1, "19x23, 2 sweeps per sync");
    chain_per_sync(&FIVE_POINT_2D, 6, 3, 1, "19x23, 6 sweeps per sync");
    const stencil big = {2, {1030, 520}, {1, 1}, {1029, 519}, {1, 1}, 5,
                         {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    chain_per_sync(&big, 4, 3, 2, "[1:-1, 1:-1] of 1030x520, 4 sweeps per sync");
    const stencil s3 = {3, {6, 7, 9}, {1, 1, 1}, {5, 6, 8}, {1, 1, 1}, 7,
                        {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}},
                        1.0 / 7.0};
    chain_per_sync(&s3, 4, 3, 1, "7-point 3-d, 4 sweeps per sync");
}

/* Sweeps, a sync, then something else between two syncs of sweeps: the
 * twin no longer mirrors the grid and the next chain fills it again. Each
 * `between` is recorded after the first sync; the grid is checked whole. */
typedef enum { WRITE_BORDER, WRITE_REGION, WRITE_WHOLE, OTHER_REGION, ODD_CHAIN } between_kind;

static void chain_after(between_kind kind, const char *what) {
    NDT_RNG(r);
    stencil s = FIVE_POINT_2D;
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, s.ndim, s.shape, -1, 1);
    nd_array *u = ndt_upload(init);
    double *g = ref_doubles(init);
    int64_t n0 = s.shape[0], n1 = s.shape[1];
    for (int it = 0; it < 4; it++) sweep(u, &s);
    for (int it = 0; it < 4; it++) sweep_ref(g, &s);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    int sweeps = 2;
    nd_scope_begin();
    switch (kind) {
    case WRITE_BORDER: /* the first row and the last column */
        cr_assert_eq(nd_assign(nd_view(u, "0, :"), nd_scalar(3.5)), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_assign(nd_view(u, ":, -1"), nd_scalar(-2.25)), ND_OK, "%s", nd_last_error());
        for (int64_t j = 0; j < n1; j++) g[j] = 3.5;
        for (int64_t i = 0; i < n0; i++) g[i * n1 + n1 - 1] = -2.25;
        break;
    case WRITE_REGION: /* the chain's own region, from nothing it reads */
        cr_assert_eq(nd_assign(nd_view(u, "1:18, 1:22"), nd_scalar(0.75)), ND_OK, "%s", nd_last_error());
        for (int64_t i = 1; i < 18; i++)
            for (int64_t j = 1; j < 22; j++) g[i * n1 + j] = 0.75;
        break;
    case WRITE_WHOLE:
        cr_assert_eq(nd_assign(u, nd_mul(u, nd_scalar(-1.5))), ND_OK, "%s", nd_last_error());
        for (int64_t i = 0; i < n0 * n1; i++) g[i] *= -1.5;
        break;
    case OTHER_REGION: /* the next chain sweeps [2:-2, 2:-2] */
        s.start[0] = s.start[1] = 2;
        s.stop[0] = 17;
        s.stop[1] = 21;
        break;
    case ODD_CHAIN: /* reads all of the grid from the twin: a whole copy */
        sweeps = 3;
        break;
    }
    nd_scope_end();
    for (int it = 0; it < sweeps; it++) sweep(u, &s);
    for (int it = 0; it < sweeps; it++) sweep_ref(g, &s);
    uint64_t k0 = kernels_run();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t kernels = kernels_run() - k0;
    /* the sweeps, the fill, and what was recorded in between (one kernel
     * per write) */
    uint64_t writes = kind == WRITE_BORDER ? 2 : kind == WRITE_REGION || kind == WRITE_WHOLE ? 1 : 0;
    cr_expect_eq(kernels, (uint64_t)sweeps + 1 + writes, "%s: %llu kernels, want %llu", what,
                 (unsigned long long)kernels, (unsigned long long)(sweeps + 1 + writes));
    ref_arr *want = ref_from_doubles(ND_FLOAT64, s.ndim, s.shape, g);
    ndt_check(u, want, 1e-12, 1e-12, NULL, "%s", what);
    ref_free(want);
    ref_free(init);
    free(g);
    nd_free(u);
}

CHAIN_TEST(twin_refilled_after_other_writes) {
    chain_after(WRITE_BORDER, "border written between two syncs of sweeps");
    chain_after(WRITE_REGION, "region written between two syncs of sweeps");
    chain_after(WRITE_WHOLE, "grid scaled between two syncs of sweeps");
    chain_after(OTHER_REGION, "another region swept after a sync");
    chain_after(ODD_CHAIN, "three sweeps after a sync of four");
}

/* With early flushes on, 40 sweeps of a small grid are cut into a few
 * chains in one nd_sync; only the first fills the twin, and the answer is
 * NumPy's. */
Test(store_chains, early_flushes_share_the_twin, .init = ndt_setup, .fini = ndt_teardown,
     .timeout = NDT_TIMEOUT) {
    NDT_RNG(r);
    const stencil s = {2, {64, 48}, {1, 1}, {63, 47}, {1, 1}, 5, {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}, 0.2};
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, s.ndim, s.shape, -1, 1);
    nd_array *u = ndt_upload(init);
    nd_stats before, after;
    nd_get_stats(&before);
    for (int it = 0; it < 40; it++) sweep(u, &s);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_gt(after.flushes - before.flushes, 1, "40 sweeps should flush early at least once");
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 41, "40 sweeps: %llu kernels, want 41",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    double *g = ref_doubles(init);
    for (int it = 0; it < 40; it++) sweep_ref(g, &s);
    ref_arr *want = ref_from_doubles(ND_FLOAT64, s.ndim, s.shape, g);
    ndt_check(u, want, 1e-12, 1e-12, NULL, "40 sweeps with early flushes");
    ref_free(want);
    ref_free(init);
    free(g);
    nd_free(u);
}

/* A freed grid's twin goes back to the pool of temporaries: the next grid
 * of its size takes it for its own chain and allocates nothing. */
CHAIN_TEST(twin_memory_goes_back_to_the_pool) {
    NDT_RNG(r);
    if (ndt_devices_split()) cr_skip_test("a split grid's twin lives in its pieces, kept with the grid");
    const stencil s = FIVE_POINT_2D;
    nd_stats start, before, after;
    nd_get_stats(&start);
    run_chain(&r, &s, ND_FLOAT64, 4, "first grid");
    nd_get_stats(&before);
    cr_expect_eq(NDT_TEMPS(before) - NDT_TEMPS(start), 1,
                 "the first grid's twin is the pool's first block: %llu allocations",
                 (unsigned long long)(NDT_TEMPS(before) - NDT_TEMPS(start)));
    expect_kernels(run_chain(&r, &s, ND_FLOAT64, 4, "second grid"), 4, "second grid");
    nd_get_stats(&after);
    cr_expect_eq(NDT_TEMPS(after), NDT_TEMPS(before),
                 "the second grid's twin should come from the pool: %llu allocations",
                 (unsigned long long)(NDT_TEMPS(after) - NDT_TEMPS(before)));
}

/* u[1:-1] = 0.5 * (u[:-2] + u[2:]) once: a lone hazardous store, through a
 * temporary as large as the region. */
static void lone_sweep(nd_array *u, double *ref, int64_t n) {
    nd_scope_begin();
    nd_array *c = nd_view(u, "1:-1");
    cr_assert_eq(nd_assign(c, nd_mul(nd_scalar(0.5), nd_add(nd_view(u, ":-2"), nd_view(u, "2:")))), ND_OK, "%s",
                 nd_last_error());
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    double prev = ref[0];
    for (int64_t i = 1; i < n - 1; i++) {
        double v = 0.5 * (prev + ref[i + 1]);
        prev = ref[i];
        ref[i] = v;
    }
}

/* A pooled temporary lent to a smaller ask goes back with its own size:
 * the 1000-element sweep's block (7984 bytes), lent to the 800-element
 * sweep (6384), serves the 1000-element sweep again without an allocation
 * (kept as 6384 bytes, it no longer fitted). */
CHAIN_TEST(pooled_temporaries_keep_their_size) {
    if (ndt_devices_split()) cr_skip_test("which pooled block a temporary reuses: one device's plans");
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(1000), -1, 1), *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(800), -1, 1);
    nd_array *a = ndt_upload(ra), *b = ndt_upload(rb);
    double *ga = ref_doubles(ra), *gb = ref_doubles(rb);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats s0, s1, s2;
    nd_get_stats(&s0);
    lone_sweep(a, ga, 1000);
    lone_sweep(b, gb, 800);
    nd_get_stats(&s1);
    cr_expect_eq(NDT_TEMPS(s1) - NDT_TEMPS(s0), 1,
                 "the 800-element sweep should borrow the 1000-element sweep's temporary: %llu allocations",
                 (unsigned long long)(NDT_TEMPS(s1) - NDT_TEMPS(s0)));
    lone_sweep(a, ga, 1000);
    nd_get_stats(&s2);
    cr_expect_eq(NDT_TEMPS(s2), NDT_TEMPS(s1),
                 "the block came back smaller than it is: %llu allocations for the third sweep",
                 (unsigned long long)(NDT_TEMPS(s2) - NDT_TEMPS(s1)));
    ref_arr *wa = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){1000}, ga);
    ref_arr *wb = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){800}, gb);
    ndt_check(a, wa, 1e-14, 1e-14, NULL, "two lone sweeps of 1000 elements");
    ndt_check(b, wb, 1e-14, 1e-14, NULL, "a lone sweep of 800 elements");
    ref_free(wa);
    ref_free(wb);
    ref_free(ra);
    ref_free(rb);
    free(ga);
    free(gb);
    nd_free(a);
    nd_free(b);
}
