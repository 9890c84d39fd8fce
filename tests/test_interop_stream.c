/* include/nd/devices.h: device queries and the program's CUDA stream.
 *
 * Runs on every backend. The API's behaviour and errors are checked on the
 * CPU backend here (and on CUDA where it differs); the ordering tests need
 * a GPU and the program's own kernels (examples/interop_stream_kernels.cu,
 * built with nvcc: ND_HAVE_USER_KERNELS) and skip visibly without them. A
 * program kernel runs between two nd ops on one stream behind a gate
 * kernel the host opens only after nd_stream_sync_point returned: had nd
 * waited on the host for the program's stream, it would have waited for
 * the gate (which gives up after GATE_MS and says so). The kernels reach
 * nd's device memory through the array's buffer (an internal header: the
 * tests link the static library). */
#include "common.h"

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "graph/array.h"
#include "graph/buffer.h"

#ifdef ND_HAVE_USER_KERNELS
#include <cuda_runtime_api.h>

#include "../examples/interop_stream_kernels.h"
#endif

#define GATE_MS 20000

/* The CPU backend whatever ND_BACKEND says (ndt_restart would insist on
 * CUDA under ND_BACKEND=cuda). */
static void restart_cpu(void) {
    nd_shutdown();
    nd_config c = ND_CONFIG_INIT;
    c.backend = ND_BACKEND_CPU;
    cr_assert_eq(nd_init(&c), ND_OK, "%s", nd_last_error());
    cr_assert_str_eq(nd_backend_name(), "cpu");
}

/* ------------------------------------------------------------ devices */

/* nd_device_count needs no runtime and leaves none started (nd_init then
 * succeeds: it would fail with ND_ERR_STATE after a start); every ordinal
 * below it answers, the first past it is out of range. */
Test(devices, count_without_init, .timeout = NDT_TIMEOUT) {
    nd_clear_error();
    int n = nd_device_count();
    cr_assert_geq(n, 0);
    cr_expect_eq(nd_last_status(), ND_OK, "nd_device_count left an error: %s", nd_last_error());
    nd_device_info info;
    memset(&info, 0xAB, sizeof info);
    nd_status st = nd_get_device_info(n, &info);
    cr_expect_eq(st, n == 0 ? ND_ERR_UNSUPPORTED : ND_ERR_ARG, "%s", nd_last_error());
    cr_expect(strstr(nd_last_error(), "nd_get_device_info: device"), "%s", nd_last_error());
    cr_expect_eq(((unsigned char *)&info)[0], 0xAB, "a failed query wrote into out");
    for (int d = 0; d < n; d++) {
        cr_assert_eq(nd_get_device_info(d, &info), ND_OK, "device %d: %s", d, nd_last_error());
        cr_expect_eq(info.device, d);
        cr_expect_eq(info.struct_size, sizeof info);
        cr_expect(info.name[0] != '\0');
        cr_expect_geq(info.compute_major, 3);
        cr_expect_gt(info.total_memory, 0u);
        cr_expect_leq(info.free_memory, info.total_memory);
        cr_expect_eq(info.used_by_nd, 0, "the runtime is not running");
        cr_expect_eq(info.nd_bytes_in_use, 0u);
    }
    nd_clear_error();
    cr_assert_eq(nd_init(NULL), ND_OK, "the queries started the runtime? %s", nd_last_error());
    nd_shutdown();
}

NDT_TEST(devices, info_bad_arguments) {
    nd_device_info info;
    cr_expect_eq(nd_get_device_info_sized(0, NULL, sizeof info), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "nd_get_device_info: out is NULL"), "%s", nd_last_error());
    memset(&info, 0xAB, sizeof info);
    cr_expect_eq(nd_get_device_info_sized(0, &info, 4), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "struct_size") && strstr(nd_last_error(), "sizeof(nd_device_info)"), "%s",
              nd_last_error());
    cr_expect_eq(((unsigned char *)&info)[0], 0xAB);
    int n = nd_device_count();
    nd_clear_error();
    nd_status st = nd_get_device_info(-1, &info);
    if (n == 0) {
        /* The reason why there is none: no driver, no CUDA libraries, or
         * no CUDA in nd. */
        cr_expect_eq(st, ND_ERR_UNSUPPORTED);
        cr_expect(strstr(nd_last_error(), "device -1") &&
                      (strstr(nd_last_error(), "no CUDA device") || strstr(nd_last_error(), "cannot load") ||
                       strstr(nd_last_error(), "not built")),
                  "%s", nd_last_error());
    } else {
        cr_expect_eq(st, ND_ERR_ARG);
        char want[64];
        snprintf(want, sizeof want, "use 0..%d", n - 1);
        cr_expect(strstr(nd_last_error(), "device -1 is out of range") && strstr(nd_last_error(), want), "%s",
                  nd_last_error());
    }
}

/* A program built against an older, smaller nd_device_info: its fields
 * are filled, nothing past them is written. */
NDT_TEST(devices, info_older_struct) {
    if (nd_device_count() == 0) cr_skip_test("no CUDA device: nothing to fill");
    unsigned char buf[sizeof(nd_device_info) + 16];
    memset(buf, 0xAB, sizeof buf);
    size_t old = offsetof(nd_device_info, multiprocessors);
    cr_assert_eq(nd_get_device_info_sized(0, (nd_device_info *)buf, old), ND_OK, "%s", nd_last_error());
    nd_device_info got;
    memcpy(&got, buf, old);
    cr_expect_eq(got.struct_size, old);
    cr_expect(got.name[0] != '\0');
    for (size_t i = old; i < sizeof buf; i++) cr_assert_eq(buf[i], 0xAB, "byte %zu past struct_size written", i);
}

/* ------------------------------------------------- the stream: CPU side */

NDT_TEST(stream, cpu_backend_rejects_a_stream) {
    restart_cpu();
    int fake;
    cr_expect_eq(nd_set_cuda_stream(&fake), ND_ERR_UNSUPPORTED);
    cr_expect(strstr(nd_last_error(), "nd_set_cuda_stream: the cpu backend has no CUDA streams") &&
                  strstr(nd_last_error(), "ND_BACKEND=cuda"),
              "%s", nd_last_error());
    cr_expect_null(nd_get_cuda_stream());
    nd_clear_error();
    cr_expect_eq(nd_set_cuda_stream(NULL), ND_OK, "NULL is no stream, fine on the CPU: %s", nd_last_error());
    /* Nothing else lost: ops still run. */
    nd_array *x = nd_arange(ND_FLOAT64, 0, 5, 1), *two = nd_scalar(2.0);
    nd_array *y = nd_mul(x, two);
    cr_assert_eq(nd_stream_sync_point(), ND_OK, "%s", nd_last_error());
    double out[5];
    cr_assert_eq(nd_to_host(y, out, sizeof out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_expect_eq(out[i], 2.0 * i);
    nd_free(x);
    nd_free(two);
    nd_free(y);
}

/* A CPU config whose cuda_stream is set (to anything: the CPU never
 * reads it), with the runtime stopped. */
static nd_config cpu_config_with_a_stream(void *stream) {
    nd_shutdown();
    nd_config c = ND_CONFIG_INIT;
    c.backend = ND_BACKEND_CPU;
    c.cuda_stream = stream;
    return c;
}

NDT_TEST(stream, cpu_config_stream_fails_init) {
    int fake;
    nd_config c = cpu_config_with_a_stream(&fake);
    cr_expect_eq(nd_init(&c), ND_ERR_UNSUPPORTED);
    cr_expect(strstr(nd_last_error(), "nd_init: nd_config.cuda_stream is set") &&
                  strstr(nd_last_error(), "cpu backend has no CUDA streams"),
              "%s", nd_last_error());
    /* Nothing was left half started. */
    c.cuda_stream = NULL;
    nd_clear_error();
    cr_assert_eq(nd_init(&c), ND_OK, "%s", nd_last_error());
    cr_expect_str_eq(nd_backend_name(), "cpu");
}

/* struct_size 0 (or an older program's size) ends at `trace`: the field
 * after it is not read, whatever the bytes there. */
NDT_TEST(stream, old_struct_size_ignores_the_stream) {
    int fake;
    nd_config c = cpu_config_with_a_stream(&fake);
    c.struct_size = offsetof(nd_config, trace) + sizeof(const char *);
    cr_assert_eq(nd_init(&c), ND_OK, "%s", nd_last_error());
    cr_expect_null(nd_get_cuda_stream());
    nd_shutdown();
    c.struct_size = 0;
    cr_assert_eq(nd_init(&c), ND_OK, "%s", nd_last_error());
    cr_expect_null(nd_get_cuda_stream());
}

/* Without a stream the sync point is nd_flush: the work is submitted (a
 * flush counted) and the values are right. */
NDT_TEST(stream, sync_point_without_a_stream_flushes) {
    NDT_RNG(r);
    int64_t shape[] = {257};
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, 1, shape, -2, 2);
    nd_array *x = ndt_upload(a);
    nd_array *xx = nd_mul(x, x), *one = nd_scalar(1.0);
    nd_array *y = nd_add(xx, one);
    nd_stats before, after;
    nd_get_stats(&before);
    cr_assert_eq(nd_stream_sync_point(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_gt(after.flushes, before.flushes, "the sync point submitted nothing");
    cr_expect_null(nd_get_cuda_stream());
    for (int64_t i = 0; i < a->size; i++) ref_setd(a, i, ref_getd(a, i) * ref_getd(a, i) + 1.0);
    ndt_check_default(y, a, "x*x+1 after a sync point");
    nd_free(x);
    nd_free(xx);
    nd_free(one);
    nd_free(y);
    ref_free(a);
}

/* Neither call starts the runtime. */
Test(stream, get_without_runtime, .timeout = NDT_TIMEOUT) {
    cr_expect_null(nd_get_cuda_stream());
    cr_assert_eq(nd_init(NULL), ND_OK, "nd_get_cuda_stream started the runtime? %s", nd_last_error());
    nd_shutdown();
}

/* ------------------------------------------------- the stream: GPU side */

#ifdef ND_HAVE_USER_KERNELS

static void cu_ok(int e, const char *what) {
    cr_assert_eq(e, (int)cudaSuccess, "%s: %s", what, cudaGetErrorString((cudaError_t)e));
}
#define CU_OK(call) cu_ok((int)(call), #call)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The CUDA backend with a device, or a visible skip. */
static void need_gpu(void) {
    if (!ndt_backend_is_cuda()) cr_skip_test("the CUDA backend is not in use (ND_BACKEND=%s)", nd_backend_name());
}

/* A new stream of the program's, and nd restarted on it. */
static cudaStream_t restart_on_new_stream(void) {
    cudaStream_t s;
    CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    nd_config c = ND_CONFIG_INIT;
    c.cuda_stream = s;
    ndt_restart(&c);
    cr_assert_eq(nd_get_cuda_stream(), (void *)s);
    return s;
}

/* The tests that write through device_ptr run only on one logical device:
 * split over several (ND_DEVICES=0,0), an array's value lives in its
 * pieces, not in the whole buffer that pointer names. (A program asks
 * nd_data for a pointer, which gathers the pieces first; these tests
 * look at nd's own buffer so as to check stream order without it.) */
static void need_whole_arrays(void) {
    if (ndt_devices_split())
        cr_skip_test("ND_DEVICES=%s splits arrays into pieces: the test writes through nd's whole buffer",
                     getenv("ND_DEVICES"));
}

/* The device address of a's elements: its buffer's device copy, which
 * must hold its value (the flush that computed it is enqueued). */
static float *device_ptr(nd_array *a) {
    nd_buffer *b = a->buf;
    cr_assert(b->mem[1] && (b->valid & 2u), "the array's value is not in device memory");
    return (float *)b->mem[1] + a->offset;
}

typedef struct {
    volatile int *flag; /* mapped host memory */
    int *timed_out;
} gate;

static gate gate_new(void) {
    gate g;
    void *p;
    CU_OK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
    memset(p, 0, 2 * sizeof(int));
    g.flag = (volatile int *)p;
    g.timed_out = (int *)p + 1;
    return g;
}

static void gate_open(gate *g) {
    __atomic_store_n((int *)g->flag, 1, __ATOMIC_SEQ_CST);
}

NDT_TEST(stream, gpu_user_kernel_between_ops_no_host_wait) {
    need_gpu();
    need_whole_arrays();
    cudaStream_t s = restart_on_new_stream();
    NDT_RNG(r);
    int64_t shape[] = {1 << 20};
    ref_arr *a0 = ndt_rand(&r, ND_FLOAT32, 1, shape, -1, 1);
    nd_array *u = ndt_upload(a0);
    nd_array *a = nd_mul(u, nd_scalar(1.0)); /* computed on the device: its only copy is there */
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());

    gate g = gate_new();
    CU_OK(ndx_gate(s, g.flag, GATE_MS, g.timed_out));
    /* The program's kernel before nd's op: a = a*a + 1 (behind the gate). */
    CU_OK(ndx_square_add(s, device_ptr(a), shape[0], 1.0f));
    nd_array *b = nd_mul(a, nd_scalar(3.0)); /* nd op 1: after that kernel */
    double t0 = now_s();
    cr_assert_eq(nd_stream_sync_point(), ND_OK, "%s", nd_last_error());
    double waited = now_s() - t0;
    cr_expect_eq(*g.timed_out, 0, "the gate gave up: nd waited on the host for the program's stream");
    cr_expect_lt(waited, 5.0, "nd_stream_sync_point took %.1f s with the program's stream held", waited);
    cr_expect_eq(cudaStreamQuery(s), cudaErrorNotReady, "the gate should still hold the stream");
    /* The program's kernel between nd's ops: b = b*b + 0.5, after op 1. */
    CU_OK(ndx_square_add(s, device_ptr(b), shape[0], 0.5f));
    nd_array *c = nd_add(b, a); /* nd op 2: after that kernel */
    cr_assert_eq(nd_flush(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(*g.timed_out, 0);
    gate_open(&g);

    ref_arr *want = ref_new(ND_FLOAT32, 1, shape);
    for (int64_t i = 0; i < a0->size; i++) {
        double av = ref_getd(a0, i) * ref_getd(a0, i) + 1.0, bv = 3.0 * av;
        ref_setd(want, i, bv * bv + 0.5 + av);
    }
    ndt_check_default(c, want, "(3(a*a+1))^2 + 0.5 + (a*a+1), kernels and ops in stream order");
    CU_OK(cudaStreamSynchronize(s));
    cr_expect_eq(*g.timed_out, 0, "the gate timed out");
    nd_free(u);
    nd_free(a);
    nd_free(b);
    nd_free(c);
    ref_free(a0);
    ref_free(want);
    nd_shutdown(); /* before the stream goes */
    CU_OK(cudaFreeHost((void *)g.flag));
    CU_OK(cudaStreamDestroy(s));
}

/* A loop whose flushes replay as CUDA graphs (two kernels each, the same
 * addresses every iteration), a program kernel between every two: graph
 * capture keeps working with the joins around it, and the values follow
 * stream order. x <- 0.5 x + 0.25 (nd; its sum kept too), then
 * x <- x*x + 0.125 (the program). */
NDT_TEST(stream, gpu_loop_with_graphs) {
    need_gpu();
    need_whole_arrays();
    cudaStream_t s = restart_on_new_stream();
    NDT_RNG(r);
    int64_t shape[] = {4096};
    ref_arr *x0 = ndt_rand(&r, ND_FLOAT32, 1, shape, 0, 1);
    nd_array *u = ndt_upload(x0);
    nd_array *x = nd_mul(u, nd_scalar(1.0));
    nd_free(u);
    nd_array *total = nd_zeros(ND_FLOAT32, ND_SCALAR_SHAPE);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    const int iters = 8;
    double *v = malloc(sizeof(double) * (size_t)x0->size);
    for (int64_t i = 0; i < x0->size; i++) v[i] = ref_getd(x0, i);
    double want_total = 0;
    for (int it = 0; it < iters; it++) {
        nd_scope_begin();
        cr_assert_eq(nd_assign(x, nd_add(nd_mul(x, nd_scalar(0.5)), nd_scalar(0.25))), ND_OK, "%s",
                     nd_last_error());
        cr_assert_eq(nd_assign(total, nd_sum(x, ND_ALL_AXES)), ND_OK, "%s", nd_last_error());
        nd_scope_end();
        cr_assert_eq(nd_stream_sync_point(), ND_OK, "iteration %d: %s", it, nd_last_error());
        CU_OK(ndx_square_add(s, device_ptr(x), shape[0], 0.125f));
        want_total = 0;
        for (int64_t i = 0; i < x0->size; i++) {
            v[i] = 0.5 * v[i] + 0.25;
            want_total += v[i];
            v[i] = v[i] * v[i] + 0.125;
        }
    }
    ref_arr *want = ref_new(ND_FLOAT32, 1, shape);
    for (int64_t i = 0; i < x0->size; i++) ref_setd(want, i, v[i]);
    ndt_check_default(x, want, "x after the loop");
    float got_total;
    cr_assert_eq(nd_to_host(total, &got_total, sizeof got_total), ND_OK, "%s", nd_last_error());
    cr_expect(fabs(got_total - want_total) <= 1e-4 * fabs(want_total), "sum %g, want %g", got_total, want_total);
    free(v);
    nd_free(x);
    nd_free(total);
    ref_free(x0);
    ref_free(want);
    nd_shutdown();
    CU_OK(cudaStreamDestroy(s));
}

NDT_TEST(stream, gpu_set_and_change_streams) {
    need_gpu();
    need_whole_arrays();
    cr_expect_eq(nd_set_cuda_stream(cudaStreamPerThread), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "nd_set_cuda_stream: cudaStreamPerThread"), "%s", nd_last_error());
    cr_expect_null(nd_get_cuda_stream(), "a refused stream was kept");
    nd_clear_error();
    cr_expect_eq(nd_set_cuda_stream(cudaStreamLegacy), ND_OK, "%s", nd_last_error());
    cudaStream_t s1, s2;
    CU_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CU_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cr_assert_eq(nd_set_cuda_stream(s1), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_get_cuda_stream(), (void *)s1);
    /* A changed stream is a sync point on the old one: s1 waits for y,
     * whose kernel then runs while s2 is held by a gate. */
    nd_array *x = nd_arange(ND_FLOAT32, 0, 1024, 1);
    nd_array *y = nd_mul(x, nd_scalar(2.0));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    /* Both kernels the gated part runs, once before the gate: loading a
     * kernel into the context may wait for the whole device (README, "The
     * program's CUDA stream"), and the closed gate would make that a
     * timeout. */
    nd_array *warm = nd_add(y, nd_scalar(1.0));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    CU_OK(ndx_square_add(s1, device_ptr(warm), 1024, 0.0f));
    CU_OK(cudaStreamSynchronize(s1));
    nd_free(warm);
    gate g = gate_new();
    CU_OK(ndx_gate(s2, g.flag, GATE_MS, g.timed_out));
    cr_assert_eq(nd_set_cuda_stream(s2), ND_OK, "%s", nd_last_error());
    CU_OK(ndx_square_add(s1, device_ptr(y), 1024, 0.0f)); /* y = y*y on s1, after y */
    nd_array *z = nd_add(y, nd_scalar(1.0)); /* after the gate on s2 */
    cr_assert_eq(nd_flush(), ND_OK, "%s", nd_last_error());
    CU_OK(cudaStreamSynchronize(s1)); /* the program's own wait, on s1 only */
    gate_open(&g);
    float out[1024];
    cr_assert_eq(nd_to_host(z, out, sizeof out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 1024; i++) cr_assert_eq(out[i], 4.0f * i * i + 1.0f, "z[%d] = %g", i, out[i]);
    cr_expect_eq(*g.timed_out, 0);
    cr_assert_eq(nd_set_cuda_stream(NULL), ND_OK, "%s", nd_last_error());
    cr_expect_null(nd_get_cuda_stream());
    nd_free(x);
    nd_free(y);
    nd_free(z);
    nd_shutdown();
    CU_OK(cudaFreeHost((void *)g.flag));
    CU_OK(cudaStreamDestroy(s1));
    CU_OK(cudaStreamDestroy(s2));
}

/* The program's stream capturing a graph: nd's work cannot be ordered
 * after it. The flush fails with ND_ERR_STATE naming the capture; nothing
 * else is lost (after the capture ends, new work runs). */
NDT_TEST(stream, gpu_capturing_stream_is_refused) {
    need_gpu();
    cudaStream_t s = restart_on_new_stream();
    CU_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CU_OK(ndx_empty(s));
    nd_array *x = nd_mul(nd_arange(ND_FLOAT32, 0, 64, 1), nd_scalar(2.0));
    cr_expect_eq(nd_stream_sync_point(), ND_ERR_STATE);
    cr_expect(strstr(nd_last_error(), "nd_stream_sync_point") && strstr(nd_last_error(), "capturing a CUDA graph"),
              "%s", nd_last_error());
    cudaGraph_t graph = NULL;
    CU_OK(cudaStreamEndCapture(s, &graph));
    CU_OK(cudaGraphDestroy(graph));
    nd_clear_error();
    nd_array *y = nd_add(nd_arange(ND_FLOAT32, 0, 64, 1), nd_scalar(1.0));
    float out[64];
    cr_assert_eq(nd_to_host(y, out, sizeof out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 64; i++) cr_expect_eq(out[i], i + 1.0f);
    cr_expect_neq(nd_to_host(x, out, sizeof out), ND_OK, "x's flush failed: reading it reports so");
    nd_clear_error();
    nd_free(x);
    nd_free(y);
    nd_shutdown();
    CU_OK(cudaStreamDestroy(s));
}

/* nd's own use shows on the devices it runs on: GPU 0 where ND_DEVICES is
 * unset; split over several GPUs (ND_DEVICES=0,1), the array's pieces
 * count on each, so the sum over the GPUs nd uses is what grows. */
static uint64_t nd_bytes_on_used_gpus(void) {
    uint64_t sum = 0;
    for (int d = 0; d < nd_device_count(); d++) {
        nd_device_info info;
        cr_assert_eq(nd_get_device_info(d, &info), ND_OK, "%s", nd_last_error());
        if (!info.used_by_nd) continue;
        cr_expect_geq(info.nd_bytes_reserved, info.nd_bytes_in_use, "GPU %d", d);
        cr_expect_leq(info.nd_bytes_in_use, info.total_memory, "GPU %d", d);
        cr_expect_geq(info.compute_major, 7);
        sum += info.nd_bytes_in_use;
    }
    return sum;
}

NDT_TEST(devices, gpu_info_counts_nd_memory) {
    need_gpu();
    nd_device_info first;
    cr_assert_eq(nd_get_device_info(0, &first), ND_OK, "%s", nd_last_error());
    if (!getenv("ND_DEVICES") || !*getenv("ND_DEVICES"))
        cr_expect_eq(first.used_by_nd, 1, "ND_DEVICES unset: nd runs on device 0");
    uint64_t before = nd_bytes_on_used_gpus();
    nd_array *big = nd_full(ND_FLOAT32, ND_SHAPE(16, 1 << 20), 1.0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    uint64_t after = nd_bytes_on_used_gpus();
    cr_expect_geq(after, before + (64u << 20), "in use on nd's GPUs %llu -> %llu", (unsigned long long)before,
                  (unsigned long long)after);
    nd_free(big);
}

/* With no ND_DEVICES list, a stream handed over at the start picks the
 * device: nd runs where the program made it. The last GPU is taken, so
 * that on a machine of several the default (GPU 0) would be wrong. Both
 * ways of handing it over: nd_config.cuda_stream and a first
 * nd_set_cuda_stream that starts nd. */
NDT_TEST(stream, gpu_stream_names_the_device) {
    need_gpu();
    if (getenv("ND_DEVICES") && *getenv("ND_DEVICES"))
        cr_skip_test("ND_DEVICES=%s names the device itself", getenv("ND_DEVICES"));
    int n = nd_device_count(), last = n - 1;
    cr_assert_gt(n, 0);
    for (int way = 0; way < 2; way++) {
        nd_shutdown();
        CU_OK(cudaSetDevice(last));
        cudaStream_t s;
        CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CU_OK(cudaSetDevice(0)); /* the current device is not what counts */
        if (way == 0) {
            nd_config c = ND_CONFIG_INIT;
            c.cuda_stream = s;
            cr_assert_eq(nd_init(&c), ND_OK, "%s", nd_last_error());
        } else {
            cr_assert_eq(nd_set_cuda_stream(s), ND_OK, "%s", nd_last_error());
        }
        cr_expect_eq(nd_get_cuda_stream(), (void *)s);
        for (int d = 0; d < n; d++) {
            nd_device_info info;
            cr_assert_eq(nd_get_device_info(d, &info), ND_OK, "%s", nd_last_error());
            cr_expect_eq(info.used_by_nd, d == last, "way %d: GPU %d used_by_nd %d (the stream's is %d)", way, d,
                         info.used_by_nd, last);
        }
        /* And nd's work runs there, after the program's. */
        nd_array *x = nd_add(nd_arange(ND_FLOAT32, 0, 1000, 1), nd_scalar(0.5));
        float out[1000];
        cr_assert_eq(nd_to_host(x, out, sizeof out), ND_OK, "%s", nd_last_error());
        for (int i = 0; i < 1000; i++) cr_expect_eq(out[i], i + 0.5f);
        nd_free(x);
        nd_shutdown();
        CU_OK(cudaStreamDestroy(s));
    }
}

#else

Test(stream, gpu_tests, .timeout = NDT_TIMEOUT) {
    cr_skip_test("the GPU tests need the CUDA backend and nvcc at build time (program kernels: "
                 "examples/interop_stream_kernels.cu)");
}

#endif
