/* The bin of one value for ND_LIB_HISTOGRAM (common/lib_calls.h), shared by
 * the CPU backend (C) and the CUDA plugin (nvcc): NumPy's rules, so that
 * both backends put every value in NumPy's bin.
 *
 * - index (bincount, histogram2d): the value is the bin; outside [0, bins)
 *   it is dropped.
 * - uniform (histogram with a bin count and a range): NumPy's
 *   fast path: values outside [lo, hi] (compared in the data's dtype T)
 *   and NaN are dropped; the index is guessed from (x - lo) in T, scaled in
 *   float64, truncated, the top value moved into the last bin, then
 *   corrected by one against the edges np.linspace(lo, hi, bins + 1)
 *   (i * step + lo in float64, the last exactly hi) rounded to T; the last
 *   bin is closed: hi counts.
 * - edges (histogram with explicit edges, increasing): bin i holds
 *   edges[i] <= x < edges[i + 1], the last one also x == edges[last];
 *   anything else (NaN included) is dropped.
 * Every function returns the bin or -1. */
#ifndef ND_COMMON_HIST_BINS_H
#define ND_COMMON_HIST_BINS_H

#include <stdint.h>

#ifdef __CUDACC__
#define ND_HB_FN static __host__ __device__ inline
#else
#define ND_HB_FN static inline
#endif

/* ND_LIB_HISTOGRAM's v[0].i: the mode, plus ND_HIST_WEIGHTED when a
 * weights input is summed instead of counting. */
enum { ND_HIST_INDEX = 0, ND_HIST_UNIFORM = 1, ND_HIST_EDGES = 2, ND_HIST_MODE_MASK = 3, ND_HIST_WEIGHTED = 4 };

ND_HB_FN int64_t nd_hb_index(int64_t v, int64_t bins) { return v >= 0 && v < bins ? v : -1; }

/* The uniform bins' constants, computed once per call. The first guess
 * multiplies by bins / (hi - lo) where NumPy divides by (hi - lo): the
 * guess is within one bin either way and the corrections against the edges
 * give the same bin (the one whose edges hold x). */
typedef struct {
    double lo, hi, step, scale;
    int64_t bins;
} nd_hb_uniform_params;

ND_HB_FN nd_hb_uniform_params nd_hb_uniform_init(double lo, double hi, int64_t bins) {
    nd_hb_uniform_params p = {lo, hi, (hi - lo) / (double)bins, (double)bins / (hi - lo), bins};
    return p;
}

/* Edge i of np.linspace: i * step + lo rounded twice. nvcc would fuse it
 * into one FMA, differently in different kernels (one value's bin then
 * depended on whether it was counted or weighted); the C build has no
 * contraction (c11). */
#ifdef __CUDA_ARCH__
#define ND_HB_EDGE(i, p) __dadd_rn(__dmul_rn((double)(i), (p)->step), (p)->lo)
#else
#define ND_HB_EDGE(i, p) ((double)(i) * (p)->step + (p)->lo)
#endif

#define ND_HB_UNIFORM(NAME, T)                                                                          \
    ND_HB_FN int64_t NAME(T x, const nd_hb_uniform_params *p) {                                          \
        T lo_t = (T)p->lo, hi_t = (T)p->hi;                                                             \
        if (!(x >= lo_t && x <= hi_t)) return -1;                                                       \
        T d = (T)(x - lo_t);                                                                            \
        int64_t i = (int64_t)((double)d * p->scale), bins = p->bins;                                    \
        if (i >= bins) i = bins - 1;                                                                    \
        if (i < 0) i = 0;                                                                               \
        if (i > 0 && x < (T)ND_HB_EDGE(i, p)) i--;                                                      \
        if (i != bins - 1 && x >= (T)(i + 1 == bins ? p->hi : ND_HB_EDGE(i + 1, p))) i++;                \
        return i;                                                                                       \
    }
ND_HB_UNIFORM(nd_hb_uniform_f32, float)
ND_HB_UNIFORM(nd_hb_uniform_f64, double)

#define ND_HB_EDGES(NAME, T)                                                                            \
    ND_HB_FN int64_t NAME(T x, const T *edges, int64_t n_edges) {                                       \
        if (n_edges < 2) return -1;                                                                     \
        if (x == edges[n_edges - 1]) return n_edges - 2;                                                \
        int64_t lo = 0, hi = n_edges; /* first k with x < edges[k] */                                   \
        while (lo < hi) {                                                                               \
            int64_t mid = lo + (hi - lo) / 2;                                                           \
            if (x < edges[mid]) hi = mid;                                                               \
            else lo = mid + 1;                                                                          \
        }                                                                                               \
        return lo >= 1 && lo <= n_edges - 1 ? lo - 1 : -1;                                              \
    }
ND_HB_EDGES(nd_hb_edges_f32, float)
ND_HB_EDGES(nd_hb_edges_f64, double)

#endif
