/* Shaping views: flip, fliplr, flipud, squeeze, expand_dims, swapaxes,
 * moveaxis, atleast_1d/2d/3d, broadcast_arrays, trace and nd_viewf. Every
 * view is checked element by element against an index mapping written here
 * (independent of the strides the library computes), written through, and
 * used where kernels read negative strides: fused maps, stores, reductions,
 * matmul operands and random arrays. */
#include "common.h"

#include <stdint.h>


/* a flipped on the axes in mask. */
static ref_arr *flip_ref(const ref_arr *a, unsigned mask) {
    ref_arr *w = ref_new(a->dt, a->ndim, a->shape);
    int64_t idx[ND_MAX_DIMS];
    for (int64_t f = 0; f < w->size; f++) {
        ref_unravel(f, a->ndim, a->shape, idx);
        for (int d = 0; d < a->ndim; d++)
            if (mask >> d & 1u) idx[d] = a->shape[d] - 1 - idx[d];
        ref_cast_elem(w, f, a, ref_ravel(idx, a->ndim, a->shape));
    }
    return w;
}


/* ---------------------------------------------------------------- flip */

NDT_TEST(shaping_views, flip_every_axis_and_all) {
    NDT_RNG(r);
    static const nd_dtype dts[] = {ND_FLOAT32, ND_INT64, ND_BOOL, ND_FLOAT16, ND_UINT8};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
        ref_arr *ra = ndt_rand_small(&r, dts[t], ND_SHAPE(3, 4, 5));
        nd_array *a = ndt_upload(ra);
        for (int ax = -3; ax < 3; ax++) {
            nd_array *f = nd_flip(a, ax);
            ref_arr *w = flip_ref(ra, 1u << (ax < 0 ? ax + 3 : ax));
            ndt_check(f, w, 0, 0, NULL, "flip(%s, %d)", ref_dtype_name(dts[t]), ax);
            nd_free(f);
            ref_free(w);
        }
        nd_array *f = nd_flip(a, ND_ALL_AXES);
        ref_arr *w = flip_ref(ra, 7);
        ndt_check(f, w, 0, 0, NULL, "flip(%s, all)", ref_dtype_name(dts[t]));
        /* flipping twice is the array again */
        nd_array *ff = nd_flip(f, ND_ALL_AXES);
        ndt_check(ff, ra, 0, 0, NULL, "flip(flip(a))");
        nd_free(f); nd_free(ff); nd_free(a);
        ref_free(w); ref_free(ra);
    }
    /* fliplr, flipud; 0-d and empty arrays */
    ref_arr *rb = ndt_rand(&r, ND_INT32, ND_SHAPE(4, 6), -99, 99);
    nd_array *b = ndt_upload(rb);
    nd_array *lr = nd_fliplr(b), *ud = nd_flipud(b);
    ref_arr *wlr = flip_ref(rb, 2), *wud = flip_ref(rb, 1);
    ndt_check(lr, wlr, 0, 0, NULL, "fliplr");
    ndt_check(ud, wud, 0, 0, NULL, "flipud");
    nd_array *s = nd_full(ND_FLOAT64, ND_SCALAR_SHAPE, 3.5), *fs = nd_flip(s, ND_ALL_AXES);
    cr_expect(fs && nd_ndim(fs) == 0 && nd_item(fs) == 3.5, "flip of a 0-d array");
    nd_array *ws = nd_scalar(2.5), *fw = nd_flip(ws, ND_ALL_AXES);
    cr_expect(fw && nd_ndim(fw) == 0 && nd_item(fw) == 2.5, "flip of a weak scalar");
    cr_expect_eq(nd_fill(fw, 1), ND_OK, "flip of a scalar is writable: %s", nd_last_error());
    cr_expect_eq(nd_item(ws), 2.5, "the scalar keeps its value");
    nd_array *e = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 0)), *fe = nd_flip(e, 1), *fe0 = nd_flip(e, 0);
    cr_expect(fe && fe0 && nd_size(fe) == 0 && nd_shape(fe0)[0] == 3, "flip of an empty array");
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(b); nd_free(lr); nd_free(ud); nd_free(s); nd_free(fs); nd_free(ws); nd_free(fw);
    nd_free(e); nd_free(fe); nd_free(fe0);
    ref_free(rb); ref_free(wlr); ref_free(wud);
}

NDT_TEST(shaping_views, flip_of_views_and_writes_through_it) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(5, 6), -10, 10);
    nd_array *a = ndt_upload(ra);
    /* flip of a transpose, of a strided slice and of a broadcast */
    nd_array *t = nd_transpose(a, NULL), *ft = nd_flip(t, 0);
    ref_arr *rt = ref_transpose(ra, NULL), *wt = flip_ref(rt, 1);
    ndt_check(ft, wt, 0, 0, NULL, "flip(a.T, 0)");
    nd_array *v = nd_view(a, "1::2, ::-3"), *fv = nd_flip(v, ND_ALL_AXES);
    ref_arr *rv = ref_strided(ra, 2, (int64_t[]){2, 2}, (int64_t[]){12, -3}, 11);
    ref_arr *wv = flip_ref(rv, 3);
    ndt_check(fv, wv, 0, 0, NULL, "flip(a[1::2, ::-3])");
    nd_array *row = nd_view(a, "2"), *bc = nd_broadcast_to(row, ND_SHAPE(3, 6));
    nd_array *fb = nd_flip(bc, ND_ALL_AXES);
    ref_arr *rrow = ref_strided(ra, 1, (int64_t[]){6}, (int64_t[]){1}, 12);
    ref_arr *rbc = ref_broadcast_to(rrow, 2, (int64_t[]){3, 6}), *wb = flip_ref(rbc, 3);
    ndt_check(fb, wb, 0, 0, NULL, "flip(broadcast row)");
    cr_expect_eq(nd_fill(fb, 0), ND_ERR_ARG, "a flipped broadcast stays read-only");
    nd_clear_error();
    /* writes through a flipped view land reversed in the base (a store
     * with negative strides) */
    nd_array *f = nd_flip(a, 1);
    ref_arr *rs = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(5, 6), -1, 1);
    nd_array *src = ndt_upload(rs);
    cr_assert_eq(nd_assign(f, src), ND_OK, "%s", nd_last_error());
    ref_arr *want = flip_ref(rs, 2);
    ndt_check(a, want, 0, 0, NULL, "a after a[:, ::-1] = src");
    /* in place: a[...] = flip(a) computes the right side first (NumPy) */
    nd_array *fa = nd_flip(a, ND_ALL_AXES);
    cr_assert_eq(nd_assign(a, fa), ND_OK, "%s", nd_last_error());
    ref_arr *want2 = flip_ref(want, 3);
    ndt_check(a, want2, 0, 0, NULL, "a after a[...] = flip(a)");
    nd_free(a); nd_free(t); nd_free(ft); nd_free(v); nd_free(fv); nd_free(row); nd_free(bc);
    nd_free(fb); nd_free(f); nd_free(src); nd_free(fa);
    ref_free(ra); ref_free(rt); ref_free(wt); ref_free(rv); ref_free(wv); ref_free(rrow);
    ref_free(rbc); ref_free(wb); ref_free(rs); ref_free(want); ref_free(want2);
}

NDT_TEST(shaping_views, flip_feeds_kernels_reductions_matmul_and_random) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(37, 29), -2, 2);
    nd_array *a = ndt_upload(ra);
    nd_array *fa = nd_flip(a, 0);
    ref_arr *rf = flip_ref(ra, 1);
    /* a fused map: flip(a) * a + 1 (two loads of one buffer, one reversed) */
    nd_scope_begin();
    nd_array *m = nd_keep(nd_add(nd_mul(fa, a), nd_scalar(1.0)));
    nd_scope_end();
    ref_arr *prod = ref_binary(R_MUL, rf, ra, ND_FLOAT32, ND_FLOAT32);
    ref_arr *one = ref_from_doubles(ND_FLOAT32, 0, NULL, (double[]){1.0});
    ref_arr *wm = ref_binary(R_ADD, prod, one, ND_FLOAT32, ND_FLOAT32);
    ndt_check_default(m, wm, "flip(a, 0) * a + 1");
    /* reductions over both axes of the flipped view */
    for (int ax = -1; ax < 2; ax++) {
        int axis = ax < 0 ? ND_ALL_AXES : ax;
        double *sc = NULL;
        nd_array *s = nd_sum(fa, axis);
        ref_arr *ws = ref_reduce(RR_SUM, rf, axis, &sc);
        ndt_check(s, ws, 1e-5, 1e-5, sc, "sum(flip(a, 0), %d)", axis);
        nd_array *am = nd_argmax(fa, axis);
        ref_arr *wam = ref_reduce(RR_ARGMAX, rf, axis, NULL);
        ndt_check(am, wam, 0, 0, NULL, "argmax(flip(a, 0), %d)", axis);
        free(sc);
        nd_free(s); nd_free(am);
        ref_free(ws); ref_free(wam);
    }
    /* a matmul operand: flip(a, 1).T @ flip(a, 0) */
    nd_array *fl = nd_flip(a, 1), *flt = nd_transpose(fl, NULL);
    nd_array *mm = nd_matmul(flt, fa);
    ref_arr *rfl = flip_ref(ra, 2), *rflt = ref_transpose(rfl, NULL);
    double *sc = NULL;
    ref_arr *wmm = ref_matmul(rflt, rf, ND_FLOAT32, &sc);
    ndt_check(mm, wmm, 1e-5, 1e-5, sc, "flip(a, 1).T @ flip(a, 0)");
    free(sc);
    /* a flipped random array holds the same values reversed, whichever way
     * the kernel walks them */
    nd_random_seed(11);
    nd_array *u = nd_random_uniform(ND_FLOAT32, ND_SHAPE(1001), 0, 1);
    nd_array *fu = nd_flip(u, 0), *fuc = nd_copy(fu);
    ref_arr *ru = ndt_download(u), *rfu = ndt_download(fuc);
    int64_t bad = 0;
    for (int64_t i = 0; i < 1001; i++) bad += ref_getd(rfu, i) != ref_getd(ru, 1000 - i);
    cr_expect_eq(bad, 0, "%lld elements of flip(random) differ from random reversed", (long long)bad);
    nd_free(a); nd_free(fa); nd_free(m); nd_free(fl); nd_free(flt); nd_free(mm); nd_free(u);
    nd_free(fu); nd_free(fuc);
    ref_free(ra); ref_free(rf); ref_free(prod); ref_free(one); ref_free(wm); ref_free(rfl);
    ref_free(rflt); ref_free(wmm); ref_free(ru); ref_free(rfu);
}

NDT_TEST(shaping_views, flip_errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(2, 3)), *v = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    nd_array *s = nd_full(ND_INT8, ND_SCALAR_SHAPE, 1);
    cr_expect_null(nd_flip(a, 2));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "axis 2") && strstr(m, "-2..1"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_flip");
    cr_expect_null(nd_flip(a, -3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_flip");
    cr_expect_null(nd_flip(s, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_flip");
    cr_expect_null(nd_flip(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_flip");
    cr_expect_null(nd_fliplr(v));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_fliplr");
    cr_expect_null(nd_flipud(s));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_flipud");
    nd_free(a); nd_free(v); nd_free(s);
}

/* ------------------------------------------------ squeeze, expand_dims */

NDT_TEST(shaping_views, squeeze_and_expand_dims) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT16, ND_SHAPE(1, 3, 1, 4, 1), -500, 500);
    nd_array *a = ndt_upload(ra);
    nd_array *all = nd_squeeze(a, ND_ALL_AXES);
    ref_arr *w = ref_reshape(ra, 2, (int64_t[]){3, 4});
    ndt_check(all, w, 0, 0, NULL, "squeeze(a)");
    ref_free(w);
    static const int axes[] = {0, 2, 4, -1, -3, -5};
    for (int i = 0; i < 6; i++) {
        nd_array *s = nd_squeeze(a, axes[i]);
        int ax = axes[i] < 0 ? axes[i] + 5 : axes[i];
        int64_t sh[4];
        for (int d = 0, o = 0; d < 5; d++)
            if (d != ax) sh[o++] = ra->shape[d];
        w = ref_reshape(ra, 4, sh);
        ndt_check(s, w, 0, 0, NULL, "squeeze(a, %d)", axes[i]);
        nd_free(s);
        ref_free(w);
    }
    for (int axis = -3; axis <= 2; axis++) {
        nd_array *e = nd_expand_dims(all, axis);
        int ax = axis < 0 ? axis + 3 : axis;
        int64_t sh[3];
        for (int d = 0, j = 0; d < 3; d++) sh[d] = d == ax ? 1 : (j++ ? 4 : 3);
        w = ref_reshape(ra, 3, sh);
        ndt_check(e, w, 0, 0, NULL, "expand_dims(a, %d)", axis);
        nd_free(e);
        ref_free(w);
    }
    /* writes through a squeezed, expanded view reach a */
    nd_array *e = nd_expand_dims(all, 1); /* (3,1,4) */
    nd_array *part = nd_view(e, "1, 0, 1:3");
    cr_assert_eq(nd_fill(part, -1), ND_OK, "%s", nd_last_error());
    ref_setd(ra, 5, -1);
    ref_setd(ra, 6, -1);
    ndt_check(a, ra, 0, 0, NULL, "a after writing squeeze(a)[None-ish][1, 0, 1:3]");
    /* 0-d: squeeze all is 0-d, expand_dims gives (1,) from a weak scalar too */
    nd_array *z = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 2), *sz = nd_squeeze(z, ND_ALL_AXES);
    nd_array *w0 = nd_scalar_int(-4), *ez = nd_expand_dims(w0, -1);
    cr_expect(sz && nd_ndim(sz) == 0 && nd_item(sz) == 2, "squeeze of 0-d");
    cr_expect(ez && nd_ndim(ez) == 1 && nd_shape(ez)[0] == 1 && nd_item(ez) == -4 &&
              nd_dtype_of(ez) == ND_INT64, "expand_dims(scalar_int, -1)");
    /* a length-0 axis stays */
    nd_array *em = nd_zeros(ND_BOOL, ND_SHAPE(1, 0, 1)), *sem = nd_squeeze(em, ND_ALL_AXES);
    cr_expect(sem && nd_ndim(sem) == 1 && nd_shape(sem)[0] == 0, "squeeze (1,0,1) -> (0,)");
    nd_free(a); nd_free(all); nd_free(e); nd_free(part); nd_free(z); nd_free(sz); nd_free(w0);
    nd_free(ez); nd_free(em); nd_free(sem);
    ref_free(ra);
}

NDT_TEST(shaping_views, squeeze_expand_dims_errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(1, 3));
    cr_expect_null(nd_squeeze(a, 1));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "length 3, not 1") && strstr(m, "ND_ALL_AXES"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_squeeze");
    cr_expect_null(nd_squeeze(a, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_squeeze");
    cr_expect_null(nd_expand_dims(a, -4));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_expand_dims");
    cr_expect_null(nd_expand_dims(a, 3));
    m = nd_last_error();
    cr_expect(m && strstr(m, "-3..2"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_expand_dims");
    nd_array *big = nd_zeros(ND_FLOAT32, ND_SHAPE(1, 1, 1, 1, 1, 1, 1, 1));
    cr_expect_null(nd_expand_dims(big, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_expand_dims");
    cr_expect_null(nd_squeeze(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_squeeze");
    cr_expect_null(nd_expand_dims(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_expand_dims");
    nd_free(a);
    nd_free(big);
}

/* ------------------------------------------------- swapaxes, moveaxis */

NDT_TEST(shaping_views, swapaxes_and_moveaxis) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(2, 3, 4, 5), -9, 9);
    nd_array *a = ndt_upload(ra);
    for (int i = -4; i < 4; i++)
        for (int j = -4; j < 4; j++) {
            int ii = i < 0 ? i + 4 : i, jj = j < 0 ? j + 4 : j;
            int perm[4] = {0, 1, 2, 3};
            perm[ii] = jj;
            perm[jj] = ii;
            nd_array *s = nd_swapaxes(a, i, j);
            ref_arr *w = ref_transpose(ra, perm);
            ndt_check(s, w, 0, 0, NULL, "swapaxes(a, %d, %d)", i, j);
            nd_free(s);
            ref_free(w);
            /* moveaxis: the other axes in order, source at destination */
            int rest[3], n = 0;
            for (int d = 0; d < 4; d++)
                if (d != ii) rest[n++] = d;
            for (int d = 0, k = 0; d < 4; d++) perm[d] = d == jj ? ii : rest[k++];
            nd_array *mv = nd_moveaxis(a, i, j);
            w = ref_transpose(ra, perm);
            ndt_check(mv, w, 0, 0, NULL, "moveaxis(a, %d, %d)", i, j);
            nd_free(mv);
            ref_free(w);
        }
    /* NumPy: moveaxis((2,3,4), 0, -1) is (3,4,2); (-1, 0) is (4,2,3) */
    nd_array *b = nd_zeros(ND_INT8, ND_SHAPE(2, 3, 4));
    nd_array *m1 = nd_moveaxis(b, 0, -1), *m2 = nd_moveaxis(b, -1, 0);
    cr_expect(nd_shape(m1)[0] == 3 && nd_shape(m1)[1] == 4 && nd_shape(m1)[2] == 2, "(3,4,2)");
    cr_expect(nd_shape(m2)[0] == 4 && nd_shape(m2)[1] == 2 && nd_shape(m2)[2] == 3, "(4,2,3)");
    /* writes through a swapped view */
    nd_array *sw = nd_swapaxes(a, 0, 3), *cell = nd_view(sw, "4, 2, 1, 0");
    cr_assert_eq(nd_fill(cell, 1234.5), ND_OK, "%s", nd_last_error());
    ref_setd(ra, ((0 * 3 + 2) * 4 + 1) * 5 + 4, 1234.5);
    ndt_check(a, ra, 0, 0, NULL, "a after swapaxes(a, 0, 3)[4, 2, 1, 0] = 1234.5");
    nd_free(a); nd_free(b); nd_free(m1); nd_free(m2); nd_free(sw); nd_free(cell);
    ref_free(ra);
}

NDT_TEST(shaping_views, swapaxes_moveaxis_errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(2, 3));
    cr_expect_null(nd_swapaxes(a, 0, 2));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "axis2 2 is out of range for a 2-d array (use -2..1)"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_swapaxes");
    cr_expect_null(nd_moveaxis(a, -3, 0));
    m = nd_last_error();
    cr_expect(m && strstr(m, "source -3"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_moveaxis");
    cr_expect_null(nd_moveaxis(a, 0, 5));
    m = nd_last_error();
    cr_expect(m && strstr(m, "destination 5"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_moveaxis");
    cr_expect_null(nd_swapaxes(NULL, 0, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_swapaxes");
    nd_free(a);
}

/* ------------------------------------------------------------- atleast */

NDT_TEST(shaping_views, atleast_nd) {
    NDT_RNG(r);
    typedef nd_array *(*fn_t)(nd_array *);
    const fn_t fns[3] = {nd_atleast_1d, nd_atleast_2d, nd_atleast_3d};
    /* expected shapes from NumPy for inputs of 0..4 dims */
    static const int64_t in_shapes[5][4] = {{0}, {5}, {2, 3}, {2, 3, 4}, {1, 2, 1, 3}};
    static const int in_nd[5] = {0, 1, 2, 3, 4};
    static const int64_t want[3][5][4] = {
        {{1}, {5}, {2, 3}, {2, 3, 4}, {1, 2, 1, 3}},
        {{1, 1}, {1, 5}, {2, 3}, {2, 3, 4}, {1, 2, 1, 3}},
        {{1, 1, 1}, {1, 5, 1}, {2, 3, 1}, {2, 3, 4}, {1, 2, 1, 3}},
    };
    static const int want_nd[3][5] = {{1, 1, 2, 3, 4}, {2, 2, 2, 3, 4}, {3, 3, 3, 3, 4}};
    for (int k = 0; k < 5; k++) {
        ref_arr *ra = ndt_rand(&r, ND_UINT32, in_nd[k], in_shapes[k], 0, 1000);
        nd_array *a = ndt_upload(ra);
        for (int f = 0; f < 3; f++) {
            nd_array *g = fns[f](a);
            ref_arr *w = ref_reshape(ra, want_nd[f][k], want[f][k]);
            ndt_check(g, w, 0, 0, NULL, "atleast_%dd of a %d-d array", f + 1, in_nd[k]);
            nd_free(g);
            ref_free(w);
        }
        nd_free(a);
        ref_free(ra);
    }
    /* a view: writes reach the base; a weak scalar becomes an array */
    nd_array *v = nd_zeros(ND_FLOAT32, ND_SHAPE(4)), *v3 = nd_atleast_3d(v);
    nd_array *cell = nd_view(v3, "0, 2, 0");
    cr_assert_eq(nd_fill(cell, 8), ND_OK, "%s", nd_last_error());
    float g[4];
    cr_assert_eq(nd_to_host(v, g, sizeof g), ND_OK, "%s", nd_last_error());
    cr_expect(g[0] == 0 && g[1] == 0 && g[2] == 8 && g[3] == 0, "write through atleast_3d");
    nd_array *s = nd_scalar(1.5), *s2 = nd_atleast_2d(s);
    cr_expect(s2 && nd_ndim(s2) == 2 && nd_item(s2) == 1.5 && nd_dtype_of(s2) == ND_FLOAT64,
              "atleast_2d(scalar)");
    cr_expect_null(nd_atleast_1d(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_atleast_1d");
    nd_free(v); nd_free(v3); nd_free(cell); nd_free(s); nd_free(s2);
}

/* ---------------------------------------------------- broadcast_arrays */

NDT_TEST(shaping_views, broadcast_arrays) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(2, 1, 4), -3, 3);
    ref_arr *rb = ndt_rand(&r, ND_INT8, ND_SHAPE(3, 1), -100, 100);
    ref_arr *rc = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(2, 3, 4), -3, 3);
    nd_array *in[4] = {ndt_upload(ra), ndt_upload(rb), ndt_upload(rc), nd_scalar(2.0)};
    nd_array *out[4];
    cr_assert_eq(nd_broadcast_arrays(4, in, out), ND_OK, "%s", nd_last_error());
    const int64_t sh[3] = {2, 3, 4};
    ref_arr *wa = ref_broadcast_to(ra, 3, sh), *wb = ref_broadcast_to(rb, 3, sh);
    ndt_check(out[0], wa, 0, 0, NULL, "broadcast_arrays[0]");
    ndt_check(out[1], wb, 0, 0, NULL, "broadcast_arrays[1]");
    ndt_check(out[2], rc, 0, 0, NULL, "broadcast_arrays[2]");
    ref_arr *ws = ref_new(ND_FLOAT64, 3, sh);
    for (int i = 0; i < 24; i++) ref_setd(ws, i, 2.0);
    ndt_check(out[3], ws, 0, 0, NULL, "broadcast_arrays[3] (a scalar)");
    /* broadcast ones are read-only; the one already of the shape writes
     * through to its input */
    cr_expect_eq(nd_fill(out[0], 1), ND_ERR_ARG, "out[0] is a broadcast");
    nd_clear_error();
    cr_expect_eq(nd_fill(out[3], 1), ND_ERR_ARG, "out[3] is a broadcast");
    nd_clear_error();
    cr_assert_eq(nd_fill(out[2], -1), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 24; i++) ref_setd(rc, i, -1);
    ndt_check(in[2], rc, 0, 0, NULL, "input 2 after writing out[2]");
    for (int k = 0; k < 4; k++) nd_free(out[k]);
    /* one array; none */
    cr_assert_eq(nd_broadcast_arrays(1, in, out), ND_OK, "%s", nd_last_error());
    ndt_check(out[0], ra, 0, 0, NULL, "broadcast_arrays of one array");
    nd_free(out[0]);
    cr_expect_eq(nd_broadcast_arrays(0, NULL, NULL), ND_OK);
    /* errors: shapes that do not broadcast; NULLs */
    nd_array *bad[2] = {in[0], nd_zeros(ND_FLOAT32, ND_SHAPE(3))};
    out[0] = out[1] = in[0];
    cr_expect_eq(nd_broadcast_arrays(2, bad, out), ND_ERR_SHAPE);
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "(2,1,4)") && strstr(m, "(3,)"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_broadcast_arrays");
    cr_expect(out[0] == NULL && out[1] == NULL, "outputs are NULL after an error");
    cr_expect_eq(nd_broadcast_arrays(2, bad, NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_broadcast_arrays");
    cr_expect_eq(nd_broadcast_arrays(-1, bad, out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_broadcast_arrays");
    nd_array *withnull[2] = {in[0], NULL};
    cr_expect_eq(nd_broadcast_arrays(2, withnull, out), ND_ERR_ARG);
    m = nd_last_error();
    cr_expect(m && strstr(m, "in[1]"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_broadcast_arrays");
    nd_free(bad[1]);
    for (int k = 0; k < 4; k++) nd_free(in[k]);
    ref_free(ra); ref_free(rb); ref_free(rc); ref_free(wa); ref_free(wb); ref_free(ws);
}

/* ---------------------------------------------------------------- trace */

NDT_TEST(shaping_views, trace_dtypes_and_shapes) {
    NDT_RNG(r);
    static const struct {
        nd_dtype in, out;
    } dts[] = {{ND_INT8, ND_INT64},     {ND_BOOL, ND_INT64},       {ND_UINT8, ND_UINT64},
               {ND_FLOAT16, ND_FLOAT16}, {ND_FLOAT32, ND_FLOAT32}, {ND_FLOAT64, ND_FLOAT64},
               {ND_INT32, ND_INT64}};
    static const int64_t shapes[][3] = {{4, 6, 0}, {6, 4, 0}, {3, 4, 5}, {0, 3, 0}, {5, 5, 2}};
    static const int nds[] = {2, 2, 3, 2, 3};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int s = 0; s < 5; s++) {
            ref_arr *ra = ndt_rand_small(&r, dts[t].in, nds[s], shapes[s]);
            nd_array *a = ndt_upload(ra);
            nd_array *g = nd_trace(a);
            int64_t n = shapes[s][0] < shapes[s][1] ? shapes[s][0] : shapes[s][1];
            int64_t rest = nds[s] == 3 ? shapes[s][2] : 1;
            ref_arr *w = ref_new(dts[t].out, nds[s] - 2, shapes[s] + 2);
            double *sc = calloc((size_t)rest, sizeof *sc);
            for (int64_t k = 0; k < rest; k++) {
                double acc = 0;
                uint64_t iacc = 0;
                for (int64_t i = 0; i < n; i++) {
                    int64_t f = (i * shapes[s][1] + i) * rest + k;
                    acc += ref_getd(ra, f);
                    iacc += ref_getu(ra, f);
                    sc[k] += fabs(ref_getd(ra, f));
                }
                if (ref_is_float(dts[t].out)) ref_setd(w, k, acc);
                else ref_setu(w, k, iacc);
            }
            double rt = ndt_rtol(dts[t].out);
            ndt_check(g, w, rt, rt, sc, "trace(%s %d-d (%lld,%lld))", ref_dtype_name(dts[t].in),
                      nds[s], (long long)shapes[s][0], (long long)shapes[s][1]);
            free(sc);
            nd_free(a); nd_free(g);
            ref_free(ra); ref_free(w);
        }
    /* views as input: a transpose and a flip (anti-diagonal) */
    const double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    nd_array *m = nd_from_host(v, ND_FLOAT64, ND_SHAPE(3, 3));
    nd_array *mt = nd_transpose(m, NULL), *mf = nd_fliplr(m);
    nd_array *t1 = nd_trace(mt), *t2 = nd_trace(mf);
    cr_expect_eq(nd_item(t1), 15.0, "trace(m.T)");
    cr_expect_eq(nd_item(t2), 15.0, "trace(fliplr(m)) = 3 + 5 + 7");
    nd_array *s = nd_scalar(1.0), *v1 = nd_zeros(ND_INT8, ND_SHAPE(4));
    cr_expect_null(nd_trace(s));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_trace");
    cr_expect_null(nd_trace(v1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_trace");
    cr_expect_null(nd_trace(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_trace");
    nd_free(m); nd_free(mt); nd_free(mf); nd_free(t1); nd_free(t2); nd_free(s); nd_free(v1);
}

/* ---------------------------------------------------------------- viewf */

NDT_TEST(shaping_views, viewf_matches_view_of_the_formatted_string) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT32, ND_SHAPE(6, 7), -1000, 1000);
    nd_array *a = ndt_upload(ra);
    for (int i = -6; i < 6; i++)
        for (long long n = 0; n < 8; n += 3) {
            nd_array *g = nd_viewf(a, "%d:, :%lld", i, n);
            char idx[64];
            snprintf(idx, sizeof idx, "%d:, :%lld", i, n);
            nd_array *w = nd_view(a, idx);
            ref_arr *rw = ndt_download(w);
            ndt_check(g, rw, 0, 0, NULL, "viewf(\"%%d:, :%%lld\", %d, %lld)", i, n);
            nd_free(g); nd_free(w);
            ref_free(rw);
        }
    /* a loop writing row i through viewf */
    for (int i = 0; i < 6; i++) {
        nd_array *row = nd_viewf(a, "%d, ::%d", i, i + 1);
        cr_assert(row, "%s", nd_last_error());
        cr_assert_eq(nd_fill(row, i), ND_OK, "%s", nd_last_error());
        nd_free(row);
        for (int j = 0; j < 7; j += i + 1) ref_setd(ra, i * 7 + j, i);
    }
    ndt_check(a, ra, 0, 0, NULL, "a after viewf writes");
    /* no arguments, strings and ellipsis */
    nd_array *all = nd_viewf(a, "...");
    ndt_check(all, ra, 0, 0, NULL, "viewf(\"...\")");
    nd_array *t = nd_viewf(a, "%s, %s", "::-1", "None");
    cr_expect(t && nd_ndim(t) == 3 && nd_shape(t)[1] == 1, "viewf with %%s items");
    nd_free(a); nd_free(all); nd_free(t);
    ref_free(ra);
}

NDT_TEST(shaping_views, viewf_errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4));
    cr_expect_null(nd_viewf(a, "%d", 7));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "nd_viewf"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_viewf");
    cr_expect_null(nd_viewf(a, "%d:%s", 1, "x"));
    m = nd_last_error();
    cr_expect(m && strstr(m, "\"1:x\""), "message names the formatted index: %s", m);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_viewf");
    cr_expect_null(nd_viewf(a, "%600s", ""));
    m = nd_last_error();
    cr_expect(m && strstr(m, "600 characters"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_viewf");
    const char *nofmt = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    cr_expect_null(nd_viewf(a, nofmt));
#pragma GCC diagnostic pop
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_viewf");
    cr_expect_null(nd_viewf(NULL, "%d", 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_viewf");
    nd_free(a);
}

/* A loop over the rows (and columns) of a matrix, each step a kernel over
 * one view: every row's kernel is the same code at another address, so the
 * loop compiles one kernel per form and none after its first steps (the
 * scheduler moves a view's offset into the slot's address:
 * src/scheduler/kernel_rebase.h). Compiling per row made this 3 x 12
 * compiles (NVRTC's on CUDA, tens of milliseconds each). Rows of 3001
 * float32 elements start at every alignment, so the CUDA backend's vector
 * variant is taken for some rows and not others; a shifted pair of loads
 * of one row (x[i, 1:] and x[i, :-1]) keeps its relative offset, and a
 * write through the row views lands where NumPy's would. A fresh cache
 * directory and compiles before the first launch (ND_CPU_JIT=sync,
 * ND_CPU_JIT_MIN=0), as in test_masks. */
NDT_TEST(shaping_views, row_views_share_their_kernels) {
    char dir[512];
    ndt_restart_compiling(dir, sizeof dir, "rows");
    NDT_RNG(r);
    enum { ROWS = 12, COLS = 3001 };
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(ROWS, COLS), -4, 4);
    nd_array *x = ndt_upload(rx);
    nd_array *z = ndt_upload(rx); /* written through its rows */
    nd_sync();
    nd_stats s0, s;
    nd_get_stats(&s0);
    uint64_t half = 0;
    for (int i = 0; i < ROWS; i++) {
        if (i == ROWS / 2) {
            nd_get_stats(&s);
            half = s.kernels_compiled;
        }
        /* x[i] * 3 - 1 */
        nd_array *row = nd_viewf(x, "%d", i);
        nd_array *three = nd_scalar(3), *y3 = nd_mul(row, three);
        nd_array *one = nd_scalar(1), *y = nd_sub(y3, one);
        nd_free(y3);
        nd_free(three);
        nd_free(one);
        ref_arr *w = ref_new(ND_FLOAT32, ND_SHAPE(COLS));
        for (int64_t j = 0; j < COLS; j++) ref_setd(w, j, (float)((float)ref_getd(rx, i * COLS + j) * 3.0f) - 1.0f);
        ndt_check_default(y, w, "x[i] * 3 - 1");
        ref_free(w);
        nd_free(y);
        nd_free(row);
        /* x[i, 1:] + x[i, :-1] */
        nd_array *hi = nd_viewf(x, "%d, 1:", i), *lo = nd_viewf(x, "%d, :-1", i);
        nd_array *d = nd_add(hi, lo);
        w = ref_new(ND_FLOAT32, ND_SHAPE(COLS - 1));
        for (int64_t j = 0; j < COLS - 1; j++)
            ref_setd(w, j, (float)ref_getd(rx, i * COLS + j + 1) + (float)ref_getd(rx, i * COLS + j));
        ndt_check_default(d, w, "x[i, 1:] + x[i, :-1]");
        ref_free(w);
        nd_free(d);
        nd_free(hi);
        nd_free(lo);
        /* z[i] = z[i] * 2 (in place through the row view) */
        nd_array *zr = nd_viewf(z, "%d", i);
        nd_array *two = nd_scalar(2);
        nd_array *twice = nd_mul(zr, two);
        cr_assert_eq(nd_assign(zr, twice), ND_OK, "%s", nd_last_error());
        nd_free(twice);
        nd_free(two);
        nd_free(zr);
        nd_sync();
    }
    nd_get_stats(&s);
    ref_arr *wz = ref_new(ND_FLOAT32, ND_SHAPE(ROWS, COLS));
    for (int64_t j = 0; j < ROWS * COLS; j++) ref_setd(wz, j, (float)ref_getd(rx, j) * 2.0f);
    ndt_check(z, wz, 0, 0, NULL, "z with every row doubled in place");
    ref_free(wz);
    cr_expect_leq(s.kernels_compiled - s0.kernels_compiled, 3, "%llu kernels compiled for 3 forms over %d rows",
                  (unsigned long long)(s.kernels_compiled - s0.kernels_compiled), ROWS);
    cr_expect_eq(s.kernels_compiled, half, "%llu kernels compiled for the last %d rows",
                 (unsigned long long)(s.kernels_compiled - half), ROWS - ROWS / 2);
    nd_free(x);
    nd_free(z);
    ref_free(rx);
    ndt_remove_dir(dir);
}
