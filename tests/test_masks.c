/* Boolean masks (nd/indexing.h): nd_mask_select, nd_mask_assign,
 * nd_nonzero, nd_flatnonzero, nd_argwhere, nd_extract, nd_compress,
 * against references computed here (compaction in C order), with every
 * dtype, NaN and -0.0, masks across the CPU backend's 65536-element
 * chunks, views as inputs, 0-d and empty arrays. */
#include "common.h"

static nd_array *bools(int ndim, const int64_t *shape, const bool *v) {
    nd_array *a = nd_from_host(v, ND_BOOL, ndim, shape);
    cr_assert(a, "%s", nd_last_error());
    return a;
}

static void expect_bytes(nd_array *got, const ref_arr *want, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), want->dt, "%s: dtype", what);
    cr_assert_eq(nd_ndim(got), want->ndim, "%s: ndim %d, want %d", what, nd_ndim(got), want->ndim);
    for (int d = 0; d < want->ndim; d++)
        cr_assert_eq(nd_shape(got)[d], want->shape[d], "%s: axis %d is %lld, want %lld", what, d,
                     (long long)nd_shape(got)[d], (long long)want->shape[d]);
    ref_arr *g = ndt_download(got);
    size_t item = ref_itemsize(want->dt);
    for (int64_t i = 0; i < want->size; i++)
        if (memcmp(g->data + i * item, want->data + i * item, item)) {
            cr_expect(0, "%s: element %lld is %g, want %g", what, (long long)i, ref_getd(g, i), ref_getd(want, i));
            break;
        }
    ref_free(g);
}

/* The elements of a where m is set, in order. */
static ref_arr *compact(const ref_arr *a, const bool *m) {
    int64_t n = 0;
    for (int64_t i = 0; i < a->size; i++) n += m[i];
    ref_arr *w = ref_new(a->dt, 1, &n);
    size_t item = ref_itemsize(a->dt);
    for (int64_t i = 0, k = 0; i < a->size; i++)
        if (m[i]) memcpy(w->data + (k++) * item, a->data + i * item, item);
    return w;
}

NDT_TEST(masks, select_every_dtype) {
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        ref_arr *a = ndt_rand_bits(&r, dt, 2, (int64_t[]){7, 9});
        bool m[63];
        for (int i = 0; i < 63; i++) m[i] = ndt_int(&r, 0, 2) != 0; /* about two thirds kept */
        ref_arr *want = compact(a, m);
        nd_array *na = ndt_upload(a), *nm = bools(2, (int64_t[]){7, 9}, m);
        nd_array *got = nd_mask_select(na, nm);
        expect_bytes(got, want, ref_dtype_name(dt));
        nd_free(got);
        nd_free(na);
        nd_free(nm);
        ref_free(a);
        ref_free(want);
    }
}

/* 300000 elements (several chunks), a mask computed lazily (x > 0, about
 * half), the source a transposed view. */
NDT_TEST(masks, select_large_from_a_computed_mask_and_a_view) {
    nd_scope_begin();
    NDT_RNG(r);
    const int64_t R = 600, C = 500;
    ref_arr *x = ndt_rand(&r, ND_FLOAT32, 2, (int64_t[]){R, C}, -1, 1);
    nd_array *nx = ndt_upload(x);
    nd_array *xt = nd_transpose(nx, NULL); /* (C, R) */
    nd_array *mask = nd_gt(xt, nd_scalar(0));
    nd_array *got = nd_mask_select(xt, mask);
    ref_arr *xtr = ref_transpose(x, NULL);
    bool *m = malloc((size_t)(R * C));
    cr_assert(m);
    for (int64_t i = 0; i < R * C; i++) m[i] = ref_getd(xtr, i) > 0;
    ref_arr *want = compact(xtr, m);
    expect_bytes(got, want, "x.T[x.T > 0]");
    /* All false and all true. */
    nd_array *none = nd_mask_select(xt, nd_gt(xt, nd_scalar(5)));
    cr_assert(none, "%s", nd_last_error());
    cr_expect_eq(nd_shape(none)[0], 0);
    nd_array *all = nd_mask_select(nx, nd_le(nx, nd_scalar(5)));
    for (int64_t i = 0; i < R * C; i++) m[i] = 1;
    ref_arr *w_all = compact(x, m);
    expect_bytes(all, w_all, "all kept");
    free(m);
    ref_free(x);
    ref_free(xtr);
    ref_free(want);
    ref_free(w_all);
    nd_scope_end();
}

NDT_TEST(masks, select_rows_with_a_leading_axes_mask_and_0d) {
    nd_scope_begin();
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = i;
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(2, 3, 4));
    bool m[6] = {false, true, false, true, true, false};
    nd_array *got = nd_mask_select(a, bools(2, (int64_t[]){2, 3}, m));
    double w[12];
    const int rows[3] = {1, 3, 4};
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++) w[k * 4 + j] = rows[k] * 4 + j;
    ref_arr *want = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){3, 4}, w);
    expect_bytes(got, want, "a[mask2d]");
    /* 0-d mask: a[True] is a[None]; a[False] is empty. */
    nd_array *t = nd_mask_select(a, nd_full(ND_BOOL, 0, NULL, 1));
    cr_assert(t, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(t), 4);
    cr_expect_eq(nd_shape(t)[0], 1);
    nd_array *f = nd_mask_select(nd_scalar(3), nd_full(ND_BOOL, 0, NULL, 0));
    cr_assert(f, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(f), 1);
    cr_expect_eq(nd_shape(f)[0], 0);
    /* Errors: a non-bool mask, a mask of the wrong shape or rank. */
    cr_expect_null(nd_mask_select(a, nd_zeros(ND_INT64, ND_SHAPE(2, 3))));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_mask_select");
    cr_expect_null(nd_mask_select(a, nd_zeros(ND_BOOL, ND_SHAPE(3))));
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_mask_select");
    cr_expect_null(nd_mask_select(a, nd_zeros(ND_BOOL, ND_SHAPE(2, 3, 4, 1))));
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_mask_select");
    cr_expect_null(nd_mask_select(NULL, nd_zeros(ND_BOOL, ND_SHAPE(3))));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_mask_select");
    ref_free(want);
    nd_scope_end();
}

/* a[mask] = v is a where: lazy (no flush until the read). */
NDT_TEST(masks, assign_is_lazy_and_broadcasts_per_row) {
    nd_scope_begin();
    double v[6] = {1, -2, 3, -4, 5, -6};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(2, 3));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats before, after;
    nd_get_stats(&before);
    cr_assert_eq(nd_mask_assign(a, nd_lt(a, nd_scalar(0)), nd_scalar(0)), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(after.flushes, before.flushes, "nd_mask_assign must not flush");
    ref_arr *w = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 0, 3, 0, 5, 0});
    expect_bytes(a, w, "relu in place");
    /* A row mask with one value per column. */
    bool rm[2] = {false, true};
    nd_array *cols = nd_from_host((double[]){7, 8, 9}, ND_FLOAT64, ND_SHAPE(3));
    cr_assert_eq(nd_mask_assign(a, bools(1, (int64_t[]){2}, rm), cols), ND_OK, "%s", nd_last_error());
    ref_arr *w2 = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){2, 3}, (double[]){1, 0, 3, 7, 8, 9});
    expect_bytes(a, w2, "row mask");
    /* Errors: values per selected element, a read-only target. */
    cr_expect_neq(nd_mask_assign(a, bools(1, (int64_t[]){2}, rm), nd_zeros(ND_FLOAT64, ND_SHAPE(2, 3))), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_mask_assign");
    cr_expect_neq(nd_mask_assign(nd_broadcast_to(cols, 2, (int64_t[]){2, 3}), nd_zeros(ND_BOOL, ND_SHAPE(2, 3)),
                                 nd_scalar(1)),
                  ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_mask_assign");
    cr_expect_neq(nd_mask_assign(a, nd_zeros(ND_FLOAT64, ND_SHAPE(2, 3)), nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_mask_assign");
    ref_free(w);
    ref_free(w2);
    nd_scope_end();
}

/* nonzero, flatnonzero, argwhere: NaN is nonzero, -0.0 is zero. */
NDT_TEST(masks, nonzero_flatnonzero_argwhere) {
    nd_scope_begin();
    double v[12] = {0, NAN, -0.0, 2, 0, 0, -1, 0, 0, 0, 0, INFINITY};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(2, 2, 3));
    nd_array *out[3] = {NULL, NULL, NULL};
    cr_assert_eq(nd_nonzero(a, out), ND_OK, "%s", nd_last_error());
    /* flat positions 1, 3, 6, 11 -> (0,0,1), (0,1,0), (1,0,0), (1,1,2). */
    ref_arr *w0 = ref_from_doubles(ND_INT64, 1, (int64_t[]){4}, (double[]){0, 0, 1, 1});
    ref_arr *w1 = ref_from_doubles(ND_INT64, 1, (int64_t[]){4}, (double[]){0, 1, 0, 1});
    ref_arr *w2 = ref_from_doubles(ND_INT64, 1, (int64_t[]){4}, (double[]){1, 0, 0, 2});
    expect_bytes(out[0], w0, "nonzero axis 0");
    expect_bytes(out[1], w1, "nonzero axis 1");
    expect_bytes(out[2], w2, "nonzero axis 2");
    ref_arr *wf = ref_from_doubles(ND_INT64, 1, (int64_t[]){4}, (double[]){1, 3, 6, 11});
    expect_bytes(nd_flatnonzero(a), wf, "flatnonzero");
    ref_arr *wa = ref_from_doubles(ND_INT64, 2, (int64_t[]){4, 3}, (double[]){0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 2});
    expect_bytes(nd_argwhere(a), wa, "argwhere");
    /* A transposed int view. */
    nd_array *t = nd_transpose(nd_from_host((int32_t[]){0, 5, 0, 7, 0, 0}, ND_INT32, ND_SHAPE(2, 3)), NULL);
    ref_arr *wt = ref_from_doubles(ND_INT64, 1, (int64_t[]){2}, (double[]){1, 2}); /* t = [[0,7],[5,0],[0,0]] */
    expect_bytes(nd_flatnonzero(t), wt, "flatnonzero of a transposed view");
    /* 0-d: argwhere (1, 0) / (0, 0); nonzero refuses. */
    nd_array *aw = nd_argwhere(nd_scalar(3));
    cr_assert(aw, "%s", nd_last_error());
    cr_expect(nd_ndim(aw) == 2 && nd_shape(aw)[0] == 1 && nd_shape(aw)[1] == 0);
    aw = nd_argwhere(nd_full(ND_INT8, 0, NULL, 0));
    cr_assert(aw, "%s", nd_last_error());
    cr_expect(nd_ndim(aw) == 2 && nd_shape(aw)[0] == 0 && nd_shape(aw)[1] == 0);
    cr_expect_neq(nd_nonzero(nd_scalar(3), out), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nonzero");
    cr_expect_neq(nd_nonzero(a, NULL), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nonzero");
    /* Empty. */
    nd_array *e = nd_flatnonzero(nd_zeros(ND_FLOAT32, ND_SHAPE(0, 4)));
    cr_assert(e, "%s", nd_last_error());
    cr_expect_eq(nd_shape(e)[0], 0);
    ref_free(w0);
    ref_free(w1);
    ref_free(w2);
    ref_free(wf);
    ref_free(wa);
    ref_free(wt);
    nd_scope_end();
}

NDT_TEST(masks, extract_and_compress) {
    nd_scope_begin();
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i * 0.5;
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(3, 4));
    nd_array *cond = nd_eq(nd_remainder(nd_arange(ND_INT64, 0, 12, 1), nd_scalar_int(3)), nd_scalar_int(0));
    ref_arr *we = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){4}, (double[]){0, 1.5, 3, 4.5});
    expect_bytes(nd_extract(nd_reshape(cond, 2, (int64_t[]){3, 4}), a), we, "extract");
    /* compress along axis 1 and flattened. */
    bool c[4] = {true, false, false, true};
    nd_array *nc = bools(1, (int64_t[]){4}, c);
    ref_arr *wc = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){3, 2}, (double[]){0, 1.5, 2, 3.5, 4, 5.5});
    expect_bytes(nd_compress(nc, a, -1), wc, "compress axis -1");
    ref_arr *wflat = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){2}, (double[]){0, 1.5});
    expect_bytes(nd_compress(nc, a, ND_ALL_AXES), wflat, "compress flattened");
    /* A longer condition is fine while it is zero past the axis. */
    bool c5[5] = {false, true, false, false, false};
    ref_arr *w5 = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){1, 4}, (double[]){2, 2.5, 3, 3.5});
    expect_bytes(nd_compress(bools(1, (int64_t[]){5}, c5), a, 0), w5, "compress with a longer condition");
    c5[4] = true;
    nd_array *bad = nd_compress(bools(1, (int64_t[]){5}, c5), a, 0);
    cr_assert(bad, "%s", nd_last_error());
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_INDEX, "%s", nd_last_error());
    cr_expect(strstr(nd_last_error(), "nd_compress: index 4 is out of bounds for axis 0 with size 3"), "%s",
              nd_last_error());
    nd_clear_error();
    cr_expect_null(nd_compress(nd_zeros(ND_BOOL, ND_SHAPE(2, 2)), a, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_compress");
    cr_expect_null(nd_compress(nc, a, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_compress");
    ref_free(we);
    ref_free(wc);
    ref_free(wflat);
    ref_free(w5);
    nd_scope_end();
}

/* flatnonzero and a[mask] = v on every dtype (ints in -3..3: many zeros). */
NDT_TEST(masks, flatnonzero_and_assign_every_dtype) {
    nd_scope_begin();
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        ref_arr *a = ndt_rand(&r, dt, 2, (int64_t[]){5, 8}, -3, 3);
        int64_t n = 0, pos[40];
        for (int64_t i = 0; i < 40; i++)
            if (ref_getd(a, i) != 0) pos[n++] = i;
        ref_arr *want = ref_new(ND_INT64, 1, &n);
        for (int64_t k = 0; k < n; k++) ref_setu(want, k, (uint64_t)pos[k]);
        nd_array *na = ndt_upload(a);
        expect_bytes(nd_flatnonzero(na), want, ref_dtype_name(dt));
        /* a[a != 0] = 1 (as the dtype): every nonzero element becomes 1. */
        ref_arr *w2 = ref_astype(a, dt);
        for (int64_t k = 0; k < n; k++) ref_setd(w2, pos[k], 1);
        cr_assert_eq(nd_mask_assign(na, nd_ne(na, nd_scalar_int(0)), nd_scalar_int(1)), ND_OK, "%s: %s",
                     ref_dtype_name(dt), nd_last_error());
        expect_bytes(na, w2, ref_dtype_name(dt));
        nd_free(na);
        ref_free(a);
        ref_free(want);
        ref_free(w2);
    }
    nd_scope_end();
}

/* y = a[mask] * 2 + 1 for 20 masks whose counts differ, as a loop whose
 * lengths depend on data does: each y against float64, and the kernels
 * compiled stay bounded, since every length shares its kernels
 * (shape-generic kernels, docs/internals.md): at most 3 in all, none once
 * the first 10 counts (kept with and without the compact copy) have run.
 * Compiling a kernel per count made this 20 or more. A fresh cache
 * directory, so that every kernel the loop needs compiles here; on the CPU
 * every kernel is compiled before its first launch (ND_CPU_JIT=sync,
 * ND_CPU_JIT_MIN=0). With ND_BACKEND=cuda this counts NVRTC's compiles. */
NDT_TEST(masks, data_dependent_lengths_compile_once) {
    char dir[512];
    ndt_restart_compiling(dir, sizeof dir, "masks");
    nd_scope_begin(); /* after the restart, which ends every handle */
    NDT_RNG(r);
    const int64_t n = 3000;
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, 1, &n, 0, 1);
    nd_array *na = ndt_upload(a);
    nd_stats s0, s;
    nd_get_stats(&s0);
    uint64_t after_ten = 0;
    int64_t counts[20];
    for (int i = 0; i < 20; i++) {
        /* counts from n down to about n/20, mixed; not 0: an empty
         * selection fuses into a kernel of another structure (no points,
         * every output stored), which compiles once of its own */
        float t = (float)((i * 7) % 20) / 20.0f;
        nd_array *mask = nd_gt(na, nd_scalar(t));
        nd_array *sel = nd_mask_select(na, mask);
        cr_assert(sel, "%s", nd_last_error());
        nd_array *y2 = nd_mul(sel, nd_scalar(2));
        nd_array *y = nd_add(y2, nd_scalar(1));
        nd_free(mask);
        nd_free(sel);
        nd_free(y2);
        int64_t c = 0;
        for (int64_t j = 0; j < n; j++) c += (float)ref_getd(a, j) > t;
        counts[i] = c;
        ref_arr *want = ref_new(ND_FLOAT32, 1, &c);
        for (int64_t j = 0, q = 0; j < n; j++)
            if ((float)ref_getd(a, j) > t) ref_setd(want, q++, ref_getd(a, j) * 2.0 + 1.0);
        ndt_check_default(y, want, "a[a > t] * 2 + 1");
        ref_free(want);
        nd_free(y);
        if (i == 9) {
            nd_get_stats(&s);
            after_ten = s.kernels_compiled;
        }
    }
    nd_get_stats(&s);
    int distinct = 0;
    for (int i = 0; i < 20; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= counts[j] == counts[i];
        distinct += !seen;
    }
    cr_expect_geq(distinct, 15, "only %d distinct counts", distinct);
    cr_expect_leq(s.kernels_compiled - s0.kernels_compiled, 3, "%llu kernels compiled for %d counts",
                  (unsigned long long)(s.kernels_compiled - s0.kernels_compiled), distinct);
    cr_expect_eq(s.kernels_compiled, after_ten, "%llu kernels compiled for the last 10 counts",
                 (unsigned long long)(s.kernels_compiled - after_ten));
    nd_free(na);
    ref_free(a);
    nd_scope_end();
    ndt_remove_dir(dir);
}
