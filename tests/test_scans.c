/* Scans: cumsum, cumprod, nancumsum, nancumprod along an axis or flattened,
 * against a reference written here that follows NumPy's accumulate: in the
 * result dtype, in order from the first element, rounding every step to
 * that dtype (float16 too). Rows of at most 65536 elements are the same bits
 * as the reference on the CPU backend; longer rows (scanned in blocks) and
 * the CUDA backend are compared within the rounding bound of the running
 * sum of |terms|. Inputs are random in every dtype, given as arrays,
 * transposes, reversed and broadcast views, plus the edge values NumPy
 * defines (NaN, inf, -0.0, wrapping integers, empty, 0-d). */
#include "common.h"

#include <limits.h>

typedef enum { S_SUM, S_PROD, S_NANSUM, S_NANPROD } scan_kind;
typedef nd_array *(*scan_fn)(nd_array *, int);
static const scan_fn scan_fns[] = {nd_cumsum, nd_cumprod, nd_nancumsum, nd_nancumprod};
static const char *const scan_names[] = {"cumsum", "cumprod", "nancumsum", "nancumprod"};

/* NumPy's accumulate dtype. */
static nd_dtype scan_dtype(nd_dtype t) {
    if (t == ND_BOOL || t == ND_INT8 || t == ND_INT16 || t == ND_INT32) return ND_INT64;
    if (t == ND_UINT8 || t == ND_UINT16 || t == ND_UINT32) return ND_UINT64;
    return t;
}

/* The scan of a (axis, or ND_ALL_AXES on the C-order ravel) in NumPy's
 * order. *scale gets, per element, the running sum (product) of |terms|:
 * the bound for a differently associated float scan. */
static ref_arr *ref_scan(scan_kind k, const ref_arr *a, int axis, double **scale) {
    nd_dtype rt = scan_dtype(a->dt);
    int prod = k == S_PROD || k == S_NANPROD, nan0 = k == S_NANSUM || k == S_NANPROD;
    ref_arr *src = ref_astype(a, rt);
    if (axis == ND_ALL_AXES || a->ndim == 0) {
        int64_t n = a->size;
        ref_arr *flat = ref_reshape(src, 1, &n);
        ref_free(src);
        src = flat;
        axis = 0;
    }
    if (axis < 0) axis += src->ndim;
    ref_arr *out = ref_new(rt, src->ndim, src->shape);
    double *sc = calloc((size_t)(out->size ? out->size : 1), sizeof(double));
    int64_t n = src->shape[axis], inner = 1;
    for (int d = axis + 1; d < src->ndim; d++) inner *= src->shape[d];
    int64_t outer = n && inner ? src->size / (n * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double acc = 0, mag = 0;
            uint64_t iacc = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t f = (o * n + i) * inner + in;
                if (ref_is_float(rt)) {
                    double v = ref_getd(src, f);
                    if (nan0 && isnan(v)) v = prod ? 1 : 0;
                    acc = i == 0 ? v : ref_round_to(rt, prod ? acc * v : acc + v);
                    mag = i == 0 ? fabs(v) : prod ? mag * fabs(v) : mag + fabs(v);
                    ref_setd(out, f, acc);
                    sc[f] = mag;
                } else {
                    uint64_t v = ref_getu(src, f);
                    iacc = i == 0 ? v : prod ? iacc * v : iacc + v;
                    ref_setu(out, f, iacc);
                }
            }
        }
    ref_free(src);
    if (scale) *scale = sc;
    else free(sc);
    return out;
}

/* Checks got against the reference: exact where nd promises NumPy's bits
 * (integers, float16/bfloat16, CPU rows up to 65536), else within rounding
 * of the running |terms|. */
static void check_scan(nd_array *got, scan_kind k, const ref_arr *a, int axis, const char *what) {
    double *sc = NULL;
    ref_arr *want = ref_scan(k, a, axis, &sc);
    int64_t row = axis == ND_ALL_AXES || a->ndim == 0 ? a->size : a->shape[axis < 0 ? axis + a->ndim : axis];
    int exact = !ref_is_float(want->dt) || want->dt == ND_FLOAT16 || want->dt == ND_BFLOAT16 ||
                (!ndt_backend_is_cuda() && row <= 65536);
    double rtol = exact ? 0 : want->dt == ND_FLOAT32 ? 1e-5 : 1e-13;
    ndt_check(got, want, rtol, 0, exact ? NULL : sc, "%s %s axis %d", scan_names[k], what, axis);
    free(sc);
    ref_free(want);
}

static const nd_dtype dtypes[] = {ND_FLOAT64, ND_FLOAT32, ND_FLOAT16, ND_BFLOAT16, ND_INT64, ND_INT32, ND_INT8,
                                  ND_UINT8, ND_UINT16, ND_UINT64, ND_BOOL, ND_INT16, ND_UINT32};

NDT_TEST(scans, every_dtype_axis_and_kind) {
    NDT_RNG(r);
    for (size_t di = 0; di < sizeof dtypes / sizeof *dtypes; di++) {
        nd_dtype dt = dtypes[di];
        int64_t sh[3] = {ndt_int(&r, 1, 4), ndt_int(&r, 1, 9), ndt_int(&r, 2, 40)};
        /* Products stay finite and sums exercise integer wrapping. */
        ref_arr *ra = ref_is_float(dt) ? ndt_rand(&r, dt, 3, sh, -2, 2) : ndt_rand_bits(&r, dt, 3, sh);
        nd_array *a = ndt_upload(ra);
        const int axes[] = {0, 1, 2, -1, -3, ND_ALL_AXES};
        for (int k = 0; k < 4; k++)
            for (size_t x = 0; x < sizeof axes / sizeof *axes; x++) {
                nd_array *s = scan_fns[k](a, axes[x]);
                cr_assert(s, "%s(%s, %d): %s", scan_names[k], ref_dtype_name(dt), axes[x], nd_last_error());
                check_scan(s, k, ra, axes[x], ref_dtype_name(dt));
                nd_free(s);
            }
        nd_free(a);
        ref_free(ra);
    }
}

/* Views as inputs: a transpose, a reversed slice, a broadcast, and an
 * elementwise producer the routine reads through its packing copy. */
NDT_TEST(scans, views_and_producers) {
    NDT_RNG(r);
    int64_t sh[2] = {37, 53};
    ref_arr *ra = ndt_rand(&r, ND_FLOAT64, 2, sh, -3, 3);
    nd_array *a = ndt_upload(ra);
    for (int axis = -2; axis < 2; axis++) {
        nd_array *t = nd_transpose(a, NULL);
        ref_arr *rt = ref_transpose(ra, NULL);
        nd_array *s = nd_cumsum(t, axis);
        check_scan(s, S_SUM, rt, axis, "transpose");
        nd_free(s);
        nd_array *v = nd_view(a, "::-1, ::2");
        int64_t st[2] = {-53, 2}, vsh[2] = {37, 27};
        ref_arr *rv = ref_strided(ra, 2, vsh, st, 36 * 53);
        s = nd_cumprod(v, axis);
        check_scan(s, S_PROD, rv, axis, "reversed strided view");
        nd_free(s);
        nd_array *two = nd_scalar(2.0), *m = nd_mul(a, two);
        ref_arr *r2 = ref_astype(ra, ND_FLOAT64);
        for (int64_t i = 0; i < r2->size; i++) ref_setd(r2, i, 2 * ref_getd(ra, i));
        s = nd_cumsum(m, axis);
        check_scan(s, S_SUM, r2, axis, "a * 2");
        nd_free(s);
        nd_free(two);
        nd_free(m);
        ref_free(r2);
        ref_free(rv);
        nd_free(v);
        ref_free(rt);
        nd_free(t);
    }
    /* A broadcast row: every row of the result is the same scan. */
    int64_t bsh[2] = {5, 53};
    nd_array *row = nd_view(a, "3"), *b = nd_broadcast_to(row, 2, bsh);
    ref_arr *rb = ref_new(ND_FLOAT64, 2, bsh);
    for (int64_t i = 0; i < rb->size; i++) ref_setd(rb, i, ref_getd(ra, 3 * 53 + i % 53));
    nd_array *s = nd_nancumsum(b, 1);
    check_scan(s, S_NANSUM, rb, 1, "broadcast");
    nd_free(s);
    ref_free(rb);
    nd_free(b);
    nd_free(row);
    nd_free(a);
    ref_free(ra);
}

/* NumPy 2.4's results, written out. */
NDT_TEST(scans, edge_values) {
    const double nan = NAN, inf = INFINITY;
    struct {
        scan_kind k;
        nd_dtype dt;
        int n;
        double in[5], want[5];
    } cases[] = {
        {S_SUM, ND_FLOAT64, 1, {-0.0}, {-0.0}},
        {S_SUM, ND_FLOAT64, 2, {-0.0, -0.0}, {-0.0, -0.0}},
        {S_NANSUM, ND_FLOAT64, 2, {-0.0, nan}, {-0.0, 0.0}},
        {S_NANSUM, ND_FLOAT32, 2, {nan, -0.0}, {0.0, 0.0}},
        {S_NANPROD, ND_FLOAT64, 3, {nan, nan, 2}, {1, 1, 2}},
        {S_PROD, ND_FLOAT64, 3, {inf, 0.0, 1}, {inf, nan, nan}},
        {S_SUM, ND_FLOAT32, 4, {1, inf, -inf, 5}, {1, inf, nan, nan}},
        {S_SUM, ND_FLOAT64, 3, {1, nan, 2}, {1, nan, nan}},
        {S_NANSUM, ND_FLOAT16, 3, {nan, 65504, 65504}, {0, 65504, inf}},
        {S_PROD, ND_BOOL, 3, {1, 1, 0}, {1, 1, 0}},
        {S_SUM, ND_BOOL, 4, {1, 1, 0, 1}, {1, 2, 2, 3}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t n = cases[c].n;
        ref_arr *ra = ref_from_doubles(cases[c].dt, 1, &n, cases[c].in);
        ref_arr *want = ref_from_doubles(scan_dtype(cases[c].dt), 1, &n, cases[c].want);
        nd_array *a = ndt_upload(ra), *s = scan_fns[cases[c].k](a, 0);
        ref_arr *got = ndt_download(s);
        for (int64_t i = 0; i < n; i++) {
            double g = ref_getd(got, i), w = ref_getd(want, i);
            cr_expect((isnan(g) && isnan(w)) || (g == w && signbit(g) == signbit(w)),
                      "case %zu (%s) element %lld: got %g, NumPy gives %g", c, scan_names[cases[c].k], (long long)i,
                      g, w);
        }
        ref_free(got);
        nd_free(s);
        nd_free(a);
        ref_free(want);
        ref_free(ra);
    }
    /* int64 wraps: INT64_MAX + 1 is INT64_MIN, as NumPy. */
    int64_t big[3] = {INT64_MAX, 1, -1}, n3 = 3;
    nd_array *a = nd_from_host(big, ND_INT64, 1, &n3), *s = nd_cumsum(a, 0);
    int64_t got[3] = {0};
    cr_assert_eq(nd_to_host(s, got, sizeof got), ND_OK);
    cr_expect(got[0] == INT64_MAX && got[1] == INT64_MIN && got[2] == INT64_MAX, "wrapping cumsum: %lld %lld %lld",
              (long long)got[0], (long long)got[1], (long long)got[2]);
    nd_free(s);
    nd_free(a);
}

/* float16 rounds every step, as NumPy's float16 loop: 5000 steps of 0.1
 * stall at 256 (NumPy 2.4: np.cumsum(np.full(5000, 0.1, np.float16))[-1]
 * == 256.0, where a float32 sum would give 500). */
NDT_TEST(scans, float16_rounds_every_step) {
    int64_t n = 5000;
    ref_arr *ra = ref_new(ND_FLOAT16, 1, &n);
    for (int64_t i = 0; i < n; i++) ref_setd(ra, i, 0.1);
    nd_array *a = ndt_upload(ra), *s = nd_cumsum(a, ND_ALL_AXES);
    ref_arr *got = ndt_download(s);
    cr_expect_eq(ref_getd(got, n - 1), 256.0, "float16 cumsum of 5000 x 0.1: got %g, NumPy 256",
                 ref_getd(got, n - 1));
    check_scan(s, S_SUM, ra, ND_ALL_AXES, "float16 0.1s");
    ref_free(got);
    nd_free(s);
    nd_free(a);
    ref_free(ra);
}

NDT_TEST(scans, empty_and_zero_d) {
    int64_t sh[3] = {2, 0, 3};
    nd_array *e = nd_zeros(ND_FLOAT32, 3, sh);
    for (int axis = -3; axis < 3; axis++) {
        nd_array *s = nd_cumsum(e, axis);
        cr_assert(s);
        cr_expect(nd_ndim(s) == 3 && nd_shape(s)[0] == 2 && nd_shape(s)[1] == 0 && nd_shape(s)[2] == 3);
        cr_expect_eq(nd_sync(), ND_OK);
        nd_free(s);
    }
    nd_array *s = nd_cumprod(e, ND_ALL_AXES);
    cr_expect(nd_ndim(s) == 1 && nd_shape(s)[0] == 0 && nd_dtype_of(s) == ND_FLOAT32);
    nd_free(s);
    nd_free(e);
    /* 0-d: NumPy scans its 1-element ravel (axis 0 or -1). */
    nd_array *zs = nd_full(ND_INT8, 0, NULL, 5.0);
    for (int axis = -1; axis <= 0; axis++) {
        s = nd_cumsum(zs, axis);
        cr_assert(s, "%s", nd_last_error());
        cr_expect(nd_ndim(s) == 1 && nd_shape(s)[0] == 1 && nd_dtype_of(s) == ND_INT64);
        int64_t v = 0;
        cr_expect_eq(nd_to_host(s, &v, sizeof v), ND_OK);
        cr_expect_eq(v, 5);
        nd_free(s);
    }
    cr_expect_null(nd_cumsum(zs, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_cumsum");
    nd_free(zs);
}

/* Rows longer than one block (65536): a single row scanned in parallel
 * blocks, and several long rows, each the same bits on every run and for
 * any number of CPU threads. */
NDT_TEST(scans, long_rows_deterministic) {
    NDT_RNG(r);
    int64_t n = 300007, sh2[2] = {3, 70001};
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, 1, &n, -1, 1);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT64, 2, sh2, -1, 1);
    ref_arr *ri = ndt_rand_bits(&r, ND_INT32, 1, &n);
    ref_arr *first[3] = {0};
    const int threads[] = {0, 1, 3};
    for (int run = 0; run < (ndt_backend_is_cuda() ? 2 : 3); run++) {
        if (!ndt_backend_is_cuda()) {
            nd_config cfg = {0};
            cfg.num_threads = threads[run];
            ndt_restart(&cfg);
        }
        nd_array *a = ndt_upload(ra), *b = ndt_upload(rb), *c = ndt_upload(ri);
        nd_array *s[3] = {nd_cumsum(a, 0), nd_nancumsum(b, -1), nd_cumsum(c, 0)};
        const ref_arr *src[3] = {ra, rb, ri};
        for (int k = 0; k < 3; k++) {
            if (run == 0) check_scan(s[k], S_SUM, src[k], k == 1 ? -1 : 0, "long rows");
            ref_arr *got = ndt_download(s[k]);
            if (run == 0) first[k] = got;
            else {
                cr_expect(memcmp(got->data, first[k]->data, (size_t)got->size * ref_itemsize(got->dt)) == 0,
                          "scan %d: run %d differs from run 0", k, run);
                ref_free(got);
            }
            nd_free(s[k]);
        }
        nd_free(a);
        nd_free(b);
        nd_free(c);
    }
    for (int k = 0; k < 3; k++) ref_free(first[k]);
    ref_free(ra);
    ref_free(rb);
    ref_free(ri);
}

/* float32 rows that start at any 4-byte offset: a long row read from 1, 2
 * and 3 elements in (the CUDA default streams aligned rows by bulk copies
 * and sends the others elsewhere), and rows whose length is not a multiple
 * of 4 (every row after the first misaligned), against whole ones. */
NDT_TEST(scans, long_float32_rows_at_every_offset) {
    NDT_RNG(r);
    int64_t n = 100003;
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, 1, &n, -1, 1);
    nd_array *a = ndt_upload(ra);
    static const char *const specs[] = {"", "1:", "2:", "3:"};
    for (int64_t off = 1; off < 4; off++) {
        nd_array *v = nd_view(a, specs[off]);
        const int64_t vn = n - off, st = 1;
        ref_arr *rv = ref_strided(ra, 1, &vn, &st, off);
        nd_array *s = nd_cumsum(v, 0), *t = nd_nancumsum(v, -1);
        check_scan(s, S_SUM, rv, 0, "a row at an offset");
        check_scan(t, S_NANSUM, rv, -1, "a row at an offset, nancumsum");
        nd_free(s);
        nd_free(t);
        ref_free(rv);
        nd_free(v);
    }
    nd_free(a);
    ref_free(ra);
    const int64_t shapes[2][2] = {{3, 40001}, {2, 40000}};
    for (int k = 0; k < 2; k++) {
        ref_arr *rb = ndt_rand(&r, ND_FLOAT32, 2, shapes[k], -1, 1);
        nd_array *b = ndt_upload(rb), *s = nd_cumsum(b, 1);
        check_scan(s, S_SUM, rb, 1, k ? "rows of 40000" : "rows of 40001");
        nd_free(s);
        nd_free(b);
        ref_free(rb);
    }
}

NDT_TEST(scans, bad_arguments) {
    int64_t sh[2] = {2, 3};
    nd_array *a = nd_zeros(ND_FLOAT32, 2, sh);
    for (int k = 0; k < 4; k++) {
        char fn[32];
        snprintf(fn, sizeof fn, "nd_%s", scan_names[k]);
        cr_expect_null(scan_fns[k](NULL, 0));
        NDT_EXPECT_ERR(ND_ERR_ARG, fn);
        cr_expect_null(scan_fns[k](a, 2));
        const char *m = nd_last_error();
        cr_expect(m && strstr(m, "axis 2") && strstr(m, "-2..1"), "message: %s", m ? m : "(null)");
        NDT_EXPECT_ERR(ND_ERR_ARG, fn);
        cr_expect_null(scan_fns[k](a, -3));
        NDT_EXPECT_ERR(ND_ERR_ARG, fn);
    }
    nd_free(a);
}

/* Complex cumprod and nancumprod against NumPy's loop written here: the
 * textbook product in the dtype's precision, in order from the first
 * element, a value with a NaN part counting as 1 in nancumprod. Values
 * near the unit circle keep long products finite. Short rows on the CPU
 * are the reference's bits; long rows (scanned in blocks) and CUDA within
 * the rounding of the running product. */
static void ref_cprod(int single, const double *x, double *y, double *mag, int64_t n, int64_t stride, int skip_nan) {
    double ar = 1, ai = 0, m = 1;
    float fr = 1, fi = 0;
    for (int64_t i = 0; i < n; i++) {
        double br = x[2 * i * stride], bi = x[2 * i * stride + 1];
        if (skip_nan && (isnan(br) || isnan(bi))) br = 1, bi = 0;
        m = (i ? m : 1) * hypot(br, bi);
        mag[i * stride] = m; /* the running product of |terms|: the rounding's scale */
        if (i == 0) {
            ar = br, ai = bi, fr = (float)br, fi = (float)bi;
        } else if (single) {
            const float cr = (float)br, ci = (float)bi, t = fr * cr - fi * ci;
            fi = fr * ci + fi * cr, fr = t;
        } else {
            const double t = ar * br - ai * bi;
            ai = ar * bi + ai * br, ar = t;
        }
        y[2 * i * stride] = single ? fr : ar;
        y[2 * i * stride + 1] = single ? fi : ai;
    }
}

NDT_TEST(scans, complex_cumprod) {
    NDT_RNG(r);
    const int64_t shapes[3][2] = {{5, 9}, {4, 1}, {1, 70001}};
    for (int c = 0; c < 12; c++) {
        const int single = c % 2, skip = (c / 2) % 2;
        const int64_t rows = shapes[(c / 4) % 3][0], cols = shapes[(c / 4) % 3][1], n = rows * cols;
        const nd_dtype t = single ? ND_COMPLEX64 : ND_COMPLEX128;
        double *x = malloc((size_t)(2 * n) * sizeof *x), *want = malloc((size_t)(2 * n) * sizeof *want);
        double *got = malloc((size_t)(2 * n) * sizeof *got), *mag = malloc((size_t)n * sizeof *mag);
        float *xf = malloc((size_t)(2 * n) * sizeof *xf);
        for (int64_t i = 0; i < n; i++) {
            const double rad = ndt_uniform(&r, 0.98, 1.02), ang = ndt_uniform(&r, -3, 3);
            x[2 * i] = rad * cos(ang), x[2 * i + 1] = rad * sin(ang);
            if (ndt_int(&r, 0, 40) == 0) x[2 * i + ndt_int(&r, 0, 1)] = NAN;
            if (single) x[2 * i] = xf[2 * i] = (float)x[2 * i], x[2 * i + 1] = xf[2 * i + 1] = (float)x[2 * i + 1];
        }
        const int64_t sh[2] = {rows, cols};
        nd_array *a = nd_from_host(single ? (void *)xf : (void *)x, t, 2, sh);
        for (int axis = 0; axis < 2; axis++) {
            nd_array *z = (skip ? nd_nancumprod : nd_cumprod)(a, axis);
            cr_assert(z, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(z), t);
            nd_array *zd = nd_astype(z, ND_COMPLEX128);
            cr_assert_eq(nd_to_host(zd, got, (size_t)(2 * n) * sizeof *got), ND_OK, "%s", nd_last_error());
            if (axis == 0)
                for (int64_t j = 0; j < cols; j++) ref_cprod(single, x + 2 * j, want + 2 * j, mag + j, rows, cols, skip);
            else
                for (int64_t i = 0; i < rows; i++)
                    ref_cprod(single, x + 2 * i * cols, want + 2 * i * cols, mag + i * cols, cols, 1, skip);
            const int64_t len = axis ? cols : rows;
            int bad = 0;
            for (int64_t f = 0; f < n && bad < 5; f++) {
                const int64_t pos = axis ? f % cols : f / cols; /* steps before this element */
                const double tol = (single ? 6e-8 : 1.2e-16) * 4 * (double)(pos + 1) * mag[f];
                for (int p = 0; p < 2; p++) {
                    const double g = got[2 * f + p], w = want[2 * f + p];
                    const int ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= tol;
                    if (!ok) {
                        bad++;
                        cr_expect_fail("%s %s axis %d len %lld: [%lld].%s is %.17g, want %.17g (tol %.3g)",
                                       skip ? "nancumprod" : "cumprod", nd_dtype_name(t), axis, (long long)len,
                                       (long long)f, p ? "imag" : "real", g, w, tol);
                    }
                }
            }
            nd_free(zd), nd_free(z);
        }
        /* flattened: the same as the rows of a one-row view */
        nd_array *flat = (skip ? nd_nancumprod : nd_cumprod)(a, ND_ALL_AXES);
        cr_assert(flat, "%s", nd_last_error());
        cr_expect(nd_ndim(flat) == 1 && nd_shape(flat)[0] == n);
        nd_array *fd = nd_astype(flat, ND_COMPLEX128);
        cr_assert_eq(nd_to_host(fd, got, (size_t)(2 * n) * sizeof *got), ND_OK, "%s", nd_last_error());
        ref_cprod(single, x, want, mag, n, 1, skip);
        int nan_ok = 1;
        for (int64_t f = 0; f < 2 * n; f++) {
            const double tol = (single ? 6e-8 : 1.2e-16) * 4 * (double)(f / 2 + 1) * mag[f / 2];
            nan_ok &= (isnan(got[f]) == isnan(want[f])) &&
                      (isnan(got[f]) || got[f] == want[f] || fabs(got[f] - want[f]) <= tol);
        }
        cr_expect(nan_ok, "%s %s flattened", skip ? "nancumprod" : "cumprod", nd_dtype_name(t));
        nd_free(fd), nd_free(flat), nd_free(a);
        free(x), free(xf), free(want), free(got), free(mag);
    }
}
