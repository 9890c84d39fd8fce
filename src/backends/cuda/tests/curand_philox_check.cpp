/* cuRAND's Philox4x32-10 (curand_philox4x32_x.h, the primitive of the
 * generated kernels' draws) against src/common/philox.h, on the host: the
 * same four words for a million keys and counters (edges included), and
 * the round function with the host's precomputed round keys (ndk_philox_k's
 * form). The header's host path multiplies in 64 bits where the device's
 * uses __umulhi: the same product, and the GPU suites (test_random*, with
 * ND_BACKEND=cuda) compare the device's draws with philox.h. Compiled as
 * C++ by emulate_check.sh with the toolkit's include directory. */
#include <stdint.h>
#include <stdio.h>

/* The CUDA vector types and qualifiers the header uses, for the host. */
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
static inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
#define __device__
#define __forceinline__ inline
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
#include <curand_philox4x32_x.h>

extern "C" {
#include "common/philox.h"
}

static uint64_t next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main() {
    uint64_t s = 2026, fails = 0, n = 0;
    const uint64_t edge[] = {0, 1, 0xffffffffull, 0x100000000ull, UINT64_MAX, 1ull << 48, 0x8000000000000000ull};
    for (int i = 0; i < 1000000 + 343; i++, n++) {
        uint64_t seed, ctr, stream;
        if (i < 343) {
            seed = edge[i % 7], ctr = edge[i / 7 % 7], stream = edge[i / 49];
        } else {
            seed = next(&s), ctr = next(&s), stream = next(&s);
            if (i % 3 == 0) ctr >>= 32; /* the usual case: small counters and streams */
            if (i % 5 == 0) stream &= 0xffff;
        }
        nd_philox4x32 want = nd_philox4x32_10(seed, ctr, stream);
        uint4 c = make_uint4((unsigned)ctr, (unsigned)(ctr >> 32), (unsigned)stream, (unsigned)(stream >> 32));
        uint4 got = curand_Philox4x32_10(c, make_uint2((unsigned)seed, (unsigned)(seed >> 32)));
        /* round by round with precomputed keys */
        uint4 r = c;
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        for (int q = 0; q < ND_PHILOX_ROUNDS; q++, k0 += ND_PHILOX_W0, k1 += ND_PHILOX_W1)
            r = _philox4x32round(r, make_uint2(k0, k1));
        const uint4 both[2] = {got, r};
        for (int b = 0; b < 2; b++) {
            const uint4 &g = both[b];
            if (g.x != want.x[0] || g.y != want.x[1] || g.z != want.x[2] || g.w != want.x[3]) {
                if (fails++ < 5)
                    printf("curand %s differs: seed %llx counter %llx stream %llx: %08x %08x %08x %08x, "
                           "philox.h %08x %08x %08x %08x\n", b ? "rounds" : "Philox4x32_10",
                           (unsigned long long)seed, (unsigned long long)ctr, (unsigned long long)stream, g.x, g.y,
                           g.z, g.w, want.x[0], want.x[1], want.x[2], want.x[3]);
            }
        }
    }
    printf("curand_philox_check: %llu calls, %llu differ from common/philox.h\n", (unsigned long long)n,
           (unsigned long long)fails);
    return fails != 0;
}
