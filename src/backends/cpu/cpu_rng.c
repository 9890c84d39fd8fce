/* Random draws of a tile (common/philox.h's mapping): the Philox calls a
 * tile needs, computed once each (W = 4/k consecutive indices share a call),
 * vectorised across calls (an AVX2 path, else loops the compiler
 * vectorises), then the uniform/normal transforms over the tile. Bits are
 * exactly those of common/philox.h; normals differ from it only by the
 * vector log/cos ulps. */
#include "backends/cpu/cpu_vectorize.h"

#include <string.h>

#include "backends/cpu/cpu_kernel.h"
#include "common/philox.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define RNG_LOOP static inline __attribute__((always_inline)) void
#define RNG_AVX2 __builtin_cpu_supports("avx2")
#else
#define RNG_LOOP static inline void
#define RNG_AVX2 0
#endif

/* Draws are made in chunks of this many elements, so that a chunk's calls,
 * words and Box-Muller temporaries fit the three scratch registers. */
#define RNG_CHUNK 256
/* Calls of one chunk: one per element at most, plus one for a misaligned
 * start. */
#define RNG_MAX_CALLS (RNG_CHUNK + 1)
_Static_assert(4 * 4 * RNG_MAX_CALLS + 8 * RNG_MAX_CALLS + 4 * RNG_CHUNK <= ND_CPU_REG_BYTES,
               "s0: a chunk's calls, counters and slots");
_Static_assert(4 * 4 * RNG_CHUNK + 2 * 8 * RNG_CHUNK <= ND_CPU_REG_BYTES,
               "s1: gathered words and Box-Muller inputs");
_Static_assert(3 * 8 * RNG_CHUNK <= ND_CPU_REG_BYTES, "s2: Box-Muller temporaries");

/* Calls c = ctr[i]: words at out[4i .. 4i+3]. */
RNG_LOOP philox_calls(uint32_t *restrict out, const uint64_t *ctr, int64_t n, uint64_t seed,
                      uint64_t stream) {
    for (int64_t i = 0; i < n; i++) {
        nd_philox4x32 r = nd_philox4x32_10(seed, ctr[i], stream);
        for (int q = 0; q < 4; q++) out[4 * i + q] = r.x[q];
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* lo/hi 32 bits of m * c for eight lanes: even lanes from one 32x32->64
 * multiply, odd lanes from another, recombined by blends (the compiler's own
 * vectorisation of the scalar loop spends most of its time in shuffles). */
__attribute__((target("avx2"))) static inline void mulhilo8(__m256i c, __m256i m, __m256i *lo,
                                                            __m256i *hi) {
    __m256i pe = _mm256_mul_epu32(c, m);
    __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* Counters ctr[0..8) as the four counter words of eight lanes. */
__attribute__((target("avx2"))) static inline void load_ctr8(const uint64_t *ctr, __m256i *lo,
                                                             __m256i *hi) {
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    __m256i a = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)ctr), split);
    __m256i b = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(ctr + 4)), split);
    *lo = _mm256_permute2x128_si256(a, b, 0x20);
    *hi = _mm256_permute2x128_si256(a, b, 0x31);
}

/* Lane l's four words become call l's, in order (a 4x8 transpose). */
__attribute__((target("avx2"))) static inline void store_calls8(uint32_t *out, __m256i c0, __m256i c1,
                                                                __m256i c2, __m256i c3) {
    __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i *o = (__m256i *)out;
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}

/* Sixteen calls per step, as two independent sets of eight whose rounds
 * interleave (one set alone waits on its multiplies' latency); returns how
 * many calls it made (a multiple of 16). */
__attribute__((target("avx2"))) static int64_t philox_avx2(uint32_t *restrict out,
                                                           const uint64_t *ctr, int64_t n,
                                                           uint64_t seed, uint64_t stream) {
    const __m256i m0 = _mm256_set1_epi32((int)ND_PHILOX_M0), m1 = _mm256_set1_epi32((int)ND_PHILOX_M1);
    const __m256i s0 = _mm256_set1_epi32((int)(uint32_t)stream);
    const __m256i s1 = _mm256_set1_epi32((int)(uint32_t)(stream >> 32));
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i c0[2], c1[2], c2[2], c3[2];
        for (int h = 0; h < 2; h++) {
            load_ctr8(ctr + i + 8 * h, &c0[h], &c1[h]);
            c2[h] = s0;
            c3[h] = s1;
        }
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        for (int r = 0; r < 10; r++) {
            const __m256i kk0 = _mm256_set1_epi32((int)k0), kk1 = _mm256_set1_epi32((int)k1);
            for (int h = 0; h < 2; h++) {
                __m256i lo0, hi0, lo1, hi1;
                mulhilo8(c0[h], m0, &lo0, &hi0);
                mulhilo8(c2[h], m1, &lo1, &hi1);
                c0[h] = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[h]), kk0);
                c1[h] = lo1;
                c2[h] = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[h]), kk1);
                c3[h] = lo0;
            }
            k0 += ND_PHILOX_W0;
            k1 += ND_PHILOX_W1;
        }
        for (int h = 0; h < 2; h++) store_calls8(out + 4 * (i + 8 * h), c0[h], c1[h], c2[h], c3[h]);
    }
    return i;
}
#endif

static void philox_tile(uint32_t *restrict out, const uint64_t *ctr, int64_t n, uint64_t seed,
                        uint64_t stream) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (RNG_AVX2) {
        int64_t done = philox_avx2(out, ctr, n, seed, stream), rest = n - done;
        if (rest > 0) { /* the last calls in one more full step */
            uint64_t c[16];
            uint32_t w[4 * 16];
            for (int64_t t = 0; t < 16; t++) c[t] = ctr[done + (t < rest ? t : rest - 1)];
            philox_avx2(w, c, 16, seed, stream);
            memcpy(out + 4 * done, w, sizeof(uint32_t) * 4 * (size_t)rest);
        }
        return;
    }
#endif
    philox_calls(out, ctr, n, seed, stream);
}

/* The words of the draws at indices ix[0..n) (n <= RNG_CHUNK), k per draw:
 * element i's at the returned pointer + k*i. `calls` holds the calls
 * (RNG_MAX_CALLS x 4 words) and their counters, `gathered` (k*n words) the
 * words when they must be picked element by element. */
static const uint32_t *chunk_words(int k, const int64_t *ix, int64_t n, int consecutive,
                                   uint64_t seed, uint64_t stream, char *calls,
                                   uint32_t *gathered) {
    int sh = k == 1 ? 2 : k == 2 ? 1 : 0; /* log2 W */
    uint32_t *aos = (uint32_t *)calls;
    uint64_t *ctr = (uint64_t *)(calls + sizeof(uint32_t) * 4 * RNG_MAX_CALLS);
    uint32_t *slot = (uint32_t *)(ctr + RNG_MAX_CALLS);
    uint64_t x0 = (uint64_t)ix[0], off = 0;
    for (int64_t i = 0; !consecutive && i < n; i++) off |= (uint64_t)ix[i] ^ (x0 + (uint64_t)i);
    int64_t m = 0;
    if (off == 0) {
        /* Consecutive indices (a fresh array, a unit-stride row): the calls
         * x0/W .. (x0+n-1)/W, and the words lie in them in order. */
        uint64_t c0 = x0 >> sh;
        m = (int64_t)(((x0 + (uint64_t)n - 1) >> sh) - c0 + 1);
        for (int64_t t = 0; t < m; t++) ctr[t] = c0 + (uint64_t)t;
        philox_tile(aos, ctr, m, seed, stream);
        return aos + (x0 - (c0 << sh)) * (uint64_t)k;
    }
    /* Anything else (strided, reversed, several rows): each run of equal
     * counters is one call; an element picks its words from its run's. */
    for (int64_t i = 0; i < n; i++) {
        uint64_t c = (uint64_t)ix[i] >> sh;
        if (m == 0 || ctr[m - 1] != c) ctr[m++] = c;
        slot[i] = (uint32_t)(m - 1);
    }
    philox_tile(aos, ctr, m, seed, stream);
    uint64_t wmask = ((uint64_t)1 << sh) - 1;
    for (int64_t i = 0; i < n; i++) {
        const uint32_t *w = aos + 4 * (uint64_t)slot[i] + ((uint64_t)ix[i] & wmask) * (uint64_t)k;
        for (int j = 0; j < k; j++) gathered[k * i + j] = w[j];
    }
    return gathered;
}

void nd_cpu_rand_tile(int normal, int wide, uint64_t seed, uint64_t stream, const int64_t *ix,
                      int consecutive, void *out, int64_t n, char *s0, char *s1, char *s2) {
    const int k = nd_philox_words(wide, normal);
    for (int64_t i0 = 0; i0 < n; i0 += RNG_CHUNK) {
        int64_t c = n - i0 < RNG_CHUNK ? n - i0 : RNG_CHUNK;
        const uint32_t *w = chunk_words(k, ix + i0, c, consecutive, seed, stream, s0, (uint32_t *)s1);
        /* s1 past the gathered words, and s2: Box-Muller temporaries */
        char *t1 = s1 + sizeof(uint32_t) * 4 * RNG_CHUNK;
        if (wide) {
            double *o = (double *)out + i0;
            if (!normal) {
                for (int64_t i = 0; i < c; i++) o[i] = nd_philox_u01_f64(w[2 * i], w[2 * i + 1]);
                continue;
            }
            double *u1 = (double *)t1, *u2 = u1 + RNG_CHUNK;
            double *l = (double *)s2, *cs = l + RNG_CHUNK, *sq = cs + RNG_CHUNK;
            for (int64_t i = 0; i < c; i++) {
                u1[i] = 1.0 - nd_philox_u01_f64(w[4 * i], w[4 * i + 1]);
                u2[i] = 6.28318530717958647692 * nd_philox_u01_f64(w[4 * i + 2], w[4 * i + 3]);
            }
            nd_cpu_op_fn(ND_OP_LOG, ND_FLOAT64)(l, u1, NULL, NULL, c);
            nd_cpu_op_fn(ND_OP_COS, ND_FLOAT64)(cs, u2, NULL, NULL, c);
            for (int64_t i = 0; i < c; i++) l[i] = -2.0 * l[i];
            nd_cpu_op_fn(ND_OP_SQRT, ND_FLOAT64)(sq, l, NULL, NULL, c);
            for (int64_t i = 0; i < c; i++) o[i] = sq[i] * cs[i];
            continue;
        }
        float *o = (float *)out + i0;
        if (!normal) {
            for (int64_t i = 0; i < c; i++) o[i] = nd_philox_u01_f32(w[i]);
            continue;
        }
        float *u1 = (float *)t1, *u2 = u1 + RNG_CHUNK;
        float *l = (float *)s2, *cs = l + RNG_CHUNK, *sq = cs + RNG_CHUNK;
        for (int64_t i = 0; i < c; i++) {
            u1[i] = 1.0f - nd_philox_u01_f32(w[2 * i]);
            u2[i] = 6.28318530717958647692f * nd_philox_u01_f32(w[2 * i + 1]);
        }
        nd_cpu_op_fn(ND_OP_LOG, ND_FLOAT32)(l, u1, NULL, NULL, c);
        nd_cpu_op_fn(ND_OP_COS, ND_FLOAT32)(cs, u2, NULL, NULL, c);
        for (int64_t i = 0; i < c; i++) l[i] = -2.0f * l[i];
        nd_cpu_op_fn(ND_OP_SQRT, ND_FLOAT32)(sq, l, NULL, NULL, c);
        for (int64_t i = 0; i < c; i++) o[i] = sq[i] * cs[i];
    }
}

void nd_cpu_rand_int_tile(int wide, uint64_t range, uint64_t seed, uint64_t stream, const int64_t *ix,
                          int consecutive, void *out, int64_t n, char *s0, char *s1) {
    const int k = nd_philox_int_words(wide);
    for (int64_t i0 = 0; i0 < n; i0 += RNG_CHUNK) {
        int64_t c = n - i0 < RNG_CHUNK ? n - i0 : RNG_CHUNK;
        const uint32_t *w = chunk_words(k, ix + i0, c, consecutive, seed, stream, s0, (uint32_t *)s1);
        const int64_t *x = ix + i0;
        if (wide) {
            uint64_t *o = (uint64_t *)out + i0;
            for (int64_t i = 0; i < c; i++)
                o[i] = nd_philox_int64(w[2 * i], w[2 * i + 1], range, seed, stream, (uint64_t)x[i]);
        } else {
            /* Candidates in a loop the compiler vectorises; the rare
             * rejected elements (low part below t) redone one by one. */
            uint32_t *o = (uint32_t *)out + i0, r32 = (uint32_t)range;
            uint32_t t = r32 ? (0u - r32) % r32 : 0u;
            int any = 0;
            for (int64_t i = 0; i < c; i++) {
                uint64_t m = (uint64_t)w[i] * range;
                o[i] = (uint32_t)(m >> 32);
                any |= (uint32_t)m < t;
            }
            for (int64_t i = 0; any && i < c; i++)
                if ((uint32_t)((uint64_t)w[i] * range) < t)
                    o[i] = nd_philox_int32(w[i], range, seed, stream, (uint64_t)x[i]);
        }
    }
}

/* The values of consecutive elements e0 .. e0+n-1 (e0 even, n even) into
 * o from their pairs' words w (pair e0/2 + q at w[q]): a loop the compiler
 * vectorises, then the rare rejected pairs redone one by one. */
static void pair_run(uint16_t *restrict o, const uint32_t *restrict w, int64_t n, uint64_t e0, uint32_t r,
                     uint32_t t, uint64_t seed, uint64_t stream) {
    uint32_t least = UINT32_MAX;
    for (int64_t q = 0; q < n / 2; q++) {
        uint64_t m1 = (uint64_t)w[q] * r, m2 = (uint64_t)(uint32_t)m1 * r;
        o[2 * q] = (uint16_t)(m1 >> 32);
        o[2 * q + 1] = (uint16_t)(m2 >> 32);
        uint32_t l = (uint32_t)m2;
        least = l < least ? l : least;
    }
    for (int64_t q = 0; least < t && q < n / 2; q++) {
        uint32_t l;
        nd_philox_pair_digits(w[q], r, &l);
        if (l >= t) continue;
        uint32_t v = nd_philox_pair(w[q], r, t, seed, stream, e0 / 2 + (uint64_t)q);
        o[2 * q] = (uint16_t)(v >> 16);
        o[2 * q + 1] = (uint16_t)v;
    }
}

void nd_cpu_rand_pair_tile(uint64_t rt, uint64_t seed, uint64_t stream, const int64_t *ix, int consecutive,
                           uint16_t *out, int64_t n, char *s0, char *s1) {
    const uint32_t r = (uint32_t)rt, t = (uint32_t)(rt >> 32);
    /* s1: the gathered words, then the pair indices and two edge values */
    uint32_t *gathered = (uint32_t *)s1;
    int64_t *px = (int64_t *)(s1 + sizeof(uint32_t) * RNG_CHUNK);
    uint16_t *edge = (uint16_t *)(s1 + sizeof(uint32_t) * RNG_CHUNK + sizeof(int64_t) * RNG_CHUNK);
    _Static_assert(4 * RNG_CHUNK + 8 * RNG_CHUNK + 4 <= ND_CPU_REG_BYTES,
                   "s1: words and pair indices of a chunk, an edge pair");
    for (int64_t i0 = 0; i0 < n; i0 += RNG_CHUNK) {
        int64_t c = n - i0 < RNG_CHUNK ? n - i0 : RNG_CHUNK;
        const int64_t *x = ix + i0;
        uint16_t *o = out + i0;
        uint64_t x0 = (uint64_t)x[0], off = 0;
        for (int64_t i = 0; !consecutive && i < c; i++) off |= (uint64_t)x[i] ^ (x0 + (uint64_t)i);
        if (off == 0) {
            /* Consecutive: the pairs x0/2 .. (x0+c-1)/2, each computed once;
             * a pair cut by the chunk's ends goes through `edge`. */
            int64_t p0 = (int64_t)(x0 >> 1), np = (int64_t)(((x0 + (uint64_t)c - 1) >> 1) - (x0 >> 1)) + 1;
            const uint32_t *w = chunk_words(1, &p0, np, 1, seed, stream, s0, gathered);
            int64_t i = 0, q = 0;
            if (x0 & 1) { /* starts mid-pair */
                pair_run(edge, w, 2, x0 - 1, r, t, seed, stream);
                o[i++] = edge[1];
                q = 1;
            }
            int64_t full = (c - i) & ~(int64_t)1;
            pair_run(o + i, w + q, full, x0 + (uint64_t)i, r, t, seed, stream);
            i += full;
            q += full / 2;
            if (i < c) { /* ends mid-pair */
                pair_run(edge, w + q, 2, x0 + (uint64_t)i, r, t, seed, stream);
                o[i] = edge[0];
            }
            continue;
        }
        /* Anything else: each element its pair's word and values. */
        for (int64_t i = 0; i < c; i++) px[i] = (int64_t)((uint64_t)x[i] >> 1);
        const uint32_t *w = chunk_words(1, px, c, 0, seed, stream, s0, gathered);
        for (int64_t i = 0; i < c; i++) {
            uint32_t l, pv = nd_philox_pair_digits(w[i], r, &l);
            if (l < t) pv = nd_philox_pair(w[i], r, t, seed, stream, (uint64_t)px[i]);
            o[i] = (uint16_t)((uint64_t)x[i] & 1 ? pv : pv >> 16);
        }
    }
}
