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
    nd_scope_begin();
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
    nd_scope_end();
}

/* a[...] = take(a, perm) + 1 reads a before writing it (NumPy computes the
 * right-hand side first), also when the store is a region of a. */
NDT_TEST(gather_fused, store_into_the_gathered_array) {
    nd_scope_begin();
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
    nd_scope_end();
}

/* A bad index in a fused kernel: the kernel's values fail at every read
 * with NumPy's words; an independent value of the same flush, and the
 * gather's source, keep theirs; the first bad index in the iteration
 * order is named whatever the thread count. Float32 like the benchmark. */
NDT_TEST(gather_fused, bad_index_fails_only_its_kernel) {
    nd_scope_begin();
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
    nd_scope_end();
}

/* 0-d index, empty index, empty source axis (every index is bad; an empty
 * index reads nothing and is fine). */
NDT_TEST(gather_fused, zero_d_and_empty) {
    nd_scope_begin();
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
    nd_scope_end();
}

/* ------------------------------------------------ several index arrays
 *
 * NumPy's a[i, j] (nd_index with several "$k"), against a reference of
 * NumPy's rules written here: the index arrays broadcast together; their
 * axes replace the indexed ones where the first was when the indexed axes
 * are adjacent, else they come first; each index wraps once and is
 * checked against its own axis; the first bad index in C order of the
 * result is named (the CPU's promise; CUDA names one of them). */

typedef struct {
    int arr;                   /* an index array (else a slice) */
    int64_t start, step, len;  /* a slice */
    int nd;                    /* an index array: its shape */
    int64_t sh[4];
    const int64_t *v;
} ref_axis;

typedef struct {
    int nd;
    int64_t shape[8];
    int64_t bad_point, bad_value;
    int bad_axis;
} ref_out;

/* out = src[spec] over a source of shape (snd, sshape), row-major. */
static void ref_index(const double *src, int snd, const int64_t *sshape, const ref_axis *ax, double *out, ref_out *ro) {
    int bnd = 0, first = -1, last = -1, adjacent = 1;
    for (int d = 0; d < snd; d++) {
        if (!ax[d].arr) continue;
        if (last >= 0 && last != d - 1) adjacent = 0;
        if (first < 0) first = d;
        last = d;
    }
    /* broadcast shape, right-aligned in 4 slots */
    int64_t b4[4] = {1, 1, 1, 1};
    for (int d = 0; d < snd; d++) {
        if (!ax[d].arr) continue;
        if (ax[d].nd > bnd) bnd = ax[d].nd;
        for (int k = 0; k < ax[d].nd; k++) {
            int64_t e = ax[d].sh[ax[d].nd - 1 - k];
            int64_t *t = &b4[3 - k];
            if (*t == 1) *t = e;
            else cr_assert(e == 1 || e == *t, "reference: shapes do not broadcast");
        }
    }
    /* result axes: slices in order, the broadcast block at pos */
    int nsl = 0, pos = 0;
    for (int d = 0; d < snd; d++)
        if (!ax[d].arr && d < first) nsl++;
    pos = adjacent ? nsl : 0;
    ro->nd = 0;
    int sl_axis[8], ns = 0;
    for (int d = 0; d < snd; d++)
        if (!ax[d].arr) sl_axis[ns++] = d;
    for (int r = 0, s = 0; r < ns + 1; r++) {
        if (r == pos)
            for (int k = 0; k < bnd; k++) ro->shape[ro->nd++] = b4[4 - bnd + k];
        if (s < ns) ro->shape[ro->nd++] = ax[sl_axis[s++]].len;
    }
    int64_t total = 1;
    for (int k = 0; k < ro->nd; k++) total *= ro->shape[k];
    ro->bad_point = -1;
    int64_t sst[8];
    sst[snd - 1] = 1;
    for (int d = snd - 2; d >= 0; d--) sst[d] = sst[d + 1] * sshape[d + 1];
    for (int64_t p = 0; p < total; p++) {
        int64_t ri[8], rem = p;
        for (int k = ro->nd - 1; k >= 0; k--) {
            ri[k] = rem % ro->shape[k];
            rem /= ro->shape[k];
        }
        int64_t bi[4];
        for (int k = 0; k < bnd; k++) bi[4 - bnd + k] = ri[pos + k];
        int64_t off = 0, bad = 0;
        for (int d = 0, s = 0; d < snd && !bad; d++) {
            if (!ax[d].arr) {
                int r = s < pos ? s : s + bnd;
                s++;
                off += (ax[d].start + ax[d].step * ri[r]) * sst[d];
                continue;
            }
            int64_t e = 0, m = 1;
            for (int k = ax[d].nd - 1; k >= 0; k--) {
                int64_t c = ax[d].sh[k] == 1 ? 0 : bi[4 - ax[d].nd + k];
                e += c * m;
                m *= ax[d].sh[k];
            }
            int64_t v = ax[d].v[e], w = v < 0 ? v + sshape[d] : v;
            if (w < 0 || w >= sshape[d]) {
                bad = 1;
                if (ro->bad_point < 0) {
                    ro->bad_point = p;
                    ro->bad_value = v;
                    ro->bad_axis = d;
                }
                break;
            }
            off += w * sst[d];
        }
        if (!bad) out[p] = src[off];
    }
}

static nd_array *int_array(int nd, const int64_t *sh, const int64_t *v) {
    nd_array *a = nd_from_host(v, ND_INT64, nd, sh);
    cr_assert(a, "%s", nd_last_error());
    return a;
}

/* nd_index(a, spec) * 2 + 1 against the reference; one kernel with no
 * library call when it fuses (any number of index arrays). Returns the
 * flush's status. */
static nd_status check_index(const char *what, int snd, const int64_t *sshape, const char *spec, const ref_axis *ax,
                             int n_arr, int expect_fused) {
    int64_t n = 1;
    for (int d = 0; d < snd; d++) n *= sshape[d];
    double *src = calloc((size_t)(n ? n : 1), sizeof *src);
    for (int64_t i = 0; i < n; i++) src[i] = (double)((i * 37) % 101) - 50.5;
    nd_array *a = nd_from_host(src, ND_FLOAT64, snd, sshape);
    nd_array *arrs[8];
    int made = 0; /* can exceed n_arr: an int in spec beside an array of ax */
    for (int d = 0; d < snd; d++)
        if (ax[d].arr) arrs[made++] = int_array(ax[d].nd, ax[d].sh, ax[d].v);
    cr_assert_eq(nd_sync(), ND_OK);
    ref_out ro;
    memset(&ro, 0, sizeof ro);
    double *want = malloc(sizeof *want * 4096);
    ref_index(src, snd, sshape, ax, want, &ro);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *g = nd_index(a, spec, n_arr, arrs);
    cr_assert(g, "%s: %s", what, nd_last_error());
    nd_array *y = nd_keep(nd_add(nd_mul(g, nd_scalar(2.0)), nd_scalar(1.0)));
    nd_scope_end();
    cr_assert(y, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_ndim(y), ro.nd, "%s: ndim %d, want %d", what, nd_ndim(y), ro.nd);
    int64_t total = 1;
    for (int k = 0; k < ro.nd; k++) {
        cr_expect_eq(nd_shape(y)[k], ro.shape[k], "%s: axis %d is %lld, want %lld", what, k,
                     (long long)nd_shape(y)[k], (long long)ro.shape[k]);
        total *= ro.shape[k];
    }
    nd_status st = nd_sync();
    nd_get_stats(&s1);
    if (ro.bad_point < 0) {
        cr_expect_eq(st, ND_OK, "%s: %s", what, nd_last_error());
        if (fuses() && expect_fused && total > 0) {
            cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "%s: a[i, j] * 2 + 1 should be one kernel, ran %llu", what,
                         (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
            cr_expect_eq(s1.library_calls - s0.library_calls, 0, "%s: no gather routine", what);
        }
        double *got = malloc(sizeof *got * (size_t)(total ? total : 1));
        if (total) read_f64(y, got, total);
        for (int64_t p = 0; p < total; p++)
            if (got[p] != want[p] * 2 + 1) {
                cr_expect(0, "%s: element %lld is %g, want %g", what, (long long)p, got[p], want[p] * 2 + 1);
                break;
            }
        free(got);
    } else {
        cr_expect_eq(st, ND_ERR_INDEX, "%s: nd_sync: %s", what, nd_status_name(st));
        char msg[160];
        snprintf(msg, sizeof msg, "nd_index: index %lld is out of bounds for axis %d with size %lld",
                 (long long)ro.bad_value, ro.bad_axis, (long long)sshape[ro.bad_axis]);
        const char *m = nd_last_error();
        if (!ndt_backend_is_cuda() || !fuses() || !expect_fused)
            cr_expect(m && strstr(m, msg), "%s: message '%s' should contain '%s'", what, m ? m : "", msg);
        else
            cr_expect(m && strstr(m, "nd_index: index") && strstr(m, "is out of bounds for axis"), "%s: message '%s'",
                      what, m ? m : "");
        nd_clear_error();
        double *one = malloc(sizeof *one * (size_t)(total ? total : 1));
        cr_expect_eq(nd_to_host(y, one, sizeof *one * (size_t)total), ND_ERR_INDEX, "%s: the failed value fails its read",
                     what);
        free(one);
        nd_clear_error();
        cr_expect_eq(nd_to_host(a, src, sizeof *src * (size_t)n), ND_OK, "%s: the source keeps its values", what);
    }
    nd_free(y);
    for (int k = 0; k < made; k++) nd_free(arrs[k]);
    nd_free(a);
    free(want);
    free(src);
    return st;
}

#define SLICE(s, st, l) {0, s, st, l, 0, {0}, NULL}
#define ARR(nd, v, ...) {1, 0, 0, 0, nd, {__VA_ARGS__}, v}

/* Two to five index arrays, broadcast; adjacent (their axes in place)
 * and apart (their axes first), beside slices; negative and repeated
 * indices; an int beside arrays (a 0-d index array, NumPy's rule). */
NDT_TEST(gather_fused, several_index_arrays) {
    const int64_t s3[3] = {5, 6, 7};
    const int64_t i0[3] = {4, -1, 0}, i1[4] = {5, -6, 2, 2};
    {
        ref_axis ax[3] = {ARR(2, i0, 3, 1), ARR(1, i1, 4), SLICE(0, 1, 7)};
        check_index("a[i(3,1), j(4)]", 3, s3, "$0, $1", ax, 2, 1);
    }
    {
        const int64_t k2[2] = {-7, 6};
        ref_axis ax[3] = {ARR(2, i0, 3, 1), ARR(1, i1, 4), ARR(3, k2, 2, 1, 1)};
        check_index("a[i(3,1), j(4), k(2,1,1)]", 3, s3, "$0, $1, $2", ax, 3, 1);
    }
    {
        /* apart: a[i, 1:6:2, j] -> (broadcast..., 3) */
        const int64_t j4[4] = {6, -7, 3, 0};
        ref_axis ax[3] = {ARR(2, i0, 3, 1), SLICE(1, 2, 3), ARR(1, j4, 4)};
        check_index("a[i(3,1), 1:6:2, j(4)]", 3, s3, "$0, 1:6:2, $1", ax, 2, 1);
    }
    {
        /* a slice first, then two adjacent arrays: (5, broadcast...) */
        const int64_t i3[3] = {0, 5, -1}, j6[6] = {6, 0, -7, 1, 2, 3};
        ref_axis ax[3] = {SLICE(4, -1, 5), ARR(1, i3, 3), ARR(2, j6, 2, 3)};
        check_index("a[::-1, i(3), j(2,3)]", 3, s3, "::-1, $0, $1", ax, 2, 1);
    }
    {
        /* an int with an array: a[i, 2] */
        const int64_t two = 2;
        ref_axis ax[3] = {ARR(1, i0, 3), ARR(0, &two, 0), SLICE(0, 1, 7)};
        check_index("a[i(3), 2]", 3, s3, "$0, 2", ax, 1, 1);
    }
    {
        /* four arrays: fused too */
        const int64_t s4[4] = {3, 4, 5, 6};
        const int64_t a0[2] = {2, -3}, a1[2] = {3, 0}, a2[2] = {-1, 4}, a3[2] = {5, -6};
        ref_axis ax[4] = {ARR(1, a0, 2), ARR(1, a1, 2), ARR(1, a2, 2), ARR(1, a3, 2)};
        check_index("a[i, j, k, l]", 4, s4, "$0, $1, $2, $3", ax, 4, 1);
    }
    {
        /* four arrays broadcast, beside a slice, apart (their axes first) */
        const int64_t s5[5] = {3, 4, 5, 6, 2};
        const int64_t a0[2] = {2, -3}, a1[3] = {3, 0, -1}, a2[2] = {-1, 4}, a3[3] = {5, -6, 0};
        ref_axis ax[5] = {ARR(2, a0, 2, 1), ARR(1, a1, 3), SLICE(1, 2, 2), ARR(2, a2, 2, 1), ARR(1, a3, 3)};
        check_index("a[i(2,1), j(3), 1:5:2, k(2,1), l(3)]", 5, s5, "$0, $1, 1:5:2, $2, $3", ax, 4, 1);
    }
    {
        /* five arrays: fused too (the node keeps its axes past its refs) */
        const int64_t s5[5] = {3, 4, 5, 6, 2};
        const int64_t a0[2] = {2, -3}, a1[2] = {3, 0}, a2[2] = {-1, 4}, a3[2] = {5, -6}, a4[2] = {-2, 1};
        ref_axis ax[5] = {ARR(1, a0, 2), ARR(1, a1, 2), ARR(1, a2, 2), ARR(1, a3, 2), ARR(1, a4, 2)};
        check_index("a[i, j, k, l, m]", 5, s5, "$0, $1, $2, $3, $4", ax, 5, 1);
    }
}

/* Four fused index arrays, random over many work items, and a bad index in
 * each of them (the message names that axis). */
NDT_TEST(gather_fused, four_index_arrays_random_and_bad) {
    NDT_RNG(r);
    const int64_t s4[4] = {5, 6, 7, 3};
    int64_t v[4][300];
    for (int t = 0; t < 300; t++)
        for (int k = 0; k < 4; k++) v[k][t] = ndt_int(&r, -s4[k], s4[k] - 1);
    {
        ref_axis ax[4] = {ARR(2, v[0], 20, 15), ARR(1, v[1], 15), ARR(2, v[2], 20, 1), ARR(2, v[3], 1, 15)};
        check_index("random a[i(20,15), j(15), k(20,1), l(1,15)]", 4, s4, "$0, $1, $2, $3", ax, 4, 1);
    }
    for (int axis = 0; axis < 4; axis++) {
        int64_t c[4][300];
        memcpy(c, v, sizeof c);
        c[axis][7] = axis % 2 ? s4[axis] : -s4[axis] - 1;
        ref_axis ax[4] = {ARR(1, c[0], 30), ARR(1, c[1], 30), ARR(1, c[2], 30), ARR(1, c[3], 30)};
        char what[64];
        snprintf(what, sizeof what, "a bad index in array %d of four", axis);
        cr_expect_eq(check_index(what, 4, s4, "$0, $1, $2, $3", ax, 4, 1), ND_ERR_INDEX, "%s", what);
    }
}

/* Five to eight index arrays: one kernel with the map after it, NumPy's
 * values and axes (adjacent arrays keep their place, separated ones come
 * first), broadcast together, negative and repeated indices, beside
 * slices; an indexed array of n + K > 8 axes is nd's own limit (the
 * geometry is a view of that many axes), so eight arrays take 0-d
 * indices. */
NDT_TEST(gather_fused, five_to_eight_index_arrays) {
    {
        /* five adjacent after a slice, broadcast to (2, 3): (3, 2, 3) */
        const int64_t s6[6] = {3, 4, 5, 3, 4, 2};
        const int64_t a0[2] = {3, -4}, a1[3] = {4, -5, 0}, a2[3] = {-1, 2, 1}, a3[6] = {0, 3, -4, 1, 2, 3},
                      a4[1] = {-2};
        ref_axis ax[6] = {SLICE(2, -1, 3), ARR(2, a0, 2, 1), ARR(1, a1, 3), ARR(2, a2, 1, 3), ARR(2, a3, 2, 3),
                          ARR(1, a4, 1)};
        check_index("a[::-1, i(2,1), j(3), k(1,3), l(2,3), m(1)]", 6, s6, "::-1, $0, $1, $2, $3, $4", ax, 5, 1);
    }
    {
        /* five apart (a slice between): the broadcast axes first, (2, 3, 2) */
        const int64_t s6[6] = {3, 4, 5, 3, 4, 2};
        const int64_t a0[2] = {2, -3}, a1[3] = {3, 0, -1}, a3[2] = {-1, 2}, a4[3] = {3, -4, 0}, a5[2] = {1, -2};
        ref_axis ax[6] = {ARR(2, a0, 2, 1), ARR(1, a1, 3), SLICE(1, 3, 2), ARR(2, a3, 2, 1), ARR(1, a4, 3),
                          ARR(2, a5, 2, 1)};
        check_index("a[i(2,1), j(3), 1::3, k(2,1), l(3), m(2,1)]", 6, s6, "$0, $1, 1::3, $2, $3, $4", ax, 5, 1);
    }
    {
        /* six adjacent, broadcast to (2, 2) */
        const int64_t s6[6] = {2, 3, 4, 2, 3, 5};
        const int64_t a0[2] = {1, -2}, a1[4] = {2, -3, 0, 1}, a2[2] = {-1, 3}, a3[1] = {-1}, a4[2] = {2, -3},
                      a5[4] = {4, -5, 0, 3};
        ref_axis ax[6] = {ARR(2, a0, 2, 1), ARR(2, a1, 2, 2), ARR(1, a2, 2), ARR(0, a3, 0), ARR(2, a4, 1, 2),
                          ARR(2, a5, 2, 2)};
        check_index("a[i(2,1), j(2,2), k(2), l, m(1,2), n(2,2)]", 6, s6, "$0, $1, $2, $3, $4, $5", ax, 6, 1);
    }
    {
        /* six apart around a slice: (3, 2) */
        const int64_t s7[7] = {2, 3, 4, 2, 3, 5, 2};
        const int64_t a0[3] = {1, -2, 0}, a1[1] = {-3}, a2[3] = {3, -4, 2}, a4[3] = {2, 0, -3}, a5[1] = {4},
                      a6[3] = {-1, 1, 0};
        ref_axis ax[7] = {ARR(1, a0, 3), ARR(1, a1, 1), ARR(1, a2, 3), SLICE(0, 1, 2), ARR(1, a4, 3),
                          ARR(1, a5, 1), ARR(1, a6, 3)};
        check_index("a[i(3), j(1), k(3), :, l(3), m(1), n(3)]", 7, s7, "$0, $1, $2, :, $3, $4, $5", ax, 6, 1);
    }
    {
        /* seven, broadcast to (4,) */
        const int64_t s7[7] = {2, 3, 2, 3, 2, 3, 4};
        const int64_t a0[4] = {1, -2, 0, -1}, a1[1] = {-3}, a2[4] = {1, 0, -1, -2}, a3[1] = {2}, a4[4] = {0, 1, 1, 0},
                      a5[4] = {-3, 2, 1, 0}, a6[4] = {3, -4, 2, 0};
        ref_axis ax[7] = {ARR(1, a0, 4), ARR(1, a1, 1), ARR(1, a2, 4), ARR(0, a3, 0), ARR(1, a4, 4), ARR(1, a5, 4),
                          ARR(1, a6, 4)};
        check_index("a[7 arrays (4,)]", 7, s7, "$0, $1, $2, $3, $4, $5, $6", ax, 7, 1);
    }
    {
        /* eight, 0-d (negative ones too): one element */
        const int64_t s8[8] = {2, 3, 2, 3, 2, 3, 2, 3};
        const int64_t v[8] = {1, -3, 0, 2, -1, -2, 1, 0};
        ref_axis ax[8] = {ARR(0, &v[0], 0), ARR(0, &v[1], 0), ARR(0, &v[2], 0), ARR(0, &v[3], 0),
                          ARR(0, &v[4], 0), ARR(0, &v[5], 0), ARR(0, &v[6], 0), ARR(0, &v[7], 0)};
        check_index("a[8 0-d arrays]", 8, s8, "$0, $1, $2, $3, $4, $5, $6, $7", ax, 8, 1);
    }
    {
        /* empty: five arrays, one of length 0 broadcast with (1,): (0,) */
        const int64_t s5[5] = {3, 4, 5, 6, 2};
        const int64_t a[1] = {1};
        ref_axis ax[5] = {ARR(1, a, 1), ARR(1, a, 0), ARR(1, a, 1), ARR(1, a, 1), ARR(1, a, 1)};
        cr_expect_eq(check_index("empty a[i(1), j(0), k(1), l(1), m(1)]", 5, s5, "$0, $1, $2, $3, $4", ax, 5, 1),
                     ND_OK);
        /* (2, 0) beside a slice */
        const int64_t s6[6] = {3, 4, 5, 6, 2, 7};
        const int64_t b[2] = {0, -1};
        ref_axis ay[6] = {ARR(2, b, 2, 1), ARR(1, a, 0), ARR(1, a, 1), ARR(2, b, 2, 1), ARR(1, a, 1), SLICE(0, 1, 7)};
        cr_expect_eq(check_index("empty a[i(2,1), j(0), k(1), l(2,1), m(1), :]", 6, s6, "$0, $1, $2, $3, $4", ay, 5, 1),
                     ND_OK);
    }
}

/* A read flushes only what it needs (graph/read_split.c): a fused gather
 * of six index arrays that the value read and a value left pending both
 * use stays pending as a copy of its node (its axes, kept past its refs,
 * copied with it); the pending value, read later, is still NumPy's. */
NDT_TEST(gather_fused, six_index_arrays_across_a_read_split) {
    const int64_t s6[6] = {2, 3, 4, 2, 3, 5};
    const int64_t a0[2] = {1, -2}, a1[4] = {2, -3, 0, 1}, a2[2] = {-1, 3}, a3[1] = {-1}, a4[2] = {2, -3},
                  a5[4] = {4, -5, 0, 3};
    ref_axis ax[6] = {ARR(2, a0, 2, 1), ARR(2, a1, 2, 2), ARR(1, a2, 2), ARR(0, a3, 0), ARR(2, a4, 1, 2),
                      ARR(2, a5, 2, 2)};
    int64_t n = 1;
    for (int d = 0; d < 6; d++) n *= s6[d];
    double *src = malloc(sizeof *src * (size_t)n), want[4], got[4];
    for (int64_t i = 0; i < n; i++) src[i] = (double)((i * 53) % 97) - 40.25;
    ref_out ro;
    memset(&ro, 0, sizeof ro);
    ref_index(src, 6, s6, ax, want, &ro);
    cr_assert_eq(ro.nd, 2);
    nd_array *a = nd_from_host(src, ND_FLOAT64, 6, s6), *arrs[6];
    for (int k = 0; k < 6; k++) arrs[k] = int_array(ax[k].nd, ax[k].sh, ax[k].v);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_scope_begin();
    nd_array *g = nd_index(a, "$0, $1, $2, $3, $4, $5", 6, arrs);
    nd_array *y = nd_keep(nd_mul(g, nd_scalar(2.0))), *z = nd_keep(nd_add(g, nd_scalar(1.0)));
    nd_scope_end();
    cr_assert(y && z, "%s", nd_last_error());
    read_f64(y, got, 4);
    for (int p = 0; p < 4; p++) cr_expect_eq(got[p], want[p] * 2, "y[%d] is %g, want %g", p, got[p], want[p] * 2);
    read_f64(z, got, 4);
    for (int p = 0; p < 4; p++) cr_expect_eq(got[p], want[p] + 1, "z[%d] is %g, want %g", p, got[p], want[p] + 1);
    nd_free(y);
    nd_free(z);
    for (int k = 0; k < 6; k++) nd_free(arrs[k]);
    nd_free(a);
    free(src);
}

/* Five, six and eight index arrays with one bad index on each axis in
 * turn (below -size or at size): nd_index's IndexError names that axis
 * and its size, the failed value fails its read, the source stays. */
NDT_TEST(gather_fused, five_to_eight_index_arrays_bad_index_on_each_axis) {
    static const int64_t S[8] = {3, 4, 2, 5, 3, 2, 4, 3};
    static const char *const spec[9] = {NULL, NULL, NULL, NULL, NULL, "$0, $1, $2, $3, $4",
                                        "$0, $1, $2, $3, $4, $5", NULL, "$0, $1, $2, $3, $4, $5, $6, $7"};
    static const int Ks[3] = {5, 6, 8};
    for (int t = 0; t < 3; t++) {
        const int K = Ks[t], M = K == 8 ? 1 : 3; /* n + K <= 8 */
        int64_t v[8][3];
        for (int k = 0; k < K; k++)
            for (int m = 0; m < M; m++) v[k][m] = (k + 2 * m) % (2 * S[k]) - S[k];
        for (int axis = 0; axis < K; axis++)
            for (int hi = 0; hi < 2; hi++) {
                int64_t c[8][3];
                memcpy(c, v, sizeof c);
                c[axis][M - 1] = hi ? S[axis] : -S[axis] - 1;
                ref_axis ax[8];
                for (int k = 0; k < K; k++) ax[k] = (ref_axis)ARR(K == 8 ? 0 : 1, c[k], M);
                char what[80];
                snprintf(what, sizeof what, "%d arrays, a %s index on axis %d", K, hi ? "high" : "low", axis);
                cr_expect_eq(check_index(what, K, S, spec[K], ax, K, 1), ND_ERR_INDEX, "%s", what);
            }
    }
}

/* Random indices with repeats and negatives over a larger 3-d source (many
 * work items), two and three arrays; and empty index arrays. */
NDT_TEST(gather_fused, several_index_arrays_random_and_empty) {
    NDT_RNG(r);
    const int64_t s3[3] = {9, 11, 13};
    int64_t iv[40], jv[40], kv[40];
    for (int t = 0; t < 40; t++) {
        iv[t] = ndt_int(&r, -9, 8);
        jv[t] = ndt_int(&r, -11, 10);
        kv[t] = ndt_int(&r, -13, 12);
    }
    {
        ref_axis ax[3] = {ARR(2, iv, 8, 1), ARR(2, jv, 1, 5), SLICE(0, 1, 13)};
        check_index("random a[i(8,1), j(1,5)]", 3, s3, "$0, $1", ax, 2, 1);
    }
    {
        ref_axis ax[3] = {ARR(1, iv, 40), ARR(1, jv, 40), ARR(1, kv, 40)};
        check_index("random a[i, j, k]", 3, s3, "$0, $1, $2", ax, 3, 1);
    }
    {
        ref_axis ax[3] = {ARR(1, iv, 0), ARR(1, jv, 0), SLICE(0, 1, 13)};
        nd_status st = check_index("empty a[i(0), j(0)]", 3, s3, "$0, $1", ax, 2, 1);
        cr_expect_eq(st, ND_OK);
    }
    {
        /* empty broadcast with a non-empty partner: (0,1) with (4,) */
        ref_axis ax[3] = {ARR(2, iv, 0, 1), ARR(1, jv, 4), SLICE(0, 1, 13)};
        check_index("empty a[i(0,1), j(4)]", 3, s3, "$0, $1", ax, 2, 1);
    }
}

/* A bad index in the first, a middle or the last element of the result,
 * in either indexed axis, below -size or at size: the flush fails with
 * NumPy's words naming the function, the index and that axis' size; the
 * failed value fails its read and the source stays. */
NDT_TEST(gather_fused, several_index_arrays_bad_index) {
    const int64_t s3[3] = {4, 5, 6};
    int64_t iv[6] = {0, 1, 2, 3, -4, -1}, jv[6] = {4, 0, -5, 1, 2, 3};
    const int where[3] = {0, 2, 5};
    for (int w = 0; w < 3; w++)
        for (int axis = 0; axis < 2; axis++)
            for (int hi = 0; hi < 2; hi++) {
                int64_t ci[6], cj[6];
                memcpy(ci, iv, sizeof ci);
                memcpy(cj, jv, sizeof cj);
                int64_t size = s3[axis];
                (axis ? cj : ci)[where[w]] = hi ? size : -size - 1;
                ref_axis ax[3] = {ARR(1, ci, 6), ARR(1, cj, 6), SLICE(0, 1, 6)};
                char what[64];
                snprintf(what, sizeof what, "bad %s index at %d of axis %d", hi ? "high" : "low", where[w], axis);
                nd_status st = check_index(what, 3, s3, "$0, $1", ax, 2, 1);
                cr_expect_eq(st, ND_ERR_INDEX, "%s", what);
            }
    /* both bad at one point: the first axis is named */
    int64_t ci[6], cj[6];
    memcpy(ci, iv, sizeof ci);
    memcpy(cj, jv, sizeof cj);
    ci[3] = 7;
    cj[3] = -9;
    ref_axis ax[3] = {ARR(1, ci, 6), ARR(1, cj, 6), SLICE(0, 1, 6)};
    check_index("both bad", 3, s3, "$0, $1", ax, 2, 1);
}

/* A fused gather of two index arrays with a bad index, beside an
 * unrelated value of the same shape in the same flush: they are one kernel
 * (a gathering kernel merges like any other); the bad index fails only
 * what is computed from it; a later flush reading the failed value fails,
 * the bystander and a value computed from it in a later flush do not. */
NDT_TEST(gather_fused, bad_index_spoils_only_its_values_in_a_merged_kernel) {
    nd_scope_begin();
    const int64_t R = 64, C = 512, M = R * C;
    double *src = malloc(sizeof *src * M), *got = malloc(sizeof *got * M);
    int64_t *iv = malloc(sizeof *iv * M), *jv = malloc(sizeof *jv * M);
    for (int64_t i = 0; i < M; i++) {
        src[i] = (double)i;
        iv[i] = (i * 13) % R;
        jv[i] = (i * 7919) % C - C / 2;
    }
    iv[M / 2] = R + 1;
    nd_array *a = nd_from_host(src, ND_FLOAT64, ND_SHAPE(R, C));
    nd_array *arrs[2] = {nd_from_host(iv, ND_INT64, ND_SHAPE(M)), nd_from_host(jv, ND_INT64, ND_SHAPE(M))};
    nd_array *lin = nd_arange(ND_FLOAT64, 0, (double)M, 1);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *y = nd_keep(nd_sqrt(nd_index(a, "$0, $1", 2, arrs)));
    nd_array *bystander = nd_keep(nd_mul(lin, nd_scalar(3.0)));
    nd_scope_end();
    nd_status st = nd_sync();
    nd_get_stats(&s1);
    cr_expect_eq(st, ND_ERR_INDEX, "nd_sync: %s", nd_status_name(st));
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_index: index 65 is out of bounds for axis 0 with size 64");
    nd_clear_error();
    if (fuses())
        cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "the gather and the bystander should be one kernel, ran %llu",
                     (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
    nd_array *later = nd_add(y, nd_scalar(1.0));
    nd_array *later_ok = nd_add(bystander, nd_scalar(1.0));
    cr_expect_eq(nd_to_host(later, got, sizeof *got * M), ND_ERR_INDEX, "computed from the failed value");
    nd_clear_error();
    cr_expect_eq(nd_to_host(later_ok, got, sizeof *got * M), ND_OK, "%s", nd_last_error());
    for (int64_t i = 0; i < M; i++)
        if (got[i] != 3.0 * (double)i + 1) {
            cr_expect(0, "bystander + 1 [%lld] = %g", (long long)i, got[i]);
            break;
        }
    nd_free(later);
    nd_free(later_ok);
    nd_free(y);
    nd_free(bystander);
    nd_free(lin);
    nd_free(arrs[0]);
    nd_free(arrs[1]);
    nd_free(a);
    free(src);
    free(got);
    free(iv);
    free(jv);
    nd_scope_end();
}

/* A gather's base and a plain read of the same view in one kernel
 * (a[idx] + a[0], a[i, j] + a[0, 0]): the plain read is a value, the base
 * an offset (backends read a gather's base load as an offset only). */
NDT_TEST(gather_fused, base_beside_a_plain_read_of_the_same_view) {
    nd_scope_begin();
    double v[12], got[4];
    for (int i = 0; i < 12; i++) v[i] = 1.5 * i - 4;
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(12));
    nd_array *idx = ints(4, (int64_t[]){3, -1, 0, 7});
    nd_array *y = nd_add(nd_take(a, idx, 0), nd_view(a, "0"));
    read_f64(y, got, 4);
    const int64_t iv[4] = {3, -1, 0, 7};
    for (int k = 0; k < 4; k++) cr_expect_eq(got[k], v[wrapi(iv[k], 12)] + v[0], "y[%d] = %g", k, got[k]);
    nd_array *a2 = nd_reshape(a, ND_SHAPE(3, 4));
    nd_array *ix[2] = {ints(4, (int64_t[]){2, 0, -1, 1}), ints(4, (int64_t[]){1, 3, 0, -4})};
    nd_array *z = nd_add(nd_index(a2, "$0, $1", 2, ix), nd_view(a2, "0, 0"));
    read_f64(z, got, 4);
    const int64_t i2[4] = {2, 0, -1, 1}, j2[4] = {1, 3, 0, -4};
    for (int k = 0; k < 4; k++)
        cr_expect_eq(got[k], v[wrapi(i2[k], 3) * 4 + wrapi(j2[k], 4)] + v[0], "z[%d] = %g", k, got[k]);
    nd_free(a);
    nd_scope_end();
}
