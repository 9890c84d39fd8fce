/* Gathers inside generated kernels (backends/kernel_ir.h's ND_IR_GATHER):
 * a one-index-array take, take_along_axis or nd_index whose result feeds
 * elementwise work is one kernel with it, against references computed
 * here; a bad index fails that kernel's values (at every read) and nothing
 * else of the flush; the source computed in the same flush is written
 * first; a gather through the array it is stored into reads the old
 * values (NumPy's right-hand side first). Under ND_FUSED_GATHER=0 or
 * ND_FUSION=0 the same calls run unfused: the values and errors are
 * checked everywhere, the kernel counts only where they fuse. */
#include "common.h"

static nd_array *ints(int n, const int64_t *v) {
    nd_array *a = nd_from_host(v, ND_INT64, 1, (int64_t[]){n});
    cr_assert(a, "%s", nd_last_error());
    return a;
}

/* Whether gathers fuse here (every backend's kernels gather). */
static int fuses(void) {
    const char *f = getenv("ND_FUSED_GATHER"), *g = getenv("ND_FUSION");
    return !(f && strcmp(f, "0") == 0) && !(g && strcmp(g, "0") == 0);
}

static int64_t wrapi(int64_t v, int64_t n) { return v < 0 ? v + n : v; }

static void read_f64(nd_array *a, double *out, int64_t n) {
    cr_assert(a, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(a, out, (size_t)n * sizeof *out), ND_OK, "%s", nd_last_error());
}

/* take + map is one kernel, with no library call, and its value is the
 * reference's; random indices with repeats and negatives over several
 * work items (threads). */
NDT_TEST(gather_fused, take_then_map_is_one_kernel) {
    NDT_RNG(r);
    const int64_t N = 100003, M = 70001;
    double *src = malloc(sizeof *src * N), *got = malloc(sizeof *got * M);
    int64_t *ix = malloc(sizeof *ix * M);
    for (int64_t i = 0; i < N; i++) src[i] = ndt_uniform(&r, -4, 4);
    for (int64_t i = 0; i < M; i++) ix[i] = ndt_int(&r, -N, N - 1);
    nd_array *a = nd_from_host(src, ND_FLOAT64, ND_SHAPE(N));
    nd_array *idx = nd_from_host(ix, ND_INT64, ND_SHAPE(M));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(nd_take(a, idx, 0), nd_scalar(2.0)), nd_scalar(1.0)));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    if (fuses()) {
        cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "take * 2 + 1 should be one kernel, ran %llu",
                     (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
        cr_expect_eq(s1.library_calls - s0.library_calls, 0, "no ND_LIB_GATHER step");
        cr_expect_eq(s1.values_materialised - s0.values_materialised, 1, "only y goes to memory, not the gathered value");
    }
    read_f64(y, got, M);
    for (int64_t i = 0; i < M; i++)
        if (got[i] != src[wrapi(ix[i], N)] * 2 + 1) {
            cr_expect(0, "element %lld: %g, want %g", (long long)i, got[i], src[wrapi(ix[i], N)] * 2 + 1);
            break;
        }
    /* take + reduction: one kernel too. */
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *sum = nd_keep(nd_sum(nd_take(a, idx, 0), ND_ALL_AXES));
    nd_scope_end();
    double total = 0, want = 0;
    read_f64(sum, &total, 1);
    nd_get_stats(&s1);
    for (int64_t i = 0; i < M; i++) want += src[wrapi(ix[i], N)];
    cr_expect(fabs(total - want) <= 1e-9 * (1 + fabs(want)), "sum %g, want %g", total, want);
    if (fuses()) cr_expect_eq(s1.library_calls - s0.library_calls, 0);
    nd_free(sum);
    nd_free(y);
    nd_free(a);
    nd_free(idx);
    free(src);
    free(got);
    free(ix);
}

/* The source computed in the same flush (a map the gather cannot inline)
 * is written first; the index computed in the flush (a map) is inlined;
 * a gather of a gather; a take_along_axis over a 2-d source with a
 * broadcast index; nd_index with a basic part. */
NDT_TEST(gather_fused, computed_sources_indices_and_chains) {
    const int64_t R = 6, C = 7;
    double v[42];
    for (int i = 0; i < 42; i++) v[i] = i * 0.5 - 3;
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(R, C));
    nd_array *s = nd_exp(a); /* materialised: the gather reads it anywhere */
    nd_array *i0 = ints(5, (int64_t[]){0, 6, -1, 3, -7});
    nd_array *ii = nd_neg(nd_neg(i0)); /* a computed index (int64) */
    nd_array *t = nd_take(s, ii, 1);         /* (6, 5) */
    nd_array *tt = nd_take(t, ints(3, (int64_t[]){4, 0, -2}), 1); /* (6, 3) gather of a gather */
    double got[30], got2[18];
    read_f64(t, got, 30);
    const int64_t iv[5] = {0, 6, -1, 3, -7}, jv[3] = {4, 0, -2};
    for (int64_t rr = 0; rr < R; rr++)
        for (int k = 0; k < 5; k++)
            cr_expect(fabs(got[rr * 5 + k] - exp(v[rr * C + wrapi(iv[k], C)])) < 1e-12, "t[%lld,%d]", (long long)rr, k);
    read_f64(tt, got2, 18);
    for (int64_t rr = 0; rr < R; rr++)
        for (int k = 0; k < 3; k++)
            cr_expect(fabs(got2[rr * 3 + k] - exp(v[rr * C + wrapi(iv[wrapi(jv[k], 5)], C)])) < 1e-12, "tt[%lld,%d]",
                      (long long)rr, k);
    /* take_along_axis: index (1, 4) broadcast over the 6 rows of axis 0. */
    nd_array *ta = nd_take_along_axis(a, nd_reshape(ints(4, (int64_t[]){6, 0, -1, 2}), ND_SHAPE(1, 4)), 1);
    double g3[24];
    read_f64(ta, g3, 24);
    const int64_t kv[4] = {6, 0, -1, 2};
    for (int64_t rr = 0; rr < R; rr++)
        for (int k = 0; k < 4; k++) cr_expect_eq(g3[rr * 4 + k], v[rr * C + wrapi(kv[k], C)]);
    /* nd_index: a[1:5, $0] * 3 */
    nd_array *sel = ints(2, (int64_t[]){-2, 1});
    nd_array *ix = nd_index(a, "1:5, $0", 1, &sel);
    nd_array *m = nd_mul(ix, nd_scalar(3.0));
    double g4[8];
    read_f64(m, g4, 8);
    for (int rr = 0; rr < 4; rr++) {
        cr_expect_eq(g4[rr * 2], v[(rr + 1) * C + 5] * 3);
        cr_expect_eq(g4[rr * 2 + 1], v[(rr + 1) * C + 1] * 3);
    }
    nd_free(a);
}

/* a[...] = take(a, perm) + 1 reads a before writing it (NumPy computes the
 * right-hand side first), also when the store is a region of a. */
NDT_TEST(gather_fused, store_into_the_gathered_array) {
    double v[8] = {0, 1, 2, 3, 4, 5, 6, 7}, got[8];
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(8));
    nd_array *perm = ints(8, (int64_t[]){7, 6, 5, 4, 3, 2, 1, 0});
    cr_assert_eq(nd_assign(a, nd_add(nd_take(a, perm, 0), nd_scalar(1.0))), ND_OK, "%s", nd_last_error());
    read_f64(a, got, 8);
    for (int i = 0; i < 8; i++) cr_expect_eq(got[i], 8 - i, "a[%d] = %g, want %d", i, got[i], 8 - i);
    nd_array *head = nd_view(a, ":4");
    cr_assert_eq(nd_assign(head, nd_take(a, ints(4, (int64_t[]){4, 5, 6, 7}), 0)), ND_OK);
    read_f64(a, got, 8);
    const double want[8] = {4, 3, 2, 1, 4, 3, 2, 1};
    for (int i = 0; i < 8; i++) cr_expect_eq(got[i], want[i], "a[%d] = %g, want %g", i, got[i], want[i]);
    nd_free(head);
    nd_free(a);
}

/* A bad index in a fused kernel: the kernel's values fail at every read
 * with NumPy's words; an independent value of the same flush, and the
 * gather's source, keep theirs; the first bad index in the iteration
 * order is named whatever the thread count. Float32 like the benchmark. */
NDT_TEST(gather_fused, bad_index_fails_only_its_kernel) {
    const int64_t N = 1 << 17;
    float *src = malloc(sizeof *src * N), *got = malloc(sizeof *got * N);
    int64_t *ix = malloc(sizeof *ix * N);
    for (int64_t i = 0; i < N; i++) src[i] = (float)i, ix[i] = (i * 7919) % N;
    ix[N / 3] = N + 5; /* the first bad one in C order */
    ix[N / 2] = -N - 9;
    ix[N - 1] = N;
    nd_array *a = nd_from_host(src, ND_FLOAT32, ND_SHAPE(N));
    nd_array *idx = nd_from_host(ix, ND_INT64, ND_SHAPE(N));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_array *y = nd_sqrt(nd_take(a, idx, 0));
    nd_array *y2 = nd_add(y, nd_scalar(1.0));
    nd_array *bystander = nd_mul(a, nd_scalar(2.0));
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_INDEX, "nd_sync: %s", nd_status_name(st));
    char want[128];
    snprintf(want, sizeof want, "nd_take: index %lld is out of bounds for axis 0 with size %lld", (long long)(N + 5),
             (long long)N);
    const char *m = nd_last_error();
    /* The CPU names the first bad index in iteration order; a fused CUDA
     * kernel the first one a thread met (any of the three). */
    if (!ndt_backend_is_cuda() || !fuses())
        cr_expect(m && strstr(m, want), "message '%s' should contain '%s'", m ? m : "", want);
    else
        cr_expect(m && strstr(m, "is out of bounds for axis 0 with size 131072"), "message '%s'", m ? m : "");
    nd_clear_error();
    for (int rep = 0; rep < 2; rep++) {
        cr_expect_eq(nd_to_host(rep ? y2 : y, got, sizeof *got * N), ND_ERR_INDEX, "a failed value fails every read");
        NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_take: index");
        nd_clear_error();
    }
    cr_expect_eq(nd_to_host(bystander, got, sizeof *got * N), ND_OK, "%s", nd_last_error());
    for (int64_t i = 0; i < N; i++)
        if (got[i] != 2.0f * (float)i) {
            cr_expect(0, "bystander[%lld] = %g", (long long)i, got[i]);
            break;
        }
    cr_expect_eq(nd_to_host(a, got, sizeof *got * N), ND_OK);
    cr_expect_eq(got[N - 1], (float)(N - 1), "the source keeps its values");
    /* The same gather with good indices in a later flush runs. */
    ix[N / 3] = ix[N / 2] = ix[N - 1] = 0;
    nd_array *idx2 = nd_from_host(ix, ND_INT64, ND_SHAPE(N));
    nd_array *y3 = nd_sqrt(nd_take(a, idx2, 0));
    cr_assert_eq(nd_to_host(y3, got, sizeof *got * N), ND_OK, "%s", nd_last_error());
    for (int64_t i = 0; i < N; i++)
        if (got[i] != sqrtf((float)ix[i])) {
            cr_expect(0, "y3[%lld] = %g", (long long)i, got[i]);
            break;
        }
    /* Below -size, with the message's index as given. */
    nd_array *z = nd_neg(nd_take(a, ints(2, (int64_t[]){1, -N - 1}), 0));
    cr_expect_eq(nd_sync(), ND_ERR_INDEX);
    snprintf(want, sizeof want, "nd_take: index %lld is out of bounds", (long long)(-N - 1));
    m = nd_last_error();
    cr_expect(m && strstr(m, want), "message '%s' should contain '%s'", m ? m : "", want);
    nd_clear_error();
    nd_free(z);
    nd_free(a);
    free(src);
    free(got);
    free(ix);
}

/* 0-d index, empty index, empty source axis (every index is bad; an empty
 * index reads nothing and is fine). */
NDT_TEST(gather_fused, zero_d_and_empty) {
    double v[5] = {10, 11, 12, 13, 14}, got[2];
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(5));
    int64_t minus2 = -2;
    nd_array *i0 = nd_from_host(&minus2, ND_INT64, 0, NULL);
    nd_array *t0 = nd_add(nd_take(a, i0, 0), nd_scalar(0.5));
    cr_assert(t0, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(t0), 0);
    read_f64(t0, got, 1);
    cr_expect_eq(got[0], 13.5);
    nd_array *e = nd_take(a, nd_zeros(ND_INT64, ND_SHAPE(0)), 0);
    cr_assert(e);
    cr_expect_eq(nd_size(e), 0);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *empty_src = nd_zeros(ND_FLOAT64, ND_SHAPE(0));
    nd_array *ee = nd_take(empty_src, nd_zeros(ND_INT64, ND_SHAPE(0)), 0);
    cr_expect_eq(nd_sync(), ND_OK, "an empty take from an empty axis: %s", nd_last_error());
    nd_array *bad = nd_mul(nd_take(empty_src, ints(1, (int64_t[]){0}), 0), nd_scalar(2.0));
    cr_expect_eq(nd_sync(), ND_ERR_INDEX);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_take: index 0 is out of bounds for axis 0 with size 0");
    nd_clear_error();
    nd_free(bad);
    nd_free(ee);
    nd_free(e);
    nd_free(a);
}
