/* Philox tile loops for the random instructions, written so the compiler
 * vectorises the ten rounds across elements (32x32->64-bit lane multiplies),
 * plus an AVX2 intrinsics path. Bits are exactly those of common/philox.h. */
#include "backends/cpu/cpu_vectorize.h"

#include "backends/cpu/cpu_internal.h"
#include "common/philox.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define RNG_LOOP static inline __attribute__((always_inline)) void
#define RNG_AVX2 __builtin_cpu_supports("avx2")
#else
#define RNG_LOOP static inline void
#define RNG_AVX2 0
#endif

/* Words w0 (and w1 when two) of Philox4x32-10(seed, ix[i], stream). */
RNG_LOOP philox_words(uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
                      uint32_t *restrict w3, const int64_t *ix, int64_t n, uint64_t seed,
                      uint64_t stream) {
    /* The reference rounds, inlined; the compiler unrolls them and
     * vectorises across elements. */
    for (int64_t i = 0; i < n; i++) {
        nd_philox4x32 r = nd_philox4x32_10(seed, (uint64_t)ix[i], stream);
        w0[i] = r.x[0];
        w1[i] = r.x[1];
        w2[i] = r.x[2];
        w3[i] = r.x[3];
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

__attribute__((target("avx2"))) static int64_t philox_avx2(uint32_t *restrict w0,
                                                           uint32_t *restrict w1,
                                                           uint32_t *restrict w2,
                                                           uint32_t *restrict w3, const int64_t *ix,
                                                           int64_t n, uint64_t seed,
                                                           uint64_t stream) {
    const __m256i m0 = _mm256_set1_epi32((int)ND_PHILOX_M0), m1 = _mm256_set1_epi32((int)ND_PHILOX_M1);
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i s0 = _mm256_set1_epi32((int)(uint32_t)stream);
    const __m256i s1 = _mm256_set1_epi32((int)(uint32_t)(stream >> 32));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(ix + i)), split);
        __m256i b = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(ix + i + 4)), split);
        __m256i c0 = _mm256_permute2x128_si256(a, b, 0x20), c1 = _mm256_permute2x128_si256(a, b, 0x31);
        __m256i c2 = s0, c3 = s1;
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        for (int r = 0; r < 10; r++) {
            __m256i lo0, hi0, lo1, hi1;
            mulhilo8(c0, m0, &lo0, &hi0);
            mulhilo8(c2, m1, &lo1, &hi1);
            c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
            c1 = lo1;
            c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
            c3 = lo0;
            k0 += ND_PHILOX_W0;
            k1 += ND_PHILOX_W1;
        }
        _mm256_storeu_si256((__m256i *)(w0 + i), c0);
        _mm256_storeu_si256((__m256i *)(w1 + i), c1);
        _mm256_storeu_si256((__m256i *)(w2 + i), c2);
        _mm256_storeu_si256((__m256i *)(w3 + i), c3);
    }
    return i;
}
#endif

void nd_cpu_philox_tile(uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
                        uint32_t *restrict w3, const int64_t *ix, int64_t n, uint64_t seed,
                        uint64_t stream) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (RNG_AVX2) {
        int64_t done = philox_avx2(w0, w1, w2, w3, ix, n, seed, stream);
        w0 += done, w1 += done, w2 += done, w3 += done, ix += done, n -= done;
    }
#endif
    philox_words(w0, w1, w2, w3, ix, n, seed, stream);
}
