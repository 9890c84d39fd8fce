/* Random orderings and choices (include/nd/random.h: permutation,
 * permutation_of, shuffle, choice): each result is a valid permutation or
 * sample, the same seed gives the same bits (also on another thread
 * count), different calls differ, and the frequencies follow p. */
#include "sort_ref.h"

static ref_arr *take(nd_array *a) {
    cr_assert(a, "%s", nd_last_error());
    ref_arr *r = ndt_download(a);
    nd_free(a);
    return r;
}

/* v[0..n) (int64) is a permutation of 0..n-1. */
static int is_permutation(const ref_arr *v, int64_t n) {
    if (v->size != n) return 0;
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t k = (int64_t)ref_getu(v, i);
        ok = k >= 0 && k < n && !seen[k];
        if (ok) seen[k] = 1;
    }
    free(seen);
    return ok;
}

NDT_TEST(random_perm, permutation_is_a_permutation_and_reproducible) {
    nd_random_seed(42);
    ref_arr *p1 = take(nd_random_permutation(1000)), *p2 = take(nd_random_permutation(1000));
    cr_expect(is_permutation(p1, 1000) && is_permutation(p2, 1000));
    cr_expect(memcmp(p1->data, p2->data, 8000) != 0, "two calls give two orderings");
    int fixed = 0;
    for (int64_t i = 0; i < 1000; i++) fixed += (int64_t)ref_getu(p1, i) == i;
    cr_expect(fixed < 10, "%d fixed points of 1000 (expected about 1)", fixed);
    nd_random_seed(42);
    ref_arr *q1 = take(nd_random_permutation(1000));
    cr_expect(memcmp(p1->data, q1->data, 8000) == 0, "the same seed gives the same ordering");
    /* another thread count */
    nd_config c = {0};
    c.num_threads = 1;
    ndt_restart(&c);
    nd_random_seed(42);
    ref_arr *t1 = take(nd_random_permutation(1000));
    cr_expect(memcmp(p1->data, t1->data, 8000) == 0, "1 thread gives the same ordering");
    ref_arr *e = take(nd_random_permutation(0));
    cr_expect_eq(e->size, 0);
    cr_expect_null(nd_random_permutation(-1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_permutation");
    ref_free(p1); ref_free(p2); ref_free(q1); ref_free(t1); ref_free(e);
}

NDT_TEST(random_perm, permutation_of_moves_whole_slices) {
    NDT_RNG(r);
    int64_t shape[2] = {50, 3};
    ref_arr *x = ndt_rand(&r, ND_FLOAT32, 2, shape, 0, 1);
    nd_array *a = ndt_upload(x);
    ref_arr *g = take(nd_random_permutation_of(a));
    cr_assert(g->ndim == 2 && g->shape[0] == 50 && g->shape[1] == 3);
    char used[50] = {0};
    for (int64_t i = 0; i < 50; i++) {
        int64_t src = -1;
        for (int64_t j = 0; j < 50 && src < 0; j++)
            if (!used[j] && !memcmp(g->data + i * 12, x->data + j * 12, 12)) src = j;
        cr_expect(src >= 0, "row %lld of the result is a row of a", (long long)i);
        if (src >= 0) used[src] = 1;
    }
    nd_array *z = nd_full(ND_INT32, 0, NULL, 1);
    cr_expect_null(nd_random_permutation_of(z));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_random_permutation_of");
    nd_free(a); nd_free(z);
    ref_free(x); ref_free(g);
}

NDT_TEST(random_perm, shuffle_permutes_each_slice_independently) {
    int64_t shape[2] = {4, 64};
    nd_array *base = nd_arange(ND_INT64, 0, 64, 1), *a = nd_broadcast_to(base, 2, shape);
    ref_arr *g = take(nd_random_shuffle(a, -1));
    cr_assert(g->ndim == 2 && g->shape[0] == 4);
    for (int r = 0; r < 4; r++) {
        ref_arr *row = ref_new(ND_INT64, 1, &shape[1]);
        memcpy(row->data, g->data + r * 64 * 8, 64 * 8);
        cr_expect(is_permutation(row, 64), "row %d is a permutation of the row", r);
        ref_free(row);
    }
    cr_expect(memcmp(g->data, g->data + 64 * 8, 64 * 8) != 0, "rows are shuffled independently");
    /* along axis 0: each column a permutation of its values */
    nd_array *t = nd_transpose(a, NULL);
    ref_arr *g0 = take(nd_random_shuffle(t, 0));
    for (int c = 0; c < 4; c++) {
        ref_arr *col = ref_new(ND_INT64, 1, &shape[1]);
        for (int i = 0; i < 64; i++) memcpy(col->data + i * 8, g0->data + (i * 4 + c) * 8, 8);
        cr_expect(is_permutation(col, 64), "column %d", c);
        ref_free(col);
    }
    /* flattened: a permutation of all elements in a's shape */
    ref_arr *gf = take(nd_random_shuffle(a, ND_ALL_AXES));
    cr_expect(gf->ndim == 2 && gf->shape[1] == 64);
    int64_t counts[64] = {0};
    for (int64_t i = 0; i < gf->size; i++) counts[ref_getu(gf, i)]++;
    for (int k = 0; k < 64; k++) cr_expect_eq(counts[k], 4);
    cr_expect_null(nd_random_shuffle(a, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_shuffle");
    nd_free(base); nd_free(a); nd_free(t);
    ref_free(g); ref_free(g0); ref_free(gf);
}

NDT_TEST(random_perm, choice) {
    nd_random_seed(7);
    double av[] = {10, 20, 30, 40, 50};
    int64_t n = 5, shape[2] = {200, 50};
    nd_array *a = nd_from_host(av, ND_FLOAT64, 1, &n);
    /* with replacement, uniform */
    ref_arr *u = take(nd_random_choice(a, 2, shape, 1, NULL));
    int64_t cnt[6] = {0};
    for (int64_t i = 0; i < u->size; i++) {
        double v = ref_getd(u, i);
        cr_assert(v == 10 || v == 20 || v == 30 || v == 40 || v == 50, "%g is an element of a", v);
        cnt[(int)(v / 10)]++;
    }
    for (int k = 1; k <= 5; k++) cr_expect(fabs(cnt[k] - 2000.0) < 200, "uniform count %lld", (long long)cnt[k]);
    /* with replacement and p: frequencies follow p, zero never drawn */
    double pv[] = {0.5, 0, 0.25, 0.125, 0.125};
    nd_array *p = nd_from_host(pv, ND_FLOAT64, 1, &n);
    ref_arr *w = take(nd_random_choice_n(5, 2, shape, 1, p));
    int64_t c2[5] = {0};
    for (int64_t i = 0; i < w->size; i++) c2[ref_getu(w, i)]++;
    for (int k = 0; k < 5; k++)
        cr_expect(fabs((double)c2[k] - 10000 * pv[k]) <= 300, "p[%d]: %lld of 10000", k, (long long)c2[k]);
    cr_expect_eq(c2[1], 0);
    /* without replacement: distinct; with p: never the zero */
    int64_t four = 4;
    for (int rep = 0; rep < 50; rep++) {
        ref_arr *d = take(nd_random_choice_n(5, 1, &four, 0, rep % 2 ? p : NULL));
        char seen[5] = {0};
        for (int i = 0; i < 4; i++) {
            int64_t k = (int64_t)ref_getu(d, i);
            cr_expect(k >= 0 && k < 5 && !seen[k], "distinct draws");
            if (k >= 0 && k < 5) seen[k] = 1;
        }
        if (rep % 2) cr_expect(!seen[1], "p = 0 is never drawn");
        ref_free(d);
    }
    /* reproducible; 0-d draw */
    nd_random_seed(99);
    ref_arr *r1 = take(nd_random_choice_n(1000, 1, &four, 0, NULL));
    nd_random_seed(99);
    ref_arr *r2 = take(nd_random_choice_n(1000, 1, &four, 0, NULL));
    cr_expect(memcmp(r1->data, r2->data, 32) == 0);
    nd_array *one = nd_random_choice(a, 0, NULL, 0, NULL);
    cr_expect(one && nd_ndim(one) == 0);
    /* errors */
    int64_t six = 6;
    cr_expect_null(nd_random_choice_n(5, 1, &six, 0, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_choice_n");
    nd_array *all4 = nd_random_choice_n(5, 1, &four, 0, p); /* 4 non-zero p: fine */
    cr_expect(all4, "4 draws from 4 non-zero p: %s", nd_last_error());
    nd_free(all4);
    int64_t five = 5;
    cr_expect_null(nd_random_choice_n(5, 1, &five, 0, p));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_choice_n");
    double bad[] = {0.5, 0.6, 0, 0, 0};
    nd_array *pb = nd_from_host(bad, ND_FLOAT64, 1, &n);
    cr_expect_null(nd_random_choice_n(5, 1, &four, 1, pb));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_choice_n");
    int64_t three = 3;
    nd_array *p3 = nd_from_host(pv, ND_FLOAT64, 1, &three);
    cr_expect_null(nd_random_choice(a, 1, &four, 1, p3));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_random_choice");
    cr_expect_null(nd_random_choice_n(0, 1, &four, 1, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_choice_n");
    cr_expect_null(nd_random_choice(NULL, 1, &four, 1, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_choice");
    nd_free(a); nd_free(p); nd_free(one); nd_free(pb); nd_free(p3);
    ref_free(u); ref_free(w); ref_free(r1); ref_free(r2);
}
