// sort_variants.cu — the baseline for nd_sort on CUDA: what CUB's radix
// sort costs alone, next to the passes nd's plugin (src/backends/cuda/prims/
// sort.cu) used to add around it, on the same device in the same run. No nd
// in it. The plugin's present sorts are timed against CUB by gpu_speed.cu.
//   V0  cub::DeviceRadixSort::SortKeys(in, out) on 2^28 float32: CUB alone
//       (the issue's target: nd_sort <= 1.05x this)
//   V1  V0 on a DoubleBuffer (CUB's cheaper form, no internal alternate copy)
//   V2  nd's former path: a pass making every NaN the default NaN (in -> out), then
//       V1 on DoubleBuffer(out, scratch), a copy back if the result ended in
//       the scratch
//   V3  argsort of 2^26 float64 as nd does it: keys+indices pass, SortPairs
//       on unsigned 64-bit keys with int64 values (DoubleBuffers)
//   V4  the rows of 4096 x 65536 float32: nd's path with
//       DeviceSegmentedSort::StableSortKeys
//   V5  V4 with DeviceSegmentedRadixSort::SortKeys (the other segmented sort)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I src -I include -o sort_variants bench/sort_variants.cu
//   ./sort_variants [log2 N]
//
// Prints the median of 15 runs (cudaEvent) per variant after a warm-up and
// the ratio to V0; V0's and V2's outputs are checked sorted on the host.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/sort_keys.h"

#define CK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t e_ = (x);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                           \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

__global__ void k_fill(unsigned *x, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = 0x3F800000u | (h >> 9); // a float in [1, 2)
    }
}
__global__ void k_canon(const unsigned *in, unsigned *out, long long n, nd_sort_key_info f) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = (unsigned)nd_sort_canon(in[i], f);
}
__global__ void k_keys64(const unsigned long long *in, unsigned long long *k, long long *ix, long long n,
                         nd_sort_key_info f) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        k[i] = nd_sort_key_bits(in[i], f);
        ix[i] = i;
    }
}
struct RowStart {
    long long n;
    __host__ __device__ long long operator()(long long r) const { return r * n; }
};

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <typename F> static float timed(F f, cudaStream_t s) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    f(); // warm-up
    std::vector<float> t;
    for (int r = 0; r < 15; r++) {
        CK(cudaEventRecord(a, s));
        f();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    return median(t);
}

static void check_sorted(const float *d, long long n, const char *what) {
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (long long i = 1; i < n; i++)
        if (h[i - 1] > h[i]) {
            fprintf(stderr, "%s: not sorted at %lld\n", what, i);
            exit(1);
        }
}

int main(int argc, char **argv) {
    int lg = argc > 1 ? atoi(argv[1]) : 28;
    long long n = 1ll << lg, na = n / 4, rows = 4096, cols = n / rows;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    float *in, *out, *alt;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&out, n * 4));
    CK(cudaMalloc(&alt, n * 4));
    k_fill<<<4096, 256, 0, s>>>((unsigned *)in, n, 12345);
    size_t tb = 0, tb2 = 0;
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, in, out, n, 0, 32, s));
    cub::DoubleBuffer<float> db(out, alt);
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb2, db, n, 0, 32, s));
    size_t tmax = std::max(tb, tb2);
    void *tmp;
    CK(cudaMalloc(&tmp, tmax + (size_t)(na * 8 * 4)));
    nd_sort_key_info f32 = nd_sort_key_info_of(ND_FLOAT32), f64 = nd_sort_key_info_of(ND_FLOAT64);

    float v0 = timed([&] { CK(cub::DeviceRadixSort::SortKeys(tmp, tb, in, out, n, 0, 32, s)); }, s);
    check_sorted(out, n, "V0");
    float v1 = timed([&] {
        CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, s)); // not timed apart: the input must stay
        cub::DoubleBuffer<float> d(out, alt);
        CK(cub::DeviceRadixSort::SortKeys(tmp, tb2, d, n, 0, 32, s));
    }, s);
    float v2 = timed([&] {
        k_canon<<<4096, 256, 0, s>>>((const unsigned *)in, (unsigned *)out, n, f32);
        cub::DoubleBuffer<float> d(out, alt);
        CK(cub::DeviceRadixSort::SortKeys(tmp, tb2, d, n, 0, 32, s));
        if (d.Current() != out) CK(cudaMemcpyAsync(out, d.Current(), n * 4, cudaMemcpyDeviceToDevice, s));
    }, s);
    check_sorted(out, n, "V2");

    // argsort of na float64: reuse in/out/alt as 8-byte buffers (na * 8 = n * 2 bytes)
    unsigned long long *k0 = (unsigned long long *)out, *k1 = (unsigned long long *)alt;
    long long *i0 = (long long *)tmp + tmax / 8 + 1, *i1 = i0 + na;
    size_t tp = 0;
    {
        cub::DoubleBuffer<unsigned long long> dk(k0, k1);
        cub::DoubleBuffer<long long> dv(i0, i1);
        CK(cub::DeviceRadixSort::SortPairs(nullptr, tp, dk, dv, na, 0, 64, s));
    }
    void *tmp2;
    CK(cudaMalloc(&tmp2, tp));
    float v3 = timed([&] {
        k_keys64<<<4096, 256, 0, s>>>((const unsigned long long *)in, k0, i0, na, f64);
        cub::DoubleBuffer<unsigned long long> dk(k0, k1);
        cub::DoubleBuffer<long long> dv(i0, i1);
        CK(cub::DeviceRadixSort::SortPairs(tmp2, tp, dk, dv, na, 0, 64, s));
    }, s);

    // segmented rows
    auto starts = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), RowStart{cols});
    size_t ts = 0, tr = 0;
    {
        cub::DoubleBuffer<float> d(out, alt);
        CK(cub::DeviceSegmentedSort::StableSortKeys(nullptr, ts, d, n, rows, starts, starts + 1, s));
        CK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, tr, d, n, rows, starts, starts + 1, 0, 32, s));
    }
    void *tmp3;
    CK(cudaMalloc(&tmp3, std::max(ts, tr)));
    float v4 = timed([&] {
        k_canon<<<4096, 256, 0, s>>>((const unsigned *)in, (unsigned *)out, n, f32);
        cub::DoubleBuffer<float> d(out, alt);
        CK(cub::DeviceSegmentedSort::StableSortKeys(tmp3, ts, d, n, rows, starts, starts + 1, s));
    }, s);
    float v5 = timed([&] {
        k_canon<<<4096, 256, 0, s>>>((const unsigned *)in, (unsigned *)out, n, f32);
        cub::DoubleBuffer<float> d(out, alt);
        CK(cub::DeviceSegmentedRadixSort::SortKeys(tmp3, tr, d, n, rows, starts, starts + 1, 0, 32, s));
    }, s);

    printf("V0 CUB SortKeys(in, out)            2^%d f32   %8.3f ms  1.00x\n", lg, v0);
    printf("V1 CUB SortKeys(DoubleBuffer) +copy 2^%d f32   %8.3f ms  %.2fx\n", lg, v1, v1 / v0);
    printf("V2 nd: NaN pass + V1                2^%d f32   %8.3f ms  %.2fx\n", lg, v2, v2 / v0);
    printf("V3 nd argsort: keys pass + SortPairs 2^%d f64  %8.3f ms\n", lg - 2, v3);
    printf("V4 nd rows %lldx%lld: StableSortKeys segmented %8.3f ms\n", rows, cols, v4);
    printf("V5 rows %lldx%lld: SegmentedRadixSort          %8.3f ms\n", rows, cols, v5);
    return 0;
}
