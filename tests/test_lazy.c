/* The lazy engine: fusion on/off agree, the plan cache hits on a repeated
 * graph (with new values), dead nodes are dropped, scopes release what they
 * should, and automatic flushing keeps answers right. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv */
#endif
#include "common.h"

#include <math.h>

#include <stdlib.h>

/* A mixed chain: elementwise, where, a reduction, a matmul, an int path. */
static void run_chain(const ref_arr *rx, const ref_arr *ry, const ref_arr *ri, ref_arr **out) {
    nd_scope_begin();
    nd_array *x = ndt_upload(rx), *y = ndt_upload(ry), *k = ndt_upload(ri);
    nd_array *a = nd_sub(nd_mul(x, nd_scalar(1.5)), y);
    nd_array *b = nd_sqrt(nd_add(nd_abs(a), nd_scalar(1.0)));
    nd_array *c = nd_where(nd_gt(b, nd_scalar(1.2)), b, nd_neg(b));
    nd_array *s = nd_sum(c, 1);
    nd_array *m = nd_matmul(c, nd_transpose(x, NULL));
    nd_array *ki = nd_add(nd_mul(k, k), nd_scalar_int(3));
    nd_array *kmax = nd_max(ki, 0);
    nd_array *res[5] = {c, s, m, ki, kmax};
    for (int i = 0; i < 5; i++) {
        cr_assert(res[i], "chain step %d failed: %s", i, nd_last_error());
        out[i] = ndt_download(res[i]);
    }
    nd_scope_end();
}

NDT_TEST(lazy, fusion_on_and_off_agree) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 9), -2, 2);
    ref_arr *ry = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(9), -2, 2);
    ref_arr *ri = ndt_rand_bits(&r, ND_INT32, ND_SHAPE(4, 5));
    ref_arr *off[5], *on[5];
    nd_config cfg = {0};
    cfg.fusion = -1;
    ndt_restart(&cfg);
    run_chain(rx, ry, ri, off);
    nd_config def = {0};
    ndt_restart(&def);
    run_chain(rx, ry, ri, on);
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(off[i]->size, on[i]->size);
        for (int64_t j = 0; j < on[i]->size && j < off[i]->size; j++) {
            if (ref_is_float(on[i]->dt)) {
                double p = ref_getd(off[i], j), q = ref_getd(on[i], j);
                cr_expect(fabs(p - q) <= 1e-12 * (fabs(q) + 1), "result %d elem %lld: fusion off %.17g, on %.17g",
                          i, (long long)j, p, q);
            } else {
                cr_expect_eq(ref_getu(off[i], j), ref_getu(on[i], j), "result %d elem %lld differs", i, (long long)j);
            }
        }
        ref_free(off[i]);
        ref_free(on[i]);
    }
    ref_free(rx); ref_free(ry); ref_free(ri);
}

/* x, y -> add, mul, sub, abs, sqrt, neg, exp, maximum(+scalar): 10 nodes. */
static nd_array *ten_node_graph(const ref_arr *rx, const ref_arr *ry, double k, ref_arr **want) {
    nd_array *x = ndt_upload(rx), *y = ndt_upload(ry);
    nd_scope_begin();
    nd_array *a = nd_add(x, y), *b = nd_mul(a, x), *c = nd_sub(b, y), *d = nd_abs(c);
    nd_array *e = nd_sqrt(d), *f = nd_exp(nd_neg(e)), *g = nd_maximum(f, nd_mul(x, nd_scalar(k)));
    nd_keep(g);
    nd_scope_end();
    ref_arr *ra = ref_binary(R_ADD, rx, ry, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rb = ref_binary(R_MUL, ra, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rc = ref_binary(R_SUB, rb, ry, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rd = ref_unary(R_ABS, rc, ND_FLOAT64, ND_FLOAT64);
    ref_arr *re = ref_unary(R_SQRT, rd, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rn = ref_unary(R_NEG, re, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rf = ref_unary(R_EXP, rn, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rk = ref_new(ND_FLOAT64, 0, NULL);
    ref_setd(rk, 0, k);
    ref_arr *rxk = ref_binary(R_MUL, rx, rk, ND_FLOAT64, ND_FLOAT64);
    *want = ref_binary(R_MAX, rf, rxk, ND_FLOAT64, ND_FLOAT64);
    ref_free(ra); ref_free(rb); ref_free(rc); ref_free(rd); ref_free(re); ref_free(rn);
    ref_free(rf); ref_free(rk); ref_free(rxk);
    nd_free(x);
    nd_free(y);
    return g;
}

NDT_TEST(lazy, plan_cache_hits_on_repeated_graph) {
    NDT_RNG(r);
    nd_stats s0, s1, s2;
    ref_arr *want;
    ref_arr *x1 = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(8, 16), -2, 2), *y1 = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(8, 16), -2, 2);
    nd_get_stats(&s0);
    nd_array *g1 = ten_node_graph(x1, y1, 0.25, &want);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    ndt_check(g1, want, 1e-12, 1e-12, NULL, "first flush");
    ref_free(want);
    nd_free(g1);
    cr_expect_gt(s1.flushes, s0.flushes, "the first sync ran a flush");
    /* same structure, new values and a new scalar */
    ref_arr *x2 = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(8, 16), -2, 2), *y2 = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(8, 16), -2, 2);
    nd_array *g2 = ten_node_graph(x2, y2, -0.75, &want);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s2);
    cr_expect_geq(s2.plan_cache_hits, s1.plan_cache_hits + 1,
                  "the second flush of the same graph must hit the plan cache (hits %llu -> %llu)",
                  (unsigned long long)s1.plan_cache_hits, (unsigned long long)s2.plan_cache_hits);
    ndt_check(g2, want, 1e-12, 1e-12, NULL, "second flush (cached plan, new values)");
    nd_free(g2);
    ref_free(want);
    ref_free(x1); ref_free(y1); ref_free(x2); ref_free(y2);
}

/* Loop iteration i over the rows of x (ROWS x COLS float64) and z: a
 * flush of y = x[i] * x[j] + x[i+1] (j = 5i mod ROWS: views of one buffer
 * whose distances change), then one of c = q[:, i] * 2 (a column),
 * s = sum(x[i]) and z[i] = z[i] + x[i] in place; checked against C
 * float64 (exact, but y's fma on CUDA and the sum: within 1e-15, 1e-12). */
enum { LOOP_ROWS = 17, LOOP_COLS = 33 };
static void row_iteration(nd_array *x, nd_array *z, nd_array *q, const ref_arr *rx, ref_arr *rz, const ref_arr *rq,
                          int i) {
    const int j = (5 * i) % LOOP_ROWS, k = i + 1 < LOOP_ROWS ? i + 1 : 0;
    nd_scope_begin();
    nd_array *y = nd_add(nd_mul(nd_viewf(x, "%d", i), nd_viewf(x, "%d", j)), nd_viewf(x, "%d", k));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *c = nd_mul(nd_viewf(q, ":, %d", i % LOOP_COLS), nd_scalar(2.0));
    nd_array *sum = nd_sum(nd_viewf(x, "%d", i), ND_ALL_AXES);
    nd_array *zr = nd_viewf(z, "%d", i);
    cr_assert_eq(nd_assign(zr, nd_add(zr, nd_viewf(x, "%d", i))), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *wy = ref_new(ND_FLOAT64, ND_SHAPE(LOOP_COLS)), *wc = ref_new(ND_FLOAT64, ND_SHAPE(LOOP_ROWS));
    double ws = 0;
    for (int64_t q = 0; q < LOOP_COLS; q++) {
        double a = ref_getd(rx, i * LOOP_COLS + q), b = ref_getd(rx, j * LOOP_COLS + q);
        ref_setd(wy, q, a * b + ref_getd(rx, k * LOOP_COLS + q));
        ws += a;
        ref_setd(rz, i * LOOP_COLS + q, ref_getd(rz, i * LOOP_COLS + q) + a);
    }
    for (int64_t r = 0; r < LOOP_ROWS; r++) ref_setd(wc, r, ref_getd(rq, r * LOOP_COLS + i % LOOP_COLS) * 2.0);
    /* a * b + c: CUDA contracts it into one fma, the CPU rounds twice */
    ndt_check(y, wy, 1e-15, 1e-15, NULL, "row %d: x[%d] * x[%d] + x[%d]", i, i, j, k);
    ndt_check(c, wc, 0, 0, NULL, "row %d: q[:, %d] * 2", i, i % LOOP_COLS);
    double got = nd_item(sum);
    cr_assert(fabs(got - ws) <= 1e-12 * (1 + fabs(ws)), "row %d: sum(x[%d]) = %.17g, want %.17g", i, i, got, ws);
    nd_scope_end();
    ref_free(wy);
    ref_free(wc);
}

/* A loop over a matrix's rows plans once: where views start is not part of
 * the plan's key (flush_walk.c), a plan of kernels alone runs on views
 * that start elsewhere (nd_plan.offset_generic), and its results are the
 * rows' own. */
NDT_TEST(lazy, row_loops_reuse_their_plans) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(LOOP_ROWS, LOOP_COLS), -3, 3);
    ref_arr *rz = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(LOOP_ROWS, LOOP_COLS), -3, 3);
    ref_arr *rq = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(LOOP_ROWS, LOOP_COLS), -3, 3);
    nd_array *x = ndt_upload(rx), *z = ndt_upload(rz), *q = ndt_upload(rq);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats s0, s1;
    for (int i = 0; i < 3; i++) row_iteration(x, z, q, rx, rz, rq, i);
    nd_get_stats(&s0);
    for (int i = 3; i < LOOP_ROWS; i++) row_iteration(x, z, q, rx, rz, rq, i);
    nd_get_stats(&s1);
    ndt_check(z, rz, 0, 0, NULL, "z with x added to every row in place");
    /* Each row's y reads x at three offsets whose distances change with
     * the row (j = 5i mod ROWS, and the last row's k = 0): a new distance
     * is a new plan. The second flush of every row is the first row's. */
    int64_t distances = 0, seen[2 * LOOP_ROWS][2 * LOOP_ROWS] = {{0}};
    for (int i = 0; i < LOOP_ROWS; i++) {
        int dj = (5 * i) % LOOP_ROWS - i + LOOP_ROWS, dk = (i + 1 < LOOP_ROWS ? i + 1 : 0) - i + LOOP_ROWS;
        if (!seen[dj][dk]) distances += i >= 3;
        seen[dj][dk] = 1;
    }
    uint64_t misses = s1.plan_cache_misses - s0.plan_cache_misses;
    /* A plan split over devices copies between pieces: it is built for
     * where its views start (the values above hold all the same). */
    if (ndt_one_device("the plan cache's hits on a row loop: split plans are not offset-generic")) {
        cr_expect_leq(misses, (uint64_t)distances, "%llu plan cache misses in %d rows after the first 3, %lld of "
                      "them with views of x at new distances", (unsigned long long)misses, LOOP_ROWS - 3,
                      (long long)distances);
        cr_expect_geq(s1.plan_cache_hits - s0.plan_cache_hits, (uint64_t)(LOOP_ROWS - 3), "%llu plan cache hits",
                      (unsigned long long)(s1.plan_cache_hits - s0.plan_cache_hits));
    }
    nd_free(x);
    nd_free(z);
    nd_free(q);
    ref_free(rx);
    ref_free(rz);
    ref_free(rq);
}

/* A plan found for views that start elsewhere (nd_plan.offset_generic) was
 * built for buffers in the same state: a flush whose result nobody held
 * (its plan writes nothing) must not lend that plan to the same flush of
 * another row whose result is held. Row 0's pair of slices is concatenated
 * and freed unread; rows 1..3 are concatenated the same way and read. */
NDT_TEST(lazy, plans_for_other_rows_match_who_holds_the_result) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(4, 12), -3, 3);
    nd_array *x = ndt_upload(rx);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int row = 0; row < 4; row++) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%d:%d, :3", row, row + 1);
        snprintf(hi, sizeof hi, "%d:%d, -3:", row, row + 1);
        nd_array *parts[2] = {nd_view(x, lo), nd_view(x, hi)};
        nd_array *c = nd_concatenate(2, parts, 1);
        cr_assert(c, "%s", nd_last_error());
        nd_free(parts[0]);
        nd_free(parts[1]);
        if (row == 0) {
            nd_free(c);
            cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
            continue;
        }
        double got[6];
        for (int i = 0; i < 6; i++) got[i] = NAN;
        cr_assert_eq(nd_to_host(c, got, sizeof got), ND_OK, "%s", nd_last_error());
        for (int i = 0; i < 6; i++) {
            double want = ref_getd(rx, row * 12 + (i < 3 ? i : 6 + i));
            cr_expect_eq(got[i], want, "row %d, element %d: %.17g, want %.17g", row, i, got[i], want);
        }
        nd_free(c);
    }
    nd_free(x);
    ref_free(rx);
}

/* Random programs over the rows of a matrix, whose flushes meet the plan
 * cache in ever other states: results held or freed unread, rows written in
 * place, host reads (a value then valid on the host too), syncs. Every plan
 * the cache serves is compared with one built afresh (ND_CHECK_PLANS=1:
 * a difference fails the flush), and every value read with a host
 * reference. Values are small integers, so every result is exact. */
enum { FZ_ROWS = 6, FZ_COLS = 16, FZ_STEPS = 400, FZ_HELD = 8 };

typedef struct {
    nd_array *a;
    double want[FZ_COLS];
    int64_t n;
} fz_held;

static double fz_small(ndt_rng *r) { return (double)((int64_t)(ndt_next(r) % 17) - 8); }

static void fz_check(fz_held *h, int step) {
    double got[FZ_COLS];
    for (int i = 0; i < FZ_COLS; i++) got[i] = NAN;
    cr_assert_eq(nd_to_host(h->a, got, sizeof got), ND_OK, "step %d: %s", step, nd_last_error());
    for (int64_t i = 0; i < h->n; i++)
        cr_assert_eq(got[i], h->want[i], "step %d, element %lld: %g, want %g (seed %llu)", step, (long long)i,
                     got[i], h->want[i], (unsigned long long)ndt_current_seed());
}

static void fz_release(fz_held *h) {
    nd_free(h->a);
    h->a = NULL;
}

NDT_TEST(lazy, random_row_programs_hit_only_matching_plans) {
    setenv("ND_CHECK_PLANS", "1", 1);
    ndt_restart(NULL);
    NDT_RNG(r);
    double ref[FZ_ROWS][FZ_COLS];
    for (int i = 0; i < FZ_ROWS; i++)
        for (int j = 0; j < FZ_COLS; j++) ref[i][j] = fz_small(&r);
    nd_array *x = nd_from_host(ref, ND_FLOAT64, ND_SHAPE(FZ_ROWS, FZ_COLS));
    cr_assert(x, "%s", nd_last_error());
    fz_held held[FZ_HELD] = {{0}};
    nd_stats s0, s1;
    nd_get_stats(&s0);
    int i = 0, j = 0, kind = 0, fate = 0, again = 0;
    for (int step = 0; step < FZ_STEPS; step++) {
        /* A step is made one to three times in a row: a plan split over
         * devices is found by its exact key only (where views start is in
         * it), so a repeat is what meets it again. */
        if (again-- <= 0) {
            i = (int)(ndt_next(&r) % FZ_ROWS), j = (int)(ndt_next(&r) % FZ_ROWS);
            kind = (int)(ndt_next(&r) % 6), fate = (int)(ndt_next(&r) % 3);
            again = (int)(ndt_next(&r) % 3);
        }
        char vi[32], vj[32];
        snprintf(vi, sizeof vi, "%d", i);
        snprintf(vj, sizeof vj, "%d", j);
        fz_held made = {0};
        nd_scope_begin(); /* the temporaries and scalars of the step */
        if (kind == 0) { /* x[i] * a + x[j] */
            const double a = fz_small(&r);
            nd_array *xi = nd_view(x, vi), *xj = nd_view(x, vj);
            made.a = nd_add(nd_mul(xi, nd_scalar(a)), xj);
            made.n = FZ_COLS;
            for (int c = 0; c < FZ_COLS; c++) made.want[c] = ref[i][c] * a + ref[j][c];
            nd_free(xi);
            nd_free(xj);
        } else if (kind == 1) { /* the first and last 3 of row i, concatenated */
            char lo[32], hi[32];
            snprintf(lo, sizeof lo, "%d:%d, :3", i, i + 1);
            snprintf(hi, sizeof hi, "%d:%d, -3:", i, i + 1);
            nd_array *p[2] = {nd_view(x, lo), nd_view(x, hi)};
            made.a = nd_concatenate(2, p, 1);
            made.n = 6;
            for (int c = 0; c < 6; c++) made.want[c] = ref[i][c < 3 ? c : FZ_COLS - 6 + c];
            nd_free(p[0]);
            nd_free(p[1]);
        } else if (kind == 2) { /* x[i] = x[j] + b, in place */
            const double b = fz_small(&r);
            nd_array *xi = nd_view(x, vi), *xj = nd_view(x, vj);
            nd_array *v = nd_add(xj, nd_scalar(b));
            cr_assert_eq(nd_assign(xi, v), ND_OK, "step %d: %s", step, nd_last_error());
            for (int c = 0; c < FZ_COLS; c++) ref[i][c] = ref[j][c] + b;
            nd_free(v);
            nd_free(xi);
            nd_free(xj);
        } else if (kind == 3) { /* a host read of one element */
            char e[32];
            const int c = (int)(ndt_next(&r) % FZ_COLS);
            snprintf(e, sizeof e, "%d, %d", i, c);
            nd_array *xe = nd_view(x, e);
            cr_assert_eq(nd_item(xe), ref[i][c], "step %d: x[%d, %d] (seed %llu): %s", step, i, c,
                         (unsigned long long)ndt_current_seed(), nd_last_error());
            nd_free(xe);
        } else if (kind == 4) { /* the sum of row i */
            nd_array *xi = nd_view(x, vi);
            made.a = nd_sum(xi, ND_ALL_AXES);
            made.n = 1;
            made.want[0] = 0;
            for (int c = 0; c < FZ_COLS; c++) made.want[0] += ref[i][c];
            nd_free(xi);
        } else {
            cr_assert_eq(nd_sync(), ND_OK, "step %d: %s", step, nd_last_error());
        }
        if (!made.a) {
            nd_scope_end();
            continue;
        }
        if (fate == 0) { /* freed unread */
            fz_release(&made);
        } else if (fate == 1) { /* read now */
            fz_check(&made, step);
            fz_release(&made);
        } else { /* held, read later (the slot's last holder is read first) */
            fz_held *slot = &held[ndt_next(&r) % FZ_HELD];
            if (slot->a) {
                fz_check(slot, step);
                fz_release(slot);
            }
            cr_assert_eq(nd_keep(made.a), made.a);
            *slot = made;
        }
        nd_scope_end();
    }
    for (int k = 0; k < FZ_HELD; k++)
        if (held[k].a) {
            fz_check(&held[k], FZ_STEPS);
            fz_release(&held[k]);
        }
    nd_get_stats(&s1);
    cr_expect_geq(s1.plan_cache_hits - s0.plan_cache_hits, (uint64_t)FZ_STEPS / 80, "%llu plan cache hits: the programs must meet the cache",
                 (unsigned long long)(s1.plan_cache_hits - s0.plan_cache_hits));
    nd_free(x);
    unsetenv("ND_CHECK_PLANS");
}

NDT_TEST(lazy, dead_nodes_are_dropped) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(64), 0.5, 2);
    nd_array *x = ndt_upload(rx);
    nd_stats before, after;
    nd_get_stats(&before);
    nd_array *t = nd_exp(x), *u = nd_sin(t), *v = nd_log(u);
    nd_array *keep = nd_sqrt(x);
    nd_free(v);
    nd_free(u);
    nd_free(t);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_gt(after.nodes_dropped, before.nodes_dropped,
                 "exp/sin/log whose handles were freed before sync must be dropped (%llu -> %llu)",
                 (unsigned long long)before.nodes_dropped, (unsigned long long)after.nodes_dropped);
    cr_expect_geq(after.nodes_recorded, before.nodes_recorded + 4);
    ref_arr *want = ref_unary(R_SQRT, rx, ND_FLOAT32, ND_FLOAT32);
    ndt_check(keep, want, 1e-6, 0, NULL, "the live result");
    nd_free(x); nd_free(keep);
    ref_free(rx); ref_free(want);
}

/* Flushes only at nd_sync or a read: the counts below are exact. */
static void restart_no_early_flushes(void) {
    nd_config cfg = {0};
    cfg.early_flush = -1;
    ndt_restart(&cfg);
}

static uint64_t dropped_now(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.nodes_dropped;
}

/* A value whose last handle goes while its node is the newest pending one,
 * read by nothing, leaves the graph at that nd_free (nd_graph_drop_dead_tail);
 * one that a pending node reads, or that another handle still sees, stays
 * and is computed right. */
NDT_TEST(lazy, dead_newest_nodes_leave_at_their_free) {
    restart_no_early_flushes();
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(33), 0.5, 2);
    nd_array *x = ndt_upload(rx);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());

    uint64_t d0 = dropped_now();
    nd_array *t = nd_exp(x), *u = nd_sin(t);
    nd_free(t); /* u reads it: stays */
    cr_expect_eq(dropped_now(), d0, "exp, read by the pending sin, was dropped");
    nd_free(u); /* sin is newest and dead, then exp is */
    cr_expect_eq(dropped_now(), d0 + 2, "dead sin and exp: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));

    /* A second handle keeps the value; a live newer node keeps an older one. */
    nd_array *v = nd_log(x);
    nd_array *v2 = nd_retain(v);
    nd_free(v);
    nd_array *w = nd_sqrt(x);
    nd_array *older = nd_square(x);
    nd_array *newer = nd_neg(x);
    cr_expect_eq(dropped_now(), d0 + 2, "a value seen by a handle was dropped at free");
    nd_free(older); /* not the newest node, read by nothing: goes too (nd_graph_drop_dead) */
    cr_expect_eq(dropped_now(), d0 + 3, "the dead square, not the newest node, stayed after its free");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(dropped_now(), d0 + 3, "the flush dropped a node that was live at its free");
    ref_arr *want_v = ref_unary(R_LOG, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_w = ref_unary(R_SQRT, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_n = ref_unary(R_NEG, rx, ND_FLOAT64, ND_FLOAT64);
    ndt_check(v2, want_v, 1e-12, 0, NULL, "log kept by its second handle");
    ndt_check(w, want_w, 1e-12, 0, NULL, "sqrt");
    ndt_check(newer, want_n, 0, 0, NULL, "neg");
    nd_free(v2); nd_free(w); nd_free(newer); nd_free(x);
    ref_free(want_v); ref_free(want_w); ref_free(want_n); ref_free(rx);
}

/* A dead newest binary node: the common drop (graph.h,
 * nd_graph_drop_dead_fast) and what it leaves to the general one: an
 * input read twice, or inputs whose writers die with it, behind a live
 * node (so only the general function's walk over the inputs finds them),
 * and an input computed by an earlier flush, whose memory goes with its
 * last reference. Counts, then every live value against float64. */
NDT_TEST(lazy, dead_newest_binary_nodes_take_their_dead_inputs) {
    restart_no_early_flushes();
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(29), 0.5, 2);
    nd_array *x = ndt_upload(rx);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    const uint64_t d0 = dropped_now();

    nd_array *y = nd_sqrt(x);
    nd_free(nd_add(x, y)); /* two live operands: the add alone */
    cr_expect_eq(dropped_now(), d0 + 1, "x + sqrt(x) freed at once: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));

    nd_array *t = nd_exp(x), *live = nd_neg(x), *s = nd_add(t, t);
    nd_free(t); /* s reads it twice: stays */
    cr_expect_eq(dropped_now(), d0 + 1, "exp, read by the pending t + t, was dropped");
    nd_free(s); /* t + t, then exp behind the live neg */
    cr_expect_eq(dropped_now(), d0 + 3, "t + t and its dead input: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));

    nd_array *p = nd_sin(x), *q = nd_cos(x), *live2 = nd_abs(x), *m = nd_mul(p, q);
    nd_free(p);
    nd_free(q);
    cr_expect_eq(dropped_now(), d0 + 3, "sin or cos, read by the pending product, was dropped");
    nd_free(m); /* the product, then sin and cos behind the live abs */
    cr_expect_eq(dropped_now(), d0 + 6, "sin(x) * cos(x) and both inputs: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));

    nd_array *z = nd_square(x);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *w = nd_add(z, x);
    nd_free(z); /* its buffer: the add's reference alone */
    nd_free(w); /* the add goes, and the square's buffer with it */
    cr_expect_eq(dropped_now(), d0 + 7, "square(x) + x freed at once: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));
    nd_array *w2 = nd_add(live, x); /* over a value the sync computed */
    nd_free(w2);
    cr_expect_eq(dropped_now(), d0 + 8, "neg(x) + x freed at once: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));

    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *want_y = ref_unary(R_SQRT, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_n = ref_unary(R_NEG, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_a = ref_unary(R_ABS, rx, ND_FLOAT64, ND_FLOAT64);
    ndt_check(y, want_y, 1e-12, 0, NULL, "sqrt");
    ndt_check(live, want_n, 0, 0, NULL, "neg");
    ndt_check(live2, want_a, 0, 0, NULL, "abs");
    nd_free(y); nd_free(live); nd_free(live2); nd_free(x);
    ref_free(want_y); ref_free(want_n); ref_free(want_a); ref_free(rx);
}

/* Dead values in the middle of the pending graph (newer nodes live) go at
 * their last handle's free, with the inputs only they read; the nodes
 * after them are renumbered at the next flush (their buffers' writer
 * lists name them by index: a buffer stored to twice after the gone
 * nodes, a read that flushes part of the graph). Every live value is
 * checked against the float64 reference. */
NDT_TEST(lazy, dead_nodes_leave_from_the_middle_of_the_graph) {
    restart_no_early_flushes();
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(37), 0.5, 2);
    nd_array *x = ndt_upload(rx);
    nd_array *acc = nd_copy(x);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());

    uint64_t d0 = dropped_now();
    nd_array *t = nd_exp(x), *u = nd_sin(t), *keep = nd_sqrt(x);
    nd_free(t); /* u reads it */
    cr_expect_eq(dropped_now(), d0, "exp, read by the pending sin, was dropped");
    nd_free(u); /* sin is dead, then exp: neither is the newest node */
    cr_expect_eq(dropped_now(), d0 + 2, "dead sin and exp behind a live sqrt: %llu dropped",
                 (unsigned long long)(dropped_now() - d0));
    /* acc = (acc + keep) * x, two stores with a dead value between them */
    nd_array *sum = nd_add(acc, keep);
    cr_assert_eq(nd_assign(acc, sum), ND_OK, "%s", nd_last_error());
    nd_free(sum);
    nd_array *g = nd_neg(x), *h = nd_abs(x);
    nd_free(g);
    cr_expect_eq(dropped_now(), d0 + 3, "the dead neg between two stores stayed");
    nd_array *prod = nd_mul(acc, x);
    cr_assert_eq(nd_assign(acc, prod), ND_OK, "%s", nd_last_error());
    nd_free(prod);
    nd_array *late = nd_square(x), *later = nd_tanh(x);
    nd_free(late);
    /* A read flushes what sqrt needs; the rest stays pending, renumbered. */
    ref_arr *want_keep = ref_unary(R_SQRT, rx, ND_FLOAT64, ND_FLOAT64);
    ndt_check(keep, want_keep, 1e-12, 0, NULL, "sqrt read with gone nodes pending");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *s1 = ref_binary(R_ADD, rx, want_keep, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_acc = ref_binary(R_MUL, s1, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_h = ref_unary(R_ABS, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *want_later = ref_unary(R_TANH, rx, ND_FLOAT64, ND_FLOAT64);
    ndt_check(acc, want_acc, 1e-12, 0, NULL, "(acc + sqrt(x)) * x, stored twice");
    ndt_check(h, want_h, 0, 0, NULL, "abs");
    ndt_check(later, want_later, 1e-12, 0, NULL, "tanh");
    nd_free(keep); nd_free(h); nd_free(later); nd_free(acc); nd_free(x);
    ref_free(rx); ref_free(want_keep); ref_free(s1); ref_free(want_acc); ref_free(want_h);
    ref_free(want_later);
}

/* One loop body's structure, flushed again with a different constant,
 * dtype, broadcast, view offset or transposition: each must be planned for
 * what it is (the plan key hashes structure; a constant is a parameter,
 * and only it may share a plan). Against float64 host references. */
NDT_TEST(lazy, plan_cache_tells_apart_same_shaped_bodies) {
    restart_no_early_flushes();
    enum { N = 24 };
    double hx[N * N], hy[N];
    NDT_RNG(r);
    for (int i = 0; i < N * N; i++) hx[i] = ndt_uniform(&r, -2, 2);
    for (int i = 0; i < N; i++) hy[i] = ndt_uniform(&r, -2, 2);
    nd_array *x64 = nd_from_host(hx, ND_FLOAT64, ND_SHAPE(N, N));
    nd_array *x32 = nd_astype(x64, ND_FLOAT32);
    nd_array *y = nd_from_host(hy, ND_FLOAT64, ND_SHAPE(N));
    nd_array *y1 = nd_from_host(hy, ND_FLOAT64, ND_SHAPE(1));
    nd_array *xt = nd_transpose(x64, NULL);
    nd_array *xa = nd_view(x64, "1:, :-1"), *xb = nd_view(x64, ":-1, 1:"), *ys = nd_view(y, ":-1");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int round = 0; round < 3; round++) {
        for (int body = 0; body < 6; body++) {
            const double c = 0.25 + 0.5 * round + body; /* a new constant every time */
            nd_array *a = body == 1 ? x32 : body == 3 ? xt : body == 4 ? xa : body == 5 ? xb : x64;
            nd_array *b = body == 2 ? y1 : body >= 4 ? ys : y;
            /* z = a * c + b: one structure, six kinds of operands */
            nd_array *cs = nd_scalar(c), *ac = nd_mul(a, cs);
            nd_array *z = nd_add(ac, b);
            cr_assert_not_null(z, "%s", nd_last_error());
            cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
            const int64_t rows = nd_shape(z)[0], cols = nd_shape(z)[1];
            double got[N * N];
            nd_array *z64 = nd_astype(z, ND_FLOAT64);
            cr_assert_eq(nd_to_host(z64, got, sizeof got), ND_OK, "%s", nd_last_error());
            /* float32 * weak scalar stays float32 (NEP 50), then + float64 */
            cr_expect_eq(nd_dtype_of(z), ND_FLOAT64);
            int bad = 0;
            for (int64_t i = 0; i < rows && !bad; i++)
                for (int64_t j = 0; j < cols && !bad; j++) {
                    int64_t ri = body == 4 ? i + 1 : i, rj = body == 5 ? j + 1 : j;
                    double xv = body == 3 ? hx[rj * N + ri] : hx[ri * N + rj];
                    if (body == 1) xv = (float)xv;
                    double want = xv * c + (body == 2 ? hy[0] : hy[j]);
                    double tol = body == 1 ? 1e-6 * (1 + fabs(want)) : 1e-13 * (1 + fabs(want));
                    if (!(fabs(got[i * cols + j] - want) <= tol)) {
                        cr_expect(0, "round %d body %d: z[%lld,%lld] = %.17g, want %.17g", round, body,
                                  (long long)i, (long long)j, got[i * cols + j], want);
                        bad = 1;
                    }
                }
            nd_free(z64);
            nd_free(z);
            nd_free(ac);
            nd_free(cs);
        }
    }
    nd_free(x64); nd_free(x32); nd_free(y); nd_free(y1); nd_free(xt); nd_free(xa); nd_free(xb);
    nd_free(ys);
}

NDT_TEST(lazy, scopes_keep_and_release) {
    nd_array *outer_kept;
    nd_scope_begin();
    nd_array *a = nd_arange(ND_FLOAT64, 0, 6, 1);
    nd_scope_begin();
    nd_array *b = nd_mul(a, nd_scalar(2.0));
    nd_array *c = nd_add(b, nd_scalar(1.0));
    nd_keep(c); /* to the outer scope */
    nd_scope_end();
    nd_array *d = nd_mul(c, c);
    outer_kept = nd_keep(d); /* to the caller */
    cr_expect_eq(outer_kept, d, "nd_keep returns its argument");
    nd_scope_end();
    cr_expect_null(nd_keep(NULL));
    nd_clear_error();
    double got[6];
    cr_assert_eq(nd_to_host(outer_kept, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], (2.0 * i + 1) * (2.0 * i + 1), "kept[%d] = %g", i, got[i]);
    nd_free(outer_kept);
}

NDT_TEST(lazy, scope_end_releases_memory) {
    enum { N = 1 << 18 }; /* 2 MiB of float64 */
    double *h = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) h[i] = i * 0.5;
    nd_stats s0, s1, s2;
    cr_assert_eq(nd_sync(), ND_OK);
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *x = nd_from_host(h, ND_FLOAT64, ND_SHAPE(N));
    nd_array *y = nd_add(x, nd_scalar(1.0));
    cr_assert(y, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    cr_expect_geq(s1.bytes_allocated, s0.bytes_allocated + (uint64_t)N * 8,
                  "two live 2 MiB arrays should show in bytes_allocated (%llu -> %llu)",
                  (unsigned long long)s0.bytes_allocated, (unsigned long long)s1.bytes_allocated);
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s2);
    cr_expect_leq(s2.bytes_allocated + (uint64_t)N * 8, s1.bytes_allocated,
                  "nd_scope_end must release the scope's arrays (%llu -> %llu bytes)",
                  (unsigned long long)s1.bytes_allocated, (unsigned long long)s2.bytes_allocated);
    free(h);
}

NDT_TEST(lazy, auto_flush_with_small_max_pending) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.max_pending = 8;
    /* the replayed scope's body calls would join into one loop call
     * (ND_BODY_LOOPS), leaving nothing pending to count */
    cfg.body_loops = -1;
    ndt_restart(&cfg);
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(33), -1, 1);
    nd_array *x = ndt_upload(rx);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    double ref[33];
    for (int i = 0; i < 33; i++) ref[i] = ref_getd(rx, i);
    for (int it = 0; it < 100; it++) {
        nd_scope_begin();
        nd_array *y = nd_add(nd_mul(x, nd_scalar(0.9)), nd_sin(x));
        nd_keep(y);
        nd_scope_end();
        nd_free(x);
        x = y;
        for (int i = 0; i < 33; i++) ref[i] = ref[i] * 0.9 + sin(ref[i]);
    }
    nd_get_stats(&s1);
    cr_expect_gt(s1.flushes, s0.flushes, "400 pending nodes with max_pending=8 must flush on their own");
    ref_arr *want = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){33}, ref);
    ndt_check(x, want, 1e-10, 1e-10, NULL, "100 iterations with auto-flush");
    nd_free(x);
    ref_free(rx); ref_free(want);
}

/* Early flushes: after an nd_sync, a loop over small arrays is flushed
 * after 12 nodes, 24 more, ... (the device starts while the rest is
 * recorded). A loop that stores nothing is flushed a quarter later and not
 * before 80 nodes (after 80, then 200 more): 300 nodes make 2 flushes before the nd_sync
 * and the third at it, with the same answers. Off, or with arrays over 64
 * MiB, nothing runs before the nd_sync. */
static void small_loop(nd_array **x, double *ref, int n, int iters) {
    for (int it = 0; it < iters; it++) {
        nd_scope_begin();
        nd_array *y = nd_keep(nd_add(nd_mul(*x, nd_scalar(0.9)), nd_sin(*x)));
        nd_scope_end();
        nd_free(*x);
        *x = y;
        for (int i = 0; i < n; i++) ref[i] = ref[i] * 0.9 + sin(ref[i]);
    }
}

static uint64_t flushes(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.flushes;
}

/* A small loop's state: x (33 random float64 values, uploaded, copied
 * and synced) and its host reference. */
typedef struct {
    ref_arr *rx;
    nd_array *x0, *x;
    double ref[33];
} small_loop_state;

static void small_loop_begin(small_loop_state *l) {
    NDT_RNG(r);
    l->rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(33), -1, 1);
    l->x0 = ndt_upload(l->rx);
    l->x = nd_copy(l->x0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 33; i++) l->ref[i] = ref_getd(l->rx, i);
}

/* Checks x against the reference, then frees the state. */
static void small_loop_end(small_loop_state *l, const char *what) {
    ref_arr *want = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){33}, l->ref);
    ndt_check(l->x, want, 1e-10, 1e-10, NULL, "%s", what);
    nd_free(l->x);
    nd_free(l->x0);
    ref_free(l->rx);
    ref_free(want);
}

/* (Scope replay off in these two: they count the nodes a plain recording
 * makes, which a replayed loop makes fewer of.) */
NDT_TEST(lazy, early_flushes_of_small_loops) {
    for (int on = 0; on < 2; on++) {
        ndt_restart(&(nd_config){.struct_size = sizeof(nd_config), .early_flush = on ? 1 : -1, .scope_replay = -1});
        small_loop_state l;
        small_loop_begin(&l);
        uint64_t f0 = flushes();
        small_loop(&l.x, l.ref, 33, 100); /* 3 nodes an iteration: 300 */
        uint64_t early = flushes() - f0;
        cr_expect_eq(early, on ? 2u : 0u, "early flushes %s: %llu flushes before nd_sync", on ? "on" : "off",
                     (unsigned long long)early);
        small_loop_end(&l, on ? "100 iterations, early flushes on" : "100 iterations, early flushes off");
    }
}

/* The early flushes' count doubles up to 1024 nodes and stays there
 * (runtime.h's ND_EARLY_FLUSH_MAX_NODES): a statement storing nothing is
 * flushed a quarter further on (1280), so no flush of a long loop, the
 * last one that nd_sync waits for included, holds more than that and one
 * statement. Doubling without end flushed 9000 nodes as 80, 200, 500,
 * 1250, 3125 and the rest. */
NDT_TEST(lazy, early_flushes_stop_doubling) {
    ndt_restart(&(nd_config){.struct_size = sizeof(nd_config), .early_flush = 1, .scope_replay = -1});
    small_loop_state l;
    small_loop_begin(&l);
    nd_stats s;
    nd_get_stats(&s);
    uint64_t seen = s.flushes, since = s.nodes_recorded, longest = 0, early = 0;
    for (int it = 0; it < 3000; it++) {
        small_loop(&l.x, l.ref, 33, 1); /* 3 nodes */
        nd_get_stats(&s);
        if (s.flushes != seen) { /* flushed before this iteration's first node */
            uint64_t held = s.nodes_recorded - 3 - since;
            if (held > longest) longest = held;
            since = s.nodes_recorded - 3;
            seen = s.flushes;
            early++;
        }
    }
    nd_get_stats(&s);
    uint64_t last = s.nodes_recorded - since;
    cr_expect_geq(early, 7u, "9000 nodes flushed early only %llu times", (unsigned long long)early);
    cr_expect_leq(longest, 1280u + 3u, "an early flush held %llu nodes", (unsigned long long)longest);
    cr_expect_leq(last, 1280u + 3u, "nd_sync was left %llu nodes", (unsigned long long)last);
    small_loop_end(&l, "3000 iterations with early flushes");
}

/* A loop of in-place statements (5 nodes, then the store) is flushed
 * early only after a store, before the next statement's first node: never
 * between a statement's nodes, whose partial values would otherwise be
 * written out. And after an even number of stores to the array: an odd
 * store chain would start with a full copy of it. */
NDT_TEST(lazy, early_flushes_fall_between_statements) {
    ndt_restart(&(nd_config){.early_flush = 1});
    NDT_RNG(r);
    ref_arr *ru = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(40), -1, 1);
    nd_array *u0 = ndt_upload(ru), *u = nd_copy(u0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    double ref[40];
    for (int i = 0; i < 40; i++) ref[i] = ref_getd(ru, i);
    uint64_t f0 = flushes(), seen = f0;
    int last_flushed = 0;
    for (int it = 0; it < 60; it++) {
        nd_scope_begin();
        nd_array *c = nd_view(u, "1:-1");
        /* A flush due runs before a statement's first node is recorded. */
        nd_array *first = nd_add(c, nd_view(u, ":-2"));
        uint64_t before = flushes();
        if (before != seen) {
            cr_expect_eq((it - last_flushed) % 2, 0, "an early flush took the odd number %d of sweeps (%d..%d)",
                         it - last_flushed, last_flushed, it - 1);
            last_flushed = it;
            seen = before;
        }
        nd_array *v = nd_mul(nd_scalar(0.25), nd_add(nd_add(first, nd_view(u, "2:")), c));
        uint64_t mid = flushes();
        cr_assert_eq(nd_assign(c, v), ND_OK, "%s", nd_last_error());
        nd_scope_end();
        cr_expect_eq(mid, before, "iteration %d: a flush fell inside the statement", it);
        double nxt[40];
        memcpy(nxt, ref, sizeof nxt);
        for (int i = 1; i < 39; i++) nxt[i] = 0.25 * (((ref[i] + ref[i - 1]) + ref[i + 1]) + ref[i]);
        memcpy(ref, nxt, sizeof nxt);
    }
    uint64_t early = flushes() - f0;
    cr_expect_geq(early, 2u, "300 nodes of statements flushed only %llu times before nd_sync", (unsigned long long)early);
    ref_arr *want = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){40}, ref);
    ndt_check(u, want, 1e-12, 1e-12, NULL, "60 in-place sweeps with early flushes");
    nd_free(u);
    nd_free(u0);
    ref_free(ru);
    ref_free(want);
}

/* An early flush runs before the node after the store is recorded, when
 * the statement's temporaries (held by its scope until nd_scope_end) are
 * gone: it writes no more values to memory than one flush at nd_sync. */
NDT_TEST(lazy, early_flushes_write_no_statement_temporaries) {
    uint64_t written[2] = {0, 0}, early[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        ndt_restart(&(nd_config){.early_flush = on ? 1 : -1});
        NDT_RNG(r);
        ref_arr *ru = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(64), -1, 1);
        nd_array *u0 = ndt_upload(ru), *u = nd_copy(u0);
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        nd_stats s0, s1;
        nd_get_stats(&s0);
        for (int it = 0; it < 60; it++) {
            nd_scope_begin();
            nd_array *c = nd_view(u, "1:-1");
            nd_array *v = nd_mul(nd_scalar(0.25), nd_add(nd_add(nd_add(c, nd_view(u, ":-2")), nd_view(u, "2:")), c));
            cr_assert_eq(nd_assign(c, v), ND_OK, "%s", nd_last_error());
            nd_scope_end();
        }
        early[on] = flushes() - s0.flushes;
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        nd_get_stats(&s1);
        written[on] = s1.values_materialised - s0.values_materialised;
        nd_free(u);
        nd_free(u0);
        ref_free(ru);
    }
    cr_expect_geq(early[1], 2u, "60 sweeps flushed early only %llu times", (unsigned long long)early[1]);
    cr_expect_eq(written[1], written[0], "values written to memory: %llu with early flushes, %llu with one flush",
                 (unsigned long long)written[1], (unsigned long long)written[0]);
}

NDT_TEST(lazy, no_early_flushes_of_large_arrays) {
    /* 80 MiB: the nodes are dropped as dead before anything would run. */
    nd_array *big = nd_zeros(ND_FLOAT32, ND_SHAPE((int64_t)20 << 20));
    cr_assert(big, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t f0 = flushes();
    nd_scope_begin();
    nd_array *t = big;
    for (int it = 0; it < 200; it++) t = nd_add(t, nd_scalar(1.0));
    uint64_t early = flushes() - f0;
    nd_scope_end();
    cr_expect_eq(early, 0u, "200 nodes on an 80 MiB array flushed %llu times before nd_sync",
                 (unsigned long long)early);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(big);
}

NDT_TEST(lazy, interleaved_reads) {
    /* reads in the middle of recording run only what they need and the rest stays right */
    nd_array *x = nd_arange(ND_INT64, 0, 100, 1);
    int64_t total = 0;
    for (int i = 0; i < 10; i++) {
        nd_array *v = nd_view(x, i % 2 ? "1::2" : "::2");
        nd_array *s = nd_sum(v, 0);
        total += (int64_t)nd_item(s);
        cr_assert_eq(nd_fill(v, i), ND_OK, "%s", nd_last_error());
        nd_free(v);
        nd_free(s);
    }
    /* i=0 reads the evens (2450), i=1 the odds (2500); from i=2 on each half
     * was filled with i-2 two steps earlier: 50 * (i - 2) */
    int64_t w = 2450 + 2500;
    for (int i = 2; i < 10; i++) w += 50 * (i - 2);
    cr_expect_eq(total, w, "sum of sums %lld, want %lld", (long long)total, (long long)w);
    nd_free(x);
}

/* Five elementwise ops over one input: kernels run with fusion on must be
 * fewer than with it off (where every node is its own kernel). */
static uint64_t kernels_for_chain(void) {
    nd_stats a, b;
    nd_array *x = nd_linspace(ND_FLOAT32, -1, 1, 4096);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&a);
    nd_scope_begin();
    nd_array *y = nd_add(nd_sqrt(nd_add(nd_square(nd_sin(x)), nd_scalar(1.0))), nd_cos(x));
    nd_keep(y);
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&b);
    float got[4096];
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 4096; i += 97) {
        double v = -1 + 2.0 * i / 4095;
        double w = sqrt(sin(v) * sin(v) + 1) + cos(v);
        cr_expect(fabs(got[i] - w) <= 1e-5 * fabs(w) + 1e-6, "y[%d] = %g, want %g", i, got[i], w);
    }
    nd_free(x);
    nd_free(y);
    return NDT_KERNELS(b) - NDT_KERNELS(a);
}

NDT_TEST(lazy, fusion_runs_fewer_kernels) {
    uint64_t on = kernels_for_chain();
    nd_config off = {0};
    off.fusion = -1;
    ndt_restart(&off);
    uint64_t unfused = kernels_for_chain();
    cr_expect_geq(unfused, 5, "fusion off: each of the 6 ops is a kernel, ran %llu", (unsigned long long)unfused);
    cr_expect_lt(on, unfused, "fusion on ran %llu kernels, off %llu", (unsigned long long)on,
                 (unsigned long long)unfused);
    cr_expect_leq(on, 2, "one fused kernel expected for a 6-op chain, ran %llu", (unsigned long long)on);
    /* the environment variable does the same as the config field */
    setenv("ND_FUSION", "0", 1);
    ndt_restart(NULL);
    uint64_t env_off = kernels_for_chain();
    unsetenv("ND_FUSION");
    cr_expect_eq(env_off, unfused, "ND_FUSION=0 ran %llu kernels, nd_config.fusion=-1 ran %llu",
                 (unsigned long long)env_off, (unsigned long long)unfused);
}

/* A repeated loop body (replayed as a captured CUDA graph where supported)
 * gives the same answers with graph capture off. */
static ref_arr *heat_loop(void) {
    nd_array *c = nd_zeros(ND_FLOAT64, ND_SHAPE(24, 24));
    nd_array *top = nd_view(c, "0");
    cr_assert_eq(nd_fill(top, 1.0), ND_OK, "%s", nd_last_error());
    nd_free(top);
    for (int it = 0; it < 12; it++) {
        nd_scope_begin();
        nd_array *center = nd_view(c, "1:-1, 1:-1");
        nd_array *s = nd_add(nd_add(nd_view(c, ":-2, 1:-1"), nd_view(c, "2:, 1:-1")),
                             nd_add(nd_view(c, "1:-1, :-2"), nd_view(c, "1:-1, 2:")));
        cr_assert_eq(nd_assign(center, nd_mul(s, nd_scalar(0.25))), ND_OK, "%s", nd_last_error());
        nd_scope_end();
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    }
    ref_arr *out = ndt_download(c);
    nd_free(c);
    return out;
}

NDT_TEST(lazy, cuda_graphs_on_and_off_agree) {
    ref_arr *on = heat_loop();
    nd_config cfg = {0};
    cfg.cuda_graphs = -1;
    ndt_restart(&cfg);
    ref_arr *off = heat_loop();
    /* reference: the same Jacobi in C */
    double g[576], t[576];
    for (int i = 0; i < 576; i++) g[i] = i < 24 ? 1.0 : 0.0;
    for (int it = 0; it < 12; it++) {
        memcpy(t, g, sizeof t);
        for (int i = 1; i < 23; i++)
            for (int j = 1; j < 23; j++)
                g[i * 24 + j] = ((t[(i - 1) * 24 + j] + t[(i + 1) * 24 + j]) +
                                 (t[i * 24 + j - 1] + t[i * 24 + j + 1])) * 0.25;
    }
    for (int i = 0; i < 576; i++) {
        cr_expect(fabs(ref_getd(on, i) - g[i]) <= 1e-12, "graphs on: c[%d] = %.17g, want %.17g", i, ref_getd(on, i), g[i]);
        cr_expect(fabs(ref_getd(off, i) - g[i]) <= 1e-12, "graphs off: c[%d] = %.17g, want %.17g", i, ref_getd(off, i), g[i]);
    }
    ref_free(on);
    ref_free(off);
}

/* Output k of plan_of_new_kernels, elementwise (four different structures,
 * so four kernels that share no code). */
static double new_kernel_value(int k, double x) {
    switch (k) {
    case 0: return sin(x) * 1.5 + 0.25;
    case 1: return exp(-(x * x));
    case 2: return sqrt(fabs(x)) + cos(x);
    default: return tanh(x * 2.0) - x;
    }
}
static nd_array *new_kernel_record(int k, nd_array *x) {
    switch (k) {
    case 0: return nd_add(nd_mul(nd_sin(x), nd_scalar(1.5)), nd_scalar(0.25));
    case 1: return nd_exp(nd_neg(nd_mul(x, x)));
    case 2: return nd_add(nd_sqrt(nd_abs(x)), nd_cos(x));
    default: return nd_sub(nd_tanh(nd_mul(x, nd_scalar(2.0))), x);
    }
}

/* One flush of four new kernels (four outputs of different lengths and op
 * structures), as a program's first run on an empty kernel cache makes:
 * on CUDA the plan's new kernels compile side by side first
 * (nd_cuda_kcache_prefetch), and each must still compile exactly once:
 * four compiles, none for the same plan again, and none
 * in a new runtime on the same cache directory, whose disk holds them.
 * Each output against float64 on the host, every round with new values. */
NDT_TEST(lazy, a_plan_of_new_kernels_compiles_each_kernel_once) {
    char dir[512];
    ndt_restart_compiling(dir, sizeof dir, "new-kernels");
    NDT_RNG(r);
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            nd_config cfg = ND_CONFIG_INIT;
            cfg.cache_dir = dir;
            ndt_restart(&cfg);
        }
        nd_scope_begin();
        ref_arr *x[4], *want[4];
        nd_array *y[4];
        for (int k = 0; k < 4; k++) {
            const int64_t n = 1000 + 37 * k;
            x[k] = ndt_rand(&r, ND_FLOAT64, 1, &n, -3, 3);
            want[k] = ref_new(ND_FLOAT64, 1, &n);
            for (int64_t i = 0; i < n; i++) ref_setd(want[k], i, new_kernel_value(k, ref_getd(x[k], i)));
        }
        nd_array *nx[4];
        for (int k = 0; k < 4; k++) nx[k] = ndt_upload(x[k]);
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error()); /* the uploads alone */
        nd_stats s0, s1;
        nd_get_stats(&s0);
        for (int k = 0; k < 4; k++) y[k] = new_kernel_record(k, nx[k]);
        cr_assert_eq(nd_sync(), ND_OK, "round %d: %s", round, nd_last_error());
        nd_get_stats(&s1);
        const uint64_t compiled = s1.kernels_compiled - s0.kernels_compiled, run = s1.kernels_run - s0.kernels_run;
        /* four kernels (more runs when split over several devices: each
         * piece runs the same kernel) */
        cr_expect_geq(run, 4, "round %d: %llu kernels run for four unrelated outputs", round, (unsigned long long)run);
        if (round == 0)
            cr_expect_eq(compiled, 4, "first run: %llu kernels compiled for four new ones (%llu runs)",
                         (unsigned long long)compiled, (unsigned long long)run);
        else
            cr_expect_eq(compiled, 0, "round %d (%s): %llu kernels compiled, all were cached", round,
                         round == 1 ? "same runtime" : "new runtime, same cache directory", (unsigned long long)compiled);
        for (int k = 0; k < 4; k++) {
            char what[64];
            snprintf(what, sizeof what, "round %d, output %d", round, k);
            ndt_check(y[k], want[k], 1e-12, 1e-12, NULL, what);
            ref_free(x[k]);
            ref_free(want[k]);
        }
        nd_scope_end();
    }
    ndt_restart(NULL);
    ndt_remove_dir(dir);
}
