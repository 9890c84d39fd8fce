// Histograms (prims.h): the bin of each value from common/hist_bins.h, as
// the CPU backend, so both put every value in NumPy's bin.
//
// Counts are integers, so atomics give the same result in any order: each
// block counts a grid-stride share of the values into shared memory (when
// the bins fit) and adds its counts to the output once. Float weights must
// be summed in a fixed order: the (bin, weight) pairs are sorted by bin
// with CUB's radix sort, which is stable (each bin's weights stay in
// element order), and each bin's run is summed by DeviceSegmentedReduce (one
// block per bin, a fixed tree): the same bits on every run.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_reduce.cuh>

#include "prims.h"
#include "common/hist_bins.h"
#include "common/lib_calls.h"

namespace {

constexpr int HIST_THREADS = 256;
constexpr int64_t SHARED_BINS = 8192; // 32 KiB of uint32 counts

struct BinOf {
    int mode, x_f32;
    const void *x, *edges;
    int64_t n_edges, bins;
    nd_hb_uniform_params uni;
    __device__ __forceinline__ int64_t operator()(int64_t i) const {
        switch (mode) {
        case ND_HIST_INDEX: return nd_hb_index(static_cast<const int64_t *>(x)[i], bins);
        case ND_HIST_UNIFORM:
            return x_f32 ? nd_hb_uniform_f32(static_cast<const float *>(x)[i], &uni)
                         : nd_hb_uniform_f64(static_cast<const double *>(x)[i], &uni);
        default:
            return x_f32 ? nd_hb_edges_f32(static_cast<const float *>(x)[i], static_cast<const float *>(edges), n_edges)
                         : nd_hb_edges_f64(static_cast<const double *>(x)[i], static_cast<const double *>(edges),
                                           n_edges);
        }
    }
};

__global__ void __launch_bounds__(HIST_THREADS) count_bins(BinOf f, int64_t n, unsigned long long *out) {
    extern __shared__ unsigned int local[];
    const bool shared = f.bins <= SHARED_BINS;
    if (shared)
        for (int64_t b = threadIdx.x; b < f.bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = f(i);
        if (b < 0) continue;
        if (shared) atomicAdd(&local[b], 1u);
        else atomicAdd(&out[b], 1ULL);
    }
    if (!shared) return;
    __syncthreads();
    for (int64_t b = threadIdx.x; b < f.bins; b += blockDim.x)
        if (local[b]) atomicAdd(&out[b], (unsigned long long)local[b]);
}

// Key of each value: its bin, or `bins` for a dropped one (sorted last,
// outside every segment).
__global__ void bin_keys(BinOf f, int64_t n, int *keys) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = f(i);
        keys[i] = b < 0 ? (int)f.bins : (int)b;
    }
}

// offsets[b] = the first sorted position whose key is >= b, b = 0..bins.
__global__ void segment_offsets(const int *sorted, int64_t n, int64_t bins, int *offsets) {
    int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b > bins) return;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < b) lo = mid + 1;
        else hi = mid;
    }
    offsets[b] = (int)lo;
}

__global__ void uniform_index(const double *x, int64_t n, nd_hb_uniform_params uni, int64_t drop, int64_t *out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = nd_hb_uniform_f64(x[i], &uni);
        out[i] = b < 0 ? drop : b;
    }
}

unsigned grid_for(int64_t n) {
    int64_t g = (n + HIST_THREADS - 1) / HIST_THREADS;
    return (unsigned)(g < 1 ? 1 : g > 4096 ? 4096 : g);
}

size_t align_up(size_t v) { return (v + 255) & ~(size_t)255; }

int end_bit_for(int64_t bins) {
    int b = 1;
    while (b < 31 && ((int64_t)1 << b) <= bins) b++;
    return b;
}

} // namespace

NDP_API int ndp_histogram(int flags, int x_dtype, const void *x, int64_t n, const void *edges, int64_t n_edges,
                          const double *weights, void *out, int64_t bins, double lo, double hi, void *tmp,
                          size_t *tmp_bytes, cudaStream_t s) {
    const int weighted = (flags & ND_HIST_WEIGHTED) != 0;
    BinOf f{flags & ND_HIST_MODE_MASK, x_dtype == ND_FLOAT32, x, edges, n_edges, bins, nd_hb_uniform_init(lo, hi, bins)};
    if (!weighted) {
        if (!tmp) {
            *tmp_bytes = 0;
            return cudaSuccess;
        }
        cudaError_t e = cudaMemsetAsync(out, 0, (size_t)bins * sizeof(unsigned long long), s);
        if (e != cudaSuccess || n == 0) return e;
        size_t shared = bins <= SHARED_BINS ? (size_t)bins * sizeof(unsigned int) : 0;
        count_bins<<<grid_for(n), HIST_THREADS, shared, s>>>(f, n, static_cast<unsigned long long *>(out));
        return cudaGetLastError();
    }
    if (n > 0x7fffffffLL || bins >= 0x7fffffffLL) return cudaErrorInvalidValue;
    // [keys in][keys out][weights out][offsets][sort temp | reduce temp]
    const int end_bit = end_bit_for(bins);
    size_t sort_bytes = 0, reduce_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, (const int *)nullptr, (int *)nullptr,
                                                    (const double *)nullptr, (double *)nullptr, (int)n, 0, end_bit, s);
    if (e != cudaSuccess) return e;
    e = cub::DeviceSegmentedReduce::Sum(nullptr, reduce_bytes, (const double *)nullptr, (double *)nullptr, (int)bins,
                                        (const int *)nullptr, (const int *)nullptr, s);
    if (e != cudaSuccess) return e;
    const size_t keys_bytes = align_up((size_t)n * sizeof(int)), w_bytes = align_up((size_t)n * sizeof(double));
    const size_t off_bytes = align_up((size_t)(bins + 1) * sizeof(int));
    const size_t temp_bytes = align_up(sort_bytes > reduce_bytes ? sort_bytes : reduce_bytes);
    const size_t need = 2 * keys_bytes + w_bytes + off_bytes + temp_bytes;
    if (!tmp) {
        *tmp_bytes = need;
        return cudaSuccess;
    }
    if (*tmp_bytes < need) return cudaErrorInvalidValue;
    char *w = static_cast<char *>(tmp);
    int *keys = reinterpret_cast<int *>(w), *keys_sorted = reinterpret_cast<int *>(w + keys_bytes);
    double *w_sorted = reinterpret_cast<double *>(w + 2 * keys_bytes);
    int *offsets = reinterpret_cast<int *>(w + 2 * keys_bytes + w_bytes);
    void *temp = w + 2 * keys_bytes + w_bytes + off_bytes;
    if (n == 0) return cudaMemsetAsync(out, 0, (size_t)bins * sizeof(double), s);
    bin_keys<<<grid_for(n), HIST_THREADS, 0, s>>>(f, n, keys);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    size_t b1 = sort_bytes;
    e = cub::DeviceRadixSort::SortPairs(temp, b1, keys, keys_sorted, weights, w_sorted, (int)n, 0, end_bit, s);
    if (e != cudaSuccess) return e;
    segment_offsets<<<(unsigned)((bins + 1 + 255) / 256), 256, 0, s>>>(keys_sorted, n, bins, offsets);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    size_t b2 = reduce_bytes;
    // An empty bin's segment reduces to 0 (Sum's initial value).
    return cub::DeviceSegmentedReduce::Sum(temp, b2, w_sorted, static_cast<double *>(out), (int)bins, offsets,
                                           offsets + 1, s);
}

NDP_API int ndp_bin_index(const double *x, int64_t n, int64_t bins, double lo, double hi, int64_t drop, int64_t *out,
                          cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    uniform_index<<<grid_for(n), HIST_THREADS, 0, s>>>(x, n, nd_hb_uniform_init(lo, hi, bins), drop, out);
    return cudaGetLastError();
}
