/* Honest memory figures (nd_stats' bytes_in_use, bytes_peak, bytes_cached
 * and their parts), nd_trim, nd_reset_peak, and ND_NUM_THREADS reaching
 * OpenBLAS. Figures are read around one array's life: they move by at
 * least its size and come back. */
#include "common.h"

#include <stddef.h>

/* Where computed arrays live: host memory on the CPU, the GPU on CUDA. */
static int compute_memory(void) { return ndt_backend_is_cuda() ? 1 : 0; }

static nd_stats stats(void) {
    nd_stats s;
    memset(&s, 0xA5, sizeof s);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s);
    cr_assert_eq(s.struct_size, sizeof s);
    return s;
}

static uint64_t sum_in_use(const nd_stats *s) {
    uint64_t n = 0;
    for (int m = 0; m < ND_STATS_MEMORIES; m++) n += s->bytes_in_use[m];
    return n;
}

/* An 8 MiB float64 array computed by nd (not from the host). */
#define BIG (1 << 20)

NDT_TEST(memory, in_use_moves_with_an_array_and_returns) {
    const int m = compute_memory();
    nd_stats s0 = stats();
    cr_expect_eq(s0.bytes_allocated, sum_in_use(&s0), "bytes_allocated is the sum of bytes_in_use");
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(BIG), 1.5);
    nd_array *b = nd_mul(a, a);
    nd_stats s1 = stats();
    cr_expect_geq(s1.bytes_in_use[m], s0.bytes_in_use[m] + 2 * (uint64_t)BIG * 8,
                  "two live 8 MiB arrays in memory %d: %llu -> %llu", m, (unsigned long long)s0.bytes_in_use[m],
                  (unsigned long long)s1.bytes_in_use[m]);
    cr_expect_eq(s1.bytes_allocated, sum_in_use(&s1));
    cr_expect_geq(s1.bytes_peak[m], s1.bytes_in_use[m], "the peak is at least what is in use");
    for (int k = 2; k < ND_STATS_MEMORIES; k++)
        cr_expect_eq(s1.bytes_in_use[k] + s1.bytes_peak[k] + s1.bytes_cached[k], 0, "memory %d is not used", k);
    if (m == 0) cr_expect_eq(s1.bytes_in_use[1] + s1.bytes_cached[1], 0, "no device on the CPU backend");
    nd_free(a);
    nd_free(b);
    nd_stats s2 = stats();
    cr_expect_leq(s2.bytes_in_use[m] + 2 * (uint64_t)BIG * 8, s1.bytes_in_use[m],
                  "freed arrays leave bytes_in_use: %llu -> %llu", (unsigned long long)s1.bytes_in_use[m],
                  (unsigned long long)s2.bytes_in_use[m]);
    cr_expect_eq(s2.bytes_in_use[m], s0.bytes_in_use[m], "back where it started");
    cr_expect_geq(s2.bytes_peak[m], s1.bytes_in_use[m], "the peak remembers");
}

NDT_TEST(memory, from_host_counts_in_host_memory) {
    double *h = malloc(sizeof(double) * BIG);
    for (int i = 0; i < BIG; i++) h[i] = i;
    nd_stats s0 = stats();
    nd_array *a = nd_from_host(h, ND_FLOAT64, ND_SHAPE(BIG));
    nd_stats s1 = stats();
    cr_expect_geq(s1.bytes_in_use[0], s0.bytes_in_use[0] + (uint64_t)BIG * 8, "%llu -> %llu",
                  (unsigned long long)s0.bytes_in_use[0], (unsigned long long)s1.bytes_in_use[0]);
    nd_free(a);
    nd_stats s2 = stats();
    cr_expect_eq(s2.bytes_in_use[0], s0.bytes_in_use[0]);
    free(h);
}

NDT_TEST(memory, reset_peak) {
    const int m = compute_memory();
    nd_array *a = nd_full(ND_FLOAT32, ND_SHAPE(4 * BIG), 2.0f);
    nd_stats s1 = stats();
    nd_free(a);
    nd_stats s2 = stats();
    cr_expect_geq(s2.bytes_peak[m], s1.bytes_in_use[m]);
    cr_expect_gt(s2.bytes_peak[m], s2.bytes_in_use[m], "the 16 MiB array is gone, its peak stays");
    nd_reset_peak();
    nd_stats s3 = stats();
    for (int k = 0; k < ND_STATS_MEMORIES; k++)
        cr_expect_eq(s3.bytes_peak[k], s3.bytes_in_use[k], "memory %d: peak %llu, in use %llu", k,
                     (unsigned long long)s3.bytes_peak[k], (unsigned long long)s3.bytes_in_use[k]);
    nd_array *b = nd_full(ND_FLOAT32, ND_SHAPE(BIG), 2.0f);
    nd_stats s4 = stats();
    cr_expect_geq(s4.bytes_peak[m], s3.bytes_in_use[m] + (uint64_t)BIG * 4, "a new peak after the reset");
    cr_expect_lt(s4.bytes_peak[m], s2.bytes_peak[m], "below the peak before the reset");
    nd_free(b);
}

/* A freed large array stays in the backend's cache (the CPU's block cache,
 * the CUDA pool) until nd_trim gives it back. */
NDT_TEST(memory, trim_returns_cached_memory) {
    const int m = compute_memory();
    nd_trim();
    nd_stats s0 = stats();
    cr_expect_eq(s0.bytes_cached[m], 0, "nothing cached after nd_trim: %llu", (unsigned long long)s0.bytes_cached[m]);
    cr_expect_eq(s0.bytes_temporaries, 0);
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(BIG), 3.0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(a);
    nd_stats s1 = stats();
    cr_expect_geq(s1.bytes_cached[m], (uint64_t)BIG * 8, "the freed 8 MiB are cached: %llu",
                  (unsigned long long)s1.bytes_cached[m]);
    cr_expect_eq(s1.bytes_block_cache + s1.bytes_pinned_cache, s1.bytes_cached[0] + s1.bytes_cached[1],
                 "the parts add up");
    nd_trim();
    nd_stats s2 = stats();
    for (int k = 0; k < ND_STATS_MEMORIES; k++) cr_expect_eq(s2.bytes_cached[k], 0, "memory %d after nd_trim", k);
    cr_expect_eq(s2.bytes_block_cache + s2.bytes_pinned_cache + s2.bytes_temporaries, 0);
    cr_expect_eq(s2.bytes_in_use[m], s0.bytes_in_use[m]);
    /* The cache works again after a trim. */
    nd_array *b = nd_full(ND_FLOAT64, ND_SHAPE(BIG), 4.0);
    nd_array *b7 = nd_view(b, "7");
    cr_expect_eq(nd_item(b7), 4.0);
    nd_free(b7);
    nd_free(b);
    cr_expect_geq(stats().bytes_cached[m], (uint64_t)BIG * 8);
}

/* A routine that reads its status back (linear algebra) may keep its
 * workspace for the next call (the CUDA backend does): it counts as in use
 * and nd_trim gives it back, so after the arrays go and a trim nothing
 * more is held than before. A first round makes what stays for the
 * process (library handles, cuBLAS's workspace); the second, larger, needs
 * a larger routine workspace. The factors are checked too, so a kept
 * workspace is not a stale one: L @ L^T == A. */
static void cholesky_round(int64_t n) {
    nd_scope_begin();
    nd_array *p = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n, n), -1, 1);
    nd_array *a = nd_add(nd_matmul(p, nd_swapaxes(p, 0, 1)), nd_mul(nd_eye(ND_FLOAT64, n, n, 0), nd_scalar((double)n)));
    nd_array *l = nd_linalg_cholesky(a);
    nd_array *dev = nd_max(nd_abs(nd_sub(nd_matmul(l, nd_swapaxes(l, 0, 1)), a)), ND_ALL_AXES);
    cr_assert(dev, "%s", nd_last_error());
    cr_expect_lt(nd_item(dev), 1e-10 * (double)n, "n = %lld: L L^T - A", (long long)n);
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
}

NDT_TEST(memory, trim_returns_a_kept_routine_workspace) {
    const int m = compute_memory();
    cholesky_round(40);
    nd_trim();
    nd_stats s0 = stats();
    cholesky_round(96);
    nd_trim();
    nd_stats s1 = stats();
    cr_expect_eq(s1.bytes_in_use[m], s0.bytes_in_use[m], "held after the routine and nd_trim: %llu, before %llu",
                 (unsigned long long)s1.bytes_in_use[m], (unsigned long long)s0.bytes_in_use[m]);
    cr_expect_eq(s1.bytes_cached[m], 0);
}

/* A stencil swept in place keeps a twin (a second copy the sweeps
 * alternate with): in bytes_in_use and bytes_twins while the grid lives;
 * when it goes, the twin joins the pooled temporaries, which nd_trim frees. */
NDT_TEST(memory, twins_and_temporaries) {
    enum { N = 256 };
    nd_array *u = nd_full(ND_FLOAT64, ND_SHAPE(N, N), 1.0);
    for (int it = 0; it < 6; it++) {
        nd_scope_begin();
        nd_array *sum = nd_add(nd_add(nd_view(u, "0:-2, 1:-1"), nd_view(u, "2:, 1:-1")),
                               nd_add(nd_view(u, "1:-1, 0:-2"), nd_view(u, "1:-1, 2:")));
        cr_assert_eq(nd_assign(nd_view(u, "1:-1, 1:-1"), nd_mul(sum, nd_scalar(0.25))), ND_OK, "%s",
                     nd_last_error());
        nd_scope_end();
    }
    nd_stats s1 = stats();
    /* split, the grid's twin lives in pieces (kept with the grid;
     * test_store_chains), counted in bytes_twins alike */
    cr_expect_geq(s1.bytes_twins, (uint64_t)N * N * 8, "the grid's twin: %llu bytes",
                  (unsigned long long)s1.bytes_twins);
    const int whole_twin = ndt_one_device("the whole grid's twin joins the pool when the grid goes: split, the "
                                          "twin's pieces are released with the grid");
    cr_expect_leq(s1.bytes_twins + s1.bytes_temporaries, s1.bytes_allocated, "parts of bytes_in_use");
    nd_free(u);
    nd_stats s2 = stats();
    cr_expect_eq(s2.bytes_twins, 0);
    if (whole_twin)
        cr_expect_geq(s2.bytes_temporaries, (uint64_t)N * N * 8, "the twin went to the pool: %llu",
                      (unsigned long long)s2.bytes_temporaries);
    nd_trim();
    nd_stats s3 = stats();
    cr_expect_eq(s3.bytes_temporaries, 0);
    if (whole_twin)
        cr_expect_leq(s3.bytes_allocated + (uint64_t)N * N * 8, s2.bytes_allocated, "the pool's blocks are released");
}

/* A program built against the nd_stats before the memory figures gets its
 * fields and nothing written after them. */
NDT_TEST(memory, older_stats_struct_is_not_overrun) {
    nd_stats s;
    memset(&s, 0x5A, sizeof s);
    const size_t old = offsetof(nd_stats, bytes_in_use);
    nd_get_stats_sized(&s, old);
    cr_expect_eq(s.struct_size, old);
    const unsigned char *p = (const unsigned char *)&s;
    for (size_t i = old; i < sizeof s; i++) cr_assert_eq(p[i], 0x5A, "byte %zu written", i);
}

NDT_TEST(memory, trim_and_reset_peak_start_the_runtime) {
    nd_shutdown();
    nd_trim();
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_shutdown();
    nd_reset_peak();
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* ------------------------------------------------ OpenBLAS's threads */

int openblas_get_num_threads(void) __attribute__((weak));

NDT_TEST(memory, num_threads_sets_openblas_threads) {
    if (!openblas_get_num_threads) cr_skip_test("the BLAS is not OpenBLAS");
    if (ndt_backend_is_cuda()) cr_skip_test("OpenBLAS serves the CPU backend");
    ndt_restart(&(nd_config){.num_threads = 3});
    cr_expect_eq(openblas_get_num_threads(), 3);
    ndt_restart(&(nd_config){.num_threads = 2});
    cr_expect_eq(openblas_get_num_threads(), 2);
    /* Matmul still gives the right answer with it. */
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(64, 64), 0.5);
    nd_array *c = nd_matmul(a, a);
    nd_array *c59 = nd_view(c, "5, 9");
    cr_expect_eq(nd_item(c59), 64 * 0.25);
    nd_free(c59);
    nd_free(c);
    nd_free(a);
    /* A batch of inverses spread over the pool runs LAPACK with the BLAS
     * single-threaded (no pool x BLAS threads on the cores); the count is
     * back afterwards, and the inverses are right: a @ inv(a) = I. */
    nd_scope_begin();
    nd_array *eye = nd_eye(ND_FLOAT64, 80, 80, 0);
    nd_array *m = nd_add(nd_random_uniform(ND_FLOAT64, ND_SHAPE(6, 80, 80), -0.5, 0.5),
                         nd_mul(eye, nd_scalar(10)));
    nd_array *prod = nd_matmul(m, nd_linalg_inv(m));
    nd_array *dev = nd_max(nd_abs(nd_sub(prod, eye)), ND_ALL_AXES);
    cr_assert(dev, "%s", nd_last_error());
    cr_expect_lt(nd_item(dev), 1e-10, "a @ inv(a) - I");
    cr_expect_eq(openblas_get_num_threads(), 2, "a batched linalg call left OpenBLAS at %d threads",
                 openblas_get_num_threads());
    nd_scope_end();
    setenv("ND_NUM_THREADS", "1", 1);
    ndt_restart(NULL);
    unsetenv("ND_NUM_THREADS");
    cr_expect_eq(openblas_get_num_threads(), 1, "ND_NUM_THREADS reaches OpenBLAS");
}
