/*
 * interop_wrap.c — the cost of working on the program's own memory: a
 * buffer the program allocated (cudaMalloc on the CUDA backend, 1 GiB by
 * default; malloc on the CPU backend, 256 MiB) is wrapped with nd_wrap,
 * updated in place by one fused op (x = x * a + b) and handed back with
 * nd_data; the same op on an array nd owns is the reference. Reports the
 * median times, their ratio (target on the H100: <= 1.05) and the bytes
 * copied between memories during the wrapped runs (nd_stats.bytes_copied;
 * target 0).
 *
 * Usage: bench_interop_wrap [--bytes N] [--runs R]
 * Prints one JSON line.
 */
#include "bench_util.h"

#include <math.h>
#include <nd.h>

#ifdef BENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int fail(const char *what)
{
    fprintf(stderr, "bench_interop_wrap: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* x = x * a + b in place, run, and the value handed out in `where`. */
static double update_once(nd_array *x, nd_memory where, double a, double b)
{
    double t0 = bench_now();
    nd_array *sa = nd_scalar(a), *sb = nd_scalar(b);
    nd_array *m = nd_mul(x, sa), *r = nd_add(m, sb);
    if (nd_assign(x, r) != ND_OK) return -1;
    nd_free(sa), nd_free(sb), nd_free(m), nd_free(r);
    if (nd_sync() != ND_OK) return -1;
    if (!nd_data(x, where, ND_DATA_READ)) return -1;
    if (nd_data_done(x) != ND_OK) return -1;
    return bench_now() - t0;
}

static double element(nd_array *x, int64_t i)
{
    char idx[32];
    snprintf(idx, sizeof idx, "%lld", (long long)i);
    /* A copy of the element: nd_item of the view itself would bring the
     * whole 1 GiB buffer to the host. */
    nd_array *v = nd_view(x, idx), *c = nd_copy(v);
    double r = nd_item(c);
    nd_free(c);
    nd_free(v);
    return r;
}

int main(int argc, char **argv)
{
    size_t bytes = 0;
    int runs = 9;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = (size_t)atoll(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_interop_wrap [--bytes N] [--runs R]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 99) runs = 9;
    if (nd_init(NULL) != ND_OK) return fail("nd_init");
    int on_cuda = strcmp(nd_backend_name(), "cuda") == 0;
    if (!bytes) bytes = on_cuda ? (size_t)1 << 30 : (size_t)256 << 20;
    int64_t n = (int64_t)(bytes / sizeof(float));
    bytes = (size_t)n * sizeof(float);
    nd_memory where = on_cuda ? ND_CUDA_MEMORY(0) : ND_HOST_MEMORY;

    /* The program's buffer. */
    void *mem = NULL;
    if (on_cuda) {
#ifdef BENCH_HAVE_CUDA
        if (cudaMalloc(&mem, bytes) != cudaSuccess) {
            fprintf(stderr, "bench_interop_wrap: cudaMalloc of %zu bytes failed\n", bytes);
            return 1;
        }
#else
        fprintf(stderr, "bench_interop_wrap: built without the CUDA runtime\n");
        return 77;
#endif
    } else {
        mem = aligned_alloc(64, bytes);
        if (!mem) return fail("aligned_alloc");
    }
    nd_array *w = nd_wrap(mem, where, ND_FLOAT32, ND_SHAPE(n), NULL, NULL, NULL);
    if (!w) return fail("nd_wrap");
    nd_random_seed(11);
    nd_array *init = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 1.0, 2.0);
    nd_array *own = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 1.0, 2.0);
    if (nd_assign(w, init) != ND_OK || nd_sync() != ND_OK) return fail("filling the buffers");
    nd_free(init);
    /* Make the owned array valid in the compute memory, as the wrap is. */
    if (!nd_data(own, where, ND_DATA_READ) || nd_data_done(own) != ND_OK) return fail("placing the owned array");

    /* Check: one update gives x * a + b, in float32. */
    const double a = 0.5, b = 0.75;
    float x0 = (float)element(w, 0), x1 = (float)element(w, n - 1);
    if (update_once(w, where, a, b) < 0) return fail("the wrapped update");
    if (update_once(own, where, a, b) < 0) return fail("the owned update");
    float y0 = (float)element(w, 0), y1 = (float)element(w, n - 1);
    if (y0 != x0 * 0.5f + 0.75f || y1 != x1 * 0.5f + 0.75f) {
        fprintf(stderr, "bench_interop_wrap: wrong answer: %g -> %g, %g -> %g\n", x0, y0, x1, y1);
        return 1;
    }

    /* Timed: alternating, so drift hits both alike. a, b keep the values in
     * [1, 2] (x -> 0.5 x + 0.75 has its fixed point at 1.5). */
    double tw[99], to[99];
    nd_stats s0, s1;
    uint64_t copied = 0;
    for (int r = 0; r < runs; r++) {
        nd_get_stats(&s0);
        tw[r] = update_once(w, where, a, b);
        nd_get_stats(&s1);
        copied += s1.bytes_copied - s0.bytes_copied;
        to[r] = update_once(own, where, a, b);
        if (tw[r] < 0 || to[r] < 0) return fail("a timed update");
    }
    double mw = bench_median(tw, runs), mo = bench_median(to, runs);
    printf("{\"bench\": \"interop_wrap\", \"backend\": \"%s\", \"bytes\": %zu, \"runs\": %d, "
           "\"wrapped_ms\": %.3f, \"owned_ms\": %.3f, \"ratio\": %.3f, \"bytes_copied_wrapped\": %llu, "
           "\"wrapped_gbps\": %.1f}\n",
           nd_backend_name(), bytes, runs, mw * 1e3, mo * 1e3, mw / mo, (unsigned long long)copied,
           2.0 * (double)bytes / mw / 1e9);
    nd_free(w);
    nd_free(own);
    nd_shutdown();
#ifdef BENCH_HAVE_CUDA
    if (on_cuda) cudaFree(mem);
#endif
    if (!on_cuda) free(mem);
    return 0;
}
