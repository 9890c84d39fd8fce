/* Where does a Jacobi loop's time go on the CUDA backend? Times nd_init,
 * then three rounds of ITERS steps + nd_sync (the 2nd and 3rd hit every
 * cache). Build against libnd: see run_check.sh's neighbour commands. */
#define _POSIX_C_SOURCE 200809L
#include <nd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
    int iters = argc > 2 ? atoi(argv[2]) : 50;
    double t0 = now();
    if (nd_init(NULL) != ND_OK) { printf("init: %s\n", nd_last_error()); return 1; }
    double t1 = now();
    printf("nd_init %.3f s (%s)\n", t1 - t0, nd_backend_name());
    nd_array *u = nd_zeros(ND_FLOAT64, ND_SHAPE(n, n));
    nd_fill(nd_view(u, "0, :"), 100.0);
    nd_sync();
    for (int round = 0; round < 3; round++) {
        nd_stats s0;
        nd_get_stats(&s0);
        double a = now();
        for (int it = 0; it < iters; it++) {
            nd_scope_begin();
            nd_array *c = nd_view(u, "1:-1, 1:-1");
            nd_array *sum = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                          nd_view(u, "1:-1, :-2")), nd_view(u, "1:-1, 2:"));
            nd_assign(c, nd_mul(nd_scalar(0.2), sum));
            nd_scope_end();
        }
        double b = now();
        nd_sync();
        double c = now();
        nd_stats s1;
        nd_get_stats(&s1);
        printf("round %d: record %.4f s, flush+sync %.4f s, per step %.1f us; kernels %llu compiled %llu allocs %llu flushes %llu\n",
               round, b - a, c - b, (c - a) / iters * 1e6, (unsigned long long)(s1.kernels_run - s0.kernels_run),
               (unsigned long long)(s1.kernels_compiled - s0.kernels_compiled),
               (unsigned long long)(s1.temp_allocations - s0.temp_allocations),
               (unsigned long long)(s1.flushes - s0.flushes));
    }
    printf("u[1,1] = %g (%s)\n", nd_item(nd_view(u, "1, 1")), nd_last_error());
    nd_shutdown();
    return 0;
}
