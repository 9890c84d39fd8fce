/* Writes into views and their hazards: visibility through the base and other
 * views, in-place Jacobi (NumPy computes the whole right-hand side first),
 * overlapping shifted self-assignment, write-after-read and write-after-write
 * ordering in the lazy graph. */
#include "common.h"

#include <stdlib.h>

NDT_TEST(writes, fill_and_assign_into_views) {
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 8), -10, 10);
    nd_array *base = ndt_upload(rb);
    nd_array *v = nd_view(base, "1:4, 2:6");
    nd_array *w = nd_view(base, "2:5, ::2"); /* overlaps v */
    cr_assert_eq(nd_fill(v, 5), ND_OK, "%s", nd_last_error());
    for (int i = 1; i < 4; i++)
        for (int j = 2; j < 6; j++) ref_setd(rb, i * 8 + j, 5);
    ndt_check(base, rb, 0, 0, NULL, "base after fill(base[1:4, 2:6], 5)");
    ref_arr *ww = ref_strided(rb, 2, (int64_t[]){3, 4}, (int64_t[]){8, 2}, 16);
    ndt_check(w, ww, 0, 0, NULL, "overlapping view sees the fill");
    /* assign a (3,8) array into rows 0,2,4 reversed */
    ref_arr *rs = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(3, 8), -1, 1);
    nd_array *src = ndt_upload(rs);
    nd_array *d = nd_view(base, "::2, ::-1");
    cr_assert_eq(nd_assign(d, src), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 8; j++) ref_setd(rb, (2 * i) * 8 + (7 - j), ref_getd(rs, i * 8 + j));
    ndt_check(base, rb, 0, 0, NULL, "base after base[::2, ::-1] = src");
    ref_free(ww);
    ww = ref_strided(rb, 2, (int64_t[]){3, 4}, (int64_t[]){8, 2}, 16);
    ndt_check(w, ww, 0, 0, NULL, "other view after the assign");
    nd_free(base); nd_free(v); nd_free(w); nd_free(src); nd_free(d);
    ref_free(rb); ref_free(rs); ref_free(ww);
}

NDT_TEST(writes, assign_broadcasts_and_casts) {
    int32_t z[12] = {0};
    nd_array *a = nd_from_host(z, ND_INT32, ND_SHAPE(3, 4));
    double row[4] = {2.7, -2.7, 9.99, -0.5};
    nd_array *src = nd_from_host(row, ND_FLOAT64, ND_SHAPE(4));
    nd_array *top = nd_view(a, ":2");
    cr_assert_eq(nd_assign(top, src), ND_OK, "%s", nd_last_error());
    nd_array *last = nd_view(a, "2");
    nd_array *k = nd_scalar(3.5);
    cr_assert_eq(nd_assign(last, k), ND_OK, "%s", nd_last_error());
    int32_t got[12];
    cr_assert_eq(nd_to_host(a, got, sizeof got), ND_OK, "%s", nd_last_error());
    const int32_t want[12] = {2, -2, 9, 0, 2, -2, 9, 0, 3, 3, 3, 3};
    for (int i = 0; i < 12; i++) cr_expect_eq(got[i], want[i], "element %d: %d vs %d", i, got[i], want[i]);
    nd_free(a); nd_free(src); nd_free(top); nd_free(last); nd_free(k);
}

static void jacobi_ref(double *c, int ny, int nx, int iters) {
    double *t = malloc(sizeof(double) * (size_t)(ny * nx));
    for (int it = 0; it < iters; it++) {
        memcpy(t, c, sizeof(double) * (size_t)(ny * nx));
        for (int i = 1; i < ny - 1; i++)
            for (int j = 1; j < nx - 1; j++)
                c[i * nx + j] = 0.2 * (t[i * nx + j] + t[(i - 1) * nx + j] + t[(i + 1) * nx + j] +
                                       t[i * nx + j - 1] + t[i * nx + j + 1]);
    }
    free(t);
}

static void jacobi(nd_dtype dt, int iters, int sync_each) {
    enum { NY = 10, NX = 12 };
    NDT_RNG(r);
    ref_arr *rc = ndt_rand(&r, dt, ND_SHAPE(NY, NX), -1, 1);
    nd_array *c = ndt_upload(rc);
    for (int it = 0; it < iters; it++) {
        nd_scope_begin();
        nd_array *center = nd_view(c, "1:-1, 1:-1");
        nd_array *s = nd_add(center, nd_view(c, ":-2, 1:-1"));
        s = nd_add(s, nd_view(c, "2:, 1:-1"));
        s = nd_add(s, nd_view(c, "1:-1, :-2"));
        s = nd_add(s, nd_view(c, "1:-1, 2:"));
        nd_array *rhs = nd_mul(nd_scalar(0.2), s);
        cr_assert(rhs, "building the stencil failed: %s", nd_last_error());
        cr_assert_eq(nd_assign(center, rhs), ND_OK, "%s", nd_last_error());
        nd_scope_end();
        if (sync_each) cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    }
    double g[NY * NX];
    for (int i = 0; i < NY * NX; i++) g[i] = ref_getd(rc, i);
    jacobi_ref(g, NY, NX, iters);
    ref_arr *want = ref_from_doubles(dt, 2, (int64_t[]){NY, NX}, g);
    double tol = dt == ND_FLOAT64 ? 1e-12 : 1e-5;
    ndt_check(c, want, tol, tol, NULL, "in-place Jacobi, %d iterations, %s%s", iters,
              ref_dtype_name(dt), sync_each ? ", sync each" : "");
    nd_free(c);
    ref_free(rc);
    ref_free(want);
}

NDT_TEST(writes, inplace_jacobi_float64) { jacobi(ND_FLOAT64, 6, 0); }
NDT_TEST(writes, inplace_jacobi_float32_sync_each) { jacobi(ND_FLOAT32, 4, 1); }

NDT_TEST(writes, shifted_self_assignment) {
    nd_array *x = nd_arange(ND_INT32, 0, 10, 1);
    nd_array *dst = nd_view(x, "1:"), *src = nd_view(x, ":-1");
    cr_assert_eq(nd_assign(dst, src), ND_OK, "%s", nd_last_error());
    int32_t got[10];
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_OK, "%s", nd_last_error());
    const int32_t w1[10] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 10; i++) cr_expect_eq(got[i], w1[i], "x[1:] = x[:-1]: x[%d] = %d, NumPy gives %d", i, got[i], w1[i]);
    nd_array *y = nd_arange(ND_FLOAT32, 0, 10, 1);
    nd_array *d2 = nd_view(y, ":-1"), *s2 = nd_view(y, "1:");
    cr_assert_eq(nd_assign(d2, s2), ND_OK, "%s", nd_last_error());
    float gy[10];
    cr_assert_eq(nd_to_host(y, gy, sizeof gy), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 10; i++) cr_expect_eq(gy[i], i < 9 ? i + 1 : 9, "x[:-1] = x[1:]: x[%d] = %g", i, gy[i]);
    nd_array *z = nd_arange(ND_INT64, 0, 7, 1), *zr = nd_view(z, "::-1");
    cr_assert_eq(nd_assign(z, zr), ND_OK, "%s", nd_last_error());
    int64_t gz[7];
    cr_assert_eq(nd_to_host(z, gz, sizeof gz), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 7; i++) cr_expect_eq(gz[i], 6 - i, "x[:] = x[::-1]: x[%d] = %lld", i, (long long)gz[i]);
    nd_free(x); nd_free(dst); nd_free(src); nd_free(y); nd_free(d2); nd_free(s2); nd_free(z); nd_free(zr);
}

NDT_TEST(writes, write_after_read) {
    nd_scope_begin(); /* releases the scalars made inline */
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(5, 4), -3, 3);
    nd_array *x = ndt_upload(ra);
    nd_array *e = nd_mul(x, nd_scalar(2.0));           /* reads x (lazy) */
    nd_array *head = nd_view(x, ":2");
    nd_array *h1 = nd_add(head, nd_scalar(1.0));        /* reads rows 0-1 */
    cr_assert_eq(nd_fill(x, 5), ND_OK, "%s", nd_last_error()); /* then overwrite x */
    nd_array *after = nd_add(x, nd_scalar(1.0));        /* reads the new x */
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *w2 = ref_new(ND_FLOAT32, 2, ra->shape), *w1 = ref_new(ND_FLOAT32, 2, (int64_t[]){2, 4});
    for (int64_t i = 0; i < ra->size; i++) ref_setd(w2, i, 2.0 * ref_getd(ra, i));
    for (int64_t i = 0; i < 8; i++) ref_setd(w1, i, ref_getd(ra, i) + 1.0);
    ndt_check(e, w2, 1e-6, 0, NULL, "x*2 recorded before x was overwritten sees the old x");
    ndt_check(h1, w1, 1e-6, 0, NULL, "x[:2]+1 recorded before the fill sees the old x");
    ref_arr *w6 = ref_new(ND_FLOAT32, 2, ra->shape);
    for (int64_t i = 0; i < ra->size; i++) ref_setd(w6, i, 6);
    ndt_check(after, w6, 0, 0, NULL, "x+1 recorded after the fill sees the new x");
    nd_free(x); nd_free(e); nd_free(head); nd_free(h1); nd_free(after);
    ref_free(ra); ref_free(w2); ref_free(w1); ref_free(w6);
    nd_scope_end();
}

NDT_TEST(writes, write_after_write_order) {
    nd_array *x = nd_zeros(ND_INT16, ND_SHAPE(4, 4));
    nd_array *a = nd_view(x, "1:3, 1:3"), *b = nd_view(x, "2:, 2:"), *col = nd_view(x, ":, 0");
    cr_assert_eq(nd_fill(x, 1), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_fill(a, 2), ND_OK, "%s", nd_last_error());
    nd_array *snap = nd_copy(x);                          /* between the writes */
    cr_assert_eq(nd_fill(b, 3), ND_OK, "%s", nd_last_error());
    int16_t c4[4] = {7, 8, 9, 10};
    nd_array *cv = nd_from_host(c4, ND_INT16, ND_SHAPE(4));
    cr_assert_eq(nd_assign(col, cv), ND_OK, "%s", nd_last_error());
    int16_t g[16], s[16];
    cr_assert_eq(nd_to_host(x, g, sizeof g), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(snap, s, sizeof s), ND_OK, "%s", nd_last_error());
    const int16_t want[16] = {7, 1, 1, 1, 8, 2, 2, 1, 9, 2, 3, 3, 10, 1, 3, 3};
    const int16_t wsnap[16] = {1, 1, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 1, 1, 1};
    for (int i = 0; i < 16; i++) {
        cr_expect_eq(g[i], want[i], "final x[%d] = %d, want %d", i, g[i], want[i]);
        cr_expect_eq(s[i], wsnap[i], "snapshot[%d] = %d, want %d", i, s[i], wsnap[i]);
    }
    nd_free(x); nd_free(a); nd_free(b); nd_free(col); nd_free(snap); nd_free(cv);
}

/* A weak scalar is read-only, and so is every view of it:
 * ops read its value from the handle, so a write into its buffer would make
 * nd_to_host disagree with nd_item and every op. Each write is ND_ERR_ARG
 * naming the function and "read-only", and leaves every reading as before. */
NDT_TEST(writes, weak_scalars_and_their_views_are_read_only) {
    NDT_RNG(r);
    const double v = ndt_uniform(&r, -100, 100);
    const int64_t vi = ndt_int(&r, -1000, 1000);
    nd_array *s = nd_scalar(v), *si = nd_scalar_int(vi);
    nd_array *views[4] = {nd_view(s, "..."), nd_view(s, "None"), nd_view(si, "..."), NULL};
    views[3] = nd_view(views[1], "0"); /* a view of a view */
    for (int i = 0; i < 4; i++) cr_assert(views[i], "%s", nd_last_error());
    nd_array *five = nd_full(ND_FLOAT64, ND_SCALAR_SHAPE, 5);
    nd_array *targets[6] = {s, si, views[0], views[1], views[2], views[3]};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(nd_fill(targets[i], 5), ND_ERR_ARG, "nd_fill into target %d", i);
        cr_expect(strstr(nd_last_error(), "nd_fill") && strstr(nd_last_error(), "read-only") &&
                      strstr(nd_last_error(), "nd_full"),
                  "target %d: '%s'", i, nd_last_error());
        nd_clear_error();
        cr_expect_eq(nd_assign(targets[i], five), ND_ERR_ARG, "nd_assign into target %d", i);
        cr_expect(strstr(nd_last_error(), "nd_assign") && strstr(nd_last_error(), "read-only"),
                  "target %d: '%s'", i, nd_last_error());
        nd_clear_error();
    }
    /* Every reading still sees the scalar's value. */
    cr_expect_eq(nd_item(s), v);
    cr_expect_eq(nd_item(views[0]), v);
    cr_expect_eq(nd_item(views[2]), (double)vi);
    double host = 0;
    cr_expect_eq(nd_to_host(views[3], &host, sizeof host), ND_OK, "%s", nd_last_error());
    cr_expect_eq(host, v, "nd_to_host of a view of nd_scalar(%g) read %g", v, host);
    nd_array *twice = nd_add(views[0], s);
    cr_expect_eq(nd_item(twice), v + v);
    /* The fixes the message names work: nd_copy and nd_full are writable. */
    nd_array *c = nd_copy(s);
    cr_expect_eq(nd_fill(c, 5), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_item(c), 5.0);
    cr_expect_eq(nd_item(s), v, "filling nd_copy(s) changed s");
    cr_expect_eq(nd_assign(five, s), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_item(five), v);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 4; i++) nd_free(views[i]);
    nd_free(s); nd_free(si); nd_free(five); nd_free(twice); nd_free(c);
}
