/* Loop calls (ND_BODY_LOOPS=1, graph.h's nd_graph_merge_loop): a call of a
 * traced body whose input is the result of the call just before it, freed
 * at once (x = f(x) in a loop, through nd_body_call or a replayed scope),
 * joins that call, so n iterations are one node and one kernel loop. The
 * values must be the bits of the calls one by one (ND_BODY_LOOPS=0) on the
 * CPU (on CUDA within rounding: the generator may contract a multiply and
 * an add of the loop's kernel otherwise than in the straight kernels), and
 * against a host reference; whatever keeps an iteration's value seen (a
 * handle, a view, a read, a write of another input) or is no loop of one
 * carried value (the same array twice, two loops taking turns) must leave
 * the calls as they were. Counts of joined calls are exact, so a join
 * that silently stops, or happens where it must not, fails. Every test
 * runs on both backends. */
#include "common.h"

#include <math.h>

static uint64_t merged(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.body_calls_merged;
}

static uint64_t kernels_run(void) {
    nd_stats s;
    nd_get_stats(&s);
    return NDT_KERNELS(s);
}

/* The loop call's values against the calls one by one: the same bits on
 * the CPU; on CUDA NaN where NaN and within 1e-5 (float32) or 1e-12
 * (float64) relative, a few ulps a round of a contracting map. */
static void expect_loop_values(const ref_arr *got, const ref_arr *want, const char *what) {
    if (!ndt_backend_is_cuda()) {
        ndt_expect_same_bits(got, want, what);
        return;
    }
    cr_assert_eq(got->dt, want->dt, "%s: dtype", what);
    cr_assert_eq(got->size, want->size, "%s: size", what);
    const double tol = got->dt == ND_FLOAT32 ? 1e-5 : 1e-12;
    for (int64_t i = 0; i < got->size; i++) {
        double g = ref_getd(got, i), w = ref_getd(want, i);
        if (isnan(w) || isinf(w)) {
            cr_assert((isnan(w) && isnan(g)) || g == w, "%s: element %lld: %.9g vs %.9g", what, (long long)i, g, w);
            continue;
        }
        cr_assert(fabs(g - w) <= tol * (1 + fabs(w)), "%s: element %lld: %.9g vs %.9g", what, (long long)i, g, w);
    }
}

static void restart_loops(int on) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.body_loops = on ? 1 : -1;
    /* early flushes would cut the calls at counts that differ between
     * the two ways */
    cfg.early_flush = -1;
    ndt_restart(&cfg);
}

/* f(w, x) = x * w + 0.01 * sin(x): the carried value is input 1, w (one
 * value, broadcast) is the same in every round. */
static nd_array *wx_step(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *r = nd_keep(nd_add(nd_mul(in[1], in[0]), nd_mul(nd_scalar(0.01), nd_sin(in[1]))));
    nd_scope_end();
    return r;
}

/* The host's rounds of wx_step in dtype t's precision. */
static ref_arr *wx_ref(const ref_arr *x, double w, nd_dtype t, int rounds) {
    ref_arr *r = ref_new(ND_FLOAT64, x->ndim, x->shape);
    for (int64_t i = 0; i < x->size; i++) {
        double v = ref_getd(x, i);
        for (int k = 0; k < rounds; k++) {
            if (t == ND_FLOAT32) {
                float f = (float)v;
                v = (float)((float)(f * (float)w) + (float)(0.01f * sinf(f)));
            } else {
                v = v * w + 0.01 * sin(v);
            }
        }
        ref_setd(r, i, v);
    }
    ref_arr *out = ref_astype(r, t);
    ref_free(r);
    return out;
}

/* The loop w, x -> f(w, x), rounds times through b, each old x freed. */
static nd_array *body_loop(nd_body *b, nd_array *w, nd_array *x0, int rounds) {
    nd_array *x = nd_retain(x0);
    for (int i = 0; i < rounds; i++) {
        nd_array *in[2] = {w, x};
        nd_array *y = nd_body_call(b, in);
        cr_assert(y, "round %d: %s", i, nd_last_error());
        nd_free(x);
        x = y;
    }
    return x;
}

NDT_TEST(loop_calls, a_body_loop_is_one_node_with_the_calls_bits) {
    const nd_dtype types[2] = {ND_FLOAT32, ND_FLOAT64};
    const int64_t n = 777;
    for (int ti = 0; ti < 2; ti++) {
        const nd_dtype t = types[ti];
        NDT_RNG(r);
        ref_arr *hx = ndt_edge_floats(&r, t, n, -3, 3);
        const double wv = 0.9;
        ref_arr *got[2];
        for (int on = 0; on < 2; on++) {
            restart_loops(on);
            nd_array *x = ndt_upload(hx), *w = nd_full(t, 1, (int64_t[]){1}, wv);
            nd_array *like[2] = {w, x};
            nd_body *b = nd_body_trace("wx", 2, like, wx_step, NULL);
            cr_assert(b, "%s", nd_last_error());
            nd_sync();
            const uint64_t m0 = merged(), k0 = kernels_run();
            nd_array *y = body_loop(b, w, x, 200);
            cr_expect_eq(merged() - m0, on ? 199u : 0u, "%s, loops %d: %llu calls joined", nd_dtype_name(t), on,
                         (unsigned long long)(merged() - m0));
            nd_sync();
            if (on)
                cr_expect_eq(kernels_run() - k0, 1u, "%s: 200 rounds are one kernel, got %llu", nd_dtype_name(t),
                             (unsigned long long)(kernels_run() - k0));
            got[on] = ndt_download(y);
            ref_arr *want = wx_ref(hx, wv, t, 200);
            ndt_check(y, want, t == ND_FLOAT32 ? 1e-5 : 1e-12, t == ND_FLOAT32 ? 1e-6 : 1e-14, NULL,
                      "%s, loops %d, against the host", nd_dtype_name(t), on);
            ref_free(want);
            nd_free(y);
            nd_free(x);
            nd_free(w);
            nd_body_free(b);
        }
        expect_loop_values(got[1], got[0], "the loop call against the calls one by one");
        ref_free(got[0]);
        ref_free(got[1]);
        ref_free(hx);
    }
}

/* x = f(w, x) for 120 rounds where, along the way, a round's value stays
 * seen (a retained handle at 30, a view at 60), the loop's value is read
 * (70), w is written (90): each keeps what it needs and the loop goes on.
 * The values (the kept ones too) are those of the calls one by one. */
NDT_TEST(loop_calls, what_stays_seen_splits_the_loop) {
    NDT_RNG(r);
    ref_arr *hx = ndt_edge_floats(&r, ND_FLOAT32, 500, -2, 2);
    ref_arr *got[2][4];
    uint64_t joined[2];
    double read[2];
    for (int on = 0; on < 2; on++) {
        restart_loops(on);
        nd_array *x = ndt_upload(hx), *w = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.8);
        nd_array *like[2] = {w, x};
        nd_body *b = nd_body_trace("wx", 2, like, wx_step, NULL);
        cr_assert(b, "%s", nd_last_error());
        nd_sync();
        const uint64_t m0 = merged();
        nd_array *kept = NULL, *view = NULL;
        x = nd_retain(x);
        for (int i = 0; i < 120; i++) {
            nd_array *in[2] = {w, x};
            nd_array *y = nd_body_call(b, in);
            cr_assert(y, "round %d: %s", i, nd_last_error());
            if (i == 30) kept = nd_retain(x);
            if (i == 60) view = nd_reshape(x, 2, (int64_t[]){25, 20});
            nd_free(x);
            x = y;
            if (i == 70) {
                nd_array *s = nd_sum(x, ND_ALL_AXES);
                read[on] = nd_item(s);
                nd_free(s);
            }
            if (i == 90) {
                nd_array *v = nd_scalar(0.7);
                cr_assert_eq(nd_assign(w, v), ND_OK, "%s", nd_last_error());
                nd_free(v);
            }
        }
        joined[on] = merged() - m0;
        got[on][0] = ndt_download(x);
        got[on][1] = ndt_download(kept);
        got[on][2] = ndt_download(view);
        got[on][3] = ndt_download(w);
        nd_free(x);
        nd_free(kept);
        nd_free(view);
        nd_free(w);
        nd_free(like[1]);
        nd_body_free(b);
    }
    /* 119 joins but for the rounds whose result stayed seen (30, 60), the
     * first call after the read (the value it reads was flushed) and the
     * first after the write (w's version differs) */
    cr_expect_eq(joined[1], 115u, "joined calls: %llu", (unsigned long long)joined[1]);
    cr_expect_eq(joined[0], 0u, "ND_BODY_LOOPS=0 joins nothing");
    cr_expect(read[0] == read[1] || (isnan(read[0]) && isnan(read[1])) ||
                  (ndt_backend_is_cuda() && fabs(read[0] - read[1]) <= 1e-4 * (1 + fabs(read[0]))),
              "the read mid-loop: %.9g vs %.9g", read[1], read[0]);
    const char *what[4] = {"the last round", "the value kept at round 30", "the view of round 60", "w"};
    for (int k = 0; k < 4; k++) {
        expect_loop_values(got[1][k], got[0][k], what[k]);
        ref_free(got[0][k]);
        ref_free(got[1][k]);
    }
    /* and the last round against the host: 0.8 up to round 90, then 0.7 */
    ref_arr *mid = wx_ref(hx, 0.8, ND_FLOAT32, 91);
    ref_arr *want = wx_ref(mid, 0.7, ND_FLOAT32, 29);
    restart_loops(1);
    nd_array *x = ndt_upload(hx), *w8 = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.8),
             *w7 = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.7);
    nd_array *like[2] = {w8, x};
    nd_body *b = nd_body_trace("wx", 2, like, wx_step, NULL);
    nd_array *a = body_loop(b, w8, x, 91), *c = body_loop(b, w7, a, 29);
    ndt_check(c, want, 1e-5, 1e-6, NULL, "two loops of other w against the host");
    nd_free(a);
    nd_free(c);
    nd_free(x);
    nd_free(w8);
    nd_free(w7);
    nd_body_free(b);
    ref_free(mid);
    ref_free(want);
    ref_free(hx);
}

static nd_array *xy_step(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *r = nd_keep(nd_add(nd_mul(in[0], in[1]), nd_scalar(0.25)));
    nd_scope_end();
    return r;
}

/* No loop of one carried value: f(x, x) (the result read twice), two
 * loops of one body taking turns (a's call is not the node before a's
 * next), and a loop whose other input changes every call (w and v taking
 * turns). Nothing joins; the values are right. */
NDT_TEST(loop_calls, what_is_no_loop_stays_calls) {
    NDT_RNG(r);
    /* x * x + 0.25 stays within [0.25, 0.5] from [-0.5, 0.5]: no rounding
     * difference grows */
    ref_arr *ha = ndt_rand(&r, ND_FLOAT64, 1, (int64_t[]){300}, -0.5, 0.5);
    ref_arr *hb = ndt_rand(&r, ND_FLOAT64, 1, (int64_t[]){300}, -0.9, 0.9);
    restart_loops(1);
    nd_array *a = ndt_upload(ha), *b0 = ndt_upload(hb);
    nd_array *like[2] = {a, b0};
    nd_body *body = nd_body_trace("xy", 2, like, xy_step, NULL);
    cr_assert(body, "%s", nd_last_error());
    nd_sync();
    const uint64_t m0 = merged();
    nd_array *x = nd_retain(a), *p = nd_retain(a), *q = nd_retain(b0);
    for (int i = 0; i < 40; i++) {
        nd_array *in[2] = {x, x};
        nd_array *y = nd_body_call(body, in);
        nd_free(x);
        x = y;
        nd_array *ip[2] = {p, b0}, *iq[2] = {q, b0};
        nd_array *p2 = nd_body_call(body, ip), *q2 = nd_body_call(body, iq);
        nd_free(p);
        nd_free(q);
        p = p2;
        q = q2;
    }
    /* x = f(x, w_i), w_i taking turns between b0 and a */
    nd_array *t = nd_retain(a);
    for (int i = 0; i < 40; i++) {
        nd_array *in[2] = {t, i % 2 ? a : b0};
        nd_array *u = nd_body_call(body, in);
        nd_free(t);
        t = u;
    }
    cr_expect_eq(merged() - m0, 0u, "nothing joins: %llu did", (unsigned long long)(merged() - m0));
    ref_arr *wx = ref_new(ND_FLOAT64, 1, (int64_t[]){300}), *wp = ref_new(ND_FLOAT64, 1, (int64_t[]){300}),
            *wq = ref_new(ND_FLOAT64, 1, (int64_t[]){300});
    for (int64_t i = 0; i < 300; i++) {
        double vx = ref_getd(ha, i), vp = vx, vq = ref_getd(hb, i), vb = ref_getd(hb, i);
        for (int k = 0; k < 40; k++) {
            vx = vx * vx + 0.25;
            vp = vp * vb + 0.25;
            vq = vq * vb + 0.25;
        }
        ref_setd(wx, i, vx);
        ref_setd(wp, i, vp);
        ref_setd(wq, i, vq);
    }
    ref_arr *wt = ref_new(ND_FLOAT64, 1, (int64_t[]){300});
    for (int64_t i = 0; i < 300; i++) {
        double v = ref_getd(ha, i);
        for (int k = 0; k < 40; k++) v = v * (k % 2 ? ref_getd(ha, i) : ref_getd(hb, i)) + 0.25;
        ref_setd(wt, i, v);
    }
    ndt_check(t, wt, 1e-12, 1e-14, NULL, "a loop whose other input takes turns");
    nd_free(t);
    ref_free(wt);
    ndt_check(x, wx, 1e-12, 1e-14, NULL, "f(x, x)");
    ndt_check(p, wp, 1e-12, 1e-14, NULL, "loop a of two taking turns");
    ndt_check(q, wq, 1e-12, 1e-14, NULL, "loop b of two taking turns");
    nd_free(x);
    nd_free(p);
    nd_free(q);
    nd_free(a);
    nd_free(b0);
    nd_body_free(body);
    ref_free(ha);
    ref_free(hb);
    ref_free(wx);
    ref_free(wp);
    ref_free(wq);
}

/* small_ops' plain loop: the scope is replayed as body calls (scope
 * replay) and those join into one loop call; its result then feeds a sum
 * and another op in the same flush. Bits as with ND_BODY_LOOPS=0. */
static nd_array *small_step(nd_array *x) {
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x))));
    nd_scope_end();
    return y;
}

NDT_TEST(loop_calls, a_replayed_scope_loop_joins_and_feeds_other_work) {
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 1000, -3, 3);
    ref_arr *got[2][2];
    double sums[2];
    for (int on = 0; on < 2; on++) {
        restart_loops(on);
        nd_array *x0 = ndt_upload(h);
        nd_sync();
        const uint64_t m0 = merged();
        nd_array *x = nd_retain(x0);
        for (int i = 0; i < 500; i++) {
            nd_array *y = small_step(x);
            cr_assert(y, "iteration %d: %s", i, nd_last_error());
            nd_free(x);
            x = y;
        }
        /* the first scope is learnt and the second replayed: the calls of
         * the third on join */
        cr_expect_eq(merged() - m0, on ? 498u : 0u, "loops %d: %llu joined", on, (unsigned long long)(merged() - m0));
        /* the joined result is a new contiguous float32 array of x's shape,
         * as the calls' result is */
        cr_expect(nd_ndim(x) == 1 && nd_shape(x)[0] == 1000 && nd_strides(x)[0] == 1 && nd_dtype_of(x) == ND_FLOAT32,
                  "loops %d: the result's ndim %d, shape %lld, stride %lld, dtype %d", on, nd_ndim(x),
                  (long long)nd_shape(x)[0], (long long)nd_strides(x)[0], (int)nd_dtype_of(x));
        nd_array *two = nd_scalar(2.0), *s = nd_sum(x, ND_ALL_AXES), *t = nd_mul(x, two);
        nd_free(two);
        sums[on] = nd_item(s);
        got[on][0] = ndt_download(x);
        got[on][1] = ndt_download(t);
        nd_free(s);
        nd_free(t);
        nd_free(x);
        nd_free(x0);
    }
    expect_loop_values(got[1][0], got[0][0], "500 iterations");
    expect_loop_values(got[1][1], got[0][1], "2 * the loop's value");
    cr_expect(isnan(sums[0]) && isnan(sums[1]), "the NaN of the edge values reaches the sum: %g %g", sums[0], sums[1]);
    for (int k = 0; k < 2; k++) {
        ref_free(got[0][k]);
        ref_free(got[1][k]);
    }
    ref_free(h);
}

/* 0-d and empty arrays loop too. */
NDT_TEST(loop_calls, zero_d_and_empty_loops) {
    const int64_t zero = 0;
    for (int e = 0; e < 2; e++) {
        restart_loops(1);
        nd_array *x = e ? nd_zeros(ND_FLOAT32, 1, &zero) : nd_full(ND_FLOAT32, 0, NULL, 1.5);
        nd_array *w = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.5);
        if (!e) {
            nd_array *w0 = nd_full(ND_FLOAT32, 0, NULL, 0.5);
            nd_free(w);
            w = w0;
        }
        nd_array *like[2] = {w, x};
        nd_body *b = nd_body_trace("wx", 2, like, wx_step, NULL);
        cr_assert(b, "%s", nd_last_error());
        const uint64_t m0 = merged();
        nd_array *y = body_loop(b, w, x, 30);
        cr_expect_eq(merged() - m0, 29u, "%s: %llu joined", e ? "empty" : "0-d", (unsigned long long)(merged() - m0));
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_size(y), e ? 0 : 1);
        if (!e) {
            float v = 1.5f;
            for (int k = 0; k < 30; k++) v = (float)((float)(v * 0.5f) + (float)(0.01f * sinf(v)));
            double got = nd_item(y);
            cr_expect(fabs(got - v) <= 1e-6 * (1 + fabs(v)), "0-d: %.9g vs %.9g", got, (double)v);
        }
        nd_free(y);
        nd_free(x);
        nd_free(w);
        nd_body_free(b);
    }
}

/* A replayed scope's body call waits for the program's next call: when
 * that frees the call's input (x = f(x)), the call joins the loop call
 * before it with no node; anything else records it first. Here the
 * iterations do something else between the scope and the free now and
 * then: read the new value, free another array, nd_sync, an op on the new
 * value outside any scope, or keep the old value. The values are those of
 * ND_BODY_LOOPS=0, and only the iterations that free x straight away
 * join. */
NDT_TEST(loop_calls, a_deferred_call_is_recorded_when_something_else_comes_first) {
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 300, -3, 3);
    ref_arr *got[2][3];
    uint64_t joined[2];
    for (int on = 0; on < 2; on++) {
        restart_loops(on);
        nd_array *x0 = ndt_upload(h), *other = nd_zeros(ND_FLOAT32, 1, (int64_t[]){7});
        nd_sync();
        const uint64_t m0 = merged();
        nd_array *x = nd_retain(x0), *kept = NULL, *twice = NULL;
        double read = 0;
        for (int i = 0; i < 60; i++) {
            nd_array *y = small_step(x);
            cr_assert(y, "iteration %d: %s", i, nd_last_error());
            if (i == 10) {
                nd_array *s = nd_sum(y, ND_ALL_AXES);
                read = nd_item(s);
                nd_free(s);
            }
            if (i == 20) {
                nd_free(other);
                other = NULL;
            }
            if (i == 30) cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
            if (i == 40) twice = nd_add(y, y);
            if (i == 50) kept = x;
            else nd_free(x);
            x = y;
        }
        joined[on] = merged() - m0;
        got[on][0] = ndt_download(x);
        got[on][1] = ndt_download(kept);
        got[on][2] = ndt_download(twice);
        cr_expect(isnan(read), "the edge values' NaN reaches the sum read at 10: %g", read);
        nd_free(x);
        nd_free(kept);
        nd_free(twice);
        nd_free(x0);
    }
    cr_expect_eq(joined[0], 0u, "ND_BODY_LOOPS=0 joins nothing");
    /* 60 iterations: the first learns, the second records the first body
     * call; of the other 58, these do not join: the read (10), the sync
     * (30) and the one after it (its input is flushed), the add (40) and
     * the one after it (the newest node is the add), the kept value (50).
     * Freeing another array first (20) records the call, which then joins
     * when x is freed (graph.h, nd_graph_merge_loop); after the read (11)
     * the call it recorded is still pending (a recipe) and is joined. */
    cr_expect_eq(joined[1], 52u, "calls joined: %llu", (unsigned long long)joined[1]);
    const char *what[3] = {"the last value", "the value kept at 50", "y + y at 40"};
    for (int k = 0; k < 3; k++) {
        expect_loop_values(got[1][k], got[0][k], what[k]);
        ref_free(got[0][k]);
        ref_free(got[1][k]);
    }
    ref_free(h);
}

/* A replayed scope x = x * w + 0.01 * sin(x) whose w is written between
 * two iterations: the call after the write reads w's new version, so it
 * does not join the rounds before (their w was the old one). */
static nd_array *wx_scope(nd_array *w, nd_array *x) {
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(x, w), nd_mul(nd_scalar(0.01), nd_sin(x))));
    nd_scope_end();
    return y;
}

NDT_TEST(loop_calls, a_replayed_loop_sees_a_write_to_its_other_input) {
    NDT_RNG(r);
    ref_arr *h = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){400}, -2, 2);
    ref_arr *got[2];
    uint64_t joined[2];
    for (int on = 0; on < 2; on++) {
        restart_loops(on);
        nd_array *x = ndt_upload(h), *w = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.8);
        nd_sync();
        const uint64_t m0 = merged();
        for (int i = 0; i < 40; i++) {
            nd_array *y = wx_scope(w, x);
            cr_assert(y, "iteration %d: %s", i, nd_last_error());
            nd_free(x);
            x = y;
            if (i == 20) {
                nd_array *v = nd_scalar(0.7);
                cr_assert_eq(nd_assign(w, v), ND_OK, "%s", nd_last_error());
                nd_free(v);
            }
        }
        joined[on] = merged() - m0;
        got[on] = ndt_download(x);
        ref_arr *mid = wx_ref(h, 0.8, ND_FLOAT32, 21), *want = wx_ref(mid, 0.7, ND_FLOAT32, 19);
        ndt_check(x, want, 1e-5, 1e-6, NULL, "loops %d against the host", on);
        ref_free(mid);
        ref_free(want);
        nd_free(x);
        nd_free(w);
    }
    /* all but the first two (learning, the first call) and the first
     * after the write */
    cr_expect_eq(joined[1], 37u, "calls joined: %llu", (unsigned long long)joined[1]);
    expect_loop_values(got[1], got[0], "40 iterations");
    ref_free(got[0]);
    ref_free(got[1]);
    ref_free(h);
}

/* The same replayed scope with w and v taking turns: no call joins the
 * one before (its other input differs), the values are right. */
NDT_TEST(loop_calls, a_replayed_loop_whose_other_input_takes_turns) {
    NDT_RNG(r);
    ref_arr *h = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){200}, -2, 2);
    restart_loops(1);
    nd_array *x = ndt_upload(h), *w = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.8),
             *v = nd_full(ND_FLOAT32, 1, (int64_t[]){1}, 0.6);
    nd_sync();
    const uint64_t m0 = merged();
    for (int i = 0; i < 30; i++) {
        nd_array *y = wx_scope(i % 2 ? v : w, x);
        cr_assert(y, "iteration %d: %s", i, nd_last_error());
        nd_free(x);
        x = y;
    }
    cr_expect_eq(merged() - m0, 0u, "nothing joins: %llu did", (unsigned long long)(merged() - m0));
    ref_arr *want = ref_astype(h, ND_FLOAT32);
    for (int i = 0; i < 30; i++) {
        ref_arr *next = wx_ref(want, i % 2 ? 0.6 : 0.8, ND_FLOAT32, 1);
        ref_free(want);
        want = next;
    }
    ndt_check(x, want, 1e-5, 1e-6, NULL, "w and v taking turns");
    ref_free(want);
    nd_free(x);
    nd_free(w);
    nd_free(v);
    ref_free(h);
}
