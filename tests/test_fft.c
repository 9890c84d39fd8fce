/* numpy.fft (include/nd/fft.h) on every backend, against an independent
 * reference computed here: a direct O(n^2) DFT in long double (its
 * twiddles from cosl/sinl of the exactly reduced angle), applied axis by
 * axis for the n-d transforms, with NumPy 2's crop/zero-pad, Hermitian and
 * norm rules written out from their definitions. Large lengths check a
 * sample of bins (each a direct O(n) sum). Tolerances: the FFT's error
 * bound, eps * log2(n) times the input's 2-norm (per output element),
 * with eps of the precision the dtype computes in. fftfreq, rfftfreq,
 * fftshift and ifftshift are exact against values NumPy 2 printed. */
#include "common.h"

#include <float.h>

typedef long double ld;

/* ---------------------------------------------------------------- reference */

/* An n-d complex array in long double, row-major. */
typedef struct {
    int nd;
    int64_t shape[ND_MAX_DIMS];
    int64_t size;
    ld *re, *im;
} cref;

static cref cref_new(int nd, const int64_t *shape) {
    cref c = {nd, {0}, 1, NULL, NULL};
    for (int d = 0; d < nd; d++) c.shape[d] = shape[d], c.size *= shape[d];
    c.re = calloc((size_t)(c.size ? c.size : 1), sizeof(ld));
    c.im = calloc((size_t)(c.size ? c.size : 1), sizeof(ld));
    return c;
}
static void cref_free(cref *c) {
    free(c->re);
    free(c->im);
}

static void root(int64_t jk, int64_t n, int sign, ld *c, ld *s) {
    int64_t r = jk % n;
    ld a = 2.0L * 3.14159265358979323846264338327950288L * (ld)r / (ld)n;
    *c = cosl(a);
    *s = sign * sinl(a);
}

/* cos and sin of 2 pi r / n for every r < n. */
static void roots_table(int64_t n, ld **c, ld **s) {
    *c = malloc((size_t)n * sizeof(ld));
    *s = malloc((size_t)n * sizeof(ld));
    for (int64_t r = 0; r < n; r++) root(r, n, 1, &(*c)[r], &(*s)[r]);
}

/* out = the DFT of in along axis (in cut or zero-padded to n), sign -1/+1. */
static cref ref_axis(const cref *in, int axis, int64_t n, int sign) {
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, in->shape, sizeof shape);
    shape[axis] = n;
    cref out = cref_new(in->nd, shape);
    int64_t inner = 1, outer = 1, m = in->shape[axis];
    for (int d = axis + 1; d < in->nd; d++) inner *= in->shape[d];
    for (int d = 0; d < axis; d++) outer *= in->shape[d];
    int64_t use = m < n ? m : n;
    ld *ct, *st;
    roots_table(n, &ct, &st);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < n; k++) {
                ld sr = 0, si = 0;
                for (int64_t j = 0, jk = 0; j < use; j++, jk = jk + k >= n ? jk + k - n : jk + k) {
                    ld c = ct[jk], s = sign * st[jk];
                    ld xr = in->re[(o * m + j) * inner + i], xi = in->im[(o * m + j) * inner + i];
                    sr += xr * c - xi * s;
                    si += xr * s + xi * c;
                }
                out.re[(o * n + k) * inner + i] = sr;
                out.im[(o * n + k) * inner + i] = si;
            }
    free(ct);
    free(st);
    return out;
}

/* in cut to its first len elements along axis (len <= length). */
static cref ref_crop(const cref *in, int axis, int64_t len) {
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, in->shape, sizeof shape);
    shape[axis] = len;
    cref out = cref_new(in->nd, shape);
    int64_t inner = 1, outer = 1, m = in->shape[axis];
    for (int d = axis + 1; d < in->nd; d++) inner *= in->shape[d];
    for (int d = 0; d < axis; d++) outer *= in->shape[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < len; k++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t a = (o * m + k) * inner + i, b = (o * len + k) * inner + i;
                out.re[b] = k < m ? in->re[a] : 0;
                out.im[b] = k < m ? in->im[a] : 0;
            }
    return out;
}

/* irfft along axis: the input cut/padded to n/2 + 1, its Hermitian
 * extension (Im of element 0 and n/2 dropped), the backward DFT; real. */
static cref ref_irfft_axis(const cref *in, int axis, int64_t n) {
    cref half = ref_crop(in, axis, n / 2 + 1);
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, in->shape, sizeof shape);
    shape[axis] = n;
    cref full = cref_new(in->nd, shape);
    int64_t inner = 1, outer = 1, h = n / 2 + 1;
    for (int d = axis + 1; d < in->nd; d++) inner *= in->shape[d];
    for (int d = 0; d < axis; d++) outer *= in->shape[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < n; k++) {
                int64_t src = k < h ? k : n - k;
                ld r = half.re[(o * h + src) * inner + i], im = half.im[(o * h + src) * inner + i];
                if (src == 0 || 2 * src == n) im = 0;
                full.re[(o * n + k) * inner + i] = r;
                full.im[(o * n + k) * inner + i] = k < h ? im : -im;
            }
    cref out = ref_axis(&full, axis, n, 1);
    for (int64_t e = 0; e < out.size; e++) out.im[e] = 0;
    cref_free(&half);
    cref_free(&full);
    return out;
}

static void ref_scale(cref *c, ld f) {
    for (int64_t e = 0; e < c->size; e++) c->re[e] *= f, c->im[e] *= f;
}
static void ref_conj(cref *c) {
    for (int64_t e = 0; e < c->size; e++) c->im[e] = -c->im[e];
}
static void ref_replace(cref *c, cref n) {
    cref_free(c);
    *c = n;
}

/* ------------------------------------------------------------ nd <-> ref */

/* Random values in [-1, 1) for both parts (real dtypes: real part only),
 * uploaded as dtype t; ref gets the values as the dtype holds them. */
static nd_array *random_input(ndt_rng *r, nd_dtype t, int nd, const int64_t *shape, cref *ref) {
    *ref = cref_new(nd, shape);
    int cplx = t == ND_COMPLEX64 || t == ND_COMPLEX128;
    double *v = malloc((size_t)(ref->size ? ref->size : 1) * 2 * sizeof(double));
    for (int64_t e = 0; e < ref->size; e++) {
        v[2 * e] = ndt_uniform(r, -1, 1);
        v[2 * e + 1] = cplx ? ndt_uniform(r, -1, 1) : 0;
    }
    nd_array *a;
    if (cplx) {
        nd_array *w = nd_from_host(v, ND_COMPLEX128, nd, shape);
        a = t == ND_COMPLEX128 ? nd_retain(w) : nd_astype(w, t);
        nd_free(w);
    } else {
        double *rv = malloc((size_t)(ref->size ? ref->size : 1) * sizeof(double));
        for (int64_t e = 0; e < ref->size; e++) rv[e] = v[2 * e];
        nd_array *w = nd_from_host(rv, ND_FLOAT64, nd, shape);
        a = t == ND_FLOAT64 ? nd_retain(w) : nd_astype(w, t);
        nd_free(w);
        free(rv);
    }
    cr_assert(a, "%s", nd_last_error());
    /* the values as stored (float32 rounding) */
    nd_array *back = nd_astype(a, ND_COMPLEX128);
    cr_assert(back, "%s", nd_last_error());
    if (ref->size) cr_assert_eq(nd_to_host(back, v, (size_t)ref->size * 16), ND_OK, "%s", nd_last_error());
    for (int64_t e = 0; e < ref->size; e++) ref->re[e] = v[2 * e], ref->im[e] = v[2 * e + 1];
    nd_free(back);
    free(v);
    return a;
}

static double eps_of(nd_dtype t) {
    return t == ND_COMPLEX64 || t == ND_FLOAT32 || t == ND_FLOAT16 ? FLT_EPSILON : DBL_EPSILON;
}

/* got (complex or real dtype `want_dtype`, shape of want) against want:
 * every element within tol * (2-norm of the input, the bound's scale). */
static int check_against(nd_array *got, nd_dtype want_dtype, const cref *want, double in_norm, int64_t n,
                         const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_expect_eq(nd_dtype_of(got), want_dtype, "%s: dtype %s, want %s", what, nd_dtype_name(nd_dtype_of(got)),
                 nd_dtype_name(want_dtype));
    cr_assert_eq(nd_ndim(got), want->nd, "%s: ndim %d, want %d", what, nd_ndim(got), want->nd);
    for (int d = 0; d < want->nd; d++)
        cr_assert_eq(nd_shape(got)[d], want->shape[d], "%s: axis %d has %lld, want %lld", what, d,
                     (long long)nd_shape(got)[d], (long long)want->shape[d]);
    if (!want->size) return 1;
    nd_array *c = nd_astype(got, ND_COMPLEX128);
    double *v = malloc((size_t)want->size * 16);
    memset(v, 0xAB, (size_t)want->size * 16);
    cr_assert_eq(nd_to_host(c, v, (size_t)want->size * 16), ND_OK, "%s: %s", what, nd_last_error());
    double tol = 6 * eps_of(want_dtype) * (log2((double)n) + 1) * (in_norm > 0 ? in_norm : 1);
    int bad = 0;
    for (int64_t e = 0; e < want->size && bad < 5; e++) {
        double dr = fabs(v[2 * e] - (double)want->re[e]), di = fabs(v[2 * e + 1] - (double)want->im[e]);
        if (!(dr <= tol && di <= tol)) {
            cr_expect(0, "%s: element %lld is %.17g%+.17gj, want %.17Lg%+.17Lgj (tol %.3g)", what, (long long)e,
                      v[2 * e], v[2 * e + 1], want->re[e], want->im[e], tol);
            bad++;
        }
    }
    free(v);
    nd_free(c);
    return bad == 0;
}

/* check_against, then frees got. */
static int check_owned(nd_array *got, nd_dtype want_dtype, const cref *want, double in_norm, int64_t n,
                       const char *what) {
    int ok = check_against(got, want_dtype, want, in_norm, n, what);
    nd_free(got);
    return ok;
}

static double norm2(const cref *c) {
    ld s = 0;
    for (int64_t e = 0; e < c->size; e++) s += c->re[e] * c->re[e] + c->im[e] * c->im[e];
    return sqrt((double)s);
}

static nd_dtype cplx_of(nd_dtype t) {
    return t == ND_FLOAT32 || t == ND_COMPLEX64 || t == ND_FLOAT16 ? ND_COMPLEX64 : ND_COMPLEX128;
}
static nd_dtype real_of(nd_dtype t) {
    return t == ND_FLOAT32 || t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
}

/* The factor NumPy applies: a forward transform 1, 1/sqrt(n), 1/n for
 * backward, ortho, forward; an inverse one the other way round. */
static ld scale_for(nd_fft_norm norm, int inverse, ld n) {
    if (norm == ND_FFT_ORTHO) return 1 / sqrtl(n);
    return (norm == ND_FFT_FORWARD) != inverse ? 1 / n : 1;
}

/* ------------------------------------------------------------ 1-d, every size */

static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 97, 128, 360, 1009, 1024, 4096};
#define N_SIZES (int)(sizeof sizes / sizeof *sizes)

NDT_TEST(fft, complex_sizes_against_dft) {
    NDT_RNG(r);
    const nd_dtype types[2] = {ND_COMPLEX128, ND_COMPLEX64};
    for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < N_SIZES; si++) {
            int64_t n = sizes[si];
            cref x;
            nd_array *a = random_input(&r, types[ti], 1, &n, &x);
            cref want = ref_axis(&x, 0, n, -1), back = ref_axis(&x, 0, n, 1);
            ref_scale(&back, 1 / (ld)n);
            nd_array *f = nd_fft_fft(a, -1, 0, ND_FFT_BACKWARD), *b = nd_fft_ifft(a, -1, -1, ND_FFT_BACKWARD);
            char what[96];
            snprintf(what, sizeof what, "fft n=%lld %s", (long long)n, nd_dtype_name(types[ti]));
            check_against(f, types[ti], &want, norm2(&x), n, what);
            snprintf(what, sizeof what, "ifft n=%lld %s", (long long)n, nd_dtype_name(types[ti]));
            check_against(b, types[ti], &back, norm2(&x) / (double)n, n, what);
            nd_free(a); nd_free(f); nd_free(b);
            cref_free(&x); cref_free(&want); cref_free(&back);
        }
}

/* Large and awkward lengths (powers of 2, 3 and 5, a prime above the
 * generic radix, a product with one): a sample of bins by direct sums. */
NDT_TEST(fft, large_lengths_sampled_bins) {
    NDT_RNG(r);
    const int64_t big[] = {1 << 16, 3 * 3 * 5 * 5 * 7 * 11 * 13, 65537, 2 * 3 * 4099, 1 << 20};
    for (int bi = 0; bi < 5; bi++)
        for (int ti = 0; ti < 2; ti++) {
            nd_dtype t = ti ? ND_COMPLEX64 : ND_COMPLEX128;
            int64_t n = big[bi];
            cref x;
            nd_array *a = random_input(&r, t, 1, &n, &x);
            nd_array *f = nd_fft_fft(a, -1, 0, ND_FFT_BACKWARD);
            cr_assert(f, "%s", nd_last_error());
            double *v = malloc((size_t)n * 16);
            nd_array *c = nd_astype(f, ND_COMPLEX128);
            cr_assert_eq(nd_to_host(c, v, (size_t)n * 16), ND_OK, "%s", nd_last_error());
            double tol = 6 * eps_of(t) * (log2((double)n) + 1) * norm2(&x);
            ld *ct, *st;
            roots_table(n, &ct, &st);
            for (int s = 0; s < 12; s++) {
                int64_t k = s < 2 ? (s ? n - 1 : 0) : ndt_int(&r, 0, n - 1);
                ld sr = 0, si = 0;
                for (int64_t j = 0, jk = 0; j < n; j++, jk = jk + k >= n ? jk + k - n : jk + k) {
                    ld cs = ct[jk], sn = -st[jk];
                    sr += x.re[j] * cs - x.im[j] * sn;
                    si += x.re[j] * sn + x.im[j] * cs;
                }
                cr_expect(fabs(v[2 * k] - (double)sr) <= tol && fabs(v[2 * k + 1] - (double)si) <= tol,
                          "n=%lld %s bin %lld: %.10g%+.10gj, want %.10Lg%+.10Lgj (tol %.3g)", (long long)n,
                          nd_dtype_name(t), (long long)k, v[2 * k], v[2 * k + 1], sr, si, tol);
            }
            free(v);
            free(ct);
            free(st);
            nd_free(c); nd_free(a); nd_free(f);
            cref_free(&x);
        }
}

NDT_TEST(fft, real_transforms_every_size_and_norm) {
    NDT_RNG(r);
    const nd_dtype types[2] = {ND_FLOAT64, ND_FLOAT32};
    for (int ti = 0; ti < 2; ti++)
        for (int si = 0; si < N_SIZES; si++)
            for (int nm = 0; nm < 3; nm++) {
                nd_fft_norm norm = (nd_fft_norm)nm;
                nd_dtype t = types[ti];
                int64_t n = sizes[si], h = n / 2 + 1;
                char what[128];
                cref x;
                nd_array *a = random_input(&r, t, 1, &n, &x);
                double xn = norm2(&x);
                /* rfft: the first n/2 + 1 bins */
                cref full = ref_axis(&x, 0, n, -1), want = ref_crop(&full, 0, h);
                ref_scale(&want, scale_for(norm, 0, (ld)n));
                nd_array *f = nd_fft_rfft(a, -1, 0, norm);
                snprintf(what, sizeof what, "rfft n=%lld %s norm %d", (long long)n, nd_dtype_name(t), nm);
                check_against(f, cplx_of(t), &want, xn, n, what);
                /* ihfft = conj(rfft) scaled as an inverse */
                cref ih = ref_crop(&full, 0, h);
                ref_conj(&ih);
                ref_scale(&ih, scale_for(norm, 1, (ld)n));
                nd_array *g = nd_fft_ihfft(a, -1, 0, norm);
                snprintf(what, sizeof what, "ihfft n=%lld %s norm %d", (long long)n, nd_dtype_name(t), nm);
                check_against(g, cplx_of(t), &ih, xn, n, what);
                /* irfft of the rfft (length n given: odd lengths need it) gives x back */
                nd_array *back = nd_fft_irfft(f, n, 0, norm);
                snprintf(what, sizeof what, "irfft(rfft) n=%lld %s norm %d", (long long)n, nd_dtype_name(t), nm);
                check_against(back, real_of(t), &x, xn, n, what);
                /* hfft(ihfft(x), n) = x */
                nd_array *hb = nd_fft_hfft(g, n, -1, norm);
                snprintf(what, sizeof what, "hfft(ihfft) n=%lld %s norm %d", (long long)n, nd_dtype_name(t), nm);
                check_against(hb, real_of(t), &x, xn, n, what);
                nd_free(a); nd_free(f); nd_free(g); nd_free(back); nd_free(hb);
                cref_free(&x); cref_free(&full); cref_free(&want); cref_free(&ih);
            }
}

/* irfft and hfft of arbitrary (non-Hermitian) complex input: NumPy drops
 * Im of the first and middle element; default n = 2 (m - 1); n cropping
 * and padding the input. */
NDT_TEST(fft, irfft_hfft_of_any_input) {
    NDT_RNG(r);
    const int64_t ms[] = {2, 3, 5, 9, 65, 513};
    const int64_t extra[] = {0, 1, -1, 3, 7};
    for (int ti = 0; ti < 2; ti++)
        for (int mi = 0; mi < 6; mi++)
            for (int ei = 0; ei < 5; ei++) {
                nd_dtype t = ti ? ND_COMPLEX64 : ND_COMPLEX128;
                int64_t m = ms[mi], n = ei == 0 ? 2 * (m - 1) : 2 * (m - 1) + extra[ei];
                if (n < 1) continue;
                cref x;
                nd_array *a = random_input(&r, t, 1, &m, &x);
                char what[128];
                cref want = ref_irfft_axis(&x, 0, n);
                ref_scale(&want, 1 / (ld)n);
                nd_array *b = nd_fft_irfft(a, ei == 0 ? -1 : n, 0, ND_FFT_BACKWARD);
                snprintf(what, sizeof what, "irfft m=%lld n=%lld %s", (long long)m, (long long)n, nd_dtype_name(t));
                check_against(b, real_of(t), &want, norm2(&x), n, what);
                /* hfft(a, n) = irfft(conj(a), n) * n (norm backward) */
                cref cx = ref_crop(&x, 0, m);
                ref_conj(&cx);
                cref hw = ref_irfft_axis(&cx, 0, n);
                nd_array *h = nd_fft_hfft(a, ei == 0 ? -1 : n, 0, ND_FFT_BACKWARD);
                snprintf(what, sizeof what, "hfft m=%lld n=%lld %s", (long long)m, (long long)n, nd_dtype_name(t));
                check_against(h, real_of(t), &hw, norm2(&x), n, what);
                nd_free(a); nd_free(b); nd_free(h);
                cref_free(&x); cref_free(&want); cref_free(&cx); cref_free(&hw);
            }
}

NDT_TEST(fft, n_crops_and_pads_every_norm) {
    NDT_RNG(r);
    int64_t m = 12;
    const int64_t ns[] = {1, 5, 12, 13, 31, 64};
    for (int ni = 0; ni < 6; ni++)
        for (int nm = 0; nm < 3; nm++) {
            int64_t n = ns[ni];
            cref x;
            nd_array *a = random_input(&r, ND_COMPLEX128, 1, &m, &x);
            cref f = ref_axis(&x, 0, n, -1), b = ref_axis(&x, 0, n, 1);
            ref_scale(&f, scale_for((nd_fft_norm)nm, 0, (ld)n));
            ref_scale(&b, scale_for((nd_fft_norm)nm, 1, (ld)n));
            nd_array *gf = nd_fft_fft(a, n, 0, (nd_fft_norm)nm), *gb = nd_fft_ifft(a, n, 0, (nd_fft_norm)nm);
            char what[96];
            snprintf(what, sizeof what, "fft m=12 n=%lld norm %d", (long long)n, nm);
            check_against(gf, ND_COMPLEX128, &f, norm2(&x), n, what);
            snprintf(what, sizeof what, "ifft m=12 n=%lld norm %d", (long long)n, nm);
            check_against(gb, ND_COMPLEX128, &b, norm2(&x), n, what);
            nd_free(a); nd_free(gf); nd_free(gb);
            cref_free(&x); cref_free(&f); cref_free(&b);
        }
}

/* ------------------------------------------------------------ axes, n-d */

NDT_TEST(fft, axis_of_a_3d_array_and_batches) {
    NDT_RNG(r);
    const int64_t shape[3] = {3, 10, 7};
    for (int ax = -3; ax < 3; ax++) {
        cref x;
        nd_array *a = random_input(&r, ND_COMPLEX128, 3, shape, &x);
        int axis = ax < 0 ? ax + 3 : ax;
        int64_t n = shape[axis] + (ax % 2 ? 3 : -1);
        cref want = ref_axis(&x, axis, n, -1);
        nd_array *f = nd_fft_fft(a, n, ax, ND_FFT_BACKWARD);
        char what[64];
        snprintf(what, sizeof what, "fft axis %d n=%lld of (3,10,7)", ax, (long long)n);
        check_against(f, ND_COMPLEX128, &want, norm2(&x), n, what);
        /* rfft along the same axis, of the real part */
        cref xr = cref_new(3, shape);
        for (int64_t e = 0; e < x.size; e++) xr.re[e] = x.re[e];
        nd_array *re = nd_real(a);
        cref full = ref_axis(&xr, axis, n, -1), rw = ref_crop(&full, axis, n / 2 + 1);
        nd_array *rf = nd_fft_rfft(re, n, ax, ND_FFT_BACKWARD);
        snprintf(what, sizeof what, "rfft axis %d n=%lld of (3,10,7)", ax, (long long)n);
        check_against(rf, ND_COMPLEX128, &rw, norm2(&x), n, what);
        nd_free(a); nd_free(f); nd_free(re); nd_free(rf);
        cref_free(&x); cref_free(&want); cref_free(&xr); cref_free(&full); cref_free(&rw);
    }
}

/* fftn and friends against axis-by-axis reference DFTs. */
static cref ref_c2c_axes(const cref *x, int na, const int *ax, const int64_t *len, int sign) {
    cref cur = ref_crop(x, 0, x->shape[0]);
    for (int k = na - 1; k >= 0; k--) ref_replace(&cur, ref_axis(&cur, ax[k], len[k], sign));
    return cur;
}

NDT_TEST(fft, nd_transforms_axes_and_s) {
    NDT_RNG(r);
    const int64_t shape[4] = {2, 6, 5, 8};
    struct {
        int na;
        int ax[4];
        int64_t s[4]; /* 0: no s */
    } cases[] = {
        {2, {-2, -1}, {0}},         {2, {-2, -1}, {4, 9}},   {3, {1, 2, 3}, {0}},   {3, {3, 1, 2}, {7, 6, 3}},
        {4, {0, 1, 2, 3}, {0}},     {4, {0, 1, 2, 3}, {3, 5, 5, 10}}, {1, {2}, {9}}, {2, {0, 2}, {2, 5}},
        {2, {2, 0}, {-1, 4}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (int ti = 0; ti < 2; ti++) {
            nd_dtype t = ti ? ND_COMPLEX64 : ND_COMPLEX128;
            int na = cases[ci].na, ax[4];
            int64_t len[4], *s = cases[ci].s[0] ? cases[ci].s : NULL;
            double total = 1;
            for (int k = 0; k < na; k++) {
                ax[k] = cases[ci].ax[k] < 0 ? cases[ci].ax[k] + 4 : cases[ci].ax[k];
                len[k] = s && s[k] != -1 ? s[k] : shape[ax[k]];
                total *= (double)len[k];
            }
            cref x;
            nd_array *a = random_input(&r, t, 4, shape, &x);
            char what[96];
            for (int nm = 0; nm < 3; nm++) {
                cref f = ref_c2c_axes(&x, na, ax, len, -1), b = ref_c2c_axes(&x, na, ax, len, 1);
                ref_scale(&f, scale_for((nd_fft_norm)nm, 0, (ld)total));
                ref_scale(&b, scale_for((nd_fft_norm)nm, 1, (ld)total));
                nd_array *gf = nd_fft_fftn(a, na, s, na, cases[ci].ax, (nd_fft_norm)nm);
                nd_array *gb = nd_fft_ifftn(a, na, s, na, cases[ci].ax, (nd_fft_norm)nm);
                snprintf(what, sizeof what, "fftn case %zu %s norm %d", ci, nd_dtype_name(t), nm);
                check_against(gf, t, &f, norm2(&x), (int64_t)total, what);
                snprintf(what, sizeof what, "ifftn case %zu %s norm %d", ci, nd_dtype_name(t), nm);
                check_against(gb, t, &b, norm2(&x), (int64_t)total, what);
                nd_free(gf); nd_free(gb);
                cref_free(&f); cref_free(&b);
            }
            /* rfftn of the real part: rfft along the last axis, then the others */
            cref xr = cref_new(4, shape);
            for (int64_t e = 0; e < x.size; e++) xr.re[e] = x.re[e];
            nd_array *re = nd_real(a);
            cref rf = ref_axis(&xr, ax[na - 1], len[na - 1], -1);
            ref_replace(&rf, ref_crop(&rf, ax[na - 1], len[na - 1] / 2 + 1));
            for (int k = na - 2; k >= 0; k--) ref_replace(&rf, ref_axis(&rf, ax[k], len[k], -1));
            nd_array *grf = nd_fft_rfftn(re, na, s, na, cases[ci].ax, ND_FFT_BACKWARD);
            snprintf(what, sizeof what, "rfftn case %zu %s", ci, nd_dtype_name(t));
            check_against(grf, t, &rf, norm2(&x), (int64_t)total, what);
            /* irfftn of a (any complex input): the complex axes backward, then irfft of the last */
            int64_t ilen[4];
            memcpy(ilen, len, sizeof ilen);
            if (!s) ilen[na - 1] = 2 * (shape[ax[na - 1]] - 1);
            double itotal = 1;
            for (int k = 0; k < na; k++) itotal *= (double)ilen[k];
            cref ir = ref_crop(&x, 0, shape[0]);
            for (int k = na - 2; k >= 0; k--) ref_replace(&ir, ref_axis(&ir, ax[k], ilen[k], 1));
            ref_replace(&ir, ref_irfft_axis(&ir, ax[na - 1], ilen[na - 1]));
            ref_scale(&ir, 1 / (ld)itotal);
            nd_array *gir = nd_fft_irfftn(a, na, s, na, cases[ci].ax, ND_FFT_BACKWARD);
            snprintf(what, sizeof what, "irfftn case %zu %s", ci, nd_dtype_name(t));
            check_against(gir, real_of(t), &ir, norm2(&x), (int64_t)itotal, what);
            nd_free(a); nd_free(re); nd_free(grf); nd_free(gir);
            cref_free(&x); cref_free(&xr); cref_free(&rf); cref_free(&ir);
        }
}

NDT_TEST(fft, two_d_functions_default_axes) {
    NDT_RNG(r);
    const int64_t shape[3] = {3, 9, 8};
    cref x;
    nd_array *a = random_input(&r, ND_COMPLEX128, 3, shape, &x);
    int ax[2] = {1, 2};
    int64_t len[2] = {9, 8}, s2[2] = {4, 11};
    cref f = ref_c2c_axes(&x, 2, ax, len, -1);
    check_owned(nd_fft_fft2(a, 0, NULL, 0, NULL, ND_FFT_BACKWARD), ND_COMPLEX128, &f, norm2(&x), 72, "fft2");
    cref b = ref_c2c_axes(&x, 2, ax, s2, 1);
    ref_scale(&b, 1.0L / 44);
    check_owned(nd_fft_ifft2(a, 2, s2, 0, NULL, ND_FFT_BACKWARD), ND_COMPLEX128, &b, norm2(&x), 44, "ifft2 s");
    /* fftn with s and no axes: the last len(s) axes */
    cref fs = ref_c2c_axes(&x, 2, ax, s2, -1);
    check_owned(nd_fft_fftn(a, 2, s2, 0, NULL, ND_FFT_BACKWARD), ND_COMPLEX128, &fs, norm2(&x), 44, "fftn s");
    /* rfft2 / irfft2 round trip */
    nd_array *re = nd_real(a);
    nd_array *rf = nd_fft_rfft2(re, 0, NULL, 0, NULL, ND_FFT_ORTHO);
    cr_assert(rf, "%s", nd_last_error());
    cr_expect_eq(nd_shape(rf)[2], 5);
    cref xr = cref_new(3, shape);
    for (int64_t e = 0; e < x.size; e++) xr.re[e] = x.re[e];
    check_owned(nd_fft_irfft2(rf, 2, len, 0, NULL, ND_FFT_ORTHO), ND_FLOAT64, &xr, norm2(&x), 72, "irfft2(rfft2)");
    nd_free(a); nd_free(re); nd_free(rf);
    cref_free(&x); cref_free(&f); cref_free(&b); cref_free(&fs); cref_free(&xr);
}

/* ------------------------------------------------------------ dtypes, fusion, edges */

NDT_TEST(fft, result_dtypes_follow_numpy2) {
    const nd_dtype in[] = {ND_BOOL, ND_INT8, ND_INT64, ND_UINT16, ND_FLOAT16, ND_FLOAT32, ND_FLOAT64,
                           ND_COMPLEX64, ND_COMPLEX128};
    /* np.fft.fft(np.ones(4, t)).dtype and np.fft.irfft(...).dtype (NumPy 2.4) */
    const nd_dtype fwd[] = {ND_COMPLEX128, ND_COMPLEX128, ND_COMPLEX128, ND_COMPLEX128, ND_COMPLEX64,
                            ND_COMPLEX64, ND_COMPLEX128, ND_COMPLEX64, ND_COMPLEX128};
    const nd_dtype inv[] = {ND_FLOAT64, ND_FLOAT64, ND_FLOAT64, ND_FLOAT64, ND_FLOAT16,
                            ND_FLOAT32, ND_FLOAT64, ND_FLOAT32, ND_FLOAT64};
    for (size_t k = 0; k < sizeof in / sizeof *in; k++) {
        nd_array *a = nd_ones(in[k], ND_SHAPE(4));
        nd_array *f = nd_fft_fft(a, -1, -1, ND_FFT_BACKWARD), *i = nd_fft_irfft(a, -1, -1, ND_FFT_BACKWARD);
        nd_array *h = nd_fft_hfft(a, -1, -1, ND_FFT_BACKWARD);
        cr_assert(f && i && h, "%s: %s", nd_dtype_name(in[k]), nd_last_error());
        cr_expect_eq(nd_dtype_of(f), fwd[k], "fft of %s: %s", nd_dtype_name(in[k]), nd_dtype_name(nd_dtype_of(f)));
        cr_expect_eq(nd_dtype_of(i), inv[k], "irfft of %s: %s", nd_dtype_name(in[k]), nd_dtype_name(nd_dtype_of(i)));
        cr_expect_eq(nd_dtype_of(h), inv[k], "hfft of %s", nd_dtype_name(in[k]));
        /* fft of ones(4): [4, 0, 0, 0] */
        double v[8];
        nd_array *c = nd_astype(f, ND_COMPLEX128);
        cr_assert_eq(nd_to_host(c, v, sizeof v), ND_OK, "%s", nd_last_error());
        cr_expect(v[0] == 4 && v[1] == 0 && fabs(v[2]) < 1e-6 && fabs(v[6]) < 1e-6, "fft(ones(4)) of %s: %g %g",
                  nd_dtype_name(in[k]), v[0], v[2]);
        if (in[k] != ND_COMPLEX64 && in[k] != ND_COMPLEX128) {
            nd_array *rf = nd_fft_rfft(a, -1, 0, ND_FFT_BACKWARD);
            cr_assert(rf, "rfft of %s: %s", nd_dtype_name(in[k]), nd_last_error());
            cr_expect_eq(nd_dtype_of(rf), fwd[k]);
            nd_free(rf);
        }
        nd_free(a); nd_free(f); nd_free(i); nd_free(h); nd_free(c);
    }
}

/* fft(x * window): the product is a fused kernel feeding the transform. */
NDT_TEST(fft, fused_window_and_lazy_inputs) {
    NDT_RNG(r);
    int64_t n = 360;
    cref x;
    nd_array *a = random_input(&r, ND_FLOAT32, 1, &n, &x);
    nd_array *w = nd_linspace(ND_FLOAT32, 0.0, 1.0, n);
    nd_sync();
    nd_stats before, after;
    nd_get_stats(&before);
    nd_array *xw = nd_mul(a, w);
    nd_array *f = nd_fft_fft(xw, -1, 0, ND_FFT_BACKWARD);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    /* the window's product is one kernel writing the routine's input, the transform one routine step
     * (nd_stats counts routine steps as kernels): no other copy or kernel */
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 2, "fft(x*w) ran %llu kernels and routines",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    /* split: the product's pieces are gathered for the routine, which runs whole (piece_copies) */
    cr_expect_eq(after.copies - before.copies - (after.piece_copies - before.piece_copies), 0,
                 "fft(x*w) made %llu copies", (unsigned long long)(after.copies - before.copies));
    float wv[360];
    cr_assert_eq(nd_to_host(w, wv, sizeof wv), ND_OK);
    for (int64_t j = 0; j < n; j++) x.re[j] = (ld)((float)x.re[j] * wv[j]);
    cref want = ref_axis(&x, 0, n, -1);
    check_against(f, ND_COMPLEX64, &want, norm2(&x), n, "fft(x*window)");
    /* a transposed, strided view in; the transform of the result feeds more work */
    nd_array *m = nd_reshape(a, ND_SHAPE(36, 10)), *mt = nd_transpose(m, NULL);
    nd_array *fm = nd_fft_fft(mt, -1, 0, ND_FFT_BACKWARD);
    nd_array *p = nd_abs(fm);
    cr_assert(p, "%s", nd_last_error());
    cr_expect_eq(nd_shape(p)[0], 10);
    cr_expect_eq(nd_shape(p)[1], 36);
    nd_free(a); nd_free(w); nd_free(xw); nd_free(f); nd_free(m); nd_free(mt); nd_free(fm); nd_free(p);
    cref_free(&x); cref_free(&want);
}

NDT_TEST(fft, round_trips) {
    NDT_RNG(r);
    const int64_t ns[] = {1, 6, 7, 97, 1000, 1009};
    for (int k = 0; k < 6; k++) {
        int64_t n = ns[k];
        cref x;
        nd_array *a = random_input(&r, ND_COMPLEX128, 1, &n, &x);
        nd_array *f = nd_fft_fft(a, -1, 0, ND_FFT_ORTHO), *b = nd_fft_ifft(f, -1, 0, ND_FFT_ORTHO);
        check_against(b, ND_COMPLEX128, &x, norm2(&x), n, "ifft(fft(x))");
        nd_free(a); nd_free(f); nd_free(b);
        cref_free(&x);
    }
}

static int all_nonfinite(nd_array *a, int64_t n) {
    double *v = malloc((size_t)n * 16);
    nd_array *c = nd_astype(a, ND_COMPLEX128);
    cr_assert_eq(nd_to_host(c, v, (size_t)n * 16), ND_OK, "%s", nd_last_error());
    int ok = 1;
    for (int64_t k = 0; k < n; k++)
        if (isfinite(v[2 * k]) && isfinite(v[2 * k + 1])) ok = 0;
    free(v);
    nd_free(c);
    return ok;
}

NDT_TEST(fft, nan_and_inf_reach_every_bin) {
    const int64_t ns[] = {8, 12, 97, 1009};
    for (int k = 0; k < 4; k++) {
        int64_t n = ns[k];
        double *v = calloc((size_t)n, sizeof(double));
        for (int64_t j = 0; j < n; j++) v[j] = (double)(j % 7) - 3;
        v[n / 3] = NAN;
        nd_array *a = nd_from_host(v, ND_FLOAT64, 1, &n);
        nd_array *f = nd_fft_fft(a, -1, 0, ND_FFT_BACKWARD), *rf = nd_fft_rfft(a, -1, 0, ND_FFT_BACKWARD);
        cr_expect(all_nonfinite(f, n), "fft n=%lld: a NaN input must make every bin NaN", (long long)n);
        cr_expect(all_nonfinite(rf, n / 2 + 1), "rfft n=%lld with a NaN", (long long)n);
        v[n / 3] = INFINITY;
        nd_array *b = nd_from_host(v, ND_FLOAT64, 1, &n);
        nd_array *g = nd_fft_ifft(b, -1, 0, ND_FFT_BACKWARD);
        cr_expect(all_nonfinite(g, n), "ifft n=%lld: an inf input must reach every bin", (long long)n);
        nd_free(a); nd_free(f); nd_free(rf); nd_free(b); nd_free(g);
        free(v);
    }
}

NDT_TEST(fft, empty_batches_and_padding_from_nothing) {
    nd_array *e = nd_zeros(ND_FLOAT64, ND_SHAPE(0, 4));
    nd_array *f = nd_fft_fft(e, -1, 1, ND_FFT_BACKWARD);
    cr_assert(f, "%s", nd_last_error());
    cr_expect_eq(nd_shape(f)[0], 0);
    cr_expect_eq(nd_shape(f)[1], 4);
    cr_expect_eq(nd_dtype_of(f), ND_COMPLEX128);
    nd_array *g = nd_fft_rfft(e, 6, -1, ND_FFT_BACKWARD);
    cr_assert(g, "%s", nd_last_error());
    cr_expect_eq(nd_shape(g)[1], 4);
    /* an empty axis padded to n: zeros */
    nd_array *z = nd_zeros(ND_FLOAT32, ND_SHAPE(0));
    nd_array *p = nd_fft_fft(z, 3, 0, ND_FFT_BACKWARD);
    float v[6] = {1, 1, 1, 1, 1, 1};
    cr_assert(p, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(p, v, sizeof v), ND_OK, "%s", nd_last_error());
    for (int k = 0; k < 6; k++) cr_expect(v[k] == 0);
    nd_free(e); nd_free(f); nd_free(g); nd_free(z); nd_free(p);
}

NDT_TEST(fft, errors_name_the_function) {
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(4, 5)), *s = nd_zeros(ND_FLOAT64, ND_SCALAR_SHAPE);
    nd_array *e = nd_zeros(ND_FLOAT64, ND_SHAPE(0));
    cr_expect_null(nd_fft_fft(a, 0, -1, ND_FFT_BACKWARD));
    cr_expect(strstr(nd_last_error(), "Invalid number of FFT data points (0)"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fft");
    cr_expect_null(nd_fft_ifft(a, -5, 0, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_ifft");
    cr_expect_null(nd_fft_fft(e, -1, 0, ND_FFT_BACKWARD)); /* n = len = 0 */
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fft");
    nd_array *one = nd_zeros(ND_COMPLEX128, ND_SHAPE(1));
    cr_expect_null(nd_fft_irfft(one, -1, 0, ND_FFT_BACKWARD)); /* 2 * (1 - 1) = 0 */
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_irfft");
    cr_expect_null(nd_fft_rfft(a, -1, 2, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_rfft");
    cr_expect_null(nd_fft_hfft(a, -1, -3, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_hfft");
    cr_expect_null(nd_fft_fft(s, -1, 0, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_fft_fft");
    cr_expect_null(nd_fft_fftn(s, 0, NULL, 0, NULL, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_fft_fftn");
    cr_expect_null(nd_fft_fft(a, -1, 0, (nd_fft_norm)7));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fft");
    int rep[2] = {1, -1}, bad[2] = {0, 2};
    int64_t s3[3] = {2, 2, 2};
    cr_expect_null(nd_fft_fftn(a, 0, NULL, 2, rep, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fftn");
    cr_expect_null(nd_fft_fft2(a, 0, NULL, 2, bad, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fft2");
    cr_expect_null(nd_fft_fft2(a, 3, s3, 0, NULL, ND_FFT_BACKWARD));
    cr_expect(strstr(nd_last_error(), "different lengths"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fft2");
    cr_expect_null(nd_fft_rfftn(a, 3, s3, 2, rep, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_rfftn");
    int64_t s0[2] = {4, 0};
    cr_expect_null(nd_fft_irfft2(a, 2, s0, 0, NULL, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_irfft2");
    /* complex input to a real forward transform: NumPy 2's TypeError */
    nd_array *c = nd_zeros(ND_COMPLEX64, ND_SHAPE(8));
    cr_expect_null(nd_fft_rfft(c, -1, 0, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_fft_rfft");
    cr_expect_null(nd_fft_ihfft(c, -1, 0, ND_FFT_BACKWARD));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_fft_ihfft");
    cr_expect_null(nd_fft_fftfreq(0, 1.0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fftfreq");
    cr_expect_null(nd_fft_rfftfreq(4, 0.0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_rfftfreq");
    int far = 5;
    cr_expect_null(nd_fft_fftshift(a, 1, &far));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fft_fftshift");
    /* a NULL input keeps the first error */
    cr_expect_null(nd_fft_fft(NULL, -1, 0, ND_FFT_BACKWARD));
    nd_free(a); nd_free(s); nd_free(e); nd_free(one); nd_free(c);
}

/* ------------------------------------------------------------ helpers */

static void expect_f64(nd_array *a, const double *want, int64_t n, const char *what) {
    cr_assert(a, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(a), ND_FLOAT64, "%s", what);
    cr_assert_eq(nd_size(a), n, "%s: size %lld", what, (long long)nd_size(a));
    double v[64];
    cr_assert_eq(nd_to_host(a, v, (size_t)n * 8), ND_OK, "%s", nd_last_error());
    for (int64_t k = 0; k < n; k++)
        cr_expect(v[k] == want[k], "%s[%lld] = %.17g, want %.17g", what, (long long)k, v[k], want[k]);
    nd_free(a);
}

NDT_TEST(fft, fftfreq_rfftfreq_exact) {
    /* np.fft.fftfreq(8, 0.1), fftfreq(5), fftfreq(1), rfftfreq(7, 0.5), rfftfreq(8, -2) (NumPy 2.4) */
    const double f8[8] = {0., 1.25, 2.5, 3.75, -5., -3.75, -2.5, -1.25};
    const double f5[5] = {0., 0.2, 0.4, -0.4, -0.2};
    const double f1[1] = {0.};
    const double r7[4] = {0., 0.2857142857142857, 0.5714285714285714, 0.8571428571428571};
    const double r8[5] = {-0., -0.0625, -0.125, -0.1875, -0.25};
    expect_f64(nd_fft_fftfreq(8, 0.1), f8, 8, "fftfreq(8, 0.1)");
    expect_f64(nd_fft_fftfreq(5, 1.0), f5, 5, "fftfreq(5)");
    expect_f64(nd_fft_fftfreq(1, 1.0), f1, 1, "fftfreq(1)");
    expect_f64(nd_fft_rfftfreq(7, 0.5), r7, 4, "rfftfreq(7, 0.5)");
    expect_f64(nd_fft_rfftfreq(8, -2.0), r8, 5, "rfftfreq(8, -2)");
    /* fftfreq(10, 1/3): k * (1 / (10 / 3)), computed as NumPy does */
    double f10[10], val = 1.0 / (10 * (1.0 / 3));
    for (int k = 0; k < 10; k++) f10[k] = (k < 5 ? k : k - 10) * val;
    expect_f64(nd_fft_fftfreq(10, 1.0 / 3), f10, 10, "fftfreq(10, 1/3)");
}

static void expect_i64(nd_array *a, const int64_t *want, int64_t n, const char *what) {
    cr_assert(a, "%s: %s", what, nd_last_error());
    int64_t v[64];
    cr_assert_eq(nd_size(a), n, "%s", what);
    cr_assert_eq(nd_to_host(a, v, (size_t)n * 8), ND_OK, "%s", nd_last_error());
    for (int64_t k = 0; k < n; k++)
        cr_expect(v[k] == want[k], "%s[%lld] = %lld, want %lld", what, (long long)k, (long long)v[k],
                  (long long)want[k]);
    nd_free(a);
}

NDT_TEST(fft, fftshift_ifftshift_exact) {
    nd_array *x5 = nd_arange(ND_INT64, 0, 5, 1), *x6 = nd_arange(ND_INT64, 0, 6, 1);
    /* np.fft.fftshift(np.arange(5)) = [3 4 0 1 2]; ifftshift = [2 3 4 0 1]; arange(6): [3 4 5 0 1 2] both */
    expect_i64(nd_fft_fftshift(x5, 0, NULL), (int64_t[]){3, 4, 0, 1, 2}, 5, "fftshift(arange(5))");
    expect_i64(nd_fft_ifftshift(x5, 0, NULL), (int64_t[]){2, 3, 4, 0, 1}, 5, "ifftshift(arange(5))");
    expect_i64(nd_fft_fftshift(x6, 0, NULL), (int64_t[]){3, 4, 5, 0, 1, 2}, 6, "fftshift(arange(6))");
    expect_i64(nd_fft_ifftshift(x6, 0, NULL), (int64_t[]){3, 4, 5, 0, 1, 2}, 6, "ifftshift(arange(6))");
    /* 2-d: np.fft.fftshift(np.arange(12).reshape(3, 4)) and with axes=(1,), axes=(-2,) */
    nd_array *ar = nd_arange(ND_INT64, 0, 12, 1), *m = nd_reshape(ar, ND_SHAPE(3, 4));
    expect_i64(nd_fft_fftshift(m, 0, NULL), (int64_t[]){10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5}, 12, "fftshift 2-d");
    expect_i64(nd_fft_ifftshift(m, 0, NULL), (int64_t[]){6, 7, 4, 5, 10, 11, 8, 9, 2, 3, 0, 1}, 12, "ifftshift 2-d");
    expect_i64(nd_fft_fftshift(m, 1, (int[]){1}), (int64_t[]){2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9}, 12, "axes (1,)");
    expect_i64(nd_fft_ifftshift(m, 1, (int[]){-2}), (int64_t[]){4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3}, 12,
               "ifftshift axes (-2,)");
    /* round trip on an odd 2-d shape of floats (the fftfreq use) */
    nd_array *fr = nd_fft_fftfreq(7, 1.0), *sh = nd_fft_fftshift(fr, 0, NULL);
    const double want[7] = {-3.0 / 7, -2.0 / 7, -1.0 / 7, 0, 1.0 / 7, 2.0 / 7, 3.0 / 7};
    double v[7];
    cr_assert_eq(nd_to_host(sh, v, sizeof v), ND_OK, "%s", nd_last_error());
    for (int k = 0; k < 7; k++) cr_expect(v[k] == (k - 3) * (1.0 / 7) && fabs(v[k] - want[k]) < 1e-16, "%g", v[k]);
    expect_f64(nd_fft_ifftshift(sh, 0, NULL), (double[]){0, 1.0 / 7, 2.0 / 7, 3 * (1.0 / 7), -3 * (1.0 / 7), -2 * (1.0 / 7), -1.0 / 7}, 7,
               "ifftshift(fftshift(fftfreq(7)))");
    nd_free(x5); nd_free(x6); nd_free(ar); nd_free(m); nd_free(fr); nd_free(sh);
}
