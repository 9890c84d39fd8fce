/* Integer-array indexing (nd/indexing.h): take, take_along_axis, choose,
 * nd_index, and the scatters (nd_index_assign, put, put_along_axis,
 * add_at), against references computed here element by element: gathers
 * compare raw bytes (a gather copies), add_at sums in index order like
 * NumPy's unbuffered np.add.at. Index arrays carry repeats and negative
 * entries; every dtype; views as inputs; out-of-range indices fail the
 * read with NumPy's IndexError wording. */
#include "common.h"

/* ---------------------------------------------------------------- helpers */

static nd_array *ints(int ndim, const int64_t *shape, const int64_t *v) {
    nd_array *a = nd_from_host(v, ND_INT64, ndim, shape);
    cr_assert(a, "%s", nd_last_error());
    return a;
}

/* Random int64 indices in [-n, n) (n > 0), with repeats. */
static ref_arr *rand_indices(ndt_rng *r, int ndim, const int64_t *shape, int64_t n) {
    ref_arr *x = ref_new(ND_INT64, ndim, shape);
    for (int64_t i = 0; i < x->size; i++) ((int64_t *)x->data)[i] = ndt_int(r, -n, n - 1);
    return x;
}

static int64_t wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v; }

/* got's bytes equal want's (dtype and shape too). */
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

/* nd_sync fails with ND_ERR_INDEX and a message containing `text`. */
static void expect_index_error_at_sync(const char *text) {
    nd_status st = nd_sync();
    const char *m = nd_last_error();
    cr_expect_eq(st, ND_ERR_INDEX, "expected ND_ERR_INDEX at nd_sync, got %s (%s)", nd_status_name(st), m ? m : "");
    cr_expect(m && strstr(m, text), "message '%s' should contain '%s'", m ? m : "(null)", text);
    nd_clear_error();
}

/* ------------------------------------------------------------------- take */

NDT_TEST(indexing, take_flat_every_dtype_with_repeats_and_negatives) {
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        ref_arr *a = ndt_rand_bits(&r, dt, 2, (int64_t[]){5, 7});
        ref_arr *ix = rand_indices(&r, 2, (int64_t[]){4, 9}, 35);
        ((int64_t *)ix->data)[0] = ((int64_t *)ix->data)[1] = -35; /* repeated, most negative */
        ((int64_t *)ix->data)[2] = 34;
        ref_arr *want = ref_new(dt, 2, (int64_t[]){4, 9});
        size_t item = ref_itemsize(dt);
        for (int64_t i = 0; i < want->size; i++)
            memcpy(want->data + i * item, a->data + wrap(((int64_t *)ix->data)[i], 35) * item, item);
        nd_array *na = ndt_upload(a), *ni = ndt_upload(ix);
        nd_array *got = nd_take(na, ni, ND_ALL_AXES);
        expect_bytes(got, want, ref_dtype_name(dt));
        nd_free(got);
        nd_free(na);
        nd_free(ni);
        ref_free(a);
        ref_free(ix);
        ref_free(want);
    }
}

/* a (4,5,6) taken along each axis (also negative) by a (2,3) int32 index:
 * a.shape[:axis] + (2,3) + a.shape[axis+1:]. */
NDT_TEST(indexing, take_along_each_axis_int32_indices) {
    NDT_RNG(r);
    const int64_t sh[3] = {4, 5, 6};
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, 3, sh, -10, 10);
    nd_array *na = ndt_upload(a);
    for (int axis = -3; axis < 3; axis++) {
        int ax = axis < 0 ? axis + 3 : axis;
        int64_t n = sh[ax];
        ref_arr *ix64 = rand_indices(&r, 2, (int64_t[]){2, 3}, n);
        ref_arr *ix = ref_astype(ix64, ND_INT32);
        int64_t osh[4];
        int k = 0;
        for (int d = 0; d < ax; d++) osh[k++] = sh[d];
        osh[k++] = 2;
        osh[k++] = 3;
        for (int d = ax + 1; d < 3; d++) osh[k++] = sh[d];
        ref_arr *want = ref_new(ND_FLOAT32, 4, osh);
        for (int64_t i = 0; i < want->size; i++) {
            int64_t o[4], src[3];
            ref_unravel(i, 4, osh, o);
            int64_t j = wrap(((int64_t *)ix64->data)[o[ax] * 3 + o[ax + 1]], n);
            for (int d = 0, e = 0; d < 3; d++) src[d] = d == ax ? (e += 2, j) : o[e++];
            ref_setd(want, i, ref_getd(a, ref_ravel(src, 3, sh)));
        }
        nd_array *ni = ndt_upload(ix);
        nd_array *got = nd_take(na, ni, axis);
        char what[32];
        snprintf(what, sizeof what, "axis %d", axis);
        expect_bytes(got, want, what);
        nd_free(got);
        nd_free(ni);
        ref_free(ix64);
        ref_free(ix);
        ref_free(want);
    }
    nd_free(na);
    ref_free(a);
}

/* Views as inputs: a transposed source, a broadcast index, a 0-d index
 * (drops the axis), an empty index (an empty result), and a gather feeding
 * an elementwise map. */
NDT_TEST(indexing, take_from_views_0d_and_empty_indices) {
    nd_scope_begin();
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i * 1.5 - 4;
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(3, 4));
    nd_array *at = nd_transpose(a, NULL); /* (4,3): at[i][j] = v[j*4+i] */
    nd_array *i1 = ints(1, (int64_t[]){2}, (int64_t[]){-1, 0});
    nd_array *got = nd_take(at, i1, 1); /* (4,2): at[:, [2, 0]] */
    double want[8];
    for (int i = 0; i < 4; i++) want[i * 2] = v[2 * 4 + i], want[i * 2 + 1] = v[i];
    ref_arr *w = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){4, 2}, want);
    expect_bytes(got, w, "transposed source");
    ref_free(w);
    /* A broadcast index: (3,) broadcast to (2,3), then x * 2 + 1 of the gather. */
    nd_array *b = nd_broadcast_to(ints(1, (int64_t[]){3}, (int64_t[]){3, -4, 1}), 2, (int64_t[]){2, 3});
    nd_array *g = nd_add(nd_mul(nd_take(a, b, 1), nd_scalar(2)), nd_scalar(1));
    double wb[6];
    for (int r = 0; r < 2; r++) {
        const int64_t c[3] = {3, 0, 1};
        for (int k = 0; k < 3; k++) wb[r * 3 + k] = 0;
        (void)c;
    }
    /* take(a, b, 1) has shape (3, 2, 3): a[i, b[r, k]] */
    double wg[18];
    const int64_t cols[3] = {3, 0, 1};
    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 3; k++) wg[(i * 2 + r) * 3 + k] = v[i * 4 + cols[k]] * 2 + 1;
    (void)wb;
    ref_arr *wgr = ref_from_doubles(ND_FLOAT64, 3, (int64_t[]){3, 2, 3}, wg);
    expect_bytes(g, wgr, "broadcast index, then a map");
    ref_free(wgr);
    /* 0-d index: the axis goes. */
    nd_array *zero_d = nd_scalar_int(-2);
    nd_array *row = nd_take(a, zero_d, 0);
    ref_arr *wr = ref_from_doubles(ND_FLOAT64, 1, (int64_t[]){4}, v + 4);
    expect_bytes(row, wr, "0-d index");
    ref_free(wr);
    /* Empty index array. */
    nd_array *none = nd_from_host(NULL, ND_INT64, ND_SHAPE(0));
    cr_assert(none, "%s", nd_last_error());
    nd_array *e = nd_take(a, none, 1);
    cr_assert(e, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(e), 2);
    cr_expect_eq(nd_shape(e)[0], 3);
    cr_expect_eq(nd_shape(e)[1], 0);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_free(a);
    nd_scope_end();
}

NDT_TEST(indexing, take_out_of_bounds_names_index_axis_and_size) {
    nd_scope_begin();
    double v[5] = {1, 2, 3, 4, 5}, w[5] = {9, 8, 7, 6, 5};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(5));
    nd_array *bystander_in = nd_from_host(w, ND_FLOAT64, ND_SHAPE(5));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_array *t = nd_take(a, ints(1, (int64_t[]){3}, (int64_t[]){0, 7, 1}), 0);
    cr_assert(t, "recording succeeds (the check is at run time): %s", nd_last_error());
    nd_array *bystander = nd_mul(bystander_in, nd_scalar(2));
    nd_array *dependant = nd_add(t, nd_scalar(1)); /* computed from the failed gather in the same flush */
    expect_index_error_at_sync("nd_take: index 7 is out of bounds for axis 0 with size 5");
    double got[5];
    /* Every backend fails the gather's output and what is computed from it
     * (CUDA checks on the device and reads the verdict back at the step):
     * each read reports the error again, with the message. */
    for (int rep = 0; rep < 2; rep++) {
        nd_array *x = rep ? dependant : t;
        cr_expect_eq(nd_to_host(x, got, 3 * sizeof *got), ND_ERR_INDEX, "reading a failed value must fail");
        NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_take: index 7 is out of bounds for axis 0 with size 5");
        nd_clear_error();
    }
    cr_expect_eq(nd_to_host(t, got, 3 * sizeof *got), ND_ERR_INDEX, "the failure stays");
    nd_clear_error();
    cr_expect_eq(nd_to_host(bystander, got, sizeof got), ND_OK, "an unrelated value is kept: %s", nd_last_error());
    for (int i = 0; i < 5; i++) cr_expect_eq(got[i], w[i] * 2);
    /* A later flush that does not touch the failed value runs normally. */
    nd_array *ok = nd_take(a, ints(1, (int64_t[]){2}, (int64_t[]){4, -5}), 0);
    cr_expect_eq(nd_to_host(ok, got, 2 * sizeof *got), ND_OK, "%s", nd_last_error());
    cr_expect(got[0] == 5 && got[1] == 1);
    /* Negative, below -size. */
    nd_array *t2 = nd_take(a, ints(1, (int64_t[]){1}, (int64_t[]){-6}), ND_ALL_AXES);
    cr_assert(t2);
    expect_index_error_at_sync("nd_take: index -6 is out of bounds for axis 0 with size 5");
    /* Non-integer indices: at the call. */
    cr_expect_null(nd_take(a, nd_full(ND_FLOAT32, ND_SHAPE(2), 1), 0));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_take");
    cr_expect_null(nd_take(a, nd_full(ND_BOOL, ND_SHAPE(5), 1), 0));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_take");
    cr_expect_null(nd_take(a, ints(1, (int64_t[]){1}, (int64_t[]){0}), 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_take");
    cr_expect_null(nd_take(NULL, ints(1, (int64_t[]){1}, (int64_t[]){0}), 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_take");
    cr_expect_null(nd_take(a, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_take");
    nd_free(a);
    nd_scope_end();
}

/* ------------------------------------------------------- take_along_axis */

NDT_TEST(indexing, take_along_axis_broadcasts_and_flattens) {
    nd_scope_begin();
    NDT_RNG(r);
    ref_arr *a = ndt_rand(&r, ND_INT16, 2, (int64_t[]){3, 4}, -100, 100);
    nd_array *na = ndt_upload(a);
    /* indices (1, 5) broadcast over a's rows: result (3, 5). */
    ref_arr *ix = rand_indices(&r, 2, (int64_t[]){1, 5}, 4);
    ref_arr *want = ref_new(ND_INT16, 2, (int64_t[]){3, 5});
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            ref_setd(want, i * 5 + j, ref_getd(a, i * 4 + wrap(((int64_t *)ix->data)[j], 4)));
    nd_array *ni = ndt_upload(ix);
    nd_array *got = nd_take_along_axis(na, ni, -1);
    expect_bytes(got, want, "axis -1, broadcast rows");
    /* axis 0 with (2, 4) indices: result[i, j] = a[idx[i, j], j]. */
    ref_arr *ix0 = rand_indices(&r, 2, (int64_t[]){2, 4}, 3);
    ref_arr *want0 = ref_new(ND_INT16, 2, (int64_t[]){2, 4});
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            ref_setd(want0, i * 4 + j, ref_getd(a, wrap(((int64_t *)ix0->data)[i * 4 + j], 3) * 4 + j));
    nd_array *ni0 = ndt_upload(ix0);
    nd_array *got0 = nd_take_along_axis(na, ni0, 0);
    expect_bytes(got0, want0, "axis 0");
    /* Flattened: 1-d indices. */
    nd_array *flat = nd_take_along_axis(na, ints(1, (int64_t[]){3}, (int64_t[]){11, -12, 5}), ND_ALL_AXES);
    ref_arr *wf = ref_new(ND_INT16, 1, (int64_t[]){3});
    ref_setd(wf, 0, ref_getd(a, 11));
    ref_setd(wf, 1, ref_getd(a, 0));
    ref_setd(wf, 2, ref_getd(a, 5));
    expect_bytes(flat, wf, "ND_ALL_AXES");
    /* Errors: rank mismatch, bad broadcast, bad axis. */
    cr_expect_null(nd_take_along_axis(na, ints(1, (int64_t[]){1}, (int64_t[]){0}), 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_take_along_axis");
    cr_expect_null(nd_take_along_axis(na, ints(2, (int64_t[]){2, 1}, (int64_t[]){0, 0}), 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_take_along_axis");
    cr_expect_null(nd_take_along_axis(na, ni0, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_take_along_axis");
    nd_array *bad = nd_take_along_axis(na, ints(2, (int64_t[]){1, 1}, (int64_t[]){4}), 1);
    cr_assert(bad);
    expect_index_error_at_sync("nd_take_along_axis: index 4 is out of bounds for axis 1 with size 4");
    ref_free(a);
    ref_free(ix);
    ref_free(want);
    ref_free(ix0);
    ref_free(want0);
    ref_free(wf);
    nd_scope_end();
}

/* ----------------------------------------------------------------- choose */

NDT_TEST(indexing, choose_broadcasts_and_promotes) {
    nd_scope_begin();
    NDT_RNG(r);
    ref_arr *c0 = ndt_rand(&r, ND_INT32, 2, (int64_t[]){3, 4}, -50, 50);
    ref_arr *c1 = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){4}, -5, 5);
    int64_t sel[12];
    for (int i = 0; i < 12; i++) sel[i] = ndt_int(&r, 0, 2);
    nd_array *choices[3] = {ndt_upload(c0), ndt_upload(c1), nd_scalar(0.5)};
    nd_array *a = ints(2, (int64_t[]){3, 4}, sel);
    nd_array *got = nd_choose(a, 3, choices);
    /* int32 with float32 promotes to float64; the weak 0.5 does not widen. */
    ref_arr *want = ref_new(ND_FLOAT64, 2, (int64_t[]){3, 4});
    for (int i = 0; i < 12; i++)
        ref_setd(want, i, sel[i] == 0 ? ref_getd(c0, i) : sel[i] == 1 ? ref_getd(c1, i % 4) : 0.5);
    expect_bytes(got, want, "choose");
    /* Entries outside 0..n-1, negative ones included, are errors. */
    nd_array *bad = nd_choose(ints(1, (int64_t[]){4}, (int64_t[]){1, 3, 0, 0}), 3, choices);
    cr_assert(bad);
    expect_index_error_at_sync("nd_choose: invalid entry 3");
    bad = nd_choose(ints(1, (int64_t[]){1}, (int64_t[]){-1}), 3, choices);
    cr_assert(bad);
    expect_index_error_at_sync("nd_choose: invalid entry -1");
    cr_expect_null(nd_choose(a, 0, choices));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_choose");
    nd_array *two[2] = {choices[0], NULL};
    cr_expect_null(nd_choose(a, 2, two));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_choose");
    ref_free(c0);
    ref_free(c1);
    ref_free(want);
    nd_scope_end();
}

/* --------------------------------------------------------------- nd_index */

/* a (3,4,5) = arange: NumPy's placement rules, checked against values
 * derived with NumPy 2.4. */
NDT_TEST(indexing, index_strings_place_broadcast_axes_as_numpy) {
    nd_scope_begin();
    nd_array *a = nd_reshape(nd_arange(ND_INT64, 0, 60, 1), 3, (int64_t[]){3, 4, 5});
    nd_array *i = ints(1, (int64_t[]){2}, (int64_t[]){0, 2}), *j = ints(1, (int64_t[]){2}, (int64_t[]){1, -1});
    nd_array *ij[2] = {i, j};
    /* a[i, :, j]: not adjacent -> (2, 4): [[1,6,11,16],[44,49,54,59]]. */
    nd_array *g = nd_index(a, "$0, :, $1", 2, ij);
    int64_t w1[8] = {1, 6, 11, 16, 44, 49, 54, 59};
    ref_arr *r1 = ref_from_doubles(ND_INT64, 2, (int64_t[]){2, 4}, (double[]){1, 6, 11, 16, 44, 49, 54, 59});
    (void)w1;
    expect_bytes(g, r1, "a[i, :, j]");
    /* a[:, i, j]: adjacent -> (3, 2): a[:, [0,2], [1,-1]] = [[1,14],[21,34],[41,54]]. */
    g = nd_index(a, ":, $0, $1", 2, ij);
    ref_arr *r2 = ref_from_doubles(ND_INT64, 2, (int64_t[]){3, 2}, (double[]){1, 14, 21, 34, 41, 54});
    expect_bytes(g, r2, "a[:, i, j]");
    /* a[0, :, j]: the integer counts as an index array -> (2, 4):
     * [[1,6,11,16],[4,9,14,19]]. */
    g = nd_index(a, "0, :, $0", 1, &j);
    ref_arr *r3 = ref_from_doubles(ND_INT64, 2, (int64_t[]){2, 4}, (double[]){1, 6, 11, 16, 4, 9, 14, 19});
    expect_bytes(g, r3, "a[0, :, j]");
    /* a[1, i]: adjacent -> (2, 5): rows 0 and 2 of a[1]. */
    g = nd_index(a, "1, $0", 1, &i);
    double w4[10];
    for (int k = 0; k < 5; k++) w4[k] = 20 + k, w4[5 + k] = 30 + k;
    ref_arr *r4 = ref_from_doubles(ND_INT64, 2, (int64_t[]){2, 5}, w4);
    expect_bytes(g, r4, "a[1, i]");
    /* a[..., j] with a 2-d index: (3, 4, 2, 2) with slices and None mixed. */
    nd_array *j2 = ints(2, (int64_t[]){2, 2}, (int64_t[]){0, 4, -2, 1});
    g = nd_index(a, "None, 1:, ::2, $0", 1, &j2); /* (1, 2, 2, 2, 2) */
    cr_assert(g, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(g), 5);
    double w5[16];
    const int64_t jj[4] = {0, 4, 3, 1};
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++)
            for (int k = 0; k < 4; k++) w5[(p * 2 + q) * 4 + k] = (1 + p) * 20 + q * 2 * 5 + jj[k];
    ref_arr *r5 = ref_from_doubles(ND_INT64, 5, (int64_t[]){1, 2, 2, 2, 2}, w5);
    expect_bytes(g, r5, "a[None, 1:, ::2, j2]");
    /* A 1-d bool array stands for its nonzero positions. */
    bool m[4] = {true, false, false, true};
    nd_array *mask = nd_from_host(m, ND_BOOL, ND_SHAPE(4));
    g = nd_index(a, "2, $0, 0", 1, &mask);
    ref_arr *r6 = ref_from_doubles(ND_INT64, 1, (int64_t[]){2}, (double[]){40, 55});
    expect_bytes(g, r6, "a[2, mask, 0]");
    /* Without arrays: nd_view. */
    g = nd_index(a, "1, ::-1, 4", 0, NULL);
    ref_arr *r7 = ref_from_doubles(ND_INT64, 1, (int64_t[]){4}, (double[]){39, 34, 29, 24});
    expect_bytes(g, r7, "plain view");
    /* Errors. */
    cr_expect_null(nd_index(a, "$2", 2, ij));
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_index");
    cr_expect_null(nd_index(a, "$0, :, :, :", 1, &i));
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_index");
    cr_expect_null(nd_index(a, NULL, 1, &i));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_index");
    nd_array *k3 = ints(1, (int64_t[]){3}, (int64_t[]){0, 1, 2});
    nd_array *bad_pair[2] = {i, k3};
    cr_expect_null(nd_index(a, "$0, $1", 2, bad_pair));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_index");
    g = nd_index(a, ":, $0", 1, &k3);
    cr_assert(g);
    g = nd_index(a, "$0, 5", 1, &i);
    cr_assert(g);
    expect_index_error_at_sync("nd_index: index 5 is out of bounds for axis 1 with size 4");
    ref_free(r1);
    ref_free(r2);
    ref_free(r3);
    ref_free(r4);
    ref_free(r5);
    ref_free(r6);
    ref_free(r7);
    nd_scope_end();
}

/* --------------------------------------------------------------- scatters */

/* a[idx] = v with repeats: the last occurrence wins, every dtype. */
NDT_TEST(indexing, index_assign_last_write_wins_every_dtype) {
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        ref_arr *a = ndt_rand_small(&r, dt, 1, (int64_t[]){10});
        ref_arr *v = ndt_rand_small(&r, dt, 1, (int64_t[]){300});
        ref_arr *ix = rand_indices(&r, 1, (int64_t[]){300}, 10);
        ref_arr *want = ref_astype(a, dt);
        size_t item = ref_itemsize(dt);
        for (int64_t k = 0; k < 300; k++)
            memcpy(want->data + wrap(((int64_t *)ix->data)[k], 10) * item, v->data + k * item, item);
        nd_array *na = ndt_upload(a), *nv = ndt_upload(v), *ni = ndt_upload(ix);
        cr_assert_eq(nd_index_assign(na, "$0", 1, &ni, nv), ND_OK, "%s", nd_last_error());
        expect_bytes(na, want, ref_dtype_name(dt));
        nd_free(na);
        nd_free(nv);
        nd_free(ni);
        ref_free(a);
        ref_free(v);
        ref_free(ix);
        ref_free(want);
    }
}

/* Through a transposed view, rows of a 2-d array, a broadcast value; then
 * a read through another op sees the new version. */
NDT_TEST(indexing, index_assign_into_views_and_rows) {
    nd_scope_begin();
    double v[12] = {0};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(3, 4));
    nd_array *at = nd_transpose(a, NULL); /* (4, 3) */
    nd_array *rows = ints(1, (int64_t[]){2}, (int64_t[]){-1, 1});
    cr_assert_eq(nd_index_assign(at, "$0", 1, &rows, nd_scalar(7)), ND_OK, "%s", nd_last_error());
    nd_array *vals = nd_from_host((double[]){1, 2, 3, 4}, ND_FLOAT64, ND_SHAPE(4));
    nd_array *r0 = ints(1, (int64_t[]){1}, (int64_t[]){0});
    cr_assert_eq(nd_index_assign(a, "$0, :", 1, &r0, vals), ND_OK, "%s", nd_last_error());
    nd_array *twice = nd_mul(a, nd_scalar(2));
    /* at rows 3 and 1 are a's columns 3 and 1; then a[0, :] = 1..4. */
    double want[12] = {1, 2, 3, 4, 0, 7, 0, 7, 0, 7, 0, 7};
    ref_arr *w = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){3, 4}, want);
    expect_bytes(a, w, "a");
    for (int i = 0; i < 12; i++) want[i] *= 2;
    ref_arr *w2 = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){3, 4}, want);
    expect_bytes(twice, w2, "a * 2 recorded after the writes");
    /* Errors: values that do not broadcast, a read-only target, OOB. */
    nd_array *three = nd_from_host((double[]){1, 2, 3}, ND_FLOAT64, ND_SHAPE(3));
    cr_expect_neq(nd_index_assign(a, "$0, :", 1, &r0, three), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_index_assign");
    cr_expect_neq(nd_index_assign(nd_scalar(1), "$0", 1, &r0, three), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_index_assign");
    nd_array *far = ints(1, (int64_t[]){1}, (int64_t[]){3});
    cr_assert_eq(nd_index_assign(a, "$0", 1, &far, nd_scalar(1)), ND_OK);
    expect_index_error_at_sync("nd_index_assign: index 3 is out of bounds for axis 0 with size 3");
    ref_free(w);
    ref_free(w2);
    nd_scope_end();
}

NDT_TEST(indexing, put_cycles_values_and_put_along_axis) {
    nd_scope_begin();
    double z[6] = {0};
    nd_array *a = nd_from_host(z, ND_FLOAT32, ND_SHAPE(2, 3));
    cr_assert(a);
    nd_array *a32 = nd_astype(a, ND_FLOAT32);
    nd_array *ix = ints(1, (int64_t[]){5}, (int64_t[]){0, -1, 2, 3, 0});
    nd_array *v = nd_from_host((double[]){10, 20}, ND_FLOAT64, ND_SHAPE(2));
    /* np.put: values repeat 10, 20, 10, 20, 10; index 0 twice: last wins. */
    cr_assert_eq(nd_put(a32, ix, v), ND_OK, "%s", nd_last_error());
    ref_arr *w = ref_from_doubles(ND_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){10, 0, 10, 20, 0, 20});
    expect_bytes(a32, w, "put");
    /* put_along_axis: b[i, idx[i, k]] = values. */
    nd_array *b = nd_zeros(ND_INT8, ND_SHAPE(2, 3));
    nd_array *pidx = ints(2, (int64_t[]){2, 1}, (int64_t[]){2, -3});
    cr_assert_eq(nd_put_along_axis(b, pidx, nd_scalar_int(-5), 1), ND_OK, "%s", nd_last_error());
    ref_arr *wb = ref_from_doubles(ND_INT8, 2, (int64_t[]){2, 3}, (double[]){0, 0, -5, -5, 0, 0});
    expect_bytes(b, wb, "put_along_axis");
    /* Errors. */
    cr_expect_neq(nd_put(nd_transpose(a32, NULL), ix, v), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_put");
    cr_expect_neq(nd_put(a32, ix, nd_from_host(NULL, ND_FLOAT64, ND_SHAPE(0))), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_put");
    cr_expect_neq(nd_put_along_axis(b, pidx, nd_scalar_int(1), 2), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_put_along_axis");
    cr_assert_eq(nd_put(a32, ints(1, (int64_t[]){1}, (int64_t[]){6}), v), ND_OK);
    expect_index_error_at_sync("nd_put: index 6 is out of bounds for axis 0 with size 6");
    ref_free(w);
    ref_free(wb);
    nd_scope_end();
}

/* np.add.at: repeated indices accumulate in index order (floats: the same
 * bits as a sequential sum in the dtype), every dtype. */
NDT_TEST(indexing, add_at_accumulates_in_order_every_dtype) {
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        int small = dt == ND_FLOAT16 || dt == ND_BFLOAT16;
        ref_arr *a = small ? ndt_rand(&r, dt, 2, (int64_t[]){6, 2}, -4, 4) : ndt_rand_bits(&r, dt, 2, (int64_t[]){6, 2});
        ref_arr *v = small ? ndt_rand(&r, dt, 2, (int64_t[]){500, 2}, -4, 4)
                           : ndt_rand_bits(&r, dt, 2, (int64_t[]){500, 2});
        ref_arr *ix = rand_indices(&r, 1, (int64_t[]){500}, 6);
        ref_arr *want = ref_astype(a, dt);
        for (int64_t k = 0; k < 500; k++)
            for (int c = 0; c < 2; c++) {
                int64_t o = wrap(((int64_t *)ix->data)[k], 6) * 2 + c, vi = k * 2 + c;
                if (ref_is_float(dt)) {
                    double s = ref_getd(want, o) + ref_getd(v, vi);
                    if (dt == ND_FLOAT32) s = (float)((float)ref_getd(want, o) + (float)ref_getd(v, vi));
                    ref_setd(want, o, s);
                } else if (dt == ND_BOOL) {
                    ref_setu(want, o, ref_getu(want, o) | ref_getu(v, vi));
                } else {
                    ref_setu(want, o, ref_getu(want, o) + ref_getu(v, vi));
                }
            }
        nd_array *na = ndt_upload(a), *nv = ndt_upload(v), *ni = ndt_upload(ix);
        cr_assert_eq(nd_add_at(na, ni, nv), ND_OK, "%s", nd_last_error());
        expect_bytes(na, want, ref_dtype_name(dt));
        nd_free(na);
        nd_free(nv);
        nd_free(ni);
        ref_free(a);
        ref_free(v);
        ref_free(ix);
        ref_free(want);
    }
}

/* np.add.at(a, index, v) with NumPy's full index (nd_add_at_index) on a
 * (4,5,6) array: the reference walks the iteration space that NumPy's
 * indexing gives in C order and adds each value into its target in that
 * order. The values span 18 decades, so a sum in any other order has other
 * bits. */
#define AT_A0 4
#define AT_A1 5
#define AT_A2 6
typedef struct {
    const char *index;
    int n_arrays;
    int ndim;         /* of the iteration space */
    int64_t shape[4];
    /* a's flat target of iteration point o (ix: the index arrays as int64). */
    int64_t (*target)(const int64_t *o, int64_t *const *ix);
} at_case;
static int64_t at_flat(int64_t i, int64_t j, int64_t k) {
    return (wrap(i, AT_A0) * AT_A1 + wrap(j, AT_A1)) * AT_A2 + wrap(k, AT_A2);
}
static int64_t at_axis1(const int64_t *o, int64_t *const *ix) { return at_flat(o[0], ix[0][o[1] * 3 + o[2]], o[3]); }
static int64_t at_split(const int64_t *o, int64_t *const *ix) { return at_flat(ix[0][o[1]], o[2], ix[1][o[0]]); }
static int64_t at_last(const int64_t *o, int64_t *const *ix) { return at_flat(o[0], o[1], ix[0][o[2]]); }
static int64_t at_slice(const int64_t *o, int64_t *const *ix) { return at_flat(ix[0][o[0]], 1 + o[1], o[2]); }
static int64_t at_int(const int64_t *o, int64_t *const *ix) { return at_flat(2, ix[0][o[0]], o[1]); }
static int64_t at_mask(const int64_t *o, int64_t *const *ix) {
    (void)ix;
    static const int64_t rows[3] = {0, 2, 3}; /* the mask's nonzero rows */
    return at_flat(rows[o[0]], o[1], o[2]);
}
static int64_t at_basic(const int64_t *o, int64_t *const *ix) { return (void)ix, at_flat(1, 2 * o[0], o[1]); }

NDT_TEST(indexing, add_at_index_any_axis_and_several_arrays) {
    NDT_RNG(r);
    const at_case cases[] = {
        {":, $0", 1, 4, {AT_A0, 2, 3, AT_A2}, at_axis1},     /* idx (2,3) on axis 1 */
        {"$0, :, $1", 2, 3, {2, 3, AT_A1}, at_split},       /* (3,) and (2,1) apart: broadcast axes first */
        {"..., $0", 1, 3, {AT_A0, AT_A1, 9}, at_last},       /* the last axis */
        {"$0, 1:3", 1, 3, {7, 2, AT_A2}, at_slice},          /* array and slice */
        {"2, $0", 1, 2, {8, AT_A2}, at_int},                 /* an integer counts as a 0-d index array */
        {"$0", 1, 3, {3, AT_A1, AT_A2}, at_mask},            /* a 1-d bool array: its nonzero positions */
        {"1, ::2", 0, 2, {3, AT_A2}, at_basic},              /* basic only: a lazy a[1, ::2] += v */
    };
    const int64_t ash[3] = {AT_A0, AT_A1, AT_A2};
    const nd_dtype dts[3] = {ND_FLOAT64, ND_FLOAT32, ND_INT8};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int t = 0; t < 3; t++) {
            const at_case *k = &cases[c];
            nd_dtype dt = dts[t];
            ref_arr *ix[2] = {NULL, NULL};
            nd_array *nix[2] = {NULL, NULL};
            if (c == 0) ix[0] = rand_indices(&r, 2, (int64_t[]){2, 3}, AT_A1);
            if (c == 1) {
                ix[0] = rand_indices(&r, 1, (int64_t[]){3}, AT_A0);
                ix[1] = rand_indices(&r, 2, (int64_t[]){2, 1}, AT_A2);
            }
            if (c == 2) ix[0] = rand_indices(&r, 1, (int64_t[]){9}, AT_A2);
            if (c == 3) ix[0] = rand_indices(&r, 1, (int64_t[]){7}, AT_A0);
            if (c == 4) ix[0] = rand_indices(&r, 1, (int64_t[]){8}, AT_A1);
            for (int j = 0; j < 2 && ix[j]; j++) {
                ref_arr *up = c == 0 ? ref_astype(ix[j], ND_INT32) : ix[j]; /* any integer dtype */
                nix[j] = ndt_upload(up);
                if (up != ix[j]) ref_free(up);
            }
            if (c == 5) nix[0] = nd_from_host((uint8_t[]){1, 0, 1, 1}, ND_BOOL, ND_SHAPE(4));
            /* a and the values: magnitudes 1 .. 1e17 (floats), any bits (int8). */
            ref_arr *a = dt == ND_INT8 ? ndt_rand_bits(&r, dt, 3, ash) : ndt_rand(&r, dt, 3, ash, -4, 4);
            ref_arr *v = dt == ND_INT8 ? ndt_rand_bits(&r, dt, k->ndim, k->shape)
                                       : ndt_rand(&r, ND_FLOAT64, k->ndim, k->shape, -1, 1);
            if (dt != ND_INT8)
                for (int64_t i = 0; i < v->size; i++)
                    ref_setd(v, i, ref_round_to(dt, ref_getd(v, i) * pow(10, (double)ndt_int(&r, 0, 17))));
            ref_arr *want = ref_astype(a, dt);
            for (int64_t i = 0; i < v->size; i++) {
                int64_t o[4], *d[2] = {ix[0] ? (int64_t *)ix[0]->data : NULL, ix[1] ? (int64_t *)ix[1]->data : NULL};
                ref_unravel(i, k->ndim, k->shape, o);
                int64_t f = k->target(o, d);
                if (dt == ND_INT8) ref_setu(want, f, ref_getu(want, f) + ref_getu(v, i));
                else if (dt == ND_FLOAT32) ref_setd(want, f, (float)((float)ref_getd(want, f) + (float)ref_getd(v, i)));
                else ref_setd(want, f, ref_getd(want, f) + ref_getd(v, i));
            }
            ref_arr *vt = ref_astype(v, dt);
            nd_array *na = ndt_upload(a), *nv = ndt_upload(vt);
            ref_free(vt);
            char what[64];
            snprintf(what, sizeof what, "\"%s\" %s", k->index, ref_dtype_name(dt));
            cr_assert_eq(nd_add_at_index(na, k->index, k->n_arrays, nix, nv), ND_OK, "%s: %s",
                         what, nd_last_error());
            expect_bytes(na, want, what);
            nd_free(na);
            nd_free(nv);
            for (int j = 0; j < 2; j++) {
                nd_free(nix[j]);
                ref_free(ix[j]);
            }
            ref_free(a);
            ref_free(v);
            ref_free(want);
        }
}

/* Values broadcast to the indexed shape; repeated targets along a slice;
 * errors name nd_add_at_index, the index, the axis and its size. */
NDT_TEST(indexing, add_at_index_broadcast_and_errors) {
    nd_scope_begin();
    /* np.add.at(a, (slice(None), [0, 0, 3]), 1) on zeros((3, 4)). */
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(3, 4));
    nd_array *cols = ints(1, (int64_t[]){3}, (int64_t[]){0, 0, 3});
    cr_assert_eq(nd_add_at_index(a, ":, $0", 1, &cols, nd_scalar(1)), ND_OK, "%s", nd_last_error());
    /* np.add.at(a, ([0, 0], slice(1, 3)), [[1, 2]]). */
    nd_array *rows = ints(1, (int64_t[]){2}, (int64_t[]){0, -3});
    nd_array *v = nd_from_host((double[]){1, 2}, ND_FLOAT64, ND_SHAPE(1, 2));
    cr_assert_eq(nd_add_at_index(a, "$0, 1:3", 1, &rows, v), ND_OK, "%s", nd_last_error());
    ref_arr *w = ref_from_doubles(ND_FLOAT64, 2, (int64_t[]){3, 4},
                                  (double[]){2, 2, 4, 1, 2, 0, 0, 1, 2, 0, 0, 1});
    expect_bytes(a, w, "slices and repeats");
    /* Errors at the call. */
    cr_expect_neq(nd_add_at_index(a, ":, $0", 1, &cols, nd_zeros(ND_FLOAT64, ND_SHAPE(2))), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_add_at_index");
    cr_expect_neq(nd_add_at_index(a, ":, $1", 1, &cols, nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_add_at_index");
    cr_expect_neq(nd_add_at_index(a, "$0", 1, (nd_array *[]){nd_full(ND_FLOAT32, ND_SHAPE(1), 0)}, nd_scalar(1)),
                  ND_OK);
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_add_at_index");
    cr_expect_neq(nd_add_at_index(nd_scalar(1), "$0", 1, &cols, nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_add_at_index");
    cr_expect_neq(nd_add_at_index(a, NULL, 1, &cols, nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_add_at_index");
    /* Out of bounds on axis 1: at the read, the target failed. */
    nd_array *far = ints(1, (int64_t[]){2}, (int64_t[]){1, -5});
    cr_assert_eq(nd_add_at_index(a, ":, $0", 1, &far, nd_scalar(1)), ND_OK);
    expect_index_error_at_sync("nd_add_at_index: index -5 is out of bounds for axis 1 with size 4");
    cr_expect_neq(nd_to_host(a, (double[12]){0}, 96), ND_OK, "the failed scatter's target reports it");
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_add_at_index");
    ref_free(w);
    nd_scope_end();
}

NDT_TEST(indexing, add_at_broadcast_values_views_and_errors) {
    nd_scope_begin();
    /* bincount by add_at on a strided view (every other element). */
    nd_array *base = nd_zeros(ND_INT64, ND_SHAPE(8));
    nd_array *even = nd_view(base, "::2");
    nd_array *lab = ints(1, (int64_t[]){7}, (int64_t[]){0, 3, 3, -1, 2, 0, 3});
    cr_assert_eq(nd_add_at(even, lab, nd_scalar_int(1)), ND_OK, "%s", nd_last_error());
    ref_arr *w = ref_from_doubles(ND_INT64, 1, (int64_t[]){8}, (double[]){2, 0, 0, 0, 1, 0, 4, 0});
    expect_bytes(base, w, "counts in even slots");
    /* Empty indices: nothing changes. */
    cr_assert_eq(nd_add_at(base, nd_from_host(NULL, ND_INT64, ND_SHAPE(0)), nd_scalar_int(5)), ND_OK);
    expect_bytes(base, w, "empty indices");
    cr_expect_neq(nd_add_at(nd_full(ND_FLOAT64, 0, NULL, 1), lab, nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_add_at");
    cr_expect_neq(nd_add_at(base, lab, nd_zeros(ND_INT64, ND_SHAPE(3))), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_add_at");
    cr_expect_neq(nd_add_at(base, nd_full(ND_FLOAT64, ND_SHAPE(2), 0), nd_scalar(1)), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_add_at");
    cr_assert_eq(nd_add_at(base, ints(1, (int64_t[]){2}, (int64_t[]){1, -9}), nd_scalar_int(1)), ND_OK);
    expect_index_error_at_sync("nd_add_at: index -9 is out of bounds for axis 0 with size 8");
    /* The failed scatter's target reports it on every backend. */
    cr_expect_eq(nd_to_host(base, (int64_t[8]){0}, 64), ND_ERR_INDEX, "the failed scatter's target reports it");
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_add_at: index -9 is out of bounds for axis 0 with size 8");
    nd_clear_error();
    ref_free(w);
    nd_scope_end();
}

/* ------------------------------------------- scatters inside a whole plan */

static double item_of(nd_array *a, int64_t i) {
    nd_array *ix = nd_scalar_int(i), *e = nd_index(a, "$0", 1, &ix);
    double v = nd_item(e);
    cr_assert(v == v, "%s", nd_last_error());
    nd_free(e);
    nd_free(ix);
    return v;
}

/* A read of a that fails with ND_ERR_INDEX and `text`. */
static void expect_read_fails(nd_array *a, const char *text, const char *what) {
    double buf[64];
    nd_status st = nd_to_host(a, buf, (size_t)nd_size(a) * sizeof(double));
    cr_expect_eq(st, ND_ERR_INDEX, "%s: reading it should fail with ND_ERR_INDEX, got %s", what, nd_status_name(st));
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, text), "%s: message '%s' should contain '%s'", what, m ? m : "(null)", text);
    nd_clear_error();
}

/* A put with a bad index among other work of one flush (a value before
 * it, a good scatter of computed values, a reduction and a value computed
 * from each target after it): nd_sync reports the put's error, its target
 * and what is computed from it fail at every read with the same message,
 * everything else keeps its value. The flush ran as one plan: no routine
 * of it reads back (nd_stats.plans_read_back), which a Cholesky does. */
NDT_TEST(indexing, bad_scatter_fails_only_its_target_and_dependents) {
    nd_scope_begin();
    nd_array *x = nd_from_host((double[]){1, 2, 3, 4, 5, 6}, ND_FLOAT64, ND_SHAPE(6));
    nd_array *t = nd_zeros(ND_FLOAT64, ND_SHAPE(5)), *g = nd_zeros(ND_FLOAT64, ND_SHAPE(5));
    nd_array *good = ints(1, (int64_t[]){3}, (int64_t[]){4, -1, 0});
    nd_array *bad = ints(1, (int64_t[]){3}, (int64_t[]){1, 7, 2});
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_array *y = nd_mul(x, nd_scalar(2.0));
    nd_array *y3 = nd_view(y, ":3");
    cr_assert_eq(nd_put(g, good, y3), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_put(t, bad, nd_add(y3, nd_scalar(1.0))), ND_OK, "%s", nd_last_error());
    nd_array *d = nd_add(t, nd_scalar(1.0)), *h = nd_add(g, nd_scalar(1.0)), *u = nd_sum(y, ND_ALL_AXES);
    expect_index_error_at_sync("nd_put: index 7 is out of bounds for axis 0 with size 5");
    nd_get_stats(&s1);
    cr_expect_eq(s1.plans_read_back, s0.plans_read_back, "a plan with scatters runs whole");
    double want_y[6] = {2, 4, 6, 8, 10, 12}, want_g[5] = {6, 0, 0, 0, 4}, got[6];
    cr_assert_eq(nd_to_host(y, got, sizeof want_y), ND_OK, "%s", nd_last_error());
    cr_expect_arr_eq(got, want_y, sizeof want_y, "the value before the scatter keeps its value");
    cr_assert_eq(nd_to_host(g, got, sizeof want_g), ND_OK, "%s", nd_last_error());
    cr_expect_arr_eq(got, want_g, sizeof want_g, "the good scatter (last write wins)");
    for (int i = 0; i < 5; i++) want_g[i] += 1;
    cr_assert_eq(nd_to_host(h, got, sizeof want_g), ND_OK, "%s", nd_last_error());
    cr_expect_arr_eq(got, want_g, sizeof want_g, "computed from the good scatter's target");
    cr_expect_eq(nd_item(u), 42.0, "an unrelated reduction: %s", nd_last_error());
    expect_read_fails(t, "nd_put: index 7 is out of bounds for axis 0 with size 5", "the failed scatter's target");
    expect_read_fails(d, "nd_put: index 7 is out of bounds for axis 0 with size 5", "computed from it");
    /* Written whole again, the target holds its new value. */
    cr_assert_eq(nd_fill(t, 3), ND_OK);
    cr_expect_eq(item_of(t, 4), 3.0, "a target written whole again: %s", nd_last_error());
    /* The control: a plan holding a Cholesky reads back. */
    nd_get_stats(&s0);
    nd_array *l = nd_linalg_cholesky(nd_from_host((double[]){4, 2, 2, 3}, ND_FLOAT64, ND_SHAPE(2, 2)));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    cr_expect_eq(s1.plans_read_back - s0.plans_read_back, 1, "a Cholesky's plan reads back");
    nd_free(l);
    nd_free(d);
    nd_free(h);
    nd_free(u);
    nd_scope_end();
}

/* nd_index_assign and a stacked gather (five index arrays) with a bad
 * index on a later axis, in one flush with good work: the message names the
 * function, the index, the axis and its size; the good values stand. */
NDT_TEST(indexing, bad_index_on_a_later_axis_in_a_flush) {
    nd_scope_begin();
    nd_array *a = nd_zeros(ND_INT32, ND_SHAPE(3, 4));
    nd_array *rows = ints(1, (int64_t[]){2}, (int64_t[]){0, -1}), *cols = ints(1, (int64_t[]){2}, (int64_t[]){1, 9});
    nd_array *src = nd_arange(ND_INT64, 0, 32, 1), *s5 = nd_reshape(src, 5, (int64_t[]){2, 2, 2, 2, 2});
    nd_array *ok = ints(1, (int64_t[]){3}, (int64_t[]){1, 0, -1}), *far = ints(1, (int64_t[]){3}, (int64_t[]){0, 1, 2});
    cr_assert_eq(nd_sync(), ND_OK);
    cr_assert_eq(nd_index_assign(a, "$0, $1", 2, (nd_array *[]){rows, cols}, nd_scalar_int(5)), ND_OK);
    nd_array *bad_gather = nd_index(s5, "$0, $1, $2, $3, $4", 5, (nd_array *[]){ok, ok, ok, far, ok});
    nd_array *good_gather = nd_index(s5, "$0, $1, $2, $3, $4", 5, (nd_array *[]){ok, ok, ok, ok, ok});
    nd_array *bad_after = nd_mul(bad_gather, nd_scalar_int(2)), *good_after = nd_mul(good_gather, nd_scalar_int(2));
    nd_status st = nd_sync();
    cr_expect_eq(st, ND_ERR_INDEX, "%s", nd_status_name(st));
    nd_clear_error();
    int64_t got[3];
    cr_assert_eq(nd_to_host(good_after, got, sizeof got), ND_OK, "%s", nd_last_error());
    cr_expect(got[0] == 62 && got[1] == 0 && got[2] == 62, "good stacked gather: %lld %lld %lld", (long long)got[0],
              (long long)got[1], (long long)got[2]);
    int32_t buf[12];
    cr_expect_eq(nd_to_host(a, buf, sizeof buf), ND_ERR_INDEX);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_index_assign: index 9 is out of bounds for axis 1 with size 4");
    cr_expect_eq(nd_to_host(bad_after, got, sizeof got), ND_ERR_INDEX);
    NDT_EXPECT_ERR(ND_ERR_INDEX, "nd_index: index 2 is out of bounds for axis 3 with size 2");
    nd_clear_error();
    nd_free(bad_after);
    nd_free(good_after);
    nd_free(bad_gather);
    nd_free(good_gather);
    nd_scope_end();
}

/* Many writes to few elements, from values computed in the same flush
 * and read by later work of it: put's last write wins and add_at sums in
 * index order (float32 sums of wide magnitudes, where any other order
 * rounds differently), the same bits on every run, as a sequential loop. */
NDT_TEST(indexing, repeated_scatters_in_a_plan_are_ordered) {
    nd_scope_begin();
    NDT_RNG(r);
    enum { T = 37, M = 60000 };
    int64_t *ix = malloc(sizeof *ix * M);
    float *v = malloc(sizeof *v * M), want_put[T], want_add[T], got[T];
    for (int64_t i = 0; i < M; i++) {
        ix[i] = ndt_int(&r, -T, T - 1);
        v[i] = (float)(ndt_uniform(&r, -1, 1) * pow(10, (double)ndt_int(&r, -3, 7)));
    }
    for (int j = 0; j < T; j++) want_put[j] = want_add[j] = (float)j;
    for (int64_t i = 0; i < M; i++) {
        int64_t j = wrap(ix[i], T);
        want_put[j] = v[i] * 2.0f;
        want_add[j] = want_add[j] + v[i] * 2.0f;
    }
    nd_array *idx = ints(1, (int64_t[]){M}, ix), *vals = nd_from_host(v, ND_FLOAT32, ND_SHAPE(M));
    for (int run = 0; run < 3; run++) {
        nd_array *p = nd_arange(ND_FLOAT32, 0, T, 1), *q = nd_arange(ND_FLOAT32, 0, T, 1);
        nd_array *v2 = nd_mul(vals, nd_scalar(2.0));
        cr_assert_eq(nd_put(p, idx, v2), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_add_at(q, idx, v2), ND_OK, "%s", nd_last_error());
        nd_array *p1 = nd_add(p, nd_scalar(0.0)), *q1 = nd_add(q, nd_scalar(0.0));
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_to_host(p1, got, sizeof got), ND_OK, "%s", nd_last_error());
        for (int j = 0; j < T; j++)
            cr_expect(memcmp(&got[j], &want_put[j], sizeof(float)) == 0, "run %d put [%d]: %.9g, want %.9g", run, j,
                      got[j], want_put[j]);
        cr_assert_eq(nd_to_host(q1, got, sizeof got), ND_OK, "%s", nd_last_error());
        for (int j = 0; j < T; j++)
            cr_expect(memcmp(&got[j], &want_add[j], sizeof(float)) == 0, "run %d add_at [%d]: %.9g, want %.9g", run,
                      j, got[j], want_add[j]);
        nd_free(p);
        nd_free(q);
        nd_free(v2);
        nd_free(p1);
        nd_free(q1);
    }
    free(ix);
    free(v);
    nd_scope_end();
}
