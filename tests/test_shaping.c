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
    ref_arr *refs[4];
    nd_array *arrs[4];
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
