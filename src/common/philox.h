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

#endif
