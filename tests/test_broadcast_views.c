/* Broadcasting, index-string views (slices, negative steps, ints, ...,
 * None), transposes and broadcast_to, checked element by element. */
#include "common.h"

static void check_bcast(ndt_rng *r, nd_dtype t, int na, const int64_t *sa, int nb,
                        const int64_t *sb) {
    ref_arr *a = ndt_rand_small(r, t, na, sa), *b = ndt_rand_small(r, t, nb, sb);
    nd_array *x = ndt_upload(a), *y = ndt_upload(b);
    nd_array *z = nd_add(x, y), *w = nd_mul(y, x);
    ref_arr *wz = ref_binary(R_ADD, a, b, t, t), *ww = ref_binary(R_MUL, b, a, t, t);
    cr_assert(wz, "reference says the shapes do not broadcast");
    ndt_check(z, wz, ndt_rtol(t), 0, NULL, "add %dd+%dd (%s)", na, nb, ref_dtype_name(t));
    ndt_check(w, ww, ndt_rtol(t), 0, NULL, "mul %dd*%dd (%s)", nb, na, ref_dtype_name(t));
    nd_free(x); nd_free(y); nd_free(z); nd_free(w);
    ref_free(a); ref_free(b); ref_free(wz); ref_free(ww);
}

NDT_TEST(broadcast, column_plus_row) {
    NDT_RNG(r);
    check_bcast(&r, ND_FLOAT32, ND_SHAPE(3, 1), ND_SHAPE(1, 4));
    check_bcast(&r, ND_INT32, ND_SHAPE(3, 1), ND_SHAPE(1, 4));
    check_bcast(&r, ND_FLOAT64, ND_SHAPE(3, 1), ND_SHAPE(4));
}

NDT_TEST(broadcast, vector_over_3d) {
    NDT_RNG(r);
    check_bcast(&r, ND_FLOAT32, ND_SHAPE(5), ND_SHAPE(2, 3, 5));
    check_bcast(&r, ND_INT16, ND_SHAPE(2, 1, 5), ND_SHAPE(3, 1));
    check_bcast(&r, ND_FLOAT64, ND_SHAPE(1, 1, 1, 4), ND_SHAPE(2, 3, 1, 1));
}

NDT_TEST(broadcast, zero_d) {
    NDT_RNG(r);
    check_bcast(&r, ND_FLOAT32, ND_SCALAR_SHAPE, ND_SHAPE(2, 3));
    check_bcast(&r, ND_INT64, ND_SHAPE(4), ND_SCALAR_SHAPE);
    check_bcast(&r, ND_FLOAT64, ND_SCALAR_SHAPE, ND_SCALAR_SHAPE);
    nd_array *f = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 1.5);
    nd_array *o = nd_ones(ND_FLOAT32, ND_SHAPE(2, 2));
    nd_array *s = nd_add(o, f);
    cr_assert(s, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(f), 0);
    float got[4];
    cr_assert_eq(nd_to_host(s, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(got[i], 2.5f);
    nd_free(f); nd_free(o); nd_free(s);
}

NDT_TEST(broadcast, empty_extent) {
    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(0, 3)), *b = nd_ones(ND_FLOAT32, ND_SHAPE(3));
    nd_array *c = nd_add(a, b);
    cr_assert(c, "%s", nd_last_error());
    cr_expect_eq(nd_size(c), 0);
    cr_expect(nd_ndim(c) == 2 && nd_shape(c)[0] == 0 && nd_shape(c)[1] == 3);
    float dummy = 0;
    cr_expect_eq(nd_to_host(c, &dummy, 0), ND_OK, "%s", nd_last_error());
    nd_free(a); nd_free(b); nd_free(c);
}

typedef struct {
    const char *index;
    int ndim;
    int64_t shape[4];
    int64_t strides[4];
    int64_t offset;
} view_case;

static void check_view(nd_array *base, const ref_arr *rb, const view_case *c) {
    nd_array *v = nd_view(base, c->index);
    cr_assert(v, "nd_view(\"%s\") failed: %s", c->index, nd_last_error());
    ref_arr *want = ref_strided(rb, c->ndim, c->shape, c->strides, c->offset);
    ndt_check(v, want, 0, 0, NULL, "view \"%s\"", c->index);
    if (nd_ndim(v) == c->ndim && nd_strides(v)) {
        for (int d = 0; d < c->ndim; d++)
            if (c->shape[d] > 1)
                cr_expect_eq(nd_strides(v)[d], c->strides[d], "view \"%s\": stride %d is %lld, want %lld",
                             c->index, d, (long long)nd_strides(v)[d], (long long)c->strides[d]);
    }
    ref_free(want);
    nd_free(v);
}

NDT_TEST(views, index_strings_2d) {
    static const view_case cases[] = {
        {"1:-1, ::2", 2, {4, 4}, {8, 2}, 8},
        {"::-1, 3", 1, {6}, {-8}, 43},
        {"..., None", 3, {6, 8, 1}, {8, 1, 0}, 0},
        {"None, 2:5, ...", 3, {1, 3, 8}, {0, 8, 1}, 16},
        {"-1", 1, {8}, {1}, 40},
        {"5:1:-2, 1::3", 2, {2, 3}, {-16, 3}, 41},
        {":, -3:", 2, {6, 3}, {8, 1}, 5},
        {"::-1, ::-1", 2, {6, 8}, {-8, -1}, 47},
        {"2, 3", 0, {0}, {0}, 19},
        {"10:20", 2, {0, 8}, {8, 1}, 0},
        {"...", 2, {6, 8}, {8, 1}, 0},
        {"1, ...", 1, {8}, {1}, 8},
        {"-6:, :-7", 2, {6, 1}, {8, 1}, 0},
    };
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 8), -100, 100);
    nd_array *base = ndt_upload(rb);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_view(base, rb, &cases[i]);
    nd_free(base);
    ref_free(rb);
}

/* Parsed index strings are reused by content (frontend/index_parse.c): the
 * same cases three times over, in an order that mixes them; one buffer
 * rewritten between views (same address, new text); a malformed string
 * fails every time; a string too long to keep still parses. */
NDT_TEST(views, index_strings_reused_by_content) {
    static const view_case cases[] = {
        {"1:-1, ::2", 2, {4, 4}, {8, 2}, 8},
        {"::-1, 3", 1, {6}, {-8}, 43},
        {"5:1:-2, 1::3", 2, {2, 3}, {-16, 3}, 41},
        {"  1:-1 ,  ::2 ", 2, {4, 4}, {8, 2}, 8},
    };
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 8), -100, 100);
    nd_array *base = ndt_upload(rb);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < 4; i++) check_view(base, rb, &cases[(i + (size_t)round) % 4]);
    char buf[32];
    snprintf(buf, sizeof buf, "%s", "1:3, 2");
    view_case a = {buf, 1, {2}, {8}, 10};
    check_view(base, rb, &a);
    snprintf(buf, sizeof buf, "%s", "2:5, 1");
    view_case b = {buf, 1, {3}, {8}, 17};
    check_view(base, rb, &b);
    for (int k = 0; k < 3; k++) {
        nd_array *bad = nd_view(base, "1:2:3:4");
        cr_expect_null(bad, "a malformed index fails every time (try %d)", k);
        cr_expect_eq(nd_last_status(), ND_ERR_INDEX, "try %d: %s", k, nd_last_error());
        nd_clear_error();
    }
    view_case longer = {"  1  :  -1  ,  ::  2                                                    ",
                        2, {4, 4}, {8, 2}, 8};
    check_view(base, rb, &longer);
    check_view(base, rb, &longer);
    nd_free(base);
    ref_free(rb);
}

NDT_TEST(views, index_strings_3d_and_view_of_view) {
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_INT32, ND_SHAPE(4, 5, 6), -1000, 1000);
    nd_array *base = ndt_upload(rb);
    static const view_case c3[] = {
        {"1, ..., ::-2", 2, {5, 3}, {6, -2}, 35},
        {"::3, None, 1:4, -1", 3, {2, 1, 3}, {90, 0, 6}, 11},
        {":, 2", 2, {4, 6}, {30, 1}, 12},
    };
    for (size_t i = 0; i < 3; i++) check_view(base, rb, &c3[i]);
    ref_free(rb);
    nd_free(base);

    ref_arr *r2 = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(6, 8), -10, 10);
    nd_array *b2 = ndt_upload(r2);
    nd_array *v1 = nd_view(b2, "1:5, 2:");
    nd_array *v2 = nd_view(v1, "::2, ::-1");
    ref_arr *want = ref_strided(r2, 2, (int64_t[]){2, 6}, (int64_t[]){16, -1}, 15);
    ndt_check(v2, want, 0, 0, NULL, "view of view");
    nd_free(v1); nd_free(v2); nd_free(b2);
    ref_free(want); ref_free(r2);
}

NDT_TEST(views, as_op_inputs) {
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(6, 8), -4, 4);
    nd_array *base = ndt_upload(rb);
    nd_array *a = nd_view(base, "1:-1, ::2");            /* (4,4) strided */
    nd_array *t = nd_view(base, ":4, 4:");               /* (4,4) */
    nd_array *b = nd_transpose(t, NULL);                 /* transposed */
    nd_array *c = nd_view(base, "::-2, 0");               /* (3,) negative step */
    nd_array *s = nd_mul(a, b), *e = nd_exp(c), *row = nd_view(base, "0:1, 4:8"), *z = nd_add(s, row);
    ref_arr *ra = ref_strided(rb, 2, (int64_t[]){4, 4}, (int64_t[]){8, 2}, 8);
    ref_arr *rt = ref_strided(rb, 2, (int64_t[]){4, 4}, (int64_t[]){1, 8}, 4);
    ref_arr *rc = ref_strided(rb, 1, (int64_t[]){3}, (int64_t[]){-16}, 40);
    ref_arr *rr = ref_strided(rb, 2, (int64_t[]){1, 4}, (int64_t[]){8, 1}, 4);
    ref_arr *ws = ref_binary(R_MUL, ra, rt, ND_FLOAT32, ND_FLOAT32);
    ref_arr *we = ref_unary(R_EXP, rc, ND_FLOAT32, ND_FLOAT32);
    ref_arr *wz = ref_binary(R_ADD, ws, rr, ND_FLOAT32, ND_FLOAT32);
    ndt_check(s, ws, 1e-6, 0, NULL, "strided * transposed");
    ndt_check(e, we, 1e-5, 0, NULL, "exp(negative-step view)");
    ndt_check(z, wz, 1e-5, 1e-6, NULL, "(strided*transposed) + broadcast row view");
    nd_free(a); nd_free(t); nd_free(b); nd_free(c); nd_free(s); nd_free(e); nd_free(z); nd_free(row);
    nd_free(base);
    ref_free(rb); ref_free(ra); ref_free(rt); ref_free(rc); ref_free(rr);
    ref_free(ws); ref_free(we); ref_free(wz);
}

NDT_TEST(views, transpose_with_perm) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT16, ND_SHAPE(3, 4, 5), -500, 500);
    nd_array *a = ndt_upload(ra);
    const int perms[3][3] = {{2, 0, 1}, {1, 0, 2}, {0, 2, 1}};
    for (int p = 0; p < 3; p++) {
        nd_array *t = nd_transpose(a, perms[p]);
        ref_arr *want = ref_transpose(ra, perms[p]);
        ndt_check(t, want, 0, 0, NULL, "transpose perm (%d,%d,%d)", perms[p][0], perms[p][1], perms[p][2]);
        nd_free(t);
        ref_free(want);
    }
    nd_array *rev = nd_transpose(a, NULL);
    ref_arr *wrev = ref_transpose(ra, NULL);
    ndt_check(rev, wrev, 0, 0, NULL, "transpose reversed");
    /* transposed input to an op with a contiguous operand */
    nd_array *o = nd_ones(ND_INT16, ND_SHAPE(5, 4, 3));
    nd_array *s = nd_sub(rev, o);
    ref_arr *ro = ref_new(ND_INT16, 3, (int64_t[]){5, 4, 3});
    for (int64_t i = 0; i < ro->size; i++) ref_setd(ro, i, 1);
    ref_arr *ws = ref_binary(R_SUB, wrev, ro, ND_INT16, ND_INT16);
    ndt_check(s, ws, 0, 0, NULL, "transpose - ones");
    nd_free(rev); nd_free(o); nd_free(s); nd_free(a);
    ref_free(ra); ref_free(wrev); ref_free(ro); ref_free(ws);
}

NDT_TEST(views, broadcast_to) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(3, 1), -5, 5);
    nd_array *a = ndt_upload(ra);
    nd_array *b = nd_broadcast_to(a, ND_SHAPE(2, 3, 4));
    ref_arr *wb = ref_broadcast_to(ra, 3, (int64_t[]){2, 3, 4});
    ndt_check(b, wb, 0, 0, NULL, "broadcast_to (3,1)->(2,3,4)");
    if (b && nd_strides(b)) {
        cr_expect_eq(nd_strides(b)[0], 0, "broadcast axis has stride 0");
        cr_expect_eq(nd_strides(b)[2], 0, "broadcast axis has stride 0");
    }
    ref_arr *rc = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(2, 3, 4), -5, 5);
    nd_array *c = ndt_upload(rc);
    nd_array *m = nd_mul(b, c);
    ref_arr *wm = ref_binary(R_MUL, wb, rc, ND_FLOAT32, ND_FLOAT32);
    ndt_check(m, wm, 1e-6, 0, NULL, "broadcast_to view * array");
    nd_free(a); nd_free(b); nd_free(c); nd_free(m);
    ref_free(ra); ref_free(wb); ref_free(rc); ref_free(wm);
}
