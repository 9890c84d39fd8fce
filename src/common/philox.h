/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC'11) and the uniform/normal conversions of kernel_ir.h.
 *
 * Header-only and written in plain C integer arithmetic so that the CPU
 * interpreter, tests and the CUDA code generator (which can paste these
 * bodies into generated source) produce the same bits. A draw depends only on
 * (seed, stream, logical index).
 *
 * The mapping. One Philox call, key = (seed_lo, seed_hi) and counter =
 * (c_lo, c_hi, stream_lo, stream_hi), yields four 32-bit words. Read the
 * calls c = 0, 1, 2, ... of one (seed, stream) as a single stream of words,
 * word s being word s % 4 of call s / 4. A draw that needs k words (k = 1:
 * float32, float16 and bfloat16 uniform; k = 2: float64 uniform and float32
 * normal; k = 4: float64 normal) takes, for the element at logical index i,
 * the k words starting at word k*i. So W = 4/k consecutive indices share a
 * call: index i uses call i / W and its words (i % W)*k .. (i % W)*k + k-1.
 * Every word of a call is used and nothing is drawn twice, and a backend
 * that evaluates W consecutive indices together computes each call once
 * (cuRAND's Philox and JAX's threefry use their outputs the same way).
 * Indices that are not consecutive (views: offsets, strides, reversal) get
 * the same values: the mapping is a function of the index alone.
 *
 * Only the normal transform calls libm (sqrt, log, cos); backends with their
 * own vector math may differ from it by a few ulp. */
#ifndef ND_COMMON_PHILOX_H
#define ND_COMMON_PHILOX_H

#include <math.h>
#include <stdint.h>

#define ND_PHILOX_M0 0xD2511F53u
#define ND_PHILOX_M1 0xCD9E8D57u
#define ND_PHILOX_W0 0x9E3779B9u
#define ND_PHILOX_W1 0xBB67AE85u
#define ND_PHILOX_ROUNDS 10

typedef struct {
    uint32_t x[4];
} nd_philox4x32;

/* Ten rounds; the key is bumped between rounds (Random123's philox4x32_R). */
static inline nd_philox4x32 nd_philox4x32_10(uint64_t seed, uint64_t index, uint64_t stream) {
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    for (int r = 0; r < ND_PHILOX_ROUNDS; r++) {
        uint64_t p0 = (uint64_t)ND_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)ND_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += ND_PHILOX_W0;
        k1 += ND_PHILOX_W1;
    }
    nd_philox4x32 out = {{c0, c1, c2, c3}};
    return out;
}

/* [0, 1) with 24 random bits: exact in float32. */
static inline float nd_philox_u01_f32(uint32_t x) { return (float)(x >> 8) * 0x1p-24f; }
/* [0, 1) with 53 random bits from two words: exact in float64. */
static inline double nd_philox_u01_f64(uint32_t x0, uint32_t x1) {
    return ((double)(x0 >> 5) * 67108864.0 + (double)(x1 >> 6)) * 0x1p-53;
}

/* Words per draw (k above) and the calls' sharing (W = 4 / k), for a draw
 * computed in float64 (`wide`: float64 and non-float results) or float32. */
static inline int nd_philox_words(int wide, int normal) { return normal ? (wide ? 4 : 2) : (wide ? 2 : 1); }
static inline int nd_philox_share(int wide, int normal) { return 4 / nd_philox_words(wide, normal); }

/* The k words of the draw at `index` (k = nd_philox_words). */
static inline void nd_philox_draw_words(uint32_t *out, int k, uint64_t seed, uint64_t stream,
                                        uint64_t index) {
    uint64_t w = (uint64_t)(4 / k);
    nd_philox4x32 r = nd_philox4x32_10(seed, index / w, stream);
    for (int j = 0; j < k; j++) out[j] = r.x[(index % w) * (uint64_t)k + (uint64_t)j];
}

static inline float nd_philox_uniform_f32(uint64_t seed, uint64_t stream, uint64_t index) {
    uint32_t x[1];
    nd_philox_draw_words(x, 1, seed, stream, index);
    return nd_philox_u01_f32(x[0]);
}
static inline double nd_philox_uniform_f64(uint64_t seed, uint64_t stream, uint64_t index) {
    uint32_t x[2];
    nd_philox_draw_words(x, 2, seed, stream, index);
    return nd_philox_u01_f64(x[0], x[1]);
}

/* Box-Muller on the draw's words: u1 = 1 - U(first half) in (0, 1] (so log
 * is finite), u2 = U(second half). */
static inline float nd_philox_normal_f32(uint64_t seed, uint64_t stream, uint64_t index) {
    uint32_t x[2];
    nd_philox_draw_words(x, 2, seed, stream, index);
    float u1 = 1.0f - nd_philox_u01_f32(x[0]);
    float u2 = nd_philox_u01_f32(x[1]);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}
static inline double nd_philox_normal_f64(uint64_t seed, uint64_t stream, uint64_t index) {
    uint32_t x[4];
    nd_philox_draw_words(x, 4, seed, stream, index);
    double u1 = 1.0 - nd_philox_u01_f64(x[0], x[1]);
    double u2 = nd_philox_u01_f64(x[2], x[3]);
    return sqrt(-2.0 * log(u1)) * cos(6.28318530717958647692 * u2);
}

/* Integers in [0, r) (nd_random_integers), unbiased: Lemire's
 * multiply-shift with rejection ("Fast random integer generation in an
 * interval", 2019). A draw of b bits (b = 32 for results of up to 32 bits,
 * 64 for 64-bit ones) is x in [0, 2^b); m = x * r has the candidate
 * floor(m / 2^b) and the low part l = m mod 2^b. The candidates of the
 * 2^b mod r values of l below t = (2^b - r) mod r would come once too
 * often: those draws are rejected and drawn again. At most r < 2^b
 * values are rejected, so fewer than half the draws (none when r divides
 * 2^b); a candidate needs t (a division) only when l < r.
 *
 * The counters. The first attempt is an ordinary draw of k = b/32 words
 * (the mapping above: words k*i .. of the (seed, stream) word stream, W =
 * 4/k indices per call), so a kernel computes each call once for W
 * elements as it does for uniforms. Attempt a = 1, 2, ... of element i
 * takes the first k words of the call with counter i (not i / W) and
 * stream + a * 2^48: a stream of its own for every attempt, a call of its
 * own for every element and attempt, none of them a call of an ordinary
 * draw while fewer than 2^48 random calls follow a seed. Each retry
 * depends only on (seed, stream, i, a), so every backend, thread count and
 * tiling rejects and redraws the same elements the same way. */
#define ND_PHILOX_RETRY_SHIFT 48

static inline uint64_t nd_philox_retry_stream(uint64_t stream, uint32_t attempt) {
    return stream + ((uint64_t)attempt << ND_PHILOX_RETRY_SHIFT);
}

/* Words per integer draw: 2 for 64-bit results, else 1. */
static inline int nd_philox_int_words(int wide) { return wide ? 2 : 1; }

/* High 64 bits of a * b, in 32-bit halves (no 128-bit type needed). */
static inline uint64_t nd_mulhi64(uint64_t a, uint64_t b) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* [0, r), 1 <= r <= 2^32, from the first attempt's word x. */
static inline uint32_t nd_philox_int32(uint32_t x, uint64_t r, uint64_t seed, uint64_t stream,
                                       uint64_t index) {
    uint64_t m = (uint64_t)x * r;
    if ((uint32_t)m < r) {
        uint32_t r32 = (uint32_t)r; /* 0 for r = 2^32, which rejects nothing */
        uint32_t t = r32 ? (0u - r32) % r32 : 0u;
        for (uint32_t a = 1; (uint32_t)m < t; a++)
            m = (uint64_t)nd_philox4x32_10(seed, index, nd_philox_retry_stream(stream, a)).x[0] * r;
    }
    return (uint32_t)(m >> 32);
}

/* [0, r), 1 <= r < 2^64, from the first attempt's words (x0 the high half). */
static inline uint64_t nd_philox_int64(uint32_t x0, uint32_t x1, uint64_t r, uint64_t seed,
                                       uint64_t stream, uint64_t index) {
    uint64_t x = (uint64_t)x0 << 32 | x1, l = x * r;
    if (l < r) {
        uint64_t t = (0u - r) % r;
        for (uint32_t a = 1; l < t; a++) {
            nd_philox4x32 q = nd_philox4x32_10(seed, index, nd_philox_retry_stream(stream, a));
            x = (uint64_t)q.x[0] << 32 | q.x[1];
            l = x * r;
        }
    }
    return nd_mulhi64(x, r);
}

/* Two integers from one word (ranges r <= 2^16 with few rejections).
 *
 * The draw. Element pairs (2p, 2p+1) share word p of the (seed, stream)
 * word stream (the mapping above with k = 1 at index p: call p / 4, word
 * p % 4; so eight elements a call, element i reading word (i % 8) / 2 of
 * call i / 8). From that word x, with R = r^2 <= 2^32:
 *   m1 = x * r:  a1 = floor(m1 / 2^32), l1 = m1 mod 2^32
 *   m2 = l1 * r: a2 = floor(m2 / 2^32), l2 = m2 mod 2^32
 * element 2p takes a1 and element 2p+1 takes a2. Since x * R = (a1 * r +
 * a2) * 2^32 + l2, (a1, a2) are the base-r digits of Lemire's draw V =
 * floor(x * R / 2^32) in [0, R) and l2 its low part: rejecting l2 below t
 * = 2^32 mod R makes V, and so the two digits, uniform and independent
 * (Brackett-Rozinsky and Lemire, "Batched ranged random integer
 * generation", 2024). Two multiply pairs and one test per two elements, and
 * half the Philox calls of the one-word draw.
 *
 * When. A rejected word redraws both elements, so the pair form is used
 * only where it rejects little: r <= 2^16 and t < 2^24 (at most one word in
 * 256; on a GPU a warp takes the out-of-line redraw when any of its lanes
 * does, so the rate must stay far below the one-word draw's break-even).
 * That holds for every r <= 4144, every power of two, 65535, 65536, ...;
 * r = 40000 (t/2^32 = 0.25) and r = 46341 (0.5) keep the one-word draw,
 * as do all r > 2^16. The choice depends on r alone (made when the draw is
 * recorded, nd_philox_pairs), so every backend makes it alike.
 *
 * The redraw. Attempt a = 1, 2, ... of pair p takes word 0 of the call
 * with counter p and stream + a * 2^48 (the one-word retries' streams, at
 * the pair's index: a call of its own for every pair and attempt). */
#define ND_PHILOX_PAIR_MAX_RANGE 65536u
#define ND_PHILOX_PAIR_MAX_REJECT (1u << 24)

/* t = 2^32 mod r^2 for 1 <= r <= 2^16 (0 for r = 2^16). */
static inline uint32_t nd_philox_pair_threshold(uint64_t r) {
    return (uint32_t)(((uint64_t)1 << 32) % (r * r));
}

/* Whether range r draws two elements a word (the rule above). */
static inline int nd_philox_pairs(uint64_t r) {
    return r >= 1 && r <= ND_PHILOX_PAIR_MAX_RANGE && nd_philox_pair_threshold(r) < ND_PHILOX_PAIR_MAX_REJECT;
}

/* The digits of word x: a1 << 16 | a2, and the low part l2 in *low. */
static inline uint32_t nd_philox_pair_digits(uint32_t x, uint32_t r, uint32_t *low) {
    uint64_t m1 = (uint64_t)x * r, m2 = (uint64_t)(uint32_t)m1 * r;
    *low = (uint32_t)m2;
    return (uint32_t)(m1 >> 32) << 16 | (uint32_t)(m2 >> 32);
}

/* Pair p's two values (a1 << 16 | a2) from its first word x; t =
 * nd_philox_pair_threshold(r). */
static inline uint32_t nd_philox_pair(uint32_t x, uint32_t r, uint32_t t, uint64_t seed, uint64_t stream,
                                      uint64_t pair) {
    uint32_t l, v = nd_philox_pair_digits(x, r, &l);
    for (uint32_t a = 1; l < t; a++)
        v = nd_philox_pair_digits(nd_philox4x32_10(seed, pair, nd_philox_retry_stream(stream, a)).x[0], r, &l);
    return v;
}

/* Element `index`'s value in [0, r) by the pair form (a reference). */
static inline uint32_t nd_philox_integer_pair(uint64_t r, uint64_t seed, uint64_t stream, uint64_t index) {
    uint32_t x[1];
    nd_philox_draw_words(x, 1, seed, stream, index >> 1);
    uint32_t v = nd_philox_pair(x[0], (uint32_t)r, nd_philox_pair_threshold(r), seed, stream, index >> 1);
    return index & 1 ? v & 0xffffu : v >> 16;
}

/* The one-word (two-word when wide) draw at `index` by the mapping above
 * (a reference for tests and the backends: wide = 64-bit result). */
static inline uint64_t nd_philox_integer_words(int wide, uint64_t r, uint64_t seed, uint64_t stream,
                                               uint64_t index) {
    uint32_t x[2] = {0, 0};
    nd_philox_draw_words(x, nd_philox_int_words(wide), seed, stream, index);
    return wide ? nd_philox_int64(x[0], x[1], r, seed, stream, index)
                : nd_philox_int32(x[0], r, seed, stream, index);
}

/* nd_random_integers' draw in [0, r) at `index`: the pair form where
 * nd_philox_pairs(r), else the one- or two-word form (wide: a 64-bit
 * dtype). */
static inline uint64_t nd_philox_integer(int wide, uint64_t r, uint64_t seed, uint64_t stream,
                                         uint64_t index) {
    if (nd_philox_pairs(r)) return nd_philox_integer_pair(r, seed, stream, index);
    return nd_philox_integer_words(wide, r, seed, stream, index);
}

#endif
