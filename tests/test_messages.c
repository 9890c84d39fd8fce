/* Every error message names the public function the user called, also when
 * the failure comes from deep code that does not know it (a backend's out
 * of memory, a missing CUDA device, the graph layer): the API guard keeps
 * the outermost public call's name per thread and nd_error_set puts it in
 * front of a message that does not start with one ("nd_sync: cpu backend:
 * out of host memory allocating ..."), never twice. */
#include "common.h"

#include "common/api_guard.h"
#include "common/error.h"

/* A 32 TiB array: recorded lazily, its allocation fails when it runs. The
 * sanitizers would abort on such a request instead of failing it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

static const int64_t HUGE_N = (int64_t)1 << 42; /* float64: 32 TiB */

static void expect_prefix(const char *fn, nd_status want) {
    nd_status st = nd_last_status();
    const char *m = nd_last_error();
    size_t n = strlen(fn);
    cr_expect_eq(st, want, "expected %s, got %s: %s", nd_status_name(want), nd_status_name(st), m);
    cr_expect(strncmp(m, fn, n) == 0 && m[n] == ':', "the message should start with '%s:': '%s'",
              fn, m);
    cr_expect(strstr(m + n, "nd_") != m + n + 2, "a double prefix: '%s'", m);
    nd_clear_error();
}

NDT_TEST(messages, backend_out_of_memory_names_nd_sync) {
    if (ndt_backend_is_cuda()) cr_skip_test("a host allocation failure of the CPU backend");
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(HUGE_N));
    cr_assert(a, "recording is lazy: %s", nd_last_error());
    nd_array *s = nd_sum(a, ND_ALL_AXES);
    cr_assert_eq(nd_sync(), ND_ERR_OOM, "%s", nd_last_error());
    expect_prefix("nd_sync", ND_ERR_OOM);
    /* The read reports it too, naming the read. */
    cr_expect(isnan(nd_item(s)));
    cr_expect(strncmp(nd_last_error(), "nd_", 3) == 0, "%s", nd_last_error());
    nd_clear_error();
    nd_free(s);
    nd_free(a);
}

NDT_TEST(messages, backend_out_of_memory_inside_a_read_names_the_read) {
    if (ndt_backend_is_cuda()) cr_skip_test("a host allocation failure of the CPU backend");
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(HUGE_N));
    cr_assert(a);
    /* A store into a needs a's memory: a read only needing a's values
     * would compute them inside the reduction, allocating nothing. */
    nd_scope_begin();
    cr_assert_eq(nd_assign(nd_view(a, "0"), nd_scalar(1.0)), ND_OK);
    double v = nd_item(nd_max(a, ND_ALL_AXES)); /* nd_item -> nd_to_host -> its flush */
    nd_scope_end();
    cr_expect(isnan(v));
    /* The read's own report (nd_to_host's, the function nd_item calls)
     * or the flush's failure under nd_item's name. */
    const char *m = nd_last_error();
    cr_expect_eq(nd_last_status(), ND_ERR_OOM, "%s", m);
    cr_expect(strncmp(m, "nd_item: ", 9) == 0 || strncmp(m, "nd_to_host: ", 12) == 0,
              "the message should name nd_item or nd_to_host: '%s'", m);
    nd_clear_error();
    nd_free(a);
}

/* A flush run on the executor thread: its message reaches the caller at
 * the next nd_sync, named there. */
NDT_TEST(messages, executor_thread_error_is_named_where_it_surfaces) {
    if (ndt_backend_is_cuda()) cr_skip_test("a host allocation failure of the CPU backend");
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(HUGE_N));
    nd_array *one = nd_scalar(1.0), *a1 = nd_add(a, one);
    nd_array *s = nd_sum(a1, ND_ALL_AXES);
    cr_assert(s);
    (void)nd_flush(); /* handed to the executor thread */
    nd_clear_error();
    cr_expect_eq(nd_sync(), ND_ERR_OOM, "%s", nd_last_error());
    expect_prefix("nd_sync", ND_ERR_OOM);
    nd_free(s);
    nd_free(a1);
    nd_free(one);
    nd_free(a);
}

NDT_TEST(messages, missing_cuda_device_names_the_function) {
    if (ndt_backend_is_cuda()) cr_skip_test("this machine has a CUDA device");
    nd_shutdown();
    nd_status st = nd_init(&(nd_config){.backend = ND_BACKEND_CUDA});
    if (st == ND_OK) cr_skip_test("the CUDA backend started");
    expect_prefix("nd_init", st);
    /* Started lazily by another function: the message names that one. */
    setenv("ND_BACKEND", "cuda", 1);
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    unsetenv("ND_BACKEND");
    cr_expect_null(a);
    st = nd_last_status();
    const char *m = nd_last_error();
    cr_expect(strncmp(m, "nd_zeros: ", 10) == 0 || strncmp(m, "nd_init: ", 9) == 0,
              "the message should name nd_zeros or nd_init: '%s'", m);
    cr_expect(strncmp(m, "nd_zeros: nd_", 13) != 0, "a double prefix: '%s'", m);
    nd_clear_error();
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
}

/* Messages raised deep inside where no fault can be provoked from outside
 * (a failed malloc of a buffer descriptor or an array handle, graph.c's
 * recording buffers): the mechanism, as those call sites use it. */
static void deep_failure(const char *message) { nd_error_set(ND_ERR_OOM, "%s", message); }

NDT_TEST(messages, deep_messages_get_the_public_name_once) {
    static const char *deep[] = {
        "out of host memory for a buffer descriptor",
        "out of host memory for an array handle",
        "out of host memory while recording an operation",
        "cpu backend: out of host memory allocating 8 bytes",
        "no CUDA device: no CUDA-capable device is detected",
    };
    for (size_t i = 0; i < sizeof deep / sizeof *deep; i++) {
        int token = nd_api_enter("nd_zeros");
        deep_failure(deep[i]);
        nd_api_leave(&token);
        char want[256];
        snprintf(want, sizeof want, "nd_zeros: %s", deep[i]);
        cr_expect_str_eq(nd_last_error(), want);
        nd_clear_error();
    }
    /* Nested public calls: the outermost names it. */
    int outer = nd_api_enter("nd_item"), inner = nd_api_enter("nd_sync");
    deep_failure("cpu backend: out of host memory allocating 64 bytes");
    nd_api_leave(&inner);
    nd_api_leave(&outer);
    cr_expect_str_eq(nd_last_error(), "nd_item: cpu backend: out of host memory allocating 64 bytes");
    nd_clear_error();
    /* A message that names its function already is left alone. */
    int t = nd_api_enter("nd_item");
    nd_error_set(ND_ERR_ARG, "nd_to_host: dst is NULL");
    nd_api_leave(&t);
    cr_expect_str_eq(nd_last_error(), "nd_to_host: dst is NULL");
    nd_clear_error();
    /* Outside the API (an nd thread), no name to add. */
    deep_failure("cpu backend: x");
    cr_expect_str_eq(nd_last_error(), "cpu backend: x");
    nd_clear_error();
    /* The lock was released: another thread's call goes through. */
    nd_array *ones = nd_ones(ND_INT32, ND_SHAPE(3)), *total = nd_sum(ones, ND_ALL_AXES);
    cr_expect_eq(nd_item(total), 3.0);
    nd_free(total);
    nd_free(ones);
}
