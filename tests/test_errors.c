/* Errors: every bad input returns the documented status with a message that
 * names the function, the first error survives a chain of NULL inputs,
 * arrays made before an error keep their values, nothing crashes. */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>

/* expr must give NULL with status `code` and a message naming `func` */
#define EXPECT_NULL(expr, code, func)                                                        \
    do {                                                                                     \
        nd_clear_error();                                                                    \
        nd_array *r_ = (expr);                                                               \
        cr_expect_null(r_, "%s should fail", #expr);                                         \
        NDT_EXPECT_ERR(code, func);                                                          \
    } while (0)
#define EXPECT_NULL2(expr, c1, c2, func)                                                     \
    do {                                                                                     \
        nd_clear_error();                                                                    \
        nd_array *r_ = (expr);                                                               \
        cr_expect_null(r_, "%s should fail", #expr);                                         \
        NDT_EXPECT_ERR2(c1, c2, func);                                                       \
    } while (0)
#define EXPECT_STATUS(expr, code, func)                                                      \
    do {                                                                                     \
        nd_clear_error();                                                                    \
        nd_status s_ = (expr);                                                               \
        cr_expect_eq(s_, code, "%s returned %s, want %s", #expr, nd_status_name(s_),          \
                     nd_status_name(code));                                                  \
        NDT_EXPECT_ERR(code, func);                                                          \
    } while (0)

static nd_array *x34, *v5, *x2d;
static float x34_host[12];

static void make_inputs(void) {
    for (int i = 0; i < 12; i++) x34_host[i] = (float)i * 0.5f - 2.0f;
    x34 = nd_from_host(x34_host, ND_FLOAT32, ND_SHAPE(3, 4));
    v5 = nd_arange(ND_FLOAT32, 0, 5, 1);
    x2d = nd_ones(ND_INT32, ND_SHAPE(2, 3));
    cr_assert(x34 && v5 && x2d, "%s", nd_last_error());
}

/* the arrays made before the errors keep their values and sync is fine */
static void check_survivors(void) {
    nd_clear_error();
    cr_expect_eq(nd_sync(), ND_OK, "sync after record-time errors: %s", nd_last_error());
    float got[12];
    cr_assert_eq(nd_to_host(x34, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++) cr_expect_eq(got[i], x34_host[i], "x34[%d] changed", i);
    nd_array *sum = nd_sum(v5, 0);
    cr_expect_eq(nd_item(sum), 10.0);
    nd_free(sum);
    nd_free(x34); nd_free(v5); nd_free(x2d);
}

NDT_TEST(errors, null_handles) {
    make_inputs();
    EXPECT_NULL(nd_add(NULL, x34), ND_ERR_ARG, "nd_add");
    EXPECT_NULL(nd_mul(x34, NULL), ND_ERR_ARG, "nd_mul");
    EXPECT_NULL(nd_exp(NULL), ND_ERR_ARG, "nd_exp");
    EXPECT_NULL(nd_where(NULL, x34, x34), ND_ERR_ARG, "nd_where");
    EXPECT_NULL(nd_clip(x34, NULL, x34), ND_ERR_ARG, "nd_clip");
    EXPECT_NULL(nd_sum(NULL, 0), ND_ERR_ARG, "nd_sum");
    EXPECT_NULL(nd_argmax(NULL, ND_ALL_AXES), ND_ERR_ARG, "nd_argmax");
    EXPECT_NULL(nd_matmul(x34, NULL), ND_ERR_ARG, "nd_matmul");
    EXPECT_NULL(nd_view(NULL, "0"), ND_ERR_ARG, "nd_view");
    EXPECT_NULL(nd_view(x34, NULL), ND_ERR_ARG, "nd_view");
    EXPECT_NULL(nd_reshape(NULL, ND_SHAPE(12)), ND_ERR_ARG, "nd_reshape");
    EXPECT_NULL(nd_transpose(NULL, NULL), ND_ERR_ARG, "nd_transpose");
    EXPECT_NULL(nd_broadcast_to(NULL, ND_SHAPE(2)), ND_ERR_ARG, "nd_broadcast_to");
    EXPECT_NULL(nd_astype(NULL, ND_FLOAT64), ND_ERR_ARG, "nd_astype");
    EXPECT_NULL(nd_copy(NULL), ND_ERR_ARG, "nd_copy");
    EXPECT_NULL(nd_ravel(NULL), ND_ERR_ARG, "nd_ravel");
    nd_array *pair[2] = {x34, NULL};
    EXPECT_NULL(nd_concatenate(2, pair, 0), ND_ERR_ARG, "nd_concatenate");
    EXPECT_NULL(nd_stack(2, pair, 0), ND_ERR_ARG, "nd_stack");
    EXPECT_NULL(nd_concatenate(2, NULL, 0), ND_ERR_ARG, "nd_concatenate");
    EXPECT_NULL(nd_from_host(NULL, ND_FLOAT32, ND_SHAPE(3)), ND_ERR_ARG, "nd_from_host");
    EXPECT_STATUS(nd_assign(NULL, x34), ND_ERR_ARG, "nd_assign");
    EXPECT_STATUS(nd_assign(x34, NULL), ND_ERR_ARG, "nd_assign");
    EXPECT_STATUS(nd_fill(NULL, 1), ND_ERR_ARG, "nd_fill");
    float buf[4];
    EXPECT_STATUS(nd_to_host(NULL, buf, sizeof buf), ND_ERR_ARG, "nd_to_host");
    nd_clear_error();
    cr_expect(isnan(nd_item(NULL)), "nd_item(NULL) is NaN");
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_item");
    /* inspection and lifetime functions tolerate NULL */
    nd_free(NULL);
    cr_expect_eq(nd_ndim(NULL), -1);
    cr_expect_eq(nd_size(NULL), -1);
    cr_expect_null(nd_shape(NULL));
    cr_expect_eq(nd_dtype_of(NULL), ND_NUM_DTYPES);
    check_survivors();
}

NDT_TEST(errors, first_error_propagates_through_a_chain) {
    make_inputs();
    nd_array *bad = nd_add(x34, v5); /* (3,4) + (5,) */
    cr_expect_null(bad);
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "got %s", nd_status_name(nd_last_status()));
    char first[512];
    snprintf(first, sizeof first, "%s", nd_last_error() ? nd_last_error() : "");
    nd_array *c = nd_exp(bad), *d = nd_mul(c, x34), *e = nd_sum(d, 0);
    nd_array *f = nd_matmul(e, x34), *g = nd_view(f, "0"), *h = nd_astype(g, ND_FLOAT64);
    cr_expect(!c && !d && !e && !f && !g && !h, "every op on a NULL input returns NULL");
    nd_status st = nd_assign(x34, h);
    cr_expect_neq(st, ND_OK);
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "the first error is kept, got %s",
                 nd_status_name(nd_last_status()));
    cr_expect_str_eq(nd_last_error(), first, "the first message is kept");
    cr_expect(strstr(first, "nd_add") && strstr(first, "(3,4)") && strstr(first, "(5,)"),
              "message names the function and both shapes: '%s'", first);
    nd_clear_error();
    cr_expect_eq(nd_last_status(), ND_OK, "nd_clear_error resets the status");
    check_survivors();
}

NDT_TEST(errors, invalid_dtypes) {
    make_inputs();
    const nd_dtype bad = (nd_dtype)99;
    EXPECT_NULL2(nd_zeros(bad, ND_SHAPE(3)), ND_ERR_DTYPE, ND_ERR_ARG, "nd_zeros");
    EXPECT_NULL2(nd_full((nd_dtype)-1, ND_SHAPE(3), 1), ND_ERR_DTYPE, ND_ERR_ARG, "nd_full");
    EXPECT_NULL2(nd_astype(x34, bad), ND_ERR_DTYPE, ND_ERR_ARG, "nd_astype");
    EXPECT_NULL2(nd_from_host(x34_host, bad, ND_SHAPE(3)), ND_ERR_DTYPE, ND_ERR_ARG, "nd_from_host");
    EXPECT_NULL2(nd_arange(ND_NUM_DTYPES, 0, 3, 1), ND_ERR_DTYPE, ND_ERR_ARG, "nd_arange");
    EXPECT_NULL2(nd_random_uniform(bad, ND_SHAPE(3), 0, 1), ND_ERR_DTYPE, ND_ERR_ARG, "nd_random_uniform");
    cr_expect_str_eq(nd_dtype_name(bad), "?");
    cr_expect_eq(nd_dtype_size(bad), 0);
    cr_expect_str_eq(nd_dtype_name(ND_BFLOAT16), "bfloat16");
    cr_expect_eq(nd_dtype_size(ND_FLOAT16), 2);
    cr_expect_str_eq(nd_status_name(ND_ERR_SHAPE), "ND_ERR_SHAPE");
    /* an operation that does not accept a dtype */
    nd_array *b = nd_ones(ND_BOOL, ND_SHAPE(3));
    EXPECT_NULL(nd_sub(b, b), ND_ERR_DTYPE, "nd_sub");
    nd_free(b);
    check_survivors();
}

NDT_TEST(errors, shapes_that_do_not_broadcast) {
    make_inputs();
    nd_clear_error();
    cr_expect_null(nd_add(x34, v5));
    const char *m = nd_last_error();
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE);
    cr_expect(m && strstr(m, "nd_add") && strstr(m, "(3,4)") && strstr(m, "(5,)"),
              "message names nd_add and both shapes: '%s'", m ? m : "");
    nd_clear_error();
    cr_expect_null(nd_maximum(v5, x2d));
    m = nd_last_error();
    cr_expect(m && strstr(m, "nd_maximum") && strstr(m, "(5,)") && strstr(m, "(2,3)"),
              "message names nd_maximum and both shapes: '%s'", m ? m : "");
    nd_clear_error();
    nd_array *c = nd_ones(ND_BOOL, ND_SHAPE(4));
    EXPECT_NULL(nd_where(c, x34, v5), ND_ERR_SHAPE, "nd_where");
    EXPECT_NULL(nd_broadcast_to(v5, ND_SHAPE(2, 4)), ND_ERR_SHAPE, "nd_broadcast_to");
    EXPECT_NULL(nd_broadcast_to(x34, ND_SHAPE(4)), ND_ERR_SHAPE, "nd_broadcast_to");
    nd_free(c);
    check_survivors();
}

NDT_TEST(errors, axes_out_of_range) {
    make_inputs();
    EXPECT_NULL2(nd_sum(x34, 2), ND_ERR_ARG, ND_ERR_INDEX, "nd_sum");
    EXPECT_NULL2(nd_mean(x34, -3), ND_ERR_ARG, ND_ERR_INDEX, "nd_mean");
    EXPECT_NULL2(nd_argmax(x34, 7), ND_ERR_ARG, ND_ERR_INDEX, "nd_argmax");
    EXPECT_NULL2(nd_max(v5, 1), ND_ERR_ARG, ND_ERR_INDEX, "nd_max");
    nd_array *two[2] = {x34, x34};
    EXPECT_NULL2(nd_concatenate(2, two, 2), ND_ERR_ARG, ND_ERR_INDEX, "nd_concatenate");
    EXPECT_NULL2(nd_stack(2, two, 3), ND_ERR_ARG, ND_ERR_INDEX, "nd_stack");
    const int perm_dup[2] = {0, 0}, perm_big[2] = {0, 2};
    EXPECT_NULL2(nd_transpose(x34, perm_dup), ND_ERR_ARG, ND_ERR_INDEX, "nd_transpose");
    EXPECT_NULL2(nd_transpose(x34, perm_big), ND_ERR_ARG, ND_ERR_INDEX, "nd_transpose");
    check_survivors();
}

NDT_TEST(errors, malformed_index_strings) {
    make_inputs();
    static const char *const bad[] = {"1:2:3:4", "abc", "::0", "...,...", "0,0,0", "5",
                                      "-4", ":, 4", "0,,1", "1.5", "1:2 3", "[0]", ":, :, :"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nd_clear_error();
        nd_array *v = nd_view(x34, bad[i]);
        cr_expect_null(v, "nd_view(x34 (3,4), \"%s\") should fail", bad[i]);
        nd_status st = nd_last_status();
        const char *m = nd_last_error();
        cr_expect_eq(st, ND_ERR_INDEX, "\"%s\": %s (%s)", bad[i], nd_status_name(st), m ? m : "");
        cr_expect(m && strstr(m, "nd_view"), "\"%s\": message should name nd_view: '%s'", bad[i], m ? m : "");
        nd_free(v);
    }
    nd_clear_error();
    nd_array *ok = nd_view(x34, "1:,  None, ::-2");
    cr_expect(ok, "whitespace and None are fine: %s", nd_last_error());
    nd_free(ok);
    check_survivors();
}

NDT_TEST(errors, bad_shapes_and_dims) {
    make_inputs();
    EXPECT_NULL2(nd_zeros(ND_FLOAT32, ND_SHAPE(3, -1)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_zeros");
    EXPECT_NULL2(nd_ones(ND_INT8, ND_SHAPE(-5)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_ones");
    int64_t huge = (int64_t)1 << 40;
    EXPECT_NULL2(nd_zeros(ND_FLOAT32, ND_SHAPE(huge, huge)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_zeros");
    EXPECT_NULL2(nd_empty(ND_FLOAT64, ND_SHAPE(INT64_MAX, 2)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_empty");
    EXPECT_NULL2(nd_zeros(ND_FLOAT32, ND_SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 1)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_zeros");
    EXPECT_NULL2(nd_zeros(ND_FLOAT32, -1, NULL), ND_ERR_SHAPE, ND_ERR_ARG, "nd_zeros");
    EXPECT_NULL2(nd_reshape(x34, ND_SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 12)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_reshape");
    nd_clear_error();
    nd_array *nine = nd_view(v5, "None, None, None, None, None, None, None, None, :");
    cr_expect_null(nine, "a 9-d view must fail");
    cr_expect_neq(nd_last_status(), ND_OK);
    nd_clear_error();
    EXPECT_NULL(nd_reshape(x34, ND_SHAPE(5)), ND_ERR_SHAPE, "nd_reshape");
    EXPECT_NULL2(nd_reshape(x34, ND_SHAPE(-1, -1)), ND_ERR_SHAPE, ND_ERR_ARG, "nd_reshape");
    EXPECT_NULL(nd_reshape(x34, ND_SHAPE(-1, 5)), ND_ERR_SHAPE, "nd_reshape");
    EXPECT_NULL2(nd_arange(ND_FLOAT32, 0, 1, 0), ND_ERR_ARG, ND_ERR_SHAPE, "nd_arange");
    EXPECT_NULL2(nd_linspace(ND_FLOAT32, 0, 1, -1), ND_ERR_ARG, ND_ERR_SHAPE, "nd_linspace");
    check_survivors();
}

NDT_TEST(errors, mismatched_operands) {
    make_inputs();
    nd_array *m52 = nd_ones(ND_FLOAT32, ND_SHAPE(5, 2)), *s0 = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 1);
    EXPECT_NULL(nd_matmul(x34, m52), ND_ERR_SHAPE, "nd_matmul");
    EXPECT_NULL(nd_matmul(s0, x34), ND_ERR_SHAPE, "nd_matmul");
    EXPECT_NULL(nd_matmul(v5, x34), ND_ERR_SHAPE, "nd_matmul");
    nd_array *ab[2] = {x34, m52}, *ac[2] = {x34, v5};
    EXPECT_NULL(nd_concatenate(2, ab, 0), ND_ERR_SHAPE, "nd_concatenate");
    EXPECT_NULL(nd_concatenate(2, ac, 0), ND_ERR_SHAPE, "nd_concatenate");
    EXPECT_NULL2(nd_concatenate(0, ab, 0), ND_ERR_ARG, ND_ERR_SHAPE, "nd_concatenate");
    EXPECT_NULL(nd_stack(2, ab, 0), ND_ERR_SHAPE, "nd_stack");
    EXPECT_STATUS(nd_assign(x34, v5), ND_ERR_SHAPE, "nd_assign");
    nd_array *row = nd_view(x34, "0");
    EXPECT_STATUS(nd_assign(row, x34), ND_ERR_SHAPE, "nd_assign");
    nd_array *bc = nd_broadcast_to(v5, ND_SHAPE(3, 5));
    EXPECT_STATUS(nd_assign(bc, v5), ND_ERR_ARG, "nd_assign");
    EXPECT_STATUS(nd_fill(bc, 2), ND_ERR_ARG, "nd_fill");
    nd_free(m52); nd_free(s0); nd_free(row); nd_free(bc);
    check_survivors();
}

NDT_TEST(errors, reads) {
    make_inputs();
    float small[4];
    EXPECT_STATUS(nd_to_host(x34, small, sizeof small), ND_ERR_ARG, "nd_to_host");
    EXPECT_STATUS(nd_to_host(x34, NULL, 48), ND_ERR_ARG, "nd_to_host");
    nd_clear_error();
    double it = nd_item(v5);
    cr_expect(isnan(it), "nd_item of 5 elements is NaN, got %g", it);
    cr_expect_neq(nd_last_status(), ND_OK);
    cr_expect(strstr(nd_last_error(), "nd_item"), "message names nd_item: '%s'", nd_last_error());
    nd_clear_error();
    check_survivors();
}

/* nd_init refuses bad settings with ND_ERR_ARG and a message naming the
 * field, and the library still starts afterwards. */
NDT_TEST(errors, bad_settings_are_refused) {
    nd_shutdown();
    const struct {
        nd_config cfg;
        const char *field;
    } bad[] = {
        {{.early_flush = 2}, "early_flush"},
        {{.fusion = -2}, "fusion"},
        {{.max_pending = -1}, "max_pending"},
        {{.struct_size = sizeof(nd_config), .scope_replay = 2}, "scope_replay"},
        {{.struct_size = sizeof(nd_config), .body_loops = 2}, "body_loops"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(nd_init(&bad[i].cfg), ND_ERR_ARG, "nd_config.%s out of range", bad[i].field);
        cr_expect(strstr(nd_last_error(), bad[i].field), "the message should name %s: '%s'", bad[i].field,
                  nd_last_error());
        nd_clear_error();
    }
    ndt_restart(NULL);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
}

/* ND_* integer variables share one parser (common/env.c): a bad value is
 * refused naming the variable and the value; a k/m/g suffix is taken where
 * the variable allows one. */
NDT_TEST(errors, bad_environment_values_are_refused) {
    nd_shutdown();
    const struct {
        const char *name, *value;
    } bad[] = {
        {"ND_MAX_PENDING", "12x"}, {"ND_LOG", "9"}, {"ND_DEVICE_MEMORY_LIMIT", "5q"}, {"ND_MAX_PENDING", "4k"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i].name, bad[i].value, 1);
        cr_expect_eq(nd_init(NULL), ND_ERR_ARG, "%s=%s accepted", bad[i].name, bad[i].value);
        cr_expect(strstr(nd_last_error(), bad[i].name) && strstr(nd_last_error(), bad[i].value),
                  "the message should name %s and '%s': '%s'", bad[i].name, bad[i].value, nd_last_error());
        nd_clear_error();
        unsetenv(bad[i].name);
    }
    setenv("ND_DEVICE_MEMORY_LIMIT", "1G", 1);
    cr_expect_eq(nd_init(NULL), ND_OK, "ND_DEVICE_MEMORY_LIMIT=1G: %s", nd_last_error());
    nd_shutdown();
    unsetenv("ND_DEVICE_MEMORY_LIMIT");
    ndt_restart(NULL);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
}

NDT_TEST(errors, state_and_io) {
    make_inputs();
    nd_clear_error();
    cr_expect_eq(nd_init(NULL), ND_ERR_STATE, "nd_init while running");
    cr_expect(strstr(nd_last_error(), "nd_init"), "'%s'", nd_last_error());
    nd_clear_error();
    nd_array *y = nd_exp(x34);
    EXPECT_STATUS(nd_graph_dump_dot("/nonexistent-dir-for-nd-tests/graph.dot"), ND_ERR_IO,
                  "nd_graph_dump_dot");
    float got[12];
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++) cr_expect(fabsf(got[i] - expf(x34_host[i])) <= 1e-5f * expf(x34_host[i]));
    nd_free(y);
    check_survivors();
}

static void *other_thread(void *arg) {
    nd_status *seen = arg;
    seen[0] = nd_last_status();         /* this thread has no error yet */
    nd_array *r = nd_exp(NULL);         /* its own error */
    seen[1] = r ? ND_OK : nd_last_status();
    return NULL;
}

NDT_TEST(errors, last_error_is_per_thread) {
    make_inputs();
    cr_expect_null(nd_add(x34, v5));
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE);
    nd_status seen[2] = {ND_ERR_STATE, ND_ERR_STATE};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, other_thread, seen), 0);
    pthread_join(th, NULL);
    cr_expect_eq(seen[0], ND_OK, "a new thread starts without an error, saw %s", nd_status_name(seen[0]));
    cr_expect_eq(seen[1], ND_ERR_ARG, "the other thread sees its own error, saw %s", nd_status_name(seen[1]));
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "this thread's error is untouched");
    cr_expect(strstr(nd_last_error(), "nd_add"), "'%s'", nd_last_error());
    check_survivors();
}

NDT_TEST(errors, out_of_device_memory_is_reported_not_fatal) {
    if (!ndt_backend_is_cuda())
        cr_skip_test("device_memory_limit applies to GPU backends; backend is %s", nd_backend_name());
    nd_config cfg = {0};
    cfg.device_memory_limit = (int64_t)64 << 20;
    ndt_restart(&cfg);
    make_inputs();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *zeros = nd_zeros(ND_FLOAT32, ND_SHAPE((int64_t)64 << 20)), *one_s = nd_scalar(1.0);
    nd_array *big = nd_add(zeros, one_s); /* 256 MiB */
    cr_assert(big, "recording is fine: %s", nd_last_error());
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_OOM, "a 256 MiB result under a 64 MiB limit: sync gave %s", nd_status_name(st));
    float one;
    nd_clear_error();
    nd_array *first = nd_view(big, ":1");
    nd_status rs = nd_to_host(first, &one, sizeof one);
    cr_expect_eq(rs, ND_ERR_OOM, "reading the failed array reports its error, got %s", nd_status_name(rs));
    nd_free(first);
    nd_free(big);
    nd_free(zeros);
    nd_free(one_s);
    nd_clear_error();
    /* everything else keeps its value and new work runs */
    nd_array *two = nd_scalar(2.0);
    nd_array *y = nd_mul(x34, two);
    float got[12];
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++) cr_expect_eq(got[i], 2 * x34_host[i]);
    nd_free(y);
    nd_free(two);
    check_survivors();
}

/* One rule for every ND_* variable: a bad value makes
 * nd_init fail with ND_ERR_ARG naming the variable and the value, whichever
 * backend starts (ND_PINNED_CACHE fails on the CPU backend too) and even
 * where nd_config overrides it; a good value starts with ND_OK and leaves
 * no error behind. ND_EXECUTOR_THREAD=abc was ignored but left its error
 * sticky; ND_CHUNK_BYTES and ND_PINNED_CACHE were not read at all on the
 * CPU backend. */
NDT_TEST(errors, every_environment_variable_follows_one_rule) {
    static const struct {
        const char *name, *bad1, *bad2, *good;
    } vars[] = {
        {"ND_BACKEND", "tpu", "cpu2", NULL}, /* good: the registration's own */
        {"ND_NUM_THREADS", "-1", "many", "2"},
        {"ND_DEVICES", "zero", "0;1", "0"},
        {"ND_LOG", "4", "loud", "0"},
        {"ND_PROFILE", "2", "yes", "0"},
        {"ND_FUSION", "2", "off", "1"},
        {"ND_CUDA_GRAPHS", "-1", "no", "1"},
        {"ND_MATMUL_TF32", "3", "on", "0"},
        {"ND_EARLY_FLUSH", "5", "x", "1"},
        {"ND_SCOPE_REPLAY", "2", "on", "0"},
        {"ND_BODY_LOOPS", "2", "yes", "0"},
        {"ND_MAX_PENDING", "0", "1e4", "5000"},
        {"ND_DEVICE_MEMORY_LIMIT", "-1", "5q", "2g"},
        {"ND_CHUNK_BYTES", "0", "abc", "16m"},
        {"ND_EXECUTOR_THREAD", "abc", "2", "0"},
        {"ND_LOCK_BIAS", "2", "off", "1"},
        {"ND_CPU_JIT", "maybe", "2", "0"},
        {"ND_CPU_JIT_MIN", "-5", "big", "1000"},
        {"ND_PINNED_CACHE", "-1", "lots", "1m"},
        {"ND_CUDA_GENERIC", "2", "off", "0"},
        {"ND_CUDA_PERSIST", "2", "off", "0"},
        {"ND_CUDA_SHARE_STREAMS", "2", "yes", "1"},
        {"ND_CUDA_CHOL_SIDE_ZEROS", "2", "yes", "1"},
        {"ND_CHECK_SPMD", "2", "yes", "1"},
        {"ND_RANK_STAGING", "2", "yes", "1"},
        {"ND_RANK_LINK", "2", "on", "1"},
        {"ND_RANK_COPY_ENGINES", "2", "off", "0"},
        {"ND_RANK_TRANSPORT", "mpi", "1", "staging"},
        {"ND_FUSED_GATHER", "2", "off", "0"},
        {"ND_SPLIT_MIN_BYTES", "-1", "lots", "1m"},
        {"ND_EDGE_MIN_BYTES", "-1", "lots", "1m"},
        {"ND_DUMP_DOT_PLAN", "2", "yes", "0"},
        {"ND_SCAN_VARIANT", "fastest", "7", "agg"},
        /* kernels removed from the plugin (docs/internals.md says why) */
        {"ND_SCAN_VARIANT", "staged", "lookback", "one_pass"},
        {"ND_DUMP_DOT", "/nonexistent-nd-test-dir", "/nonexistent-nd-test-dir/sub", NULL},
    };
    char dot_dir[] = "/tmp/nd-test-dot-XXXXXX";
    cr_assert(mkdtemp(dot_dir), "mkdtemp");
    nd_shutdown();
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *name = vars[i].name, *old = getenv(name);
        char *saved = old ? strdup(old) : NULL;
        const char *bad[2] = {vars[i].bad1, vars[i].bad2};
        for (int b = 0; b < 2; b++) {
            setenv(name, bad[b], 1);
            nd_clear_error();
            nd_status st = nd_init(NULL);
            cr_expect_eq(st, ND_ERR_ARG, "%s=%s: nd_init gave %s (%s)", name, bad[b], nd_status_name(st),
                         nd_last_error());
            const char *m = nd_last_error();
            cr_expect(m && strstr(m, name) && strstr(m, bad[b]) && strstr(m, "nd_init"),
                      "the message should name nd_init, %s and '%s': '%s'", name, bad[b], m ? m : "");
            if (st == ND_OK) nd_shutdown();
            /* nd_config does not hide a bad variable either */
            nd_config cfg = {.backend = ND_BACKEND_CPU, .num_threads = 1, .devices = "0", .log = 1,
                             .fusion = 1, .max_pending = 100};
            nd_clear_error();
            st = nd_init(&cfg);
            cr_expect_eq(st, ND_ERR_ARG, "%s=%s with nd_config set: %s", name, bad[b], nd_status_name(st));
            if (st == ND_OK) nd_shutdown();
        }
        const char *good = strcmp(name, "ND_DUMP_DOT") == 0 ? dot_dir : vars[i].good;
        if (good) {
            setenv(name, good, 1);
            nd_clear_error();
            nd_status st = nd_init(NULL);
            if (st == ND_ERR_UNSUPPORTED || st == ND_ERR_BACKEND) {
                nd_clear_error(); /* ND_BACKEND=cuda without a device: skipped by the fixture */
            } else {
                cr_expect_eq(st, ND_OK, "%s=%s: %s", name, good, nd_last_error());
                /* a flush runs, and no error stays behind */
                nd_array *o = nd_ones(ND_FLOAT32, ND_SHAPE(100)), *x = nd_sum(o, 0);
                cr_expect_eq(nd_item(x), 100.0);
                nd_free(x);
                nd_free(o);
                cr_expect_eq(nd_last_status(), ND_OK, "%s=%s left an error: %s", name, good,
                             nd_last_error());
                nd_shutdown();
            }
        }
        if (saved) setenv(name, saved, 1);
        else unsetenv(name);
        free(saved);
    }
    /* the dump went where ND_DUMP_DOT said */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "ls %s/flush-*.dot >/dev/null 2>&1 && rm -r %s", dot_dir, dot_dir);
    cr_expect_eq(system(cmd), 0, "no flush-*.dot in %s", dot_dir);
    ndt_restart(NULL);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
}

/* ND_BACKEND=auto probes for a GPU; where there is none, that probe's error
 * is forgotten, but an error the program had before must stay (errors are
 * sticky until nd_clear_error): it was erased with the probe's. */
NDT_TEST(errors, auto_backend_keeps_an_earlier_error) {
    const char *env = getenv("ND_BACKEND");
    char *saved = env ? strdup(env) : NULL;
    nd_shutdown();
    unsetenv("ND_BACKEND");
    nd_clear_error();
    cr_assert_null(nd_reshape(NULL, ND_SHAPE(2)));
    cr_assert_eq(nd_last_status(), ND_ERR_ARG);
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_last_status(), ND_ERR_ARG, "nd_init (auto) erased the earlier error");
    cr_assert(strstr(nd_last_error(), "nd_reshape"), "%s", nd_last_error());
    nd_clear_error();
    if (saved) setenv("ND_BACKEND", saved, 1);
    free(saved);
    ndt_restart(NULL);
}
