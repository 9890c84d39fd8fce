/*
 * interop_stream.c — nd inside a CUDA program: the program's own stream and
 * kernels, and the device queries.
 *
 *   interop_stream [n]      (n elements, default 1000000)
 *
 * First it lists the CUDA devices and what nd holds on them (works without
 * a GPU: 0 devices). Then, on a GPU, the program owns a stream and two
 * device buffers and mixes its own kernel (examples/interop_stream_kernels.cu,
 * compiled with nvcc) with nd's ops on that stream, without a host wait
 * between them:
 *
 *   cudaMemcpyAsync(d_in, ...)        the program fills its input on s
 *   out = sqrt(in*in + 1)             nd, after the copy (nd_wrap'd buffers)
 *   nd_stream_sync_point()            s waits for nd's op
 *   out = out*out + 0.5               the program's kernel on s
 *   total = sum(out)                  nd, after the kernel
 *
 * and checks total against the host's float64 sum(in*in + 1.5). Without a
 * GPU (or a build without nvcc) that part is skipped, visibly: exit 77.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nd.h"

#ifdef ND_HAVE_USER_KERNELS
#include <cuda_runtime_api.h>

#include "interop_stream_kernels.h"
#endif

#define SKIPPED 77

static int fail(const char *what) {
    fprintf(stderr, "interop_stream: %s: %s\n", what, nd_last_error());
    return 1;
}

/* Every device, and nd's use of the one it runs on. No nd_init needed. */
static int list_devices(void) {
    int n = nd_device_count();
    printf("%d CUDA device%s\n", n, n == 1 ? "" : "s");
    for (int d = 0; d < n; d++) {
        nd_device_info info;
        if (nd_get_device_info(d, &info) != ND_OK) return fail("nd_get_device_info");
        printf("  %d: %s, sm_%d%d, %d SMs, %.1f of %.1f GiB free; nd holds %.1f MiB (%.1f MiB reserved)%s\n", d,
               info.name, info.compute_major, info.compute_minor, info.multiprocessors,
               info.free_memory / 1073741824.0, info.total_memory / 1073741824.0,
               info.nd_bytes_in_use / 1048576.0, info.nd_bytes_reserved / 1048576.0,
               info.used_by_nd ? " [nd runs here]" : "");
    }
    return 0;
}

#if defined(ND_HAVE_USER_KERNELS)

#define CUDA_OK(call)                                                                       \
    do {                                                                                    \
        cudaError_t e_ = (cudaError_t)(call);                                               \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "interop_stream: %s: %s\n", #call, cudaGetErrorString(e_));     \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

static int on_the_programs_stream(int64_t n) {
    size_t bytes = (size_t)n * sizeof(float);
    float *h_in = malloc(bytes);
    if (!h_in) return fail("malloc");
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        h_in[i] = (float)((double)(i % 1000) / 500.0 - 1.0);
        want += (double)h_in[i] * h_in[i] + 1.5;
    }

    /* The program's stream and buffers. */
    cudaStream_t s;
    float *d_in, *d_out;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_OK(cudaMallocAsync((void **)&d_in, bytes, s));
    CUDA_OK(cudaMallocAsync((void **)&d_out, bytes, s));
    CUDA_OK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, s));

    /* nd on the program's stream (struct_size set: ND_CONFIG_INIT). */
    nd_config c = ND_CONFIG_INIT;
    c.backend = ND_BACKEND_CUDA;
    c.cuda_stream = s;
    if (nd_init(&c) != ND_OK) return fail("nd_init");
    nd_array *in = nd_wrap(d_in, ND_CUDA_MEMORY(0), ND_FLOAT32, 1, &n, NULL, NULL, NULL);
    nd_array *out = nd_wrap(d_out, ND_CUDA_MEMORY(0), ND_FLOAT32, 1, &n, NULL, NULL, NULL);
    if (!in || !out) return fail("nd_wrap");

    /* nd: runs after the program's copy into d_in. */
    nd_scope_begin();
    nd_status st = nd_assign(out, nd_sqrt(nd_add(nd_mul(in, in), nd_scalar(1.0))));
    nd_scope_end();
    if (st != ND_OK) return fail("nd_assign");
    /* s waits for it: the program's kernel may read d_out. No host wait. */
    if (nd_stream_sync_point() != ND_OK) return fail("nd_stream_sync_point");
    CUDA_OK(ndx_square_add(s, d_out, n, 0.5f));
    /* nd again: runs after the program's kernel. */
    nd_array *total = nd_sum(out, ND_ALL_AXES);
    float got = 0;
    if (nd_to_host(total, &got, sizeof got) != ND_OK) return fail("nd_to_host");
    printf("sum(in*in + 1.5) = %.6g on the program's stream (host float64: %.6g)\n", got, want);
    if (fabs(got - want) > 1e-4 * fabs(want)) {
        fprintf(stderr, "interop_stream: wrong sum: %.9g, want %.9g\n", got, want);
        return 1;
    }
    if (list_devices()) return 1; /* now with nd's own use */

    nd_free(total);
    nd_free(in);
    nd_free(out);
    nd_shutdown(); /* before the program frees what nd wrapped */
    CUDA_OK(cudaFreeAsync(d_in, s));
    CUDA_OK(cudaFreeAsync(d_out, s));
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaStreamDestroy(s));
    free(h_in);
    return 0;
}
#endif

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    if (n < 1) {
        fprintf(stderr, "usage: interop_stream [n >= 1]\n");
        return 2;
    }
    if (list_devices()) return 1;
#if defined(ND_HAVE_USER_KERNELS)
    if (nd_device_count() == 0) {
        printf("SKIP: the program's stream part needs a CUDA device\n");
        return SKIPPED;
    }
    return on_the_programs_stream(n);
#else
    printf("SKIP: the program's stream part needs a CUDA build with nvcc (the program's kernels) and nd_wrap\n");
    return SKIPPED;
#endif
}
