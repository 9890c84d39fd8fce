// Sorting contiguous rows (prims.h, ndp_sort): CUB's DeviceRadixSort for
// one row, DeviceSegmentedSort's stable sorts for several, in NumPy's order
// (common/sort_keys.h), with the same results as the CPU backend.
//
// Values: unsigned integers and bool sort as they are (CUB alone); signed
// integers with their sign bit flipped before and after; float32 and
// float64 sort as CUB's own float keys (which order -0.0 and +0.0 as equal
// and keep their bits) after a pass that makes every NaN the default NaN,
// so NaNs sort last as NumPy's. float16 and bfloat16 reach the plugin as
// float32 (the frontend converts; exact both ways).
//
// Indices: a pass writes each element's unsigned key (sort_keys.h: -0.0
// equal to +0.0, NaNs last) and its index in the row; CUB sorts the pairs,
// stable, and the indices are the result. Only unsigned keys of 1, 2, 4 and
// 8 bytes and float and double keys are instantiated.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "prims.h"
#include "common/lib_calls.h"
#include "common/sort_keys.h"

namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

struct RowStart {
    int64_t n;
    __host__ __device__ int64_t operator()(int64_t r) const { return r * n; }
};
struct RowEnd {
    int64_t n;
    __host__ __device__ int64_t operator()(int64_t r) const { return r * n + n; }
};

unsigned blocks_for(int64_t total) {
    int64_t b = (total + 255) / 256;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b < 1 ? 1 : b);
}

// Every NaN the default NaN (float values).
template <typename U> __global__ void k_canon(const U *in, U *out, int64_t total, nd_sort_key_info f) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (U)nd_sort_canon(in[i], f);
}

// Flip the sign bit (signed integer values, both ways).
template <typename U> __global__ void k_flip(const U *in, U *out, int64_t total, U sign) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i] ^ sign;
}

// Keys and in-row indices (argsort).
template <typename U>
__global__ void k_keys(const U *in, U *keys, int64_t *ix, int64_t total, int64_t n, nd_sort_key_info f) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        keys[i] = (U)nd_sort_key_bits(in[i], f);
        ix[i] = i % n;
    }
}

// Sorts the keys in d (its Current() holds them; rows of n), stable.
template <typename K>
cudaError_t sort_keys(void *tmp, size_t &bytes, cub::DoubleBuffer<K> &d, int64_t rows, int64_t n, cudaStream_t s) {
    int64_t total = rows * n;
    if (rows == 1) return cub::DeviceRadixSort::SortKeys(tmp, bytes, d, total, 0, (int)(8 * sizeof(K)), s);
    auto cnt = thrust::counting_iterator<int64_t>(0);
    auto b = thrust::make_transform_iterator(cnt, RowStart{n});
    auto e = thrust::make_transform_iterator(cnt, RowEnd{n});
    return cub::DeviceSegmentedSort::StableSortKeys(tmp, bytes, d, total, rows, b, e, s);
}

template <typename K>
cudaError_t sort_pairs(void *tmp, size_t &bytes, cub::DoubleBuffer<K> &d, cub::DoubleBuffer<int64_t> &v, int64_t rows,
                       int64_t n, cudaStream_t s) {
    int64_t total = rows * n;
    if (rows == 1) return cub::DeviceRadixSort::SortPairs(tmp, bytes, d, v, total, 0, (int)(8 * sizeof(K)), s);
    auto cnt = thrust::counting_iterator<int64_t>(0);
    auto b = thrust::make_transform_iterator(cnt, RowStart{n});
    auto e = thrust::make_transform_iterator(cnt, RowEnd{n});
    return cub::DeviceSegmentedSort::StableSortPairs(tmp, bytes, d, v, total, rows, b, e, s);
}

// The workspace: [scratch keys][keys][indices][CUB's temporary]; a NULL tmp
// only sizes it.
struct Layout {
    char *base;
    size_t keys0, keys1, ix0, cub_at, total;
};

Layout layout(void *tmp, int64_t total, size_t key_bytes, int indices, size_t cub_bytes) {
    Layout l;
    l.base = (char *)tmp;
    size_t kb = align_up((size_t)total * key_bytes);
    l.keys0 = 0;
    l.keys1 = kb;
    l.ix0 = indices ? 2 * kb : kb;
    l.cub_at = l.ix0 + (indices ? align_up((size_t)total * sizeof(int64_t)) : 0);
    l.total = l.cub_at + align_up(cub_bytes);
    return l;
}

template <typename U>
cudaError_t sort_indices(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                         size_t *tmp_bytes, cudaStream_t s);

// out[r, j] = in[r, ix[r, j]] with every NaN the default NaN.
template <typename U>
__global__ void k_take_canon(const U *in, const int64_t *ix, U *out, int64_t total, int64_t n, nd_sort_key_info f) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (U)nd_sort_canon(in[i - i % n + ix[i]], f);
}

// Sorted values of float type F (bits U). Several rows: CUB's segmented
// sort does not order float keys as its radix sort does (NaNs and -0.0
// came out of place on the H100), so the rows are sorted as the argsort's
// unsigned keys and the values taken through the indices (their own bits).
template <typename F, typename U>
cudaError_t sort_float_rows(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                            size_t *tmp_bytes, cudaStream_t s) {
    int64_t total = rows * n;
    size_t ix_bytes = align_up((size_t)total * sizeof(int64_t)), rest = 0;
    if (!tmp) {
        cudaError_t e = sort_indices<U>(in, nullptr, rows, n, f, nullptr, &rest, s);
        *tmp_bytes = ix_bytes + rest;
        return e;
    }
    int64_t *ix = static_cast<int64_t *>(tmp);
    rest = *tmp_bytes - ix_bytes;
    cudaError_t e = sort_indices<U>(in, ix, rows, n, f, static_cast<char *>(tmp) + ix_bytes, &rest, s);
    if (e) return e;
    k_take_canon<U><<<blocks_for(total), 256, 0, s>>>(static_cast<const U *>(in), ix, static_cast<U *>(out), total, n, f);
    return cudaGetLastError();
}

// Sorted values of float type F (bits U).
template <typename F, typename U>
cudaError_t sort_float_values(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                              size_t *tmp_bytes, cudaStream_t s) {
    if (rows > 1) return sort_float_rows<F, U>(in, out, rows, n, f, tmp, tmp_bytes, s);
    int64_t total = rows * n;
    F *o = static_cast<F *>(out);
    cub::DoubleBuffer<F> d(o, nullptr);
    size_t cub_bytes = 0;
    Layout l = layout(nullptr, total, sizeof(F), 0, 0);
    if (!tmp) {
        d.d_buffers[1] = reinterpret_cast<F *>(kAlign); // any aligned non-null pointer for the size query
        cudaError_t e = sort_keys<F>(nullptr, cub_bytes, d, rows, n, s);
        *tmp_bytes = layout(nullptr, total, sizeof(F), 0, cub_bytes).total;
        return e;
    }
    l.base = (char *)tmp;
    d.d_buffers[1] = reinterpret_cast<F *>(l.base + l.keys0);
    k_canon<U><<<blocks_for(total), 256, 0, s>>>(static_cast<const U *>(in), reinterpret_cast<U *>(o), total, f);
    cub_bytes = *tmp_bytes - l.cub_at;
    cudaError_t e = sort_keys<F>(l.base + l.cub_at, cub_bytes, d, rows, n, s);
    if (e) return e;
    if (d.Current() != o) e = cudaMemcpyAsync(o, d.Current(), (size_t)total * sizeof(F), cudaMemcpyDeviceToDevice, s);
    return e;
}

// Sorted values of an integer dtype (bits U; flip the sign bit of signed).
template <typename U>
cudaError_t sort_int_values(const void *in, void *out, int64_t rows, int64_t n, int is_signed, void *tmp,
                            size_t *tmp_bytes, cudaStream_t s) {
    int64_t total = rows * n;
    U *o = static_cast<U *>(out);
    U sign = (U)((U)1 << (8 * sizeof(U) - 1));
    cub::DoubleBuffer<U> d(o, nullptr);
    size_t cub_bytes = 0;
    Layout l = layout(nullptr, total, sizeof(U), 0, 0);
    if (!tmp) {
        d.d_buffers[1] = reinterpret_cast<U *>(kAlign);
        cudaError_t e = sort_keys<U>(nullptr, cub_bytes, d, rows, n, s);
        *tmp_bytes = layout(nullptr, total, sizeof(U), 0, cub_bytes).total;
        return e;
    }
    l.base = (char *)tmp;
    d.d_buffers[1] = reinterpret_cast<U *>(l.base + l.keys0);
    if (is_signed) k_flip<U><<<blocks_for(total), 256, 0, s>>>(static_cast<const U *>(in), o, total, sign);
    else {
        cudaError_t e = cudaMemcpyAsync(o, in, (size_t)total * sizeof(U), cudaMemcpyDeviceToDevice, s);
        if (e) return e;
    }
    cub_bytes = *tmp_bytes - l.cub_at;
    cudaError_t e = sort_keys<U>(l.base + l.cub_at, cub_bytes, d, rows, n, s);
    if (e) return e;
    if (is_signed) k_flip<U><<<blocks_for(total), 256, 0, s>>>(d.Current(), o, total, sign);
    else if (d.Current() != o)
        e = cudaMemcpyAsync(o, d.Current(), (size_t)total * sizeof(U), cudaMemcpyDeviceToDevice, s);
    return e;
}

// Sorting indices with keys of bits U.
template <typename U>
cudaError_t sort_indices(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                         size_t *tmp_bytes, cudaStream_t s) {
    int64_t total = rows * n;
    int64_t *o = static_cast<int64_t *>(out);
    size_t cub_bytes = 0;
    if (!tmp) {
        cub::DoubleBuffer<U> d(reinterpret_cast<U *>(kAlign), reinterpret_cast<U *>(2 * kAlign));
        cub::DoubleBuffer<int64_t> v(reinterpret_cast<int64_t *>(3 * kAlign), reinterpret_cast<int64_t *>(4 * kAlign));
        cudaError_t e = sort_pairs<U>(nullptr, cub_bytes, d, v, rows, n, s);
        *tmp_bytes = layout(nullptr, total, sizeof(U), 1, cub_bytes).total;
        return e;
    }
    Layout l = layout(tmp, total, sizeof(U), 1, 0);
    U *k0 = reinterpret_cast<U *>(l.base + l.keys0), *k1 = reinterpret_cast<U *>(l.base + l.keys1);
    int64_t *i0 = reinterpret_cast<int64_t *>(l.base + l.ix0);
    k_keys<U><<<blocks_for(total), 256, 0, s>>>(static_cast<const U *>(in), k0, i0, total, n, f);
    cub::DoubleBuffer<U> d(k0, k1);
    cub::DoubleBuffer<int64_t> v(i0, o);
    cub_bytes = *tmp_bytes - l.cub_at;
    cudaError_t e = sort_pairs<U>(l.base + l.cub_at, cub_bytes, d, v, rows, n, s);
    if (e) return e;
    if (v.Current() != o) e = cudaMemcpyAsync(o, v.Current(), (size_t)total * sizeof(int64_t), cudaMemcpyDeviceToDevice, s);
    return e;
}

} // namespace

NDP_API int ndp_sort(int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream) {
    if (rows * n == 0) {
        if (!tmp) *tmp_bytes = 0;
        return cudaSuccess;
    }
    nd_sort_key_info f = nd_sort_key_info_of(dtype);
    if (!f.width) return cudaErrorInvalidValue;
    if (mode == ND_SORT_INDICES) {
        switch (f.width) {
        case 1: return sort_indices<uint8_t>(in, out, rows, n, f, tmp, tmp_bytes, stream);
        case 2: return sort_indices<uint16_t>(in, out, rows, n, f, tmp, tmp_bytes, stream);
        case 4: return sort_indices<uint32_t>(in, out, rows, n, f, tmp, tmp_bytes, stream);
        default: return sort_indices<unsigned long long>(in, out, rows, n, f, tmp, tmp_bytes, stream);
        }
    }
    if (dtype == ND_FLOAT32) return sort_float_values<float, uint32_t>(in, out, rows, n, f, tmp, tmp_bytes, stream);
    if (dtype == ND_FLOAT64)
        return sort_float_values<double, unsigned long long>(in, out, rows, n, f, tmp, tmp_bytes, stream);
    if (f.kind == ND_SK_FLOAT) return cudaErrorNotSupported; // float16 and bfloat16 come as float32
    int sgn = f.kind == ND_SK_INT;
    switch (f.width) {
    case 1: return sort_int_values<uint8_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    case 2: return sort_int_values<uint16_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    case 4: return sort_int_values<uint32_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    default: return sort_int_values<unsigned long long>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    }
}
