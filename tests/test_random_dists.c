/* nd_random_integers and the NumPy Generator distributions: integers
 * against common/philox.h's Lemire draws (exact, so the same on every
 * backend), every value in [lo, hi) and chi-square uniformity (ranges that
 * are not powers of two, ranges where about half the draws are rejected,
 * huge int64 ranges); the pair form of small ranges (two values a word)
 * against a reference written here, through views, and the joint
 * uniformity of a word's two values; each distribution against the formula applied to the
 * reference uniforms, a Kolmogorov-Smirnov test against its CDF and its
 * mean and variance (all computed here in float64); the same values for
 * every thread count and with fusion off; one kernel for a draw feeding a
 * chain and a sum; argument errors. */
#include "common.h"

#include <stdlib.h>

#include "common/philox.h"

/* ------------------------------------------------------------ integers */

static ref_arr *draw_ints(nd_dtype t, int64_t n, int64_t lo, int64_t hi) {
    nd_array *x = nd_random_integers(t, 1, &n, lo, hi);
    cr_assert(x, "nd_random_integers(%s, [%lld, %lld)): %s", ref_dtype_name(t), (long long)lo,
              (long long)hi, nd_last_error());
    cr_assert_eq(nd_dtype_of(x), t, "dtype");
    ref_arr *h = ndt_download(x);
    nd_free(x);
    return h;
}

/* Element i as the dtype's value (uint64 beyond INT64_MAX never occurs:
 * hi is an int64). */
static int64_t int_value(const ref_arr *a, int64_t i) { return (int64_t)ref_getu(a, i); }

typedef struct {
    nd_dtype t;
    int64_t lo, hi;
} int_case;

static const int_case int_cases[] = {
    {ND_INT8, -128, 128},
    {ND_UINT8, 0, 256},
    {ND_INT8, -5, 6},
    {ND_INT16, -1000, 1001},
    {ND_UINT16, 5, 7},
    {ND_INT32, INT32_MIN, (int64_t)INT32_MAX + 1}, /* range 2^32 */
    {ND_INT32, -3, 1000000007},
    {ND_UINT32, 0, ((int64_t)1 << 31) + 1}, /* rejects about half the draws */
    {ND_UINT32, 0, (int64_t)UINT32_MAX + 1},
    {ND_INT64, INT64_MIN / 2, INT64_MAX / 2},
    {ND_INT64, INT64_MIN / 2, INT64_MAX / 2 + 2}, /* range 2^63 + 1: about half rejected */
    {ND_INT64, INT64_MIN, INT64_MAX},
    {ND_INT64, -7, 10},
    {ND_UINT64, 10, 20},
    {ND_UINT64, 0, INT64_MAX},
    {ND_BOOL, 0, 2},
    {ND_BOOL, 1, 2},
};
#define N_INT_CASES ((int)(sizeof int_cases / sizeof int_cases[0]))

NDT_TEST(random_dists, mulhi64_matches_128_bit_products) {
    NDT_RNG(r);
    for (int i = 0; i < 100000; i++) {
        uint64_t a = ndt_next(&r), b = ndt_next(&r);
        if (i % 4 == 1) a |= 0xffffffff00000000ull;
        if (i % 4 == 2) b = UINT64_MAX - (b & 0xff);
        unsigned __int128 p = (unsigned __int128)a * b;
        cr_assert_eq(nd_mulhi64(a, b), (uint64_t)(p >> 64), "mulhi64(%llx, %llx)", (unsigned long long)a,
                     (unsigned long long)b);
    }
}

/* Lemire's acceptance rule is exactly unbiased: of the 32-bit words x whose
 * candidate floor(x r / 2^32) is v, exactly floor(2^32 / r) have a low part
 * x r mod 2^32 >= t = 2^32 mod r, for every v (counted for several v of
 * several ranges). */
NDT_TEST(random_dists, lemire_acceptance_is_exactly_uniform) {
    /* ranges of 2^20 and more: each value's preimage is a few thousand x */
    const uint64_t rs[] = {1000003, ((uint64_t)1 << 31) + 1, 3000000000ull, 4294967291ull};
    for (size_t q = 0; q < sizeof rs / sizeof rs[0]; q++) {
        uint64_t r = rs[q], t = (((uint64_t)1 << 32) - r) % r;
        uint64_t want = ((uint64_t)1 << 32) / r; /* floor(2^32 / r) accepted per value */
        for (uint64_t v = 0; v < r; v += r / 7 + 1) {
            uint64_t x0 = (v << 32) / r + ((v << 32) % r != 0); /* first x with x r >= v 2^32 */
            uint64_t count = 0;
            for (uint64_t x = x0; x < ((uint64_t)1 << 32); x++) {
                unsigned __int128 m = (unsigned __int128)x * r;
                if ((uint64_t)(m >> 32) != v) break;
                if ((uint32_t)m >= t) count++;
            }
            cr_expect_eq(count, want, "r = %llu, value %llu: %llu accepted x, want %llu", (unsigned long long)r,
                         (unsigned long long)v, (unsigned long long)count, (unsigned long long)want);
        }
    }
}

NDT_TEST(random_dists, integers_follow_the_lemire_mapping) {
    const uint64_t seed = 0x1234abcd5678ull;
    const int64_t n = 3001;
    for (int q = 0; q < N_INT_CASES; q++) {
        const int_case *c = &int_cases[q];
        nd_random_seed(seed);
        nd_array *skip = nd_random_uniform(ND_FLOAT32, ND_SHAPE(1), 0, 1); /* stream 0 */
        nd_free(skip);
        ref_arr *h = draw_ints(c->t, n, c->lo, c->hi); /* stream 1 */
        int wide = ref_itemsize(c->t) == 8;
        uint64_t range = (uint64_t)c->hi - (uint64_t)c->lo;
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t want = (int64_t)((uint64_t)c->lo + nd_philox_integer(wide, range, seed, 1, (uint64_t)i));
            int64_t got = int_value(h, i);
            if (got != want && bad++ < 5)
                cr_expect_eq(got, want, "%s [%lld, %lld) element %lld: %lld, reference %lld", ref_dtype_name(c->t),
                             (long long)c->lo, (long long)c->hi, (long long)i, (long long)got, (long long)want);
            if (got < c->lo || (c->hi - 1 < got)) {
                cr_expect(0, "%s: %lld outside [%lld, %lld)", ref_dtype_name(c->t), (long long)got,
                          (long long)c->lo, (long long)c->hi);
                break;
            }
        }
        cr_expect_eq(bad, 0, "%s [%lld, %lld): %lld mismatches", ref_dtype_name(c->t), (long long)c->lo,
                     (long long)c->hi, (long long)bad);
        ref_free(h);
    }
}

/* The rejection path really runs: with range 2^31 + 1 about half of the
 * first attempts are rejected, and those elements differ from the first
 * attempt's candidate. */
NDT_TEST(random_dists, rejected_draws_redraw_from_their_own_counters) {
    const uint64_t seed = 77, r = ((uint64_t)1 << 31) + 1;
    int64_t rejected = 0;
    for (uint64_t i = 0; i < 4000; i++) {
        uint32_t x[1];
        nd_philox_draw_words(x, 1, seed, 0, i);
        uint64_t m = (uint64_t)x[0] * r;
        if ((uint32_t)m < (uint32_t)((((uint64_t)1 << 32) - r) % r)) {
            rejected++;
            /* the retry: the call (i, stream + 2^48), its first word */
            uint32_t y = nd_philox4x32_10(seed, i, (uint64_t)1 << 48).x[0];
            uint64_t m2 = (uint64_t)y * r;
            if ((uint32_t)m2 >= (uint32_t)((((uint64_t)1 << 32) - r) % r))
                cr_expect_eq(nd_philox_int32(x[0], r, seed, 0, i), (uint32_t)(m2 >> 32), "retry of %llu",
                             (unsigned long long)i);
        }
    }
    cr_expect(rejected > 1600 && rejected < 2400, "%lld of 4000 rejected, want about half", (long long)rejected);
    nd_random_seed(seed);
    ref_arr *h = draw_ints(ND_UINT32, 4000, 0, (int64_t)r);
    for (int64_t i = 0; i < 4000; i++)
        cr_expect_eq(ref_getu(h, i), nd_philox_integer(0, r, seed, 0, (uint64_t)i),
                     "element %lld", (long long)i);
    ref_free(h);
}

/* Chi-square of `bins` equal-probability bins against a threshold five
 * standard deviations above its mean (df + 5 sqrt(2 df)): fixed seeds, so
 * a pass is a fact, and a biased generator (a plain modulo, say, on a range
 * near 2^31) fails by orders of magnitude. */
static void expect_uniform_bins(const int64_t *counts, int bins, int64_t n, const char *what) {
    double e = (double)n / bins, chi = 0;
    for (int b = 0; b < bins; b++) chi += ((double)counts[b] - e) * ((double)counts[b] - e) / e;
    double df = bins - 1, lim = df + 5 * sqrt(2 * df);
    cr_expect(chi < lim, "%s: chi-square %.1f over %d bins, limit %.1f", what, chi, bins, lim);
}

NDT_TEST(random_dists, integers_are_uniform) {
    nd_random_seed(2026);
    const int64_t n = 1 << 20;
    /* small ranges: one bin per value */
    const int_case small[] = {{ND_INT32, -3, 7}, {ND_UINT8, 0, 256}, {ND_INT64, 100, 113}, {ND_BOOL, 0, 2}};
    for (size_t q = 0; q < sizeof small / sizeof small[0]; q++) {
        const int_case *c = &small[q];
        ref_arr *h = draw_ints(c->t, n, c->lo, c->hi);
        int bins = (int)(c->hi - c->lo);
        int64_t *counts = calloc((size_t)bins, sizeof *counts);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = int_value(h, i);
            cr_assert(v >= c->lo && v < c->hi, "%s: %lld outside [%lld, %lld)", ref_dtype_name(c->t),
                      (long long)v, (long long)c->lo, (long long)c->hi);
            counts[v - c->lo]++;
        }
        char what[96];
        snprintf(what, sizeof what, "%s [%lld, %lld)", ref_dtype_name(c->t), (long long)c->lo, (long long)c->hi);
        expect_uniform_bins(counts, bins, n, what);
        free(counts);
        ref_free(h);
    }
    /* large ranges: 64 bins of (v - lo) * 64 / range; the ranges of 2^31 + 1
     * and 2^63 + 1 values reject half the draws, where a biased shortcut
     * (modulo, or multiply without rejection) is off by a factor of 2 */
    const int_case large[] = {{ND_UINT32, 0, ((int64_t)1 << 31) + 1},
                              {ND_INT32, -1000000, 2000000000},
                              {ND_INT64, INT64_MIN / 2, INT64_MAX / 2},
                              {ND_INT64, INT64_MIN / 2, INT64_MAX / 2 + 2},
                              {ND_INT64, INT64_MIN, INT64_MAX},
                              {ND_UINT64, 0, INT64_MAX}};
    for (size_t q = 0; q < sizeof large / sizeof large[0]; q++) {
        const int_case *c = &large[q];
        ref_arr *h = draw_ints(c->t, n, c->lo, c->hi);
        uint64_t range = (uint64_t)c->hi - (uint64_t)c->lo;
        int64_t counts[64] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t v = int_value(h, i);
            cr_assert(v >= c->lo && v <= c->hi - 1, "%lld outside the range", (long long)v);
            uint64_t off = (uint64_t)v - (uint64_t)c->lo;
            counts[(int)(((unsigned __int128)off * 64) / range)]++;
        }
        char what[96];
        snprintf(what, sizeof what, "%s [%lld, %lld)", ref_dtype_name(c->t), (long long)c->lo, (long long)c->hi);
        expect_uniform_bins(counts, 64, n, what);
        ref_free(h);
    }
}

/* ------------------------------------------------------------ the pair form */

/* An independent reference of philox.h's pair form, written from its
 * description (Philox itself is checked against cuRAND elsewhere): ranges
 * r <= 2^16 with t = 2^32 mod r^2 < 2^24 draw elements 2p and 2p+1 as the
 * base-r digits of V = floor(x r^2 / 2^32), x word p of the stream (call
 * p / 4, word p % 4), rejecting x r^2 mod 2^32 < t; attempt a takes word 0
 * of the call (p, stream + a 2^48). Other ranges: one word (two for 64-bit
 * dtypes) per element, as nd_philox_integer_words. */
static int ref_pairs(uint64_t r) {
    return r >= 1 && r <= 65536 && ((uint64_t)1 << 32) % (r * r) < ((uint64_t)1 << 24);
}

static uint64_t ref_pair_v(uint64_t r, uint64_t seed, uint64_t stream, uint64_t p, int *attempts) {
    const uint64_t R = r * r, t = ((uint64_t)1 << 32) % R;
    uint64_t x = nd_philox4x32_10(seed, p / 4, stream).x[p % 4];
    *attempts = 1;
    while ((uint32_t)(x * R) < t) {
        x = nd_philox4x32_10(seed, p, stream + ((uint64_t)*attempts << 48)).x[0];
        ++*attempts;
    }
    return (x * R) >> 32; /* x R < 2^64 */
}

static uint64_t ref_integer(int wide, uint64_t r, uint64_t seed, uint64_t stream, uint64_t i) {
    if (!ref_pairs(r)) return nd_philox_integer_words(wide, r, seed, stream, i);
    int att;
    uint64_t v = ref_pair_v(r, seed, stream, i / 2, &att);
    return i % 2 ? v % r : v / r;
}

static const int_case pair_cases[] = {
    {ND_INT8, -128, -126},                      /* r = 2 */
    {ND_INT8, 0, 3},
    {ND_UINT8, 0, 7},
    {ND_UINT8, 0, 256},
    {ND_INT16, -1000, 1001},
    {ND_INT32, -1000, 1001},
    {ND_INT64, -1000, 1001},
    {ND_UINT64, 3, 4100},
    {ND_INT32, INT32_MIN, INT32_MIN + 2001},     /* lo at INT_MIN */
    {ND_INT64, INT64_MIN, INT64_MIN + 7},
    {ND_INT16, INT16_MIN, INT16_MAX + 1},        /* r = 2^16 exactly: the word's halves */
    {ND_UINT16, 0, 65535},                       /* t = 131071: pairs */
    {ND_INT32, 0, 4144},                         /* the largest r that always pairs */
    {ND_INT32, 0, 4145},                         /* t = 2^32 mod r^2 >= 2^24: one word */
    {ND_INT32, -7, 40000 - 7},                   /* pairs would reject a quarter: one word */
    {ND_INT32, 0, 65537},                        /* just above 2^16: one word */
    {ND_INT64, -5, 65537 - 5},
    {ND_BOOL, 0, 2},
};
#define N_PAIR_CASES ((int)(sizeof pair_cases / sizeof pair_cases[0]))

/* The rule picks the cases above as their comments say. */
NDT_TEST(random_dists, pair_form_rule) {
    const uint64_t pairs[] = {1, 2, 3, 7, 101, 2001, 4096, 4144, 8192, 65535, 65536};
    const uint64_t words[] = {4145, 40000, 46341, 65537, 1000000};
    for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
        cr_expect(nd_philox_pairs(pairs[q]) && ref_pairs(pairs[q]), "r = %llu pairs", (unsigned long long)pairs[q]);
        cr_expect_eq(nd_philox_pair_threshold(pairs[q]), ((uint64_t)1 << 32) % (pairs[q] * pairs[q]));
    }
    for (size_t q = 0; q < sizeof words / sizeof words[0]; q++)
        cr_expect(!nd_philox_pairs(words[q]) && !ref_pairs(words[q]), "r = %llu takes a word an element",
                  (unsigned long long)words[q]);
}

/* The digits of a word are those of V = floor(x r^2 / 2^32) in base r, and
 * the low part is x r^2 mod 2^32 (random words, every kind of r); and, as
 * Lemire's rule, exactly floor(2^32 / r^2) words are accepted for each
 * value of V (so each pair of digits is equally likely). */
NDT_TEST(random_dists, pair_digits_are_lemire_on_r_squared) {
    NDT_RNG(g);
    const uint32_t rs[] = {1, 2, 3, 7, 255, 2001, 4097, 40000, 46341, 65535, 65536};
    for (size_t q = 0; q < sizeof rs / sizeof rs[0]; q++)
        for (int i = 0; i < 20000; i++) {
            uint32_t x = (uint32_t)ndt_next(&g), l;
            if (i == 0) x = 0;
            if (i == 1) x = UINT32_MAX;
            uint64_t R = (uint64_t)rs[q] * rs[q], V = ((uint64_t)x * R) >> 32;
            uint32_t v = nd_philox_pair_digits(x, rs[q], &l);
            cr_assert(v >> 16 == V / rs[q] && (v & 0xffff) == V % rs[q] && l == (uint32_t)((uint64_t)x * R),
                      "r = %u, x = %u", rs[q], x);
        }
    const uint64_t rr[] = {1024, 2001, 4097, 40000, 65535};
    for (size_t q = 0; q < sizeof rr / sizeof rr[0]; q++) {
        uint64_t R = rr[q] * rr[q], t = ((uint64_t)1 << 32) % R, want = ((uint64_t)1 << 32) / R;
        for (uint64_t v = 0; v < R; v += R / 5 + 1) {
            uint64_t x0 = (v << 32) / R + ((v << 32) % R != 0), count = 0;
            for (uint64_t x = x0; x < ((uint64_t)1 << 32); x++) {
                uint32_t l, d = nd_philox_pair_digits((uint32_t)x, (uint32_t)rr[q], &l);
                if ((uint64_t)(d >> 16) * rr[q] + (d & 0xffff) != v) break;
                if (l >= t) count++;
            }
            cr_expect_eq(count, want, "r = %llu, V = %llu: %llu accepted words, want %llu",
                         (unsigned long long)rr[q], (unsigned long long)v, (unsigned long long)count,
                         (unsigned long long)want);
        }
    }
}

static void expect_ints(const ref_arr *h, const int_case *c, uint64_t seed, uint64_t stream, const int64_t *ix,
                        int64_t n, const char *what) {
    int wide = ref_itemsize(c->t) == 8;
    uint64_t range = (uint64_t)c->hi - (uint64_t)c->lo;
    int64_t bad = 0;
    cr_assert_eq(h->size, n, "%s: size", what);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = ix ? (uint64_t)ix[i] : (uint64_t)i;
        int64_t want = (int64_t)((uint64_t)c->lo + ref_integer(wide, range, seed, stream, x));
        if (c->t == ND_BOOL) want = want != 0;
        int64_t got = int_value(h, i);
        if (got != want && bad++ < 5)
            cr_expect_eq(got, want, "%s %s [%lld, %lld) element %lld (draw %llu): %lld, reference %lld", what,
                         ref_dtype_name(c->t), (long long)c->lo, (long long)c->hi, (long long)i,
                         (unsigned long long)x, (long long)got, (long long)want);
    }
    cr_expect_eq(bad, 0, "%s %s [%lld, %lld): %lld mismatches", what, ref_dtype_name(c->t), (long long)c->lo,
                 (long long)c->hi, (long long)bad);
}

/* Every case, odd and even counts (half a word left over), and views that
 * start mid-pair, reverse, stride and transpose (the draws evaluated
 * through the view's index map inside the consumer's kernel). */
NDT_TEST(random_dists, integers_match_an_independent_reference) {
    nd_scope_begin();
    const uint64_t seed = 0xfeedbeef01ull;
    const int64_t counts[] = {1, 2, 7, 3001, 4096};
    for (int q = 0; q < N_PAIR_CASES; q++) {
        const int_case *c = &pair_cases[q];
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            nd_random_seed(seed + k);
            ref_arr *h = draw_ints(c->t, counts[k], c->lo, c->hi); /* stream 0 */
            expect_ints(h, c, seed + k, 0, NULL, counts[k], "fresh");
            ref_free(h);
        }
        /* 1-d views: tiles and chunks that start and end mid-pair */
        static const char *const views1[] = {"1:", "3:-2", "::-1", "1::2"};
        for (int v = 0; v < 4; v++) {
            int64_t n = 5001;
            nd_random_seed(seed);
            nd_array *x = nd_random_integers(c->t, 1, &n, c->lo, c->hi);
            nd_array *ar = nd_arange(ND_INT64, 0, (double)n, 1);
            nd_array *xv = nd_view(x, views1[v]), *av = nd_view(ar, views1[v]);
            nd_array *y0 = nd_add(xv, nd_scalar_int(0)), *y = nd_astype(y0, c->t);
            ref_arr *hy = ndt_download(y), *ha = ndt_download(av);
            nd_free(y0);
            int64_t *ix = malloc(sizeof(int64_t) * (size_t)ha->size);
            for (int64_t i = 0; i < ha->size; i++) ix[i] = (int64_t)ref_getu(ha, i);
            expect_ints(hy, c, seed, 0, ix, ha->size, views1[v]);
            free(ix);
            ref_free(hy), ref_free(ha);
            nd_free(y), nd_free(xv), nd_free(av), nd_free(x), nd_free(ar);
        }
        /* views of 37 x 53 draws */
        static const char *const views[] = {"1:, 1:", "::-1, 3:", ":, 1::3", "5, :", "2:9, 4"};
        for (int v = 0; v < 7; v++) {
            int64_t n = 37 * 53;
            nd_random_seed(seed);
            nd_array *x = nd_random_integers(c->t, 1, &n, c->lo, c->hi);
            nd_array *ar = nd_arange(ND_INT64, 0, (double)n, 1);
            nd_array *x2 = nd_reshape(x, ND_SHAPE(37, 53)), *a2 = nd_reshape(ar, ND_SHAPE(37, 53));
            nd_array *xv, *av;
            if (v < 5) {
                xv = nd_view(x2, views[v]);
                av = nd_view(a2, views[v]);
            } else {
                xv = nd_transpose(x2, NULL);
                av = nd_transpose(a2, NULL);
            }
            if (v == 6) { /* a sum over the transposed rows: draws inside the reduction */
                nd_array *sx = nd_sum(nd_astype(xv, ND_INT64), 1);
                ref_arr *hs = ndt_download(sx), *ha = ndt_download(av);
                int wide = ref_itemsize(c->t) == 8;
                uint64_t range = (uint64_t)c->hi - (uint64_t)c->lo;
                for (int64_t o = 0; o < 53; o++) {
                    uint64_t want = 0; /* int64 sums wrap (two's complement), as nd's do */
                    for (int64_t r = 0; r < 37; r++) {
                        uint64_t d = (uint64_t)c->lo + ref_integer(wide, range, seed, 0, ref_getu(ha, o * 37 + r));
                        want += c->t == ND_BOOL ? d != 0 : d;
                    }
                    cr_expect_eq(ref_getu(hs, o), want, "%s sum of column %lld", ref_dtype_name(c->t),
                                 (long long)o);
                }
                ref_free(hs), ref_free(ha), nd_free(sx);
            } else {
                nd_array *y = nd_add(xv, nd_scalar_int(0));
                nd_array *yc = nd_astype(y, c->t);
                ref_arr *hy = ndt_download(yc), *ha = ndt_download(av);
                int64_t *ix = malloc(sizeof(int64_t) * (size_t)ha->size);
                for (int64_t i = 0; i < ha->size; i++) ix[i] = (int64_t)ref_getu(ha, i);
                expect_ints(hy, c, seed, 0, ix, ha->size, v < 5 ? views[v] : "transposed");
                free(ix);
                ref_free(hy), ref_free(ha), nd_free(y), nd_free(yc);
            }
            nd_free(xv), nd_free(av), nd_free(x2), nd_free(a2), nd_free(x), nd_free(ar);
        }
    }
    nd_scope_end();
}

/* The redraw runs: r = 4097 rejects about 1 word in 290 and r = 17481
 * (the pair form's highest rate, just under 1 in 256) 1 in 256, so 2^17
 * draws redraw a couple of hundred pairs; the values are the reference's. */
NDT_TEST(random_dists, pair_redraws_follow_their_counters) {
    const uint64_t seed = 99;
    const uint64_t rs[] = {4097, 17481};
    for (int q = 0; q < 2; q++) {
        const int64_t n = (int64_t)1 << 17;
        int64_t redrawn = 0;
        for (uint64_t p = 0; p < (uint64_t)n / 2; p++) {
            int att;
            ref_pair_v(rs[q], seed, 3, p, &att);
            redrawn += att > 1;
        }
        cr_expect(redrawn > 150 && redrawn < 350, "r = %llu: %lld of %lld pairs redrawn", (unsigned long long)rs[q],
                  (long long)redrawn, (long long)n / 2);
        nd_random_seed(seed);
        for (int s = 0; s < 3; s++) nd_free(nd_random_uniform(ND_FLOAT32, ND_SHAPE(1), 0, 1));
        const int_case c = {ND_INT32, -2, (int64_t)rs[q] - 2};
        ref_arr *h = draw_ints(c.t, n, c.lo, c.hi); /* stream 3 */
        expect_ints(h, &c, seed, 3, NULL, n, "redraws");
        ref_free(h);
    }
}

/* Chi-square of single values and, for small ranges, of the two values of
 * a word together (elements 2p and 2p+1: independent digits) and of
 * neighbours across words (2p+1 and 2p+2). */
NDT_TEST(random_dists, pair_form_is_uniform_and_independent) {
    nd_random_seed(7);
    const int64_t n = 1 << 20;
    const int_case cs[] = {{ND_INT8, 0, 2}, {ND_INT16, -1, 2}, {ND_UINT8, 0, 7}, {ND_INT32, -1000, 1001},
                           {ND_INT64, 5, 69}, {ND_UINT16, 0, 65535}, {ND_INT32, 0, 65536},
                           {ND_INT32, 0, 40000}, {ND_INT32, 0, 4144}, {ND_INT32, 0, 17481}};
    for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
        const int_case *c = &cs[q];
        ref_arr *h = draw_ints(c->t, n, c->lo, c->hi);
        int64_t r = c->hi - c->lo;
        int bins = (int)r; /* r <= 2^16: a bin per value, 16 draws a bin and more */
        int64_t *counts = calloc((size_t)bins, sizeof *counts);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = int_value(h, i) - c->lo;
            cr_assert(v >= 0 && v < r, "%s: %lld outside", ref_dtype_name(c->t), (long long)v);
            counts[v]++;
        }
        char what[96];
        snprintf(what, sizeof what, "%s [%lld, %lld)", ref_dtype_name(c->t), (long long)c->lo, (long long)c->hi);
        expect_uniform_bins(counts, bins, n, what);
        free(counts);
        if (r <= 64) { /* joint: within a word, across words */
            for (int across = 0; across < 2; across++) {
                int jb = (int)(r * r);
                int64_t *jc = calloc((size_t)jb, sizeof *jc), m = 0;
                for (int64_t i = across; i + 1 < n; i += 2, m++)
                    jc[(int_value(h, i) - c->lo) * r + (int_value(h, i + 1) - c->lo)]++;
                char w2[128];
                snprintf(w2, sizeof w2, "%s pairs %s", what, across ? "across words" : "within a word");
                expect_uniform_bins(jc, jb, m, w2);
                free(jc);
            }
        }
        ref_free(h);
    }
}

/* ------------------------------------------------------------ distributions */

typedef enum {
    D_STD_NORMAL, D_EXPONENTIAL, D_LOGNORMAL, D_LAPLACE, D_LOGISTIC, D_GUMBEL, D_WEIBULL,
    D_RAYLEIGH, D_PARETO, D_POWER, D_TRIANGULAR, N_DISTS
} dist;

typedef struct {
    const char *name;
    double p[3];
    double excess_kurtosis; /* for the variance's tolerance */
} dist_case;

static const dist_case dists[N_DISTS] = {
    [D_STD_NORMAL] = {"standard_normal", {0}, 0},
    [D_EXPONENTIAL] = {"exponential", {2.5}, 6},
    [D_LOGNORMAL] = {"lognormal", {0.3, 0.25}, 1.1},
    [D_LAPLACE] = {"laplace", {-1.5, 0.75}, 3},
    [D_LOGISTIC] = {"logistic", {2.0, 0.5}, 1.2},
    [D_GUMBEL] = {"gumbel", {0.5, 2.0}, 2.4},
    [D_WEIBULL] = {"weibull", {1.5}, 1.1},
    [D_RAYLEIGH] = {"rayleigh", {3.0}, 0.25},
    [D_PARETO] = {"pareto", {10.0}, 14.8},
    [D_POWER] = {"power", {2.0}, -0.6},
    [D_TRIANGULAR] = {"triangular", {-1.0, 0.5, 4.0}, -0.6},
};

static nd_array *draw_dist(dist d, nd_dtype t, int ndim, const int64_t *shape, const double *p) {
    switch (d) {
    case D_STD_NORMAL: return nd_random_standard_normal(t, ndim, shape);
    case D_EXPONENTIAL: return nd_random_exponential(t, ndim, shape, p[0]);
    case D_LOGNORMAL: return nd_random_lognormal(t, ndim, shape, p[0], p[1]);
    case D_LAPLACE: return nd_random_laplace(t, ndim, shape, p[0], p[1]);
    case D_LOGISTIC: return nd_random_logistic(t, ndim, shape, p[0], p[1]);
    case D_GUMBEL: return nd_random_gumbel(t, ndim, shape, p[0], p[1]);
    case D_WEIBULL: return nd_random_weibull(t, ndim, shape, p[0]);
    case D_RAYLEIGH: return nd_random_rayleigh(t, ndim, shape, p[0]);
    case D_PARETO: return nd_random_pareto(t, ndim, shape, p[0]);
    case D_POWER: return nd_random_power(t, ndim, shape, p[0]);
    case D_TRIANGULAR: return nd_random_triangular(t, ndim, shape, p[0], p[1], p[2]);
    default: return NULL;
    }
}

static double std_normal_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

static double cdf(dist d, const double *p, double x) {
    switch (d) {
    case D_STD_NORMAL: return std_normal_cdf(x);
    case D_EXPONENTIAL: return x <= 0 ? 0 : -expm1(-x / p[0]);
    case D_LOGNORMAL: return x <= 0 ? 0 : std_normal_cdf((log(x) - p[0]) / p[1]);
    case D_LAPLACE: return x < p[0] ? 0.5 * exp((x - p[0]) / p[1]) : 1 - 0.5 * exp(-(x - p[0]) / p[1]);
    case D_LOGISTIC: return 1 / (1 + exp(-(x - p[0]) / p[1]));
    case D_GUMBEL: return exp(-exp(-(x - p[0]) / p[1]));
    case D_WEIBULL: return x <= 0 ? 0 : -expm1(-pow(x, p[0]));
    case D_RAYLEIGH: return x <= 0 ? 0 : -expm1(-x * x / (2 * p[0] * p[0]));
    case D_PARETO: return x <= 0 ? 0 : 1 - pow(1 + x, -p[0]);
    case D_POWER: return x <= 0 ? 0 : x >= 1 ? 1 : pow(x, p[0]);
    case D_TRIANGULAR: {
        double l = p[0], m = p[1], r = p[2];
        if (x <= l) return 0;
        if (x >= r) return 1;
        return x <= m ? (x - l) * (x - l) / ((r - l) * (m - l)) : 1 - (r - x) * (r - x) / ((r - l) * (r - m));
    }
    default: return NAN;
    }
}

static void mean_var(dist d, const double *p, double *mean, double *var) {
    const double pi = 3.14159265358979323846, euler = 0.57721566490153286061;
    switch (d) {
    case D_STD_NORMAL: *mean = 0, *var = 1; break;
    case D_EXPONENTIAL: *mean = p[0], *var = p[0] * p[0]; break;
    case D_LOGNORMAL:
        *mean = exp(p[0] + p[1] * p[1] / 2);
        *var = expm1(p[1] * p[1]) * exp(2 * p[0] + p[1] * p[1]);
        break;
    case D_LAPLACE: *mean = p[0], *var = 2 * p[1] * p[1]; break;
    case D_LOGISTIC: *mean = p[0], *var = p[1] * p[1] * pi * pi / 3; break;
    case D_GUMBEL: *mean = p[0] + euler * p[1], *var = pi * pi * p[1] * p[1] / 6; break;
    case D_WEIBULL: {
        double g1 = tgamma(1 + 1 / p[0]), g2 = tgamma(1 + 2 / p[0]);
        *mean = g1, *var = g2 - g1 * g1;
        break;
    }
    case D_RAYLEIGH: *mean = p[0] * sqrt(pi / 2), *var = (4 - pi) / 2 * p[0] * p[0]; break;
    case D_PARETO: *mean = 1 / (p[0] - 1), *var = p[0] / ((p[0] - 1) * (p[0] - 1) * (p[0] - 2)); break;
    case D_POWER: *mean = p[0] / (p[0] + 1), *var = p[0] / ((p[0] + 1) * (p[0] + 1) * (p[0] + 2)); break;
    case D_TRIANGULAR: {
        double l = p[0], m = p[1], r = p[2];
        *mean = (l + m + r) / 3, *var = (l * l + m * m + r * r - l * m - l * r - m * r) / 18;
        break;
    }
    default: *mean = *var = NAN;
    }
}

/* The open uniform of random_dists.c from the reference's draw: the grid
 * point j * 2^-p moved to (2 floor(j/2) + 1) 2^-p. */
static double open_u(int wide, uint64_t seed, uint64_t stream, uint64_t i) {
    if (wide) {
        double u = nd_philox_uniform_f64(seed, stream, i);
        return floor(u * 0x1p52) * 0x1p-52 + 0x1p-53;
    }
    double u = nd_philox_uniform_f32(seed, stream, i);
    return floor(u * 0x1p23) * 0x1p-23 + 0x1p-24;
}

/* The documented transform, in float64 from the reference draw. */
static double reference_value(dist d, const double *p, int wide, uint64_t seed, uint64_t stream, uint64_t i) {
    if (d == D_STD_NORMAL || d == D_LOGNORMAL) {
        double z = wide ? nd_philox_normal_f64(seed, stream, i) : nd_philox_normal_f32(seed, stream, i);
        return d == D_STD_NORMAL ? z : exp(p[0] + p[1] * z);
    }
    double u = open_u(wide, seed, stream, i), e = -log(u);
    switch (d) {
    case D_EXPONENTIAL: return p[0] * e;
    case D_LAPLACE: {
        double w = 2 * u - 1;
        return p[0] + p[1] * copysign(log1p(-fabs(w)), w);
    }
    case D_LOGISTIC: return p[0] + p[1] * log(u / (1 - u));
    case D_GUMBEL: return p[0] - p[1] * log(e);
    case D_WEIBULL: return pow(e, 1 / p[0]);
    case D_RAYLEIGH: return p[0] * sqrt(2 * e);
    case D_PARETO: return expm1(e / p[0]);
    case D_POWER: return pow(u, 1 / p[0]);
    case D_TRIANGULAR: {
        double l = p[0], m = p[1], r = p[2], base = r - l;
        return u <= (m - l) / base ? l + sqrt(u * (m - l) * base) : r - sqrt((1 - u) * (r - m) * base);
    }
    default: return NAN;
    }
}

static ref_arr *draw_dist_host(dist d, nd_dtype t, int64_t n, const double *p) {
    nd_array *x = draw_dist(d, t, 1, &n, p);
    cr_assert(x, "%s(%s): %s", dists[d].name, ref_dtype_name(t), nd_last_error());
    cr_assert_eq(nd_dtype_of(x), t, "%s: dtype", dists[d].name);
    ref_arr *h = ndt_download(x);
    nd_free(x);
    return h;
}

/* Values follow the documented transform of the reference draws: float64
 * within 1e-12 relative (libm against the backend's own), float32 within
 * a few float32 roundings of each op. */
NDT_TEST(random_dists, distributions_follow_their_formulas) {
    const uint64_t seed = 99991;
    const int64_t n = 2000;
    for (int d = 0; d < N_DISTS; d++)
        for (int wide = 0; wide < 2; wide++) {
            nd_random_seed(seed);
            ref_arr *h = draw_dist_host((dist)d, wide ? ND_FLOAT64 : ND_FLOAT32, n, dists[d].p);
            double tol = wide ? 1e-12 : 4e-6;
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) {
                double want = reference_value((dist)d, dists[d].p, wide, seed, 0, (uint64_t)i);
                double got = ref_getd(h, i);
                /* error relative to the value, or to the scale of the inputs where the
                 * result cancels (laplace/logistic/gumbel near loc, triangular) */
                double scale = fmax(fabs(want), 1.0);
                if (!(fabs(got - want) <= tol * scale) && bad++ < 3)
                    cr_expect(0, "%s %s element %lld: %.17g, formula %.17g", dists[d].name,
                              wide ? "float64" : "float32", (long long)i, got, want);
            }
            cr_expect_eq(bad, 0, "%s %s: %lld of %lld off the formula", dists[d].name, wide ? "float64" : "float32",
                         (long long)bad, (long long)n);
            ref_free(h);
        }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov against the CDF (sqrt(n) D below 2.0, p ~ 0.0007 for
 * a correct sampler; a fixed seed, so a pass is a fact), and mean and
 * variance within six standard errors (the variance's from the
 * distribution's kurtosis). */
NDT_TEST(random_dists, distributions_match_their_cdf_and_moments) {
    const int64_t n = 200000;
    double *x = malloc(sizeof(double) * (size_t)n);
    for (int d = 0; d < N_DISTS; d++)
        for (int wide = 0; wide < 2; wide++) {
            nd_random_seed(1000 + (uint64_t)d);
            const double *p = dists[d].p;
            ref_arr *h = draw_dist_host((dist)d, wide ? ND_FLOAT64 : ND_FLOAT32, n, p);
            double s = 0;
            for (int64_t i = 0; i < n; i++) {
                x[i] = ref_getd(h, i);
                cr_assert(isfinite(x[i]), "%s: element %lld is %g", dists[d].name, (long long)i, x[i]);
                s += x[i];
            }
            double m = s / (double)n, q = 0;
            for (int64_t i = 0; i < n; i++) q += (x[i] - m) * (x[i] - m);
            double v = q / (double)(n - 1), mean, var;
            mean_var((dist)d, p, &mean, &var);
            const char *tn = wide ? "float64" : "float32";
            cr_expect(fabs(m - mean) < 6 * sqrt(var / (double)n), "%s %s: mean %.6g, want %.6g", dists[d].name, tn,
                      m, mean);
            double se_var = var * sqrt((dists[d].excess_kurtosis + 2) / (double)n);
            cr_expect(fabs(v - var) < 6 * se_var, "%s %s: variance %.6g, want %.6g (+- %.3g)", dists[d].name, tn, v,
                      var, 6 * se_var);
            qsort(x, (size_t)n, sizeof *x, cmp_double);
            double dmax = 0;
            for (int64_t i = 0; i < n; i++) {
                double f = cdf((dist)d, p, x[i]);
                dmax = fmax(dmax, fmax(fabs(f - (double)i / (double)n), fabs(f - (double)(i + 1) / (double)n)));
            }
            cr_expect(sqrt((double)n) * dmax < 2.0, "%s %s: KS sqrt(n) D = %.3f", dists[d].name, tn,
                      sqrt((double)n) * dmax);
            ref_free(h);
        }
    free(x);
}

NDT_TEST(random_dists, edge_parameters) {
    const int64_t n = 1000;
    nd_random_seed(5);
    /* weibull(0) and zero scales give NumPy's constants */
    double zero[1] = {0};
    ref_arr *w = draw_dist_host(D_WEIBULL, ND_FLOAT64, n, zero);
    ref_arr *e = draw_dist_host(D_EXPONENTIAL, ND_FLOAT32, n, zero);
    double ls[2] = {3.5, 0};
    ref_arr *l = draw_dist_host(D_LAPLACE, ND_FLOAT64, n, ls);
    ref_arr *g = draw_dist_host(D_GUMBEL, ND_FLOAT64, n, ls);
    double tri[3] = {2, 2, 3}; /* mode at the left edge */
    ref_arr *t = draw_dist_host(D_TRIANGULAR, ND_FLOAT64, n, tri);
    for (int64_t i = 0; i < n; i++) {
        cr_expect(ref_getd(w, i) == 0 && !signbit(ref_getd(w, i)), "weibull(0) = %g", ref_getd(w, i));
        cr_expect(ref_getd(e, i) == 0, "exponential(0) = %g", ref_getd(e, i));
        cr_expect(ref_getd(l, i) == 3.5, "laplace(3.5, 0) = %g", ref_getd(l, i));
        cr_expect(ref_getd(g, i) == 3.5, "gumbel(3.5, 0) = %g", ref_getd(g, i));
        cr_expect(ref_getd(t, i) >= 2 && ref_getd(t, i) <= 3, "triangular(2, 2, 3) = %g", ref_getd(t, i));
    }
    ref_free(w), ref_free(e), ref_free(l), ref_free(g), ref_free(t);
}

/* float16 and bfloat16 are the float32 draw, rounded once at the end. */
NDT_TEST(random_dists, half_precision_is_the_rounded_float32_draw) {
    const nd_dtype halves[2] = {ND_FLOAT16, ND_BFLOAT16};
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < N_DISTS; d++) {
            int64_t n = 500;
            nd_random_seed(3);
            nd_array *a = draw_dist((dist)d, ND_FLOAT32, 1, &n, dists[d].p);
            nd_array *a16 = nd_astype(a, halves[k]);
            nd_random_seed(3);
            nd_array *b = draw_dist((dist)d, halves[k], 1, &n, dists[d].p);
            cr_assert(a16 && b, "%s: %s", dists[d].name, nd_last_error());
            cr_expect_eq(nd_dtype_of(b), halves[k]);
            ref_arr *x = ndt_download(a16), *y = ndt_download(b);
            cr_expect(memcmp(x->data, y->data, (size_t)n * 2) == 0, "%s %s differs from the rounded float32 draw",
                      dists[d].name, ref_dtype_name(halves[k]));
            ref_free(x), ref_free(y);
            nd_free(a), nd_free(a16), nd_free(b);
        }
}

/* ------------------------------------------------------------ threads, fusion, kernels */

/* Integers (with rejections) and two distributions, stored and summed. */
static void draw_mix(ref_arr **out) {
    nd_random_seed(8080);
    int64_t n = 100003, m2[2] = {301, 257};
    out[0] = draw_ints(ND_UINT32, n, 0, ((int64_t)1 << 31) + 1);
    out[1] = draw_ints(ND_INT64, n, INT64_MIN / 2, INT64_MAX / 2 + 2);
    out[2] = draw_dist_host(D_LAPLACE, ND_FLOAT32, n, dists[D_LAPLACE].p);
    nd_array *t = nd_random_triangular(ND_FLOAT64, 2, m2, -1, 0.5, 4);
    nd_array *tt = nd_transpose(t, NULL); /* a transposed view: indices that are not consecutive */
    out[3] = ndt_download(tt);
    nd_array *ri = nd_random_integers(ND_INT32, 1, &n, -50, 51), *s = nd_sum(ri, -1);
    out[4] = ndt_download(s);
    nd_free(t), nd_free(tt), nd_free(ri), nd_free(s);
}

NDT_TEST(random_dists, same_values_for_any_thread_count_and_without_fusion) {
    ref_arr *a[5], *b[5], *c[5];
    nd_config c1 = {0}, c2 = {0}, c3 = {0};
    c1.num_threads = 1;
    c2.num_threads = 2;
    c3.num_threads = 3;
    c3.fusion = -1;
    ndt_restart(&c1);
    draw_mix(a);
    ndt_restart(&c2);
    draw_mix(b);
    ndt_restart(&c3);
    draw_mix(c);
    for (int k = 0; k < 5; k++) {
        cr_expect(a[k]->size == b[k]->size && memcmp(a[k]->data, b[k]->data, (size_t)a[k]->size * ref_itemsize(a[k]->dt)) == 0,
                  "set %d: 1 vs 2 threads", k);
        /* without fusion the float ops round the same way; the integer
         * sets are exact */
        int exact = k != 2 && k != 3;
        for (int64_t i = 0; i < a[k]->size && i < c[k]->size; i++) {
            double x = ref_getd(a[k], i), y = ref_getd(c[k], i);
            if (exact ? ref_getu(a[k], i) != ref_getu(c[k], i) : !(fabs(x - y) <= 1e-6 * fmax(1, fabs(x)))) {
                cr_expect(0, "set %d element %lld: %.17g fused, %.17g unfused", k, (long long)i, x, y);
                break;
            }
        }
        ref_free(a[k]), ref_free(b[k]), ref_free(c[k]);
    }
}

/* The kernels and materialised values of sum((x + 3) * 2) for a draw x
 * (kind 0: uniform float32, the baseline; 1: integers; 2: laplace; 3:
 * triangular float64), and the sum. */
static double chain_sum(int kind, int64_t n, uint64_t *kernels, uint64_t *values) {
    nd_stats before, after;
    nd_scope_begin();
    cr_assert_eq(nd_sync(), ND_OK);
    nd_get_stats(&before);
    nd_random_seed(11);
    nd_array *x = kind == 0 ? nd_random_uniform(ND_FLOAT32, 1, &n, 0, 1)
                : kind == 1 ? nd_random_integers(ND_INT32, 1, &n, -1000, 1001)
                : kind == 2 ? nd_random_laplace(ND_FLOAT32, 1, &n, 0, 1)
                            : nd_random_triangular(ND_FLOAT64, 1, &n, 0, 1, 3);
    nd_array *y = nd_mul(nd_add(x, nd_scalar_int(3)), nd_scalar_int(2));
    nd_array *s = nd_sum(y, -1);
    double got = nd_item(s);
    nd_get_stats(&after);
    *kernels = NDT_KERNELS(after) - NDT_KERNELS(before);
    *values = after.values_materialised - before.values_materialised;
    nd_free(x), nd_free(y), nd_free(s);
    nd_scope_end();
    return got;
}

/* A draw feeding an elementwise chain and a sum runs as the same kernels as
 * a plain uniform draw does (the draw computed inside the reduction, never
 * written out: only the sum's values go to memory), and sums to the
 * reference. */
NDT_TEST(random_dists, draws_fuse_into_chains_and_reductions) {
    int64_t n = 100000;
    uint64_t k0, v0;
    chain_sum(0, n, &k0, &v0);
    cr_expect(k0 >= 1 && k0 <= 2 && v0 <= 2 * k0, "baseline: %llu kernels, %llu values", (unsigned long long)k0,
              (unsigned long long)v0);
    for (int k = 1; k < 4; k++) {
        uint64_t kk, vv;
        double got = chain_sum(k, n, &kk, &vv);
        cr_expect_eq(kk, k0, "case %d: %llu kernels, a uniform draw's chain %llu", k, (unsigned long long)kk,
                     (unsigned long long)k0);
        cr_expect_eq(vv, v0, "case %d: %llu values written, a uniform draw's chain %llu", k, (unsigned long long)vv,
                     (unsigned long long)v0);
        double want = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = k == 1 ? (double)(-1000 + (int64_t)nd_philox_integer(0, 2001, 11, 0, (uint64_t)i))
                       : k == 2 ? reference_value(D_LAPLACE, (const double[]){0, 1}, 0, 11, 0, (uint64_t)i)
                                : reference_value(D_TRIANGULAR, (const double[]){0, 1, 3}, 1, 11, 0, (uint64_t)i);
            want += (v + 3) * 2;
        }
        /* integers: exact (int64 sum); floats: float32 accumulation error */
        cr_expect(k == 1 ? got == want : fabs(got - want) <= 1e-4 * n, "case %d: sum %.17g, reference %.17g", k,
                  got, want);
    }
}

/* ------------------------------------------------------------ errors */

NDT_TEST(random_dists, integer_argument_errors) {
    int64_t n = 4;
    cr_expect_null(nd_random_integers(ND_INT32, 1, &n, 5, 5));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_INT32, 1, &n, 7, 2));
    cr_expect(strstr(nd_last_error(), "lo = 7") && strstr(nd_last_error(), "hi = 2"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_INT8, 1, &n, -200, 0));
    cr_expect(strstr(nd_last_error(), "int8") && strstr(nd_last_error(), "-128 <= lo < hi <= 128"), "%s",
              nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_UINT8, 1, &n, -1, 5));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_UINT8, 1, &n, 0, 257));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_INT32, 1, &n, INT32_MIN - 1LL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_UINT64, 1, &n, -1, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_BOOL, 1, &n, 0, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    cr_expect_null(nd_random_integers(ND_FLOAT32, 1, &n, 0, 3));
    cr_expect(strstr(nd_last_error(), "float32"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_random_integers");
    cr_expect_null(nd_random_integers((nd_dtype)99, 1, &n, 0, 3));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_random_integers");
    int64_t neg = -1;
    cr_expect_null(nd_random_integers(ND_INT32, 1, &neg, 0, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_integers");
    /* edges that are allowed */
    ref_arr *h = draw_ints(ND_INT8, 100, 127, 128);
    for (int64_t i = 0; i < 100; i++) cr_expect_eq(int_value(h, i), 127);
    ref_free(h);
    int64_t zero = 0;
    nd_array *empty = nd_random_integers(ND_INT16, 1, &zero, 0, 10);
    cr_expect(empty && nd_size(empty) == 0, "empty draw");
    nd_free(empty);
    nd_array *s0 = nd_random_integers(ND_INT64, 0, NULL, -3, -2); /* 0-d */
    cr_expect(s0 && nd_ndim(s0) == 0 && nd_item(s0) == -3, "0-d draw");
    nd_free(s0);
}

NDT_TEST(random_dists, errors_take_no_stream) {
    int64_t n = 64;
    nd_random_seed(42);
    ref_arr *a = draw_ints(ND_INT32, n, 0, 1000);
    nd_random_seed(42);
    cr_expect_null(nd_random_integers(ND_INT32, 1, &n, 3, 3));
    nd_clear_error();
    cr_expect_null(nd_random_exponential(ND_FLOAT32, 1, &n, -1));
    nd_clear_error();
    ref_arr *b = draw_ints(ND_INT32, n, 0, 1000);
    cr_expect(memcmp(a->data, b->data, (size_t)n * 4) == 0, "a failed call moved the stream");
    ref_free(a), ref_free(b);
}

static void expect_bad(dist d, const double *p, nd_dtype t, nd_status want, const char *needle) {
    int64_t n = 3;
    nd_array *x = draw_dist(d, t, 1, &n, p);
    char fn[64];
    snprintf(fn, sizeof fn, "nd_random_%s", dists[d].name);
    cr_expect_null(x, "%s should fail", fn);
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, needle), "%s: message '%s' should say '%s'", fn, m ? m : "(null)", needle);
    NDT_EXPECT_ERR(want, fn);
    nd_free(x);
}

NDT_TEST(random_dists, distribution_argument_errors) {
    const double ok[3] = {0.5, 1, 2};
    for (int d = 0; d < N_DISTS; d++) {
        expect_bad((dist)d, dists[d].p, ND_INT32, ND_ERR_DTYPE, "int32");
        expect_bad((dist)d, dists[d].p, ND_BOOL, ND_ERR_DTYPE, "bool");
    }
    const double neg[3] = {-1, -1, -1}, nanp[3] = {NAN, NAN, NAN}, infp[3] = {INFINITY, 1, 1};
    expect_bad(D_EXPONENTIAL, neg, ND_FLOAT32, ND_ERR_ARG, "scale = -1 is negative (use scale >= 0)");
    expect_bad(D_EXPONENTIAL, nanp, ND_FLOAT32, ND_ERR_ARG, "not finite");
    expect_bad(D_LOGNORMAL, (const double[]){0, -0.5}, ND_FLOAT64, ND_ERR_ARG, "sigma = -0.5");
    expect_bad(D_LOGNORMAL, infp, ND_FLOAT64, ND_ERR_ARG, "mean = inf");
    expect_bad(D_LAPLACE, (const double[]){0, -2}, ND_FLOAT64, ND_ERR_ARG, "scale = -2");
    expect_bad(D_LOGISTIC, (const double[]){0, -2}, ND_FLOAT64, ND_ERR_ARG, "scale = -2");
    expect_bad(D_GUMBEL, (const double[]){NAN, 1}, ND_FLOAT64, ND_ERR_ARG, "loc = nan");
    expect_bad(D_WEIBULL, neg, ND_FLOAT64, ND_ERR_ARG, "a = -1");
    expect_bad(D_RAYLEIGH, neg, ND_FLOAT64, ND_ERR_ARG, "scale = -1");
    expect_bad(D_PARETO, (const double[]){0}, ND_FLOAT64, ND_ERR_ARG, "a = 0 is not positive (use a > 0)");
    expect_bad(D_POWER, (const double[]){0}, ND_FLOAT64, ND_ERR_ARG, "a = 0 is not positive");
    expect_bad(D_POWER, infp, ND_FLOAT64, ND_ERR_ARG, "a = inf");
    expect_bad(D_TRIANGULAR, (const double[]){1, 0, 2}, ND_FLOAT64, ND_ERR_ARG, "left <= mode <= right");
    expect_bad(D_TRIANGULAR, (const double[]){0, 3, 2}, ND_FLOAT64, ND_ERR_ARG, "mode = 3");
    expect_bad(D_TRIANGULAR, (const double[]){1, 1, 1}, ND_FLOAT64, ND_ERR_ARG, "left < right");
    expect_bad(D_TRIANGULAR, (const double[]){0, 1, INFINITY}, ND_FLOAT64, ND_ERR_ARG, "right = inf");
    int64_t bad_shape = -2;
    nd_array *x = nd_random_gumbel(ND_FLOAT32, 1, &bad_shape, ok[0], ok[1]);
    cr_expect_null(x);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_random_gumbel");
}
