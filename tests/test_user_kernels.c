/* User kernels (include/nd/kernels.h) as steps of the lazy graph: ordering
 * against nd's own writes and reads (RAW, WAR, in place), no fusion across
 * them, failures carried like any failed step, views and strides as the
 * kernel sees them, several outputs, and every bad input. Each kernel has a
 * CPU function and CUDA source doing the same, so the suite runs on both
 * backends; the CUDA-only cases (NVRTC errors, graph replay) skip visibly
 * on the CPU backend. The references are computed here in float64. */
#include "common.h"

/* ------------------------------------------------------------ kernels */

/* Offset (elements) of flat row-major index i of the view a. */
static int64_t offset_of(const nd_kernel_arg *a, int64_t i) {
    int64_t off = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
        off += (i % a->shape[d]) * a->strides[d];
        i /= a->shape[d];
    }
    return off;
}

/* The CUDA side's copy of offset_of, put in front of every source below. */
#define CUDA_OFFSET_OF                                                                      \
    "__device__ long long offset_of(const nd_kernel_arg &a, long long i) {\n"              \
    "    long long off = 0;\n"                                                              \
    "    for (int d = a.ndim - 1; d >= 0; d--) {\n"                                         \
    "        off += (i % a.shape[d]) * a.strides[d];\n"                                     \
    "        i /= a.shape[d];\n"                                                            \
    "    }\n"                                                                               \
    "    return off;\n"                                                                     \
    "}\n"

typedef struct {
    int calls;
    int64_t seen_size[2];
} affine_ctx;

/* out = 2 x + y (float64, any views of out's shape). */
static int affine_cpu(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    affine_ctx *c = ctx;
    if (c) c->calls++;
    if (n_in != 2 || n_out != 1 || in[0].dtype != ND_FLOAT64 || out[0].dtype != ND_FLOAT64) return 99;
    const double *x = in[0].data, *y = in[1].data;
    double *o = out[0].data;
    for (int64_t i = 0; i < out[0].size; i++)
        o[offset_of(&out[0], i)] = 2 * x[offset_of(&in[0], i)] + y[offset_of(&in[1], i)];
    return 0;
}
static const char affine_cuda[] = CUDA_OFFSET_OF
    "extern \"C\" __global__ void affine(nd_kernel_arg x, nd_kernel_arg y, nd_kernel_arg out) {\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i >= out.size || out.dtype != ND_FLOAT64) return;\n"
    "    ((double *)out.data)[offset_of(out, i)] =\n"
    "        2 * ((const double *)x.data)[offset_of(x, i)] + ((const double *)y.data)[offset_of(y, i)];\n"
    "}\n";

/* out += 10, in place (reads what is there). */
static int add10_cpu(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    (void)ctx, (void)n_in, (void)in, (void)n_out;
    double *o = out[0].data;
    for (int64_t i = 0; i < out[0].size; i++) o[offset_of(&out[0], i)] += 10;
    return 0;
}
static const char add10_cuda[] = CUDA_OFFSET_OF
    "extern \"C\" __global__ void add10(nd_kernel_arg out) {\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < out.size) ((double *)out.data)[offset_of(out, i)] += 10;\n"
    "}\n";

/* out0 = x + 1, out1 = 3 x (two outputs). */
static int split_cpu(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    (void)ctx, (void)n_in, (void)n_out;
    const double *x = in[0].data;
    for (int64_t i = 0; i < out[0].size; i++) {
        double v = x[offset_of(&in[0], i)];
        ((double *)out[0].data)[offset_of(&out[0], i)] = v + 1;
        ((double *)out[1].data)[offset_of(&out[1], i)] = 3 * v;
    }
    return 0;
}
static const char split_cuda[] = CUDA_OFFSET_OF
    "extern \"C\" __global__ void split(nd_kernel_arg x, nd_kernel_arg a, nd_kernel_arg b) {\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i >= a.size) return;\n"
    "    double v = ((const double *)x.data)[offset_of(x, i)];\n"
    "    ((double *)a.data)[offset_of(a, i)] = v + 1;\n"
    "    ((double *)b.data)[offset_of(b, i)] = 3 * v;\n"
    "}\n";

/* Fails: the CPU function returns 7, the CUDA launch function too. */
static int fail_cpu(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    (void)ctx, (void)n_in, (void)in, (void)n_out, (void)out;
    return 7;
}
static int fail_launch(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out,
                       nd_kernel_launch *l) {
    (void)ctx, (void)n_in, (void)in, (void)n_out, (void)out, (void)l;
    return 7;
}
static const char copy_cuda[] = CUDA_OFFSET_OF
    "extern \"C\" __global__ void copy(nd_kernel_arg x, nd_kernel_arg out) {\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < out.size) ((double *)out.data)[offset_of(out, i)] = ((const double *)x.data)[offset_of(x, i)];\n"
    "}\n";

static nd_user_kernel *make_affine(affine_ctx *ctx) {
    nd_user_kernel *k = nd_user_kernel_new("affine", 2, 1);
    cr_assert_not_null(k, "%s", nd_last_error());
    cr_assert_eq(nd_user_kernel_set_cpu(k, affine_cpu, ctx), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_user_kernel_set_cuda_source(k, affine_cuda, "affine", NULL, NULL, NULL), ND_OK, "%s",
                 nd_last_error());
    return k;
}

static nd_user_kernel *make_add10(void) {
    nd_user_kernel *k = nd_user_kernel_new("add10", 0, 1);
    cr_assert_not_null(k);
    cr_assert_eq(nd_user_kernel_set_cpu(k, add10_cpu, NULL), ND_OK);
    cr_assert_eq(nd_user_kernel_set_cuda_source(k, add10_cuda, "add10", NULL, NULL, NULL), ND_OK);
    return k;
}

/* A new float64 output shaped like a. */
static nd_kernel_output new_like(const nd_array *a) {
    return (nd_kernel_output){NULL, ND_FLOAT64, nd_ndim(a), nd_shape(a)};
}
static nd_kernel_output in_place(nd_array *a) { return (nd_kernel_output){a, ND_FLOAT64, -1, NULL}; }

/* Downloads a float64 array (any view) as row-major values. */
static double *values(nd_array *a) {
    ref_arr *r = ndt_download(a);
    double *v = malloc(sizeof(double) * (size_t)(r->size ? r->size : 1));
    for (int64_t i = 0; i < r->size; i++) v[i] = ref_getd(r, i);
    ref_free(r);
    return v;
}

static void expect_values(nd_array *a, const double *want, int64_t n, const char *what) {
    cr_assert_eq(nd_size(a), n, "%s: size %lld, want %lld", what, (long long)nd_size(a), (long long)n);
    double *got = values(a);
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            cr_expect_eq(got[i], want[i], "%s: element %lld is %.17g, want %.17g", what, (long long)i, got[i], want[i]);
            break;
        }
    free(got);
}

static nd_array *upload(const double *v, int ndim, const int64_t *shape) {
    nd_array *a = nd_from_host(v, ND_FLOAT64, ndim, shape);
    cr_assert_not_null(a, "%s", nd_last_error());
    return a;
}

static double *random_values(ndt_rng *r, int64_t n) {
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (double)ndt_int(r, -1000, 1000) / 8; /* exact in float64 */
    return v;
}

/* ------------------------------------------------------------ results */

NDT_TEST(user_kernels, affine_of_random_inputs) {
    NDT_RNG(r);
    int64_t shape[2] = {37, 29}, n = 37 * 29;
    double *xv = random_values(&r, n), *yv = random_values(&r, n), *want = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) want[i] = 2 * xv[i] + yv[i];
    affine_ctx ctx = {0};
    nd_user_kernel *k = make_affine(&ctx);
    nd_array *x = upload(xv, 2, shape), *y = upload(yv, 2, shape), *out = NULL;
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){x, y}, 1, &o, &out), ND_OK, "%s", nd_last_error());
    cr_assert_not_null(out);
    cr_expect_eq(nd_dtype_of(out), ND_FLOAT64);
    cr_expect_eq(ctx.calls, 0, "recorded lazily: nothing runs before a flush");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    if (!ndt_backend_is_cuda()) cr_expect_eq(ctx.calls, 1);
    expect_values(out, want, n, "2x + y");
    /* The same call again: the cached plan runs it again with new inputs. */
    nd_array *out2 = NULL;
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){y, x}, 1, &o, &out2), ND_OK);
    for (int64_t i = 0; i < n; i++) want[i] = 2 * yv[i] + xv[i];
    expect_values(out2, want, n, "2y + x");
    nd_user_kernel_free(k);
    nd_free(x), nd_free(y), nd_free(out), nd_free(out2);
    free(xv), free(yv), free(want);
}

/* ------------------------------------------------------------ ordering */

NDT_TEST(user_kernels, reads_what_nd_wrote_before_it) {
    /* RAW: nd writes x (a store into a zeros array, then an op), the kernel
     * reads it; an nd op reads the kernel's output. */
    nd_scope_begin();
    double xv[6] = {1, 2, 3, 4, 5, 6}, want[6];
    int64_t shape[1] = {6};
    nd_user_kernel *k = make_affine(NULL);
    nd_array *x = nd_zeros(ND_FLOAT64, 1, shape), *src = upload(xv, 1, shape);
    cr_assert_eq(nd_assign(x, src), ND_OK);
    nd_array *y = nd_mul(src, nd_scalar(-1)), *out = NULL; /* computed, not in memory yet */
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){x, y}, 1, &o, &out), ND_OK, "%s", nd_last_error());
    nd_array *after = nd_add(out, nd_scalar(0.5));
    for (int i = 0; i < 6; i++) want[i] = 2 * xv[i] - xv[i] + 0.5;
    expect_values(after, want, 6, "(2x - x) + 0.5");
    nd_user_kernel_free(k);
    nd_free(x), nd_free(src), nd_free(y), nd_free(out), nd_free(after);
    nd_scope_end();
}

NDT_TEST(user_kernels, in_place_after_earlier_reads) {
    /* WAR: values recorded before an in-place kernel read the old version,
     * even when nd would compute them after it (fused into a later
     * consumer); values recorded after read the new one. */
    nd_scope_begin();
    NDT_RNG(r);
    int64_t shape[2] = {8, 16}, n = 128;
    double *xv = random_values(&r, n), *w_old = malloc(sizeof(double) * n), *w_mix = malloc(sizeof(double) * n);
    double sum_old = 0;
    for (int64_t i = 0; i < n; i++) sum_old += 2 * xv[i];
    nd_array *x = upload(xv, 2, shape);
    nd_array *twice_old = nd_mul(x, nd_scalar(2)); /* lazy, reads x's old version */
    nd_array *sum = nd_sum(twice_old, ND_ALL_AXES);
    nd_user_kernel *k = make_add10();
    nd_kernel_output o = in_place(x);
    cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK, "%s", nd_last_error());
    nd_array *mix = nd_add(twice_old, x); /* 2 old + new */
    for (int64_t i = 0; i < n; i++) {
        w_old[i] = 2 * xv[i];
        w_mix[i] = 2 * xv[i] + xv[i] + 10;
    }
    expect_values(mix, w_mix, n, "2 old x + new x");
    expect_values(twice_old, w_old, n, "2 old x");
    double s = nd_item(sum);
    cr_expect_eq(s, sum_old, "sum of 2 old x: %.17g, want %.17g", s, sum_old);
    for (int64_t i = 0; i < n; i++) w_old[i] = xv[i] + 10;
    expect_values(x, w_old, n, "x + 10");
    /* Twice more: each call sees the version the previous one made. */
    cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK);
    cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK);
    for (int64_t i = 0; i < n; i++) w_old[i] = xv[i] + 30;
    expect_values(x, w_old, n, "x + 30");
    nd_user_kernel_free(k);
    nd_free(x), nd_free(twice_old), nd_free(sum), nd_free(mix);
    free(xv), free(w_old), free(w_mix);
    nd_scope_end();
}

NDT_TEST(user_kernels, nd_write_after_the_kernel_reads) {
    /* WAR the other way: nd overwrites x (a fill, then an in-place add)
     * after the kernel was recorded reading it; the kernel sees the old x. */
    NDT_RNG(r);
    int64_t shape[2] = {16, 9}, n = 144;
    double *xv = random_values(&r, n), *want = malloc(sizeof(double) * n), *w2 = malloc(sizeof(double) * n);
    nd_array *x = upload(xv, 2, shape), *out = NULL;
    nd_user_kernel *k = make_affine(NULL);
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &o, &out), ND_OK);
    cr_assert_eq(nd_fill(x, 5), ND_OK);
    nd_array *x1 = nd_add(x, out);
    cr_assert_eq(nd_assign(x, x1), ND_OK);
    for (int64_t i = 0; i < n; i++) {
        want[i] = 3 * xv[i];
        w2[i] = 5 + 3 * xv[i];
    }
    expect_values(out, want, n, "3 old x");
    expect_values(x, w2, n, "5 + 3 old x");
    nd_user_kernel_free(k);
    nd_free(x), nd_free(out), nd_free(x1);
    free(xv), free(want), free(w2);
}

NDT_TEST(user_kernels, independent_branches_then_a_join) {
    /* Two kernel calls and an nd reduction that do not depend on each
     * other (on CUDA: separate compute streams), then one op reading all. */
    NDT_RNG(r);
    int64_t shape[1] = {3000}, n = 3000;
    double *av = random_values(&r, n), *bv = random_values(&r, n), *want = malloc(sizeof(double) * n);
    nd_array *a = upload(av, 1, shape), *b = upload(bv, 1, shape);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_user_kernel *k = make_affine(NULL);
    nd_kernel_output o = new_like(a);
    nd_array *p = NULL, *q = NULL;
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){a, b}, 1, &o, &p), ND_OK);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){b, a}, 1, &o, &q), ND_OK);
    nd_array *m = nd_max(a, ND_ALL_AXES);
    nd_array *pq = nd_sub(p, q), *j = nd_add(pq, m);
    double mx = av[0];
    for (int64_t i = 0; i < n; i++) mx = av[i] > mx ? av[i] : mx;
    for (int64_t i = 0; i < n; i++) want[i] = (2 * av[i] + bv[i]) - (2 * bv[i] + av[i]) + mx;
    expect_values(j, want, n, "(2a + b) - (2b + a) + max(a)");
    nd_user_kernel_free(k);
    nd_free(a), nd_free(b), nd_free(p), nd_free(q), nd_free(m), nd_free(pq), nd_free(j);
    free(av), free(bv), free(want);
}

NDT_TEST(user_kernels, in_place_into_a_view) {
    /* The kernel writes column 1 of a 4x3 matrix through its view (stride
     * 3); the rest keeps what an earlier nd store wrote. */
    double mv[12], want[12];
    for (int i = 0; i < 12; i++) mv[i] = i;
    int64_t shape[2] = {4, 3};
    nd_array *m = nd_zeros(ND_FLOAT64, 2, shape), *src = upload(mv, 2, shape);
    cr_assert_eq(nd_assign(m, src), ND_OK);
    nd_array *col = nd_view(m, ":, 1");
    cr_assert_not_null(col, "%s", nd_last_error());
    nd_user_kernel *k = make_add10();
    nd_kernel_output o = in_place(col);
    cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++) want[i] = mv[i] + (i % 3 == 1 ? 10 : 0);
    expect_values(m, want, 12, "column 1 + 10");
    nd_user_kernel_free(k);
    nd_free(m), nd_free(src), nd_free(col);
}

NDT_TEST(user_kernels, never_fused_across) {
    /* sin -> kernel -> cos + 1: the kernel is its own step, its input is
     * written to memory first, and cos + 1 is one fused kernel after it:
     * three kernels; without the user kernel, one. */
    nd_scope_begin();
    double xv[64], want[64];
    for (int i = 0; i < 64; i++) xv[i] = i * 0.1;
    int64_t shape[1] = {64};
    nd_array *x = upload(xv, 1, shape);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_user_kernel *k = make_affine(NULL);
    nd_stats before, after;
    nd_get_stats(&before);
    nd_array *s = nd_sin(x), *out = NULL;
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){s, x}, 1, &o, &out), ND_OK);
    nd_free(s); /* only the kernel needs it: nd computes it into a temporary */
    nd_array *c = nd_cos(out), *r = nd_add(c, nd_scalar(1));
    nd_free(c);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 3, "sin, the user kernel, cos+1: %llu kernels",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    for (int i = 0; i < 64; i++) want[i] = cos(2 * sin(xv[i]) + xv[i]) + 1;
    double *got = values(r);
    for (int i = 0; i < 64; i++) cr_expect(fabs(got[i] - want[i]) <= 1e-12, "element %d: %.17g vs %.17g", i, got[i], want[i]);
    free(got);
    nd_user_kernel_free(k);
    nd_free(x), nd_free(out), nd_free(r);
    nd_scope_end();
}

/* ------------------------------------------------------------ several outputs */

NDT_TEST(user_kernels, two_outputs_one_run) {
    double xv[10], w0[10], w1[10];
    for (int i = 0; i < 10; i++) {
        xv[i] = i - 4.5;
        w0[i] = xv[i] + 1;
        w1[i] = 3 * xv[i];
    }
    int64_t shape[1] = {10};
    nd_array *x = upload(xv, 1, shape);
    nd_user_kernel *k = nd_user_kernel_new("split", 1, 2);
    cr_assert_eq(nd_user_kernel_set_cpu(k, split_cpu, NULL), ND_OK);
    cr_assert_eq(nd_user_kernel_set_cuda_source(k, split_cuda, "split", NULL, NULL, NULL), ND_OK);
    nd_kernel_output o[2] = {new_like(x), new_like(x)};
    nd_array *res[2] = {NULL, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 2, o, res), ND_OK, "%s", nd_last_error());
    expect_values(res[0], w0, 10, "x + 1");
    expect_values(res[1], w1, 10, "3 x");
    /* Only the second output kept: the run still writes both. */
    nd_array *r2[2] = {NULL, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 2, o, r2), ND_OK);
    nd_free(r2[0]);
    expect_values(r2[1], w1, 10, "3 x, first output freed");
    /* Every output freed before the flush: the call is dropped like any
     * value no one can see. */
    nd_stats before, after;
    cr_assert_eq(nd_sync(), ND_OK);
    nd_get_stats(&before);
    nd_array *r3[2] = {NULL, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 2, o, r3), ND_OK);
    nd_free(r3[0]), nd_free(r3[1]);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_get_stats(&after);
    cr_expect_eq(NDT_KERNELS(after), NDT_KERNELS(before), "a dead call ran");
    nd_user_kernel_free(k);
    nd_free(x), nd_free(res[0]), nd_free(res[1]), nd_free(r2[1]);
}

/* ------------------------------------------------------------ views */

NDT_TEST(user_kernels, strided_inputs_as_views) {
    /* Inputs are passed as the views they are: a transpose, a reversed
     * slice with a step, a broadcast row (stride 0). */
    NDT_RNG(r);
    int64_t ms[2] = {5, 7}, vs[1] = {14}, n = 35;
    double *mv = random_values(&r, n), *vv = random_values(&r, 14), *want = malloc(sizeof(double) * n);
    nd_array *m = upload(mv, 2, ms), *v = upload(vv, 1, vs);
    nd_array *t = nd_transpose(m, NULL);          /* 7x5, strides (1, 7) */
    nd_array *rev = nd_view(v, "::-2");           /* 7 elements, stride -2 */
    nd_array *row = nd_reshape(rev, ND_SHAPE(7, 1));
    int64_t bs[2] = {7, 5};
    nd_array *b = nd_broadcast_to(row, 2, bs);    /* strides (-2, 0) */
    cr_assert(t && rev && row && b, "%s", nd_last_error());
    nd_user_kernel *k = make_affine(NULL);
    nd_kernel_output o = new_like(t);
    nd_array *out = NULL;
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){t, b}, 1, &o, &out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 5; j++) want[i * 5 + j] = 2 * mv[j * 7 + i] + vv[13 - 2 * i];
    expect_values(out, want, n, "2 m.T + v[::-2][:, None]");
    const int64_t *st = nd_strides(out);
    cr_expect(st[0] == 5 && st[1] == 1, "a new output is row-major contiguous");
    nd_user_kernel_free(k);
    nd_free(m), nd_free(v), nd_free(t), nd_free(rev), nd_free(row), nd_free(b), nd_free(out);
    free(mv), free(vv), free(want);
}

NDT_TEST(user_kernels, zero_d_and_empty) {
    nd_scope_begin();
    int64_t shape0[1] = {0};
    nd_user_kernel *k = make_affine(NULL);
    /* A weak scalar input is a 0-d float64 array. */
    nd_array *x = nd_full(ND_FLOAT64, 0, NULL, 1.5), *out = NULL;
    nd_kernel_output o = {NULL, ND_FLOAT64, 0, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){x, nd_scalar(0.25)}, 1, &o, &out), ND_OK, "%s",
                 nd_last_error());
    double v = nd_item(out);
    cr_expect_eq(v, 3.25);
    nd_array *e = nd_zeros(ND_FLOAT64, 1, shape0), *eo = NULL;
    nd_kernel_output oe = new_like(e);
    cr_assert_eq(nd_user_kernel_call(k, 2, (nd_array *[]){e, e}, 1, &oe, &eo), ND_OK);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_size(eo), 0);
    nd_user_kernel_free(k);
    nd_free(x), nd_free(out), nd_free(e), nd_free(eo);
    nd_scope_end();
}

/* ------------------------------------------------------------ failures */

NDT_TEST(user_kernels, failure_reaches_outputs_and_their_consumers_only) {
    nd_scope_begin();
    double xv[4] = {1, 2, 3, 4}, w[3] = {4, 6, 8};
    int64_t shape[1] = {4};
    nd_array *x = upload(xv, 1, shape);
    nd_user_kernel *k = nd_user_kernel_new("fails", 1, 1);
    cr_assert_eq(nd_user_kernel_set_cpu(k, fail_cpu, NULL), ND_OK);
    cr_assert_eq(nd_user_kernel_set_cuda_source(k, copy_cuda, "copy", NULL, fail_launch, NULL), ND_OK);
    nd_kernel_output o = new_like(x);
    nd_array *out = NULL;
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, &out), ND_OK);
    nd_array *derived = nd_add(out, nd_scalar(1));
    /* Independent of the kernel (and of another shape: a kernel merged
     * with one that reads the failed output would be skipped with it). */
    nd_array *tail = nd_view(x, "1:"), *other = nd_mul(tail, nd_scalar(2));
    /* In place too: y keeps failing after the kernel that failed to write it. */
    nd_array *y = nd_copy(x);
    nd_kernel_output oy = in_place(y);
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &oy, NULL), ND_OK);
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_BACKEND, "nd_sync: %s", nd_status_name(st));
    cr_expect(strstr(nd_last_error(), "user kernel 'fails'") && strstr(nd_last_error(), "returned 7"), "message: %s",
              nd_last_error());
    double buf[4];
    cr_expect_eq(nd_to_host(out, buf, sizeof buf), ND_ERR_BACKEND);
    cr_expect(strstr(nd_last_error(), "fails"), "read of the output names the kernel: %s", nd_last_error());
    cr_expect_eq(nd_to_host(derived, buf, sizeof buf), ND_ERR_BACKEND);
    cr_expect_eq(nd_to_host(y, buf, sizeof buf), ND_ERR_BACKEND);
    if (!ndt_backend_is_cuda()) {
        expect_values(other, w, 3, "2 x[1:] beside the failure");
    } else {
        /* CUDA runs a flush as one plan: a failure inside it fails every
         * output of the flush (docs/internals.md, "Failures"). */
        cr_expect_eq(nd_to_host(other, buf, 3 * sizeof(double)), ND_ERR_BACKEND);
    }
    nd_user_kernel_free(k);
    nd_free(x), nd_free(out), nd_free(derived), nd_free(other), nd_free(y), nd_free(tail);
    nd_scope_end();
}

NDT_TEST(user_kernels, failed_input_fails_every_output) {
    /* An input that carries a failure: both outputs carry it, and the
     * kernel does not make them valid. */
    double xv[3] = {1, 2, 3};
    int64_t shape[1] = {3};
    nd_array *x = upload(xv, 1, shape);
    nd_user_kernel *f = nd_user_kernel_new("fails", 1, 1);
    nd_user_kernel_set_cpu(f, fail_cpu, NULL);
    nd_user_kernel_set_cuda_source(f, copy_cuda, "copy", NULL, fail_launch, NULL);
    nd_kernel_output o = new_like(x);
    nd_array *bad = NULL;
    cr_assert_eq(nd_user_kernel_call(f, 1, (nd_array *[]){x}, 1, &o, &bad), ND_OK);
    cr_expect_eq(nd_sync(), ND_ERR_BACKEND);
    nd_clear_error();
    nd_user_kernel *k = nd_user_kernel_new("split", 1, 2);
    nd_user_kernel_set_cpu(k, split_cpu, NULL);
    nd_user_kernel_set_cuda_source(k, split_cuda, "split", NULL, NULL, NULL);
    nd_kernel_output o2[2] = {new_like(x), new_like(x)};
    nd_array *res[2] = {NULL, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){bad}, 2, o2, res), ND_OK);
    double buf[3];
    cr_expect_eq(nd_to_host(res[0], buf, sizeof buf), ND_ERR_BACKEND);
    cr_expect_eq(nd_to_host(res[1], buf, sizeof buf), ND_ERR_BACKEND, "the second output too");
    nd_user_kernel_free(f), nd_user_kernel_free(k);
    nd_free(x), nd_free(bad), nd_free(res[0]), nd_free(res[1]);
}

/* ------------------------------------------------------------ bad input */

static void expect_error(nd_status got, nd_status want, const char *needle, const char *what) {
    cr_expect_eq(got, want, "%s: %s (%s)", what, nd_status_name(got), nd_last_error());
    cr_expect(strstr(nd_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, nd_last_error(), needle);
}

NDT_TEST(user_kernels, bad_declarations) {
    cr_expect_null(nd_user_kernel_new(NULL, 1, 1));
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    cr_expect_null(nd_user_kernel_new("has space", 1, 1));
    expect_error(nd_last_status(), ND_ERR_ARG, "nd_user_kernel_new: name \"has space\"", "bad name");
    cr_expect_null(nd_user_kernel_new("", 1, 1));
    cr_expect_null(nd_user_kernel_new("k", -1, 1));
    expect_error(nd_last_status(), ND_ERR_ARG, "-1 inputs and 1 outputs", "negative n_in");
    cr_expect_null(nd_user_kernel_new("k", 1, 0));
    cr_expect_null(nd_user_kernel_new("k", 40, 30));
    expect_error(nd_last_status(), ND_ERR_ARG, "n_in + n_out <= 64", "too many");
    nd_clear_error(); /* a NULL argument after a failed call keeps that call's error */
    expect_error(nd_user_kernel_set_cpu(NULL, affine_cpu, NULL), ND_ERR_ARG, "nd_user_kernel_set_cpu", "NULL k");
    nd_user_kernel *k = nd_user_kernel_new("k", 1, 1);
    expect_error(nd_user_kernel_set_cpu(k, NULL, NULL), ND_ERR_ARG, "fn is NULL", "NULL fn");
    expect_error(nd_user_kernel_set_cuda_source(k, NULL, "e", NULL, NULL, NULL), ND_ERR_ARG, "src is NULL", "NULL src");
    expect_error(nd_user_kernel_set_cuda_source(k, "x", "", NULL, NULL, NULL), ND_ERR_ARG, "entry is empty", "empty entry");
    nd_kernel_launch l = {{1, 1, 1}, {32, 1, 1}, 0};
    expect_error(nd_user_kernel_set_cuda_source(k, "x", "e", &l, fail_launch, NULL), ND_ERR_ARG,
                 "both launch and launch_fn", "two launches");
    expect_error(nd_user_kernel_set_cuda_function(k, NULL, NULL, NULL, NULL), ND_ERR_ARG, "func is NULL", "NULL func");
    nd_user_kernel_free(k);
    nd_user_kernel_free(NULL);
}

NDT_TEST(user_kernels, bad_calls_record_nothing) {
    nd_scope_begin();
    int64_t shape[1] = {4}, other[1] = {5};
    nd_array *x = nd_zeros(ND_FLOAT64, 1, shape), *res[2] = {x, x};
    nd_user_kernel *k = make_affine(NULL);
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats before, after;
    nd_get_stats(&before);
    expect_error(nd_user_kernel_call(NULL, 2, (nd_array *[]){x, x}, 1, &o, res), ND_ERR_ARG, "nd_user_kernel_call",
                 "NULL kernel");
    expect_error(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, res), ND_ERR_ARG,
                 "kernel 'affine' was declared with 2 inputs and 1 outputs but is called with 1 and 1", "arity");
    cr_expect_null(res[0], "results cleared on error");
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 2, (nd_kernel_output[]){o, o}, res), ND_ERR_ARG,
                 "called with 2 and 2", "output arity");
    expect_error(nd_user_kernel_call(k, 2, NULL, 1, &o, res), ND_ERR_ARG, "inputs is NULL", "NULL inputs");
    nd_clear_error();
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, NULL}, 1, &o, res), ND_ERR_ARG, "inputs[1]", "NULL input");
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, NULL, res), ND_ERR_ARG, "outputs is NULL",
                 "NULL outputs");
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &o, NULL), ND_ERR_ARG, "results is NULL",
                 "NULL results");
    nd_kernel_output bad_shape = {NULL, ND_FLOAT64, 1, (const int64_t[]){-3}};
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &bad_shape, res), ND_ERR_ARG,
                 "negative dimension", "negative shape");
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &bad_shape, res), ND_ERR_ARG,
                 "nd_user_kernel_call: outputs[0]: ", "the message names the output");
    nd_kernel_output bad_dtype = {NULL, (nd_dtype)99, 1, shape};
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &bad_dtype, res), ND_ERR_DTYPE, "dtype 99",
                 "bad dtype");
    /* In place: the declared shape or dtype differs from the array's. */
    nd_kernel_output wrong_shape = {x, ND_FLOAT64, 1, other};
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &wrong_shape, res), ND_ERR_SHAPE,
                 "outputs[0].array has shape (4,) but outputs[0] declares (5,)", "output shape mismatch");
    nd_kernel_output wrong_dtype = {x, ND_FLOAT32, 1, shape};
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &wrong_dtype, res), ND_ERR_DTYPE,
                 "has dtype float64 but outputs[0] declares float32", "output dtype mismatch");
    nd_array *first = nd_view(x, "0:1"), *b = nd_broadcast_to(first, 1, shape);
    nd_kernel_output ro = in_place(b);
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &ro, res), ND_ERR_ARG, "read-only broadcast view",
                 "read-only output");
    nd_kernel_output weak = {nd_scalar(1), ND_FLOAT64, -1, NULL};
    expect_error(nd_user_kernel_call(k, 2, (nd_array *[]){x, x}, 1, &weak, res), ND_ERR_ARG, "weak scalar",
                 "weak output");
    nd_user_kernel *k2 = nd_user_kernel_new("two", 0, 2);
    nd_user_kernel_set_cpu(k2, add10_cpu, NULL);
    nd_user_kernel_set_cuda_source(k2, add10_cuda, "add10", NULL, NULL, NULL);
    nd_array *half = nd_view(x, "1:");
    nd_kernel_output alias[2] = {in_place(x), in_place(half)};
    expect_error(nd_user_kernel_call(k2, 0, NULL, 2, alias, res), ND_ERR_ARG,
                 "outputs[0] and outputs[1] of kernel 'two' share one buffer", "aliased outputs");
    nd_get_stats(&after);
    cr_expect_eq(after.nodes_recorded, before.nodes_recorded, "a failed call recorded something");
    cr_expect_eq(nd_sync(), ND_OK, "nothing pending fails: %s", nd_last_error());
    nd_user_kernel_free(k), nd_user_kernel_free(k2);
    nd_free(x), nd_free(b), nd_free(half), nd_free(first);
    nd_scope_end();
}

NDT_TEST(user_kernels, wrong_backend_freed_and_fixed_kernels) {
    nd_scope_begin();
    int64_t shape[1] = {4};
    nd_array *x = nd_zeros(ND_FLOAT64, 1, shape), *out = NULL;
    nd_kernel_output o = new_like(x);
    /* Only the other backend's implementation. */
    nd_user_kernel *k = nd_user_kernel_new("onesided", 1, 1);
    int cuda = ndt_backend_is_cuda();
    if (cuda)
        nd_user_kernel_set_cpu(k, affine_cpu, NULL);
    else
        nd_user_kernel_set_cuda_source(k, copy_cuda, "copy", NULL, NULL, NULL);
    expect_error(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, &out), ND_ERR_UNSUPPORTED,
                 cuda ? "no implementation for the CUDA backend in use" : "no implementation for the CPU backend in use",
                 "wrong backend");
    cr_expect_null(out);
    /* With both, it runs; afterwards its implementations are fixed. */
    if (cuda)
        nd_user_kernel_set_cuda_source(k, copy_cuda, "copy", NULL, NULL, NULL);
    else
        nd_user_kernel_set_cpu(k, add10_cpu, NULL);
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, &out), ND_OK, "%s", nd_last_error());
    expect_error(nd_user_kernel_set_cpu(k, affine_cpu, NULL), ND_ERR_STATE, "has already been called", "set after call");
    /* Freed by the program before its call ran: the call still runs. */
    nd_user_kernel_free(k);
    expect_error(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, &out), ND_ERR_ARG, "not a live user kernel",
                 "freed kernel");
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(x), nd_free(out);
    nd_scope_end(); /* also the result of the call that ran: the failed call after it cleared out */
}

/* ------------------------------------------------------------ CUDA only */

#define NEEDS_CUDA()                                                                                          \
    do {                                                                                                      \
        if (!ndt_backend_is_cuda()) cr_skip_test("needs the CUDA backend (run with ND_BACKEND=cuda on a GPU)"); \
    } while (0)

NDT_TEST(user_kernels, cuda_compile_error_names_the_line) {
    NEEDS_CUDA();
    int64_t shape[1] = {4};
    nd_array *x = nd_zeros(ND_FLOAT64, 1, shape), *out = NULL, *one_s = nd_scalar(1), *ok = nd_add(x, one_s);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error()); /* ok exists before the failing flush */
    nd_user_kernel *k = nd_user_kernel_new("broken", 1, 1);
    nd_user_kernel_set_cuda_source(k,
                                   "extern \"C\" __global__ void broken(nd_kernel_arg x, nd_kernel_arg y) {\n"
                                   "    undeclared_thing = 1;\n"
                                   "}\n",
                                   "broken", NULL, NULL, NULL);
    nd_kernel_output o = new_like(x);
    cr_assert_eq(nd_user_kernel_call(k, 1, (nd_array *[]){x}, 1, &o, &out), ND_OK);
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_COMPILE, "%s: %s", nd_status_name(st), nd_last_error());
    cr_expect(strstr(nd_last_error(), "broken.cu(2)") && strstr(nd_last_error(), "undeclared_thing"),
              "the compiler's message with the source's own line: %s", nd_last_error());
    double buf[4];
    cr_expect_eq(nd_to_host(out, buf, sizeof buf), ND_ERR_COMPILE);
    /* A source without the entry named. */
    nd_user_kernel *k2 = nd_user_kernel_new("noentry", 1, 1);
    nd_user_kernel_set_cuda_source(k2, copy_cuda, "nosuch", NULL, NULL, NULL);
    nd_array *out2 = NULL;
    cr_assert_eq(nd_user_kernel_call(k2, 1, (nd_array *[]){x}, 1, &o, &out2), ND_OK);
    cr_expect_eq(nd_sync(), ND_ERR_COMPILE);
    cr_expect(strstr(nd_last_error(), "no kernel named 'nosuch'"), "%s", nd_last_error());
    nd_clear_error();
    double one[4] = {1, 1, 1, 1};
    expect_values(ok, one, 4, "x + 1, made before the failed compiles");
    nd_user_kernel_free(k), nd_user_kernel_free(k2);
    nd_free(x), nd_free(out), nd_free(out2), nd_free(ok), nd_free(one_s);
}

static int launch_256(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out,
                      nd_kernel_launch *l) {
    (void)n_in, (void)in, (void)n_out;
    (*(int *)ctx)++;
    l->block[0] = 128;
    l->grid[0] = (unsigned)((out[0].size + 127) / 128);
    return 0;
}

NDT_TEST(user_kernels, cuda_graph_replay_of_a_loop) {
    /* The same flush (an nd op, the kernel in place, an nd op) again and
     * again: from its second run the plan is a captured CUDA graph with
     * the user kernel inside; every run must still see the last one's x. */
    NEEDS_CUDA();
    int64_t n = 100000, shape[1] = {100000};
    double *xv = malloc(sizeof(double) * n), *want = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) xv[i] = (double)(i % 97);
    nd_array *x = upload(xv, 1, shape);
    cr_assert_eq(nd_sync(), ND_OK);
    int launches = 0;
    nd_user_kernel *k = nd_user_kernel_new("add10", 0, 1);
    cr_assert_eq(nd_user_kernel_set_cuda_source(k, add10_cuda, "add10", NULL, launch_256, &launches), ND_OK);
    nd_kernel_output o = in_place(x);
    for (int it = 0; it < 6; it++) {
        nd_array *half = nd_scalar(0.5), *y = nd_mul(x, half); /* y = x / 2 */
        cr_assert_eq(nd_assign(x, y), ND_OK);
        cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK);
        nd_array *one = nd_scalar(1), *z = nd_add(x, one);
        cr_assert_eq(nd_assign(x, z), ND_OK);
        nd_free(y), nd_free(z), nd_free(half), nd_free(one);
        cr_assert_eq(nd_sync(), ND_OK, "iteration %d: %s", it, nd_last_error());
        for (int64_t i = 0; i < n; i++) xv[i] = xv[i] * 0.5 + 10 + 1;
    }
    for (int64_t i = 0; i < n; i++) want[i] = xv[i];
    expect_values(x, want, n, "six sweeps");
    cr_expect(launches >= 1 && launches < 6, "the launch function ran %d times: graphs replay the launch", launches);
    nd_user_kernel_free(k);
    nd_free(x);
    free(xv), free(want);
}
