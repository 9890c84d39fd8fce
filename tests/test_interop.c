/* nd inside a program: nd_wrap (the program's memory used in place, views,
 * release protocol), nd_data/nd_data_done (pointers handed out, read-write
 * seen by later ops, misuse), DLPack both ways (fields, deleters, read-only,
 * byte_offset, NULL strides, dtypes nd cannot hold), nd_stats.bytes_copied.
 * Expected values are computed here in float64 from the inputs. The CUDA
 * cases (device pointers used directly, host wraps staged and written
 * back) skip visibly on the CPU backend. */
#include "common.h"
#include "common/fault.h"

/* ------------------------------------------------------------- helpers */

/* a * m + c, lazily (weak scalars: the dtype stays a's). */
static nd_array *affine(nd_array *a, double m, double c) {
    nd_array *sm = nd_scalar(m), *sc = nd_scalar(c);
    nd_array *t = nd_mul(a, sm);
    nd_array *r = nd_add(t, sc);
    nd_free(sm);
    nd_free(sc);
    nd_free(t);
    return r;
}

/* x = x * m + c in place. */
static void affine_in_place(nd_array *x, double m, double c) {
    nd_array *r = affine(x, m, c);
    cr_assert(r, "%s", nd_last_error());
    cr_assert_eq(nd_assign(x, r), ND_OK, "%s", nd_last_error());
    nd_free(r);
}

static void fill_random(ndt_rng *r, double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = ndt_uniform(r, -4, 4);
}

static void read_f64(nd_array *a, double *out, int64_t n) {
    cr_assert_eq(nd_to_host(a, out, (size_t)n * sizeof *out), ND_OK, "%s", nd_last_error());
}

typedef struct {
    int calls;
    void *seen;
} release_log;

static void log_release(void *ctx) {
    release_log *l = ctx;
    l->calls++;
}

static uint64_t bytes_copied(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.bytes_copied;
}

/* ------------------------------------------------------------- nd_wrap */

NDT_TEST(interop, wrap_host_is_used_in_place) {
    NDT_RNG(r);
    double mem[3 * 5], orig[15], got[15];
    fill_random(&r, mem, 15);
    memcpy(orig, mem, sizeof mem);
    release_log log = {0};
    nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(3, 5), NULL, log_release, &log);
    cr_assert(w, "%s", nd_last_error());
    cr_expect_eq(nd_strides(w)[0], 5);
    /* A lazy result of the wrap, then the wrap updated in place. */
    nd_array *y = affine(w, 3.0, -1.0);
    affine_in_place(w, 2.0, 0.5);
    uint64_t copied = bytes_copied();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 15; i++) cr_expect_eq(mem[i], orig[i] * 2.0 + 0.5, "element %d in place", i);
    read_f64(y, got, 15);
    for (int i = 0; i < 15; i++) cr_expect_eq(got[i], orig[i] * 3.0 - 1.0, "y[%d] read the old value", i);
    if (!ndt_backend_is_cuda() && ndt_one_device("bytes copied: split, the wrap is scattered into pieces and gathered back"))
        cr_expect_eq(bytes_copied(), copied, "the CPU backend copies nothing");
    /* The program writes between syncs; nd sees it. */
    mem[4] = 100.0;
    nd_array *s = nd_sum(w, ND_ALL_AXES);
    double want = 0;
    for (int i = 0; i < 15; i++) want += mem[i];
    cr_expect_float_eq(nd_item(s), want, 1e-12);
    nd_free(s);
    nd_free(y);
    cr_expect_eq(log.calls, 0);
    nd_free(w);
    cr_expect_eq(log.calls, 1, "release runs once when the last handle goes");
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

NDT_TEST(interop, wrap_strided_and_reversed_views) {
    NDT_RNG(r);
    /* A 3x4 view of every other row and column of a 6x8 block, starting at
     * [1, 1]; the gaps must not change. */
    double mem[48], orig[48];
    fill_random(&r, mem, 48);
    memcpy(orig, mem, sizeof mem);
    nd_array *w = nd_wrap(mem + 9, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(3, 4), (const int64_t[]){16, 2}, NULL, NULL);
    cr_assert(w, "%s", nd_last_error());
    double got[12];
    read_f64(w, got, 12);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) cr_expect_eq(got[i * 4 + j], orig[9 + 16 * i + 2 * j]);
    affine_in_place(w, -1.0, 7.0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int k = 0; k < 48; k++) {
        int in = k >= 9 && (k - 9) % 16 % 2 == 0 && (k - 9) / 16 < 3 && (k - 9) % 16 < 8;
        cr_expect_eq(mem[k], in ? 7.0 - orig[k] : orig[k], "element %d (%s)", k, in ? "in the view" : "a gap");
    }
    nd_free(w);

    /* Negative strides: ptr is element [0, 0], the last of the block. */
    double rev[6] = {0, 1, 2, 3, 4, 5};
    nd_array *v = nd_wrap(rev + 5, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, 3), (const int64_t[]){-3, -1}, NULL, NULL);
    cr_assert(v, "%s", nd_last_error());
    read_f64(v, got, 6);
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], 5.0 - i);
    nd_array *row = nd_view(v, "0, :"); /* 5 4 3 */
    cr_assert(row);
    cr_assert_eq(nd_fill(row, -1.0), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    const double want[6] = {0, 1, 2, -1, -1, -1};
    for (int i = 0; i < 6; i++) cr_expect_eq(rev[i], want[i], "rev[%d]", i);
    nd_free(row);
    nd_free(v);
}

NDT_TEST(interop, wrap_write_is_kept_after_the_handle_goes) {
    float mem[1000];
    for (int i = 0; i < 1000; i++) mem[i] = (float)i;
    release_log log = {0};
    nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT32, ND_SHAPE(1000), NULL, log_release, &log);
    cr_assert(w);
    affine_in_place(w, 0.5, 1.0);
    nd_free(w); /* before the write ran: it still must land */
    cr_expect_eq(log.calls, 0, "a pending write still needs the memory");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(log.calls, 1, "released once the write ran");
    for (int i = 0; i < 1000; i++) cr_expect_eq(mem[i], (float)i * 0.5f + 1.0f, "mem[%d]", i);
}

NDT_TEST(interop, wrap_release_at_shutdown_and_use_after) {
    int32_t mem[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    release_log log = {0};
    nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_INT32, ND_SHAPE(8), NULL, log_release, &log);
    cr_assert(w);
    ndt_allow_live_handles(); /* w, alive across the restart on purpose */
    ndt_restart(NULL);
    cr_expect_eq(log.calls, 1, "nd_shutdown gives wrapped memory back");
    nd_array *s = nd_sum(w, ND_ALL_AXES);
    cr_expect_null(s);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_sum");
    nd_free(w);
    cr_expect_eq(log.calls, 1, "and only once");

    /* After the release by nd_free: the freed handle is rejected. */
    nd_array *w2 = nd_wrap(mem, ND_HOST_MEMORY, ND_INT32, ND_SHAPE(8), NULL, log_release, &log);
    cr_assert(w2);
    nd_free(w2);
    cr_expect_eq(log.calls, 2);
    cr_expect_null(nd_data(w2, ND_HOST_MEMORY, ND_DATA_READ));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_data");
}

NDT_TEST(interop, wrap_views_keep_it_alive) {
    double mem[4] = {1, 2, 3, 4};
    release_log log = {0};
    nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, 2), NULL, log_release, &log);
    nd_array *t = nd_transpose(w, NULL);
    nd_free(w);
    cr_expect_eq(log.calls, 0, "a view still reaches the memory");
    double got[4];
    read_f64(t, got, 4);
    cr_expect(got[1] == 3 && got[2] == 2);
    nd_free(t);
    cr_expect_eq(log.calls, 1);
}

NDT_TEST(interop, wrap_bad_input) {
    double mem[8] = {0};
    release_log log = {0};
    cr_expect_null(nd_wrap(NULL, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(8), NULL, log_release, &log));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    cr_expect_null(nd_wrap((char *)mem + 4, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2), NULL, log_release, &log));
    cr_expect(strstr(nd_last_error(), "aligned"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    cr_expect_null(nd_wrap(mem, ND_HOST_MEMORY, (nd_dtype)99, ND_SHAPE(2), NULL, log_release, &log));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_wrap");
    cr_expect_null(nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, 9, (const int64_t[9]){1}, NULL, log_release, &log));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    cr_expect_null(nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, -1), NULL, log_release, &log));
    NDT_EXPECT_ERR2(ND_ERR_ARG, ND_ERR_SHAPE, "nd_wrap");
    /* Overlapping writable strides: a stride-0 axis, rows that overlap. */
    cr_expect_null(nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, 4), (const int64_t[]){0, 1}, NULL, NULL));
    cr_expect(strstr(nd_last_error(), "overlap"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    cr_expect_null(nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, 4), (const int64_t[]){2, 1}, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    /* Size-1 axes may have any stride; interleaved axes do not overlap. */
    nd_array *ok = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(1, 4, 2), (const int64_t[]){0, 1, 4}, NULL, NULL);
    cr_expect(ok, "%s", nd_last_error());
    nd_free(ok);
    nd_memory bogus = {(nd_memory_kind)7, 0};
    cr_expect_null(nd_wrap(mem, bogus, ND_FLOAT64, ND_SHAPE(8), NULL, log_release, &log));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_wrap");
    if (!ndt_backend_is_cuda()) {
        cr_expect_null(nd_wrap(mem, ND_CUDA_MEMORY(0), ND_FLOAT64, ND_SHAPE(8), NULL, log_release, &log));
        cr_expect(strstr(nd_last_error(), "cpu backend"), "%s", nd_last_error());
        NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_wrap");
    } else {
        cr_expect_null(nd_wrap(mem, ND_CUDA_MEMORY(77), ND_FLOAT64, ND_SHAPE(8), NULL, log_release, &log));
        NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_wrap");
    }
    cr_expect_eq(log.calls, 0, "a failed wrap never releases the program's memory");
}

NDT_TEST(interop, wrap_out_of_host_memory_leaves_the_memory_alone) {
    double mem[6] = {1, 2, 3, 4, 5, 6};
    int failed = 0;
    for (int64_t n = 1; n <= 8; n++) {
        release_log log = {0};
        nd_fault_arm(ND_FAULT_HOST_ALLOC, n, 0);
        nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT64, ND_SHAPE(2, 3), NULL, log_release, &log);
        nd_fault_disarm();
        if (!w) {
            failed++;
            NDT_EXPECT_ERR(ND_ERR_OOM, "nd_wrap");
            cr_expect_eq(log.calls, 0, "a failed wrap never releases (allocation %lld)", (long long)n);
            continue;
        }
        nd_array *s = nd_sum(w, ND_ALL_AXES);
        cr_expect_eq(nd_item(s), 21.0);
        nd_free(s);
        nd_free(w);
        cr_expect_eq(log.calls, 1);
    }
    cr_expect_gt(failed, 0, "some allocation of nd_wrap was failed");
}

/* ------------------------------------------------------------- nd_data */

NDT_TEST(interop, data_read_runs_what_it_needs) {
    NDT_RNG(r);
    double in[24];
    fill_random(&r, in, 24);
    nd_array *x = nd_from_host(in, ND_FLOAT64, ND_SHAPE(4, 6));
    nd_array *y = affine(x, 2.0, 1.0);
    const double *p = nd_data(y, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(p, "%s", nd_last_error());
    for (int i = 0; i < 24; i++) cr_expect_eq(p[i], in[i] * 2.0 + 1.0, "p[%d]", i);
    /* Two reads at once nest. */
    const double *q = nd_data(y, ND_HOST_MEMORY, ND_DATA_READ);
    cr_expect_eq(p, q);
    cr_expect_eq(nd_data_done(y), ND_OK);
    cr_expect_eq(nd_data_done(y), ND_OK);
    cr_expect_eq(nd_data_done(y), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_data_done");
    cr_expect_eq(nd_data_done(x), ND_ERR_STATE, "done without data");
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_data_done");
    cr_expect_eq(nd_data_done(NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_data_done");

    /* A view: the pointer is its element [0, 0], its strides nd_strides. */
    nd_array *t = nd_transpose(x, NULL);
    nd_array *v = nd_view(t, "1:, ::2");
    const double *pv = nd_data(v, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(pv, "%s", nd_last_error());
    const int64_t *sv = nd_strides(v);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 2; j++)
            cr_expect_eq(pv[i * sv[0] + j * sv[1]], in[(j * 2) * 6 + (i + 1)], "v[%d, %d]", i, j);
    cr_expect_eq(nd_data_done(v), ND_OK);
    nd_free(v);
    nd_free(t);
    nd_free(x);
    nd_free(y);
}

NDT_TEST(interop, data_of_empty_and_0d_arrays) {
    nd_array *e = nd_zeros(ND_FLOAT32, ND_SHAPE(0, 3));
    double none = 0;
    nd_array *h = nd_from_host(&none, ND_FLOAT64, ND_SHAPE(0));
    cr_expect_not_null(nd_data(e, ND_HOST_MEMORY, ND_DATA_READ_WRITE), "%s", nd_last_error());
    cr_expect_not_null(nd_data(h, ND_HOST_MEMORY, ND_DATA_READ), "%s", nd_last_error());
    cr_expect_eq(nd_data_done(e), ND_OK);
    cr_expect_eq(nd_data_done(h), ND_OK);
    nd_array *z = nd_full(ND_INT16, ND_SCALAR_SHAPE, -7);
    int16_t *p = nd_data(z, ND_HOST_MEMORY, ND_DATA_READ_WRITE);
    cr_assert(p, "%s", nd_last_error());
    cr_expect_eq(*p, -7);
    *p = 12;
    cr_expect_eq(nd_data_done(z), ND_OK);
    cr_expect_eq(nd_item(z), 12.0);
    nd_free(z);
    nd_free(h);
    nd_free(e);
    nd_array *w = nd_scalar(2.5);
    const double *pw = nd_data(w, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(pw, "%s", nd_last_error());
    cr_expect_eq(*pw, 2.5);
    cr_expect_eq(nd_data_done(w), ND_OK);
    cr_expect_null(nd_data(w, ND_HOST_MEMORY, ND_DATA_READ_WRITE), "weak scalars are read-only");
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_data");
    nd_free(w);
}

NDT_TEST(interop, data_read_write_is_seen_by_later_ops_only) {
    double in[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    nd_array *x = nd_from_host(in, ND_FLOAT64, ND_SHAPE(10));
    nd_array *before = affine(x, 1.0, 100.0); /* recorded before: sees the old x */
    double *p = nd_data(x, ND_HOST_MEMORY, ND_DATA_READ_WRITE);
    cr_assert(p, "%s", nd_last_error());
    for (int i = 0; i < 10; i++) p[i] = -p[i];
    cr_expect_eq(nd_data_done(x), ND_OK);
    nd_array *after = affine(x, 1.0, 100.0);
    double got[10];
    read_f64(before, got, 10);
    for (int i = 0; i < 10; i++) cr_expect_eq(got[i], i + 100.0, "before[%d]", i);
    read_f64(after, got, 10);
    for (int i = 0; i < 10; i++) cr_expect_eq(got[i], 100.0 - i, "after[%d]", i);
    read_f64(x, got, 10);
    for (int i = 0; i < 10; i++) cr_expect_eq(got[i], -(double)i, "x[%d]", i);
    nd_free(before);
    nd_free(after);
    nd_free(x);
}

NDT_TEST(interop, data_misuse_is_an_error) {
    nd_array *x = nd_full(ND_FLOAT32, ND_SHAPE(4, 4), 1.0);
    nd_array *row = nd_view(x, "2");
    float *p = nd_data(x, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(p, "%s", nd_last_error());
    /* Writes into the accessed memory, through x or a view of it. */
    cr_expect_eq(nd_fill(x, 2.0), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_fill");
    nd_array *z = nd_zeros(ND_FLOAT32, ND_SHAPE(4));
    cr_expect_eq(nd_assign(row, z), ND_ERR_STATE);
    cr_expect(strstr(nd_last_error(), "nd_data"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_assign");
    /* Read-write needs the buffer alone. */
    cr_expect_null(nd_data(row, ND_HOST_MEMORY, ND_DATA_READ_WRITE));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_data");
    /* nd_free during the access: the pointer stays valid until done. */
    nd_free(x);
    cr_expect_eq(p[15], 1.0f);
    cr_expect_eq(nd_data_done(x), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_assign(row, z), ND_OK, "writes work again: %s", nd_last_error());

    nd_array *y = nd_full(ND_FLOAT32, ND_SHAPE(4), 3.0);
    nd_array *b = nd_broadcast_to(y, ND_SHAPE(2, 4));
    cr_expect_null(nd_data(b, ND_HOST_MEMORY, ND_DATA_READ_WRITE));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_data");
    float *pb = nd_data(y, ND_HOST_MEMORY, ND_DATA_READ_WRITE);
    cr_assert(pb, "%s", nd_last_error());
    cr_expect_null(nd_data(b, ND_HOST_MEMORY, ND_DATA_READ), "a read while another writes");
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_data");
    cr_expect_eq(nd_data_done(y), ND_OK);
    cr_expect_null(nd_data(y, ND_HOST_MEMORY, (nd_access)5));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_data");
    cr_expect_null(nd_data(NULL, ND_HOST_MEMORY, ND_DATA_READ));
    if (!ndt_backend_is_cuda()) {
        cr_expect_null(nd_data(y, ND_CUDA_MEMORY(0), ND_DATA_READ));
        NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_data");
    }
    nd_free(b);
    nd_free(y);
    nd_free(z);
    nd_free(row);
}

NDT_TEST(interop, data_access_ends_at_shutdown) {
    nd_array *x = nd_full(ND_INT64, ND_SHAPE(3), 5.0);
    int64_t *p = nd_data(x, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(p);
    cr_expect_eq(p[2], 5);
    nd_free(x);
    ndt_allow_live_handles(); /* x, held by its open access on purpose */
    ndt_restart(NULL); /* the open access holds x: shutdown releases it (LSan checks) */
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* ------------------------------------------------------------- DLPack */

typedef struct {
    DLManagedTensorVersioned t;
    int64_t shape[2];
    int64_t strides[2];
    int deleted;
} test_tensor;

static void test_deleter(DLManagedTensorVersioned *self) { ((test_tensor *)self->manager_ctx)->deleted++; }

static void make_tensor(test_tensor *tt, void *data, uint64_t byte_offset, DLDataType dtype, int64_t rows,
                        int64_t cols, const int64_t *strides, uint64_t flags) {
    memset(tt, 0, sizeof *tt);
    tt->shape[0] = rows;
    tt->shape[1] = cols;
    if (strides) memcpy(tt->strides, strides, sizeof tt->strides);
    tt->t = (DLManagedTensorVersioned){
        .version = {1, 0},
        .manager_ctx = tt,
        .deleter = test_deleter,
        .flags = flags,
        .dl_tensor = {data, {kDLCPU, 0}, 2, dtype, tt->shape, strides ? tt->strides : NULL, byte_offset},
    };
}

NDT_TEST(interop, dlpack_export_fields_and_round_trip) {
    NDT_RNG(r);
    double in[12];
    fill_random(&r, in, 12);
    nd_array *x = nd_from_host(in, ND_FLOAT64, ND_SHAPE(3, 4));
    nd_array *t = nd_transpose(x, NULL); /* 4x3, strides (1, 4): exported as is */
    DLManagedTensorVersioned *dl = nd_to_dlpack(t, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(dl, "%s", nd_last_error());
    cr_expect_eq(dl->version.major, 1);
    cr_expect(dl->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    cr_expect_eq(dl->dl_tensor.device.device_type, kDLCPU);
    cr_expect_eq(dl->dl_tensor.ndim, 2);
    cr_expect(dl->dl_tensor.dtype.code == kDLFloat && dl->dl_tensor.dtype.bits == 64 && dl->dl_tensor.dtype.lanes == 1);
    cr_expect(dl->dl_tensor.shape[0] == 4 && dl->dl_tensor.shape[1] == 3);
    cr_expect(dl->dl_tensor.strides[0] == 1 && dl->dl_tensor.strides[1] == 4);
    cr_expect_eq(dl->dl_tensor.byte_offset, 0u);
    const double *d = dl->dl_tensor.data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) cr_expect_eq(d[i * 1 + j * 4], in[j * 4 + i]);
    /* The export is an access: x cannot be written meanwhile. */
    cr_expect_eq(nd_fill(x, 0.0), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_fill");
    /* nd_data_done does not end an export's access. */
    cr_expect_eq(nd_data_done(t), ND_ERR_STATE);
    nd_clear_error();

    /* Back into nd: zero-copy, read-only. */
    nd_array *y = nd_from_dlpack(dl);
    cr_assert(y, "%s", nd_last_error());
    const double *py = nd_data(y, ND_HOST_MEMORY, ND_DATA_READ);
    cr_expect_eq(py, d, "no copy");
    nd_data_done(y);
    cr_expect_eq(nd_fill(y, 1.0), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "read-only DLPack"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fill");
    double got[12];
    read_f64(y, got, 12);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) cr_expect_eq(got[i * 3 + j], in[j * 4 + i]);
    nd_free(y); /* the deleter runs: the export's access ends */
    cr_expect_eq(nd_fill(x, 0.0), ND_OK, "%s", nd_last_error());
    nd_free(t);
    nd_free(x);
}

NDT_TEST(interop, dlpack_every_dtype) {
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype dt = (nd_dtype)k;
        nd_array *x = nd_arange(dt == ND_BOOL ? ND_INT8 : dt, 0, 5, 1);
        nd_array *xb = dt == ND_BOOL ? nd_astype(x, ND_BOOL) : nd_retain(x);
        DLManagedTensorVersioned *dl = nd_to_dlpack(xb, ND_HOST_MEMORY, ND_DATA_READ_WRITE);
        cr_assert(dl, "%s: %s", nd_dtype_name(dt), nd_last_error());
        cr_expect_eq(dl->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0u);
        cr_expect_eq(dl->dl_tensor.dtype.bits, 8 * nd_dtype_size(dt), "%s", nd_dtype_name(dt));
        static const uint8_t codes[NDT_NUM_DTYPES] = {kDLBool, kDLInt, kDLInt, kDLInt, kDLInt, kDLUInt, kDLUInt,
                                                     kDLUInt, kDLUInt, kDLFloat, kDLBfloat, kDLFloat, kDLFloat};
        cr_expect_eq(dl->dl_tensor.dtype.code, codes[k], "%s", nd_dtype_name(dt));
        nd_array *y = nd_from_dlpack(dl);
        cr_assert(y, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(y), dt);
        nd_array *eq = nd_eq(y, xb);
        nd_array *all = nd_all(eq, ND_ALL_AXES);
        cr_expect_eq(nd_item(all), 1.0, "%s", nd_dtype_name(dt));
        nd_free(all);
        nd_free(eq);
        nd_free(y);
        nd_free(xb);
        nd_free(x);
    }
}

NDT_TEST(interop, dlpack_import_offset_strides_and_deleter) {
    /* byte_offset into a 4x6 int32 block, a 2x3 view of every other
     * column, writable: nd writes the producer's memory. */
    int32_t mem[24];
    for (int i = 0; i < 24; i++) mem[i] = i;
    test_tensor tt;
    make_tensor(&tt, mem, 7 * sizeof(int32_t), (DLDataType){kDLInt, 32, 1}, 2, 3, (const int64_t[]){6, 2}, 0);
    nd_array *y = nd_from_dlpack(&tt.t);
    cr_assert(y, "%s", nd_last_error());
    int32_t got[6];
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK);
    const int32_t want[6] = {7, 9, 11, 13, 15, 17};
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], want[i]);
    nd_array *k = nd_scalar_int(1000);
    nd_array *sum = nd_add(y, k);
    cr_assert_eq(nd_assign(y, sum), ND_OK, "%s", nd_last_error());
    nd_free(sum);
    nd_free(k);
    nd_free(y);
    cr_expect_eq(tt.deleted, 0, "the pending write needs the memory");
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(tt.deleted, 1, "the deleter runs once");
    for (int i = 0; i < 24; i++) {
        int in = i == 7 || i == 9 || i == 11 || i == 13 || i == 15 || i == 17;
        cr_expect_eq(mem[i], in ? i + 1000 : i, "mem[%d]", i);
    }

    /* NULL strides = row-major; read-only may overlap (a stride-0 axis). */
    make_tensor(&tt, mem, 0, (DLDataType){kDLInt, 32, 1}, 2, 3, NULL, 0);
    y = nd_from_dlpack(&tt.t);
    cr_assert(y);
    cr_expect_eq(nd_strides(y)[0], 3);
    nd_free(y);
    cr_expect_eq(tt.deleted, 1);
    make_tensor(&tt, mem, 0, (DLDataType){kDLInt, 32, 1}, 2, 3, (const int64_t[]){0, 1},
                DLPACK_FLAG_BITMASK_READ_ONLY);
    y = nd_from_dlpack(&tt.t);
    cr_assert(y, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(y, got, sizeof got), ND_OK);
    cr_expect(got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == 0 && got[4] == 1 && got[5] == 2);
    nd_free(y);
    /* A writable tensor with overlapping strides is refused. */
    make_tensor(&tt, mem, 0, (DLDataType){kDLInt, 32, 1}, 2, 3, (const int64_t[]){0, 1}, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_from_dlpack");
    cr_expect_eq(tt.deleted, 0, "a failed import leaves the tensor to the caller");
}

NDT_TEST(interop, dlpack_bad_input) {
    float mem[6] = {0};
    test_tensor tt;
    cr_expect_null(nd_from_dlpack(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_from_dlpack");
    /* complex32 (two float16 parts): nd holds complex64 and complex128 only */
    make_tensor(&tt, mem, 0, (DLDataType){kDLComplex, 32, 1}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    cr_expect(strstr(nd_last_error(), "complex"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_from_dlpack");
    make_tensor(&tt, mem, 0, (DLDataType){kDLFloat, 32, 4}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_from_dlpack");
    make_tensor(&tt, mem, 0, (DLDataType){kDLFloat8_e4m3fn, 8, 1}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_from_dlpack");
    make_tensor(&tt, mem, 0, (DLDataType){kDLInt, 24, 1}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_from_dlpack");
    make_tensor(&tt, mem, 0, (DLDataType){kDLFloat, 32, 1}, 1, 3, NULL, 0);
    tt.t.version.major = 2;
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_from_dlpack");
    make_tensor(&tt, mem, 0, (DLDataType){kDLFloat, 32, 1}, 1, 3, NULL, 0);
    tt.t.dl_tensor.device.device_type = kDLOpenCL;
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_from_dlpack");
    make_tensor(&tt, mem, 2, (DLDataType){kDLFloat, 32, 1}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t), "byte_offset 2 misaligns float32");
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_from_dlpack");
    make_tensor(&tt, NULL, 0, (DLDataType){kDLFloat, 32, 1}, 1, 3, NULL, 0);
    cr_expect_null(nd_from_dlpack(&tt.t));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_from_dlpack");
    if (!ndt_backend_is_cuda()) {
        make_tensor(&tt, mem, 0, (DLDataType){kDLFloat, 32, 1}, 1, 3, NULL, 0);
        tt.t.dl_tensor.device.device_type = kDLCUDA;
        cr_expect_null(nd_from_dlpack(&tt.t));
        NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_from_dlpack");
    }
    cr_expect_eq(tt.deleted, 0);
    /* Empty tensors may have no data. */
    make_tensor(&tt, NULL, 0, (DLDataType){kDLFloat, 32, 1}, 0, 3, NULL, 0);
    nd_array *e = nd_from_dlpack(&tt.t);
    cr_assert(e, "%s", nd_last_error());
    cr_expect_eq(nd_size(e), 0);
    nd_free(e);
    cr_expect_eq(tt.deleted, 1);
    /* Export errors. */
    cr_expect_null(nd_to_dlpack(NULL, ND_HOST_MEMORY, ND_DATA_READ));
    nd_array *x = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    nd_array *b = nd_broadcast_to(x, ND_SHAPE(2, 3));
    cr_expect_null(nd_to_dlpack(b, ND_HOST_MEMORY, ND_DATA_READ_WRITE));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_to_dlpack");
    DLManagedTensorVersioned *dl = nd_to_dlpack(b, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(dl, "%s", nd_last_error());
    cr_expect(dl->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    cr_expect_eq(dl->dl_tensor.strides[0], 0);
    dl->deleter(dl);
    nd_free(b);
    nd_free(x);
}

NDT_TEST(interop, dlpack_deleter_after_shutdown) {
    nd_array *x = nd_ones(ND_FLOAT32, ND_SHAPE(8));
    DLManagedTensorVersioned *dl = nd_to_dlpack(x, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(dl);
    nd_free(x);
    ndt_allow_live_handles(); /* x, held by the DLPack tensor on purpose */
    ndt_restart(NULL);
    dl->deleter(dl); /* frees the block; nothing else to end */
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

NDT_TEST(interop, stats_have_bytes_copied) {
    nd_stats s;
    nd_get_stats(&s);
    cr_expect_eq(s.struct_size, sizeof s);
    cr_expect_gt(offsetof(nd_stats, bytes_copied), offsetof(nd_stats, temp_allocations),
                 "added after the fields older programs know");
}

/* ------------------------------------------------------------- CUDA */

NDT_TEST(interop, cuda_device_pointer_is_used_directly) {
    if (!ndt_backend_is_cuda()) cr_skip_test("CUDA backend only (device pointers)");
    NDT_RNG(r);
    enum { N = 1 << 16 };
    static double in[N], got[N];
    fill_random(&r, in, N);
    nd_array *x = nd_from_host(in, ND_FLOAT64, ND_SHAPE(N));
    /* A device pointer the program owns (here: x's device copy, handed out
     * read-write so nd forgets x's host copy). */
    void *dev = nd_data(x, ND_CUDA_MEMORY(0), ND_DATA_READ_WRITE);
    cr_assert(dev, "%s", nd_last_error());
    release_log log = {0};
    nd_array *w = nd_wrap(dev, ND_CUDA_MEMORY(0), ND_FLOAT64, ND_SHAPE(N), NULL, log_release, &log);
    cr_assert(w, "%s", nd_last_error());
    uint64_t copied = bytes_copied();
    affine_in_place(w, 2.0, 1.0);
    nd_array *v = nd_view(w, "::-3"); /* a strided reversed view of the device memory */
    affine_in_place(v, 1.0, 0.5);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(bytes_copied(), copied, "no copy for wrapped device memory");
    nd_free(v);
    nd_free(w);
    cr_expect_eq(log.calls, 1);
    cr_expect_eq(nd_data_done(x), ND_OK);
    read_f64(x, got, N); /* x's value is the device copy the wrap wrote */
    for (int i = 0; i < N; i++) {
        double want = in[i] * 2.0 + 1.0 + ((N - 1 - i) % 3 == 0 ? 0.5 : 0.0);
        cr_expect_eq(got[i], want, "x[%d]", i);
        if (got[i] != want) break;
    }
    nd_free(x);
}

NDT_TEST(interop, cuda_host_wrap_is_staged_and_written_back) {
    if (!ndt_backend_is_cuda()) cr_skip_test("CUDA backend only (staging of host wraps)");
    enum { N = 4096 };
    static float mem[N];
    for (int i = 0; i < N; i++) mem[i] = (float)i;
    release_log log = {0};
    nd_array *w = nd_wrap(mem, ND_HOST_MEMORY, ND_FLOAT32, ND_SHAPE(64, 64), NULL, log_release, &log);
    cr_assert(w, "%s", nd_last_error());
    affine_in_place(w, 2.0, 0.0);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < N; i++) cr_expect_eq(mem[i], 2.0f * i, "mem[%d] written back at nd_sync", i);
    /* Freed before the flush: written back before release. */
    affine_in_place(w, 1.0, 1.0);
    nd_free(w);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(log.calls, 1);
    for (int i = 0; i < N; i++) cr_expect_eq(mem[i], 2.0f * i + 1.0f, "mem[%d] written back at release", i);
}

NDT_TEST(interop, cuda_dlpack_export_is_device_memory) {
    if (!ndt_backend_is_cuda()) cr_skip_test("CUDA backend only (kDLCUDA)");
    nd_array *x = nd_arange(ND_FLOAT32, 0, 100, 1);
    DLManagedTensorVersioned *dl = nd_to_dlpack(x, ND_CUDA_MEMORY(0), ND_DATA_READ);
    cr_assert(dl, "%s", nd_last_error());
    cr_expect_eq(dl->dl_tensor.device.device_type, kDLCUDA);
    cr_expect_eq(dl->dl_tensor.device.device_id, 0);
    nd_array *y = nd_from_dlpack(dl);
    cr_assert(y, "%s", nd_last_error());
    uint64_t copied = bytes_copied();
    nd_array *s = nd_sum(y, ND_ALL_AXES);
    cr_expect_eq(nd_item(s), 4950.0);
    if (ndt_one_device("bytes copied: split, the wrapped tensor is scattered into pieces"))
        cr_expect_eq(bytes_copied() - copied, sizeof(float), "only the sum comes to the host");
    nd_free(s);
    nd_free(y);
    nd_free(x);
}
