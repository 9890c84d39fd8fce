/* Philox tile loops for the random instructions, written so the compiler
 * vectorises the ten rounds across elements (32x32->64-bit lane multiplies),
 * with an AVX2 clone. Bits are exactly those of common/philox.h. */
#include "backends/cpu/cpu_vectorize.h"

#include "backends/cpu/cpu_internal.h"
#include "common/philox.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define RNG_LOOP static inline __attribute__((always_inline)) void
#define RNG_CLONE(loop, ...)                                                     \
    __attribute__((target("avx2,fma"))) static void loop##_avx2(__VA_ARGS__)
#define RNG_AVX2 __builtin_cpu_supports("avx2")
#else
#define RNG_LOOP static inline void
#define RNG_AVX2 0
#endif

/* Words w0 (and w1 when two) of Philox4x32-10(seed, ix[i], stream). */
RNG_LOOP philox_words(uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
                      uint32_t *restrict w3, const int64_t *ix, int64_t n, uint64_t seed,
                      uint64_t stream) {
    const uint32_t s0 = (uint32_t)stream, s1 = (uint32_t)(stream >> 32);
    const uint32_t k0i = (uint32_t)seed, k1i = (uint32_t)(seed >> 32);
    for (int64_t i = 0; i < n; i++) {
        uint64_t idx = (uint64_t)ix[i];
        uint32_t c0 = (uint32_t)idx, c1 = (uint32_t)(idx >> 32), c2 = s0, c3 = s1;
        uint32_t k0 = k0i, k1 = k1i;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 10
#endif
        for (int r = 0; r < 10; r++) {
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
        w0[i] = c0;
        w1[i] = c1;
        w2[i] = c2;
        w3[i] = c3;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
RNG_CLONE(philox_words, uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
          uint32_t *restrict w3, const int64_t *ix, int64_t n, uint64_t seed, uint64_t stream) {
    philox_words(w0, w1, w2, w3, ix, n, seed, stream);
}
#endif

void nd_cpu_philox_tile(uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
                        uint32_t *restrict w3, const int64_t *ix, int64_t n, uint64_t seed,
                        uint64_t stream) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (RNG_AVX2) {
        philox_words_avx2(w0, w1, w2, w3, ix, n, seed, stream);
        return;
    }
#endif
    philox_words(w0, w1, w2, w3, ix, n, seed, stream);
}
