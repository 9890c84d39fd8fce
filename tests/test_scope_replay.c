/* Scope replay (ND_SCOPE_REPLAY=1, frontend/scope_replay.h): a loop whose
 * scope repeats the calls of its last run is recorded as one body call an
 * iteration, with the bits of the plain recording; anything that differs
 * (another op, input, scalar value or shape, a read, a free, a nested
 * scope, a sync) undoes the replay first, so the program sees the values
 * and handles it would have without it. Values against float64 references
 * on fresh random inputs with edge values; counts of replayed and undone
 * scopes and of recorded nodes, so a replay that silently stops (or never
 * starts) fails. Every test runs on both backends. */
#include "common.h"

#include <pthread.h>

static nd_stats stats(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s;
}

/* Restarts the runtime with scope replay on or off (and early flushes off
 * where kernels are compared). */
static void restart_replay(int on, int no_early_flush) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.scope_replay = on ? 1 : -1;
    /* the replayed calls one by one: joined into a loop call (ND_BODY_LOOPS,
     * test_loop_calls.c) their kernel is another, whose bits the CUDA
     * generator's contractions may move */
    cfg.body_loops = -1;
    if (no_early_flush) cfg.early_flush = -1;
    ndt_restart(&cfg);
}

#define REPLAY_TEST(name) NDT_TEST(scope_replay, name)

/* small_ops' statement in a scope: one call site for every iteration. */
static nd_array *small_step(nd_array *x) {
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x))));
    nd_scope_end();
    return y;
}

static nd_array *small_loop(nd_array *x0, int iters) {
    nd_array *x = nd_retain(x0);
    for (int i = 0; i < iters; i++) {
        nd_array *y = small_step(x);
        cr_assert(y, "iteration %d: %s", i, nd_last_error());
        nd_free(x);
        x = y;
    }
    return x;
}

/* The float32 recurrence on the host, one step per element (float64
 * arithmetic rounded to float32 as nd's kernels round it). */
static ref_arr *small_ref(const ref_arr *h, int iters) {
    ref_arr *w = ref_new(ND_FLOAT64, 1, (int64_t[]){h->size});
    for (int64_t i = 0; i < h->size; i++) {
        float v = (float)ref_getd(h, i);
        for (int t = 0; t < iters; t++) v = (float)((double)(float)(v * 0.99f) + (double)(float)(0.01f * sinf(v)));
        ref_setd(w, i, v);
    }
    ref_arr *w32 = ref_astype(w, ND_FLOAT32);
    ref_free(w);
    return w32;
}

REPLAY_TEST(a_repeated_scope_is_one_body_call_with_the_plain_bits) {
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 1000, -3, 3);
    const int iters = 300;
    /* the plain recording, replay off */
    restart_replay(0, 1);
    nd_array *x = ndt_upload(h);
    uint64_t n0 = stats().nodes_recorded;
    nd_array *plain = small_loop(x, iters);
    cr_expect_eq(stats().nodes_recorded - n0, 4 * iters, "4 nodes an iteration without replay");
    cr_expect_eq(stats().scopes_replayed, 0);
    ref_arr *gp = ndt_download(plain);
    nd_free(plain);
    nd_free(x);
    /* the same loop, replayed */
    restart_replay(1, 1);
    x = ndt_upload(h);
    n0 = stats().nodes_recorded;
    nd_array *rep = small_loop(x, iters);
    nd_stats s = stats();
    cr_expect_eq(s.scopes_replayed, iters - 1, "every iteration but the first replayed: %llu",
                 (unsigned long long)s.scopes_replayed);
    cr_expect_eq(s.scope_replays_undone, 0);
    cr_expect_eq(s.nodes_recorded - n0, 4 + (iters - 1), "one node an iteration after the first: %llu",
                 (unsigned long long)(s.nodes_recorded - n0));
    ref_arr *gr = ndt_download(rep);
    ndt_expect_same_bits(gr, gp, "300 iterations replayed against recorded");
    /* and both against the host's float32 recurrence */
    ref_arr *want = small_ref(h, iters);
    ndt_check(rep, want, 2e-5, 1e-6, NULL, "against the host");
    ref_free(want);
    ref_free(gr);
    ref_free(gp);
    nd_free(rep);
    nd_free(x);
    ref_free(h);
}

/* One call site whose calls vary with `variant`:
 * 0: r = x*0.5 + sin(y)      (the learnt calls)
 * 1: cos instead of sin      (an op that differs, mid-scope)
 * 2: 0.25 instead of 0.5     (a scalar of another value)
 * 3: reads x*0.5 inside the scope before the add (nd_to_host)
 * 4: frees x*0.5 inside the scope
 * 5: a nested scope inside
 * 6: nd_sync inside
 * 7: nd_shape of x*0.5 (an accessor) and nd_dtype_of, then as 0
 * 8: b + a                   (the same values, arguments the other way)
 * 9: 0.5 * x                 (the scalar placeholder where x was learnt) */
static nd_array *varied_step(nd_array *x, nd_array *y, int variant, double *read_back) {
    nd_scope_begin();
    nd_array *a = variant == 9 ? nd_mul(nd_scalar(0.5), x) : nd_mul(x, nd_scalar(variant == 2 ? 0.25 : 0.5));
    if (variant == 3) cr_assert_eq(nd_to_host(a, read_back, sizeof(double) * 4), ND_OK, "%s", nd_last_error());
    nd_array *b = variant == 1 ? nd_cos(y) : nd_sin(y);
    nd_array *r = variant == 8 ? nd_add(b, a) : nd_add(a, b);
    if (variant == 4) nd_free(a);
    if (variant == 5) {
        nd_scope_begin();
        nd_free(nd_neg(r));
        nd_scope_end();
    }
    if (variant == 6) cr_assert_eq(nd_sync(), ND_OK);
    if (variant == 7) {
        cr_expect_eq(nd_ndim(a), 1);
        cr_expect_eq(nd_shape(a)[0], 4);
        cr_expect_eq(nd_dtype_of(a), ND_FLOAT64);
    }
    nd_keep(r);
    nd_scope_end();
    return r;
}

REPLAY_TEST(whatever_differs_undoes_the_replay_and_the_values_stay_right) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *hx = ndt_edge_floats(&r, ND_FLOAT64, 4, -5, 5), *hy = ndt_rand(&r, ND_FLOAT64, 1, (int64_t[]){4}, -3, 3);
    nd_array *x = ndt_upload(hx), *y = ndt_upload(hy);
    /* Each variant comes after a learnt scope and a replay of it, so the
     * site is ready each time; the one after it learns again. */
    static const int order[] = {0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 5, 0, 0, 6, 0, 0, 7, 0, 8, 0, 0, 9, 0};
    const int n = (int)(sizeof order / sizeof *order);
    int ready = 0;
    uint64_t replayed = 0, undone = 0;
    for (int t = 0; t < n; t++) {
        const int v = order[t];
        nd_stats s0 = stats();
        double got3[4] = {-7, -7, -7, -7};
        nd_array *res = varied_step(x, y, v, got3);
        cr_assert(res, "step %d (variant %d): %s", t, v, nd_last_error());
        nd_stats s1 = stats();
        /* variant 7's accessors read the placeholder's fields: the replay
         * goes on; the other variants differ from the learnt calls */
        const int differs = v != 0 && v != 7;
        const uint64_t want_replayed = ready && !differs, want_undone = ready && differs;
        cr_expect_eq(s1.scopes_replayed - s0.scopes_replayed, want_replayed, "step %d (variant %d) replayed", t, v);
        cr_expect_eq(s1.scope_replays_undone - s0.scope_replays_undone, want_undone, "step %d (variant %d) undone",
                     t, v);
        ready = !want_undone;
        replayed += s1.scopes_replayed - s0.scopes_replayed;
        undone += s1.scope_replays_undone - s0.scope_replays_undone;
        ref_arr *want = ref_new(ND_FLOAT64, 1, (int64_t[]){4});
        for (int64_t i = 0; i < 4; i++) {
            double xv = ref_getd(hx, i), yv = ref_getd(hy, i);
            ref_setd(want, i, xv * (v == 2 ? 0.25 : 0.5) + (v == 1 ? cos(yv) : sin(yv)));
            if (v == 3) {
                double w = xv * 0.5;
                cr_expect(got3[i] == w || (isnan(w) && isnan(got3[i])), "variant 3 read x*0.5[%lld]: %g vs %g",
                          (long long)i, got3[i], w);
            }
        }
        ndt_check(res, want, 1e-15, 0, NULL, "a variant");
        ref_free(want);
        nd_free(res);
    }
    cr_expect_eq(replayed, 10, "replays: %llu", (unsigned long long)replayed);
    cr_expect_eq(undone, 8, "undone: %llu", (unsigned long long)undone);
    nd_free(x);
    nd_free(y);
    ref_free(hx);
    ref_free(hy);
}

/* Inputs of another shape or dtype, a strided view, and the same array
 * passed where the learnt call had two: only the traced shape and dtype
 * replay; views of them do. */
static nd_array *two_input_step(nd_array *x, nd_array *y) {
    nd_scope_begin();
    nd_array *r = nd_keep(nd_sub(nd_mul(x, y), nd_scalar_int(3)));
    nd_scope_end();
    return r;
}

REPLAY_TEST(inputs_of_other_shapes_and_dtypes_undo_views_replay) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *ha = ndt_rand(&r, ND_INT32, 2, (int64_t[]){3, 4}, -100, 100);
    ref_setd(ha, 0, (double)INT32_MIN);
    ref_arr *hb = ndt_rand(&r, ND_INT32, 2, (int64_t[]){3, 4}, -100, 100);
    nd_array *a = ndt_upload(ha), *b = ndt_upload(hb);
    /* int32 * int32 - 3 wraps as int32: reference by hand */
    ref_arr *want = ref_new(ND_INT32, 2, (int64_t[]){3, 4});
    for (int64_t i = 0; i < 12; i++)
        ref_setd(want, i, (double)(int32_t)((uint32_t)((int64_t)ref_getd(ha, i) * (int64_t)ref_getd(hb, i)) - 3u));
    for (int t = 0; t < 3; t++) { /* learn, replay, replay */
        nd_array *res = two_input_step(a, b);
        ndt_check(res, want, 0, 0, NULL, "int32");
        nd_free(res);
    }
    cr_expect_eq(stats().scopes_replayed, 2);
    /* b's transpose of its transpose: a strided (3, 4) view replays */
    nd_array *bt = nd_transpose(b, NULL), *bv = nd_transpose(bt, NULL);
    nd_free(bt);
    nd_array *res = two_input_step(a, bv);
    ndt_check(res, want, 0, 0, NULL, "a view input");
    nd_free(res);
    nd_free(bv);
    cr_expect_eq(stats().scopes_replayed, 3);
    cr_expect_eq(stats().scope_replays_undone, 0);
    /* float32 inputs: undone, and NumPy's float32 result */
    nd_array *af = nd_astype(a, ND_FLOAT32), *bf = nd_astype(b, ND_FLOAT32);
    res = two_input_step(af, bf);
    cr_expect_eq(nd_dtype_of(res), ND_FLOAT32);
    cr_expect_eq(stats().scope_replays_undone, 1);
    nd_free(res);
    /* a shape that does not broadcast: undone, and the op's own error */
    ref_arr *hc = ndt_rand(&r, ND_INT32, 1, (int64_t[]){5}, 0, 9);
    nd_array *c = ndt_upload(hc);
    ref_free(hc);
    for (int t = 0; t < 2; t++) { /* relearn int32 (3, 4), then replay */
        res = two_input_step(a, b);
        nd_free(res);
    }
    nd_clear_error();
    nd_scope_begin();
    nd_array *bad = nd_mul(a, c);
    cr_expect_null(bad);
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "%s", nd_last_error());
    cr_expect(strstr(nd_last_error(), "nd_mul") != NULL, "%s", nd_last_error());
    nd_scope_end();
    nd_clear_error();
    /* the same array as both inputs (learnt as two) replays */
    const uint64_t replayed = stats().scopes_replayed;
    res = two_input_step(a, a);
    cr_expect_eq(stats().scopes_replayed, replayed + 1);
    ref_arr *sq = ref_new(ND_INT32, 2, (int64_t[]){3, 4});
    for (int64_t i = 0; i < 12; i++)
        ref_setd(sq, i, (double)(int32_t)((uint32_t)((int64_t)ref_getd(ha, i) * (int64_t)ref_getd(ha, i)) - 3u));
    ndt_check(res, sq, 0, 0, NULL, "a * a - 3");
    nd_free(res);
    nd_free(c);
    nd_free(af);
    nd_free(bf);
    nd_free(a);
    nd_free(b);
    ref_free(sq);
    ref_free(want);
    ref_free(ha);
    ref_free(hb);
}

/* A scope that cannot be a body (two kept results; a reduction) records
 * as usual, and after three tries its call site is left alone. */
static void two_kept_step(nd_array *x, nd_array **p, nd_array **q) {
    nd_scope_begin();
    *p = nd_keep(nd_add(x, nd_scalar(1.0)));
    *q = nd_keep(nd_mul(x, nd_scalar(2.0)));
    nd_scope_end();
}

static nd_array *sum_step(nd_array *x) {
    nd_scope_begin();
    nd_array *r = nd_keep(nd_sum(nd_mul(x, x), ND_ALL_AXES));
    nd_scope_end();
    return r;
}

REPLAY_TEST(scopes_that_are_no_body_record_as_usual) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 64, -2, 2);
    nd_array *x = ndt_upload(h);
    for (int t = 0; t < 6; t++) {
        nd_array *p, *q;
        two_kept_step(x, &p, &q);
        ref_arr *wp = ref_new(ND_FLOAT32, 1, (int64_t[]){64}), *wq = ref_new(ND_FLOAT32, 1, (int64_t[]){64});
        for (int64_t i = 0; i < 64; i++) {
            ref_setd(wp, i, (float)(ref_getd(h, i) + 1.0));
            ref_setd(wq, i, (float)(ref_getd(h, i) * 2.0));
        }
        ndt_check(p, wp, 0, 0, NULL, "x + 1");
        ndt_check(q, wq, 0, 0, NULL, "x * 2");
        ref_free(wp);
        ref_free(wq);
        nd_free(p);
        nd_free(q);
        nd_array *s = sum_step(x);
        cr_assert(s, "%s", nd_last_error());
        nd_free(s);
    }
    cr_expect_eq(stats().scopes_replayed, 0);
    cr_expect_eq(stats().scope_replays_undone, 0);
    nd_free(x);
    ref_free(h);
}

/* Ten undone replays in a row are three at most: then the site is off. */
REPLAY_TEST(a_site_whose_scalars_change_every_time_is_turned_off) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h = ndt_rand(&r, ND_FLOAT64, 1, (int64_t[]){16}, -1, 1);
    nd_array *x = ndt_upload(h);
    for (int t = 0; t < 10; t++) {
        nd_scope_begin();
        nd_array *y = nd_keep(nd_mul(x, nd_scalar(1.0 + t)));
        nd_scope_end();
        ref_arr *w = ref_new(ND_FLOAT64, 1, (int64_t[]){16});
        for (int64_t i = 0; i < 16; i++) ref_setd(w, i, ref_getd(h, i) * (1.0 + t));
        ndt_check(y, w, 0, 0, NULL, "x * (1 + t)");
        ref_free(w);
        nd_free(y);
    }
    nd_stats s = stats();
    cr_expect_eq(s.scopes_replayed, 0);
    cr_expect_leq(s.scope_replays_undone, 3, "undone %llu times", (unsigned long long)s.scope_replays_undone);
    cr_expect_geq(s.scope_replays_undone, 1);
    nd_free(x);
    ref_free(h);
}

/* Replays run only while one thread calls nd (the one that owns the API
 * lock's bias): another thread's call could write an array a deferred op
 * reads. Two threads running the same loop: no replay, right values. */
typedef struct {
    nd_array *x;
    nd_array *out;
    int iters;
} thread_job;

static void *thread_loop(void *p) {
    thread_job *j = p;
    nd_array *x = nd_retain(j->x);
    for (int i = 0; i < j->iters && x; i++) {
        nd_array *y = small_step(x);
        nd_free(x);
        x = y;
    }
    j->out = x;
    return NULL;
}

/* A replayed scope's temporaries are placeholders its call site keeps and
 * hands out again (scope_replay.c's pool): a temporary used after its
 * scope ended must still be refused as freed, between scopes and inside
 * a later one (where a placeholder handed out again would alias it), for
 * as many scopes as a freed handle is kept from reuse (51 here); and the
 * values stay right. `probe`: such a temporary, used inside the scope (a
 * variable, not an argument: a compiler that made a copy of the function
 * for a NULL argument would give it a call site of its own). */
static nd_array *volatile probe;

static nd_array *step_saving_sin(nd_array *x, nd_array **sin_out) {
    nd_scope_begin();
    nd_array *s = nd_sin(x);
    if (probe) {
        nd_array *bad = nd_neg(probe);
        cr_expect(bad == NULL, "a sin of an earlier scope was used in this one");
        NDT_EXPECT_ERR(ND_ERR_ARG, "nd_neg");
    }
    nd_array *y = nd_keep(nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), s)));
    nd_scope_end();
    *sin_out = s;
    return y;
}

REPLAY_TEST(a_temporary_used_after_its_scope_is_refused) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){64}, -3, 3);
    nd_array *x0 = ndt_upload(h);
    nd_array *x = nd_retain(x0), *stale = NULL;
    int refused = 0;
    for (int i = 0; i < 62; i++) {
        nd_array *s = NULL;
        probe = i == 12 || i == 40 || i == 61 ? stale : NULL;
        nd_array *y = step_saving_sin(x, &s);
        cr_assert(y, "iteration %d: %s", i, nd_last_error());
        nd_free(x);
        x = y;
        if (i == 10) stale = s;
        if (i > 10 && (i == 11 || i == 30 || i == 61)) {
            nd_array *bad = nd_neg(stale);
            cr_expect(bad == NULL, "iteration %d: the sin of iteration 10 was used after its scope", i);
            NDT_EXPECT_ERR(ND_ERR_ARG, "nd_neg");
            refused += bad == NULL;
            nd_free(bad);
        }
    }
    probe = NULL;
    cr_expect_eq(refused, 3);
    cr_expect_gt(stats().scopes_replayed, 50u, "the scopes were replayed: %llu",
                 (unsigned long long)stats().scopes_replayed);
    ref_arr *want = small_ref(h, 62);
    ndt_check(x, want, 1e-5, 1e-6, NULL, "62 iterations");
    ref_free(want);
    nd_free(x);
    nd_free(x0);
    ref_free(h);
}

REPLAY_TEST(two_threads_record_as_usual) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h1 = ndt_edge_floats(&r, ND_FLOAT32, 200, -3, 3), *h2 = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){300}, -3, 3);
    thread_job j[2] = {{ndt_upload(h1), NULL, 120}, {ndt_upload(h2), NULL, 150}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, thread_loop, &j[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    cr_assert(j[0].out && j[1].out, "%s", nd_last_error());
    ref_arr *w1 = small_ref(h1, 120), *w2 = small_ref(h2, 150);
    ndt_check(j[0].out, w1, 2e-5, 1e-6, NULL, "thread 1");
    ndt_check(j[1].out, w2, 2e-5, 1e-6, NULL, "thread 2");
    cr_expect_eq(stats().scopes_replayed, 0);
    for (int i = 0; i < 2; i++) {
        nd_free(j[i].out);
        nd_free(j[i].x);
    }
    ref_free(w1);
    ref_free(w2);
    ref_free(h1);
    ref_free(h2);
}

/* A replay in progress when another thread writes one of its inputs: the
 * ops before the write read the old values, those after the new ones, as
 * recorded one by one. */
static void *fill_hundred(void *p) {
    cr_expect_eq(nd_fill((nd_array *)p, 100.0), ND_OK, "%s", nd_last_error());
    return NULL;
}

/* small_step's calls, and between the first op and the rest another
 * thread fills `written` with 100 (NULL: none). */
static nd_array *step_with_a_write(nd_array *x, nd_array *written) {
    nd_scope_begin();
    nd_array *a = nd_mul(x, nd_scalar(0.99));
    if (written) {
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, fill_hundred, written), 0);
        pthread_join(t, NULL);
    }
    nd_array *y = nd_keep(nd_add(a, nd_mul(nd_scalar(0.01), nd_sin(x))));
    nd_scope_end();
    return y;
}

REPLAY_TEST(another_threads_write_undoes_the_replay_first) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 64, -3, 3);
    nd_array *x0 = ndt_upload(h);
    for (int t = 0; t < 2; t++) nd_free(step_with_a_write(x0, NULL)); /* learn, replay */
    cr_expect_eq(stats().scopes_replayed, 1);
    nd_array *x = nd_copy(x0);
    nd_array *y = step_with_a_write(x, x);
    cr_expect_eq(stats().scopes_replayed, 1);
    cr_expect_eq(stats().scope_replays_undone, 1);
    ref_arr *w = ref_new(ND_FLOAT32, 1, (int64_t[]){64});
    for (int64_t i = 0; i < 64; i++)
        ref_setd(w, i, (float)((double)(float)(ref_getd(h, i) * 0.99f) + (double)(float)(0.01f * sinf(100.0f))));
    ndt_check(y, w, 1e-6, 1e-7, NULL, "old x * 0.99 + 0.01 * sin(new x)");
    ref_free(w);
    nd_free(y);
    nd_free(x);
    nd_free(x0);
    ref_free(h);
}

/* nd_shutdown inside a replayed scope: the replay is undone first, the
 * scope's handles go with the runtime, and a new runtime starts clean. */
REPLAY_TEST(shutdown_inside_a_replayed_scope) {
    restart_replay(1, 0);
    NDT_RNG(r);
    ref_arr *h = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){50}, -3, 3);
    nd_array *x = ndt_upload(h);
    for (int t = 0; t < 2; t++) {
        nd_array *y = small_step(x);
        nd_free(y);
    }
    cr_expect_eq(stats().scopes_replayed, 1);
    nd_scope_begin();
    nd_array *a = nd_mul(x, nd_scalar(0.99));
    cr_assert(a);
    nd_free(x);
    ndt_allow_live_handles();
    nd_shutdown();
    restart_replay(1, 0);
    x = ndt_upload(h);
    nd_array *y = small_loop(x, 5);
    ref_arr *w = small_ref(h, 5);
    ndt_check(y, w, 2e-5, 1e-6, NULL, "after a restart");
    cr_expect_eq(stats().scopes_replayed, 4);
    ref_free(w);
    nd_free(y);
    nd_free(x);
    ref_free(h);
}

/* Random loop bodies of elementwise ops, comparisons, nd_where, casts,
 * fills and weak scalars: each is run with replay off and on (early
 * flushes off in both, so the kernels are cut alike) and the results
 * compared bit for bit. Every few iterations one iteration differs (another op, another
 * scalar, a read of a temporary in the scope), which undoes that replay. */
enum { RS_UNARY, RS_BINARY, RS_SCALAR, RS_WHERE, RS_CAST, RS_FILL, RS_KINDS };

typedef struct {
    int kind, fn;
    int a, b, c; /* operands: 0 = x, 1 = y, 2 + j = step j */
    double v;
} rand_step;

typedef struct {
    int n;
    rand_step s[10];
} rand_prog;

static nd_array *(*const rs_unary[])(nd_array *) = {nd_neg, nd_abs, nd_sin, nd_tanh, nd_square, nd_floor, nd_cos};
static nd_array *(*const rs_binary[])(nd_array *, nd_array *) = {nd_add, nd_sub, nd_mul, nd_maximum, nd_minimum,
                                                                 nd_hypot};
#define RS_COUNT(a) ((int)(sizeof a / sizeof *a))

/* variant: 0 the program; 1 its step k with the next function of its kind;
 * 2 its scalars doubled; 3 a read of step k into *read. n: x's last extent
 * (a fill's). */
static nd_array *rand_step_run(const rand_prog *P, nd_array *x, nd_array *y, int variant, int k, double *read,
                               int64_t n) {
    nd_scope_begin();
    nd_array *h[12] = {x, y};
    for (int j = 0; j < P->n; j++) {
        const rand_step *p = &P->s[j];
        int fn = p->fn + (variant == 1 && j == k);
        const double v = variant == 2 ? 2 * p->v : p->v;
        switch (p->kind) {
        case RS_SCALAR: h[2 + j] = nd_scalar(v); break;
        case RS_UNARY: h[2 + j] = rs_unary[fn % RS_COUNT(rs_unary)](h[p->a]); break;
        case RS_BINARY: h[2 + j] = rs_binary[fn % RS_COUNT(rs_binary)](h[p->a], h[p->b]); break;
        case RS_WHERE: h[2 + j] = nd_where(nd_gt(h[p->c], h[p->a]), h[p->a], h[p->b]); break;
        case RS_CAST: h[2 + j] = nd_astype(h[p->a], fn % 2 ? ND_FLOAT32 : ND_FLOAT64); break;
        default: h[2 + j] = fn % 2 ? nd_full(ND_FLOAT32, 1, &n, v) : nd_zeros(ND_FLOAT64, 0, NULL); break;
        }
        cr_assert(h[2 + j], "step %d: %s", j, nd_last_error());
        if (variant == 3 && j == k)
            cr_assert_eq(nd_to_host(h[2 + j], read, 64 * sizeof(double)), ND_OK, "%s", nd_last_error());
    }
    nd_array *r = nd_keep(h[1 + P->n]);
    nd_scope_end();
    return r;
}

/* The loop's result's bytes (variants at iterations t % 7 == 3). */
static ref_arr *rand_loop(const rand_prog *P, const ref_arr *hx, const ref_arr *hy, int replay, uint64_t *replayed,
                          ndt_rng *vr) {
    restart_replay(replay, 1);
    nd_array *x = ndt_upload(hx), *y = ndt_upload(hy);
    nd_array *c = nd_retain(x);
    double sink[64];
    for (int t = 0; t < 24; t++) {
        int variant = t % 7 == 3 ? 1 + (int)ndt_int(vr, 0, 2) : 0;
        int k = (int)ndt_int(vr, 0, P->n - 1);
        nd_array *next = rand_step_run(P, c, y, variant, k, sink, nd_shape(x)[1]);
        nd_free(c);
        c = next;
    }
    ref_arr *out = ndt_download(c);
    *replayed = stats().scopes_replayed;
    nd_free(c);
    nd_free(x);
    nd_free(y);
    return out;
}

REPLAY_TEST(random_bodies_replayed_give_the_plain_bits) {
    NDT_RNG(r);
    int replays_seen = 0;
    for (int trial = 0; trial < 16; trial++) {
        rand_prog P;
        P.n = (int)ndt_int(&r, 2, 9);
        for (int j = 0; j < P.n; j++) {
            rand_step *p = &P.s[j];
            const int any = 2 + j; /* operands 0 .. any - 1 */
            p->kind = j == P.n - 1 ? RS_BINARY : (int)ndt_int(&r, 0, RS_KINDS - 1);
            p->fn = (int)ndt_int(&r, 0, 20);
            p->v = ndt_uniform(&r, -2, 2);
            p->a = (int)ndt_int(&r, 0, any - 1);
            p->b = (int)ndt_int(&r, 0, any - 1);
            p->c = (int)ndt_int(&r, 0, any - 1);
        }
        /* the result reads an array: the last step combines x with the one before */
        P.s[P.n - 1].a = 0;
        const nd_dtype dt = ndt_int(&r, 0, 1) ? ND_FLOAT32 : ND_FLOAT64;
        const int64_t m = ndt_int(&r, 1, 5), n = ndt_int(&r, 1, 7);
        ref_arr *hx = ndt_rand(&r, dt, 2, (int64_t[]){m, n}, -2, 2);
        ref_arr *hy = ndt_int(&r, 0, 1) ? ndt_rand(&r, dt, 1, (int64_t[]){n}, -2, 2)
                                         : ndt_rand(&r, dt, 2, (int64_t[]){m, n}, -2, 2);
        if (hx->size > 0) ref_setd(hx, 0, NAN);
        ndt_rng v1 = r, v2 = r; /* the same variants in both runs */
        uint64_t rep_off, rep_on;
        ref_arr *off = rand_loop(&P, hx, hy, 0, &rep_off, &v1);
        ref_arr *on = rand_loop(&P, hx, hy, 1, &rep_on, &v2);
        r = v1;
        char what[64];
        snprintf(what, sizeof what, "random body %d (%d steps)", trial, P.n);
        ndt_expect_same_bits(on, off, what);
        cr_expect_eq(rep_off, 0);
        replays_seen += rep_on > 0;
        ref_free(off);
        ref_free(on);
        ref_free(hx);
        ref_free(hy);
    }
    cr_expect_geq(replays_seen, 8, "only %d of 16 random bodies were replayed", replays_seen);
}
