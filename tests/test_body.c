/* Loop bodies (include/nd/body.h): a body's calls give the bits of the same
 * ops recorded one by one (its function called on the arrays themselves),
 * in the same number of kernels, with one node per call; values against a
 * float64 reference; broadcasting, NEP 50 promotion, where, casts and edge
 * values (NaN, inf, -0.0); views as inputs; empty and 0-d inputs; two
 * threads sharing a body; what a trace refuses and what a call refuses,
 * each leaving the pending work as it was. On CUDA the same tests run on
 * the device (the expansion happens where the IR is built, so the CUDA
 * generator sees ordinary instructions). */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

#include "backends/plan.h"
#include "common/body.h"
#include "frontend/runtime.h"
#if defined(NDT_CUDA_BUILT)
#include "backends/cuda/cuda_internal.h"
#endif

static uint64_t kernels_run(void) {
    nd_stats s;
    nd_get_stats(&s);
    return NDT_KERNELS(s);
}

static uint64_t nodes_recorded(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.nodes_recorded;
}

/* small_ops' statement (bench/host_overhead.c): x*0.99 + 0.01*sin(x). */
static nd_array *small_step(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *x = in[0];
    nd_array *r = nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x)));
    nd_keep(r);
    nd_scope_end();
    return r;
}

/* a int32 (3, 1), b float32 (4,), c bool (3, 4): promotion (int32 +
 * float32 -> float64), where, a comparison, a cast, a weak int, maximum
 * and a fill. */
static nd_array *mixed_step(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *a = in[0], *b = in[1], *c = in[2];
    nd_array *s = nd_add(a, nd_mul(b, nd_scalar(2.0)));                     /* float64 (3, 4) */
    nd_array *t = nd_where(c, s, nd_neg(nd_astype(a, ND_FLOAT64)));         /* float64 */
    nd_array *m = nd_maximum(t, nd_full(ND_FLOAT64, 0, NULL, -1.5));        /* NaN propagates */
    nd_array *g = nd_gt(b, nd_scalar_int(0));                               /* bool (4,) */
    nd_array *r = nd_where(g, nd_sqrt(nd_abs(m)), nd_sub(m, nd_scalar_int(3)));
    nd_keep(r);
    nd_scope_end();
    return r;
}

/* Host bytes of a (contiguous, poisoned first by ndt_download). */
static ref_arr *bytes_of(nd_array *a) { return ndt_download(a); }

/* float32 values within 1e-5 relative (fma contraction differs where kernel
 * cuts do), NaN where NaN. */
static void expect_close_f32(const ref_arr *got, const ref_arr *want, const char *what) {
    cr_assert_eq(got->dt, want->dt, "%s: dtype", what);
    cr_assert_eq(got->size, want->size, "%s: size", what);
    for (int64_t i = 0; i < got->size; i++) {
        double g = ref_getd(got, i), w = ref_getd(want, i);
        cr_assert((isnan(g) && isnan(w)) || fabs(g - w) <= 1e-5 * (1 + fabs(w)), "%s: element %lld: %.9g vs %.9g",
                  what, (long long)i, g, w);
    }
}

/* The loop x = step(x), iters times, plain (body NULL) or through b. */
static nd_array *run_loop(const nd_body *b, nd_body_fn fn, nd_array *x0, int iters) {
    nd_array *x = nd_retain(x0);
    for (int i = 0; i < iters; i++) {
        nd_array *in[1] = {x};
        nd_array *y = b ? nd_body_call(b, in) : fn(in, NULL);
        cr_assert(y, "iteration %d: %s", i, nd_last_error());
        nd_free(x);
        x = y;
    }
    return x;
}

NDT_TEST(body, small_ops_matches_plain_recording_bit_for_bit) {
    /* Early flushes cut a loop after so many nodes, which are four times
     * fewer with the body: off, so that both loops are one flush each and
     * their kernels can be compared. */
    nd_config cfg = ND_CONFIG_INIT;
    cfg.early_flush = -1;
    /* the calls one by one against the ops one by one: not replayed (the
     * plain loop's scope would be body calls too) nor joined into a loop
     * call (test_loop_calls.c) */
    cfg.scope_replay = -1;
    cfg.body_loops = -1;
    ndt_restart(&cfg);
    NDT_RNG(r);
    ref_arr *h = ndt_edge_floats(&r, ND_FLOAT32, 1000, -3, 3);
    nd_array *x = ndt_upload(h);
    nd_body *b = nd_body_trace("small_step", 1, &x, small_step, NULL);
    cr_assert(b, "%s", nd_last_error());
    cr_expect_str_eq(nd_body_name(b), "small_step");
    cr_expect_eq(nd_body_n_inputs(b), 1);
    /* one step against float64 */
    nd_array *one = nd_body_call(b, &x);
    ref_arr *want = ref_new(ND_FLOAT64, 1, (int64_t[]){1000});
    for (int64_t i = 0; i < 1000; i++) {
        double v = ref_getd(h, i);
        ref_setd(want, i, (double)(float)((double)(float)(v * (double)0.99f) + (double)(float)(0.01f * (float)sin(v))));
    }
    ref_arr *w32 = ref_astype(want, ND_FLOAT32);
    ndt_check(one, w32, 1e-6, 1e-7, NULL, "one step");
    ref_free(want);
    ref_free(w32);
    nd_free(one);
    /* 1000 steps, in one flush each way: same bits, same kernels */
    nd_sync();
    uint64_t k0 = kernels_run();
    nd_array *plain = run_loop(NULL, small_step, x, 1000);
    nd_sync();
    uint64_t k1 = kernels_run();
    uint64_t n0 = nodes_recorded();
    nd_array *body = run_loop(b, NULL, x, 1000);
    cr_expect_eq(nodes_recorded() - n0, 1000, "one node per call, got %llu",
                 (unsigned long long)(nodes_recorded() - n0));
    nd_sync();
    uint64_t k2 = kernels_run();
    cr_expect_eq(k2 - k1, k1 - k0, "the calls fuse as the ops do: %llu kernels vs %llu",
                 (unsigned long long)(k2 - k1), (unsigned long long)(k1 - k0));
    cr_expect_lt(k2 - k1, 100, "1000 calls are a few kernels, not one each (%llu)", (unsigned long long)(k2 - k1));
    ref_arr *gp = bytes_of(plain), *gb = bytes_of(body);
    ndt_expect_same_bits(gb, gp, "1000 steps");
    ref_free(gp);
    ref_free(gb);
    nd_free(plain);
    nd_free(body);
    nd_body_free(b);
    nd_free(x);
    ref_free(h);
}

NDT_TEST(body, mixed_inputs_broadcast_promote_where_edges) {
    NDT_RNG(r);
    ref_arr *ha = ndt_rand(&r, ND_INT32, 2, (int64_t[]){3, 1}, -50, 50);
    ref_setd(ha, 0, (double)INT32_MIN);
    ref_arr *hb = ndt_edge_floats(&r, ND_FLOAT32, 4, -4, 4);
    ref_arr *hc = ndt_rand(&r, ND_BOOL, 2, (int64_t[]){3, 4}, 0, 1);
    nd_array *in[3] = {ndt_upload(ha), ndt_upload(hb), ndt_upload(hc)};
    nd_body *b = nd_body_trace("mixed", 3, in, mixed_step, NULL);
    cr_assert(b, "%s", nd_last_error());
    nd_array *got = nd_body_call(b, in);
    cr_assert(got, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(got), ND_FLOAT64);
    cr_expect_eq(nd_ndim(got), 2);
    nd_array *plain = mixed_step(in, NULL);
    /* float64 reference, written out */
    ref_arr *want = ref_new(ND_FLOAT64, 2, (int64_t[]){3, 4});
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            double a = ref_getd(ha, i), bb = (double)(float)ref_getd(hb, j);
            double s = a + (double)(float)(bb * 2.0f);
            double t = ref_getd(hc, i * 4 + j) != 0 ? s : -a;
            double m = isnan(t) ? t : (t > -1.5 ? t : -1.5);
            double v = bb > 0 ? sqrt(fabs(m)) : m - 3;
            ref_setd(want, i * 4 + j, v);
        }
    ndt_check(got, want, 1e-15, 0, NULL, "mixed");
    ref_arr *gp = bytes_of(plain), *gb = bytes_of(got);
    ndt_expect_same_bits(gb, gp, "mixed");
    ref_free(gp);
    ref_free(gb);
    /* inputs as views of the traced shapes: a transposed c */
    nd_array *c2 = ndt_upload(hc);
    nd_array *ct = nd_transpose(c2, NULL); /* (4, 3) */
    nd_free(c2);
    nd_array *cv = nd_transpose(ct, NULL);             /* (3, 4), strided */
    nd_array *vin[3] = {in[0], in[1], cv};
    nd_array *gv = nd_body_call(b, vin);
    cr_assert(gv, "%s", nd_last_error());
    ndt_check(gv, want, 1e-15, 0, NULL, "mixed, a transposed view");
    nd_free(gv);
    nd_free(cv);
    nd_free(ct);
    ref_free(want);
    nd_free(got);
    nd_free(plain);
    nd_body_free(b);
    for (int k = 0; k < 3; k++) nd_free(in[k]);
    ref_free(ha);
    ref_free(hb);
    ref_free(hc);
}

static nd_array *twice_plus_one(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *r = nd_keep(nd_add(nd_mul(in[0], nd_scalar(2.0)), nd_scalar(1.0)));
    nd_scope_end();
    return r;
}

static nd_array *twice_minus_one(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *r = nd_keep(nd_sub(nd_mul(in[0], nd_scalar(2.0)), nd_scalar(1.0)));
    nd_scope_end();
    return r;
}

NDT_TEST(body, two_bodies_never_share_a_plan) {
    double v[5] = {0, 1, -2, 3.5, -0.0};
    nd_array *x = nd_from_host(v, ND_FLOAT64, 1, (int64_t[]){5});
    nd_body *p = nd_body_trace("plus", 1, &x, twice_plus_one, NULL);
    nd_body *m = nd_body_trace("minus", 1, &x, twice_minus_one, NULL);
    cr_assert(p && m, "%s", nd_last_error());
    for (int round = 0; round < 3; round++) { /* the second and third hit the plan cache */
        nd_array *a = nd_body_call(round == 1 ? m : p, &x);
        nd_array *b2 = nd_body_call(round == 1 ? p : m, &x);
        double ga[5], gb[5];
        cr_assert_eq(nd_to_host(a, ga, sizeof ga), ND_OK);
        cr_assert_eq(nd_to_host(b2, gb, sizeof gb), ND_OK);
        for (int i = 0; i < 5; i++) {
            double plus = 2 * v[i] + 1, minus = 2 * v[i] - 1;
            cr_expect_eq(ga[i], round == 1 ? minus : plus, "round %d [%d]", round, i);
            cr_expect_eq(gb[i], round == 1 ? plus : minus, "round %d [%d]", round, i);
        }
        nd_free(a);
        nd_free(b2);
    }
    nd_body_free(p);
    nd_body_free(m);
    nd_free(x);
}

NDT_TEST(body, empty_and_zero_d_inputs) {
    nd_array *e = nd_zeros(ND_FLOAT32, 2, (int64_t[]){0, 3});
    nd_body *b = nd_body_trace("empty", 1, &e, small_step, NULL);
    cr_assert(b, "%s", nd_last_error());
    nd_array *r = nd_body_call(b, &e);
    cr_assert(r, "%s", nd_last_error());
    cr_expect_eq(nd_size(r), 0);
    cr_expect_eq(nd_shape(r)[1], 3);
    cr_expect_eq(nd_sync(), ND_OK);
    nd_free(r);
    nd_body_free(b);
    nd_free(e);

    float v = -0.0f;
    nd_array *z = nd_from_host(&v, ND_FLOAT32, 0, NULL);
    b = nd_body_trace("scalar", 1, &z, small_step, NULL);
    cr_assert(b, "%s", nd_last_error());
    r = nd_body_call(b, &z);
    nd_array *plain = small_step(&z, NULL);
    cr_assert(r && plain);
    cr_expect_eq(nd_ndim(r), 0);
    float gr = 1, gp = 2;
    cr_assert_eq(nd_to_host(r, &gr, sizeof gr), ND_OK);
    cr_assert_eq(nd_to_host(plain, &gp, sizeof gp), ND_OK);
    cr_expect_eq(memcmp(&gr, &gp, sizeof gr), 0, "0-d: %g vs %g", gr, gp);
    cr_expect(signbit(gr), "-0.0*0.99 + 0.01*sin(-0.0) is -0.0");
    nd_free(r);
    nd_free(plain);
    nd_body_free(b);
    nd_free(z);
}

typedef struct {
    const nd_body *b;
    nd_array *x;
    nd_array *out;
} thread_job;

/* 100 calls a thread, a sync every 25: how the threads interleave decides
 * where flushes cut their chains, so a run compiles kernels of its own on
 * a cold CUDA kernel cache; with 200 calls and a sync every 50 those
 * kernels took 17-25 s of NVRTC alone on the H200 host, 90 s beside three
 * other suites. */
#define THREAD_CALLS 100
static void *thread_main(void *p) {
    thread_job *j = p;
    nd_array *x = nd_retain(j->x);
    for (int i = 0; i < THREAD_CALLS; i++) {
        nd_array *y = nd_body_call(j->b, &x);
        nd_free(x);
        x = y;
        if (i % 25 == 24) nd_sync();
    }
    j->out = x;
    return NULL;
}

NDT_TEST(body, one_body_two_threads) {
    NDT_RNG(r);
    ref_arr *h1 = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){777}, -2, 2);
    ref_arr *h2 = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){777}, -2, 2);
    nd_array *x1 = ndt_upload(h1), *x2 = ndt_upload(h2);
    nd_body *b = nd_body_trace("step", 1, &x1, small_step, NULL);
    cr_assert(b);
    thread_job j1 = {b, x1, NULL}, j2 = {b, x2, NULL};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thread_main, &j1);
    pthread_create(&t2, NULL, thread_main, &j2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    nd_body_free(b); /* the results are pending or done: neither needs the handle */
    nd_array *p1 = run_loop(NULL, small_step, x1, THREAD_CALLS),
             *p2 = run_loop(NULL, small_step, x2, THREAD_CALLS);
    /* The threads' statements share one graph, so where a flush cuts their
     * chains depends on how they interleaved; a CUDA kernel contracts a
     * multiply and an add into an fma inside a kernel, not across a cut.
     * So on CUDA the values agree to rounding, on the CPU bit for bit. */
    void (*same)(const ref_arr *, const ref_arr *, const char *) =
        strcmp(nd_backend_name(), "cuda") == 0 ? expect_close_f32 : ndt_expect_same_bits;
    ref_arr *a = bytes_of(j1.out), *c = bytes_of(p1);
    same(a, c, "thread 1");
    ref_free(a);
    ref_free(c);
    a = bytes_of(j2.out);
    c = bytes_of(p2);
    same(a, c, "thread 2");
    ref_free(a);
    ref_free(c);
    nd_free(j1.out);
    nd_free(j2.out);
    nd_free(p1);
    nd_free(p2);
    nd_free(x1);
    nd_free(x2);
    ref_free(h1);
    ref_free(h2);
}

static nd_array *with_sum(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_add(in[0], nd_sum(in[0], ND_ALL_AXES));
}
static nd_array *with_item(nd_array *const *in, void *ctx) {
    (void)ctx;
    double s = nd_item(nd_max(in[0], ND_ALL_AXES));
    return nd_mul(in[0], nd_scalar(s));
}
static nd_array *with_outside(nd_array *const *in, void *ctx) { return nd_add(in[0], (nd_array *)ctx); }
static nd_array *with_view(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_mul(nd_view(in[0], "::-1"), nd_scalar(2.0));
}
static nd_array *with_store(nd_array *const *in, void *ctx) {
    nd_assign((nd_array *)ctx, in[0]);
    return nd_neg(in[0]);
}
static nd_array *with_random(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_add(in[0], nd_random_uniform(ND_FLOAT32, 1, (int64_t[]){4}, 0, 1));
}
static nd_array *with_bad_shapes(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_add(in[0], in[1]);
}

NDT_TEST(body, trace_refuses_what_is_not_elementwise) {
    float v[4] = {1, 2, 3, 4}, w[4] = {5, 6, 7, 8};
    nd_array *x = nd_from_host(v, ND_FLOAT32, 1, (int64_t[]){4});
    nd_array *other = nd_from_host(w, ND_FLOAT32, 1, (int64_t[]){4});
    /* pending work before the traces must survive them untouched */
    nd_array *three = nd_scalar(3.0);
    nd_array *pending = nd_mul(other, three);
    nd_free(three);
    nd_array *const *like = &x;
    nd_array *two[2] = {x, nd_zeros(ND_FLOAT32, 1, (int64_t[]){3})};
    uint64_t n0 = nodes_recorded();
    struct {
        nd_body_fn fn;
        void *ctx;
        const char *names;
    } cases[] = {
        {with_sum, NULL, "nd_sum"},
        {with_item, NULL, "nd_item"},
        {with_outside, other, "nd_add"},
        {with_view, NULL, "nd_mul"},
        {with_store, other, "nd_assign"},
        {with_random, NULL, "nd_random_uniform"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nd_body *b = nd_body_trace("bad", 1, like, cases[i].fn, cases[i].ctx);
        cr_expect_null(b, "case %zu traced", i);
        const char *m = nd_last_error();
        cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED, "case %zu: %s", i, m);
        cr_expect(m && strstr(m, "nd_body_trace") && strstr(m, cases[i].names) && strstr(m, "'bad'"),
                  "case %zu names %s: %s", i, cases[i].names, m ? m : "");
        nd_clear_error();
        nd_body_free(b);
    }
    /* an error of the function's own call is kept as it was */
    cr_expect_null(nd_body_trace("bad2", 2, two, with_bad_shapes, NULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_add");
    nd_free(two[1]);
    cr_expect_eq(nodes_recorded(), n0, "traces record nothing");
    /* the arrays the failing traces touched are as they were */
    float got[4], gw[4];
    cr_assert_eq(nd_to_host(pending, got, sizeof got), ND_OK);
    cr_assert_eq(nd_to_host(other, gw, sizeof gw), ND_OK);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(got[i], w[i] * 3.0f);
        cr_expect_eq(gw[i], w[i], "nd_assign inside a failed trace was taken back");
    }
    /* argument errors */
    cr_expect_null(nd_body_trace(NULL, 1, like, small_step, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_trace");
    cr_expect_null(nd_body_trace("bad name", 1, like, small_step, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_trace");
    cr_expect_null(nd_body_trace("ok", 0, like, small_step, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_trace");
    cr_expect_null(nd_body_trace("ok", 1, like, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_trace");
    nd_free(pending);
    nd_free(other);
    nd_free(x);
}

NDT_TEST(body, call_refuses_other_shapes_and_dtypes) {
    nd_array *x = nd_zeros(ND_FLOAT32, 1, (int64_t[]){4});
    nd_body *b = nd_body_trace("step", 1, &x, small_step, NULL);
    cr_assert(b);
    nd_array *y = nd_zeros(ND_FLOAT32, 1, (int64_t[]){5});
    cr_expect_null(nd_body_call(b, &y));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_body_call");
    nd_array *d = nd_zeros(ND_FLOAT64, 1, (int64_t[]){4});
    cr_expect_null(nd_body_call(b, &d));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_body_call");
    nd_array *s = nd_scalar(1.0);
    cr_expect_null(nd_body_call(b, &s));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_call");
    cr_expect_null(nd_body_call(NULL, &x));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_call");
    cr_expect_null(nd_body_call(b, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_call");
    /* a NULL input keeps the error that made it */
    nd_array *bad = nd_add(x, y); /* (4,) + (5,): ND_ERR_SHAPE */
    nd_array *in[1] = {bad};
    cr_expect_null(nd_body_call(b, in));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_add");
    /* a good call after the errors: nothing was lost */
    nd_array *r = nd_body_call(b, &x);
    cr_assert(r, "%s", nd_last_error());
    float got[4] = {1, 1, 1, 1};
    cr_assert_eq(nd_to_host(r, got, sizeof got), ND_OK);
    for (int i = 0; i < 4; i++) cr_expect_eq(got[i], 0.0f);
    nd_free(r);
    nd_body_free(b);
    nd_free(s);
    nd_free(d);
    nd_free(y);
    nd_free(x);
}

NDT_TEST(body, graph_dump_names_the_body) {
    nd_array *x = nd_zeros(ND_FLOAT32, 1, (int64_t[]){16});
    nd_body *b = nd_body_trace("decay_step", 1, &x, small_step, NULL);
    cr_assert(b);
    nd_array *y = nd_body_call(b, &x);
    char path[] = "/tmp/nd_body_dot_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK, "%s", nd_last_error());
    FILE *f = fopen(path, "r");
    cr_assert(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    remove(path);
    cr_expect(strstr(buf, "decay_step"), "the dump labels the call with the body's name:\n%s", buf);
    nd_free(y);
    nd_body_free(b);
    nd_free(x);
}

/* Plans and runs what is pending, returning its kernels' structural hashes
 * and (CUDA builds) the CUDA generator's source of each (caller frees). */
static int plan_kernels(uint64_t *hash, char **src, int cap) {
    int depth = nd_api_enter("plan_kernels");
    cr_assert_eq(nd_runtime_drain(), ND_OK);
    nd_flush_job job;
    nd_status st = nd_scheduler_submit(&nd_rt.sched, &nd_rt.graph, &job);
    int n = 0;
    if (st == ND_OK && job.plan) {
        for (int32_t i = 0; i < job.plan->n_steps; i++) {
            const nd_step *s = &job.plan->steps[i];
            if (s->kind != ND_STEP_KERNEL || n >= cap) continue;
            hash[n] = s->kernel->hash;
            src[n] = NULL;
#if defined(NDT_CUDA_BUILT)
            nd_cuda_kinfo info;
            if (nd_cuda_kernel_info(s->kernel, &info) == ND_OK) nd_cuda_codegen(s->kernel, &info, &src[n]);
#endif
            n++;
        }
        st = nd_scheduler_execute(&nd_rt.sched, &job);
        nd_scheduler_finish(&nd_rt.sched, &job);
    }
    nd_api_leave(&depth);
    cr_assert_eq(st, ND_OK, "%s", nd_last_error());
    return n;
}

/* The calls' kernels are the plain recording's: the same IR (structural
 * hash), so the same CUDA source from the generator, which the emulated
 * CUDA checks (src/backends/cuda/tests/emulate_check.sh, ops'
 * cuda_emulated) cover op by op. */
NDT_TEST(body, kernels_are_the_plain_recordings) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.early_flush = -1;
    /* calls one by one: joined into a loop call they are another kernel
     * by design (body::loop_calls_* test those) */
    cfg.body_loops = -1;
    ndt_restart(&cfg);
    NDT_RNG(r);
    ref_arr *ha = ndt_rand(&r, ND_INT32, 2, (int64_t[]){3, 1}, -50, 50);
    ref_arr *hb = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){4}, -4, 4);
    ref_arr *hc = ndt_rand(&r, ND_BOOL, 2, (int64_t[]){3, 4}, 0, 1);
    ref_arr *hx = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){1000}, -3, 3);
    nd_array *in[3] = {ndt_upload(ha), ndt_upload(hb), ndt_upload(hc)};
    nd_array *x = ndt_upload(hx);
    nd_body *bm = nd_body_trace("mixed", 3, in, mixed_step, NULL);
    nd_body *bs = nd_body_trace("small", 1, &x, small_step, NULL);
    cr_assert(bm && bs, "%s", nd_last_error());
    /* Every input on the device before the two ways: on CUDA the flush that
     * uploads a host array keeps it whole (docs/internals.md, "Several
     * devices"), so under a split the first way's plan, which would upload
     * them, would differ from the second's (under ND_DEVICES=0,0 the H200
     * showed kernel 3's IR differing when the plain way came first). */
    nd_array *all_in[4] = {in[0], in[1], in[2], x};
    for (int k = 0; k < 4; k++) {
        nd_array *s = nd_sum(all_in[k], ND_ALL_AXES);
        (void)nd_item(s);
        nd_free(s);
    }
    nd_sync();
    enum { CAP = 64 };
    uint64_t h[2][CAP];
    char *src[2][CAP];
    int n[2];
    for (int way = 0; way < 2; way++) {
        nd_array *m = way ? nd_body_call(bm, in) : mixed_step(in, NULL);
        nd_array *y = run_loop(way ? bs : NULL, small_step, x, 300);
        nd_array *sm = nd_sum(m, ND_ALL_AXES);
        nd_array *z = nd_mul(y, sm); /* the calls feed other ops */
        n[way] = plan_kernels(h[way], src[way], CAP);
        nd_free(sm);
        nd_free(z);
        nd_free(y);
        nd_free(m);
    }
    cr_expect_eq(n[0], n[1], "kernels: plain %d, body %d", n[0], n[1]);
    cr_expect_gt(n[0], 2);
#if defined(NDT_CUDA_BUILT)
    cr_expect(n[1] > 0 && src[1][0] && strstr(src[1][0], "__global__"), "the CUDA generator made the body's source");
#endif
    for (int i = 0; i < n[0] && i < n[1]; i++) {
        cr_expect_eq(h[0][i], h[1][i], "kernel %d: IR differs", i);
        if (src[0][i] || src[1][i])
            cr_expect(src[0][i] && src[1][i] && !strcmp(src[0][i], src[1][i]), "kernel %d: CUDA source differs", i);
    }
    for (int way = 0; way < 2; way++)
        for (int i = 0; i < n[way]; i++) free(src[way][i]);
    nd_body_free(bm);
    nd_body_free(bs);
    for (int k = 0; k < 3; k++) nd_free(in[k]);
    nd_free(x);
    ref_free(ha);
    ref_free(hb);
    ref_free(hc);
    ref_free(hx);
}

static nd_array *identity(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_retain(in[0]);
}
static nd_array *to_f64_plus_row(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    /* a fill of shape (4,) broadcast against (3, 4), a cast */
    nd_array *r = nd_keep(nd_add(nd_astype(in[0], ND_FLOAT64), nd_full(ND_FLOAT64, 1, (int64_t[]){4}, 0.25)));
    nd_scope_end();
    return r;
}
/* 100 ops: more entries than the builder's stack array holds */
static nd_array *long_chain(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_scope_begin();
    nd_array *x = in[0];
    for (int i = 0; i < 100; i++) x = nd_add(nd_mul(x, nd_scalar(0.5)), nd_scalar((double)i));
    nd_keep(x);
    nd_scope_end();
    return x;
}
static const nd_body *outer_inner;
static nd_array *calls_a_body(nd_array *const *in, void *ctx) {
    (void)ctx;
    return nd_body_call(outer_inner, in);
}
static nd_array *traces_inside(nd_array *const *in, void *ctx) {
    (void)ctx;
    nd_body *b = nd_body_trace("inner", 1, in, identity, NULL);
    nd_body_free(b);
    return b ? nd_neg(in[0]) : NULL;
}

NDT_TEST(body, identity_cast_fill_and_long_bodies) {
    int32_t v[12];
    for (int i = 0; i < 12; i++) v[i] = i * 7 - 40;
    v[0] = INT32_MIN;
    nd_array *a = nd_from_host(v, ND_INT32, 2, (int64_t[]){3, 4});
    nd_body *id = nd_body_trace("id", 1, &a, identity, NULL);
    nd_body *cf = nd_body_trace("cf", 1, &a, to_f64_plus_row, NULL);
    nd_body *lc = nd_body_trace("lc", 1, &a, long_chain, NULL);
    cr_assert(id && cf && lc, "%s", nd_last_error());
    nd_array *r_id = nd_body_call(id, &a), *r_cf = nd_body_call(cf, &a), *r_lc = nd_body_call(lc, &a);
    nd_array *p_cf = to_f64_plus_row(&a, NULL), *p_lc = long_chain(&a, NULL);
    cr_assert(r_id && r_cf && r_lc && p_cf && p_lc, "%s", nd_last_error());
    int32_t gi[12];
    cr_assert_eq(nd_to_host(r_id, gi, sizeof gi), ND_OK);
    cr_expect_eq(memcmp(gi, v, sizeof v), 0, "identity");
    double gc[12];
    cr_assert_eq(nd_to_host(r_cf, gc, sizeof gc), ND_OK);
    for (int i = 0; i < 12; i++) cr_expect_eq(gc[i], (double)v[i] + 0.25, "[%d]", i);
    ref_arr *x = bytes_of(r_lc), *y = bytes_of(p_lc);
    ndt_expect_same_bits(x, y, "100 ops");
    ref_free(x);
    ref_free(y);
    x = bytes_of(r_cf);
    y = bytes_of(p_cf);
    ndt_expect_same_bits(x, y, "cast and fill");
    ref_free(x);
    ref_free(y);
    nd_free(r_id);
    nd_free(r_cf);
    nd_free(r_lc);
    nd_free(p_cf);
    nd_free(p_lc);
    /* a call nobody reads is dropped before it runs, and lets the body go */
    nd_free(nd_body_call(cf, &a));
    /* a body inside a body, a trace inside a trace: refused */
    outer_inner = id;
    cr_expect_null(nd_body_trace("outer", 1, &a, calls_a_body, NULL));
    NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_body_call");
    cr_expect_null(nd_body_trace("outer", 1, &a, traces_inside, NULL));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_body_trace");
    /* a freed body is not called again (a pending call keeps it alive:
     * without one it is gone, as a freed handle is) */
    nd_array *hold = nd_body_call(id, &a);
    nd_body_free(id);
    cr_expect_null(nd_body_call(id, &a));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_call");
    cr_assert_eq(nd_to_host(hold, gi, sizeof gi), ND_OK, "the pending call still runs");
    cr_expect_eq(memcmp(gi, v, sizeof v), 0);
    nd_free(hold);
    nd_body_free(cf);
    nd_body_free(lc);
    nd_free(a);
}

/* A freed body whose calls have all run: its template is gone, but its
 * struct waits in the runtime's ring (common/body.h), so passing it again
 * is an error, not a read of freed (and reused) memory. The heap's blocks
 * of a body's size are taken and filled with a live body's bytes between
 * the free and the call: without the ring, b's own block is among them
 * (glibc hands back the block freed last) and b would look alive; ASan
 * reports the read as a use after free. */
NDT_TEST(body, freed_body_is_refused_after_its_calls_ran) {
    const int64_t n = 6;
    float v[6] = {1, -2, 3.5f, 0, -0.0f, 7};
    nd_array *a = nd_from_host(v, ND_FLOAT32, 1, &n);
    nd_body *b = nd_body_trace("step", 1, &a, twice_plus_one, NULL);
    nd_body *live = nd_body_trace("live", 1, &a, twice_minus_one, NULL);
    cr_assert(a && b && live, "%s", nd_last_error());
    nd_array *r = nd_body_call(b, &a);
    cr_assert(r, "%s", nd_last_error());
    nd_body_free(b);
    float got[6];
    cr_assert_eq(nd_to_host(r, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], 2 * v[i] + 1, "[%d]", i);
    nd_free(r); /* the call ran: b's last reference went */
    /* other work, recorded and synced; other bodies traced and freed */
    for (int k = 0; k < 8; k++) {
        nd_body *o = nd_body_trace("other", 1, &a, twice_plus_one, NULL);
        cr_assert(o, "%s", nd_last_error());
        nd_array *y = nd_body_call(o, &a), *z = nd_add(a, a);
        nd_body_free(o);
        cr_assert(y && z, "%s", nd_last_error());
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        nd_free(y);
        nd_free(z);
    }
    void *decoys[64];
    for (int k = 0; k < 64; k++) {
        decoys[k] = malloc(sizeof(struct nd_body));
        cr_assert(decoys[k]);
        memcpy(decoys[k], live, sizeof(struct nd_body));
    }
    cr_expect_null(nd_body_call(b, &a), "a freed body must not record a call");
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_call");
    cr_expect_null(nd_body_name(b));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_name");
    cr_expect_eq(nd_body_n_inputs(b), -1);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_body_n_inputs");
    nd_body_free(b); /* a second free: nothing */
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    for (int k = 0; k < 64; k++) free(decoys[k]);
    /* the live body is untouched; NULL stays quiet */
    cr_expect_str_eq(nd_body_name(live), "live");
    cr_expect_eq(nd_body_n_inputs(live), 1);
    cr_expect_null(nd_body_name(NULL));
    cr_expect_eq(nd_body_n_inputs(NULL), -1);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_body_free(live);
    nd_free(a);
}
