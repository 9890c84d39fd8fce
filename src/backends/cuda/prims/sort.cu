// Sorting contiguous rows (prims.h, ndp_sort) in NumPy's order
// (common/sort_keys.h), with the same bits as the CPU backend.
//
// Float values (float32, float64; float16 and bfloat16 reach the plugin as
// float32, exact both ways): CUB sorts the float keys as they are, in ->
// out, with no pass before or after (CUB's order is nd's, -0.0 equal to
// +0.0 with bits and order kept, except for NaNs: common/sort_raw.h); then
// a fixup that reads the row's first and last element and does nothing
// more unless one is a NaN, when it searches the NaN runs and moves the
// rest over the negative NaNs, writing the default NaN at the end. One row,
// and rows of kLoopRowsMin or more: DeviceRadixSort, row after row; several
// rows of at least kRadixRowsMin: the segmented radix sort
// (DeviceSegmentedRadixSort, whose digits treat -0.0 as +0.0 as the radix
// sort does; DeviceSegmentedSort does not); shorter rows (and more than
// 2^31 - 1 elements in short rows): the rows' argsort and a gather.
//
// Integer values: unsigned integers and bool sort as they are (CUB alone);
// signed integers with their sign bit flipped before and after.
//
// Indices: a pass writes each element's unsigned key (sort_keys.h: -0.0
// equal to +0.0, NaNs last) and its index in the row as int32 (int64 for
// rows of 2^31 or more: fewer bytes for CUB to move every pass); CUB sorts the
// pairs, stable, and a pass widens the indices into the int64 result.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <limits.h>

#include "prims.h"
#include "common/lib_calls.h"
#include "common/sort_keys.h"
#include "common/sort_raw.h"

namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

// Several float rows at least this long go through the segmented radix
// sort (a block per row and pass); shorter ones through DeviceSegmentedSort's
// argsort, which sorts small segments a warp each.
constexpr int64_t kRadixRowsMin = 2048;
// Rows this long are sorted one after another by the radix sort (each
// fills the device; the segmented sort gives a row one block).
constexpr int64_t kLoopRowsMin = (int64_t)1 << 18;
constexpr int kFixThreads = 256;
// What ndp_sort runs for float values (prims.h's NDP_SORT_*).
constexpr int kDefaultSort = NDP_SORT_RAW;

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

// Grid-stride kernels that usually find nothing to do: few blocks, so
// that the empty launch costs microseconds.
unsigned fix_blocks(int64_t total) {
    int64_t b = (total + kFixThreads - 1) / kFixThreads;
    return (unsigned)(b > 1024 ? 1024 : b < 1 ? 1 : b);
}

// Flip the sign bit (signed integer values, both ways).
template <typename U> __global__ void k_flip(const U *in, U *out, int64_t total, U sign) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i] ^ sign;
}

// Keys and in-row indices (argsort).
template <typename U, typename I>
__global__ void k_keys(const U *in, U *keys, I *ix, int64_t total, int64_t n, nd_sort_key_info f) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        keys[i] = (U)nd_sort_key_bits(in[i], f);
        ix[i] = (I)(total == n ? i : i % n);
    }
}

// int32 indices into the int64 result.
__global__ void k_widen(const int32_t *in, int64_t *out, int64_t total) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

// ------------------------------------------- float values: CUB's order to nd's

// The first index of row[lo, hi) where pred holds (sort_raw.h's search,
// one probe per thread; the block's threads all call it).
template <typename U, typename P>
__device__ int64_t block_first(const U *row, int64_t lo, int64_t hi, nd_sort_key_info f, P pred) {
    while (lo < hi) {
        const int64_t q = nd_sort_probe_at(lo, hi, threadIdx.x, blockDim.x);
        const int fails = __syncthreads_count(!pred((uint64_t)row[q], f));
        nd_sort_probe_next(&lo, &hi, fails, blockDim.x);
    }
    return lo;
}

struct PastLead {
    __device__ int operator()(uint64_t b, nd_sort_key_info f) const { return nd_sort_raw_past_lead(b, f); }
};
struct InTail {
    __device__ int operator()(uint64_t b, nd_sort_key_info f) const { return nd_sort_raw_in_tail(b, f); }
};

// lead and tail of a row sorted by CUB (sort_raw.h), into *lead, *tail of
// every thread; 0 and n, read from the row's ends alone, when it has no NaN.
template <typename U>
__device__ void row_bounds(const U *row, int64_t n, nd_sort_key_info f, int64_t *lead, int64_t *tail) {
    const bool has_lead = !nd_sort_raw_past_lead((uint64_t)row[0], f);
    const bool has_tail = nd_sort_raw_in_tail((uint64_t)row[n - 1], f);
    *lead = has_lead ? block_first(row, 0, n, f, PastLead{}) : 0;
    *tail = has_tail ? block_first(row, *lead, n, f, InTail{}) : n;
}

// Several rows: a block per row fixes its row in place. The elements kept
// move left chunk by chunk in order (a chunk's reads before its writes),
// so none is overwritten before it is read.
template <typename U> __global__ void __launch_bounds__(kFixThreads) k_raw_rows(U *v, int64_t n, nd_sort_key_info f) {
    U *row = v + (int64_t)blockIdx.x * n;
    int64_t lead, tail;
    row_bounds(row, n, f, &lead, &tail);
    if (lead == 0 && tail == n) return;
    const int64_t keep = tail - lead;
    if (lead > 0) {
        for (int64_t c = 0; c < keep; c += blockDim.x) {
            const int64_t i = c + threadIdx.x;
            U x = i < keep ? row[lead + i] : U(0);
            __syncthreads();
            if (i < keep) row[i] = x;
            __syncthreads();
        }
    }
    for (int64_t i = keep + threadIdx.x; i < n; i += blockDim.x) row[i] = (U)f.qnan;
}

// One row: one block finds lead and tail (into lt), then the whole grid
// moves the kept elements through the workspace and writes the NaNs.
template <typename U> __global__ void k_raw_bounds(const U *v, int64_t n, nd_sort_key_info f, int64_t *lt) {
    int64_t lead, tail;
    row_bounds(v, n, f, &lead, &tail);
    if (threadIdx.x == 0) {
        lt[0] = lead;
        lt[1] = tail;
    }
}

template <typename U> __global__ void k_raw_stash(const U *v, const int64_t *lt, U *scratch) {
    const int64_t lead = lt[0], keep = lt[1] - lead;
    if (lead == 0) return;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < keep; i += (int64_t)gridDim.x * blockDim.x)
        scratch[i] = v[lead + i];
}

template <typename U>
__global__ void k_raw_settle(U *v, int64_t n, nd_sort_key_info f, const int64_t *lt, const U *scratch) {
    const int64_t lead = lt[0], keep = lt[1] - lead;
    const int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, step = (int64_t)gridDim.x * blockDim.x;
    if (lead > 0)
        for (int64_t i = first; i < keep; i += step) v[i] = scratch[i];
    for (int64_t i = keep + first; i < n; i += step) v[i] = (U)f.qnan;
}

// CUB's sort of float rows, in -> out: the radix sort row by row for one
// row or rows that fill the device alone, else the segmented radix sort.
template <typename F>
cudaError_t cub_sort_floats(void *tmp, size_t &bytes, const F *in, F *out, int64_t rows, int64_t n, cudaStream_t s) {
    const int64_t total = rows * n;
    if (rows == 1 || n >= kLoopRowsMin) {
        for (int64_t r = 0; r < rows; r++) {
            const F *x = in ? in + r * n : in;
            F *y = out ? out + r * n : out;
            cudaError_t e = n <= INT_MAX ? cub::DeviceRadixSort::SortKeys(tmp, bytes, x, y, (int)n, 0, 8 * (int)sizeof(F), s)
                                         : cub::DeviceRadixSort::SortKeys(tmp, bytes, x, y, n, 0, 8 * (int)sizeof(F), s);
            if (e || !tmp) return e;
        }
        return cudaSuccess;
    }
    auto cnt = thrust::counting_iterator<int>(0);
    auto b = thrust::make_transform_iterator(cnt, RowStart{n});
    auto e = thrust::make_transform_iterator(cnt, RowEnd{n});
    return cub::DeviceSegmentedRadixSort::SortKeys(tmp, bytes, in, out, (int)total, (int)rows, b, e, 0,
                                                   8 * (int)sizeof(F), s);
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

// Sorted values of several float rows through their argsort: the indices,
// then the values taken through them (their own bits).
template <typename U>
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

// Sorted values of float type F (bits U). The workspace: [lead, tail][CUB's
// temporary, which is also the one-row fixup's scratch afterwards].
template <typename F, typename U>
cudaError_t sort_float_values(int variant, const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f,
                              void *tmp, size_t *tmp_bytes, cudaStream_t s) {
    const int64_t total = rows * n;
    if (variant == NDP_SORT_DEFAULT) variant = kDefaultSort;
    if (variant == NDP_SORT_BY_INDICES ||
        (rows > 1 && (n < kRadixRowsMin || (n < kLoopRowsMin && (total > INT_MAX || rows > INT_MAX)))))
        return sort_float_rows<U>(in, out, rows, n, f, tmp, tmp_bytes, s);
    const F *x = static_cast<const F *>(in);
    F *o = static_cast<F *>(out);
    const size_t words = align_up(2 * sizeof(int64_t)), scratch = rows == 1 ? (size_t)n * sizeof(U) : 0;
    size_t cub_bytes = 0;
    if (!tmp) {
        cudaError_t e = cub_sort_floats<F>(nullptr, cub_bytes, x, o, rows, n, s);
        *tmp_bytes = words + align_up(cub_bytes > scratch ? cub_bytes : scratch);
        return e;
    }
    char *w = static_cast<char *>(tmp);
    cub_bytes = *tmp_bytes - words;
    cudaError_t e = cub_sort_floats<F>(w + words, cub_bytes, x, o, rows, n, s);
    if (e) return e;
    U *v = reinterpret_cast<U *>(o);
    if (rows > 1) {
        k_raw_rows<U><<<(unsigned)rows, kFixThreads, 0, s>>>(v, n, f);
        return cudaGetLastError();
    }
    int64_t *lt = reinterpret_cast<int64_t *>(w);
    U *stash = reinterpret_cast<U *>(w + words);
    k_raw_bounds<U><<<1, kFixThreads, 0, s>>>(v, n, f, lt);
    k_raw_stash<U><<<fix_blocks(n), kFixThreads, 0, s>>>(v, lt, stash);
    k_raw_settle<U><<<fix_blocks(n), kFixThreads, 0, s>>>(v, n, f, lt, stash);
    return cudaGetLastError();
}

// ------------------------------------------------------------ integer values

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

// The workspace of the integer and index sorts: [scratch keys][keys]
// [indices][indices][CUB's temporary]; a NULL tmp only sizes it.
struct Layout {
    char *base;
    size_t keys0, keys1, ix0, ix1, cub_at, total;
};

Layout layout(void *tmp, int64_t total, size_t key_bytes, size_t ix_bytes, size_t cub_bytes) {
    Layout l;
    l.base = (char *)tmp;
    size_t kb = align_up((size_t)total * key_bytes), ib = align_up((size_t)total * ix_bytes);
    l.keys0 = 0;
    l.keys1 = kb;
    l.ix0 = ix_bytes ? 2 * kb : kb;
    l.ix1 = l.ix0 + ib;
    l.cub_at = l.ix1 + ib;
    l.total = l.cub_at + align_up(cub_bytes);
    return l;
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

// ------------------------------------------------------------------- indices

template <typename K, typename I>
cudaError_t sort_pairs(void *tmp, size_t &bytes, cub::DoubleBuffer<K> &d, cub::DoubleBuffer<I> &v, int64_t rows,
                       int64_t n, cudaStream_t s) {
    int64_t total = rows * n;
    if (rows == 1) {
        if (total <= INT_MAX) return cub::DeviceRadixSort::SortPairs(tmp, bytes, d, v, (int)total, 0, (int)(8 * sizeof(K)), s);
        return cub::DeviceRadixSort::SortPairs(tmp, bytes, d, v, total, 0, (int)(8 * sizeof(K)), s);
    }
    auto cnt = thrust::counting_iterator<int64_t>(0);
    auto b = thrust::make_transform_iterator(cnt, RowStart{n});
    auto e = thrust::make_transform_iterator(cnt, RowEnd{n});
    return cub::DeviceSegmentedSort::StableSortPairs(tmp, bytes, d, v, total, rows, b, e, s);
}

// Sorting indices with keys of bits U and in-row indices of type I.
template <typename U, typename I>
cudaError_t sort_indices_as(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                            size_t *tmp_bytes, cudaStream_t s) {
    int64_t total = rows * n;
    int64_t *o = static_cast<int64_t *>(out);
    size_t cub_bytes = 0;
    if (!tmp) {
        cub::DoubleBuffer<U> d(reinterpret_cast<U *>(kAlign), reinterpret_cast<U *>(2 * kAlign));
        cub::DoubleBuffer<I> v(reinterpret_cast<I *>(3 * kAlign), reinterpret_cast<I *>(4 * kAlign));
        cudaError_t e = sort_pairs<U, I>(nullptr, cub_bytes, d, v, rows, n, s);
        *tmp_bytes = layout(nullptr, total, sizeof(U), sizeof(I), cub_bytes).total;
        return e;
    }
    Layout l = layout(tmp, total, sizeof(U), sizeof(I), 0);
    U *k0 = reinterpret_cast<U *>(l.base + l.keys0), *k1 = reinterpret_cast<U *>(l.base + l.keys1);
    I *i0 = reinterpret_cast<I *>(l.base + l.ix0), *i1 = reinterpret_cast<I *>(l.base + l.ix1);
    k_keys<U, I><<<blocks_for(total), 256, 0, s>>>(static_cast<const U *>(in), k0, i0, total, n, f);
    cub::DoubleBuffer<U> d(k0, k1);
    cub::DoubleBuffer<I> v(i0, i1);
    cub_bytes = *tmp_bytes - l.cub_at;
    cudaError_t e = sort_pairs<U, I>(l.base + l.cub_at, cub_bytes, d, v, rows, n, s);
    if (e) return e;
    if constexpr (sizeof(I) == sizeof(int64_t)) {
        return cudaMemcpyAsync(o, v.Current(), (size_t)total * sizeof(int64_t), cudaMemcpyDeviceToDevice, s);
    } else {
        k_widen<<<blocks_for(total), 256, 0, s>>>(v.Current(), o, total);
        return cudaGetLastError();
    }
}

template <typename U>
cudaError_t sort_indices(const void *in, void *out, int64_t rows, int64_t n, nd_sort_key_info f, void *tmp,
                         size_t *tmp_bytes, cudaStream_t s) {
    if (n <= INT32_MAX) return sort_indices_as<U, int32_t>(in, out, rows, n, f, tmp, tmp_bytes, s);
    // Rows of 2^31 elements and more: int64 indices, one row after another.
    for (int64_t r = 0; r < rows; r++) {
        const char *x = in ? static_cast<const char *>(in) + r * n * (int64_t)sizeof(U) : nullptr;
        int64_t *y = out ? static_cast<int64_t *>(out) + r * n : nullptr;
        cudaError_t e = sort_indices_as<U, int64_t>(x, y, 1, n, f, tmp, tmp_bytes, s);
        if (e || !tmp) return e;
    }
    return cudaSuccess;
}

} // namespace

NDP_API int ndp_sort_variant(int variant, int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n,
                             void *tmp, size_t *tmp_bytes, cudaStream_t stream) {
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
    if (dtype == ND_FLOAT32)
        return sort_float_values<float, uint32_t>(variant, in, out, rows, n, f, tmp, tmp_bytes, stream);
    if (dtype == ND_FLOAT64)
        return sort_float_values<double, unsigned long long>(variant, in, out, rows, n, f, tmp, tmp_bytes, stream);
    if (f.kind == ND_SK_FLOAT) return cudaErrorNotSupported; // float16 and bfloat16 come as float32
    int sgn = f.kind == ND_SK_INT;
    switch (f.width) {
    case 1: return sort_int_values<uint8_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    case 2: return sort_int_values<uint16_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    case 4: return sort_int_values<uint32_t>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    default: return sort_int_values<unsigned long long>(in, out, rows, n, sgn, tmp, tmp_bytes, stream);
    }
}

NDP_API int ndp_sort(int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream) {
    return ndp_sort_variant(NDP_SORT_DEFAULT, dtype, mode, in, out, rows, n, tmp, tmp_bytes, stream);
}
