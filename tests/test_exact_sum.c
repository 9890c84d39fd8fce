/* The exact float32 sums behind the CUDA `exact` scan's carries
 * (common/exact_sum.h), on the host: no GPU needed. The tests check that
 *   - one term rounds back to its own bits (every class: subnormal,
 *     normal, huge, both zeros, both signs);
 *   - the rounded sum is the correctly rounded (ties to even) exact sum,
 *     against a float64 / long double reference where that reference is
 *     exact (narrow exponent ranges, the subnormal range, built ties), and
 *     against sums known by construction across the whole range (pairs
 *     x, -x of any size cancelling around a narrow-range rest);
 *   - the bits do not depend on the order or grouping of the terms: random
 *     permutations, and groups normalised into limbs and added back as
 *     limbs the way a tile adds a published prefix (limb 9 signed);
 *   - the flag rules: NaN, both infinities, one infinity, all -0.0, exact
 *     cancellation to +0.0, overflow of the exact sum to +-inf;
 *   - a host replay of the scan (tiles scanned in order, each prefix the
 *     exact sum of the earlier tiles' totals rounded once, found by a
 *     look-back that stops at a random earlier published prefix) gives the
 *     same bits for every schedule, rows apart;
 *   - scan.cu's float64 look-back (windows of 32 lanes summed by a
 *     butterfly under the 46-bit span bound, joined by checked adds, the
 *     one-word publish, the fall-back to limbs) gives every tile the exact
 *     prefix and published word whatever tile its look-back stops at;
 *   - scan_ws.cuh's windows of 256 totals are exact under their 44-bit
 *     bound (and 46 bits would not do), and its carries (each block adding
 *     the totals since its own last tile, whichever blocks take whichever
 *     tiles; the float64 windows, the fall-back to limbs, new rows) give
 *     every tile the exact prefix rounded once. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/exact_sum.h"

static uint32_t bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static float float_of(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static uint64_t rng(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* An accumulator: limbs in int64 and the flags. */
typedef struct {
    int64_t acc[ND_XS_LIMBS];
    unsigned flags;
} sum_t;

static void sum_add(sum_t *s, float x) { s->flags |= nd_xs_add_bits(s->acc, bits_of(x)); }

static uint32_t sum_round(const sum_t *s) {
    uint32_t limbs[ND_XS_LIMBS];
    nd_xs_normalise(s->acc, 0, 0, limbs);
    return nd_xs_round(limbs, s->flags);
}

static uint32_t sum_of(const float *x, int n) {
    sum_t s = {{0}, 0};
    for (int i = 0; i < n; i++) sum_add(&s, x[i]);
    return sum_round(&s);
}

/* b's normalised limbs (a published prefix) added into a, as the kernel's
 * lanes add them: limbs 0-8 unsigned, limb 9 signed; flags OR. */
static void sum_add_limbs(sum_t *a, const sum_t *b) {
    uint32_t limbs[ND_XS_LIMBS];
    nd_xs_normalise(b->acc, 0, 0, limbs);
    for (int l = 0; l < ND_XS_LIMBS; l++)
        a->acc[l] += l == ND_XS_LIMBS - 1 ? (int64_t)(int32_t)limbs[l] : (int64_t)limbs[l];
    a->flags |= b->flags;
}

/* b as a tile publishes it (nd_xs_pack: one word when it fits, else the
 * limbs) added into a as the kernel's look-back adds it (nd_xs_unpack's
 * pieces, or the limbs). Returns whether the limbs were needed. */
static int sum_add_published(sum_t *a, const sum_t *b) {
    uint32_t limbs[ND_XS_LIMBS], part[3];
    nd_xs_normalise(b->acc, 0, 0, limbs);
    const uint64_t word = nd_xs_pack(limbs, b->flags);
    cr_assert(word != 0, "a packed word is never 0 (an entry not yet published)");
    int follow, limb, neg;
    a->flags |= nd_xs_unpack(word, &follow, &limb, part, &neg);
    if (follow) {
        sum_add_limbs(a, b);
        return 1;
    }
    for (int j = 0; j < 3 && limb + j < ND_XS_LIMBS; j++) a->acc[limb + j] += neg ? -(int64_t)part[j] : (int64_t)part[j];
    return 0;
}

/* A random finite float32 of any class: all bits random but the exponent
 * not 0xff; now and then a subnormal or a zero. */
static float any_finite(uint64_t *s) {
    uint32_t b = (uint32_t)rng(s);
    const int k = (int)(rng(s) % 16);
    if (k == 0) b &= 0x807fffffu; /* subnormal (or a zero) */
    if (k == 1) b &= 0x80000000u; /* +-0.0 */
    if ((b >> 23 & 0xff) == 0xff) b ^= 0x00800000u;
    return float_of(b);
}

/* A random float32 with exponent in [lo, hi] (unbiased) and either sign. */
static float in_range(uint64_t *s, int lo, int hi) {
    const int e = lo + (int)(rng(s) % (uint64_t)(hi - lo + 1));
    const float m = 1.0f + (float)(rng(s) >> 41) * 0x1p-23f;
    return (rng(s) & 1 ? -1.0f : 1.0f) * ldexpf(m, e);
}

#define EXPECT_BITS(got, want, ...)                                                                        \
    cr_expect((got) == (want), "%s: got %08x (%.9g), want %08x (%.9g)", __VA_ARGS__, (unsigned)(got),     \
              (double)float_of(got), (unsigned)(want), (double)float_of(want))

Test(exact_sum, one_term_is_itself) {
    uint64_t s = 1;
    const float fixed[] = {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f,
                           0x1.fffffcp-127f, 0x1p-126f, 3.0f, 0x1.000002p0f};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) EXPECT_BITS(sum_of(&fixed[i], 1), bits_of(fixed[i]), "fixed");
    for (int i = 0; i < 200000; i++) {
        const float x = any_finite(&s);
        EXPECT_BITS(sum_of(&x, 1), bits_of(x), "random");
    }
}

/* Narrow exponent ranges: every sum of the terms is exact in float64, and
 * converting it to float32 rounds once, correctly. */
Test(exact_sum, rounds_like_float64_where_exact) {
    uint64_t s = 2;
    float x[1000];
    for (int trial = 0; trial < 3000; trial++) {
        const int n = 1 + (int)(rng(&s) % 1000);
        /* exponents within 8 of a base: multiples of 2^(base - 31) below
         * 2^(base + 19), 50 bits */
        const int base = -140 + (int)(rng(&s) % 255), lo = base - 8 < -149 ? -149 : base - 8,
                  hi = base + 8 > 127 ? 127 : base + 8;
        double ref = 0;
        for (int i = 0; i < n; i++) {
            x[i] = in_range(&s, lo, hi);
            if (lo == -149) x[i] = ldexpf((float)(int)(rng(&s) % 2048) - 1024, -149); /* subnormals */
            ref += (double)x[i];
        }
        EXPECT_BITS(sum_of(x, n), bits_of((float)ref), "narrow");
        if (trial % 100 == 0) {
            /* long double (64-bit significand on x86) widens the range */
            long double lref = 0;
            for (int i = 0; i < n; i++) lref += x[i];
            EXPECT_BITS(sum_of(x, n), bits_of((float)lref), "long double");
        }
    }
}

Test(exact_sum, ties_to_even) {
    const float a[] = {1.0f, 0x1p-24f}; /* a tie: down to even 1 */
    EXPECT_BITS(sum_of(a, 2), bits_of(1.0f), "tie down");
    const float b[] = {0x1.000002p0f, 0x1p-24f}; /* odd: up */
    EXPECT_BITS(sum_of(b, 2), bits_of(0x1.000004p0f), "tie up");
    const float c[] = {1.0f, 0x1p-24f, 0x1p-149f}; /* just above the tie */
    EXPECT_BITS(sum_of(c, 3), bits_of(0x1.000002p0f), "sticky");
    const float d[] = {-1.0f, -0x1p-24f, -0x1p-149f};
    EXPECT_BITS(sum_of(d, 3), bits_of(-0x1.000002p0f), "sticky negative");
    const float e[] = {1.0f, 0x1p-24f, -0x1p-149f}; /* just below */
    EXPECT_BITS(sum_of(e, 3), bits_of(1.0f), "below tie");
    const float f[] = {0x1p100f, 0x1p76f, 0x1p-149f}; /* sticky 250 bits down */
    EXPECT_BITS(sum_of(f, 3), bits_of(0x1.000002p100f), "far sticky");
    const float g[] = {0x1p100f, 0x1p76f}; /* tie at 2^100 */
    EXPECT_BITS(sum_of(g, 2), bits_of(0x1p100f), "tie at 2^100");
    const float h[] = {0x1p-126f, -0x1p-149f}; /* normal minus one subnormal unit */
    EXPECT_BITS(sum_of(h, 2), bits_of(0x1.fffffcp-127f), "into subnormals");
}

/* Sums known by construction over the whole range: x_i and -x_i of any
 * size cancel exactly, leaving a narrow-range rest whose float64 sum is
 * exact. */
Test(exact_sum, cancellation_across_the_range) {
    uint64_t s = 3;
    float x[600];
    for (int trial = 0; trial < 2000; trial++) {
        const int pairs = (int)(rng(&s) % 200), rest = 1 + (int)(rng(&s) % 100);
        int n = 0;
        double ref = 0;
        for (int i = 0; i < pairs; i++) {
            const float v = any_finite(&s);
            x[n++] = v;
            x[n++] = -v;
        }
        for (int i = 0; i < rest; i++) {
            x[n] = in_range(&s, -20, -12);
            ref += (double)x[n++];
        }
        for (int i = n - 1; i > 0; i--) { /* shuffle */
            const int j = (int)(rng(&s) % (uint64_t)(i + 1));
            const float t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
        EXPECT_BITS(sum_of(x, n), bits_of((float)ref), "cancellation");
    }
    const float big[] = {1e30f, 1.0f, -1e30f};
    EXPECT_BITS(sum_of(big, 3), bits_of(1.0f), "1e30 + 1 - 1e30");
}

/* Any order and grouping, the same bits. */
Test(exact_sum, order_and_grouping_free) {
    uint64_t s = 4;
    float x[400], y[400];
    for (int trial = 0; trial < 3000; trial++) {
        const int n = 1 + (int)(rng(&s) % 400), kind = trial % 3;
        for (int i = 0; i < n; i++)
            x[i] = kind == 0 ? any_finite(&s) : kind == 1 ? in_range(&s, -149, 127) : in_range(&s, -30, 30);
        const uint32_t want = sum_of(x, n);
        for (int rep = 0; rep < 4; rep++) {
            memcpy(y, x, (size_t)n * sizeof *x);
            for (int i = n - 1; i > 0; i--) {
                const int j = (int)(rng(&s) % (uint64_t)(i + 1));
                const float t = y[i];
                y[i] = y[j];
                y[j] = t;
            }
            EXPECT_BITS(sum_of(y, n), want, "permuted");
            /* groups: each summed alone, normalised, added as limbs */
            sum_t all = {{0}, 0};
            for (int i = 0; i < n;) {
                const int len = 1 + (int)(rng(&s) % 40);
                sum_t g = {{0}, 0};
                for (int k = i; k < n && k < i + len; k++) sum_add(&g, y[k]);
                if (rng(&s) & 1) sum_add_limbs(&all, &g);
                else /* or its terms added one by one */
                    for (int k = i; k < n && k < i + len; k++) sum_add(&all, y[k]);
                i += len;
            }
            EXPECT_BITS(sum_round(&all), want, "grouped");
        }
    }
}

Test(exact_sum, flags) {
    const float inf = INFINITY, nan = NAN;
    const float a[] = {1.0f, nan, 2.0f};
    cr_expect(isnan(float_of(sum_of(a, 3))), "NaN");
    const float b[] = {inf, 1.0f, -inf};
    cr_expect(isnan(float_of(sum_of(b, 3))), "+inf and -inf");
    const float c[] = {inf, -FLT_MAX, -FLT_MAX};
    EXPECT_BITS(sum_of(c, 3), bits_of(inf), "+inf");
    const float d[] = {FLT_MAX, -inf};
    EXPECT_BITS(sum_of(d, 2), bits_of(-inf), "-inf");
    const float e[] = {-0.0f, -0.0f, -0.0f};
    EXPECT_BITS(sum_of(e, 3), bits_of(-0.0f), "all -0.0");
    const float f[] = {-0.0f, 0.0f, -0.0f};
    EXPECT_BITS(sum_of(f, 3), bits_of(0.0f), "-0.0 and +0.0");
    const float g[] = {-1.5f, 1.5f};
    EXPECT_BITS(sum_of(g, 2), bits_of(0.0f), "exact cancellation: +0.0");
    const float h[] = {-0x1p-149f, 0x1p-149f, -0.0f};
    EXPECT_BITS(sum_of(h, 3), bits_of(0.0f), "cancelled subnormals and -0.0");
    /* overflow of the exact sum: the halfway point above FLT_MAX (2^128 -
     * 2^103) ties to even, up, to inf */
    const float i[] = {FLT_MAX, 0x1p103f};
    EXPECT_BITS(sum_of(i, 2), bits_of(inf), "FLT_MAX + half ulp");
    const float j[] = {FLT_MAX, 0x1p102f};
    EXPECT_BITS(sum_of(j, 2), bits_of(FLT_MAX), "FLT_MAX + quarter ulp");
    const float k[] = {-FLT_MAX, -FLT_MAX};
    EXPECT_BITS(sum_of(k, 2), bits_of(-inf), "-2 FLT_MAX");
    /* no overflow on the way (the in-order float sum would give inf) */
    const float l[] = {FLT_MAX, FLT_MAX, -FLT_MAX};
    EXPECT_BITS(sum_of(l, 3), bits_of(FLT_MAX), "FLT_MAX + FLT_MAX - FLT_MAX");
    /* the headroom: 2^20 terms of FLT_MAX and back */
    sum_t m = {{0}, 0};
    for (int q = 0; q < (1 << 20); q++) sum_add(&m, FLT_MAX);
    EXPECT_BITS(sum_round(&m), bits_of(inf), "2^20 FLT_MAX");
    for (int q = 0; q < (1 << 20) - 1; q++) sum_add(&m, -FLT_MAX);
    EXPECT_BITS(sum_round(&m), bits_of(FLT_MAX), "2^20 FLT_MAX and back");
}

/* The significant bits of a nonzero sum: from its lowest set bit to its
 * highest (two's complement magnitude, computed bit by bit). */
static int span_bits(const sum_t *x) {
    uint32_t limbs[ND_XS_LIMBS], mag[ND_XS_LIMBS];
    nd_xs_normalise(x->acc, 0, 0, limbs);
    const int neg = (int32_t)limbs[ND_XS_LIMBS - 1] < 0;
    uint64_t c = neg;
    for (int l = 0; l < ND_XS_LIMBS; l++) {
        c += neg ? (uint32_t)~limbs[l] : limbs[l];
        mag[l] = (uint32_t)c;
        c >>= 32;
    }
    int lo = -1, hi = -1;
    for (int bit = 0; bit < 32 * ND_XS_LIMBS; bit++)
        if (mag[bit / 32] >> (bit % 32) & 1) {
            if (lo < 0) lo = bit;
            hi = bit;
        }
    return lo < 0 ? 0 : hi - lo + 1;
}

/* A published word stands for the same sum: added into an empty
 * accumulator it rounds to the same bits with the same flags' outcome,
 * and the limbs are needed exactly when the sum has more than 53
 * significant bits. */
Test(exact_sum, one_word_prefixes) {
    uint64_t s = 6;
    int words = 0, follows = 0;
    for (int trial = 0; trial < 20000; trial++) {
        sum_t x = {{0}, 0};
        const int n = 1 + (int)(rng(&s) % 50), kind = trial % 4;
        for (int i = 0; i < n; i++)
            sum_add(&x, kind == 0 ? any_finite(&s) : kind == 1 ? in_range(&s, -149, 127)
                        : kind == 2 ? in_range(&s, -12, 12) : ldexpf((float)(int)(rng(&s) % 64) - 32, -149 + (int)(rng(&s) % 8)));
        sum_t y = {{0}, 0};
        const int follow = sum_add_published(&y, &x);
        follows += follow;
        words += !follow;
        EXPECT_BITS(sum_round(&y), sum_round(&x), "published");
        cr_expect(follow == (span_bits(&x) > 53), "limbs needed %d, span %d bits", follow, span_bits(&x));
        /* and what it adds to a further sum is the sum itself */
        sum_t z = {{0}, 0}, w = {{0}, 0};
        const float more = in_range(&s, -20, 20);
        sum_add(&z, more);
        sum_add_published(&z, &x);
        w = x;
        sum_add(&w, more);
        EXPECT_BITS(sum_round(&z), sum_round(&w), "published plus a term");
    }
    cr_expect(words > 1000 && follows > 1000, "both forms exercised: %d words, %d limbs", words, follows);
    /* the edge: 53 significant bits fit, 54 do not, at any alignment */
    for (int e = -149; e + 53 <= 127; e += 3)
        for (int span = 52; span <= 55; span++) {
            sum_t x = {{0}, 0}, y = {{0}, 0};
            sum_add(&x, ldexpf(1.0f, e + span - 1));
            sum_add(&x, ldexpf(-1.0f, e)); /* 2^(e+span-1) - 2^e: span - 1 bits */
            sum_add(&x, ldexpf(1.0f, e + span - 1));
            const int follow = sum_add_published(&y, &x);
            cr_expect(follow == (span_bits(&x) > 53), "e %d span %d: limbs %d", e, span_bits(&x), follow);
            EXPECT_BITS(sum_round(&y), sum_round(&x), "edge of one word");
            uint32_t lx[ND_XS_LIMBS], ly[ND_XS_LIMBS];
            nd_xs_normalise(x.acc, 0, 0, lx);
            nd_xs_normalise(y.acc, 0, 0, ly);
            cr_expect(memcmp(lx, ly, sizeof lx) == 0, "e %d span %d: other limbs", e, span);
        }
    /* the flags' forms */
    const float inf = INFINITY;
    const float cases[][2] = {{-0.0f, -0.0f}, {-0.0f, 0.0f}, {1.0f, -1.0f}, {inf, 1.0f}, {-inf, 1.0f}, {inf, -inf}, {NAN, 1.0f}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        sum_t x = {{0}, 0}, y = {{0}, 0};
        sum_add(&x, cases[c][0]);
        sum_add(&x, cases[c][1]);
        cr_expect(!sum_add_published(&y, &x), "case %zu in one word", c);
        const uint32_t got = sum_round(&y), want = sum_round(&x);
        cr_expect(got == want || (isnan(float_of(got)) && isnan(float_of(want))), "case %zu: %08x, want %08x", c, got,
                  want);
        cr_expect(((y.flags ^ x.flags) & ND_XS_SOME) == 0 || (x.flags & (ND_XS_NAN | ND_XS_PINF | ND_XS_NINF)),
                  "case %zu: -0.0 rule", c);
    }
}

/* The warp's butterfly of plain float64 adds (lane l with lane l ^ off,
 * off = 16 .. 1) over v; when the sum is exact (`exact`), every lane must
 * end with the same bits. Returns lane 0's sum. */
static double lanes_butterfly(double *v, int exact) {
    double w[32];
    for (int off = 16; off > 0; off >>= 1) {
        for (int l = 0; l < 32; l++) w[l] = v[l] + v[l ^ off];
        memcpy(v, w, sizeof w);
    }
    if (exact)
        for (int l = 1; l < 32; l++)
            cr_assert(memcmp(&v[l], &v[0], 8) == 0 || (isnan(v[l]) && isnan(v[0])), "lanes agree");
    return v[0];
}

/* scan.cu's float64 look-back (exact_lookback_f64), one window: 32
 * lanes, the first n holding float32 aggregates and lane n (when prefix) a
 * published word, summed by a butterfly of plain float64 adds; *ok: the
 * prefix was one word and the terms' bit span (nd_xs_f64_span) within
 * ND_XS_F64_SPAN. Returns lane 0's sum; all lanes' sums must agree when ok. */
static double butterfly(const float *x, int n, const sum_t *prefix, int *ok) {
    double v[32];
    for (int l = 0; l < 32; l++) v[l] = l < n ? (double)x[l] : -0.0;
    *ok = 1;
    if (prefix) {
        uint32_t limbs[ND_XS_LIMBS];
        nd_xs_normalise(prefix->acc, 0, 0, limbs);
        const uint64_t enc = ~nd_xs_pack(limbs, prefix->flags);
        if (enc == ND_XS_TAG_LIMBS) *ok = 0;
        memcpy(&v[n], &enc, 8);
    }
    int lo = 1 << 20, hi = -(1 << 20);
    for (int l = 0; l < 32; l++) {
        int a, b;
        nd_xs_f64_span(v[l], &a, &b);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    if (hi - lo > ND_XS_F64_SPAN) *ok = 0;
    return lanes_butterfly(v, *ok);
}

/* When the bound holds, the float64 is the exact sum: the same word as
 * the limbs' nd_xs_pack and, converted, the same float32 as nd_xs_round.
 * Sums of more than 53 bits never pass it. And nd_xs_add_f64, which joins
 * the windows' sums, flags exactly the adds that are not exact. */
Test(exact_sum, float64_lookback) {
    uint64_t s = 7;
    int exact = 0, not_exact = 0;
    for (int trial = 0; trial < 40000; trial++) {
        float x[32];
        const int kind = trial % 4, n = (int)(rng(&s) % 33), with_prefix = n < 32 && (rng(&s) & 1);
        sum_t pre = {{0}, 0}, all = {{0}, 0};
        for (int i = 0; i < n; i++) {
            x[i] = kind == 0 ? in_range(&s, 8, 12) : kind == 1 ? in_range(&s, -20, 20) : kind == 2 ? any_finite(&s)
                   : (rng(&s) % 8 ? (float)(int)(rng(&s) % 100) : (rng(&s) & 1 ? INFINITY : -0.0f));
            sum_add(&all, x[i]);
        }
        if (with_prefix) {
            const int m = 1 + (int)(rng(&s) % 20);
            for (int i = 0; i < m; i++)
                sum_add(&pre, kind == 2 ? any_finite(&s) : kind == 3 ? (float)(int)(rng(&s) % 1000) : in_range(&s, 0, 20));
            sum_add_limbs(&all, &pre);
        }
        int ok;
        const double d = butterfly(x, n, with_prefix ? &pre : NULL, &ok);
        uint32_t limbs[ND_XS_LIMBS];
        nd_xs_normalise(all.acc, 0, 0, limbs);
        const uint64_t want_word = nd_xs_pack(limbs, all.flags);
        if (ok) {
            exact++;
            uint64_t got_word = ~(uint64_t)0;
            if (isnan(d)) got_word = ~ND_XS_ENC_NAN;
            else {
                memcpy(&got_word, &d, 8);
                got_word = ~got_word;
            }
            cr_expect(got_word == want_word, "trial %d: word %016llx, want %016llx", trial,
                      (unsigned long long)got_word, (unsigned long long)want_word);
            const float f = (float)d;
            EXPECT_BITS(bits_of(f), nd_xs_round(limbs, all.flags), "float64 look-back rounded");
        } else {
            not_exact++;
        }
        if (want_word == ~ND_XS_TAG_LIMBS) cr_expect(!ok, "trial %d: a sum of more than 53 bits taken as exact", trial);
        /* small integers, infinities and -0.0 (and an integer prefix): the
         * bound holds, so no fallback to the limbs */
        if (kind == 3) cr_expect(ok, "trial %d: integers and infinities fell back", trial);
    }
    cr_expect(exact > 10000 && not_exact > 1000, "both outcomes exercised: %d exact, %d not", exact, not_exact);
    for (int trial = 0; trial < 100000; trial++) {
        const double a = (double)any_finite(&s) * (rng(&s) % 4 ? 1.0 : ldexp(1.0, (int)(rng(&s) % 60))),
                     b = trial % 7 == 0 ? INFINITY : (double)any_finite(&s);
        int ok = 1;
        const double sum = nd_xs_add_f64(a, b, &ok);
        /* independent check: the add is exact iff the error term of the
         * classic TwoSum is 0 (or the sum is not finite) */
        const double bp = sum - a, ap = sum - bp, err = (a - ap) + (b - bp);
        const int want = !isfinite(sum) || err == 0;
        cr_expect(ok == want, "%a + %a: ok %d, want %d", a, b, ok, want);
    }
}

/* scan_ws.cuh's look-back window (ws_lookback): 32 lanes x 8 entries,
 * entry v * 32 + l in lane l, the first n holding float32 totals; each
 * lane adds its entries in order (from -0.0), then a butterfly of plain
 * float64 adds; *ok: the terms' bit span within `span`. Returns lane 0's
 * sum; all lanes' sums must agree when ok. */
static double ws_window(const float *x, int n, int span, int *ok) {
    double v[32];
    int lo = 1 << 20, hi = -(1 << 20);
    for (int l = 0; l < 32; l++) {
        v[l] = -0.0;
        for (int k = 0; k < 8; k++) {
            if (k * 32 + l >= n) continue;
            const double d = (double)x[k * 32 + l];
            int a, b;
            nd_xs_f64_span(d, &a, &b);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
            v[l] += d;
        }
    }
    *ok = hi - lo <= span;
    return lanes_butterfly(v, *ok);
}

/* The warp-specialised scan sums 256 totals a window with the bound two
 * bits tighter (ND_XS_F64_SPAN - 2): when it holds, the float64 is the
 * exact sum (the limbs' word); 256 terms near the top of a span of 46 do
 * round, so exact_sum.h's bound for 64 terms would not do. */
Test(exact_sum, ws_window_of_256) {
    uint64_t s = 11;
    const int span = ND_XS_F64_SPAN - 2;
    int exact = 0, not_exact = 0;
    for (int trial = 0; trial < 20000; trial++) {
        float x[256];
        const int kind = trial % 5, n = kind == 4 ? 256 : (int)(rng(&s) % 257);
        /* kind 4: near-maximal mantissas at 2^0 and one term 2^-(38..47):
         * sums at the edge of the bound, which round where it is loosened */
        const int tiny = 38 + (int)(rng(&s) % 10);
        sum_t all = {{0}, 0};
        for (int i = 0; i < n; i++) {
            x[i] = kind == 0 ? in_range(&s, 8, 12) : kind == 1 ? in_range(&s, -18, 18) : kind == 2 ? any_finite(&s)
                   : kind == 4 ? (i == 200 ? ldexpf(1.0f, -tiny) : 2.0f - ldexpf((float)(rng(&s) % 64), -23))
                   : (rng(&s) % 8 ? (float)(int)(rng(&s) % 100) : (rng(&s) & 1 ? INFINITY : -0.0f));
            sum_add(&all, x[i]);
        }
        int ok;
        const double d = ws_window(x, n, span, &ok);
        uint32_t limbs[ND_XS_LIMBS];
        nd_xs_normalise(all.acc, 0, 0, limbs);
        const uint64_t want_word = nd_xs_pack(limbs, all.flags);
        if (ok) {
            exact++;
            uint64_t got_word = ~ND_XS_ENC_NAN;
            if (!isnan(d)) {
                memcpy(&got_word, &d, 8);
                got_word = ~got_word;
            }
            cr_expect(got_word == want_word, "trial %d (n %d): word %016llx, want %016llx", trial, n,
                      (unsigned long long)got_word, (unsigned long long)want_word);
            EXPECT_BITS(bits_of((float)d), nd_xs_round(limbs, all.flags), "window rounded");
        } else {
            not_exact++;
        }
        if (kind == 3) cr_expect(ok, "trial %d: integers and infinities fell back", trial);
    }
    cr_expect(exact > 5000 && not_exact > 1000, "both outcomes exercised: %d exact, %d not", exact, not_exact);
    /* 255 terms just below 2^1 and one of 2^-45: a span of 46, and a sum
     * of 56 bits that float64 rounds. */
    float x[256];
    sum_t all = {{0}, 0};
    for (int i = 0; i < 256; i++) {
        x[i] = i < 255 ? 2.0f - ldexpf(1.0f, -23) : ldexpf(1.0f, -45);
        sum_add(&all, x[i]);
    }
    int ok;
    const double d = ws_window(x, 256, ND_XS_F64_SPAN, &ok);
    uint32_t limbs[ND_XS_LIMBS];
    nd_xs_normalise(all.acc, 0, 0, limbs);
    uint64_t got_word;
    memcpy(&got_word, &d, 8);
    cr_expect(ok, "span 46 passes exact_sum.h's bound");
    cr_expect(~got_word != nd_xs_pack(limbs, all.flags), "yet 256 such terms round in float64");
    ws_window(x, 256, span, &ok);
    cr_expect(!ok, "the window's bound refuses it");
}

/* ------------------------------------------------------------ scan replay */

/* The exact scan of rows x n in tiles of `tile`, as scan_exact computes
 * it with an in-order in-tile scan (the kernel's is CUB's BlockScan tree;
 * bench/gpu_speed.cu checks the kernel on inputs whose tile sums are exact
 * under any tree): tile t's outputs are fl(P_t + local), P_t the exact sum
 * of the row's earlier tile totals rounded once, found by a look-back from
 * t - 1 that adds aggregates until it meets a tile whose inclusive prefix
 * is "published" (drawn at random: seed 0 publishes none, so every
 * look-back runs to the row's start). */
static void replay(const float *x, int64_t rows, int64_t n, int64_t tile, uint64_t seed, float *y) {
    const int64_t tpr = (n + tile - 1) / tile;
    float *total = malloc(sizeof(float) * (size_t)tpr);
    sum_t *incl = malloc(sizeof(sum_t) * (size_t)tpr);
    uint64_t s = seed + 1;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t t = 0; t < tpr; t++) {
            const int64_t b = t * tile, e = b + tile < n ? b + tile : n;
            float acc = 0;
            for (int64_t i = b; i < e; i++) {
                acc = i == b ? x[r * n + i] : acc + x[r * n + i];
                y[r * n + i] = acc;
            }
            total[t] = acc;
            sum_t ex = {{0}, 0};
            int64_t k = t - 1;
            for (; k >= 0; k--) {
                if (seed && rng(&s) % 4 == 0) { /* tile k's prefix is published */
                    sum_add_published(&ex, &incl[k]);
                    break;
                }
                sum_add(&ex, total[k]);
            }
            incl[t] = ex;
            sum_add(&incl[t], total[t]);
            if (t > 0) {
                const float p = float_of(sum_round(&ex));
                for (int64_t i = b; i < e; i++) y[r * n + i] = p + y[r * n + i];
            }
        }
    }
    free(total);
    free(incl);
}

Test(exact_sum, scan_replay_schedule_free) {
    uint64_t s = 5;
    const int64_t shapes[][3] = {{1, 1000, 7}, {3, 1001, 10}, {5, 333, 32}, {2, 5000, 3}, {1, 64, 64}, {4, 1, 8}};
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        const int64_t rows = shapes[c][0], n = shapes[c][1], tile = shapes[c][2];
        float *x = malloc(sizeof(float) * (size_t)(rows * n)), *y0 = malloc(sizeof(float) * (size_t)(rows * n)),
              *y = malloc(sizeof(float) * (size_t)(rows * n));
        for (int kind = 0; kind < 3; kind++) {
            for (int64_t i = 0; i < rows * n; i++)
                x[i] = kind == 0 ? in_range(&s, -10, 10) : kind == 1 ? any_finite(&s) : in_range(&s, -149, 100);
            replay(x, rows, n, tile, 0, y0);
            for (int seed = 1; seed <= 8; seed++) {
                replay(x, rows, n, tile, (uint64_t)seed * 7919, y);
                cr_expect(memcmp(y, y0, sizeof(float) * (size_t)(rows * n)) == 0,
                          "%lld x %lld tiles of %lld, kind %d, schedule %d: other bits", (long long)rows, (long long)n,
                          (long long)tile, kind, seed);
            }
        }
        /* 0/1 inputs: every prefix exact, so the in-order sums */
        for (int64_t i = 0; i < rows * n; i++) x[i] = rng(&s) % 3 == 0 ? 1.0f : 0.0f;
        replay(x, rows, n, tile, 99, y);
        for (int64_t r = 0; r < rows; r++) {
            float acc = 0;
            for (int64_t i = 0; i < n; i++) {
                acc = i == 0 ? x[r * n] : acc + x[r * n + i];
                cr_expect(y[r * n + i] == acc, "0/1 row %lld element %lld: %g, want %g", (long long)r, (long long)i,
                          (double)y[r * n + i], (double)acc);
                if (y[r * n + i] != acc) break;
            }
        }
        /* a row of -0.0 stays -0.0; a NaN poisons the rest of its row */
        for (int64_t i = 0; i < rows * n; i++) x[i] = -0.0f;
        if (n > 2) x[n / 2] = NAN;
        replay(x, rows, n, tile, 3, y);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < n; i++) {
                const int nan_here = r == 0 && n > 2 && i >= n / 2;
                cr_expect(nan_here ? isnan(y[r * n + i]) : bits_of(y[r * n + i]) == 0x80000000u,
                          "-0.0 / NaN row %lld element %lld: %g", (long long)r, (long long)i, (double)y[r * n + i]);
            }
        free(x);
        free(y0);
        free(y);
    }
}

/* ------------------------------------------- float64 look-back, every stop */

/* A float64 as nd_xs_pack's word (scan.cu's exact_word). */
static uint64_t word_of_f64(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return isnan(d) ? ~ND_XS_ENC_NAN : ~b;
}

/* A word's value added into a (nd_xs_unpack's pieces); 1 if it was the
 * limbs tag (nothing added). */
static int sum_add_word(sum_t *a, uint64_t word) {
    int follow, limb, neg;
    uint32_t part[3];
    a->flags |= nd_xs_unpack(word, &follow, &limb, part, &neg);
    if (follow) return 1;
    for (int j = 0; j < 3 && limb + j < ND_XS_LIMBS; j++) a->acc[limb + j] += neg ? -(int64_t)part[j] : (int64_t)part[j];
    return 0;
}

/* scan.cu's exact_prefix (ONE_WORD, F64) for tile t of a row whose tiles
 * have totals tot[] and published words head[] (head[k] for k < t), when
 * the nearest published prefix is `d` tiles back (d > t: none, the
 * look-back runs to the row's start): the float64 windows of 32 lanes
 * (butterfly, span bound, joined by nd_xs_add_f64), the fall-back to limbs
 * (from scratch, as the kernel reruns exact_lookback), the inclusive
 * prefix's word (the float64 when its add was exact, else nd_xs_pack of
 * the limbs). *prefix: the exclusive prefix rounded; *via_f64: whether the
 * float64 path held. */
static uint64_t kernel_prefix(const float *tot, const uint64_t *head, int64_t t, int64_t d, uint32_t *prefix,
                              int *via_f64) {
    double e = -0.0;
    int ok = 1;
    for (int64_t w0 = 1; t > 0; w0 += 32) {
        double v[32], w[32];
        int s = 32, lo = 1 << 20, hi = -(1 << 20);
        for (int l = 0; l < 32; l++) {
            const int64_t k = w0 + l;
            if ((k > t || k == d) && s == 32) s = l;
        }
        for (int l = 0; l < 32; l++) {
            const int64_t k = w0 + l;
            v[l] = l < s ? (double)tot[t - k] : -0.0;
            if (l == s && k <= t) {
                if (~head[t - k] == ND_XS_TAG_LIMBS) ok = 0;
                const uint64_t enc = ~head[t - k];
                memcpy(&v[l], &enc, 8);
            }
            int a, b;
            nd_xs_f64_span(v[l], &a, &b);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
        for (int off = 16; off > 0; off >>= 1) {
            for (int l = 0; l < 32; l++) w[l] = v[l] + v[l ^ off];
            memcpy(v, w, sizeof v);
        }
        if (hi - lo > ND_XS_F64_SPAN) ok = 0;
        e = nd_xs_add_f64(e, v[0], &ok);
        if (!ok || s < 32) break;
    }
    *via_f64 = ok;
    sum_t ex = {{0}, 0};
    if (ok) {
        *prefix = bits_of((float)e); /* e exact: rounded once */
        int ok2 = 1;
        const double inc = nd_xs_add_f64(e, (double)tot[t], &ok2);
        if (ok2) return word_of_f64(inc);
        cr_assert(!sum_add_word(&ex, word_of_f64(e)), "an exact float64 is never the limbs tag");
    } else {
        for (int64_t k = 1; k <= t; k++) {
            if (k == d) {
                if (sum_add_word(&ex, head[t - k])) return 0; /* limbs: the caller adds them */
                break;
            }
            sum_add(&ex, tot[t - k]);
        }
        *prefix = sum_round(&ex);
    }
    sum_add(&ex, tot[t]);
    uint32_t limbs[ND_XS_LIMBS];
    nd_xs_normalise(ex.acc, 0, 0, limbs);
    return nd_xs_pack(limbs, ex.flags);
}

/* Every tile's prefix and published word are the exact sum's, whichever
 * tile its look-back stopped at (every distance, and none): rows of up to
 * 100 tile totals (windows of 32 joined), narrow ranges (the float64 path
 * holds), wide ones and subnormals (it falls back), sums that carry past
 * 53 bits only in their partial sums, cancellation to +0.0, -0.0 rows,
 * infinities. A published word the limbs tag stands for the limbs: the
 * look-back that meets it adds the reference limbs. */
Test(exact_sum, float64_lookback_every_stop) {
    uint64_t s = 11;
    int f64 = 0, limbs_path = 0;
    for (int trial = 0; trial < 120; trial++) {
        const int kind = trial % 8;
        const int64_t tpr = 1 + (int64_t)(rng(&s) % 100);
        float tot[100];
        uint64_t head[100];
        for (int64_t t = 0; t < tpr; t++) {
            float v;
            switch (kind) {
            case 0: v = in_range(&s, -8, 8); break;
            case 1: v = in_range(&s, -149, 100); break;
            case 2: v = any_finite(&s); break;
            case 3: v = (float)(int)(rng(&s) % 2001) - 1000.0f; break;
            /* 2^24 - 1 and 2^-22 style terms: few bits each, but their
             * partial sums carry past 53 bits */
            case 4: v = rng(&s) & 1 ? ldexpf(0x1.fffffep23f, 30) : ldexpf(rng(&s) & 1 ? 1.0f : -1.0f, -16); break;
            case 5: v = t % 2 ? -tot[t - 1] : in_range(&s, -149, 127); break; /* cancels to +0.0 every other tile */
            case 6: v = rng(&s) % 5 ? -0.0f : ldexpf((float)(int)(rng(&s) % 9) - 4.0f, -149); break;
            default: v = rng(&s) % 40 ? in_range(&s, 0, 30) : rng(&s) & 1 ? INFINITY : -INFINITY; break;
            }
            tot[t] = v;
        }
        sum_t ref = {{0}, 0};
        for (int64_t t = 0; t < tpr; t++) {
            const uint32_t want_prefix = sum_round(&ref);
            sum_t incl = ref;
            sum_add(&incl, tot[t]);
            uint32_t limbs[ND_XS_LIMBS];
            nd_xs_normalise(incl.acc, 0, 0, limbs);
            const uint64_t want_word = nd_xs_pack(limbs, incl.flags);
            for (int64_t d = 1; d <= t + 1; d++) {
                uint32_t prefix;
                int via;
                uint64_t word = kernel_prefix(tot, head, t, d, &prefix, &via);
                if (word == 0) { /* met a limbs prefix: add its limbs */
                    sum_t ex = {{0}, 0};
                    for (int64_t k = 1; k < d; k++) sum_add(&ex, tot[t - k]);
                    sum_t before = {{0}, 0};
                    for (int64_t k = 0; k <= t - d; k++) sum_add(&before, tot[k]);
                    sum_add_limbs(&ex, &before);
                    prefix = sum_round(&ex);
                    sum_add(&ex, tot[t]);
                    nd_xs_normalise(ex.acc, 0, 0, limbs);
                    word = nd_xs_pack(limbs, ex.flags);
                }
                f64 += via;
                limbs_path += !via;
                if (t > 0)
                    cr_expect(prefix == want_prefix || (isnan(float_of(prefix)) && isnan(float_of(want_prefix))),
                              "kind %d tile %lld stop %lld (f64 %d): prefix %08x, want %08x", kind, (long long)t,
                              (long long)d, via, prefix, want_prefix);
                cr_expect(word == want_word, "kind %d tile %lld stop %lld (f64 %d): word %016llx, want %016llx", kind,
                          (long long)t, (long long)d, via, (unsigned long long)word, (unsigned long long)want_word);
            }
            head[t] = want_word;
            ref = incl;
        }
    }
    cr_expect(f64 > 10000 && limbs_path > 10000, "both paths exercised: %d float64, %d limbs", f64, limbs_path);
}

/* ------------------------------------------- exact_ws's carries, replayed */

/* A block's look-back state in scan_ws.cuh (WsCarry, its limbs, its last
 * tile). */
typedef struct {
    double e;
    int limbs;
    sum_t acc;
    int64_t prev;
} ws_block;

static void ws_block_reset(ws_block *b) {
    b->e = -0.0;
    b->limbs = 0;
    memset(&b->acc, 0, sizeof b->acc);
}

/* ws_lookback: the totals of tiles [from, to) added to the block's carry,
 * 256 a window (ws_window's lanes), joined by a checked add; the first
 * window that could round moves the carry into the limbs (the float64's
 * word pieces, as ws_to_limbs) and adds itself and the rest there. */
static void ws_add_totals(ws_block *b, const float *tot, int64_t from, int64_t to, int *fell_back) {
    for (int64_t w0 = from; w0 < to; w0 += 256) {
        const int n = (int)(to - w0 < 256 ? to - w0 : 256);
        if (!b->limbs) {
            int ok;
            const double x = ws_window(tot + w0, n, ND_XS_F64_SPAN - 2, &ok);
            const double e = nd_xs_add_f64(b->e, x, &ok);
            if (ok) {
                b->e = e;
                continue;
            }
            b->limbs = 1;
            *fell_back = 1;
            cr_assert(sum_add_word(&b->acc, word_of_f64(b->e)) == 0, "a float64 is one word");
        }
        for (int i = 0; i < n; i++) sum_add(&b->acc, tot[w0 + i]);
    }
}

/* exact_ws's prefixes for rows x tpr tiles with totals tot[]: tickets
 * handed in order to `blocks` blocks drawn at random (seed), each block's
 * look-back adding the totals since its last tile of the same row (or
 * since the row's start). prefix[g]: the rounded exclusive prefix (0 for
 * a row's first tile, which takes none). */
static void ws_replay(const float *tot, int64_t rows, int64_t tpr, int blocks, uint64_t seed, uint32_t *prefix,
                      int *fell_back) {
    ws_block *b = malloc(sizeof(ws_block) * (size_t)blocks);
    for (int i = 0; i < blocks; i++) {
        ws_block_reset(&b[i]);
        b[i].prev = -1;
    }
    uint64_t s = seed;
    for (int64_t g = 0; g < rows * tpr; g++) {
        ws_block *k = &b[rng(&s) % (uint64_t)blocks];
        const int64_t first = g - g % tpr;
        prefix[g] = 0;
        if (k->prev < first) ws_block_reset(k);
        if (g > first) {
            ws_add_totals(k, tot, k->prev < first ? first : k->prev, g, fell_back);
            prefix[g] = k->limbs ? sum_round(&k->acc) : bits_of((float)k->e);
        }
        k->prev = g;
    }
    free(b);
}

/* Whichever blocks take whichever tiles, every prefix is the exact sum of
 * the row's earlier totals rounded once: through the float64 windows, the
 * fall-back to the limbs, and the row changes. */
Test(exact_sum, ws_replay_schedule_free) {
    uint64_t s = 17;
    const int64_t shapes[][2] = {{1, 3000}, {3, 700}, {7, 37}, {4, 1}, {2, 257}};
    const int blocks[] = {1, 7, 132};
    int fell[5] = {0};
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        const int64_t rows = shapes[c][0], tpr = shapes[c][1], tiles = rows * tpr;
        float *tot = malloc(sizeof(float) * (size_t)tiles);
        uint32_t *want = malloc(sizeof(uint32_t) * (size_t)tiles), *got = malloc(sizeof(uint32_t) * (size_t)tiles);
        for (int kind = 0; kind < 5; kind++) {
            for (int64_t g = 0; g < tiles; g++)
                tot[g] = kind == 0 ? in_range(&s, -10, 10)
                         : kind == 1 ? in_range(&s, -149, 100)
                         : kind == 2 ? any_finite(&s)
                         : kind == 3 ? (rng(&s) % 50 ? (float)(int)(rng(&s) % 1000) - 500.0f
                                        : rng(&s) % 3 == 0 ? NAN : rng(&s) & 1 ? INFINITY : -INFINITY)
                                     : -0.0f;
            for (int64_t g = 0; g < tiles; g++) {
                const int64_t first = g - g % tpr;
                sum_t e = {{0}, 0};
                for (int64_t k = first; k < g; k++) sum_add(&e, tot[k]);
                want[g] = g > first ? sum_round(&e) : 0;
            }
            for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++)
                for (int seed = 1; seed <= 3; seed++) {
                    ws_replay(tot, rows, tpr, blocks[bi], (uint64_t)seed * 104729 + bi, got, &fell[kind]);
                    for (int64_t g = 0; g < tiles; g++) {
                        const int same = got[g] == want[g] || (isnan(float_of(got[g])) && isnan(float_of(want[g])));
                        cr_expect(same, "%lld x %lld, kind %d, %d blocks, schedule %d: tile %lld %08x, want %08x",
                                  (long long)rows, (long long)tpr, kind, blocks[bi], seed, (long long)g, got[g],
                                  want[g]);
                        if (!same) break;
                    }
                }
        }
        free(tot);
        free(want);
        free(got);
    }
    cr_expect(!fell[0] && !fell[3] && !fell[4], "moderate totals, integers and -0.0 stayed in float64");
    cr_expect(fell[1] && fell[2], "totals over the whole exponent range fell back to the limbs");
}
