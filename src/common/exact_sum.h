/* Exact sums of float32 values: the carries of the CUDA `exact` scan
 * (backends/cuda/prims/scan.cu), checked on the host by
 * tests/test_exact_sum.c.
 *
 * A finite float32 is m * 2^(p - 149) with m < 2^24 and p in [0, 253]
 * (p = biased exponent - 1, or 0 for subnormals), so every sum of float32
 * values is an integer N times 2^-149. N is held in ND_XS_LIMBS limbs of 32
 * bits, least significant first, two's complement over 320 bits: a float32
 * is below 2^128 = 2^277 * 2^-149, and a sum of up to 2^31 of them below
 * 2^308 in magnitude, so the top limb keeps its sign with room to spare.
 * Sums of limbs are integer sums, so they are the same whatever the order
 * or grouping of the terms: a scan whose carries are exact gives the same
 * bits wherever its look-back stopped. Limbs are added lazily in int64
 * (ND_XS_LIMBS accumulators; each term adds less than 2^32 to two of
 * them), normalised once (nd_xs_normalise) and rounded once to the nearest
 * float32, ties to even (nd_xs_round).
 *
 * What limbs cannot hold is kept beside them as order-free flags (OR):
 * ND_XS_NAN (a NaN term), ND_XS_PINF / ND_XS_NINF (a +inf / -inf term),
 * ND_XS_SOME (a term other than -0.0). The rounded sum is NaN if there was
 * a NaN or both infinities, else the infinity there was, else -0.0 if
 * every term was -0.0 (no ND_XS_SOME: the sign NumPy's in-order sum
 * gives), else N rounded (+0.0 for N = 0, as x + (-x) is +0.0). A term that
 * is itself inf (a tile's total that overflowed) counts as inf; a finite
 * exact sum beyond the float32 range rounds to inf. The in-order float sum
 * may instead overflow on the way, or not overflow where this does
 * (docs/internals.md).
 *
 * ND_XS_FN is `static inline` in C and `__host__ __device__ inline` in
 * CUDA; the functions take plain pointers, so the kernel can pass shared
 * memory. */
#ifndef ND_COMMON_EXACT_SUM_H
#define ND_COMMON_EXACT_SUM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define ND_XS_FN static __host__ __device__ inline
#else
#define ND_XS_FN static inline
#endif

enum {
    ND_XS_LIMBS = 10,
    ND_XS_NAN = 1,
    ND_XS_PINF = 2,
    ND_XS_NINF = 4,
    ND_XS_SOME = 8, /* some term was not -0.0 */
    ND_XS_FLAGS = 15
};

/* A float32's bits as a term: returns its flags; for a finite nonzero
 * value, *limb = the limb its bits start in and *v = +-(m << s), s < 32,
 * (below 2^55: its low 32 bits go to limb *limb, the rest to *limb + 1 <=
 * 8); otherwise *v = 0 (*limb = 0). */
ND_XS_FN unsigned nd_xs_place(uint32_t bits, int *limb, int64_t *v) {
    const uint32_t e = bits >> 23 & 0xff, mant = bits & 0x7fffff;
    *limb = 0;
    *v = 0;
    if (e == 0xff) return mant ? ND_XS_NAN : bits >> 31 ? ND_XS_NINF : ND_XS_PINF;
    if (bits == 0x80000000u) return 0; /* -0.0 */
    if ((bits & 0x7fffffffu) == 0) return ND_XS_SOME;
    const int p = e ? (int)e - 1 : 0;
    const int64_t m = (int64_t)(e ? mant | 0x800000u : mant) << (p & 31);
    *limb = p >> 5;
    *v = bits >> 31 ? -m : m;
    return ND_XS_SOME;
}

/* A placed term v as v = lo + hi * 2^32 (both signed, |lo| < 2^32): what
 * it adds to its limb and to the one above. */
ND_XS_FN void nd_xs_split(int64_t v, int64_t *lo, int64_t *hi) {
    *hi = v >= 0 ? v >> 32 : -((-v) >> 32);
    *lo = v - *hi * ((int64_t)1 << 32);
}

/* acc[limb] and acc[limb + 1] += the term v placed by nd_xs_place. */
ND_XS_FN void nd_xs_add_placed(int64_t *acc, int limb, int64_t v) {
    int64_t lo, hi;
    nd_xs_split(v, &lo, &hi);
    acc[limb] += lo;
    acc[limb + 1] += hi;
}

/* acc += the float32 whose bits are `bits`; returns its flags. */
ND_XS_FN unsigned nd_xs_add_bits(int64_t *acc, uint32_t bits) {
    int limb;
    int64_t v;
    const unsigned f = nd_xs_place(bits, &limb, &v);
    if (v) nd_xs_add_placed(acc, limb, v);
    return f;
}

/* The limbs of acc + (v at `limb`, as nd_xs_add_placed; v = 0 for none),
 * carried: each limb below the top one in [0, 2^32), the top one the
 * signed rest (it fits while every accumulator stayed below 2^62 and the
 * value below 2^319). */
ND_XS_FN void nd_xs_normalise(const int64_t *acc, int limb, int64_t v, uint32_t *limbs) {
    int64_t lo, hi, carry = 0;
    nd_xs_split(v, &lo, &hi);
    for (int l = 0; l < ND_XS_LIMBS; l++) {
        int64_t x = acc[l] + carry;
        if (l == limb) x += lo;
        if (l == limb + 1) x += hi;
        limbs[l] = (uint32_t)x;
        carry = (x - (int64_t)(uint32_t)x) / ((int64_t)1 << 32); /* exact: x minus its low bits */
    }
}

/* Leading zeros of a nonzero word. */
ND_XS_FN int nd_xs_clz(uint32_t x) {
#ifdef __CUDA_ARCH__
    return __clz((int)x);
#else
    return __builtin_clz(x);
#endif
}

/* The float32 bits nearest (ties to even) the normalised limbs' value
 * under the flags' rules (above). */
ND_XS_FN uint32_t nd_xs_round(const uint32_t *limbs, unsigned flags) {
    if ((flags & ND_XS_NAN) || (flags & (ND_XS_PINF | ND_XS_NINF)) == (ND_XS_PINF | ND_XS_NINF)) return 0x7fc00000u;
    if (flags & ND_XS_PINF) return 0x7f800000u;
    if (flags & ND_XS_NINF) return 0xff800000u;
    if (!(flags & ND_XS_SOME)) return 0x80000000u;
    const uint32_t sign = (int32_t)limbs[ND_XS_LIMBS - 1] < 0 ? 0x80000000u : 0;
    /* The magnitude (negated on the fly: -N = ~N + 1, the +1 carried up
     * through the limbs that are 0), its top nonzero limb h, the two below
     * it and whether any bit further down is set, in one pass with no
     * array (the kernel's lane would keep one in local memory). */
    int h = -1, below = 0, sticky = 0;
    uint32_t carry = sign ? 1 : 0, p1 = 0, p2 = 0, top = 0, mid = 0, low = 0;
    for (int l = 0; l < ND_XS_LIMBS; l++) {
        const uint32_t x = (sign ? ~limbs[l] : limbs[l]) + carry;
        carry = carry && x == 0;
        if (x) {
            h = l;
            top = x;
            mid = p1;
            low = p2;
            sticky = below;
        }
        below |= p2 != 0;
        p2 = p1;
        p1 = x;
    }
    if (h < 0) return 0; /* an exact zero: +0.0 */
    const int lz = nd_xs_clz(top);
    const int b = 32 * h + 32 - lz; /* the bit length of N */
    if (b <= 24) return sign | top;  /* N * 2^-149 < 2^-125: its bits are N */
    /* w: N's top 64 bits, its leading 1 at bit 63 (the bits shifted in
     * below come from limb h - 2, and only the sticky bit needs them). */
    const uint64_t w = ((uint64_t)top << 32 | mid) << lz;
    const uint64_t q = w >> 40, guard = w >> 39 & 1;
    sticky |= (w & (((uint64_t)1 << 39) - 1)) != 0 || low != 0;
    /* N ~ q * 2^sh with q in [2^23, 2^24): the float32 q * 2^(sh - 149)
     * has the bits (sh << 23) + q (q = 2^24 after rounding up carries into
     * the exponent, as it should) */
    const uint64_t sh = (uint64_t)(b - 24);
    const uint64_t r = (sh << 23) + q + (guard && (sticky || (q & 1)));
    return sign | (r >= 0x7f800000u ? 0x7f800000u : (uint32_t)r);
}

/* A published prefix in one 64-bit word, when it fits: the bitwise NOT of
 * an encoding `enc` (so that 0, what a zeroed entry holds, is never a
 * published word: it would be enc = all ones, a NaN never used). enc is
 * the exact sum as a float64 when it has at most 53 significant bits
 * (float32 sums span 2^-149 .. 2^308, inside float64's exponent range): a
 * zero's sign is the flags' ND_XS_SOME (+0.0: some term was not -0.0), a
 * NaN or an infinity stands for the flags that round to it (the finite
 * part no longer matters); otherwise enc is ND_XS_TAG_LIMBS, and the
 * limbs are published beside it. */
#define ND_XS_TAG_LIMBS 0x7ff4000000000001ull
#define ND_XS_ENC_NAN 0x7ff8000000000000ull
#define ND_XS_ENC_PINF 0x7ff0000000000000ull
#define ND_XS_ENC_NINF 0xfff0000000000000ull

ND_XS_FN int nd_xs_ctz(uint32_t x) {
#ifdef __CUDA_ARCH__
    return __ffs((int)x) - 1;
#else
    return __builtin_ctz(x);
#endif
}

/* The word for normalised limbs and their flags. */
ND_XS_FN uint64_t nd_xs_pack(const uint32_t *limbs, unsigned flags) {
    if ((flags & ND_XS_NAN) || (flags & (ND_XS_PINF | ND_XS_NINF)) == (ND_XS_PINF | ND_XS_NINF)) return ~ND_XS_ENC_NAN;
    if (flags & ND_XS_PINF) return ~ND_XS_ENC_PINF;
    if (flags & ND_XS_NINF) return ~ND_XS_ENC_NINF;
    const uint64_t sign = (int32_t)limbs[ND_XS_LIMBS - 1] < 0 ? (uint64_t)1 << 63 : 0;
    /* the magnitude's top and bottom nonzero limbs (h, lo) and the three
     * from lo up, in one pass (negation on the fly, as nd_xs_round) */
    int h = -1, lo = -1;
    uint32_t carry = sign ? 1 : 0, top = 0, w0 = 0, w1 = 0, w2 = 0;
    for (int l = 0; l < ND_XS_LIMBS; l++) {
        const uint32_t x = (sign ? ~limbs[l] : limbs[l]) + carry;
        carry = carry && x == 0;
        if (x) {
            if (lo < 0) lo = l;
            h = l;
            top = x;
        }
        if (lo >= 0 && l == lo) w0 = x;
        if (lo >= 0 && l == lo + 1) w1 = x;
        if (lo >= 0 && l == lo + 2) w2 = x;
    }
    if (h < 0) return ~((flags & ND_XS_SOME) ? (uint64_t)0 : (uint64_t)1 << 63);
    const int b = 32 * h + 32 - nd_xs_clz(top), tz = nd_xs_ctz(w0), z = 32 * lo + tz;
    if (b - z > 53) return ~ND_XS_TAG_LIMBS;
    /* M: bits [z, b) of the magnitude (h <= lo + 2; w2 only below bit 53) */
    const uint64_t low64 = (uint64_t)w1 << 32 | w0;
    const uint64_t m = tz ? low64 >> tz | (uint64_t)w2 << (64 - tz) : low64;
    const int len = b - z;
    return ~(sign | (uint64_t)(b + 873) << 52 | ((m << (53 - len)) & (((uint64_t)1 << 52) - 1)));
}

/* A published word's value as terms: returns its flags and sets *limbs_follow
 * (ND_XS_TAG_LIMBS: the value is in the limbs published beside it; the
 * flags are then ND_XS_SOME and nothing else is set); for a finite nonzero
 * value, *limb and part[0..2], its magnitude's 32-bit pieces from that limb
 * up (the ones past the top limb are 0), and *neg. */
ND_XS_FN unsigned nd_xs_unpack(uint64_t word, int *limbs_follow, int *limb, uint32_t *part, int *neg) {
    const uint64_t enc = ~word;
    *limbs_follow = 0;
    *limb = 0;
    *neg = (int)(enc >> 63);
    part[0] = part[1] = part[2] = 0;
    if (enc == ND_XS_TAG_LIMBS) {
        *limbs_follow = 1;
        return ND_XS_SOME;
    }
    const unsigned e = (unsigned)(enc >> 52 & 0x7ff);
    const uint64_t frac = enc & (((uint64_t)1 << 52) - 1);
    if (e == 0x7ff) return frac ? ND_XS_NAN : *neg ? ND_XS_NINF : ND_XS_PINF;
    if (e == 0) return *neg ? 0 : ND_XS_SOME; /* a zero (no subnormal is packed) */
    /* m * 2^(p - 149), p = e - 1075 + 149, brought to p >= 0 (the bits
     * shifted out are 0: the value is a multiple of 2^-149) */
    uint64_t m = frac | (uint64_t)1 << 52;
    int p = (int)e - 926;
    if (p < 0) {
        m >>= -p;
        p = 0;
    }
    const int s = p & 31;
    *limb = p >> 5;
    part[0] = (uint32_t)(m << s);
    part[1] = (uint32_t)((m << s) >> 32);
    part[2] = s ? (uint32_t)(m >> (64 - s)) : 0;
    return ND_XS_SOME;
}

/* a + b in float64, and *ok cleared unless it was exact: with |big| >=
 * |small|, (big + small) - big is exact, so the add was iff that gives
 * small back. A non-finite sum follows the flags' rules by itself (a NaN
 * or both infinities: NaN; one infinity: it), and a float64 sum of float32
 * sums never overflows. -0.0 is the identity (+0.0 + -0.0 = +0.0) and a
 * sum is -0.0 only if every term was: the ND_XS_SOME rule. So exact adds
 * of float32 terms and packed words give, in any order, the float64 whose
 * word nd_xs_pack gives for the same terms (scan.cu's float64 look-back). */
ND_XS_FN double nd_xs_add_f64(double a, double b, int *ok) {
    const double s = a + b;
    const int a_big = fabs(a) >= fabs(b);
    if (isfinite(s) && s - (a_big ? a : b) != (a_big ? b : a)) *ok = 0;
    return s;
}

/* The exponents of a float64's lowest and highest set bits, for a bound
 * on sums (neutral values for zeros, infinities and NaNs, which need
 * none: no float32 sum is a float64 subnormal). Terms that are multiples
 * of 2^lo and below 2^(hi + 1) have partial sums, at most 64 of them in any
 * order, that are multiples of 2^lo below 2^(hi + 7): exact in float64
 * while hi - lo <= ND_XS_F64_SPAN. */
enum { ND_XS_F64_SPAN = 46 };
ND_XS_FN void nd_xs_f64_span(double d, int *lo, int *hi) {
    uint64_t b;
    memcpy(&b, &d, 8);
    const int e = (int)(b >> 52 & 0x7ff);
    if (e == 0 || e == 0x7ff) {
        *lo = 1 << 20;
        *hi = -(1 << 20);
        return;
    }
    const uint64_t m = b | (uint64_t)1 << 52;
#ifdef __CUDA_ARCH__
    const int tz = __ffsll((long long)m) - 1;
#else
    const int tz = __builtin_ctzll(m);
#endif
    *lo = e - 1075 + tz;
    *hi = e - 1023;
}

#endif
