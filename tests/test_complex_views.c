/* nd_real and nd_imag as views (NumPy's z.real and z.imag): float arrays
 * over a complex array's memory (strides twice the complex view's, the
 * imaginary part one element further), so that writes through them by
 * every path nd writes (nd_assign, nd_fill, nd_index_assign, nd_add_at,
 * nd_mask_assign, nd_put_along_axis, user kernels, nd_data, DLPack)
 * change the complex array, ordered in the lazy graph like any write, and
 * reading them fuses like any view. Every write is checked against a host
 * model of NumPy's semantics over the whole complex buffer (elements
 * outside the view keep their bits), through poisoned downloads; edge
 * values (NaN, inf, -0.0) must keep their bits. */
#include "common.h"

#include <complex.h>

/* ---- host model: a complex128 array as interleaved doubles */

typedef struct {
    int ndim;
    int64_t shape[2];
    int64_t n; /* complex elements */
    double *v; /* 2 n parts */
} zmodel;

static uint64_t bits(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || bits(a) == bits(b); }

/* Random parts in [-4, 4) with NaN, +-inf and -0.0 sprinkled in. */
static zmodel zrand(ndt_rng *r, int ndim, int64_t r0, int64_t c0) {
    zmodel m = {ndim, {r0, c0}, ndim == 0 ? 1 : ndim == 1 ? r0 : r0 * c0, NULL};
    m.v = malloc((size_t)(2 * m.n + 1) * sizeof *m.v);
    static const double edge[4] = {NAN, INFINITY, -INFINITY, -0.0};
    for (int64_t i = 0; i < 2 * m.n; i++) {
        int64_t pick = ndt_int(r, 0, 9);
        m.v[i] = pick < 4 ? edge[pick] : ndt_uniform(r, -4, 4);
    }
    return m;
}

static nd_array *zupload(const zmodel *m) {
    nd_array *z = nd_from_host(m->v, ND_COMPLEX128, m->ndim, m->shape);
    cr_assert(z, "%s", nd_last_error());
    return z;
}

/* Every part of z equals the model's, bit for bit (a poisoned download). */
static void zexpect(nd_array *z, const zmodel *m, const char *what) {
    size_t nb = (size_t)m->n * 16;
    unsigned char *got = malloc(nb + 16);
    memset(got, 0xAB, nb + 16);
    cr_assert_eq(nd_to_host(z, got, nb), ND_OK, "%s: %s", what, nd_last_error());
    for (int i = 0; i < 16; i++) cr_assert_eq(got[nb + i], 0xAB, "%s: wrote past the end", what);
    int bad = 0;
    for (int64_t i = 0; i < 2 * m->n; i++) {
        double g;
        memcpy(&g, got + 8 * i, 8);
        if (!same(g, m->v[i])) {
            if (bad < 4)
                cr_log_error("%s: element %lld %s part: got %.17g want %.17g", what, (long long)(i / 2),
                             i % 2 ? "imag" : "real", g, m->v[i]);
            bad++;
        }
    }
    cr_expect_eq(bad, 0, "%s: %d of %lld parts differ", what, bad, (long long)(2 * m->n));
    free(got);
}

static double *frand(ndt_rng *r, int64_t n) {
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    static const double edge[4] = {NAN, -INFINITY, -0.0, 0.0};
    for (int64_t i = 0; i < n; i++) {
        int64_t pick = ndt_int(r, 0, 7);
        v[i] = pick < 4 ? edge[pick] : ndt_uniform(r, -100, 100);
    }
    return v;
}

static void fexpect(nd_array *a, const double *want, int64_t n, const char *what) {
    cr_assert(a, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(a), ND_FLOAT64, "%s: dtype %s", what, nd_dtype_name(nd_dtype_of(a)));
    cr_assert_eq(nd_size(a), n, "%s: size", what);
    double *got = malloc((size_t)(n + 2) * 8);
    memset(got, 0xAB, (size_t)(n + 2) * 8);
    cr_assert_eq(nd_to_host(a, got, (size_t)n * 8), ND_OK, "%s: %s", what, nd_last_error());
    cr_assert_eq(bits(got[n]), 0xABABABABABABABABull, "%s: wrote past the end", what);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!same(got[i], want[i])) {
            if (bad < 4) cr_log_error("%s: [%lld] got %.17g want %.17g", what, (long long)i, got[i], want[i]);
            bad++;
        }
    cr_expect_eq(bad, 0, "%s: %d of %lld differ", what, bad, (long long)n);
    free(got);
}

/* ------------------------------------------------------------ the views */

NDT_TEST(complex_views, views_share_memory) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 2, 4, 5);
    nd_array *z = zupload(&m), *re = nd_real(z), *im = nd_imag(z);
    cr_assert(re && im, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(re), ND_FLOAT64);
    cr_expect_eq(nd_dtype_of(im), ND_FLOAT64);
    cr_expect(nd_ndim(re) == 2 && nd_shape(re)[0] == 4 && nd_shape(re)[1] == 5);
    cr_expect(nd_strides(re)[0] == 10 && nd_strides(re)[1] == 2, "strides %lld %lld",
              (long long)nd_strides(re)[0], (long long)nd_strides(re)[1]);
    double want[20];
    for (int i = 0; i < 20; i++) want[i] = m.v[2 * i];
    fexpect(re, want, 20, "real");
    for (int i = 0; i < 20; i++) want[i] = m.v[2 * i + 1];
    fexpect(im, want, 20, "imag");
    /* z.real[...] = src: the imaginary parts keep their bits */
    double *src = frand(&r, 20);
    nd_array *s = nd_from_host(src, ND_FLOAT64, ND_SHAPE(4, 5));
    cr_assert_eq(nd_assign(re, s), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 20; i++) m.v[2 * i] = src[i];
    zexpect(z, &m, "assign real");
    /* z.imag.fill(-0.0): the sign of zero arrives */
    cr_assert_eq(nd_fill(im, -0.0), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 20; i++) m.v[2 * i + 1] = -0.0;
    zexpect(z, &m, "fill imag -0.0");
    /* a view taken before a write sees it (it is the same memory) */
    cr_assert_eq(nd_fill(im, INFINITY), ND_OK);
    for (int i = 0; i < 20; i++) want[i] = INFINITY;
    fexpect(im, want, 20, "imag after fill inf");
    /* the real part of the imaginary view is that view (a float array's
     * real is itself): writing it writes z */
    nd_array *imre = nd_real(im);
    cr_assert_eq(nd_fill(imre, NAN), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 20; i++) m.v[2 * i + 1] = NAN;
    zexpect(z, &m, "real(imag(z)) = nan");
    nd_free(z); nd_free(re); nd_free(im); nd_free(s); nd_free(imre);
    free(src);
    free(m.v);
}

NDT_TEST(complex_views, complex64_parts) {
    float v[12] = {1.5f, -2.0f, NAN, INFINITY, -0.0f, 3.0f, 4.0f, -5.0f, 6.0f, 7.0f, -8.0f, 0.0f};
    nd_array *z = nd_from_host(v, ND_COMPLEX64, ND_SHAPE(2, 3)), *im = nd_imag(z), *re = nd_real(z);
    cr_assert(z && im && re, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(im), ND_FLOAT32);
    float got[6];
    cr_assert_eq(nd_to_host(im, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) cr_expect(memcmp(&got[i], &v[2 * i + 1], 4) == 0, "imag[%d] %g", i, got[i]);
    /* z.imag[:, ::-2] = [[10, 20], [30, 40]] (float64 source, cast) */
    double src[4] = {10, 20, 30, 40};
    nd_array *s = nd_from_host(src, ND_FLOAT64, ND_SHAPE(2, 2)), *w = nd_view(im, ":, ::-2");
    cr_assert_eq(nd_assign(w, s), ND_OK, "%s", nd_last_error());
    v[2 * 2 + 1] = 10; v[2 * 0 + 1] = 20; v[2 * 5 + 1] = 30; v[2 * 3 + 1] = 40;
    float back[12];
    cr_assert_eq(nd_to_host(z, back, sizeof back), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++)
        cr_expect(memcmp(&back[i], &v[i], 4) == 0 || (isnan(back[i]) && isnan(v[i])), "part %d: %g want %g", i,
                  back[i], v[i]);
    /* z.real += 1 (in place, float32 arithmetic) */
    nd_scope_begin();
    nd_array *one = nd_keep(nd_add(re, nd_scalar(1.0)));
    nd_scope_end();
    cr_assert_eq(nd_assign(re, one), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) v[2 * i] = v[2 * i] + 1.0f;
    cr_assert_eq(nd_to_host(z, back, sizeof back), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 12; i++)
        cr_expect(memcmp(&back[i], &v[i], 4) == 0 || (isnan(back[i]) && isnan(v[i])), "part %d: %g want %g", i,
                  back[i], v[i]);
    nd_free(z); nd_free(im); nd_free(re); nd_free(s); nd_free(w); nd_free(one);
}

/* Writes through strided, sliced, reversed and transposed complex views
 * and through views of the part views. */
NDT_TEST(complex_views, strided_sliced_transposed) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 2, 6, 8);
    nd_array *z = zupload(&m);
    /* z[1:5, ::-3].imag = src (4 x 3) */
    double *src = frand(&r, 48);
    nd_array *s43 = nd_from_host(src, ND_FLOAT64, ND_SHAPE(4, 3));
    nd_array *v = nd_view(z, "1:5, ::-3"), *vi = nd_imag(v);
    cr_assert(v && vi, "%s", nd_last_error());
    cr_assert_eq(nd_assign(vi, s43), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) m.v[2 * ((1 + i) * 8 + (7 - 3 * j)) + 1] = src[i * 3 + j];
    zexpect(z, &m, "z[1:5, ::-3].imag = src");
    /* z.T.real = src (8 x 6) */
    nd_array *s86 = nd_from_host(src, ND_FLOAT64, ND_SHAPE(8, 6));
    nd_array *t = nd_transpose(z, NULL), *tr = nd_real(t);
    cr_assert_eq(nd_assign(tr, s86), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 6; j++) m.v[2 * (j * 8 + i)] = src[i * 6 + j];
    zexpect(z, &m, "z.T.real = src");
    /* views of the part views: z.real[::2, 1:7:2] = -src, z.imag.T[2] = 5 */
    nd_array *re = nd_real(z), *sub = nd_view(re, "::2, 1:7:2"), *neg = nd_neg(s43);
    nd_array *neg33 = nd_view(neg, ":3, :");
    cr_assert_eq(nd_assign(sub, neg33), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m.v[2 * (2 * i * 8 + 1 + 2 * j)] = -src[i * 3 + j];
    zexpect(z, &m, "z.real[::2, 1:7:2] = -src");
    nd_array *im = nd_imag(z), *imT = nd_transpose(im, NULL), *row = nd_view(imT, "2");
    cr_assert_eq(nd_fill(row, 5.0), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) m.v[2 * (i * 8 + 2) + 1] = 5.0;
    zexpect(z, &m, "z.imag.T[2] = 5");
    /* a broadcast of a part reads right and refuses writes */
    nd_array *r0 = nd_view(re, "0"), *b = nd_broadcast_to(r0, ND_SHAPE(3, 8));
    double want[24];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 8; j++) want[i * 8 + j] = m.v[2 * j];
    fexpect(b, want, 24, "broadcast_to(z.real[0])");
    cr_expect_neq(nd_fill(b, 1.0), ND_OK);
    nd_clear_error();
    /* the parts of a sliced complex view */
    nd_array *w = nd_view(z, "::-2, 3"), *wr = nd_real(w), *wi = nd_imag(w);
    double wr_want[3], wi_want[3];
    for (int i = 0; i < 3; i++) {
        wr_want[i] = m.v[2 * ((5 - 2 * i) * 8 + 3)];
        wi_want[i] = m.v[2 * ((5 - 2 * i) * 8 + 3) + 1];
    }
    fexpect(wr, wr_want, 3, "z[::-2, 3].real");
    fexpect(wi, wi_want, 3, "z[::-2, 3].imag");
    nd_array *objs[] = {z, s43, v, vi, s86, t, tr, re, sub, neg, neg33, im, imT, row, r0, b, w, wr, wi};
    for (size_t k = 0; k < sizeof objs / sizeof *objs; k++) nd_free(objs[k]);
    free(src);
    free(m.v);
}

/* In-place updates that read the array they write: the same element
 * (z.imag += z.real, z.real = |z|) and neighbouring ones (NumPy computes
 * the right-hand side first). */
NDT_TEST(complex_views, in_place_updates) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 1, 40, 0);
    nd_array *z = zupload(&m), *re = nd_real(z), *im = nd_imag(z);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_scope_begin();
    cr_assert_eq(nd_assign(im, nd_add(im, re)), ND_OK, "%s", nd_last_error());
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    /* each element reads only itself: in place, no temporary */
    cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "z.imag += z.real took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
    cr_expect_eq(NDT_TEMPS(s1) - NDT_TEMPS(s0), 0, "z.imag += z.real made a temporary");
    for (int i = 0; i < 40; i++) m.v[2 * i + 1] = m.v[2 * i + 1] + m.v[2 * i];
    zexpect(z, &m, "z.imag += z.real");
    nd_scope_begin();
    cr_assert_eq(nd_assign(re, nd_abs(z)), ND_OK, "%s", nd_last_error());
    nd_scope_end();
    for (int i = 0; i < 40; i++) m.v[2 * i] = cabs(CMPLX(m.v[2 * i], m.v[2 * i + 1]));
    /* hypot vs cabs: both correctly rounded to an ulp; compare loosely */
    double got[80];
    cr_assert_eq(nd_to_host(z, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 80; i++)
        cr_expect(same(got[i], m.v[i]) || fabs(got[i] - m.v[i]) <= 1e-15 * fabs(m.v[i]), "z.real = |z|: part %d %.17g want %.17g",
                  i, got[i], m.v[i]);
    memcpy(m.v, got, sizeof got);
    /* z.real[1:] = z.imag[:-1] (reads the element before) */
    nd_array *dst = nd_view(re, "1:"), *from = nd_view(im, ":-1");
    cr_assert_eq(nd_assign(dst, from), ND_OK, "%s", nd_last_error());
    for (int i = 39; i >= 1; i--) m.v[2 * i] = m.v[2 * (i - 1) + 1];
    zexpect(z, &m, "z.real[1:] = z.imag[:-1]");
    /* z[1:] = z.real[:-1] (complex elements from parts before them) */
    nd_array *zd = nd_view(z, "1:"), *rs = nd_view(re, ":-1");
    cr_assert_eq(nd_assign(zd, rs), ND_OK, "%s", nd_last_error());
    for (int i = 39; i >= 1; i--) {
        m.v[2 * i] = m.v[2 * (i - 1)];
        m.v[2 * i + 1] = 0.0;
    }
    zexpect(z, &m, "z[1:] = z.real[:-1]");
    /* z[20:30] = z.real[15:25]: the parts read lie in z[15:25], which the
     * first writes reach (counted in elements of one dtype the two ranges
     * look apart) */
    nd_array *zd2 = nd_view(z, "20:30"), *rs2 = nd_view(re, "15:25");
    cr_assert_eq(nd_assign(zd2, rs2), ND_OK, "%s", nd_last_error());
    double keep[10];
    for (int i = 0; i < 10; i++) keep[i] = m.v[2 * (15 + i)];
    for (int i = 0; i < 10; i++) {
        m.v[2 * (20 + i)] = keep[i];
        m.v[2 * (20 + i) + 1] = 0.0;
    }
    zexpect(z, &m, "z[20:30] = z.real[15:25]");
    nd_free(zd2);
    nd_free(rs2);
    /* z.imag[::-1] = z.real (reversed over the same elements) */
    nd_array *ir = nd_view(im, "::-1");
    cr_assert_eq(nd_assign(ir, re), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 40; i++) m.v[2 * (39 - i) + 1] = m.v[2 * i];
    zexpect(z, &m, "z.imag[::-1] = z.real");
    nd_free(z); nd_free(re); nd_free(im); nd_free(dst); nd_free(from); nd_free(zd); nd_free(rs); nd_free(ir);
    free(m.v);
}

/* The same over several tiles of the CPU backend (1024 elements): a store
 * of complex elements reading parts that the store overwrites in earlier
 * tiles needs the right-hand side first. */
NDT_TEST(complex_views, in_place_overlap_large) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 1, 10000, 0);
    nd_array *z = zupload(&m), *re = nd_real(z);
    nd_array *dst = nd_view(z, "6000:9000"), *src = nd_view(re, "4500:7500");
    cr_assert_eq(nd_assign(dst, src), ND_OK, "%s", nd_last_error());
    double *keep = malloc(3000 * sizeof *keep);
    for (int i = 0; i < 3000; i++) keep[i] = m.v[2 * (4500 + i)];
    for (int i = 0; i < 3000; i++) {
        m.v[2 * (6000 + i)] = keep[i];
        m.v[2 * (6000 + i) + 1] = 0.0;
    }
    zexpect(z, &m, "z[6000:9000] = z.real[4500:7500]");
    nd_free(z); nd_free(re); nd_free(dst); nd_free(src);
    free(keep);
    free(m.v);
}

/* A read recorded before a write through a part sees the old value, one
 * recorded after sees the new; the same when z itself is still pending. */
NDT_TEST(complex_views, ordering) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 1, 16, 0);
    for (int i = 0; i < 32; i++)
        if (isnan(m.v[i]) || isinf(m.v[i])) m.v[i] = 1.25 * i; /* sums below stay finite */
    nd_array *z = zupload(&m);
    nd_scope_begin();
    nd_array *before = nd_copy(z), *sum_before = nd_keep(nd_sum(nd_imag(z), ND_ALL_AXES));
    nd_keep(before);
    nd_scope_end();
    nd_array *x = nd_full(ND_FLOAT64, ND_SHAPE(16), 3.0), *im = nd_imag(z);
    cr_assert_eq(nd_assign(im, x), ND_OK, "%s", nd_last_error());
    nd_array *after = nd_copy(z), *sum_after = nd_sum(im, ND_ALL_AXES);
    zmodel old = m;
    old.v = malloc(32 * 8);
    memcpy(old.v, m.v, 32 * 8);
    double s0 = 0;
    for (int i = 0; i < 16; i++) {
        s0 += m.v[2 * i + 1];
        m.v[2 * i + 1] = 3.0;
    }
    zexpect(after, &m, "read after the write");
    zexpect(before, &old, "read before the write");
    zexpect(z, &m, "z");
    cr_expect(fabs(nd_item(sum_before) - s0) <= 1e-12 * (1 + fabs(s0)), "sum before %.17g want %.17g",
              nd_item(sum_before), s0);
    cr_expect_eq(nd_item(sum_after), 48.0);
    /* a pending complex value written through its part before it runs */
    nd_array *a = zupload(&old), *p = nd_mul(a, a), *pi = nd_imag(p), *pr = nd_real(p);
    nd_scope_begin();
    nd_array *early = nd_keep(nd_mul(pr, nd_scalar(2.0)));
    nd_scope_end();
    cr_assert_eq(nd_fill(pi, -1.0), ND_OK, "%s", nd_last_error());
    nd_array *late = nd_add(pr, pi);
    zmodel pm = old;
    pm.v = malloc(32 * 8);
    double e[16], l[16];
    for (int i = 0; i < 16; i++) {
        double complex q = CMPLX(old.v[2 * i], old.v[2 * i + 1]);
        double qr = old.v[2 * i] * old.v[2 * i] - old.v[2 * i + 1] * old.v[2 * i + 1];
        (void)q;
        pm.v[2 * i] = qr;
        pm.v[2 * i + 1] = -1.0;
        e[i] = qr * 2.0;
        l[i] = qr - 1.0;
    }
    double pg[32];
    cr_assert_eq(nd_to_host(p, pg, sizeof pg), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 16; i++) {
        cr_expect(fabs(pg[2 * i] - pm.v[2 * i]) <= 1e-12 * (1 + fabs(pm.v[2 * i])), "a*a real [%d]", i);
        cr_expect_eq(pg[2 * i + 1], -1.0, "a*a imag [%d] %g", i, pg[2 * i + 1]);
    }
    double eg[16], lg[16];
    cr_assert_eq(nd_to_host(early, eg, sizeof eg), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(late, lg, sizeof lg), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 16; i++) {
        cr_expect(fabs(eg[i] - e[i]) <= 1e-12 * (1 + fabs(e[i])), "early [%d] %g want %g", i, eg[i], e[i]);
        cr_expect(fabs(lg[i] - l[i]) <= 1e-12 * (1 + fabs(l[i])), "late [%d] %g want %g", i, lg[i], l[i]);
    }
    nd_array *objs[] = {z, before, sum_before, x, im, after, sum_after, a, p, pi, pr, early, late};
    for (size_t k = 0; k < sizeof objs / sizeof *objs; k++) nd_free(objs[k]);
    free(m.v); free(old.v); free(pm.v);
}

/* Reading a part fuses: z.real * 2 is one kernel with no copy; the part
 * of a complex value computed in the same kernel (never stored) too. */
NDT_TEST(complex_views, reads_fuse) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 2, 33, 17);
    for (int64_t i = 0; i < 2 * m.n; i++)
        if (isnan(m.v[i]) || isinf(m.v[i])) m.v[i] = 0.5;
    nd_array *z = zupload(&m);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *twice = nd_keep(nd_mul(nd_real(z), nd_scalar(2.0)));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "z.real * 2 took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
    double *want = malloc((size_t)m.n * 8);
    for (int64_t i = 0; i < m.n; i++) want[i] = 2 * m.v[2 * i];
    fexpect(twice, want, m.n, "z.real * 2");
    /* imag(exp(z)[::-1]) * 3: exp computed inside the kernel, its
     * imaginary part taken there */
    nd_get_stats(&s0);
    nd_scope_begin();
    nd_array *e = nd_exp(z);
    nd_array *ie = nd_keep(nd_mul(nd_imag(nd_view(e, "::-1, :")), nd_scalar(3.0)));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&s1);
    cr_expect_eq(NDT_KERNELS(s1) - NDT_KERNELS(s0), 1, "imag(exp(z)[::-1]) * 3 took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0)));
    cr_expect_eq(s1.values_materialised - s0.values_materialised, 1, "exp(z) went to memory");
    double *got = malloc((size_t)m.n * 8);
    cr_assert_eq(nd_to_host(ie, got, (size_t)m.n * 8), ND_OK, "%s", nd_last_error());
    int bad = 0;
    for (int64_t i = 0; i < 33; i++)
        for (int64_t j = 0; j < 17; j++) {
            int64_t k = (32 - i) * 17 + j;
            double w = 3 * cimag(cexp(CMPLX(m.v[2 * k], m.v[2 * k + 1])));
            if (!(fabs(got[i * 17 + j] - w) <= 1e-13 * (1 + fabs(w)))) bad++;
        }
    cr_expect_eq(bad, 0, "%d of %lld wrong", bad, (long long)m.n);
    /* both parts of one inlined value: real(w) + imag(w), w = z * z */
    nd_scope_begin();
    nd_array *w = nd_mul(z, z);
    nd_array *sum = nd_keep(nd_add(nd_real(w), nd_imag(w)));
    nd_scope_end();
    cr_assert_eq(nd_to_host(sum, got, (size_t)m.n * 8), ND_OK, "%s", nd_last_error());
    bad = 0;
    for (int64_t k = 0; k < m.n; k++) {
        double a = m.v[2 * k], b = m.v[2 * k + 1], x = a * a - b * b + 2 * a * b;
        if (!(fabs(got[k] - x) <= 1e-12 * (1 + fabs(a * a) + fabs(b * b)))) bad++;
    }
    cr_expect_eq(bad, 0, "real(z*z) + imag(z*z): %d of %lld wrong", bad, (long long)m.n);
    nd_free(z); nd_free(twice); nd_free(ie); nd_free(sum);
    free(want); free(got); free(m.v);
}

NDT_TEST(complex_views, zero_d_and_empty) {
    nd_array *z = nd_full_complex(ND_COMPLEX128, ND_SCALAR_SHAPE, 1.5, -2.5);
    nd_array *re = nd_real(z), *im = nd_imag(z);
    cr_assert(re && im, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(re), 0);
    cr_expect_eq(nd_item(re), 1.5);
    cr_expect_eq(nd_item(im), -2.5);
    cr_assert_eq(nd_fill(im, 7.0), ND_OK, "%s", nd_last_error());
    double a, b;
    cr_assert_eq(nd_item_complex(z, &a, &b), ND_OK, "%s", nd_last_error());
    cr_expect(a == 1.5 && b == 7.0, "%g%+gj", a, b);
    nd_array *e = nd_zeros(ND_COMPLEX64, ND_SHAPE(0, 3)), *er = nd_real(e), *ei = nd_imag(e);
    cr_assert(er && ei, "%s", nd_last_error());
    cr_expect(nd_ndim(er) == 2 && nd_shape(er)[0] == 0 && nd_shape(er)[1] == 3);
    cr_expect_eq(nd_dtype_of(ei), ND_FLOAT32);
    nd_array *src = nd_ones(ND_FLOAT32, ND_SHAPE(0, 3));
    cr_expect_eq(nd_assign(ei, src), ND_OK, "%s", nd_last_error());
    nd_array *s = nd_sum(er, ND_ALL_AXES);
    cr_expect_eq(nd_item(s), 0.0);
    nd_free(z); nd_free(re); nd_free(im); nd_free(e); nd_free(er); nd_free(ei); nd_free(src); nd_free(s);
}

/* NumPy: real of a real array is the array itself (a view), imag a
 * read-only array of zeros; of a Python number, values. */
NDT_TEST(complex_views, real_dtype_input) {
    double v[4] = {1, -2, NAN, -0.0};
    nd_array *a = nd_from_host(v, ND_FLOAT64, ND_SHAPE(4)), *re = nd_real(a), *im = nd_imag(a);
    cr_assert(re && im, "%s", nd_last_error());
    cr_assert_eq(nd_fill(re, 9.0), ND_OK, "%s", nd_last_error());
    double want[4] = {9, 9, 9, 9};
    fexpect(a, want, 4, "a after a.real.fill(9)");
    double zero[4] = {0, 0, 0, 0};
    fexpect(im, zero, 4, "a.imag");
    cr_expect_eq(nd_fill(im, 1.0), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "nd_imag") != NULL, "%s", nd_last_error());
    nd_clear_error();
    cr_expect_eq(nd_assign(im, a), ND_ERR_ARG);
    nd_clear_error();
    nd_array *i32 = nd_arange(ND_INT32, 0, 3, 1), *ir = nd_real(i32), *ii = nd_imag(i32);
    cr_expect_eq(nd_dtype_of(ir), ND_INT32);
    cr_expect_eq(nd_dtype_of(ii), ND_INT32);
    nd_scope_begin();
    nd_array *ws = nd_keep(nd_real(nd_scalar(2.5))), *wi = nd_keep(nd_imag(nd_scalar(2.5)));
    nd_scope_end();
    cr_expect_eq(nd_item(ws), 2.5);
    cr_expect_eq(nd_item(wi), 0.0);
    nd_free(a); nd_free(re); nd_free(im); nd_free(i32); nd_free(ir); nd_free(ii); nd_free(ws); nd_free(wi);
}

/* The other writes: index assignment, add_at, masks, put_along_axis. */
NDT_TEST(complex_views, other_write_paths) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 2, 5, 4);
    nd_array *z = zupload(&m), *re = nd_real(z), *im = nd_imag(z);
    /* z.imag[1, :] = [1, 2, 3, 4] */
    double row[4] = {1, 2, 3, 4};
    nd_array *rv = nd_from_host(row, ND_FLOAT64, ND_SHAPE(4));
    cr_assert_eq(nd_index_assign(im, "1, :", 0, NULL, rv), ND_OK, "%s", nd_last_error());
    for (int j = 0; j < 4; j++) m.v[2 * (1 * 4 + j) + 1] = row[j];
    zexpect(z, &m, "z.imag[1, :] = row");
    /* np.add.at(z.real, [0, 3, 0], 1.0): repeated rows accumulate */
    for (int i = 0; i < 40; i++)
        if (isnan(m.v[i]) || isinf(m.v[i])) m.v[i] = 0.25;
    nd_array *z2 = zupload(&m), *re2 = nd_real(z2);
    int64_t idx[3] = {0, 3, 0};
    nd_array *ix = nd_from_host(idx, ND_INT64, ND_SHAPE(3)), *one = nd_ones(ND_FLOAT64, ND_SHAPE(3, 4));
    cr_assert_eq(nd_add_at(re2, ix, one), ND_OK, "%s", nd_last_error());
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++) m.v[2 * (idx[k] * 4 + j)] += 1.0;
    zexpect(z2, &m, "np.add.at(z.real, [0, 3, 0], 1)");
    /* z.imag[mask] = -5 */
    uint8_t mk[20];
    for (int i = 0; i < 20; i++) mk[i] = (uint8_t)(i % 3 == 1);
    nd_array *mask = nd_from_host(mk, ND_BOOL, ND_SHAPE(5, 4)), *im2 = nd_imag(z2);
    nd_scope_begin();
    cr_assert_eq(nd_mask_assign(im2, mask, nd_scalar(-5.0)), ND_OK, "%s", nd_last_error());
    nd_scope_end();
    for (int i = 0; i < 20; i++)
        if (mk[i]) m.v[2 * i + 1] = -5.0;
    zexpect(z2, &m, "z.imag[mask] = -5");
    /* np.put_along_axis(z.real, [[2], [0], [1], [3], [2]], 8, axis=1) */
    int64_t pa[5] = {2, 0, 1, 3, 2};
    nd_array *pix = nd_from_host(pa, ND_INT64, ND_SHAPE(5, 1)), *eight = nd_full(ND_FLOAT64, ND_SHAPE(5, 1), 8.0);
    cr_assert_eq(nd_put_along_axis(re2, pix, eight, 1), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++) m.v[2 * (i * 4 + pa[i])] = 8.0;
    zexpect(z2, &m, "put_along_axis(z.real)");
    nd_array *objs[] = {z, re, im, rv, z2, re2, ix, one, mask, im2, pix, eight};
    for (size_t k = 0; k < sizeof objs / sizeof *objs; k++) nd_free(objs[k]);
    free(m.v);
}

/* nd_data and DLPack hand a part out in its own layout: the address of
 * its first element and strides in its own elements (twice the complex
 * array's). Writes through nd_data reach z. */
NDT_TEST(complex_views, host_export) {
    double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    nd_array *z = nd_from_host(v, ND_COMPLEX128, ND_SHAPE(2, 3)), *im = nd_imag(z);
    nd_array *imT = nd_transpose(im, NULL);
    const double *base = nd_data(z, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(base, "%s", nd_last_error());
    const double *p = nd_data(imT, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(p, "%s", nd_last_error());
    cr_expect_eq(p, base + 1);
    const int64_t *st = nd_strides(imT);
    cr_expect(st[0] == 2 && st[1] == 6, "strides %lld %lld", (long long)st[0], (long long)st[1]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) cr_expect_eq(p[i * st[0] + j * st[1]], v[2 * (j * 3 + i) + 1]);
    cr_assert_eq(nd_data_done(imT), ND_OK);
    cr_assert_eq(nd_data_done(z), ND_OK);
    DLManagedTensorVersioned *t = nd_to_dlpack(imT, ND_HOST_MEMORY, ND_DATA_READ);
    cr_assert(t, "%s", nd_last_error());
    cr_expect(t->dl_tensor.dtype.code == kDLFloat && t->dl_tensor.dtype.bits == 64);
    cr_expect(t->dl_tensor.strides[0] == 2 && t->dl_tensor.strides[1] == 6);
    const double *d = (const double *)((const char *)t->dl_tensor.data + t->dl_tensor.byte_offset);
    cr_expect_eq(d[1 * 2 + 1 * 6], 10.0);
    t->deleter(t);
    /* writes through nd_data of z.real */
    nd_array *re = nd_real(z);
    double *w = nd_data(re, ND_HOST_MEMORY, ND_DATA_READ_WRITE);
    cr_assert(w, "%s", nd_last_error());
    w[0] = -1;
    w[nd_strides(re)[0] + 2 * nd_strides(re)[1]] = -2; /* z[1, 2].real */
    cr_assert_eq(nd_data_done(re), ND_OK);
    v[0] = -1;
    v[2 * 5] = -2;
    double back[12];
    cr_assert_eq(nd_to_host(z, back, sizeof back), ND_OK, "%s", nd_last_error());
    cr_expect_eq(memcmp(back, v, sizeof v), 0, "nd_data writes through z.real");
    nd_free(z); nd_free(im); nd_free(imT); nd_free(re);
}

/* A user kernel writing a part in place (the CPU implementation: the CUDA
 * backend would need CUDA source for it). */
static int set_index(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out) {
    (void)ctx; (void)n_in; (void)in; (void)n_out;
    double *p = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++) p[i * out[0].strides[0]] = (double)(100 + i);
    return 0;
}

NDT_TEST(complex_views, user_kernel_in_place) {
    if (ndt_backend_is_cuda()) cr_skip_test("CPU implementation only");
    double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    nd_array *z = nd_from_host(v, ND_COMPLEX128, ND_SHAPE(4)), *im = nd_imag(z), *iv = nd_view(im, "::-2");
    nd_user_kernel *k = nd_user_kernel_new("set_index", 0, 1);
    cr_assert(k, "%s", nd_last_error());
    cr_assert_eq(nd_user_kernel_set_cpu(k, set_index, NULL), ND_OK);
    nd_kernel_output o = {iv, ND_FLOAT64, -1, NULL};
    cr_assert_eq(nd_user_kernel_call(k, 0, NULL, 1, &o, NULL), ND_OK, "%s", nd_last_error());
    v[2 * 3 + 1] = 100;
    v[2 * 1 + 1] = 101;
    double back[8];
    cr_assert_eq(nd_to_host(z, back, sizeof back), ND_OK, "%s", nd_last_error());
    cr_expect_eq(memcmp(back, v, sizeof v), 0, "%g %g %g %g %g %g %g %g", back[0], back[1], back[2], back[3],
                 back[4], back[5], back[6], back[7]);
    nd_user_kernel_free(k);
    nd_free(z); nd_free(im); nd_free(iv);
}

/* Library routines read parts in place of arrays (matmul through strides
 * twice the element size, a scan, a sort, a gather): the same values as
 * from a contiguous copy. */
NDT_TEST(complex_views, library_calls_read_parts) {
    NDT_RNG(r);
    zmodel m = zrand(&r, 2, 6, 7);
    for (int64_t i = 0; i < 2 * m.n; i++)
        if (isnan(m.v[i]) || isinf(m.v[i]) || m.v[i] == 0) m.v[i] = (double)i / 16 + 0.5; /* distinct keys */
    nd_array *z = zupload(&m), *re = nd_real(z), *im = nd_imag(z);
    nd_array *imT = nd_transpose(im, NULL);
    nd_array *mm = nd_matmul(re, imT), *cs = nd_cumsum(im, 1), *so = nd_sort(re, 1);
    int64_t idx[3] = {6, 0, 3};
    nd_array *ix = nd_from_host(idx, ND_INT64, ND_SHAPE(3)), *tk = nd_take(im, ix, 1);
    cr_assert(mm && cs && so && tk, "%s", nd_last_error());
    double want_mm[36], want_cs[42], want_so[42], want_tk[18];
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 7; k++) s += m.v[2 * (i * 7 + k)] * m.v[2 * (j * 7 + k) + 1];
            want_mm[i * 6 + j] = s;
        }
        double run = 0;
        for (int k = 0; k < 7; k++) {
            run += m.v[2 * (i * 7 + k) + 1];
            want_cs[i * 7 + k] = run;
            want_so[i * 7 + k] = m.v[2 * (i * 7 + k)];
        }
        for (int a = 1; a < 7; a++) /* insertion sort of the row */
            for (int b = a; b > 0 && want_so[i * 7 + b - 1] > want_so[i * 7 + b]; b--) {
                double t = want_so[i * 7 + b];
                want_so[i * 7 + b] = want_so[i * 7 + b - 1];
                want_so[i * 7 + b - 1] = t;
            }
        for (int k = 0; k < 3; k++) want_tk[i * 3 + k] = m.v[2 * (i * 7 + idx[k]) + 1];
    }
    double got[42];
    cr_assert_eq(nd_to_host(mm, got, 36 * 8), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 36; i++)
        cr_expect(fabs(got[i] - want_mm[i]) <= 1e-12 * (1 + fabs(want_mm[i])), "matmul [%d] %.17g want %.17g", i,
                  got[i], want_mm[i]);
    cr_assert_eq(nd_to_host(cs, got, 42 * 8), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 42; i++)
        cr_expect(fabs(got[i] - want_cs[i]) <= 1e-12 * (1 + fabs(want_cs[i])), "cumsum [%d] %.17g want %.17g", i,
                  got[i], want_cs[i]);
    fexpect(so, want_so, 42, "sort(z.real)");
    fexpect(tk, want_tk, 18, "take(z.imag)");
    nd_array *objs[] = {z, re, im, imT, mm, cs, so, ix, tk};
    for (size_t k = 0; k < sizeof objs / sizeof *objs; k++) nd_free(objs[k]);
    free(m.v);
}
