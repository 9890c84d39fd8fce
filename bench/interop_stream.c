/*
 * interop_stream.c — what a program's kernel interleaved between nd's ops on
 * the program's stream costs (include/nd/devices.h). Target: no more than
 * one kernel launch of latency, and no host round trip.
 *
 * Each measurement holds the program's stream with a gate kernel while the
 * host enqueues ITERS iterations, then opens the gate and times the device
 * from an event after the gate to one after the last iteration. So the
 * times are the device's alone (the host's recording is off the clock),
 * and everything ran without the host: had any call waited on the host
 * for the device, it would have waited for the closed gate, which gives
 * up after GATE_MS and is reported.
 *
 *   nd         nd's op alone each iteration (x = 0.5 x + 0.25, in place,
 *              N float32), flushed with nd_flush: nd's ops back to back
 *              on its stream (each joined after the program's stream, so
 *              the gate holds them too, which the program never waits for
 *              but once at the end)
 *   joined     the same with the program's stream set and a
 *              nd_stream_sync_point after every op: the joins both ways
 *   interleave joined + the program's kernel (y = y*y + 0, N float32, its
 *              own buffer) after every sync point
 *   kernel     the program's kernel alone, back to back on its stream: the
 *              cost of one launch of it
 *
 * extra = interleave - joined per iteration is what interleaving adds: the
 * target is extra <= kernel. Median of RUNS; prints a table and JSON lines.
 * Exits 77 without a GPU.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/interop_stream_kernels.h"
#include "bench_util.h"
#include "nd.h"

#define N 4096
#define ITERS 200
#define RUNS 9
#define GATE_MS 30000

static void die(const char *what, const char *why) {
    fprintf(stderr, "interop_stream: %s: %s\n", what, why);
    exit(2);
}
#define CU(call)                                                                 \
    do {                                                                         \
        cudaError_t e_ = (cudaError_t)(call);                                    \
        if (e_ != cudaSuccess) die(#call, cudaGetErrorString(e_));               \
    } while (0)
#define ND(call)                                                                 \
    do {                                                                         \
        if ((call) != ND_OK) die(#call, nd_last_error());                        \
    } while (0)

typedef enum { MODE_ND, MODE_JOINED, MODE_INTERLEAVE, MODE_KERNEL } mode;

static cudaStream_t stream;
static float *own;      /* the program's buffer */
static int *gate_mem;   /* mapped: [0] the gate's flag, [1] it timed out */
static cudaEvent_t e0, e1;

/* Device seconds per iteration of one run of `m`, gated unless `warm`. A
 * warm-up runs with the gate open: the first runs compile nd's kernels,
 * load them and the program's into the CUDA context and capture nd's
 * graph, and CUDA may wait for the whole device while it loads a module
 * (README, "The program's CUDA stream"), which a closed gate would turn
 * into a timeout. */
static double run_once(mode m, nd_array *x, int warm) {
    __atomic_store_n(&gate_mem[0], warm ? 1 : 0, __ATOMIC_SEQ_CST);
    CU(ndx_gate(stream, gate_mem, GATE_MS, &gate_mem[1]));
    CU(cudaEventRecord(e0, stream));
    for (int i = 0; i < ITERS; i++) {
        if (m != MODE_KERNEL) {
            nd_scope_begin();
            ND(nd_assign(x, nd_add(nd_mul(x, nd_scalar(0.5)), nd_scalar(0.25))));
            nd_scope_end();
            ND(m == MODE_ND ? nd_flush() : nd_stream_sync_point());
        }
        if (m == MODE_INTERLEAVE || m == MODE_KERNEL) CU(ndx_square_add(stream, own, N, 0.0f));
    }
    if (m == MODE_ND) ND(nd_stream_sync_point()); /* e1 after nd's last op (nd's stream is set: see main) */
    CU(cudaEventRecord(e1, stream));
    __atomic_store_n(&gate_mem[0], 1, __ATOMIC_SEQ_CST);
    CU(cudaEventSynchronize(e1));
    if (gate_mem[1]) die("the gate", "timed out: something waited on the host for the program's stream");
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1e-3 / ITERS;
}

static double measure(mode m, nd_array *x) {
    double t[RUNS];
    for (int r = -2; r < RUNS; r++) {
        double s = run_once(m, x, r < 0);
        if (r >= 0) t[r] = s;
    }
    return bench_median(t, RUNS);
}

int main(void) {
    int dev = nd_device_count();
    if (dev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    nd_device_info info;
    ND(nd_get_device_info(0, &info));
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CU(cudaMalloc((void **)&own, N * sizeof(float)));
    CU(cudaMemsetAsync(own, 0, N * sizeof(float), stream));
    CU(cudaHostAlloc((void **)&gate_mem, 2 * sizeof(int), cudaHostAllocMapped));
    memset(gate_mem, 0, 2 * sizeof(int));
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));

    nd_config c = ND_CONFIG_INIT;
    c.backend = ND_BACKEND_CUDA;
    c.cuda_stream = stream;
    ND(nd_init(&c));
    nd_array *x = nd_mul(nd_arange(ND_FLOAT32, 0, N, 1), nd_scalar(1.0 / N));
    ND(nd_sync());

    double t_nd = measure(MODE_ND, x);
    double t_joined = measure(MODE_JOINED, x);
    double t_inter = measure(MODE_INTERLEAVE, x);
    double t_kernel = measure(MODE_KERNEL, x);
    double extra = t_inter - t_joined;

    /* The answer is still right after all that (x converges to 0.5). */
    float probe[4];
    nd_array *head = nd_view(x, "0:4");
    ND(nd_to_host(head, probe, sizeof probe));
    nd_free(head);
    for (int i = 0; i < 4; i++)
        if (probe[i] < 0.49f || probe[i] > 0.51f) die("check", "x did not converge to 0.5");

    printf("interop_stream on %s (sm_%d%d), %d float32, %d iterations, median of %d (device time per iteration)\n",
           info.name, info.compute_major, info.compute_minor, N, ITERS, RUNS);
    printf("  %-11s %8.2f us  nd op alone, flushed\n", "nd", t_nd * 1e6);
    printf("  %-11s %8.2f us  + sync point after each op\n", "joined", t_joined * 1e6);
    printf("  %-11s %8.2f us  + the program's kernel after each sync point\n", "interleave", t_inter * 1e6);
    printf("  %-11s %8.2f us  the program's kernel alone\n", "kernel", t_kernel * 1e6);
    printf("  extra = interleave - joined = %.2f us per kernel, %.2fx one launch of it: %s\n", extra * 1e6,
           extra / t_kernel, extra <= t_kernel * 1.10 ? "target met (<= one launch, +10% noise)" : "target MISSED");
    printf("JSON {\"bench\":\"interop_stream\",\"device\":\"%s\",\"nd_us\":%.3f,\"joined_us\":%.3f,"
           "\"interleave_us\":%.3f,\"kernel_us\":%.3f,\"extra_us\":%.3f,\"extra_per_launch\":%.3f}\n",
           info.name, t_nd * 1e6, t_joined * 1e6, t_inter * 1e6, t_kernel * 1e6, extra * 1e6, extra / t_kernel);
    nd_free(x);
    nd_shutdown();
    CU(cudaStreamDestroy(stream));
    CU(cudaFree(own));
    CU(cudaFreeHost(gate_mem));
    return 0;
}
