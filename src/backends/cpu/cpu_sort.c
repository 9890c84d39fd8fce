/* ND_LIB_SORT on the CPU: a stable LSD radix sort of order-preserving keys
 * (common/sort_keys.h) along the last axis, 8 bits a pass, passes whose
 * digit is the same for every key skipped (small integers sort in one or
 * two). A long row (ND_CPU_SORT_PARALLEL elements or more) is sorted by
 * the whole pool: each pass, every part counts the digits of its chunk,
 * the counts are laid out digit by digit and part by part, and every
 * part scatters its chunk in order; short rows are split over the pool,
 * one row at a time per worker. Rows of at most ND_CPU_SORT_SMALL keys use
 * an insertion sort. A stable sort has one result, so the bits are the
 * same for any thread count. Values are sorted as their keys and turned
 * back (NaNs come out as the default NaN; the zeros of a row holding a
 * -0.0 are rewritten in their stable order, fix_zeros); indices (int64)
 * are sorted with their keys. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/sort_keys.h"

#define ND_CPU_SORT_PARALLEL (1 << 17)
#define ND_CPU_SORT_SMALL 32
#define RADIX 256
/* The sample sort of a long row (keys of 4 or 8 bytes): buckets (a power
 * of two, 4 a worker: sizes vary with the sample), the sample's size and
 * the fewest keys of a chunk (chunks are 4 a worker). */
#define ND_CPU_SORT_MAX_BUCKETS 256
#define ND_CPU_SORT_SAMPLE 1024
#define ND_CPU_SORT_CHUNK 8192

typedef struct {
    const nd_kernel_arg *in, *out;
    int mode; /* nd_lib_sort_mode */
    nd_sort_key_info f;
    int64_t n;     /* row length */
    int passes;    /* bytes of the key */
    int err;       /* set by a worker that ran out of memory */
    int neg_zero;  /* set when a row being loaded holds a -0.0 */
    nd_cpu_block_cache *cache; /* where the key buffers come from */
} sort_job;

/* Element i of the row starting at p, of `width` bytes, stride s. */
static inline const char *elem(const char *p, int width, int64_t s, int64_t i) { return p + i * s * width; }

static void store_value(char *p, int width, uint64_t v) {
    switch (width) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(uint16_t *)p = (uint16_t)v; break;
    case 4: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
    }
}

/* One implementation per key width: KT the item type. */
#define SORT_FNS(KT, SUF)                                                                                         \
    /* A contiguous float row has a loop of its own in the key's type (the                                        \
     * same rules as nd_sort_key_bits, which the general loop calls with                                          \
     * the dtype's facts unknown at compile time: 3x slower on 2^20 float32). */                                  \
    static void load_float_##SUF(KT *k, int64_t *ix, const KT *row, int64_t b, int64_t e, const sort_job *j) {   \
        const KT sign = (KT)((KT)1 << (8 * sizeof(KT) - 1)), em = (KT)j->f.exp_mask, qn = (KT)j->f.qnan;           \
        int nz = 0;                                                                                                \
        for (int64_t i = b; i < e; i++) {                                                                          \
            KT v = row[i];                                                                                         \
            nz |= v == sign;                                                                                       \
            v = (KT)(v & (KT)~sign) > em ? qn : v == sign ? (KT)0 : v;                                             \
            k[i] = (v & sign) ? (KT)~v : (KT)(v | sign);                                                           \
        }                                                                                                          \
        if (ix)                                                                                                    \
            for (int64_t i = b; i < e; i++) ix[i] = i;                                                             \
        else if (nz) __atomic_store_n(&((sort_job *)j)->neg_zero, 1, __ATOMIC_RELAXED);                            \
    }                                                                                                              \
    static void load_##SUF(KT *k, int64_t *ix, const char *row, int64_t s, int64_t b, int64_t e,                  \
                           const sort_job *j) {                                                                    \
        if (s == 1 && j->f.kind == ND_SK_FLOAT && j->f.width == (int)sizeof(KT)) {                                 \
            load_float_##SUF(k, ix, (const KT *)row, b, e, j);                                                     \
            return;                                                                                                \
        }                                                                                                          \
        for (int64_t i = b; i < e; i++) {                                                                          \
            uint64_t bits = nd_sort_load_bits(elem(row, j->f.width, s, i), j->f);                                  \
            k[i] = (KT)nd_sort_key_bits(bits, j->f);                                                               \
            if (ix) ix[i] = i;                                                                                     \
            else if (j->f.kind == ND_SK_FLOAT && bits == (uint64_t)1 << (8 * j->f.width - 1))                      \
                __atomic_store_n(&((sort_job *)j)->neg_zero, 1, __ATOMIC_RELAXED);                                 \
        }                                                                                                          \
    }                                                                                                              \
    static void store_##SUF(const KT *k, const int64_t *ix, char *row, int64_t s, int64_t b, int64_t e,           \
                            const sort_job *j) {                                                                   \
        if (!ix && s == 1 && j->f.kind == ND_SK_FLOAT && j->f.width == (int)sizeof(KT)) {                          \
            const KT sign = (KT)((KT)1 << (8 * sizeof(KT) - 1));                                                   \
            KT *o = (KT *)row;                                                                                     \
            for (int64_t i = b; i < e; i++) o[i] = (k[i] & sign) ? (KT)(k[i] ^ sign) : (KT)~k[i];                  \
            return;                                                                                                \
        }                                                                                                          \
        for (int64_t i = b; i < e; i++) {                                                                          \
            if (ix) ((int64_t *)row)[i * s] = ix[i];                                                               \
            else store_value(row + i * s * j->f.width, j->f.width, nd_sort_key_value(k[i], j->f));                 \
        }                                                                                                          \
    }                                                                                                              \
    /* Stable insertion sort of k (and ix) in place. */                                                            \
    static void insertion_##SUF(KT *k, int64_t *ix, int64_t n) {                                                   \
        for (int64_t i = 1; i < n; i++) {                                                                          \
            KT v = k[i];                                                                                           \
            int64_t x = ix ? ix[i] : 0, p = i;                                                                     \
            for (; p > 0 && k[p - 1] > v; p--) {                                                                   \
                k[p] = k[p - 1];                                                                                   \
                if (ix) ix[p] = ix[p - 1];                                                                         \
            }                                                                                                      \
            k[p] = v;                                                                                              \
            if (ix) ix[p] = x;                                                                                     \
        }                                                                                                          \
    }                                                                                                              \
    /* Serial LSD radix sort: k/ix in, k2/ix2 scratch; returns 1 when the                                          \
     * result ended in the scratch. The row is read as four quarters side by                                       \
     * side, each with offsets of its own (laid out digit by digit, quarter by                                     \
     * quarter: stable): a run of keys with one digit (a bucket's top varying                                      \
     * byte takes few values) then makes four chains of increments to one                                          \
     * offset, not one, and a pass ran ~30% quicker on such rows (2^14 keys).                                      \
     * Each pass counts its own digits, as the quarters hold other keys after                                      \
     * every pass; bytes that are the same in every key are skipped. */                                            \
    static int radix_##SUF(KT *k, int64_t *ix, KT *k2, int64_t *ix2, int64_t n, int passes) {                      \
        int64_t bq[5] = {0, n / 4, n / 2, 3 * n / 4, n}, m = n;                                                    \
        for (int q = 0; q < 4; q++)                                                                                \
            if (bq[q + 1] - bq[q] < m) m = bq[q + 1] - bq[q];                                                      \
        KT diff = 0;                                                                                               \
        for (int64_t i = 0; i < n; i++) diff |= k[i] ^ k[0];                                                       \
        int swapped = 0;                                                                                           \
        for (int p = 0; p < passes; p++) {                                                                         \
            const int sh = 8 * p;                                                                                  \
            if (!((diff >> sh) & 0xFF)) continue; /* one digit: nothing moves */                                   \
            int64_t c[4][RADIX];                                                                                   \
            memset(c, 0, sizeof c);                                                                                \
            for (int64_t i = 0; i < m; i++)                                                                        \
                for (int q = 0; q < 4; q++) c[q][(k[bq[q] + i] >> sh) & 0xFF]++;                                   \
            for (int q = 0; q < 4; q++)                                                                            \
                for (int64_t i = bq[q] + m; i < bq[q + 1]; i++) c[q][(k[i] >> sh) & 0xFF]++;                       \
            int64_t sum = 0;                                                                                       \
            for (int d = 0; d < RADIX; d++)                                                                        \
                for (int q = 0; q < 4; q++) {                                                                      \
                    int64_t t = c[q][d];                                                                           \
                    c[q][d] = sum;                                                                                 \
                    sum += t;                                                                                      \
                }                                                                                                  \
            const KT *k0 = k + bq[0], *ka = k + bq[1], *kb = k + bq[2], *kc = k + bq[3];                           \
            if (ix) {                                                                                              \
                const int64_t *x0 = ix + bq[0], *xa = ix + bq[1], *xb = ix + bq[2], *xc = ix + bq[3];              \
                for (int64_t i = 0; i < m; i++) {                                                                  \
                    int64_t p0 = c[0][(k0[i] >> sh) & 0xFF]++, pa = c[1][(ka[i] >> sh) & 0xFF]++;                  \
                    int64_t pb = c[2][(kb[i] >> sh) & 0xFF]++, pc = c[3][(kc[i] >> sh) & 0xFF]++;                  \
                    k2[p0] = k0[i], ix2[p0] = x0[i];                                                               \
                    k2[pa] = ka[i], ix2[pa] = xa[i];                                                               \
                    k2[pb] = kb[i], ix2[pb] = xb[i];                                                               \
                    k2[pc] = kc[i], ix2[pc] = xc[i];                                                               \
                }                                                                                                  \
            } else {                                                                                               \
                for (int64_t i = 0; i < m; i++) {                                                                  \
                    KT v0 = k0[i], va = ka[i], vb = kb[i], vc = kc[i];                                             \
                    k2[c[0][(v0 >> sh) & 0xFF]++] = v0;                                                            \
                    k2[c[1][(va >> sh) & 0xFF]++] = va;                                                            \
                    k2[c[2][(vb >> sh) & 0xFF]++] = vb;                                                            \
                    k2[c[3][(vc >> sh) & 0xFF]++] = vc;                                                            \
                }                                                                                                  \
            }                                                                                                      \
            for (int q = 0; q < 4; q++)                                                                            \
                for (int64_t i = bq[q] + m; i < bq[q + 1]; i++) {                                                  \
                    int64_t pos = c[q][(k[i] >> sh) & 0xFF]++;                                                     \
                    k2[pos] = k[i];                                                                                \
                    if (ix) ix2[pos] = ix[i];                                                                      \
                }                                                                                                  \
            KT *tk = k;                                                                                            \
            k = k2;                                                                                                \
            k2 = tk;                                                                                               \
            int64_t *ti = ix;                                                                                      \
            ix = ix2;                                                                                              \
            ix2 = ti;                                                                                              \
            swapped ^= 1;                                                                                          \
        }                                                                                                          \
        return swapped;                                                                                            \
    }                                                                                                              \
    /* One chunk [b, e) of a long row: its digit counts, then its scatter                                          \
     * to the offsets in c. */                                                                                     \
    static void count_##SUF(const KT *k, int64_t b, int64_t e, int shift, int64_t *c) {                            \
        int64_t h[RADIX] = {0}; /* on the stack: no store per key */                                               \
        for (int64_t i = b; i < e; i++) h[(k[i] >> shift) & 0xFF]++;                                               \
        memcpy(c, h, sizeof h);                                                                                    \
    }                                                                                                              \
    /* The offsets are copied to the stack: stores through ix2 (int64, as                                         \
     * c) would otherwise make the compiler reload them every element; and                                        \
     * the loop without indices is its own (sort of values: the common one). */                                   \
    static void scatter_##SUF(const KT *k, KT *k2, const int64_t *ix, int64_t *ix2, int64_t b, int64_t e,          \
                              int shift, int64_t *c) {                                                             \
        int64_t off[RADIX];                                                                                        \
        memcpy(off, c, sizeof off);                                                                                \
        if (ix)                                                                                                    \
            for (int64_t i = b; i < e; i++) {                                                                      \
                KT key = k[i];                                                                                     \
                int64_t pos = off[(key >> shift) & 0xFF]++;                                                        \
                k2[pos] = key;                                                                                     \
                ix2[pos] = ix[i];                                                                                  \
            }                                                                                                      \
        else                                                                                                       \
            for (int64_t i = b; i < e; i++) {                                                                      \
                KT key = k[i];                                                                                     \
                k2[off[(key >> shift) & 0xFF]++] = key;                                                            \
            }                                                                                                      \
        memcpy(c, off, sizeof off);                                                                                \
    }

/* The sample sort's functions, for 4- and 8-byte keys. */
#define SAMPLE_FNS(KT, SUF)                                                                                       \
    /* Sample sort of a long row: the bucket of a key is the number of                                             \
     * splitters below it (nb - 1 sorted splitters, nb a power of two, a                                           \
     * branch-free search), so equal keys share a bucket and the sort stays                                        \
     * stable. */                                                                                                  \
    static inline int bucket_##SUF(KT key, const KT *spl, int nb) {                                                \
        int i = 0;                                                                                                 \
        for (int step = nb >> 1; step; step >>= 1) i += spl[i + step - 1] < key ? step : 0;                        \
        return i;                                                                                                  \
    }                                                                                                              \
    /* The splitters: every (S/nb)th of S keys taken at even steps, sorted. */                                     \
    static void splitters_##SUF(const KT *k, int64_t n, KT *spl, int nb) {                                         \
        KT smp[ND_CPU_SORT_SAMPLE], tmp[ND_CPU_SORT_SAMPLE];                                                       \
        for (int i = 0; i < ND_CPU_SORT_SAMPLE; i++) smp[i] = k[n / ND_CPU_SORT_SAMPLE * i];                       \
        const KT *sorted = radix_##SUF(smp, NULL, tmp, NULL, ND_CPU_SORT_SAMPLE, (int)sizeof(KT)) ? tmp : smp;     \
        for (int q = 1; q < nb; q++) spl[q - 1] = sorted[ND_CPU_SORT_SAMPLE / nb * q];                             \
    }                                                                                                              \
    /* Each key's bucket is searched once, here, and kept as a byte for the                                       \
     * scatter (nb <= 256): the search is a chain of dependent loads and                                           \
     * compares, several times a streaming pass over the keys. */                                                  \
    static void bcount_##SUF(const KT *k, int64_t b, int64_t e, const KT *spl, int nb, int64_t *c,                 \
                             uint8_t *bid) {                                                                       \
        int64_t h[ND_CPU_SORT_MAX_BUCKETS] = {0};                                                                  \
        for (int64_t i = b; i < e; i++) {                                                                          \
            int q = bucket_##SUF(k[i], spl, nb);                                                                   \
            bid[i] = (uint8_t)q;                                                                                   \
            h[q]++;                                                                                                \
        }                                                                                                          \
        memcpy(c, h, (size_t)nb * sizeof *c);                                                                      \
    }                                                                                                              \
    static void bscatter_##SUF(const KT *k, KT *k2, const int64_t *ix, int64_t *ix2, int64_t b, int64_t e,         \
                               const uint8_t *bid, int nb, int64_t *c) {                                           \
        int64_t off[ND_CPU_SORT_MAX_BUCKETS];                                                                      \
        memcpy(off, c, (size_t)nb * sizeof *c);                                                                    \
        if (ix)                                                                                                    \
            for (int64_t i = b; i < e; i++) {                                                                      \
                int64_t pos = off[bid[i]]++;                                                                       \
                k2[pos] = k[i];                                                                                    \
                ix2[pos] = ix[i];                                                                                  \
            }                                                                                                      \
        else                                                                                                       \
            for (int64_t i = b; i < e; i++) k2[off[bid[i]]++] = k[i];                                              \
    }

SORT_FNS(uint8_t, u8)
SORT_FNS(uint16_t, u16)
SORT_FNS(uint32_t, u32)
SORT_FNS(uint64_t, u64)
SAMPLE_FNS(uint32_t, u32)
SAMPLE_FNS(uint64_t, u64)

/* The 64 buckets' splitters as a two-level tree of 8 keys: level 1 holds
 * every eighth splitter (spl[7], spl[15], ..., spl[55]) and a pad, group
 * g of level 2 holds spl[8g] .. spl[8g + 6] and a pad. A key's bucket is
 * 8 x (level-1 keys below it) + (its group's keys below it): the binary
 * search's count of splitters below the key, from two vector compares
 * instead of a chain of six dependent loads (that chain made the count
 * ~6 ns a key; bench/results/2026-11-30-session18-cpu-sort.md). Keys are
 * kept with their top bit flipped, so that a signed compare orders them
 * as unsigned; the pad (the largest signed value) is below no key. */
#define SPLIT_TREE_BUCKETS 64
typedef struct {
    int32_t l1[8], l2[8][8];
} split_tree32;
typedef struct {
    int64_t l1[8], l2[8][8];
} split_tree64;

static void split_tree32_build(const uint32_t *spl, split_tree32 *t) {
    for (int g = 0; g < 8; g++) {
        t->l1[g] = g < 7 ? (int32_t)(spl[8 * g + 7] ^ 0x80000000u) : INT32_MAX;
        for (int i = 0; i < 8; i++) t->l2[g][i] = i < 7 ? (int32_t)(spl[8 * g + i] ^ 0x80000000u) : INT32_MAX;
    }
}

static void split_tree64_build(const uint64_t *spl, split_tree64 *t) {
    const uint64_t top = (uint64_t)1 << 63;
    for (int g = 0; g < 8; g++) {
        t->l1[g] = g < 7 ? (int64_t)(spl[8 * g + 7] ^ top) : INT64_MAX;
        for (int i = 0; i < 8; i++) t->l2[g][i] = i < 7 ? (int64_t)(spl[8 * g + i] ^ top) : INT64_MAX;
    }
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SPLIT_TREE_AVX2 1

__attribute__((target("avx2,popcnt"))) static void tcount_u32(const uint32_t *k, int64_t b, int64_t e,
                                                                const split_tree32 *t, int64_t *c, uint8_t *bid) {
    int64_t h[SPLIT_TREE_BUCKETS] = {0};
    const __m256i l1 = _mm256_loadu_si256((const __m256i *)t->l1);
    for (int64_t i = b; i < e; i++) {
        const __m256i kv = _mm256_set1_epi32((int32_t)(k[i] ^ 0x80000000u));
        const int g = __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(kv, l1))));
        const __m256i l2 = _mm256_loadu_si256((const __m256i *)t->l2[g]);
        const int q = 8 * g + __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(kv, l2))));
        bid[i] = (uint8_t)q;
        h[q]++;
    }
    memcpy(c, h, sizeof h);
}

__attribute__((target("avx2,popcnt"))) static void tcount_u64(const uint64_t *k, int64_t b, int64_t e,
                                                                const split_tree64 *t, int64_t *c, uint8_t *bid) {
    int64_t h[SPLIT_TREE_BUCKETS] = {0};
    const __m256i l1a = _mm256_loadu_si256((const __m256i *)t->l1), l1b = _mm256_loadu_si256((const __m256i *)(t->l1 + 4));
    const uint64_t top = (uint64_t)1 << 63;
    for (int64_t i = b; i < e; i++) {
        const __m256i kv = _mm256_set1_epi64x((long long)(k[i] ^ top));
        const unsigned m1 = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(kv, l1a))) |
                            (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(kv, l1b))) << 4;
        const int g = __builtin_popcount(m1);
        const __m256i l2a = _mm256_loadu_si256((const __m256i *)t->l2[g]);
        const __m256i l2b = _mm256_loadu_si256((const __m256i *)(t->l2[g] + 4));
        const unsigned m2 = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(kv, l2a))) |
                            (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(kv, l2b))) << 4;
        const int q = 8 * g + __builtin_popcount(m2);
        bid[i] = (uint8_t)q;
        h[q]++;
    }
    memcpy(c, h, sizeof h);
}
#endif

/* Dispatch on the key width (w bytes) to the functions above, keys as void*. */
static void load_keys(int w, void *k, int64_t *ix, const char *row, int64_t s, int64_t b, int64_t e, const sort_job *j) {
    switch (w) {
    case 1: load_u8(k, ix, row, s, b, e, j); break;
    case 2: load_u16(k, ix, row, s, b, e, j); break;
    case 4: load_u32(k, ix, row, s, b, e, j); break;
    default: load_u64(k, ix, row, s, b, e, j); break;
    }
}

static void store_keys(int w, const void *k, const int64_t *ix, char *row, int64_t s, int64_t b, int64_t e,
                       const sort_job *j) {
    switch (w) {
    case 1: store_u8(k, ix, row, s, b, e, j); break;
    case 2: store_u16(k, ix, row, s, b, e, j); break;
    case 4: store_u32(k, ix, row, s, b, e, j); break;
    default: store_u64(k, ix, row, s, b, e, j); break;
    }
}

/* Sorts one row held in k/ix with scratch k2/ix2; returns 1 when the
 * result is in the scratch. */
static int sort_serial(int w, void *k, int64_t *ix, void *k2, int64_t *ix2, int64_t n) {
    if (n <= ND_CPU_SORT_SMALL) {
        switch (w) {
        case 1: insertion_u8(k, ix, n); break;
        case 2: insertion_u16(k, ix, n); break;
        case 4: insertion_u32(k, ix, n); break;
        default: insertion_u64(k, ix, n); break;
        }
        return 0;
    }
    switch (w) {
    case 1: return radix_u8(k, ix, k2, ix2, n, 1);
    case 2: return radix_u16(k, ix, k2, ix2, n, 2);
    case 4: return radix_u32(k, ix, k2, ix2, n, 4);
    default: return radix_u64(k, ix, k2, ix2, n, 8);
    }
}

static inline uint64_t key_at(const void *k, int w, int64_t i) {
    switch (w) {
    case 1: return ((const uint8_t *)k)[i];
    case 2: return ((const uint16_t *)k)[i];
    case 4: return ((const uint32_t *)k)[i];
    default: return ((const uint64_t *)k)[i];
    }
}

/* Sorted values are stored from their keys, which give -0.0 as +0.0: where
 * the input held a -0.0, the block of zeros (contiguous once sorted) is
 * rewritten with the input's zeros in their order, which is the stable
 * order. */
static void fix_zeros(const sort_job *j, const char *row, int64_t is, const void *k, char *orow, int64_t os) {
    int w = j->f.width;
    uint64_t sign = (uint64_t)1 << (8 * w - 1);
    int64_t lo = 0, hi = j->n;
    while (lo < hi) { /* the first key >= +0.0's */
        int64_t mid = lo + (hi - lo) / 2;
        if (key_at(k, w, mid) < sign) lo = mid + 1;
        else hi = mid;
    }
    for (int64_t i = 0; i < j->n; i++) {
        uint64_t bits = nd_sort_load_bits(elem(row, w, is, i), j->f);
        if ((bits & ~sign) == 0) store_value(orow + lo++ * os * w, w, bits);
    }
}

/* Key buffers of one row: keys and indices, twice (for the scatter).
 * They come from the backend's cache of freed blocks (cpu_memory.c; rows
 * under 1 MiB get plain malloc there), so a loop of sorts does not fault
 * in fresh pages every call: a sort of 2^28 float32 takes 2 GiB of them,
 * and on the 2-core VM the faults were a sixth of a 2^20 sort's time. */
typedef struct {
    void *k[2];
    int64_t *ix[2];
    size_t kbytes, ixbytes;
    nd_cpu_block_cache *cache;
} row_bufs;

static void *buf_get(nd_cpu_block_cache *c, size_t bytes) {
    void *p = NULL;
    if (!c) return nd_malloc(bytes);
    return nd_cpu_host_alloc(c, bytes, &p) == ND_OK ? p : NULL;
}

static void buf_put(nd_cpu_block_cache *c, void *p, size_t bytes) {
    if (!p) return;
    if (c) nd_cpu_host_release(c, p, bytes);
    else free(p);
}

static nd_status bufs_alloc(row_bufs *b, int64_t n, int w, int with_ix, nd_cpu_block_cache *cache) {
    memset(b, 0, sizeof *b);
    size_t m = n ? (size_t)n : 1;
    b->cache = cache;
    b->kbytes = m * (size_t)w;
    b->ixbytes = with_ix ? m * sizeof(int64_t) : 0;
    for (int i = 0; i < 2; i++) {
        b->k[i] = buf_get(cache, b->kbytes);
        b->ix[i] = with_ix ? buf_get(cache, b->ixbytes) : NULL;
        if (!b->k[i] || (with_ix && !b->ix[i])) return ND_ERR_OOM;
    }
    return ND_OK;
}

static void bufs_free(row_bufs *b) {
    for (int i = 0; i < 2; i++) {
        buf_put(b->cache, b->k[i], b->kbytes);
        buf_put(b->cache, b->ix[i], b->ixbytes);
    }
}

/* ------------------------------------------------------- many short rows */

static void sort_rows(void *varg, int64_t begin, int64_t end) {
    sort_job *j = varg;
    int w = j->f.width, with_ix = j->mode == ND_SORT_INDICES;
    const nd_kernel_arg *in = j->in, *out = j->out;
    int64_t is = in->strides[in->ndim - 1], os = out->strides[out->ndim - 1];
    row_bufs b;
    if (bufs_alloc(&b, j->n, w, with_ix, j->cache) != ND_OK) {
        bufs_free(&b);
        __atomic_store_n(&j->err, 1, __ATOMIC_RELAXED); /* any worker's failure fails the step */
        return;
    }
    int out_w = with_ix ? 8 : w;
    for (int64_t r = begin; r < end; r++) {
        const char *row = (const char *)in->data + nd_cpu_row_offset(in, r) * w;
        char *orow = (char *)out->data + nd_cpu_row_offset(out, r) * out_w;
        load_keys(w, b.k[0], b.ix[0], row, is, 0, j->n, j);
        int at = sort_serial(w, b.k[0], b.ix[0], b.k[1], b.ix[1], j->n);
        store_keys(w, b.k[at], b.ix[at], orow, os, 0, j->n, j);
        if (!with_ix && __atomic_load_n(&j->neg_zero, __ATOMIC_RELAXED)) fix_zeros(j, row, is, b.k[at], orow, os);
    }
    bufs_free(&b);
}

/* ------------------------------------------------------- one long row */

typedef struct {
    sort_job *j;
    const char *row;
    char *orow;
    int parts, pass, w;
    row_bufs *b;
    int cur;        /* which of b's buffers holds the keys */
    int64_t *cnt;   /* [parts][RADIX] (LSD) or [parts][nb] (sample sort): counts, then scatter offsets */
    int nb;         /* sample sort: buckets */
    uint64_t spl[ND_CPU_SORT_MAX_BUCKETS];   /* sample sort: nb - 1 splitters (8-byte keys) */
    uint32_t spl32[ND_CPU_SORT_MAX_BUCKETS]; /* the same for 4-byte keys */
    int64_t start[ND_CPU_SORT_MAX_BUCKETS + 1]; /* sample sort: where bucket q begins */
    uint8_t *bid;   /* sample sort: each key's bucket (n bytes) */
    int tree;       /* sample sort: the splitters are in t32/t64 (64 buckets, AVX2) */
    split_tree32 t32;
    split_tree64 t64;
} long_job;

static void chunk(const long_job *lj, int part, int64_t *b, int64_t *e) {
    *b = lj->j->n * part / lj->parts;
    *e = lj->j->n * (part + 1) / lj->parts;
}

static void long_load(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e;
    chunk(lj, part, &b, &e);
    load_keys(lj->w, lj->b->k[0], lj->b->ix[0], lj->row, lj->j->in->strides[lj->j->in->ndim - 1], b, e, lj->j);
}

static void long_store(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e;
    chunk(lj, part, &b, &e);
    store_keys(lj->w, lj->b->k[lj->cur], lj->b->ix[lj->cur], lj->orow, lj->j->out->strides[lj->j->out->ndim - 1], b,
               e, lj->j);
}

static void long_count(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e, *c = lj->cnt + (int64_t)part * RADIX;
    chunk(lj, part, &b, &e);
    memset(c, 0, RADIX * sizeof *c);
    const void *k = lj->b->k[lj->cur];
    int shift = 8 * lj->pass;
    switch (lj->w) {
    case 1: count_u8(k, b, e, shift, c); break;
    case 2: count_u16(k, b, e, shift, c); break;
    case 4: count_u32(k, b, e, shift, c); break;
    default: count_u64(k, b, e, shift, c); break;
    }
}

static void long_scatter(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e, *c = lj->cnt + (int64_t)part * RADIX;
    chunk(lj, part, &b, &e);
    const void *k = lj->b->k[lj->cur];
    void *k2 = lj->b->k[lj->cur ^ 1];
    const int64_t *ix = lj->b->ix[lj->cur];
    int64_t *ix2 = lj->b->ix[lj->cur ^ 1];
    int shift = 8 * lj->pass;
    switch (lj->w) {
    case 1: scatter_u8(k, k2, ix, ix2, b, e, shift, c); break;
    case 2: scatter_u16(k, k2, ix, ix2, b, e, shift, c); break;
    case 4: scatter_u32(k, k2, ix, ix2, b, e, shift, c); break;
    default: scatter_u64(k, k2, ix, ix2, b, e, shift, c); break;
    }
}

/* ---- a long row of 4- or 8-byte keys: a sample sort. Each part counts
 * its chunk's keys by bucket, then scatters them (stable: bucket by
 * bucket, part by part), then each bucket is sorted on its own by the
 * serial radix sort and stored: four pool jobs a row, where the LSD sort
 * takes two a byte (ten for float32). On the GPU machine's 16 cores the
 * LSD sort of 2^20 float32 took 3.0 ms at best but 11.6 ms median, a
 * straggling worker holding every one of its ten jobs. The count keeps
 * each key's bucket as a byte (nb <= 256), so the scatter does not search
 * again (bench/results/2026-11-30-session18-cpu-sort.md: the two searches
 * were ~13 ns a key of a 16-thread sort's time). With AVX2 and at most 16
 * workers there are 64 buckets, searched in the two-level split tree
 * (~2-3 ns a key on the VM against the binary search's ~14); the chunks
 * are four a worker (nd_cpu_lib_sort). */

static void sample_count(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e, *c = lj->cnt + (int64_t)part * lj->nb;
    chunk(lj, part, &b, &e);
#ifdef SPLIT_TREE_AVX2
    if (lj->tree) {
        if (lj->w == 4) tcount_u32(lj->b->k[0], b, e, &lj->t32, c, lj->bid);
        else tcount_u64(lj->b->k[0], b, e, &lj->t64, c, lj->bid);
        return;
    }
#endif
    if (lj->w == 4) {
        bcount_u32(lj->b->k[0], b, e, lj->spl32, lj->nb, c, lj->bid);
    } else {
        bcount_u64(lj->b->k[0], b, e, lj->spl, lj->nb, c, lj->bid);
    }
}

static void sample_scatter(void *varg, int part) {
    long_job *lj = varg;
    int64_t b, e, *c = lj->cnt + (int64_t)part * lj->nb;
    chunk(lj, part, &b, &e);
    if (lj->w == 4) {
        bscatter_u32(lj->b->k[0], lj->b->k[1], lj->b->ix[0], lj->b->ix[1], b, e, lj->bid, lj->nb, c);
    } else {
        bscatter_u64(lj->b->k[0], lj->b->k[1], lj->b->ix[0], lj->b->ix[1], b, e, lj->bid, lj->nb, c);
    }
}

/* Bucket q (a part index here): sorted in place in buffer 1 (buffer 0's
 * same range the scratch), stored, and left in buffer 1 for fix_zeros. */
static void sample_bucket(void *varg, int q) {
    long_job *lj = varg;
    int64_t b = lj->start[q], e = lj->start[q + 1], n = e - b;
    if (n == 0) return;
    int w = lj->w;
    char *k1 = (char *)lj->b->k[1] + b * w, *k0 = (char *)lj->b->k[0] + b * w;
    int64_t *ix1 = lj->b->ix[1] ? lj->b->ix[1] + b : NULL, *ix0 = lj->b->ix[0] ? lj->b->ix[0] + b : NULL;
    int at = sort_serial(w, k1, ix1, k0, ix0, n);
    if (at) { /* the result is in the scratch range */
        memcpy(k1, k0, (size_t)n * w);
        if (ix1) memcpy(ix1, ix0, (size_t)n * sizeof *ix1);
    }
    store_keys(w, lj->b->k[1], lj->b->ix[1], lj->orow, lj->j->out->strides[lj->j->out->ndim - 1], b, e, lj->j);
}

static void sample_sort_row(nd_cpu_state *st, long_job *lj) {
    const sort_job *j = lj->j;
    const int workers = nd_cpu_pool_size(st->pool);
    int nb = 2;
    while (nb < 4 * workers && nb < ND_CPU_SORT_MAX_BUCKETS) nb *= 2;
    lj->tree = 0;
#ifdef SPLIT_TREE_AVX2
    if (nb <= SPLIT_TREE_BUCKETS && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) {
        nb = SPLIT_TREE_BUCKETS;
        lj->tree = 1;
    }
#endif
    lj->nb = nb;
    nd_cpu_run_parts(st, lj->parts, long_load, lj);
    if (lj->w == 4)
        splitters_u32(lj->b->k[0], j->n, lj->spl32, nb);
    else
        splitters_u64(lj->b->k[0], j->n, lj->spl, nb);
    if (lj->tree && lj->w == 4) split_tree32_build(lj->spl32, &lj->t32);
    if (lj->tree && lj->w == 8) split_tree64_build(lj->spl, &lj->t64);
    nd_cpu_run_parts(st, lj->parts, sample_count, lj);
    int64_t sum = 0;
    for (int q = 0; q < nb; q++) {
        lj->start[q] = sum;
        for (int t = 0; t < lj->parts; t++) {
            int64_t c = lj->cnt[(int64_t)t * nb + q];
            lj->cnt[(int64_t)t * nb + q] = sum;
            sum += c;
        }
    }
    lj->start[nb] = sum;
    nd_cpu_run_parts(st, lj->parts, sample_scatter, lj);
    nd_cpu_run_parts(st, nb, sample_bucket, lj);
    lj->cur = 1;
}

static nd_status sort_long_row(nd_cpu_state *st, sort_job *j, int64_t r, row_bufs *b, int64_t *cnt, int parts,
                               uint8_t *bid) {
    const nd_kernel_arg *in = j->in, *out = j->out;
    int w = j->f.width, out_w = j->mode == ND_SORT_INDICES ? 8 : w;
    long_job lj = {j, (const char *)in->data + nd_cpu_row_offset(in, r) * w,
                   (char *)out->data + nd_cpu_row_offset(out, r) * out_w, parts, 0, w, b, 0, cnt, 0, {0}, {0}, {0}, bid,
                   0, {{0}, {{0}}}, {{0}, {{0}}}};
    if (w >= 4) {
        sample_sort_row(st, &lj);
        if (j->mode == ND_SORT_VALUES && j->neg_zero)
            fix_zeros(j, lj.row, in->strides[in->ndim - 1], b->k[1], lj.orow, out->strides[out->ndim - 1]);
        return ND_OK;
    }
    nd_cpu_run_parts(st, parts, long_load, &lj);
    for (int p = 0; p < j->passes; p++) {
        lj.pass = p;
        nd_cpu_run_parts(st, parts, long_count, &lj);
        /* Offsets: digit by digit, and within a digit chunk by chunk (stable). */
        int64_t sum = 0;
        int moves = 1;
        for (int d = 0; d < RADIX && moves; d++) {
            int64_t total = 0;
            for (int t = 0; t < parts; t++) total += cnt[t * RADIX + d];
            if (total == j->n) moves = 0; /* every key has digit d here */
        }
        if (!moves) continue;
        for (int d = 0; d < RADIX; d++)
            for (int t = 0; t < parts; t++) {
                int64_t c = cnt[t * RADIX + d];
                cnt[t * RADIX + d] = sum;
                sum += c;
            }
        nd_cpu_run_parts(st, parts, long_scatter, &lj);
        lj.cur ^= 1;
    }
    nd_cpu_run_parts(st, parts, long_store, &lj);
    if (j->mode == ND_SORT_VALUES && j->neg_zero)
        fix_zeros(j, lj.row, in->strides[in->ndim - 1], b->k[lj.cur], lj.orow, out->strides[out->ndim - 1]);
    return ND_OK;
}

nd_status nd_cpu_lib_sort(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    sort_job j = {in, out, (int)u->lib_args.v[0].i, nd_sort_key_info_of(in->dtype), 0, 0, 0, 0, NULL};
    if (!j.f.width || in->ndim < 1 || (j.mode == ND_SORT_INDICES ? out->dtype != ND_INT64 : out->dtype != in->dtype))
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: sort of %s (%d-d) into %s", nd_dtype_name((nd_dtype)in->dtype),
                            in->ndim, nd_dtype_name((nd_dtype)out->dtype));
    j.n = in->shape[in->ndim - 1];
    j.passes = j.f.width;
    j.cache = st->blocks;
    int64_t rows = j.n ? in->size / j.n : 0;
    if (rows == 0) return ND_OK;
    int workers = nd_cpu_pool_size(st->pool);
    if (j.n >= ND_CPU_SORT_PARALLEL && workers > 1 && rows < 2 * workers) {
        row_bufs b;
        /* The sample sort's chunks: four a worker (at least
         * ND_CPU_SORT_CHUNK keys each), handed out one at a time, so that
         * a worker the host runs late holds back a quarter of its share,
         * not all of it. The LSD sort (1- and 2-byte keys): one a worker. */
        int parts = workers;
        if (j.f.width >= 4) {
            int64_t most = j.n / ND_CPU_SORT_CHUNK;
            parts = 4 * workers < most ? 4 * workers : (int)most;
            if (parts < workers) parts = workers;
        }
        int64_t *cnt = nd_malloc((size_t)parts * (RADIX > ND_CPU_SORT_MAX_BUCKETS ? RADIX : ND_CPU_SORT_MAX_BUCKETS) *
                                 sizeof *cnt);
        nd_status s = cnt ? bufs_alloc(&b, j.n, j.f.width, j.mode == ND_SORT_INDICES, j.cache) : ND_ERR_OOM;
        uint8_t *bid = s == ND_OK && j.f.width >= 4 ? buf_get(j.cache, (size_t)j.n) : NULL; /* the sample sort's */
        if (s == ND_OK && j.f.width >= 4 && !bid) s = ND_ERR_OOM;
        for (int64_t r = 0; r < rows && s == ND_OK; r++) s = sort_long_row(st, &j, r, &b, cnt, parts, bid);
        buf_put(j.cache, bid, (size_t)j.n);
        if (cnt) bufs_free(&b);
        free(cnt);
        if (s != ND_OK) return nd_error_set(s, "cpu backend: out of memory sorting %" PRId64 " elements", j.n);
        return ND_OK;
    }
    nd_cpu_parallel_for(st, rows, (1 << 15) / (j.n ? j.n : 1) + 1, sort_rows, &j);
    if (j.err) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory sorting rows of %" PRId64, j.n);
    return ND_OK;
}
