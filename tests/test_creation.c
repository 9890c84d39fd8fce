/* Creation functions, host round trips for every dtype, astype between every
 * pair of dtypes (NumPy unsafe casts), copy and item. */
#include "common.h"

#include <stdlib.h>

NDT_TEST(creation, empty_fill_then_read) {
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        nd_array *x = nd_empty(t, ND_SHAPE(3, 5));
        cr_assert(x, "nd_empty(%s): %s", ref_dtype_name(t), nd_last_error());
        cr_assert_eq(nd_fill(x, 7), ND_OK, "%s", nd_last_error());
        ref_arr *want = ref_new(t, 2, (int64_t[]){3, 5});
        for (int64_t i = 0; i < want->size; i++) ref_setd(want, i, 7);
        ndt_check(x, want, 0, 0, NULL, "empty+fill(7) %s", ref_dtype_name(t));
        nd_free(x);
        ref_free(want);
    }
}

NDT_TEST(creation, zeros_ones_full_every_dtype) {
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        double fv = ref_is_float(t) ? -3.75 : 42;
        nd_array *z = nd_zeros(t, ND_SHAPE(4, 3)), *o = nd_ones(t, ND_SHAPE(2, 2, 2)),
                 *f = nd_full(t, ND_SHAPE(7), fv), *f0 = nd_full(t, ND_SCALAR_SHAPE, 1);
        ref_arr *wz = ref_new(t, 2, (int64_t[]){4, 3}), *wo = ref_new(t, 3, (int64_t[]){2, 2, 2}),
                *wf = ref_new(t, 1, (int64_t[]){7}), *w0 = ref_new(t, 0, NULL);
        for (int64_t i = 0; i < wo->size; i++) ref_setd(wo, i, 1);
        for (int64_t i = 0; i < wf->size; i++) ref_setd(wf, i, fv);
        ref_setd(w0, 0, 1);
        ndt_check(z, wz, 0, 0, NULL, "zeros %s", ref_dtype_name(t));
        ndt_check(o, wo, 0, 0, NULL, "ones %s", ref_dtype_name(t));
        ndt_check(f, wf, 0, 0, NULL, "full(%g) %s", fv, ref_dtype_name(t));
        ndt_check(f0, w0, 0, 0, NULL, "full 0-d %s", ref_dtype_name(t));
        nd_free(z); nd_free(o); nd_free(f); nd_free(f0);
        ref_free(wz); ref_free(wo); ref_free(wf); ref_free(w0);
    }
}

static void check_arange(nd_dtype t, double start, double stop, double step, int64_t n) {
    nd_array *a = nd_arange(t, start, stop, step);
    ref_arr *want = ref_new(t, 1, &n);
    for (int64_t i = 0; i < n; i++) ref_setd(want, i, start + (double)i * step);
    ndt_check(a, want, ndt_rtol(t), 1e-12, NULL, "arange(%g, %g, %g) %s", start, stop, step,
              ref_dtype_name(t));
    nd_free(a);
    ref_free(want);
}

NDT_TEST(creation, arange) {
    check_arange(ND_INT32, 0, 10, 1, 10);
    check_arange(ND_INT32, 10, 0, -3, 4); /* 10 7 4 1 */
    check_arange(ND_INT64, -5, 5, 2, 5);
    check_arange(ND_FLOAT64, 0, 1, 0.1, 10);
    check_arange(ND_FLOAT32, -2.5, 2.5, 0.5, 10);
    check_arange(ND_FLOAT64, 1, -1, -0.25, 8);
    check_arange(ND_UINT8, 0, 200, 7, 29);
    check_arange(ND_FLOAT16, 0, 8, 0.5, 16);
    check_arange(ND_INT32, 5, 5, 1, 0);
    check_arange(ND_INT32, 0, 10, -1, 0);
}

static void check_linspace(nd_dtype t, double a, double b, int64_t n) {
    nd_array *x = nd_linspace(t, a, b, n);
    ref_arr *want = ref_new(t, 1, &n);
    for (int64_t i = 0; i < n; i++)
        ref_setd(want, i, n == 1 ? a : i == n - 1 ? b : a + (double)i * ((b - a) / (double)(n - 1)));
    ndt_check(x, want, ndt_rtol(t), 1e-12, NULL, "linspace(%g, %g, %lld) %s", a, b, (long long)n,
              ref_dtype_name(t));
    nd_free(x);
    ref_free(want);
}

NDT_TEST(creation, linspace) {
    check_linspace(ND_FLOAT64, 0, 1, 5);
    check_linspace(ND_FLOAT32, -1, 1, 7);
    check_linspace(ND_FLOAT64, 3, -3, 13);
    check_linspace(ND_FLOAT64, 2, 3, 1);
    check_linspace(ND_FLOAT64, 2, 3, 0);
    check_linspace(ND_FLOAT64, 0, 1, 1001);
}

/* NumPy 2 sets the last element to stop exactly (i * step + start can miss
 * it by an ulp: these (start, stop, num) do, about a third of them) and
 * floors into integer dtypes (values checked with NumPy 2.4). */
NDT_TEST(creation, linspace_exact_stop_and_integer_floor) {
    for (int64_t n = 2; n < 40; n++)
        for (int k = 0; k < 12; k++) {
            double a = k * 0.37 - 3.1, b = 1.0 / (k + 3) + (double)n * 0.11;
            nd_array *x = nd_linspace(ND_FLOAT64, a, b, n);
            double got[40];
            for (int i = 0; i < 40; i++) got[i] = -12345.0;
            cr_assert_eq(nd_to_host(x, got, sizeof got), ND_OK, "%s", nd_last_error());
            cr_expect(got[n - 1] == b, "linspace(%.17g, %.17g, %lld)[-1] = %.17g, not stop",
                      a, b, (long long)n, got[n - 1]);
            cr_expect(got[0] == a, "linspace(...)[0] = %.17g, not start %.17g", got[0], a);
            nd_free(x);
        }
    struct {
        nd_dtype t;
        double a, b;
        int64_t n;
        int64_t want[7];
    } cases[] = {
        {ND_INT32, -3.7, 5, 7, {-4, -3, -1, 0, 2, 3, 5}},
        {ND_INT8, -1, -5, 3, {-1, -3, -5}},
        {ND_INT64, 0, 1, 4, {0, 0, 0, 1}},
        {ND_UINT8, 0.5, 250.5, 3, {0, 125, 250}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array *x = nd_linspace(cases[c].t, cases[c].a, cases[c].b, cases[c].n);
        nd_array *x64 = nd_astype(x, ND_INT64);
        int64_t got[7] = {99, 99, 99, 99, 99, 99, 99};
        cr_assert_eq(nd_to_host(x64, got, (size_t)cases[c].n * 8), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(x), cases[c].t);
        for (int64_t i = 0; i < cases[c].n; i++)
            cr_expect_eq(got[i], cases[c].want[i], "linspace(%g, %g, %lld) %s [%lld] = %lld, NumPy %lld",
                         cases[c].a, cases[c].b, (long long)cases[c].n, nd_dtype_name(cases[c].t),
                         (long long)i, (long long)got[i], (long long)cases[c].want[i]);
        nd_free(x64);
        nd_free(x);
    }
}

/* Random storage bit patterns that are not NaN (a NaN's payload may change). */
static ref_arr *random_storage(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape) {
    ref_arr *a = ref_new(t, ndim, shape);
    size_t is = ref_itemsize(t);
    for (int64_t i = 0; i < a->size; i++) {
        do {
            uint64_t u = ndt_next(r);
            memcpy(a->data + (size_t)i * is, &u, is);
            if (t == ND_BOOL) a->data[i] &= 1;
        } while (ref_is_float(t) && isnan(ref_getd(a, i)));
    }
    return a;
}

NDT_TEST(creation, host_round_trip_every_dtype) {
    NDT_RNG(r);
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        const int64_t s3[3] = {3, 17, 5}, s1[1] = {1000}, s0[1] = {0};
        ref_arr *a = random_storage(&r, t, 3, s3), *b = random_storage(&r, t, 1, s1);
        ref_arr *c = random_storage(&r, t, 0, NULL), *e = random_storage(&r, t, 1, s0);
        nd_array *xa = ndt_upload(a), *xb = ndt_upload(b), *xc = ndt_upload(c), *xe = ndt_upload(e);
        ref_arr *ga = ndt_download(xa), *gb = ndt_download(xb), *gc = ndt_download(xc);
        cr_expect(memcmp(ga->data, a->data, (size_t)a->size * ref_itemsize(t)) == 0,
                  "3-d round trip of %s changed bytes", ref_dtype_name(t));
        cr_expect(memcmp(gb->data, b->data, (size_t)b->size * ref_itemsize(t)) == 0,
                  "1-d round trip of %s changed bytes", ref_dtype_name(t));
        cr_expect(memcmp(gc->data, c->data, ref_itemsize(t)) == 0, "0-d round trip of %s", ref_dtype_name(t));
        cr_expect_eq(nd_size(xe), 0);
        unsigned char none[1] = {0xAB};
        cr_expect_eq(nd_to_host(xe, none, 0), ND_OK, "empty to_host: %s", nd_last_error());
        cr_expect_eq(none[0], 0xAB, "empty to_host wrote a byte");
        nd_free(xa); nd_free(xb); nd_free(xc); nd_free(xe);
        ref_free(a); ref_free(b); ref_free(c); ref_free(e);
        ref_free(ga); ref_free(gb); ref_free(gc);
    }
}

/* The first element where got and want differ, or -1. */
static int64_t first_difference(const unsigned char *got, const unsigned char *want, size_t bytes, size_t item) {
    if (memcmp(got, want, bytes) == 0) return -1;
    for (size_t i = 0; i < bytes; i++)
        if (got[i] != want[i]) return (int64_t)(i / item);
    return -1;
}

/* Fresh random bits for an integer dtype, or random non-NaN values for a
 * float one (a NaN's payload may change in a copy kernel). */
static void fill_fresh(ndt_rng *r, ref_arr *a) {
    size_t bytes = (size_t)a->size * ref_itemsize(a->dt);
    if (ref_is_float(a->dt)) {
        ref_arr *f = random_storage(r, a->dt, a->ndim, a->shape);
        memcpy(a->data, f->data, bytes);
        ref_free(f);
        return;
    }
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t u = ndt_next(r);
        memcpy(a->data + i, &u, bytes - i < 8 ? bytes - i : 8);
    }
}

/* nd_from_host of `data` (a's bytes, possibly at an odd address), read
 * back directly and through a copy kernel (on CUDA: host -> device ->
 * host), every element compared. */
static void check_import(const ref_arr *a, const void *data, const char *what) {
    size_t item = ref_itemsize(a->dt), bytes = (size_t)a->size * item;
    nd_array *x = nd_from_host(data, a->dt, a->ndim, a->shape);
    cr_assert(x, "%s: nd_from_host of %zu bytes failed: %s", what, bytes, nd_last_error());
    nd_array *y = nd_copy(x);
    ref_arr *gx = ndt_download(x), *gy = ndt_download(y);
    int64_t dx = first_difference(gx->data, a->data, bytes, item);
    int64_t dy = first_difference(gy->data, a->data, bytes, item);
    cr_expect(dx < 0, "%s (%s, %zu bytes): element %lld read back wrong [seed %llu]", what,
              ref_dtype_name(a->dt), bytes, (long long)dx, (unsigned long long)ndt_current_seed());
    cr_expect(dy < 0, "%s (%s, %zu bytes): element %lld of its copy wrong [seed %llu]", what,
              ref_dtype_name(a->dt), bytes, (long long)dy, (unsigned long long)ndt_current_seed());
    nd_free(x);
    nd_free(y);
    ref_free(gx);
    ref_free(gy);
}

/* Arrays past the 64 MiB from which nd_from_host copies with several
 * threads (src/frontend/host_io.c), of sizes no thread count divides and
 * from an odd source address; each imported twice with fresh data, the
 * second time into the block the first one released (CUDA's pinned cache,
 * the CPU backend's block cache). */
NDT_TEST(creation, from_host_large_parallel_copy) {
    NDT_RNG(r);
    struct {
        nd_dtype t;
        int ndim;
        int64_t shape[3];
        size_t misalign; /* source bytes past an aligned address */
    } cases[] = {
        {ND_UINT8, 1, {((int64_t)64 << 20) + 37}, 1},
        {ND_INT32, 2, {4099, 4099}, 4},
        {ND_FLOAT64, 3, {3, 1399, 2003}, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_arr *a = ref_new(cases[c].t, cases[c].ndim, cases[c].shape);
        size_t bytes = (size_t)a->size * ref_itemsize(a->dt);
        cr_assert_geq(bytes, (size_t)64 << 20, "case %zu is below the threaded copy's threshold", c);
        unsigned char *src = malloc(bytes + 64);
        cr_assert(src, "out of host memory for %zu bytes", bytes);
        for (int round = 0; round < 2; round++) {
            fill_fresh(&r, a);
            memcpy(src + cases[c].misalign, a->data, bytes);
            check_import(a, src + cases[c].misalign, round ? "second import" : "first import");
        }
        free(src);
        ref_free(a);
    }
}

NDT_TEST(creation, astype_every_pair) {
    NDT_RNG(r);
    for (int i = 0; i < NDT_NUM_DTYPES; i++) {
        nd_dtype s = ndt_all_dtypes[i];
        /* values valid in every dtype: 0..100, floats with fractions k/64
         * (exact in float32, so no double rounding on the way to float16) */
        ref_arr *a = ref_new(s, 1, (int64_t[]){40});
        for (int64_t k = 0; k < a->size; k++) {
            double v = ref_is_float(s) ? (double)ndt_int(&r, 0, 6400) / 64.0 : (double)ndt_int(&r, 0, 100);
            ref_setd(a, k, s == ND_BOOL ? (double)(k % 3 != 0) : v);
        }
        ref_setd(a, 0, 0);
        nd_array *x = ndt_upload(a);
        for (int j = 0; j < NDT_NUM_DTYPES; j++) {
            nd_dtype t = ndt_all_dtypes[j];
            nd_array *y = nd_astype(x, t);
            ref_arr *want = ref_astype(a, t);
            ndt_check(y, want, 0, 0, NULL, "astype %s -> %s", ref_dtype_name(s), ref_dtype_name(t));
            nd_free(y);
            ref_free(want);
        }
        nd_free(x);
        ref_free(a);
    }
}

static double cast1(nd_dtype from, double v, nd_dtype to) {
    ref_arr *a = ref_new(from, 0, NULL);
    ref_setd(a, 0, v);
    nd_array *x = ndt_upload(a), *y = nd_astype(x, to);
    ref_arr *g = ndt_download(y);
    double out = ref_getd(g, 0);
    nd_free(x); nd_free(y);
    ref_free(a); ref_free(g);
    return out;
}

NDT_TEST(creation, astype_unsafe_cast_spot_checks) {
    cr_expect_eq(cast1(ND_INT32, -1, ND_UINT8), 255, "int32 -1 -> uint8 255");
    cr_expect_eq(cast1(ND_INT64, -1, ND_UINT16), 65535, "int64 -1 -> uint16");
    cr_expect_eq(cast1(ND_INT16, 300, ND_UINT8), 44, "int16 300 -> uint8 44");
    cr_expect_eq(cast1(ND_UINT8, 200, ND_INT8), -56, "uint8 200 -> int8 -56");
    cr_expect_eq(cast1(ND_FLOAT32, 3.9, ND_INT32), 3, "3.9 -> 3 (truncate)");
    cr_expect_eq(cast1(ND_FLOAT32, -3.9, ND_INT32), -3, "-3.9 -> -3 (toward zero)");
    cr_expect_eq(cast1(ND_FLOAT64, -7.99, ND_INT8), -7);
    cr_expect_eq(cast1(ND_FLOAT64, 250.7, ND_UINT8), 250);
    cr_expect(isinf(cast1(ND_FLOAT64, 1e10, ND_FLOAT16)), "1e10 -> float16 inf");
    cr_expect_eq(cast1(ND_FLOAT64, 0.5, ND_BOOL), 1, "0.5 -> True");
    cr_expect_eq(cast1(ND_FLOAT64, NAN, ND_BOOL), 1, "NaN -> True");
    cr_expect_eq(cast1(ND_FLOAT32, 0.0, ND_BOOL), 0, "0.0 -> False");
    cr_expect_eq(cast1(ND_INT32, 256, ND_BOOL), 1, "256 -> True (not truncated to 0)");
    cr_expect_eq(cast1(ND_FLOAT64, 0.1, ND_FLOAT32), (double)0.1f);
    cr_expect_eq(cast1(ND_FLOAT32, 1.00390625, ND_BFLOAT16), 1.0, "bfloat16 rounds to even");
    cr_expect_eq(cast1(ND_FLOAT32, 1.01171875, ND_BFLOAT16), 1.015625, "bfloat16 rounds to nearest");
    cr_expect_eq(cast1(ND_FLOAT32, 2049, ND_FLOAT16), 2048, "float16 rounds to even");
    cr_expect_eq(cast1(ND_FLOAT64, 1e-6, ND_FLOAT16), ref_round_to(ND_FLOAT16, 1e-6), "float16 subnormal");
    cr_expect_eq(cast1(ND_BOOL, 1, ND_FLOAT32), 1.0);
    int64_t big = ((int64_t)1 << 53) + 1;
    nd_array *x = nd_from_host(&big, ND_INT64, ND_SHAPE(1)), *y = nd_astype(x, ND_FLOAT64);
    double d = 0;
    cr_assert_eq(nd_to_host(y, &d, sizeof d), ND_OK, "%s", nd_last_error());
    cr_expect_eq(d, 9007199254740992.0, "2^53+1 -> float64 rounds to even");
    uint64_t ub = UINT64_MAX;
    nd_array *xu = nd_from_host(&ub, ND_UINT64, ND_SHAPE(1)), *yu = nd_astype(xu, ND_FLOAT64);
    cr_assert_eq(nd_to_host(yu, &d, sizeof d), ND_OK, "%s", nd_last_error());
    cr_expect_eq(d, 18446744073709551616.0, "uint64 max -> 2^64");
    nd_free(x); nd_free(y); nd_free(xu); nd_free(yu);
}

NDT_TEST(creation, copy_is_independent) {
    NDT_RNG(r);
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(4, 6), -5, 5);
    nd_array *x = ndt_upload(a);
    nd_array *c = nd_copy(x);
    nd_array *v = nd_view(x, "::2, ::-3");
    nd_array *cv = nd_copy(v);
    cr_assert_eq(nd_fill(x, 0), ND_OK, "%s", nd_last_error());
    ndt_check(c, a, 0, 0, NULL, "copy keeps values after the source is overwritten");
    ref_arr *wv = ref_strided(a, 2, (int64_t[]){2, 2}, (int64_t[]){12, -3}, 5);
    ndt_check(cv, wv, 0, 0, NULL, "copy of a strided view");
    if (cv && nd_strides(cv)) cr_expect(nd_strides(cv)[1] == 1 && nd_strides(cv)[0] == 2, "copy is contiguous");
    ref_arr *zero = ref_new(ND_FLOAT32, 2, (int64_t[]){4, 6});
    ndt_check(x, zero, 0, 0, NULL, "source after fill");
    nd_free(x); nd_free(c); nd_free(v); nd_free(cv);
    ref_free(a); ref_free(wv); ref_free(zero);
}

NDT_TEST(creation, item) {
    nd_array *a = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 2.5), *b = nd_full(ND_INT64, ND_SHAPE(1, 1), -7);
    nd_array *r = nd_arange(ND_INT32, 0, 5, 1), *s = nd_sum(r, ND_ALL_AXES);
    cr_expect_eq(nd_item(a), 2.5);
    cr_expect_eq(nd_item(b), -7);
    cr_expect_eq(nd_item(s), 10, "sum(arange(5)) = %g", nd_item(s));
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(a); nd_free(b); nd_free(r); nd_free(s);
}
