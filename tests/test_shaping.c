/* reshape (view and copy cases, -1), concatenate on every axis with mixed
 * dtypes, stack, ravel. */
#include "common.h"

#include <stdlib.h>

static ref_arr *concat_ref(int n, ref_arr *const *in, int axis, nd_dtype rt) {
    int nd = in[0]->ndim;
    if (axis < 0) axis += nd;
    int64_t sh[ND_MAX_DIMS];
    memcpy(sh, in[0]->shape, sizeof sh);
    sh[axis] = 0;
    for (int i = 0; i < n; i++) sh[axis] += in[i]->shape[axis];
    ref_arr *o = ref_new(rt, nd, sh);
    int64_t idx[ND_MAX_DIMS] = {0};
    for (int64_t f = 0; f < o->size; f++) {
        int64_t rem = f;
        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = rem % sh[d];
            rem /= sh[d];
        }
        int k = 0;
        int64_t pos = idx[axis];
        while (pos >= in[k]->shape[axis]) pos -= in[k++]->shape[axis];
        int64_t src = 0;
        for (int d = 0; d < nd; d++) src = src * in[k]->shape[d] + (d == axis ? pos : idx[d]);
        ref_cast_elem(o, f, in[k], src);
    }
    return o;
}

NDT_TEST(shaping, reshape_contiguous_is_a_view) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT32, ND_SHAPE(3, 4), -100, 100);
    nd_array *a = ndt_upload(ra);
    nd_array *b = nd_reshape(a, ND_SHAPE(2, 6));
    ref_arr *wb = ref_reshape(ra, 2, (int64_t[]){2, 6});
    ndt_check(b, wb, 0, 0, NULL, "reshape (3,4)->(2,6)");
    nd_array *row = nd_view(b, "0, :2");
    cr_assert_eq(nd_fill(row, 1000), ND_OK, "%s", nd_last_error());
    ref_setd(ra, 0, 1000);
    ref_setd(ra, 1, 1000);
    ndt_check(a, ra, 0, 0, NULL, "a write through a reshaped view is visible in the base");
    nd_array *c = nd_reshape(a, ND_SHAPE(-1, 3)), *d = nd_reshape(a, ND_SHAPE(2, -1, 2));
    cr_assert(c && d, "%s", nd_last_error());
    cr_expect(nd_ndim(c) == 2 && nd_shape(c)[0] == 4 && nd_shape(c)[1] == 3, "-1 infers 4");
    cr_expect(nd_ndim(d) == 3 && nd_shape(d)[1] == 3, "-1 infers 3");
    ref_arr *wc = ref_reshape(ra, 2, (int64_t[]){4, 3});
    ndt_check(c, wc, 0, 0, NULL, "reshape (-1,3)");
    nd_free(a); nd_free(b); nd_free(row); nd_free(c); nd_free(d);
    ref_free(ra); ref_free(wb); ref_free(wc);
}

NDT_TEST(shaping, reshape_noncontiguous_copies) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(3, 4), -10, 10);
    nd_array *a = ndt_upload(ra);
    nd_array *t = nd_transpose(a, NULL);
    nd_array *flat = nd_reshape(t, ND_SHAPE(12));
    ref_arr *tt = ref_transpose(ra, NULL);
    ref_arr *rt = ref_reshape(tt, 1, (int64_t[]){12});
    ref_free(tt);
    ndt_check(flat, rt, 0, 0, NULL, "reshape of a transpose is a.T in C order");
    cr_assert_eq(nd_fill(flat, -1), ND_OK, "%s", nd_last_error());
    ndt_check(a, ra, 0, 0, NULL, "writing the copy leaves the base alone");
    /* 0-d <-> (1,1) */
    nd_array *s = nd_full(ND_FLOAT64, ND_SCALAR_SHAPE, 4.5);
    nd_array *s11 = nd_reshape(s, ND_SHAPE(1, 1)), *back = nd_reshape(s11, ND_SCALAR_SHAPE);
    cr_assert(s11 && back, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(back), 0);
    cr_expect_eq(nd_item(back), 4.5);
    nd_free(a); nd_free(t); nd_free(flat); nd_free(s); nd_free(s11); nd_free(back);
    ref_free(ra); ref_free(rt);
}

static void check_concat(ndt_rng *r, int n, const nd_dtype *dts, int nd, const int64_t (*shapes)[3],
                         int axis) {
    ref_arr *refs[4] = {0};
    nd_array *arrs[4] = {0};
    nd_dtype rt = dts[0];
    for (int i = 0; i < n; i++) {
        refs[i] = ndt_rand_small(r, dts[i], nd, shapes[i]);
        arrs[i] = ndt_upload(refs[i]);
        if (i) rt = ref_promote(rt, dts[i]);
    }
    nd_array *c = nd_concatenate(n, arrs, axis);
    ref_arr *want = concat_ref(n, refs, axis, rt);
    ndt_check(c, want, 0, 0, NULL, "concatenate %d arrays (%s, %s, ...) axis %d", n,
              ref_dtype_name(dts[0]), ref_dtype_name(dts[1]), axis);
    nd_free(c);
    ref_free(want);
    for (int i = 0; i < n; i++) {
        nd_free(arrs[i]);
        ref_free(refs[i]);
    }
}

NDT_TEST(shaping, concatenate_every_axis_mixed_dtypes) {
    NDT_RNG(r);
    const int64_t s0[2][3] = {{2, 3, 4}, {5, 3, 4}};
    const int64_t s1[3][3] = {{2, 1, 4}, {2, 3, 4}, {2, 2, 4}};
    const int64_t s2[2][3] = {{2, 3, 4}, {2, 3, 1}};
    check_concat(&r, 2, (nd_dtype[]){ND_INT32, ND_FLOAT32}, 3, s0, 0);
    check_concat(&r, 3, (nd_dtype[]){ND_INT8, ND_UINT8, ND_INT8}, 3, s1, 1);
    check_concat(&r, 2, (nd_dtype[]){ND_FLOAT16, ND_FLOAT32}, 3, s2, 2);
    check_concat(&r, 2, (nd_dtype[]){ND_FLOAT64, ND_FLOAT64}, 3, s2, -1);
    check_concat(&r, 2, (nd_dtype[]){ND_BOOL, ND_INT16}, 3, s0, -3);
    const int64_t e[2][3] = {{0, 3, 4}, {2, 3, 4}};
    check_concat(&r, 2, (nd_dtype[]){ND_FLOAT32, ND_FLOAT32}, 3, e, 0);
}

NDT_TEST(shaping, concatenate_views) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(3, 4), -5, 5);
    nd_array *a = ndt_upload(ra);
    nd_array *parts[2] = {nd_transpose(a, NULL), nd_view(a, "::-1, :3")}; /* (4,3), (3,3) */
    nd_array *c = nd_concatenate(2, parts, 0);
    ref_arr *p0 = ref_transpose(ra, NULL);
    ref_arr *p1 = ref_strided(ra, 2, (int64_t[]){3, 3}, (int64_t[]){-4, 1}, 8);
    ref_arr *in[2] = {p0, p1};
    ref_arr *want = concat_ref(2, in, 0, ND_FLOAT32);
    ndt_check(c, want, 0, 0, NULL, "concatenate(a.T, a[::-1, :3])");
    nd_free(a); nd_free(parts[0]); nd_free(parts[1]); nd_free(c);
    ref_free(ra); ref_free(p0); ref_free(p1); ref_free(want);
}

NDT_TEST(shaping, stack_every_axis) {
    NDT_RNG(r);
    ref_arr *refs[3];
    nd_array *arrs[3];
    for (int i = 0; i < 3; i++) {
        refs[i] = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(2, 3), -5, 5);
        arrs[i] = ndt_upload(refs[i]);
    }
    const int axes[4] = {0, 1, 2, -1};
    for (int k = 0; k < 4; k++) {
        int ax = axes[k] < 0 ? axes[k] + 3 : axes[k];
        ref_arr *ex[3];
        for (int i = 0; i < 3; i++) {
            int64_t sh[3];
            for (int d = 0, s = 0; d < 3; d++) sh[d] = d == ax ? 1 : refs[i]->shape[s++];
            ex[i] = ref_reshape(refs[i], 3, sh);
        }
        ref_arr *want = concat_ref(3, ex, ax, ND_FLOAT32);
        nd_array *s = nd_stack(3, arrs, axes[k]);
        ndt_check(s, want, 0, 0, NULL, "stack 3x(2,3) axis %d", axes[k]);
        nd_free(s);
        ref_free(want);
        for (int i = 0; i < 3; i++) ref_free(ex[i]);
    }
    for (int i = 0; i < 3; i++) {
        nd_free(arrs[i]);
        ref_free(refs[i]);
    }
}

NDT_TEST(shaping, ravel) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_INT64, ND_SHAPE(2, 3, 4), -1000, 1000);
    nd_array *a = ndt_upload(ra);
    nd_array *f = nd_ravel(a);
    ref_arr *wf = ref_reshape(ra, 1, (int64_t[]){24});
    ndt_check(f, wf, 0, 0, NULL, "ravel contiguous");
    const int perm[3] = {1, 2, 0};
    nd_array *t = nd_transpose(a, perm), *ft = nd_ravel(t);
    ref_arr *rt = ref_transpose(ra, perm);
    ref_arr *wt = ref_reshape(rt, 1, (int64_t[]){24});
    ndt_check(ft, wt, 0, 0, NULL, "ravel of a transpose");
    nd_free(a); nd_free(f); nd_free(t); nd_free(ft);
    ref_free(ra); ref_free(wf); ref_free(rt); ref_free(wt);
}

/* ravel and reshape alias exactly where NumPy's do: ravel
 * is a view of a C-contiguous input and a copy of anything else (x[::2], a
 * transpose, a broadcast, which then becomes writable); reshape is a view
 * whenever the strides allow one and a copy otherwise. Each case writes to
 * the input afterwards and checks whether the result sees it. */
static void expect_aliasing(nd_array *x, ref_arr *rx, nd_array *result, ref_arr *before,
                            int aliases, const char *what) {
    /* overwrite x with fresh values; a view must show them, a copy not */
    ref_arr *after = ref_new(rx->dt, rx->ndim, rx->shape);
    for (int64_t i = 0; i < after->size; i++) ref_setd(after, i, ref_getd(rx, i) + 1000.5);
    nd_array *nx = ndt_upload(after);
    cr_assert_eq(nd_assign(x, nx), ND_OK, "%s", nd_last_error());
    ref_arr *dl = ndt_download(result);
    int same = 1;
    for (int64_t i = 0; i < dl->size; i++) same &= ref_getd(dl, i) == ref_getd(before, i);
    cr_expect_eq(!same, aliases, "%s: the result %s a later write to its input (NumPy: %s)", what,
                 same ? "did not see" : "saw", aliases ? "a view" : "a copy");
    nd_free(nx);
    ref_free(after);
    ref_free(dl);
}

NDT_TEST(shaping, ravel_and_reshape_copy_or_view_as_numpy) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(4, 6), -10, 10);
    const struct {
        const char *index; /* view of x the op applies to */
        int ravel;          /* 1: nd_ravel, else nd_reshape to (nd, shape) */
        int nd;
        int64_t shape[3];
        int aliases;
    } cases[] = {
        {"...", 1, 0, {0}, 1},            /* contiguous: view */
        {"1:3", 1, 0, {0}, 1},            /* contiguous rows: view */
        {":, ::2", 1, 0, {0}, 0},         /* strided: NumPy copies */
        {"::2", 1, 0, {0}, 0},
        {":, 1:5", 1, 0, {0}, 0},
        {":, ::2", 0, 2, {4, 3}, 1},      /* reshape to itself: view */
        {":, ::2", 0, 3, {2, 2, 3}, 1},   /* splits an axis: view */
        {":, ::2", 0, 1, {12}, 1},        /* merges to one stride: view */
        {":, 1:5", 0, 1, {16}, 0},        /* cannot merge: copy */
        {":, 1:5", 0, 2, {2, 8}, 0},
        {":, 1:5", 0, 3, {4, 2, 2}, 1},
        {"0, ::2", 0, 2, {3, 1}, 1},      /* 1-d strided, new axis: view */
        {"...", 0, 2, {6, 4}, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array *x = ndt_upload(rx);
        nd_array *v = nd_view(x, cases[c].index);
        cr_assert(v, "%s", nd_last_error());
        nd_array *res = cases[c].ravel ? nd_ravel(v) : nd_reshape(v, cases[c].nd, cases[c].shape);
        cr_assert(res, "%s", nd_last_error());
        ref_arr *before = ndt_download(res);
        /* the values are x[index] in row-major order either way */
        ref_arr *want = ndt_download(v);
        cr_expect_eq(before->size, want->size);
        for (int64_t i = 0; i < want->size && i < before->size; i++)
            cr_expect_eq(ref_getd(before, i), ref_getd(want, i), "case %zu element %lld", c, (long long)i);
        char what[80];
        snprintf(what, sizeof what, "%s(x[%s])", cases[c].ravel ? "ravel" : "reshape", cases[c].index);
        expect_aliasing(x, rx, res, before, cases[c].aliases, what);
        nd_free(x); nd_free(v); nd_free(res);
        ref_free(before); ref_free(want);
    }
    /* A transpose: ravel and a merging reshape copy. */
    nd_array *x = ndt_upload(rx), *t = nd_transpose(x, NULL);
    nd_array *rt = nd_ravel(t), *st = nd_reshape(t, ND_SHAPE(24));
    ref_arr *bt = ndt_download(rt), *bs = ndt_download(st);
    expect_aliasing(x, rx, rt, bt, 0, "ravel(x.T)");
    expect_aliasing(x, rx, st, bs, 0, "reshape(x.T, 24)");
    nd_free(x); nd_free(t); nd_free(rt); nd_free(st);
    ref_free(bt); ref_free(bs);
    ref_free(rx);
}

/* ravel of a broadcast is a writable copy; a reshape that keeps the
 * broadcast's layout stays a read-only view (NumPy: writeable False). */
NDT_TEST(shaping, ravel_of_broadcast_is_a_writable_copy) {
    NDT_RNG(r);
    ref_arr *rb = ndt_rand(&r, ND_INT32, ND_SHAPE(3), -50, 50);
    nd_array *b = ndt_upload(rb);
    nd_array *bc = nd_broadcast_to(b, ND_SHAPE(2, 3));
    nd_array *f = nd_ravel(bc);
    cr_assert(f, "%s", nd_last_error());
    ref_arr *got = ndt_download(f);
    for (int64_t i = 0; i < 6; i++) cr_expect_eq(ref_getd(got, i), ref_getd(rb, i % 3));
    cr_expect_eq(nd_fill(f, 7), ND_OK, "nd_fill(ravel(broadcast)): %s", nd_last_error());
    int32_t h[6], hb[3];
    cr_assert_eq(nd_to_host(f, h, sizeof h), ND_OK);
    for (int i = 0; i < 6; i++) cr_expect_eq(h[i], 7);
    cr_assert_eq(nd_to_host(b, hb, sizeof hb), ND_OK);
    for (int i = 0; i < 3; i++) cr_expect_eq(hb[i], (int32_t)ref_getd(rb, i), "the broadcast's base changed");
    nd_array *r6 = nd_reshape(bc, ND_SHAPE(6)), *r23 = nd_reshape(bc, ND_SHAPE(2, 3));
    cr_expect_eq(nd_fill(r6, 1), ND_OK, "reshape(broadcast, 6) is a copy: %s", nd_last_error());
    cr_expect_eq(nd_fill(r23, 1), ND_ERR_ARG, "reshape(broadcast, (2,3)) is a read-only view");
    nd_clear_error();
    /* The case: a broadcast of one element is all stride 0, which a
     * view could reshape; ravel still copies. */
    nd_array *one = nd_view(b, "1:2");
    nd_array *b1 = nd_broadcast_to(one, ND_SHAPE(2, 3)), *f1 = nd_ravel(b1);
    cr_expect_eq(nd_fill(f1, 9), ND_OK, "nd_fill(ravel(broadcast of one element)): %s", nd_last_error());
    int32_t h1[6];
    cr_assert_eq(nd_to_host(f1, h1, sizeof h1), ND_OK);
    for (int i = 0; i < 6; i++) cr_expect_eq(h1[i], 9);
    cr_assert_eq(nd_to_host(b, hb, sizeof hb), ND_OK);
    cr_expect_eq(hb[1], (int32_t)ref_getd(rb, 1), "the broadcast's base changed");
    nd_free(b); nd_free(bc); nd_free(f); nd_free(r6); nd_free(r23);
    nd_free(one); nd_free(b1); nd_free(f1);
    ref_free(rb); ref_free(got);
}
