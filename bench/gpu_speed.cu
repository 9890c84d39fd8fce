// gpu_speed.cu — the CUB plugin's scans and sorts (src/backends/cuda/prims,
// called through libnd_cuda_prims.so as libnd calls them) against their
// floors on one device in one run, each checked on the host first.
//
//   scan   cumsum of 2^28 float32 for every ndp_scan_variant (or those
//          named); floor: a device-to-device copy of the same bytes (read +
//          write); target <= 1.15x. CUB's DeviceScan::InclusiveSum
//          alongside (not deterministic: the bits of 4 runs are compared and
//          reported). Checks: a float32 input of 0s and 1s whose sums are
//          exact (bit for bit against the host), uniform [0, 1) within
//          1e-5 of a float64 host sum and 2 more runs with the same bits;
//          edge cases bit for bit (float64 small integers too; lengths 1,
//          31, around the tiles and the tree's levels, a row of
//          1024 x 24576 + 3 (level 2 of the tree), 2^20 + 7, several
//          rows, empty; -0.0, NaN propagation, nancumsum, +-1 products,
//          int64 wrapping sums and products). Each variant also on 4096
//          rows of 2^28 / 4096, and on 2^27 float64 (the same bytes, the
//          same floor; within 1e-5 of the host, same bits run to run),
//          checked and timed; CUB's float64 InclusiveSum alongside.
//   sort   2^28 float32 values: ndp_sort (NDP_SORT_RAW) against
//          DeviceRadixSort::SortKeys(in, out) alone (int and int64 counts);
//          target <= 1.05x. NDP_SORT_BY_INDICES (argsort + gather) too.
//   argsort 2^26 float64: ndp_sort indices against SortPairs of 64-bit keys
//          with int64 and int32 values alone.
//   rows   4096 x 65536 float32 values: NDP_SORT_RAW (segmented radix sort
//          and NaN fixup) and NDP_SORT_BY_INDICES (argsort + gather),
//          against DeviceSegmentedRadixSort and DeviceSegmentedSort alone.
//   Sort checks: bit for bit against a stable host radix sort by nd's keys
//   (common/sort_keys.h; NaNs the default NaN), on uniform inputs and on
//   inputs where 1/16 of the elements are -0.0, +0.0, NaNs of both signs
//   and several payloads, infinities and subnormals.
//
// Times: median of RUNS cudaEvent-timed runs after a warm-up, device time
// only (no nd recording or synchronisation). Every line says ok or FAIL;
// the last lines are the targets and a JSON summary. Exit status 1 if a
// check failed.
//
//   bench_gpu_speed [RUNS] [LOG2_N] [all|scan|sort] [VARIANTS]   (defaults 10, 28, all, every scan)
//   VARIANTS: scan variant names, comma-separated (common/scan_plan.h).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "backends/cuda/prims/prims.h"
#include "common/exact_sum.h"
#include "common/lib_calls.h"
#include "common/sort_keys.h"

#define CK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t e_ = (cudaError_t)(x);                                                                        \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                           \
            exit(2);                                                                                              \
        }                                                                                                         \
    } while (0)

// A plugin call that returns an error is a failed check, not the end of
// the run (a fault on the device still ends it at the next CK).
static int failures = 0;
#define PK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t e_ = (cudaError_t)(x);                                                                        \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "%s:%d: plugin call failed: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
            failures++;                                                                                           \
        }                                                                                                         \
    } while (0)

static int RUNS = 10;
static cudaStream_t S;
static std::string json = "{\"bench\":\"gpu_speed\"";
static std::vector<std::string> targets; // the summary's lines

static void record(const char *key, double v) {
    char b[128];
    snprintf(b, sizeof b, ",\"%s\":%.4f", key, v);
    json += b;
}

// ------------------------------------------------------------------ inputs

__host__ __device__ __forceinline__ uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

enum Fill { UNIFORM, ZERO_ONE, SMALL_INTS, NEG_ZEROS, SPECIALS, SIGNS, RAW };

// The special values of a float format: zeros, NaNs of both signs and
// payloads, infinities, subnormals.
template <typename U> __device__ U special(uint64_t h) {
    constexpr bool d = sizeof(U) == 8;
    const U sign = (U)1 << (8 * sizeof(U) - 1);
    const U inf = d ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
    const U qnan = d ? (U)0x7FF8000000000000ull : (U)0x7FC00000u;
    switch (h % 10) {
    case 0: return 0;
    case 1: return sign;
    case 2: return qnan;
    case 3: return qnan | sign;
    case 4: return inf | 1;             // a signalling NaN payload
    case 5: return (U)~(U)0;            // -NaN, every payload bit
    case 6: return inf;
    case 7: return inf | sign;
    case 8: return 1;                   // the smallest subnormal
    default: return (U)(sign | 1);
    }
}

template <typename U> __global__ void k_fill(U *x, int64_t n, Fill how, uint64_t seed) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t h = mix((uint64_t)i * 0x9E3779B97F4A7C15ull ^ seed);
        U v;
        if constexpr (sizeof(U) == 4) {
            float f = (float)((h >> 40) * (1.0 / 16777216.0)); // [0, 1)
            if (how == ZERO_ONE) f = (h & 31) == 0 ? 1.0f : 0.0f;
            if (how == SMALL_INTS) f = (float)(h % 1000);
            if (how == NEG_ZEROS) f = -0.0f;
            if (how == SPECIALS) f = f * 4.0f - 2.0f;
            if (how == SIGNS) f = (h & 64) ? -1.0f : 1.0f;
            memcpy(&v, &f, 4);
        } else {
            double f = (double)(h >> 11) * (1.0 / 9007199254740992.0);
            if (how == ZERO_ONE) f = (h & 31) == 0 ? 1.0 : 0.0;
            if (how == SMALL_INTS) f = (double)(h % 1000);
            if (how == NEG_ZEROS) f = -0.0;
            if (how == SPECIALS) f = f * 4.0 - 2.0;
            if (how == SIGNS) f = (h & 64) ? -1.0 : 1.0;
            memcpy(&v, &f, 8);
        }
        if (how == RAW) v = (U)h;
        if (how == SPECIALS && (h >> 20) % 16 == 0) v = special<U>(h >> 24);
        x[i] = v;
    }
}

__global__ void k_copy16(const uint4 *a, uint4 *b, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

template <typename U> static void fill(U *x, int64_t n, Fill how, uint64_t seed) {
    k_fill<U><<<4096, 256, 0, S>>>(x, n, how, seed);
    CK(cudaGetLastError());
}

// Host bytes to the device, in S's order. Not cudaMemcpy: S is a
// non-blocking stream, and a cudaMemcpy from pageable memory may return
// before its DMA has landed, so a kernel launched next on S could read the
// end of the buffer still holding its old bytes (the exact variants'
// int64 cumprod check once failed so: the tail of its input was still the
// cumsum check's values, before `| 1`).
static void to_device(void *d, const void *h, size_t bytes) {
    CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, S));
    CK(cudaStreamSynchronize(S)); // h may be freed or changed after we return
}

template <typename T> static std::vector<T> to_host(const void *d, int64_t n) {
    std::vector<T> h((size_t)n);
    CK(cudaStreamSynchronize(S));
    CK(cudaMemcpy(h.data(), d, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// ------------------------------------------------------------------ timing

static float median_ms(const std::function<void()> &f) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    f(); // warm-up
    std::vector<float> t;
    for (int r = 0; r < RUNS; r++) {
        CK(cudaEventRecord(a, S));
        f();
        CK(cudaEventRecord(b, S));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Device workspace that only grows.
static void *ws_ptr = nullptr;
static size_t ws_size = 0;
static void *workspace(size_t bytes) {
    if (bytes > ws_size || !ws_ptr) { // never NULL: a NULL tmp asks for the size only
        CK(cudaStreamSynchronize(S));
        if (ws_ptr) CK(cudaFree(ws_ptr));
        ws_size = bytes;
        CK(cudaMalloc(&ws_ptr, ws_size ? ws_size : 1));
    }
    return ws_ptr;
}

// ------------------------------------------------------------------- scans

static const char *const scan_names[NDP_SCAN_N_VARIANTS] = ND_SCAN_VARIANT_NAMES;

static void run_scan(int variant, int dtype, const void *in, void *out, int64_t rows, int64_t n,
                     int op = ND_SCAN_SUM) {
    size_t bytes = 0;
    PK(ndp_scan_variant(variant, dtype, op, nullptr, nullptr, rows, n, nullptr, &bytes, S));
    void *w = workspace(bytes);
    PK(ndp_scan_variant(variant, dtype, op, in, out, rows, n, w, &bytes, S));
}

// Checks one variant of the scan of rows x n of dtype: returns "ok" or why not.
template <typename T>
static std::string check_scan(int variant, T *in, T *out, int64_t rows, int64_t n, Fill how) {
    const int dtype = sizeof(T) == 4 ? ND_FLOAT32 : ND_FLOAT64;
    fill((typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type *)in, rows * n, how, 77);
    CK(cudaMemsetAsync(out, 0xff, (size_t)(rows * n) * sizeof(T), S)); // poison
    run_scan(variant, dtype, in, out, rows, n);
    std::vector<T> x = to_host<T>(in, rows * n), y = to_host<T>(out, rows * n);
    const bool exact = how != UNIFORM;
    for (int64_t r = 0; r < rows; r++) {
        double acc = 0;
        T facc = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t k = r * n + i;
            acc += (double)x[k];
            facc = i == 0 ? x[k] : (T)(facc + x[k]);
            if (exact) {
                if (memcmp(&facc, &y[k], sizeof(T)) != 0) {
                    char b[160];
                    snprintf(b, sizeof b, "FAIL (row %lld element %lld: %.17g, want %.17g bit for bit)", (long long)r,
                             (long long)i, (double)y[k], (double)facc);
                    return b;
                }
            } else if (!(std::fabs((double)y[k] - acc) <= 1e-5 * std::max(acc, 1.0))) {
                char b[160];
                snprintf(b, sizeof b, "FAIL (row %lld element %lld: %.9g, host %.9g)", (long long)r, (long long)i,
                         (double)y[k], acc);
                return b;
            }
        }
    }
    // Run to run: 2 more runs, the same bits (exact sums are the same bits
    // in any order: only the rounded ones tell).
    for (int k = 0; k < (exact ? 0 : 2); k++) {
        CK(cudaMemsetAsync(out, 0xff, (size_t)(rows * n) * sizeof(T), S));
        run_scan(variant, dtype, in, out, rows, n);
        std::vector<T> z = to_host<T>(out, rows * n);
        if (memcmp(z.data(), y.data(), z.size() * sizeof(T)) != 0) return "FAIL (run-to-run bits differ)";
    }
    return "ok";
}

// Checks a variant against the host's in-order scan, bit for bit (a NaN
// matches any NaN), on inputs whose every association gives the same bits:
// 0/1 and small integers, +-1 products, -0.0, wrapping int64; nan_at >= 0
// makes that element of every row a NaN (it and everything after it are NaN,
// or, for the nan scans, it counts as 0 / 1). The 64 elements after the
// result must keep their poison. T: float, double, uint64_t (int64).
template <typename T>
static std::string check_exact(int variant, int op, void *in, void *out, int64_t rows, int64_t n, Fill how,
                               int64_t nan_at) {
    using U = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    const bool is_int = std::is_integral<T>::value;
    const int dtype = is_int ? ND_INT64 : sizeof(T) == 4 ? ND_FLOAT32 : ND_FLOAT64;
    const int64_t total = rows * n, slack = 64;
    if (total > 0) fill((U *)in, total, how, 91 + (uint64_t)n);
    std::vector<T> x = to_host<T>(in, total);
    if constexpr (std::is_integral<T>::value) {
        // Odd factors: a product of random words is 0 after ~64 of them.
        if ((op == ND_SCAN_PROD || op == ND_SCAN_NANPROD) && total > 0) {
            for (auto &v : x) v |= 1;
            to_device(in, x.data(), (size_t)total * sizeof(T));
        }
    } else {
        if (nan_at >= 0 && total > 0) {
            for (int64_t r = 0; r < rows; r++) x[r * n + nan_at] = (T)NAN;
            to_device(in, x.data(), (size_t)total * sizeof(T));
        }
    }
    CK(cudaMemsetAsync(out, 0xa5, (size_t)(total + slack) * sizeof(T), S));
    run_scan(variant, dtype, in, out, rows, n, op);
    std::vector<T> y = to_host<T>(out, total + slack);
    const bool prod = op == ND_SCAN_PROD || op == ND_SCAN_NANPROD, skip = op == ND_SCAN_NANSUM || op == ND_SCAN_NANPROD;
    for (int64_t r = 0; r < rows; r++) {
        T acc = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t k = r * n + i;
            T v = x[k];
            if (skip && v != v) v = prod ? T(1) : T(0);
            acc = i == 0 ? v : prod ? T(acc * v) : T(acc + v);
            const bool same = memcmp(&acc, &y[k], sizeof(T)) == 0 || (acc != acc && y[k] != y[k]);
            if (!same) {
                char b[200];
                snprintf(b, sizeof b, "FAIL (%lld x %lld, op %d, fill %d: row %lld element %lld: %.17g, want %.17g)",
                         (long long)rows, (long long)n, op, (int)how, (long long)r, (long long)i, (double)y[k],
                         (double)acc);
                return b;
            }
        }
    }
    std::vector<unsigned char> poison(slack * sizeof(T), 0xa5);
    if (memcmp(y.data() + total, poison.data(), poison.size()) != 0) {
        char b[120];
        snprintf(b, sizeof b, "FAIL (%lld x %lld: wrote past the end)", (long long)rows, (long long)n);
        return b;
    }
    return "ok";
}

// A variant's edge cases: lengths around the tile sizes (3072, 4096), 8
// and 32 agg tiles of 8-byte values (12288, 24576) and the tree's levels
// (32 and 1024 tiles), 1, 31, 2^20 + 7, 2^22 + 7; several rows;
// empty; float32 0/1 sums, -0.0, NaN propagation, nancumsum, +-1
// products; float64 small integers; int64 wrapping sums and products.
// Cases larger than the buffers (bytes each) are left out.
static std::string edge_checks(int v, void *in, void *out, size_t bytes) {
    static const int64_t lens[] = {1, 31, 2047, 3071, 3072, 3073, 4095, 4096, 4097, 12287, 12289, 24575, 24576, 24577,
                                   32 * 3072 + 1, 32 * 4096 + 5, 32 * 12288 + 5, 32 * 24576, 32 * 24576 + 1,
                                   (1 << 20) + 7, (1 << 22) + 7};
    std::string c = "ok";
    auto fits = [&](int64_t rows, int64_t n) { return (size_t)(rows * n + 64) * 8 <= bytes; };
    for (int64_t n : lens) {
        if (!fits(1, n)) continue;
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_SUM, in, out, 1, n, ZERO_ONE, -1);
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_SUM, in, out, 1, n, NEG_ZEROS, -1);
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_SUM, in, out, 1, n, ZERO_ONE, n / 2);
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_NANSUM, in, out, 1, n, ZERO_ONE, n / 2);
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_PROD, in, out, 1, n, SIGNS, -1);
        if (c == "ok") c = check_exact<double>(v, ND_SCAN_SUM, in, out, 1, n, SMALL_INTS, -1);
        if (c == "ok") c = check_exact<double>(v, ND_SCAN_NANPROD, in, out, 1, n, SIGNS, n / 3);
        if (c == "ok") c = check_exact<uint64_t>(v, ND_SCAN_SUM, in, out, 1, n, RAW, -1);
        if (c == "ok") c = check_exact<uint64_t>(v, ND_SCAN_PROD, in, out, 1, n, RAW, -1);
    }
    // A row deep into level 2 of the tree (8193 agg tiles of float32,
    // 16385 of 8-byte values): the sums only (each check copies the whole
    // case back).
    const int64_t level2 = 1024 * 24576 + 3;
    if (fits(1, level2)) {
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_SUM, in, out, 1, level2, ZERO_ONE, -1);
        if (c == "ok") c = check_exact<double>(v, ND_SCAN_SUM, in, out, 1, level2, SMALL_INTS, -1);
        if (c == "ok") c = check_exact<uint64_t>(v, ND_SCAN_SUM, in, out, 1, level2, RAW, -1);
    }
    const int64_t shapes[][2] = {{3, (1 << 20) + 7}, {5, 3073}, {1000, 3000}, {7, 32 * 3072 + 1}, {2, 32 * 24576 + 4},
                                 {3, 2 * 24576}, {0, 5}, {3, 0}};
    for (auto &sh : shapes) {
        if (!fits(sh[0], sh[1])) continue;
        if (c == "ok") c = check_exact<float>(v, ND_SCAN_SUM, in, out, sh[0], sh[1], ZERO_ONE, -1);
        if (c == "ok") c = check_exact<double>(v, ND_SCAN_SUM, in, out, sh[0], sh[1], SMALL_INTS, -1);
        if (c == "ok") c = check_exact<uint64_t>(v, ND_SCAN_SUM, in, out, sh[0], sh[1], RAW, -1);
    }
    return c;
}

// The exact variants' carries, bit for bit: rows x n float32 where tile k
// of a row (nd_scan_exact_tile elements) holds integers in [-63, 63] times
// 2^e_k, e_k drawn from [e_lo, e_lo + e_count), so every sum inside a tile
// is exact whatever tree adds it; with e_k from [-149, 100] the tiles'
// totals span the whole exponent range (subnormal to huge, cancelling: the
// limbs), with [-8, 8] the float64 look-back's sums stay exact. Tile k's outputs must be
// fl(P_k + local) with P_k the exact sum of the earlier tiles' totals
// rounded once (common/exact_sum.h) and local the exact in-tile sum. The
// first two tiles of row 0 are all -0.0 (their prefix -0.0 keeps the bits),
// row 1 (if any) holds a +inf tile and later a -inf one (NaN after both).
static std::string check_exact_carries(int variant, float *in, float *out, int64_t rows, int64_t n, int e_lo,
                                       int e_count) {
    const int64_t T = nd_scan_exact_tile(variant), tpr = (n + T - 1) / T;
    std::vector<float> x((size_t)(rows * n)), y;
    uint64_t h = 12345 + (uint64_t)n;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < tpr; k++) {
            h = mix(h + 1);
            const int e = e_lo + (int)(h % (uint64_t)e_count);
            for (int64_t i = k * T; i < n && i < (k + 1) * T; i++) {
                h = mix(h);
                float v = std::ldexp((float)((int)(h % 127) - 63), e);
                if (r == 0 && k < 2) v = -0.0f;
                if (r == 1 && i == k * T && k == tpr / 3) v = INFINITY;
                if (r == 1 && i == k * T && k == 2 * tpr / 3) v = -INFINITY;
                x[(size_t)(r * n + i)] = v;
            }
        }
    to_device(in, x.data(), x.size() * 4);
    CK(cudaMemsetAsync(out, 0xff, x.size() * 4, S));
    run_scan(variant, ND_FLOAT32, in, out, rows, n);
    y = to_host<float>(out, rows * n);
    for (int64_t r = 0; r < rows; r++) {
        int64_t acc[ND_XS_LIMBS] = {0};
        unsigned flags = 0;
        for (int64_t k = 0; k < tpr; k++) {
            uint32_t limbs[ND_XS_LIMBS];
            nd_xs_normalise(acc, 0, 0, limbs);
            uint32_t pb = nd_xs_round(limbs, flags);
            float p, local = 0;
            memcpy(&p, &pb, 4);
            for (int64_t i = k * T; i < n && i < (k + 1) * T; i++) {
                const float v = x[(size_t)(r * n + i)];
                local = i == k * T ? v : local + v; // exact
                const float want = k == 0 ? local : p + local, got = y[(size_t)(r * n + i)];
                if (memcmp(&want, &got, 4) != 0 && !(want != want && got != got)) {
                    char b[200];
                    snprintf(b, sizeof b, "FAIL (exact carries, %lld x %lld: row %lld element %lld: %.9g, want %.9g)",
                             (long long)rows, (long long)n, (long long)r, (long long)i, (double)got, (double)want);
                    return b;
                }
            }
            uint32_t lb;
            memcpy(&lb, &local, 4);
            flags |= nd_xs_add_bits(acc, lb);
        }
    }
    return "ok";
}

// Every variant in `pick` (about 7 s each, mostly host checks): its edge
// cases, then 2^28 float32 0/1 (exact) and uniform (within 1e-5 of
// float64, and 2 reruns the same bits), timed; then 4096 rows of uniform,
// checked the same way and timed. CUB's DeviceScan alongside.
static void scans(int64_t N, double floor_ms, const std::vector<int> &pick) {
    float *in, *out;
    CK(cudaMalloc(&in, (size_t)N * 8));
    CK(cudaMalloc(&out, (size_t)N * 8));
    printf("\nscan: cumsum of 2^%d float32 (%.0f MiB), floor %.3f ms (the copy); target <= 1.15x\n",
           (int)std::log2((double)N), N * 4 / 1048576.0, floor_ms);
    double best = 1e30, default_ms = 0;
    const char *best_name = "none";
    const int64_t rows = 4096, rn = N / rows;
    for (int v : pick) {
        std::string c = edge_checks(v, in, out, (size_t)N * 8);
        if (std::string(scan_names[v]).rfind("exact", 0) == 0) {
            const int64_t T = nd_scan_exact_tile(v);
            const int64_t shapes[][2] = {{1, 3 * T}, {1, 100 * T + 7}, {3, 40 * T + 17}, {1, (1 << 22) + 5}, {64, 9000}};
            for (auto &sh : shapes)
                for (int wide = 0; wide < 2; wide++)
                    if (c == "ok" && sh[0] * sh[1] <= N)
                        c = check_exact_carries(v, in, out, sh[0], sh[1], wide ? -149 : -8, wide ? 250 : 17);
        }
        if (c == "ok") c = check_scan<float>(v, in, out, 1, N, ZERO_ONE);
        if (c == "ok") c = check_scan<float>(v, in, out, 1, N, UNIFORM);
        fill((uint32_t *)in, N, UNIFORM, 5);
        const float ms = median_ms([&] { run_scan(v, ND_FLOAT32, in, out, 1, N); });
        printf("  %-16s %9.3f ms  %6.1f GB/s  %5.2fx floor   %s\n", scan_names[v], ms, 8e-6 * N / ms, ms / floor_ms,
               c.c_str());
        failures += c != "ok";
        record((std::string("scan_") + scan_names[v] + "_ms").c_str(), ms);
        if (v == NDP_SCAN_DEFAULT) {
            record("scan_default_over_floor", ms / floor_ms);
            default_ms = ms;
        }
        if (c == "ok" && ms < best) {
            best = ms;
            best_name = scan_names[v];
        }
        // Rows along the last axis (tiles never span rows).
        if (rn > 0) {
            std::string cr = check_scan<float>(v, in, out, rows, rn, UNIFORM);
            fill((uint32_t *)in, N, UNIFORM, 6);
            const float rms = median_ms([&] { run_scan(v, ND_FLOAT32, in, out, rows, rn); });
            printf("  %-16s %9.3f ms  %6.1f GB/s  %5.2fx floor   %s   (%lld rows of %lld)\n",
                   (std::string(scan_names[v]) + "_rows").c_str(), rms, 8e-6 * N / rms, rms / floor_ms, cr.c_str(),
                   (long long)rows, (long long)rn);
            failures += cr != "ok";
            record((std::string("scan_rows_") + scan_names[v] + "_ms").c_str(), rms);
        }
        // float64: N / 2 elements, the same bytes (the same floor).
        {
            const int64_t dn = N / 2;
            std::string cd = check_scan<double>(v, (double *)in, (double *)out, 1, dn, UNIFORM);
            fill((uint64_t *)in, dn, UNIFORM, 7);
            const float dms = median_ms([&] { run_scan(v, ND_FLOAT64, in, out, 1, dn); });
            printf("  %-16s %9.3f ms  %6.1f GB/s  %5.2fx floor   %s   (2^%d float64)\n",
                   (std::string(scan_names[v]) + "_f64").c_str(), dms, 8e-6 * N / dms, dms / floor_ms, cd.c_str(),
                   (int)std::log2((double)dn));
            failures += cd != "ok";
            record((std::string("scan_f64_") + scan_names[v] + "_ms").c_str(), dms);
        }
    }
    char line[200];
    snprintf(line, sizeof line, "cumsum f32 <= 1.15x floor: default %.2fx, best %s %.2fx  %s",
             default_ms / floor_ms, best_name, best / floor_ms, best / floor_ms <= 1.15 ? "MET" : "NOT MET");
    targets.push_back(line);
    // CUB's scan: the time, and whether its bits change from run to run.
    {
        size_t bytes = 0;
        CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, (int)N, S));
        void *w = workspace(bytes);
        fill((uint32_t *)in, N, UNIFORM, 5);
        const float ms = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(w, bytes, in, out, (int)N, S)); });
        std::vector<float> first = to_host<float>(out, N);
        int differ = 0;
        for (int k = 0; k < 4; k++) {
            CK(cub::DeviceScan::InclusiveSum(w, bytes, in, out, (int)N, S));
            differ += memcmp(to_host<float>(out, N).data(), first.data(), (size_t)N * 4) != 0;
        }
        printf("  %-16s %9.3f ms  %6.1f GB/s  %5.2fx floor   (CUB; %d of 4 reruns gave other bits)\n",
               "cub_inclusive", ms, 8e-6 * N / ms, ms / floor_ms, differ);
        record("scan_cub_ms", ms);
        double *din = (double *)in, *dout = (double *)out;
        const int64_t dn = N / 2;
        CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, din, dout, (int)dn, S));
        void *w2 = workspace(bytes);
        fill((uint64_t *)in, dn, UNIFORM, 7);
        const float dms = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(w2, bytes, din, dout, (int)dn, S)); });
        printf("  %-16s %9.3f ms  %6.1f GB/s  %5.2fx floor   (CUB, 2^%d float64)\n", "cub_inclusive_f64", dms,
               8e-6 * N / dms, dms / floor_ms, (int)std::log2((double)dn));
        record("scan_cub_f64_ms", dms);
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
}

// ------------------------------------------------------------------- sorts

// Stable LSD radix sort of (key, index) items by key, 8 bits a pass,
// skipping passes where every key has the same digit.
template <typename K> struct Item {
    K key;
    uint32_t ix;
};
template <typename K> static void radix(std::vector<Item<K>> &a) {
    std::vector<Item<K>> b(a.size());
    for (int shift = 0; shift < 8 * (int)sizeof(K); shift += 8) {
        size_t count[257] = {0};
        for (const auto &it : a) count[((it.key >> shift) & 255) + 1]++;
        bool one = false;
        for (int d = 1; d <= 256; d++) one |= count[d] == a.size();
        if (one) continue;
        for (int d = 0; d < 256; d++) count[d + 1] += count[d];
        for (const auto &it : a) b[count[(it.key >> shift) & 255]++] = it;
        a.swap(b);
    }
}

// nd's stable order of row[0..n) (bits U): the indices.
template <typename U> static std::vector<uint32_t> host_order(const U *row, int64_t n, nd_sort_key_info f) {
    std::vector<Item<U>> a((size_t)n);
    for (int64_t i = 0; i < n; i++) a[i] = {(U)nd_sort_key_bits(row[i], f), (uint32_t)i};
    radix(a);
    std::vector<uint32_t> ix((size_t)n);
    for (int64_t i = 0; i < n; i++) ix[i] = a[i].ix;
    return ix;
}

// Runs f(r) for r in [0, rows) on the host's cores.
static void parallel_rows(int64_t rows, const std::function<void(int64_t)> &f) {
    const int nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (int t = 0; t < nt; t++)
        th.emplace_back([&, t] {
            for (int64_t r = t; r < rows; r += nt) f(r);
        });
    for (auto &x : th) x.join();
}

// Checks values (mode ND_SORT_VALUES) or indices of rows x n sorted by
// ndp_sort_variant against the host; "ok" or why not.
template <typename U>
static std::string check_sort(int variant, int dtype, int mode, U *in, void *out, int64_t rows, int64_t n, Fill how,
                              uint64_t seed) {
    const nd_sort_key_info f = nd_sort_key_info_of(dtype);
    fill(in, rows * n, how, seed);
    const size_t out_item = mode == ND_SORT_INDICES ? 8 : sizeof(U);
    CK(cudaMemsetAsync(out, 0xa5, (size_t)(rows * n) * out_item, S)); // poison
    size_t bytes = 0;
    PK(ndp_sort_variant(variant, dtype, mode, nullptr, nullptr, rows, n, nullptr, &bytes, S));
    void *w = workspace(bytes);
    PK(ndp_sort_variant(variant, dtype, mode, in, out, rows, n, w, &bytes, S));
    std::vector<U> x = to_host<U>(in, rows * n);
    std::vector<U> yv;
    std::vector<int64_t> yi;
    if (mode == ND_SORT_INDICES) yi = to_host<int64_t>(out, rows * n);
    else yv = to_host<U>(out, rows * n);
    std::vector<std::string> why((size_t)rows);
    parallel_rows(rows, [&](int64_t r) {
        const U *row = x.data() + r * n;
        std::vector<uint32_t> ix = host_order(row, n, f);
        for (int64_t i = 0; i < n; i++) {
            bool bad;
            uint64_t want, got;
            if (mode == ND_SORT_INDICES) {
                want = ix[i];
                got = (uint64_t)yi[r * n + i];
                bad = got != want;
            } else {
                want = nd_sort_canon(row[ix[i]], f);
                got = yv[r * n + i];
                bad = got != want;
            }
            if (bad) {
                char b[200];
                snprintf(b, sizeof b, "FAIL (row %lld position %lld: %#llx, want %#llx)", (long long)r, (long long)i,
                         (unsigned long long)got, (unsigned long long)want);
                why[r] = b;
                return;
            }
        }
    });
    for (auto &s : why)
        if (!s.empty()) return s;
    return "ok";
}

struct RowOffset {
    int64_t n;
    __host__ __device__ int operator()(int r) const { return (int)(r * n); }
};

static void sorts(int64_t N) {
    uint32_t *in, *out;
    CK(cudaMalloc(&in, (size_t)N * 4));
    CK(cudaMalloc(&out, (size_t)N * 8));
    const int lg = (int)std::log2((double)N);

    // --- 1-d float32 values
    printf("\nsort: 2^%d float32 values; target <= 1.05x CUB's SortKeys(in, out) alone\n", lg);
    float cub_int, cub_i64;
    {
        size_t b1 = 0, b2 = 0;
        const float *fi = (const float *)in;
        float *fo = (float *)out;
        CK(cub::DeviceRadixSort::SortKeys(nullptr, b1, fi, fo, (int)N, 0, 32, S));
        CK(cub::DeviceRadixSort::SortKeys(nullptr, b2, fi, fo, (int64_t)N, 0, 32, S));
        void *w = workspace(std::max(b1, b2));
        fill(in, N, UNIFORM, 11);
        cub_int = median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(w, b1, fi, fo, (int)N, 0, 32, S)); });
        cub_i64 = median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(w, b2, fi, fo, (int64_t)N, 0, 32, S)); });
        printf("  %-22s %9.3f ms  %6.2f Gkeys/s  1.00x\n", "cub_sortkeys_int", cub_int, 1e-6 * N / cub_int);
        printf("  %-22s %9.3f ms  %6.2f Gkeys/s  %.2fx\n", "cub_sortkeys_int64", cub_i64, 1e-6 * N / cub_i64,
               cub_i64 / cub_int);
        record("sort_cub_ms", cub_int);
    }
    for (int v = NDP_SORT_RAW; v <= NDP_SORT_BY_INDICES; v++) {
        std::string c = "ok";
        if (v == NDP_SORT_RAW) c = check_sort<uint32_t>(v, ND_FLOAT32, ND_SORT_VALUES, in, out, 1, N, UNIFORM, 11);
        if (c == "ok") c = check_sort<uint32_t>(v, ND_FLOAT32, ND_SORT_VALUES, in, out, 1, N, SPECIALS, 12);
        fill(in, N, UNIFORM, 11);
        size_t bytes = 0;
        PK(ndp_sort_variant(v, ND_FLOAT32, ND_SORT_VALUES, nullptr, nullptr, 1, N, nullptr, &bytes, S));
        void *w = workspace(bytes);
        const float ms =
            median_ms([&] { PK(ndp_sort_variant(v, ND_FLOAT32, ND_SORT_VALUES, in, out, 1, N, w, &bytes, S)); });
        printf("  %-22s %9.3f ms  %6.2f Gkeys/s  %.3fx CUB   %s\n", v == NDP_SORT_RAW ? "nd_sort (raw)" : "nd_sort_by_indices",
               ms, 1e-6 * N / ms, ms / cub_int, c.c_str());
        failures += c != "ok";
        if (v != NDP_SORT_RAW) continue;
        record("sort_nd_ms", ms);
        const double r = ms / std::min(cub_int, cub_i64);
        record("sort_over_cub", r);
        char line[200];
        snprintf(line, sizeof line, "sort f32 <= 1.05x CUB SortKeys alone: %.3fx (%.3f ms against %.3f ms)  %s", r, ms,
                 std::min(cub_int, cub_i64), r <= 1.05 ? "MET" : "NOT MET");
        targets.push_back(line);
    }

    // --- argsort of N/4 float64
    const int64_t M = N / 4;
    printf("\nargsort: 2^%d float64 (int64 indices)\n", lg - 2);
    {
        uint64_t *k0, *k1;
        int64_t *v0, *v1;
        CK(cudaMalloc(&k0, M * 8));
        CK(cudaMalloc(&k1, M * 8));
        CK(cudaMalloc(&v0, M * 8));
        CK(cudaMalloc(&v1, M * 8));
        size_t b64 = 0, b32 = 0;
        {
            cub::DoubleBuffer<uint64_t> dk(k0, k1);
            cub::DoubleBuffer<int64_t> dv(v0, v1);
            cub::DoubleBuffer<int32_t> dw((int32_t *)v0, (int32_t *)v1);
            CK(cub::DeviceRadixSort::SortPairs(nullptr, b64, dk, dv, (int)M, 0, 64, S));
            CK(cub::DeviceRadixSort::SortPairs(nullptr, b32, dk, dw, (int)M, 0, 64, S));
        }
        void *w = workspace(std::max(b64, b32));
        fill(k0, M, UNIFORM, 21);
        CK(cudaMemcpyAsync(k1, k0, M * 8, cudaMemcpyDeviceToDevice, S));
        // The keys are re-sorted every run (already sorted after the first:
        // the radix sort's time does not depend on the order).
        const float p64 = median_ms([&] {
            cub::DoubleBuffer<uint64_t> dk(k0, k1);
            cub::DoubleBuffer<int64_t> dv(v0, v1);
            CK(cub::DeviceRadixSort::SortPairs(w, b64, dk, dv, (int)M, 0, 64, S));
        });
        const float p32 = median_ms([&] {
            cub::DoubleBuffer<uint64_t> dk(k0, k1);
            cub::DoubleBuffer<int32_t> dw((int32_t *)v0, (int32_t *)v1);
            CK(cub::DeviceRadixSort::SortPairs(w, b32, dk, dw, (int)M, 0, 64, S));
        });
        printf("  %-22s %9.3f ms  1.00x\n", "cub_pairs_u64_i64", p64);
        printf("  %-22s %9.3f ms  %.2fx\n", "cub_pairs_u64_i32", p32, p32 / p64);
        CK(cudaFree(k0));
        CK(cudaFree(k1));
        CK(cudaFree(v0));
        CK(cudaFree(v1));
        uint64_t *x64 = (uint64_t *)in; // N * 4 bytes = M * 16
        std::string c = check_sort<uint64_t>(NDP_SORT_DEFAULT, ND_FLOAT64, ND_SORT_INDICES, x64, out, 1, M, UNIFORM, 22);
        if (c == "ok") c = check_sort<uint64_t>(NDP_SORT_DEFAULT, ND_FLOAT64, ND_SORT_INDICES, x64, out, 1, M, SPECIALS, 23);
        if (c == "ok") c = check_sort<uint64_t>(NDP_SORT_DEFAULT, ND_FLOAT64, ND_SORT_VALUES, x64, out, 1, M, SPECIALS, 24);
        fill(x64, M, UNIFORM, 22);
        size_t bytes = 0;
        PK(ndp_sort(ND_FLOAT64, ND_SORT_INDICES, nullptr, nullptr, 1, M, nullptr, &bytes, S));
        void *w2 = workspace(bytes);
        const float ms = median_ms([&] { PK(ndp_sort(ND_FLOAT64, ND_SORT_INDICES, x64, out, 1, M, w2, &bytes, S)); });
        printf("  %-22s %9.3f ms  %.2fx cub_pairs_u64_i64   %s\n", "nd_argsort", ms, ms / p64, c.c_str());
        failures += c != "ok";
        record("argsort_nd_ms", ms);
        record("argsort_cub_i64_ms", p64);
        char line[200];
        snprintf(line, sizeof line, "argsort 2^%d f64: %.3f ms (CUB pairs alone: %.3f ms with int64 values, %.3f ms int32)",
                 lg - 2, ms, p64, p32);
        targets.push_back(line);
    }

    // --- rows
    const int64_t rows = 4096, n = N / rows;
    printf("\nrows: %lld x %lld float32 values (sort along the last axis)\n", (long long)rows, (long long)n);
    {
        auto starts = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), RowOffset{n});
        const float *fi = (const float *)in;
        float *fo = (float *)out;
        size_t br = 0, bs = 0;
        CK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, br, fi, fo, (int)N, (int)rows, starts, starts + 1, 0, 32,
                                                   S));
        CK(cub::DeviceSegmentedSort::SortKeys(nullptr, bs, fi, fo, (int)N, (int)rows, starts, starts + 1, S));
        void *w = workspace(std::max(br, bs));
        fill(in, N, UNIFORM, 31);
        const float seg_radix = median_ms([&] {
            CK(cub::DeviceSegmentedRadixSort::SortKeys(w, br, fi, fo, (int)N, (int)rows, starts, starts + 1, 0, 32, S));
        });
        const float seg_sort = median_ms(
            [&] { CK(cub::DeviceSegmentedSort::SortKeys(w, bs, fi, fo, (int)N, (int)rows, starts, starts + 1, S)); });
        printf("  %-22s %9.3f ms  1.00x\n", "cub_segmented_radix", seg_radix);
        printf("  %-22s %9.3f ms  %.2fx\n", "cub_segmented_sort", seg_sort, seg_sort / seg_radix);
        record("rows_cub_radix_ms", seg_radix);
        const char *names[] = {"", "nd_rows_raw", "nd_rows_by_indices"};
        float row_ms[3] = {0, 0, 0};
        for (int v = NDP_SORT_RAW; v <= NDP_SORT_BY_INDICES; v++) {
            std::string c = check_sort<uint32_t>(v, ND_FLOAT32, ND_SORT_VALUES, in, out, rows, n, UNIFORM, 31);
            if (c == "ok") c = check_sort<uint32_t>(v, ND_FLOAT32, ND_SORT_VALUES, in, out, rows, n, SPECIALS, 32);
            fill(in, N, UNIFORM, 31);
            size_t bytes = 0;
            PK(ndp_sort_variant(v, ND_FLOAT32, ND_SORT_VALUES, nullptr, nullptr, rows, n, nullptr, &bytes, S));
            void *w2 = workspace(bytes);
            const float ms = median_ms(
                [&] { PK(ndp_sort_variant(v, ND_FLOAT32, ND_SORT_VALUES, in, out, rows, n, w2, &bytes, S)); });
            printf("  %-22s %9.3f ms  %.2fx cub_segmented_radix   %s\n", names[v], ms, ms / seg_radix, c.c_str());
            failures += c != "ok";
            record(v == NDP_SORT_RAW ? "rows_raw_ms" : "rows_by_indices_ms", ms);
            row_ms[v] = ms;
        }
        char line[200];
        snprintf(line, sizeof line, "rows f32: raw %.3f ms, by indices %.3f ms (CUB segmented radix alone %.3f ms, "
                 "segmented sort %.3f ms)", row_ms[1], row_ms[2], seg_radix, seg_sort);
        targets.push_back(line);
        std::string c = check_sort<uint32_t>(NDP_SORT_DEFAULT, ND_FLOAT32, ND_SORT_INDICES, in, out, rows, n, SPECIALS, 33);
        printf("  %-22s check %s\n", "nd_rows argsort", c.c_str());
        failures += c != "ok";
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
}

int main(int argc, char **argv) {
    // Line by line, so a run stopped by a time limit keeps what it printed.
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1) RUNS = std::max(3, atoi(argv[1]));
    const int lg = argc > 2 ? atoi(argv[2]) : 28;
    const std::string what = argc > 3 ? argv[3] : "all";
    // The scan variants to run: argv[4], comma-separated names (default
    // every one; "default" is whatever ndp_scan runs, ND_SCAN_VARIANT too).
    std::vector<int> pick;
    {
        const std::string list = argc > 4 ? argv[4] : "";
        for (int v = 0; v < NDP_SCAN_N_VARIANTS; v++) {
            const std::string name = scan_names[v];
            if (list.empty() ? v > 0 : ("," + list + ",").find("," + name + ",") != std::string::npos)
                pick.push_back(v);
        }
        if (pick.empty()) {
            fprintf(stderr, "gpu_speed: no scan variant named in '%s'; the names:", list.c_str());
            for (int v = 0; v < NDP_SCAN_N_VARIANTS; v++) fprintf(stderr, " %s", scan_names[v]);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    const int64_t N = (int64_t)1 << lg;
    int dev_count = 0;
    if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
        fprintf(stderr, "gpu_speed: no CUDA device\n");
        return 77;
    }
    if (ndp_abi() != NDP_ABI) {
        fprintf(stderr, "gpu_speed: plugin ABI %d, built for %d\n", ndp_abi(), NDP_ABI);
        return 2;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("gpu_speed: %s, %d SMs, L2 %d MiB, median of %d runs (device time, cudaEvent)\n", p.name,
           p.multiProcessorCount, p.l2CacheSize >> 20, RUNS);
    CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
    // The floor: a device-to-device copy of N float32 (read + write).
    float copy_ms;
    {
        void *a, *b;
        CK(cudaMalloc(&a, N * 4));
        CK(cudaMalloc(&b, N * 4));
        fill((uint32_t *)a, N, UNIFORM, 1);
        copy_ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, N * 4, cudaMemcpyDeviceToDevice, S)); });
        printf("floor: copy of %.0f MiB %9.3f ms  %6.1f GB/s (read + write)\n", N * 4 / 1048576.0, copy_ms,
               8e-6 * N / copy_ms);
        record("copy_ms", copy_ms);
        // A copy kernel of 16-byte loads and stores, for reference (the
        // floor stays the runtime's copy).
        const float kernel_ms = median_ms([&] {
            k_copy16<<<4096, 256, 0, S>>>((const uint4 *)a, (uint4 *)b, N / 4);
            CK(cudaGetLastError());
        });
        printf("       copy kernel  %9.3f ms  %6.1f GB/s (%.2fx the floor)\n", kernel_ms, 8e-6 * N / kernel_ms,
               kernel_ms / copy_ms);
        record("copy_kernel_ms", kernel_ms);
        CK(cudaFree(a));
        CK(cudaFree(b));
    }
    if (what != "sort") scans(N, copy_ms, pick);
    if (what != "scan") sorts(N);
    printf("\ntargets:\n");
    for (auto &t : targets) printf("  %s\n", t.c_str());
    printf("\n%s: %d check(s) failed\n", failures ? "FAIL" : "ok", failures);
    json += ",\"device\":\"" + std::string(p.name) + "\",\"failures\":" + std::to_string(failures) + "}";
    printf("JSON %s\n", json.c_str());
    return failures ? 1 : 0;
}
