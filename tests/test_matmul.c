/* matmul/dot: vector and matrix shapes, batched with batch broadcasting,
 * transposed and strided views as operands, float16/32/64 and int32. */
#include "common.h"

#include <stdlib.h>

static void check_mm(ndt_rng *r, nd_dtype t, int na, const int64_t *sa, int nb,
                     const int64_t *sb, int use_dot) {
    ref_arr *a = ref_is_float(t) ? ndt_rand(r, t, na, sa, -1, 1) : ndt_rand(r, t, na, sa, -50, 50);
    ref_arr *b = ref_is_float(t) ? ndt_rand(r, t, nb, sb, -1, 1) : ndt_rand(r, t, nb, sb, -50, 50);
    nd_array *x = ndt_upload(a), *y = ndt_upload(b);
    nd_array *z = use_dot ? nd_dot(x, y) : nd_matmul(x, y);
    double *sc;
    ref_arr *want = ref_matmul(a, b, t, &sc);
    cr_assert(want, "reference: inner dimensions differ");
    ndt_check(z, want, ndt_rtol(t), 1e-300, sc, "%s %dd@%dd (%s)", use_dot ? "dot" : "matmul", na,
              nb, ref_dtype_name(t));
    nd_free(x); nd_free(y); nd_free(z);
    ref_free(a); ref_free(b); ref_free(want);
    free(sc);
}

static const nd_dtype DT[4] = {ND_FLOAT32, ND_FLOAT64, ND_FLOAT16, ND_INT32};

NDT_TEST(matmul, vector_dot_vector) {
    NDT_RNG(r);
    for (int i = 0; i < 4; i++) {
        check_mm(&r, DT[i], ND_SHAPE(7), ND_SHAPE(7), 0);
        check_mm(&r, DT[i], ND_SHAPE(33), ND_SHAPE(33), 1);
    }
}

NDT_TEST(matmul, matrix_matrix) {
    NDT_RNG(r);
    for (int i = 0; i < 4; i++) {
        check_mm(&r, DT[i], ND_SHAPE(5, 7), ND_SHAPE(7, 3), 0);
        check_mm(&r, DT[i], ND_SHAPE(1, 9), ND_SHAPE(9, 1), 1);
    }
    check_mm(&r, ND_FLOAT32, ND_SHAPE(64, 96), ND_SHAPE(96, 80), 0);
    check_mm(&r, ND_FLOAT64, ND_SHAPE(33, 65), ND_SHAPE(65, 17), 0);
}

NDT_TEST(matmul, matrix_vector_and_vector_matrix) {
    NDT_RNG(r);
    for (int i = 0; i < 4; i++) {
        check_mm(&r, DT[i], ND_SHAPE(5, 7), ND_SHAPE(7), 0);
        check_mm(&r, DT[i], ND_SHAPE(7), ND_SHAPE(7, 3), 0);
        check_mm(&r, DT[i], ND_SHAPE(6, 4), ND_SHAPE(4), 1);
    }
}

NDT_TEST(matmul, batched_with_broadcasting) {
    NDT_RNG(r);
    for (int i = 0; i < 4; i++) {
        check_mm(&r, DT[i], ND_SHAPE(2, 5, 7), ND_SHAPE(2, 7, 3), 0);
        check_mm(&r, DT[i], ND_SHAPE(2, 1, 5, 7), ND_SHAPE(3, 7, 4), 0);
        check_mm(&r, DT[i], ND_SHAPE(4), ND_SHAPE(2, 4, 3), 0);
        check_mm(&r, DT[i], ND_SHAPE(2, 3, 4), ND_SHAPE(4), 0);
        check_mm(&r, DT[i], ND_SHAPE(3, 4), ND_SHAPE(2, 2, 4, 5), 0);
    }
}

NDT_TEST(matmul, transposed_and_strided_operands) {
    NDT_RNG(r);
    for (int i = 0; i < 4; i++) {
        nd_dtype t = DT[i];
        ref_arr *a = ndt_rand(&r, t, ND_SHAPE(7, 5), -2, 2); /* used transposed: (5,7) */
        ref_arr *b = ndt_rand(&r, t, ND_SHAPE(8, 6), -2, 2); /* rows ::-1 -> (8,6), then [1:] -> (7,6)*/
        nd_array *x = ndt_upload(a), *y = ndt_upload(b);
        nd_array *xt = nd_transpose(x, NULL), *yv = nd_view(y, "1:, ::-1");
        nd_array *z = nd_matmul(xt, yv);
        ref_arr *at = ref_transpose(a, NULL);
        ref_arr *bv = ref_strided(b, 2, (int64_t[]){7, 6}, (int64_t[]){6, -1}, 11);
        double *sc;
        ref_arr *want = ref_matmul(at, bv, t, &sc);
        ndt_check(z, want, ndt_rtol(t), 1e-300, sc, "x.T @ y[1:, ::-1] (%s)", ref_dtype_name(t));
        /* batched transposed: (2,7,5) -> transpose(0,2,1) -> (2,5,7) @ (7,)*/
        ref_arr *c = ndt_rand(&r, t, ND_SHAPE(2, 7, 5), -2, 2);
        ref_arr *v = ndt_rand(&r, t, ND_SHAPE(7), -2, 2);
        nd_array *xc = ndt_upload(c), *xv = ndt_upload(v);
        const int perm[3] = {0, 2, 1};
        nd_array *ct = nd_transpose(xc, perm), *zz = nd_matmul(ct, xv);
        ref_arr *rct = ref_transpose(c, perm);
        double *sc2;
        ref_arr *want2 = ref_matmul(rct, v, t, &sc2);
        ndt_check(zz, want2, ndt_rtol(t), 1e-300, sc2, "batched transposed @ vector (%s)", ref_dtype_name(t));
        nd_free(x); nd_free(y); nd_free(xt); nd_free(yv); nd_free(z);
        nd_free(xc); nd_free(xv); nd_free(ct); nd_free(zz);
        ref_free(a); ref_free(b); ref_free(at); ref_free(bv); ref_free(want);
        ref_free(c); ref_free(v); ref_free(rct); ref_free(want2);
        free(sc); free(sc2);
    }
}

NDT_TEST(matmul, chain_and_mixed_dtypes) {
    NDT_RNG(r);
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(6, 8), -1, 1);
    ref_arr *b = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(8, 4), -1, 1);
    nd_array *x = ndt_upload(a), *y = ndt_upload(b);
    nd_array *z = nd_matmul(x, y);
    cr_assert(z, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(z), ND_FLOAT64, "float32 @ float64 -> %s", nd_dtype_name(nd_dtype_of(z)));
    double *sc;
    ref_arr *want = ref_matmul(a, b, ND_FLOAT64, &sc);
    ndt_check(z, want, 1e-12, 1e-300, sc, "float32 @ float64");
    /* (x @ y) + 1 then @ y.T: matmul consuming a fused elementwise result */
    nd_array *one = nd_scalar(1.0), *p = nd_add(z, one), *yt = nd_transpose(y, NULL);
    nd_array *q = nd_matmul(p, yt);
    ref_arr *ro = ref_new(ND_FLOAT64, 0, NULL);
    ref_setd(ro, 0, 1.0);
    ref_arr *rp = ref_binary(R_ADD, want, ro, ND_FLOAT64, ND_FLOAT64);
    ref_arr *ryt = ref_transpose(b, NULL);
    double *sc2;
    ref_arr *want2 = ref_matmul(rp, ryt, ND_FLOAT64, &sc2);
    ndt_check(q, want2, 1e-12, 1e-300, sc2, "(x@y + 1) @ y.T");
    nd_free(x); nd_free(y); nd_free(z); nd_free(one); nd_free(p); nd_free(yt); nd_free(q);
    ref_free(a); ref_free(b); ref_free(want); ref_free(ro); ref_free(rp); ref_free(ryt); ref_free(want2);
    free(sc); free(sc2);
}

/* dot of two float vectors that are themselves computed (here drawn) is one
 * fused reduction: no library call, the operands never written out. */
NDT_TEST(matmul, dot_of_drawn_vectors_is_one_fused_reduction) {
    const int64_t n = 3001;
    nd_random_seed(77);
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    nd_array *d = nd_keep(nd_dot(nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1, 1),
                                 nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1, 1)));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(after.library_calls - before.library_calls, 0, "dot of vectors should not call a library");
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "dot of drawn vectors should be one kernel, ran %llu",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    /* The same draws again, read back, as the reference. */
    nd_random_seed(77);
    nd_array *x = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1, 1);
    nd_array *y = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1, 1);
    double *hx = malloc(sizeof(double) * n), *hy = malloc(sizeof(double) * n), want = 0, scale = 0;
    cr_assert_eq(nd_to_host(x, hx, sizeof(double) * n), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(y, hy, sizeof(double) * n), ND_OK, "%s", nd_last_error());
    for (int64_t i = 0; i < n; i++) {
        want += hx[i] * hy[i];
        scale += fabs(hx[i] * hy[i]);
    }
    cr_expect(fabs(nd_item(d) - want) <= 1e-12 * scale, "dot = %.17g, want %.17g", nd_item(d), want);
    free(hx);
    free(hy);
    nd_free(x);
    nd_free(y);
    nd_free(d);
}
