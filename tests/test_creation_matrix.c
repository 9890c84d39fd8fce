/* Matrix, range and grid creation: eye, identity, tri, tril, triu, diag,
 * diagonal, *_like, logspace, geomspace, meshgrid, indices. Each result is
 * checked against a reference written here from NumPy's definitions (index
 * loops in C, float64 math on the host), on every backend. */
#include "common.h"

#include <float.h>
#include <stdint.h>


/* ------------------------------------------------------------ eye, tri */

/* eye (tri = 0) or tri (tri = 1): j == i + k or j <= i + k, in 128 bits. */
static ref_arr *band_ref(nd_dtype t, int64_t n, int64_t m, int64_t k, int tri) {
    ref_arr *w = ref_new(t, 2, (int64_t[]){n, m});
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            __int128 ik = (__int128)i + k;
            ref_setd(w, i * m + j, tri ? (j <= ik) : (j == ik));
        }
    return w;
}

NDT_TEST(creation_matrix, eye_and_tri_every_dtype) {
    static const int64_t cases[][4] = {
        /* n, m, k, m as NumPy sees it */
        {4, -1, 0, 4}, {3, 5, 1, 5}, {5, 3, -2, 3}, {3, 3, 7, 3}, {3, 3, -7, 3}, {0, -1, 0, 0},
        {3, 0, 0, 0},  {1, 1, 0, 1}, {2, 4, INT64_MAX, 4}, {2, 4, INT64_MIN, 4}, {4, 6, -3, 6},
    };
    for (int d = 0; d < NDT_NUM_DTYPES; d++) {
        nd_dtype t = ndt_all_dtypes[d];
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const int64_t n = cases[c][0], m = cases[c][1], k = cases[c][2], mm = cases[c][3];
            nd_array *e = nd_eye(t, n, m, k), *tr = nd_tri(t, n, m, k);
            ref_arr *we = band_ref(t, n, mm, k, 0), *wt = band_ref(t, n, mm, k, 1);
            ndt_check(e, we, 0, 0, NULL, "eye(%lld, %lld, %lld, %s)", (long long)n, (long long)m,
                      (long long)k, ref_dtype_name(t));
            ndt_check(tr, wt, 0, 0, NULL, "tri(%lld, %lld, %lld, %s)", (long long)n,
                      (long long)m, (long long)k, ref_dtype_name(t));
            nd_free(e);
            nd_free(tr);
            ref_free(we);
            ref_free(wt);
        }
        nd_array *id = nd_identity(t, 5);
        ref_arr *wi = band_ref(t, 5, 5, 0, 0);
        ndt_check(id, wi, 0, 0, NULL, "identity(5, %s)", ref_dtype_name(t));
        nd_free(id);
        ref_free(wi);
    }
}

NDT_TEST(creation_matrix, eye_is_writable_and_fuses_into_its_consumer) {
    /* A fresh array: writes go to it alone. */
    nd_array *e = nd_eye(ND_FLOAT32, 3, -1, 0);
    nd_array *row = nd_view(e, "1");
    cr_assert_eq(nd_fill(row, 5), ND_OK, "%s", nd_last_error());
    float got[9];
    cr_assert_eq(nd_to_host(e, got, sizeof got), ND_OK, "%s", nd_last_error());
    const float want[9] = {1, 0, 0, 5, 5, 5, 0, 0, 1};
    for (int i = 0; i < 9; i++) cr_expect_eq(got[i], want[i], "eye after row fill [%d]", i);
    nd_free(row);
    nd_free(e);
    /* eye(n) * x summed: the mask, the product and the sum are one kernel
     * (two ARANGEs, a subtraction and a comparison inlined), and only the
     * sum goes to memory. */
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 6), -4, 4);
    nd_array *x = ndt_upload(rx);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    nd_array *s = nd_keep(nd_sum(nd_mul(nd_eye(ND_FLOAT64, 6, -1, 0), x), ND_ALL_AXES));
    nd_scope_end();
    cr_assert(s, "%s", nd_last_error());
    double tr = 0;
    for (int i = 0; i < 6; i++) tr += ref_getd(rx, i * 7);
    cr_expect_float_eq(nd_item(s), tr, 1e-12, "sum(eye * x) is the trace");
    nd_get_stats(&after);
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "sum(eye(6) * x) took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    cr_expect_eq(after.values_materialised - before.values_materialised, 1,
                 "%llu values went to memory, want only the sum",
                 (unsigned long long)(after.values_materialised - before.values_materialised));
    nd_free(s);
    nd_free(x);
    ref_free(rx);
}

NDT_TEST(creation_matrix, eye_tri_errors) {
    cr_expect_null(nd_eye(ND_FLOAT32, -1, -1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_eye");
    cr_expect_null(nd_eye(ND_FLOAT32, 3, -2, 0));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "m = -2") && strstr(m, "-1 for m = n"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_eye");
    cr_expect_null(nd_eye((nd_dtype)99, 3, 3, 0));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_eye");
    cr_expect_null(nd_identity(ND_INT8, -4));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_identity");
    cr_expect_null(nd_tri(ND_BOOL, 2, -5, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_tri");
    cr_expect_null(nd_eye(ND_FLOAT64, INT64_MAX / 2, INT64_MAX / 2, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_eye");
}

/* ------------------------------------------------------------ tril, triu */

/* tril/triu of a (any ndim >= 1): a 1-d a of length n gives (n, n). */
static ref_arr *triangle_ref(const ref_arr *a, int64_t k, int upper) {
    int nd = a->ndim;
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    if (nd == 1) {
        nd = 2;
        shape[1] = shape[0];
    }
    ref_arr *w = ref_new(a->dt, nd, shape);
    int64_t idx[ND_MAX_DIMS];
    for (int64_t f = 0; f < w->size; f++) {
        ref_unravel(f, nd, shape, idx);
        __int128 i = idx[nd - 2], j = idx[nd - 1];
        int keep = upper ? j >= i + k : j <= i + k;
        int64_t src = a->ndim == 1 ? idx[1] : f;
        if (keep) ref_cast_elem(w, f, a, src);
    }
    return w;
}

static void check_triangles(nd_array *x, const ref_arr *rx, const char *what) {
    static const int64_t ks[] = {0, 1, -1, 2, -3, 50, -50, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int upper = 0; upper < 2; upper++) {
            nd_array *g = upper ? nd_triu(x, ks[i]) : nd_tril(x, ks[i]);
            ref_arr *w = triangle_ref(rx, ks[i], upper);
            ndt_check(g, w, 0, 0, NULL, "%s(%s, k=%lld)", upper ? "triu" : "tril", what,
                      (long long)ks[i]);
            nd_free(g);
            ref_free(w);
        }
}

NDT_TEST(creation_matrix, tril_triu_dtypes_shapes_and_views) {
    NDT_RNG(r);
    static const nd_dtype dts[] = {ND_FLOAT32, ND_INT8, ND_BOOL, ND_UINT64, ND_FLOAT16,
                                   ND_FLOAT64};
    static const int64_t shapes[][3] = {{2, 3, 4}, {4, 3, 0}, {1, 5, 2}};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (size_t s = 0; s < 3; s++) {
            ref_arr *ra = ndt_rand_small(&r, dts[d], 3, shapes[s]);
            nd_array *a = ndt_upload(ra);
            check_triangles(a, ra, ref_dtype_name(dts[d]));
            nd_free(a);
            ref_free(ra);
        }
        /* 1-d: (n, n), each row a copy of a */
        ref_arr *r1 = ndt_rand_small(&r, dts[d], ND_SHAPE(5));
        nd_array *a1 = ndt_upload(r1);
        check_triangles(a1, r1, "1-d");
        nd_free(a1);
        ref_free(r1);
    }
    /* views as input: a transpose, a flipped slice, a broadcast */
    ref_arr *ra = ndt_rand(&r, ND_INT32, ND_SHAPE(4, 5), -50, 50);
    nd_array *a = ndt_upload(ra);
    nd_array *t = nd_transpose(a, NULL);
    ref_arr *rt = ref_transpose(ra, NULL);
    check_triangles(t, rt, "a.T");
    nd_array *v = nd_view(a, "::-1, 1::2");
    ref_arr *rv = ref_strided(ra, 2, (int64_t[]){4, 2}, (int64_t[]){-5, 2}, 16);
    check_triangles(v, rv, "a[::-1, 1::2]");
    nd_array *b = nd_broadcast_to(a, ND_SHAPE(3, 4, 5));
    ref_arr *rb = ref_broadcast_to(ra, 3, (int64_t[]){3, 4, 5});
    check_triangles(b, rb, "broadcast (3,4,5)");
    /* the result is a new array: writing it leaves a alone */
    nd_array *l = nd_tril(a, 0);
    cr_assert_eq(nd_fill(l, 9), ND_OK, "%s", nd_last_error());
    ndt_check(a, ra, 0, 0, NULL, "a after writing tril(a)");
    nd_free(l);
    nd_free(a); nd_free(t); nd_free(v); nd_free(b);
    ref_free(ra); ref_free(rt); ref_free(rv); ref_free(rb);
}

NDT_TEST(creation_matrix, tril_keeps_nan_and_negative_zero) {
    const double v[6] = {NAN, -0.0, INFINITY, -INFINITY, NAN, -0.0};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(2, 3));
    double g[6];
    nd_array *l = nd_tril(a, 0), *u = nd_triu(a, 1);
    cr_assert_eq(nd_to_host(l, g, sizeof g), ND_OK, "%s", nd_last_error());
    /* tril: [[nan, 0, 0], [-inf, nan, 0]] with +0 where masked */
    cr_expect(isnan(g[0]) && g[1] == 0 && !signbit(g[1]) && g[2] == 0 && g[3] == -INFINITY &&
              isnan(g[4]) && g[5] == 0 && !signbit(g[5]), "tril: %g %g %g %g %g %g", g[0], g[1],
              g[2], g[3], g[4], g[5]);
    cr_assert_eq(nd_to_host(u, g, sizeof g), ND_OK, "%s", nd_last_error());
    /* triu(k=1): [[0, -0, inf], [0, 0, -0]] */
    cr_expect(g[0] == 0 && !signbit(g[0]) && g[1] == 0 && signbit(g[1]) && g[2] == INFINITY &&
              g[3] == 0 && g[4] == 0 && !signbit(g[4]) && g[5] == 0 && signbit(g[5]),
              "triu: %g %g %g %g %g %g", g[0], g[1], g[2], g[3], g[4], g[5]);
    nd_free(a); nd_free(l); nd_free(u);
}

NDT_TEST(creation_matrix, tril_triu_errors) {
    nd_array *s = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 1);
    cr_expect_null(nd_tril(s, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_tril");
    cr_expect_null(nd_triu(s, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_triu");
    nd_array *w = nd_scalar(2.0);
    cr_expect_null(nd_triu(w, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_triu");
    cr_expect_null(nd_tril(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_tril");
    nd_free(s);
    nd_free(w);
}

/* ------------------------------------------------------ diag, diagonal */

NDT_TEST(creation_matrix, diag_of_1d_builds_a_matrix) {
    NDT_RNG(r);
    static const int64_t ks[] = {0, 2, -3, 1};
    for (size_t c = 0; c < 4; c++) {
        const int64_t k = ks[c], N = 4 + (k < 0 ? -k : k);
        ref_arr *rv = ndt_rand(&r, c == 3 ? ND_INT16 : ND_FLOAT64, ND_SHAPE(4), -9, 9);
        nd_array *v = ndt_upload(rv);
        nd_array *m = nd_diag(v, k);
        ref_arr *w = ref_new(rv->dt, 2, (int64_t[]){N, N});
        for (int64_t i = 0; i < 4; i++) {
            int64_t row = k >= 0 ? i : i - k, col = k >= 0 ? i + k : i;
            ref_cast_elem(w, row * N + col, rv, i);
        }
        ndt_check(m, w, 0, 0, NULL, "diag(v, %lld)", (long long)k);
        /* a new array: writing it leaves v alone */
        cr_assert_eq(nd_fill(m, 1), ND_OK, "%s", nd_last_error());
        ndt_check(v, rv, 0, 0, NULL, "v after writing diag(v)");
        nd_free(v); nd_free(m);
        ref_free(rv); ref_free(w);
    }
    /* a reversed, strided view as v; an empty v */
    const float vals[6] = {1, 2, 3, 4, 5, 6};
    nd_array *base = nd_from_host(vals, ND_FLOAT32, ND_SHAPE(6));
    nd_array *rev = nd_view(base, "::-2"); /* 6, 4, 2 */
    nd_array *m = nd_diag(rev, -1);
    float g[16];
    cr_assert_eq(nd_to_host(m, g, sizeof g), ND_OK, "%s", nd_last_error());
    const float want[16] = {0, 0, 0, 0, 6, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2, 0};
    for (int i = 0; i < 16; i++) cr_expect_eq(g[i], want[i], "diag(v[::-2], -1)[%d] = %g", i, g[i]);
    nd_array *empty = nd_view(base, "3:3");
    nd_array *z = nd_diag(empty, 2);
    ref_arr *wz = ref_new(ND_FLOAT32, 2, (int64_t[]){2, 2});
    ndt_check(z, wz, 0, 0, NULL, "diag(empty, 2) is (2,2) zeros");
    nd_free(base); nd_free(rev); nd_free(m); nd_free(empty); nd_free(z);
    ref_free(wz);
}

/* Reference diagonal: axes a1, a2 removed, diagonal last. */
static ref_arr *diagonal_ref(const ref_arr *a, int64_t off, int a1, int a2) {
    int nd = a->ndim;
    if (a1 < 0) a1 += nd;
    if (a2 < 0) a2 += nd;
    int64_t shape[ND_MAX_DIMS];
    int o = 0;
    for (int d = 0; d < nd; d++)
        if (d != a1 && d != a2) shape[o++] = a->shape[d];
    int64_t len = 0;
    for (int64_t i = 0; i < a->shape[a1]; i++)
        if (i + off >= 0 && i + off < a->shape[a2]) len++;
    shape[o++] = len;
    ref_arr *w = ref_new(a->dt, o, shape);
    int64_t idx[ND_MAX_DIMS], src[ND_MAX_DIMS];
    for (int64_t f = 0; f < w->size; f++) {
        ref_unravel(f, o, shape, idx);
        int64_t t = idx[o - 1], row = off >= 0 ? t : t - off;
        for (int d = 0, j = 0; d < nd; d++)
            src[d] = d == a1 ? row : d == a2 ? row + off : idx[j++];
        ref_cast_elem(w, f, a, ref_ravel(src, nd, a->shape));
    }
    return w;
}

NDT_TEST(creation_matrix, diagonal_views_every_axis_pair) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT32, ND_SHAPE(2, 3, 4), -1000, 1000);
    nd_array *a = ndt_upload(ra);
    static const int cases[][3] = {{0, 0, 1}, {1, 2, 0}, {-1, -1, -3}, {2, 1, 2}, {0, 2, 1},
                                   {-2, 0, 2}, {3, 1, 2}, {4, 1, 2}, {-3, 1, 2}, {7, 0, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array *d = nd_diagonal(a, cases[c][0], cases[c][1], cases[c][2]);
        ref_arr *w = diagonal_ref(ra, cases[c][0], cases[c][1], cases[c][2]);
        ndt_check(d, w, 0, 0, NULL, "diagonal(a, %d, %d, %d)", cases[c][0], cases[c][1],
                  cases[c][2]);
        nd_free(d);
        ref_free(w);
    }
    /* diag of 2-d is diagonal(v, k, 0, 1), also for k beyond the matrix */
    nd_array *m = nd_view(a, "1");
    ref_arr *rm = ref_strided(ra, 2, (int64_t[]){3, 4}, (int64_t[]){4, 1}, 12);
    static const int64_t ks[] = {0, 1, 3, 4, -1, -2, -3, 100, -100, INT64_MAX, INT64_MIN};
    for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
        nd_array *d = nd_diag(m, ks[c]);
        ref_arr *w = diagonal_ref(rm, ks[c] > 100 ? 100 : ks[c] < -100 ? -100 : ks[c], 0, 1);
        ndt_check(d, w, 0, 0, NULL, "diag(a[1], %lld)", (long long)ks[c]);
        nd_free(d);
        ref_free(w);
    }
    /* a view of a transposed view */
    nd_array *t = nd_transpose(a, NULL);
    ref_arr *rt = ref_transpose(ra, NULL);
    nd_array *dt = nd_diagonal(t, -1, 0, 2);
    ref_arr *wt = diagonal_ref(rt, -1, 0, 2);
    ndt_check(dt, wt, 0, 0, NULL, "diagonal(a.T, -1, 0, 2)");
    nd_free(a); nd_free(m); nd_free(t); nd_free(dt);
    ref_free(ra); ref_free(rm); ref_free(rt); ref_free(wt);
}

NDT_TEST(creation_matrix, diagonal_writes_reach_the_base) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4));
    nd_array *d = nd_diagonal(a, 1, 0, 1); /* (0,1), (1,2), (2,3) */
    const float src[3] = {1, 2, 3};
    nd_array *s = nd_from_host(src, ND_FLOAT32, ND_SHAPE(3));
    cr_assert_eq(nd_assign(d, s), ND_OK, "%s", nd_last_error());
    nd_array *d2 = nd_diag(a, -1); /* (1,0), (2,1) */
    cr_assert_eq(nd_fill(d2, -5), ND_OK, "%s", nd_last_error());
    float g[12];
    cr_assert_eq(nd_to_host(a, g, sizeof g), ND_OK, "%s", nd_last_error());
    const float want[12] = {0, 1, 0, 0, -5, 0, 2, 0, 0, -5, 0, 3};
    for (int i = 0; i < 12; i++) cr_expect_eq(g[i], want[i], "a[%d] = %g after diagonal writes", i, g[i]);
    /* the view reads the new values */
    float gd[3];
    cr_assert_eq(nd_to_host(d, gd, sizeof gd), ND_OK, "%s", nd_last_error());
    cr_expect(gd[0] == 1 && gd[1] == 2 && gd[2] == 3, "diagonal reads back");
    /* a broadcast input gives a read-only view */
    nd_array *b = nd_broadcast_to(s, ND_SHAPE(3, 3));
    nd_array *db = nd_diagonal(b, 0, 0, 1);
    cr_assert(db, "%s", nd_last_error());
    float gb[3];
    cr_assert_eq(nd_to_host(db, gb, sizeof gb), ND_OK, "%s", nd_last_error());
    cr_expect(gb[0] == 1 && gb[1] == 2 && gb[2] == 3, "diagonal of a broadcast");
    cr_expect_eq(nd_fill(db, 1), ND_ERR_ARG, "writing the diagonal of a broadcast");
    nd_clear_error();
    nd_free(a); nd_free(d); nd_free(s); nd_free(d2); nd_free(b); nd_free(db);
}

NDT_TEST(creation_matrix, diag_diagonal_errors) {
    nd_array *a3 = nd_zeros(ND_FLOAT32, ND_SHAPE(2, 3, 4)), *a1 = nd_zeros(ND_INT8, ND_SHAPE(3));
    nd_array *s = nd_scalar(1.0);
    cr_expect_null(nd_diag(a3, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_diag");
    cr_expect_null(nd_diag(s, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_diag");
    cr_expect_null(nd_diag(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diag");
    cr_expect_null(nd_diag(a1, INT64_MIN));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_diag");
    cr_expect_null(nd_diag(a1, INT64_MAX - 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_diag");
    cr_expect_null(nd_diagonal(a1, 0, 0, 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_diagonal");
    cr_expect_null(nd_diagonal(a3, 0, 0, -3));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "same axis"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diagonal");
    cr_expect_null(nd_diagonal(a3, 0, 3, 1));
    m = nd_last_error();
    cr_expect(m && strstr(m, "axis1 3 is out of range for a 3-d array (use -3..2)"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diagonal");
    cr_expect_null(nd_diagonal(a3, 0, 0, -4));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diagonal");
    nd_free(a3); nd_free(a1); nd_free(s);
}

/* ------------------------------------------------------------ *_like */

NDT_TEST(creation_matrix, like_functions_take_dtype_and_shape) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT16, ND_SHAPE(3, 4), -100, 100);
    nd_array *a = ndt_upload(ra);
    nd_array *t = nd_transpose(a, NULL); /* (4,3) int16 */
    nd_array *z = nd_zeros_like(t), *o = nd_ones_like(t), *f = nd_full_like(t, -7.9);
    nd_array *e = nd_empty_like(t);
    ref_arr *w = ref_new(ND_INT16, 2, (int64_t[]){4, 3});
    ndt_check(z, w, 0, 0, NULL, "zeros_like(a.T)");
    for (int64_t i = 0; i < 12; i++) ref_setd(w, i, 1);
    ndt_check(o, w, 0, 0, NULL, "ones_like(a.T)");
    for (int64_t i = 0; i < 12; i++) ref_setd(w, i, -7); /* truncated, as NumPy */
    ndt_check(f, w, 0, 0, NULL, "full_like(a.T, -7.9)");
    cr_assert(e, "%s", nd_last_error());
    cr_expect(nd_dtype_of(e) == ND_INT16 && nd_ndim(e) == 2 && nd_shape(e)[0] == 4 &&
              nd_shape(e)[1] == 3, "empty_like(a.T) is (4,3) int16");
    /* new arrays: writes leave a alone */
    cr_assert_eq(nd_fill(z, 3), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_fill(e, 3), ND_OK, "%s", nd_last_error());
    ndt_check(a, ra, 0, 0, NULL, "a after writing the _like arrays");
    /* a broadcast and a weak scalar; NaN and -0.0 values */
    nd_array *b = nd_broadcast_to(a, ND_SHAPE(2, 3, 4));
    nd_array *fb = nd_full_like(b, 5);
    ref_arr *wb = ref_new(ND_INT16, 3, (int64_t[]){2, 3, 4});
    for (int64_t i = 0; i < 24; i++) ref_setd(wb, i, 5);
    ndt_check(fb, wb, 0, 0, NULL, "full_like(broadcast (2,3,4), 5)");
    cr_assert_eq(nd_fill(fb, 1), ND_OK, "full_like of a broadcast is writable: %s", nd_last_error());
    nd_array *sf = nd_scalar(2.5), *si = nd_scalar_int(3);
    nd_array *zf = nd_zeros_like(sf), *oi = nd_ones_like(si), *nf = nd_full_like(sf, NAN);
    nd_array *mz = nd_full_like(sf, -0.0);
    cr_assert(zf && oi && nf && mz, "%s", nd_last_error());
    cr_expect(nd_dtype_of(zf) == ND_FLOAT64 && nd_ndim(zf) == 0 && nd_item(zf) == 0, "zeros_like(scalar)");
    cr_expect(nd_dtype_of(oi) == ND_INT64 && nd_ndim(oi) == 0 && nd_item(oi) == 1, "ones_like(scalar_int)");
    cr_expect(isnan(nd_item(nf)), "full_like(scalar, NaN)");
    cr_expect(nd_item(mz) == 0 && signbit(nd_item(mz)), "full_like(scalar, -0.0) keeps the sign");
    nd_array *em = nd_zeros(ND_FLOAT32, ND_SHAPE(0, 3)), *eml = nd_ones_like(em);
    cr_expect(eml && nd_size(eml) == 0 && nd_shape(eml)[1] == 3, "ones_like(empty (0,3))");
    nd_free(a); nd_free(t); nd_free(z); nd_free(o); nd_free(f); nd_free(e); nd_free(b);
    nd_free(fb); nd_free(sf); nd_free(si); nd_free(zf); nd_free(oi); nd_free(nf); nd_free(mz);
    nd_free(em); nd_free(eml);
    ref_free(ra); ref_free(w); ref_free(wb);
}

NDT_TEST(creation_matrix, like_errors) {
    nd_array *u8 = nd_zeros(ND_UINT8, ND_SHAPE(2)), *i8 = nd_zeros(ND_INT8, ND_SHAPE(2));
    cr_expect_null(nd_full_like(i8, 300));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "300") && strstr(m, "int8"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_full_like");
    cr_expect_null(nd_full_like(u8, -1));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_full_like");
    cr_expect_null(nd_full_like(u8, NAN));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_full_like");
    cr_expect_null(nd_zeros_like(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_zeros_like");
    cr_expect_null(nd_ones_like(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ones_like");
    cr_expect_null(nd_empty_like(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_empty_like");
    nd_free(u8);
    cr_expect_null(nd_zeros_like(u8));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_zeros_like");
    nd_free(i8);
}

/* ---------------------------------------------------- logspace, geomspace */

/* NumPy's linspace in float64 with the exact last element. */
static double lin(double start, double stop, int64_t num, int64_t i) {
    if (num > 1 && i == num - 1) return stop;
    double step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    return (double)i * step + start;
}

static ref_arr *logspace_ref(nd_dtype t, double start, double stop, int64_t num, double base) {
    ref_arr *w = ref_new(t, 1, &num);
    for (int64_t i = 0; i < num; i++) ref_setd(w, i, pow(base, lin(start, stop, num, i)));
    return w;
}

/* NumPy 2's geomspace for real start and stop. */
static ref_arr *geomspace_ref(nd_dtype t, double start, double stop, int64_t num) {
    ref_arr *w = ref_new(t, 1, &num);
    double sign = start < 0 ? -1 : 1, s = start / sign, e = stop / sign;
    for (int64_t i = 0; i < num; i++) {
        double v = pow(10.0, lin(log10(s), log10(e), num, i));
        if (i == 0) v = s;
        else if (i == num - 1) v = e;
        ref_setd(w, i, v * sign);
    }
    return w;
}

NDT_TEST(creation_matrix, logspace_matches_numpy) {
    static const struct {
        nd_dtype t;
        double start, stop, base;
        int64_t num;
    } cases[] = {
        {ND_FLOAT64, 0, 2, 10, 3},  {ND_FLOAT64, -3, 1.5, 10, 17}, {ND_FLOAT32, 0, 1, 10, 9},
        {ND_FLOAT64, 0, 2, -2, 3},  {ND_FLOAT64, 1, 0.5, 2, 1},    {ND_FLOAT64, 0, 1, 10, 0},
        {ND_FLOAT64, 2, -2, 0.5, 7}, {ND_FLOAT16, 0, 3, 2, 4},    {ND_FLOAT64, 0, 1.5, -2, 4},
        {ND_FLOAT64, 0.1, 0.7, 2.5, 50},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array *g = nd_logspace(cases[c].t, cases[c].start, cases[c].stop, cases[c].num,
                                  cases[c].base);
        ref_arr *w = logspace_ref(cases[c].t, cases[c].start, cases[c].stop, cases[c].num,
                                  cases[c].base);
        double rt = ndt_rtol(cases[c].t); /* float64: 1e-12, room for a fused multiply-add */
        ndt_check(g, w, rt, 0, NULL, "logspace(%g, %g, %lld, base %g, %s)", cases[c].start,
                  cases[c].stop, (long long)cases[c].num, cases[c].base,
                  ref_dtype_name(cases[c].t));
        nd_free(g);
        ref_free(w);
    }
    /* integer dtypes: exact powers (NumPy: [1, 10, 100, 1000]); 2 ** 0..10 */
    nd_array *g = nd_logspace(ND_INT64, 0, 3, 4, 10);
    int64_t gi[4];
    cr_assert_eq(nd_to_host(g, gi, sizeof gi), ND_OK, "%s", nd_last_error());
    cr_expect(gi[0] == 1 && gi[1] == 10 && gi[2] == 100 && gi[3] == 1000,
              "logspace(0, 3, 4, int64) = %lld %lld %lld %lld", (long long)gi[0],
              (long long)gi[1], (long long)gi[2], (long long)gi[3]);
    nd_free(g);
    g = nd_logspace(ND_UINT16, 0, 10, 11, 2);
    uint16_t gu[11];
    cr_assert_eq(nd_to_host(g, gu, sizeof gu), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 11; i++) cr_expect_eq(gu[i], 1u << i, "logspace base 2 [%d] = %u", i, gu[i]);
    nd_free(g);
    /* non-integral values truncate into an integer dtype: 10 ** 0.5 = 3.16 -> 3 */
    g = nd_logspace(ND_INT32, 0, 1, 3, 10);
    int32_t g3[3];
    cr_assert_eq(nd_to_host(g, g3, sizeof g3), ND_OK, "%s", nd_last_error());
    cr_expect(g3[0] == 1 && g3[1] == 3 && g3[2] == 10, "logspace(0, 1, 3, int32) = %d %d %d",
              g3[0], g3[1], g3[2]);
    nd_free(g);
}

NDT_TEST(creation_matrix, geomspace_exact_endpoints_and_signs) {
    static const struct {
        nd_dtype t;
        double start, stop;
        int64_t num;
    } cases[] = {
        {ND_FLOAT64, 1, 1000, 4},     {ND_FLOAT64, -1, -1000, 4}, {ND_FLOAT64, 0.3, 7.1, 13},
        {ND_FLOAT64, 7.1, 0.3, 13},   {ND_FLOAT64, 2, 2, 3},      {ND_FLOAT64, 5, 0.5, 1},
        {ND_FLOAT64, 5, 0.5, 0},      {ND_FLOAT32, 1e-3, 1e3, 7}, {ND_FLOAT64, -0.1, -1e10, 25},
        {ND_FLOAT64, 1e-300, 1e300, 9}, {ND_FLOAT16, 1, 256, 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array *g = nd_geomspace(cases[c].t, cases[c].start, cases[c].stop, cases[c].num);
        ref_arr *w = geomspace_ref(cases[c].t, cases[c].start, cases[c].stop, cases[c].num);
        double rt = ndt_rtol(cases[c].t);
        ndt_check(g, w, rt, 0, NULL, "geomspace(%g, %g, %lld, %s)", cases[c].start,
                  cases[c].stop, (long long)cases[c].num, ref_dtype_name(cases[c].t));
        /* NumPy sets both endpoints exactly */
        if (cases[c].t == ND_FLOAT64 && cases[c].num > 0) {
            ref_arr *d = ndt_download(g);
            cr_expect_eq(ref_getd(d, 0), cases[c].start, "geomspace first element is start");
            if (cases[c].num > 1)
                cr_expect_eq(ref_getd(d, cases[c].num - 1), cases[c].stop,
                             "geomspace last element is stop exactly: %.17g",
                             ref_getd(d, cases[c].num - 1));
            ref_free(d);
        }
        nd_free(g);
        ref_free(w);
    }
    /* opposite signs: NaN between exact endpoints (NumPy: [-1, nan, 1]) */
    nd_array *g = nd_geomspace(ND_FLOAT64, -1, 1, 3);
    double v[3];
    cr_assert_eq(nd_to_host(g, v, sizeof v), ND_OK, "%s", nd_last_error());
    cr_expect(v[0] == -1 && isnan(v[1]) && v[2] == 1, "geomspace(-1, 1, 3) = %g %g %g", v[0],
              v[1], v[2]);
    nd_free(g);
    /* integer dtype: NumPy gives [1, 10, 100, 1000] */
    g = nd_geomspace(ND_INT32, 1, 1000, 4);
    int32_t gi[4];
    cr_assert_eq(nd_to_host(g, gi, sizeof gi), ND_OK, "%s", nd_last_error());
    cr_expect(gi[0] == 1 && gi[1] == 10 && gi[2] == 100 && gi[3] == 1000,
              "geomspace(1, 1000, 4, int32) = %d %d %d %d", gi[0], gi[1], gi[2], gi[3]);
    nd_free(g);
}

NDT_TEST(creation_matrix, logspace_geomspace_errors) {
    cr_expect_null(nd_logspace(ND_FLOAT32, 0, 1, -1, 10));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_logspace");
    cr_expect_null(nd_logspace(ND_FLOAT32, NAN, 1, 3, 10));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_logspace");
    cr_expect_null(nd_logspace((nd_dtype)-1, 0, 1, 3, 10));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_logspace");
    cr_expect_null(nd_geomspace(ND_FLOAT64, 0, 10, 3));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "cannot include zero"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_geomspace");
    cr_expect_null(nd_geomspace(ND_FLOAT64, 1, -0.0, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_geomspace");
    cr_expect_null(nd_geomspace(ND_FLOAT64, 1, INFINITY, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_geomspace");
    cr_expect_null(nd_geomspace(ND_FLOAT64, 1, 2, -3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_geomspace");
    cr_expect_null(nd_geomspace(ND_NUM_DTYPES, 1, 2, 3));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_geomspace");
}

/* ------------------------------------------------------------ meshgrid */

NDT_TEST(creation_matrix, meshgrid_xy_and_ij) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_INT32, ND_SHAPE(3), -100, 100);
    ref_arr *ry = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(2), -5, 5);
    ref_arr *rz = ndt_rand(&r, ND_UINT8, ND_SHAPE(4), 0, 200);
    nd_array *xi[3] = {ndt_upload(rx), ndt_upload(ry), ndt_upload(rz)};
    const ref_arr *rin[3] = {rx, ry, rz};
    for (int ij = 0; ij < 2; ij++)
        for (int n = 1; n <= 3; n++) {
            nd_array *out[3] = {NULL, NULL, NULL};
            cr_assert_eq(nd_meshgrid(n, xi, ij ? "ij" : (n == 2 ? NULL : "xy"), out), ND_OK,
                         "%s", nd_last_error());
            int64_t shape[3];
            for (int k = 0; k < n; k++) shape[k] = rin[k]->size;
            int swap = !ij && n >= 2;
            if (swap) {
                shape[0] = rin[1]->size;
                shape[1] = rin[0]->size;
            }
            for (int k = 0; k < n; k++) {
                ref_arr *w = ref_new(rin[k]->dt, n, shape);
                int axis = swap && k < 2 ? 1 - k : k;
                int64_t idx[3];
                for (int64_t f = 0; f < w->size; f++) {
                    ref_unravel(f, n, shape, idx);
                    ref_cast_elem(w, f, rin[k], idx[axis]);
                }
                ndt_check(out[k], w, 0, 0, NULL, "meshgrid(n=%d, %s)[%d]", n, ij ? "ij" : "xy", k);
                ref_free(w);
            }
            for (int k = 0; k < n; k++) nd_free(out[k]);
        }
    /* outputs are new arrays: writing one leaves the input alone */
    nd_array *out[2];
    cr_assert_eq(nd_meshgrid(2, xi, "ij", out), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_fill(out[0], 42), ND_OK, "%s", nd_last_error());
    ndt_check(xi[0], rx, 0, 0, NULL, "x after writing meshgrid's output");
    nd_free(out[0]);
    nd_free(out[1]);
    for (int k = 0; k < 3; k++) nd_free(xi[k]);
    ref_free(rx); ref_free(ry); ref_free(rz);
}

NDT_TEST(creation_matrix, meshgrid_flattens_views_and_scalars) {
    const double v[6] = {0, 1, 2, 3, 4, 5};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(2, 3));
    nd_array *at = nd_transpose(a, NULL); /* flattened: 0 3 1 4 2 5 */
    nd_array *s = nd_scalar(7.5);          /* 0-d: one element */
    nd_array *in[2] = {at, s};
    nd_array *out[2];
    cr_assert_eq(nd_meshgrid(2, in, "xy", out), ND_OK, "%s", nd_last_error());
    const double w0[6] = {0, 3, 1, 4, 2, 5};
    ref_arr *r0 = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){1, 6}, w0);
    ref_arr *r1 = ref_new(ND_FLOAT64, 2, (int64_t[]){1, 6});
    for (int i = 0; i < 6; i++) ref_setd(r1, i, 7.5);
    ndt_check(out[0], r0, 0, 0, NULL, "meshgrid(a.T, 7.5)[0]");
    ndt_check(out[1], r1, 0, 0, NULL, "meshgrid(a.T, 7.5)[1]");
    cr_assert_eq(nd_fill(out[1], 1), ND_OK, "the scalar's grid is writable: %s", nd_last_error());
    nd_free(out[0]); nd_free(out[1]);
    ref_free(r0), ref_free(r1);
    /* an empty input makes every output empty */
    nd_array *e = nd_zeros(ND_INT8, ND_SHAPE(0));
    nd_array *in2[2] = {a, e};
    cr_assert_eq(nd_meshgrid(2, in2, "ij", out), ND_OK, "%s", nd_last_error());
    cr_expect(nd_ndim(out[0]) == 2 && nd_shape(out[0])[0] == 6 && nd_shape(out[0])[1] == 0 &&
              nd_dtype_of(out[1]) == ND_INT8, "meshgrid with an empty input");
    nd_free(out[0]); nd_free(out[1]);
    /* n = 0: nothing to do */
    cr_expect_eq(nd_meshgrid(0, NULL, NULL, NULL), ND_OK, "meshgrid of no arrays");
    nd_free(a); nd_free(at); nd_free(s); nd_free(e);
}

NDT_TEST(creation_matrix, meshgrid_errors) {
    nd_array *x = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    nd_array *in[2] = {x, x};
    nd_array *out[9] = {x, x, x, x, x, x, x, x, x}; /* poisoned: must become NULL */
    cr_expect_eq(nd_meshgrid(2, in, "yx", out), ND_ERR_ARG);
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "\"yx\"") && strstr(m, "\"ij\""), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    cr_expect(out[0] == NULL && out[1] == NULL, "outputs are NULL after an error");
    cr_expect_eq(nd_meshgrid(9, in, "ij", out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    cr_expect_eq(nd_meshgrid(-1, in, "ij", out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    cr_expect_eq(nd_meshgrid(2, in, "ij", NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    cr_expect_eq(nd_meshgrid(2, NULL, "ij", out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    nd_array *bad[2] = {x, NULL};
    out[0] = out[1] = x;
    cr_expect_eq(nd_meshgrid(2, bad, "ij", out), ND_ERR_ARG);
    m = nd_last_error();
    cr_expect(m && strstr(m, "xi[1]"), "message names xi[1]: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_meshgrid");
    cr_expect(out[0] == NULL && out[1] == NULL, "outputs are NULL after an error");
    /* a grid too large to count */
    nd_array *big = nd_broadcast_to(x, ND_SHAPE(INT64_C(1) << 40, 3));
    nd_array *in3[3] = {big, big, big};
    cr_expect_eq(nd_meshgrid(3, in3, "ij", out), ND_ERR_SHAPE);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_meshgrid");
    nd_free(big);
    nd_free(x);
}

/* ------------------------------------------------------------ indices */

NDT_TEST(creation_matrix, indices_match_numpy) {
    nd_array *g = nd_indices(ND_INT64, ND_SHAPE(2, 3));
    const double w23[12] = {0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2};
    ref_arr *w = ref_from_doubles(ND_INT64, 3, (int64_t[]){2, 2, 3}, w23);
    ndt_check(g, w, 0, 0, NULL, "indices((2,3))");
    nd_free(g);
    ref_free(w);
    static const int64_t shapes[][3] = {{3, 1, 4}, {2, 0, 3}, {1, 1, 1}};
    static const nd_dtype dts[] = {ND_FLOAT32, ND_INT32, ND_UINT8};
    for (int c = 0; c < 3; c++) {
        g = nd_indices(dts[c], 3, shapes[c]);
        int64_t os[4] = {3, shapes[c][0], shapes[c][1], shapes[c][2]};
        w = ref_new(dts[c], 4, os);
        int64_t idx[4];
        for (int64_t f = 0; f < w->size; f++) {
            ref_unravel(f, 4, os, idx);
            ref_setd(w, f, (double)idx[1 + idx[0]]);
        }
        ndt_check(g, w, 0, 0, NULL, "indices((%lld,%lld,%lld), %s)", (long long)shapes[c][0],
                  (long long)shapes[c][1], (long long)shapes[c][2], ref_dtype_name(dts[c]));
        nd_free(g);
        ref_free(w);
    }
    /* () -> shape (0,); int8 wraps past 127 as NumPy */
    g = nd_indices(ND_INT64, ND_SCALAR_SHAPE);
    cr_assert(g, "%s", nd_last_error());
    cr_expect(nd_ndim(g) == 1 && nd_shape(g)[0] == 0 && nd_dtype_of(g) == ND_INT64, "indices(())");
    nd_free(g);
    g = nd_indices(ND_INT8, ND_SHAPE(200));
    int8_t v[200];
    cr_assert_eq(nd_to_host(g, v, sizeof v), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 200; i++) cr_expect_eq(v[i], (int8_t)(uint8_t)i, "indices int8 [%d] = %d", i, v[i]);
    nd_free(g);
    /* the result is a plain writable array */
    g = nd_indices(ND_INT32, ND_SHAPE(2, 2));
    nd_array *row = nd_view(g, "1, 0");
    cr_assert_eq(nd_fill(row, 9), ND_OK, "%s", nd_last_error());
    int32_t gv[8];
    cr_assert_eq(nd_to_host(g, gv, sizeof gv), ND_OK, "%s", nd_last_error());
    const int32_t wv[8] = {0, 0, 1, 1, 9, 9, 0, 1};
    for (int i = 0; i < 8; i++) cr_expect_eq(gv[i], wv[i], "indices after a write [%d]", i);
    nd_free(row);
    nd_free(g);
}

NDT_TEST(creation_matrix, indices_errors) {
    cr_expect_null(nd_indices(ND_INT64, ND_SHAPE(1, 1, 1, 1, 1, 1, 1, 1)));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, "ndim 8"), "message: %s", m);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_indices");
    cr_expect_null(nd_indices(ND_INT64, ND_SHAPE(2, -1)));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_indices");
    cr_expect_null(nd_indices(ND_INT64, 2, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_indices");
    cr_expect_null(nd_indices((nd_dtype)77, ND_SHAPE(2)));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_indices");
}
