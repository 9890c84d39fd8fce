// Gather, scatter and mask selection on the device (prims.h; the
// geometry is common/lib_calls.h's ND_LIB_GATHER / ND_LIB_SCATTER).
//
// Bounds: an index outside its axis is never used to read or write. The
// kernels atomicMin the first bad iteration point into a word of the
// call's workspace; a one-thread kernel after them recomputes that point's
// indexed axis and index and files them in the call's fail record
// (prims.h's ndp_fail): in a whole plan the step's record in device
// memory, which the executor reads once after the plan (backend.h's
// plan_fails) and turns into the step's ND_ERR_INDEX; a step run on its
// own, the process's mapped record, read when its stream has synchronised
// (nd_cuda_run_lib_step). Nothing waits for the host in between, so a plan
// with gathers and scatters is captured as a CUDA graph. The first point
// in C order is reported, as on the CPU. A scatter checks every index
// before it writes: its apply kernel reads the first bad point and writes
// nothing when there is one, so a failed scatter leaves its target as it
// was, as on the CPU.
//
// Scatters are deterministic: the target offsets are radix-sorted (stable:
// CUB's LSD sort keeps the iteration order among equal offsets), and the
// thread at the start of each run of one offset applies the run in order:
// the last write wins, adds accumulate in iteration order (np.add.at's
// order, the CPU's bits).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <iterator>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "prims.h"
#include "common/lib_calls.h"

namespace {

constexpr unsigned long long NONE = ~0ull;

// (The plugin links nothing of libnd: its own dtype sizes.)
int elem_size(int dtype) {
    switch (dtype) {
    case ND_BOOL: case ND_INT8: case ND_UINT8: return 1;
    case ND_INT16: case ND_UINT16: case ND_FLOAT16: case ND_BFLOAT16: return 2;
    case ND_INT32: case ND_UINT32: case ND_FLOAT32: return 4;
    default: return 8;
    }
}

__host__ __device__ inline int64_t iter_size(const nd_kernel_arg &a, int n) {
    int64_t t = 1;
    for (int d = 0; d < n; d++) t *= a.shape[d];
    return t;
}

// Offsets of iteration point j (over the first n axes of `shape_of`) in
// views a and b.
__device__ inline void offsets2(int64_t j, const nd_kernel_arg &shape_of, int n, const nd_kernel_arg &a, int64_t &oa,
                                const nd_kernel_arg &b, int64_t &ob) {
    oa = ob = 0;
    for (int d = n - 1; d >= 0; d--) {
        int64_t s = shape_of.shape[d], c = j % s;
        j /= s;
        oa += c * a.strides[d];
        ob += c * b.strides[d];
    }
}

// The indexed offset of the indices at io in off (negative where the
// indexed view's strides are); false for a bad index.
__device__ inline bool indexed(const nd_kernel_arg &ind, const nd_kernel_arg &idx, int n, int K, int wrap,
                               int64_t io, int64_t base, int64_t &off) {
    const int64_t *ix = static_cast<const int64_t *>(idx.data);
    for (int k = 0; k < K; k++) {
        int64_t v = ix[io + k * idx.strides[n]], size = ind.shape[n + k];
        if (v < 0 && wrap) v += size;
        if (v < 0 || v >= size) return false;
        base += v * ind.strides[n + k];
    }
    off = base;
    return true;
}

__device__ inline void note_bad(unsigned long long *first, int64_t j) { atomicMin(first, (unsigned long long)j); }

template <typename T>
__global__ void gather_any(nd_kernel_arg src, nd_kernel_arg idx, T *out, int n, int K, int wrap, int64_t total,
                           unsigned long long *first) {
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < total; j += (int64_t)gridDim.x * blockDim.x) {
        int64_t so, io;
        offsets2(j, src, n, src, so, idx, io);
        int64_t off = 0;
        if (!indexed(src, idx, n, K, wrap, io, so, off)) {
            note_bad(first, j);
            out[j] = T(0);
        } else {
            out[j] = static_cast<const T *>(src.data)[off];
        }
    }
}

// One iteration axis and one index array (x[idx] of a 1-d x): no division.
template <typename T>
__global__ void gather_1d(const T *__restrict__ src, int64_t s_iter, int64_t s_ax, int64_t size,
                          const int64_t *__restrict__ idx, int64_t i_iter, T *__restrict__ out, int wrap, int64_t total,
                          unsigned long long *first) {
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < total; j += (int64_t)gridDim.x * blockDim.x) {
        int64_t v = idx[j * i_iter];
        if (v < 0 && wrap) v += size;
        if (v < 0 || v >= size) {
            note_bad(first, j);
            out[j] = T(0);
        } else {
            out[j] = src[j * s_iter + v * s_ax];
        }
    }
}

// Files the first bad point of this call in its record, unless one is
// filed there already.
__global__ void file_bad(nd_kernel_arg ind, nd_kernel_arg idx, int n, int K, int wrap, const unsigned long long *first,
                         ndp_fail *bad) {
    unsigned long long j = *first;
    if (j == NONE) return;
    int64_t so, io;
    offsets2((int64_t)j, ind, n, ind, so, idx, io);
    const int64_t *ix = static_cast<const int64_t *>(idx.data);
    for (int k = 0; k < K; k++) {
        int64_t v = ix[io + k * idx.strides[n]], size = ind.shape[n + k];
        int64_t w = v < 0 && wrap ? v + size : v;
        if (w >= 0 && w < size) continue;
        if (atomicCAS(&bad->set, 0, 1) != 0) return;
        bad->k = k;
        bad->index = v;
        __threadfence_system();
        return;
    }
}

unsigned blocks_for(int64_t total) {
    int64_t b = (total + 255) / 256;
    return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <typename T>
cudaError_t gather_typed(int K, int wrap, const nd_kernel_arg &src, const nd_kernel_arg &idx, const nd_kernel_arg &out,
                         unsigned long long *first, cudaStream_t s) {
    int n = src.ndim - K;
    int64_t total = iter_size(src, n);
    if (n == 1 && K == 1)
        gather_1d<T><<<blocks_for(total), 256, 0, s>>>(static_cast<const T *>(src.data), src.strides[0],
                                                        src.strides[1], src.shape[1],
                                                        static_cast<const int64_t *>(idx.data), idx.strides[0],
                                                        static_cast<T *>(out.data), wrap, total, first);
    else
        gather_any<T><<<blocks_for(total), 256, 0, s>>>(src, idx, static_cast<T *>(out.data), n, K, wrap, total, first);
    return cudaGetLastError();
}

// ------------------------------------------------------------- scatter

// Key of each iteration point: its target offset minus the smallest
// offset the view can reach (so keys are small non-negative numbers), or
// `bad_key` for a bad index; the value is the point itself.
__global__ void scatter_keys(nd_kernel_arg dst, nd_kernel_arg idx, int n, int K, int wrap, int64_t total,
                             int64_t min_off, unsigned long long bad_key, unsigned long long *keys, int64_t *points,
                             unsigned long long *first) {
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < total; j += (int64_t)gridDim.x * blockDim.x) {
        int64_t d0, io;
        offsets2(j, dst, n, dst, d0, idx, io);
        int64_t off = 0;
        if (!indexed(dst, idx, n, K, wrap, io, d0, off)) {
            note_bad(first, j);
            keys[j] = bad_key;
        } else {
            keys[j] = (unsigned long long)(off - min_off);
        }
        points[j] = j;
    }
}

template <typename T> struct SetOp {
    __device__ T operator()(T, T v) const { return v; }
};
template <typename T> struct AddOp {
    __device__ T operator()(T a, T v) const { return T(a + v); }
};
struct OrOp {
    __device__ unsigned char operator()(unsigned char a, unsigned char v) const { return (unsigned char)(a || v); }
};
struct AddHalf {
    __device__ unsigned short operator()(unsigned short a, unsigned short v) const {
        float f = __half2float(__ushort_as_half(a)) + __half2float(__ushort_as_half(v));
        return __half_as_ushort(__float2half_rn(f));
    }
};
struct AddBf16 {
    __device__ unsigned short operator()(unsigned short a, unsigned short v) const {
        float f = __bfloat162float(__ushort_as_bfloat16(a)) + __bfloat162float(__ushort_as_bfloat16(v));
        return __bfloat16_as_ushort(__float2bfloat16_rn(f));
    }
};
// Signed integers add as unsigned: wrap-around, no undefined overflow.
template <typename S, typename U> struct AddWrap {
    __device__ S operator()(S a, S v) const { return (S)(U)((U)a + (U)v); }
};

template <typename T, typename Op>
__global__ void scatter_apply(nd_kernel_arg dst, nd_kernel_arg vals, int n, int64_t total, int64_t min_off,
                              unsigned long long bad_key, const unsigned long long *keys, const int64_t *points, Op op,
                              int last_only, const unsigned long long *first) {
    if (*first != NONE) return; /* a bad index: the scatter writes nothing */
    T *d = static_cast<T *>(dst.data);
    const T *v = static_cast<const T *>(vals.data);
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < total; p += (int64_t)gridDim.x * blockDim.x) {
        unsigned long long key = keys[p];
        if (key == bad_key || (p > 0 && keys[p - 1] == key)) continue;
        int64_t q = p;
        T acc = d[(int64_t)key + min_off];
        if (last_only) {
            while (q + 1 < total && keys[q + 1] == key) q++;
        }
        for (; q < total && keys[q] == key; q++) {
            int64_t vo, unused;
            offsets2(points[q], dst, n, vals, vo, vals, unused);
            acc = op(acc, v[vo]);
        }
        d[(int64_t)key + min_off] = acc;
    }
}

size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

// The reach of view a's offsets: [min, max].
void reach(const nd_kernel_arg &a, int64_t *lo, int64_t *hi) {
    *lo = *hi = 0;
    for (int d = 0; d < a.ndim; d++) {
        if (a.shape[d] == 0) continue;
        int64_t e = (a.shape[d] - 1) * a.strides[d];
        if (e < 0) *lo += e;
        else *hi += e;
    }
}

int key_bits(unsigned long long bad_key) {
    int b = 1;
    while (b < 64 && (bad_key >> b) != 0) b++;
    return b;
}

template <typename T, typename Op>
cudaError_t apply_typed(const nd_kernel_arg &dst, const nd_kernel_arg &vals, int n, int64_t total, int64_t min_off,
                        unsigned long long bad_key, const unsigned long long *keys, const int64_t *points, Op op,
                        int last_only, const unsigned long long *first, cudaStream_t s) {
    scatter_apply<T, Op><<<blocks_for(total), 256, 0, s>>>(dst, vals, n, total, min_off, bad_key, keys, points, op,
                                                           last_only, first);
    return cudaGetLastError();
}

cudaError_t apply(int dtype, int mode, const nd_kernel_arg &dst, const nd_kernel_arg &vals, int n, int64_t total,
                  int64_t min_off, unsigned long long bad_key, const unsigned long long *keys, const int64_t *points,
                  const unsigned long long *first, cudaStream_t s) {
#define APPLY(T, OP, LAST) \
    return apply_typed<T>(dst, vals, n, total, min_off, bad_key, keys, points, OP, LAST, first, s)
    if (mode == ND_SCATTER_ASSIGN) {
        switch (elem_size(dtype)) {
        case 1: APPLY(unsigned char, SetOp<unsigned char>{}, 1);
        case 2: APPLY(unsigned short, SetOp<unsigned short>{}, 1);
        case 4: APPLY(unsigned int, SetOp<unsigned int>{}, 1);
        case 8: APPLY(unsigned long long, SetOp<unsigned long long>{}, 1);
        }
        return cudaErrorInvalidValue;
    }
    switch (dtype) {
    case ND_BOOL: APPLY(unsigned char, OrOp{}, 0);
    case ND_INT8: APPLY(signed char, (AddWrap<signed char, unsigned char>{}), 0);
    case ND_INT16: APPLY(short, (AddWrap<short, unsigned short>{}), 0);
    case ND_INT32: APPLY(int, (AddWrap<int, unsigned int>{}), 0);
    case ND_INT64: APPLY(long long, (AddWrap<long long, unsigned long long>{}), 0);
    case ND_UINT8: APPLY(unsigned char, AddOp<unsigned char>{}, 0);
    case ND_UINT16: APPLY(unsigned short, AddOp<unsigned short>{}, 0);
    case ND_UINT32: APPLY(unsigned int, AddOp<unsigned int>{}, 0);
    case ND_UINT64: APPLY(unsigned long long, AddOp<unsigned long long>{}, 0);
    case ND_FLOAT16: APPLY(unsigned short, AddHalf{}, 0);
    case ND_BFLOAT16: APPLY(unsigned short, AddBf16{}, 0);
    case ND_FLOAT32: APPLY(float, AddOp<float>{}, 0);
    case ND_FLOAT64: APPLY(double, AddOp<double>{}, 0);
    }
#undef APPLY
    return cudaErrorInvalidValue;
}

// ------------------------------------------------------------- select

template <typename T> struct Strided {
    const T *p;
    int64_t s;
    __host__ __device__ T operator()(int64_t i) const { return p[i * s]; }
};

template <typename In>
cudaError_t select_with(In in, const nd_kernel_arg &mask, void *out, int64_t *count, int64_t n, void *tmp,
                        size_t *bytes, cudaStream_t s) {
    auto flags = thrust::make_transform_iterator(
        thrust::counting_iterator<int64_t>(0),
        Strided<unsigned char>{static_cast<const unsigned char *>(mask.data), mask.ndim ? mask.strides[0] : 0});
    using T = typename std::iterator_traits<In>::value_type;
    return cub::DeviceSelect::Flagged(tmp, *bytes, in, flags, static_cast<T *>(out), count, n, s);
}

template <typename T>
cudaError_t select_typed(const nd_kernel_arg &data, const nd_kernel_arg &mask, void *out, int64_t *count, int64_t n,
                         void *tmp, size_t *bytes, cudaStream_t s) {
    auto in = thrust::make_transform_iterator(
        thrust::counting_iterator<int64_t>(0),
        Strided<T>{static_cast<const T *>(data.data), data.ndim ? data.strides[0] : 0});
    return select_with(in, mask, out, count, n, tmp, bytes, s);
}

ndp_fail *bad_host, *bad_device;

} // namespace

NDP_API int ndp_bad_record(ndp_fail **host, ndp_fail **device) {
    if (!bad_host) {
        void *h = nullptr;
        cudaError_t e = cudaHostAlloc(&h, sizeof(ndp_fail), cudaHostAllocMapped | cudaHostAllocPortable);
        if (e != cudaSuccess) return e;
        memset(h, 0, sizeof(ndp_fail));
        void *d = nullptr;
        e = cudaHostGetDevicePointer(&d, h, 0);
        if (e != cudaSuccess) {
            cudaFreeHost(h);
            return e;
        }
        bad_host = static_cast<ndp_fail *>(h);
        bad_device = static_cast<ndp_fail *>(d);
    }
    *host = bad_host;
    *device = bad_device;
    return cudaSuccess;
}

NDP_API int ndp_gather(int K, int64_t fn_flags, const nd_kernel_arg *src, const nd_kernel_arg *idx,
                       const nd_kernel_arg *out, ndp_fail *fail, void *tmp, size_t *tmp_bytes, cudaStream_t stream) {
    cudaError_t e;
    if (!tmp) {
        *tmp_bytes = 256;
        return cudaSuccess;
    }
    int n = src->ndim - K, wrap = !(fn_flags & ND_INDEX_NO_WRAP);
    if (iter_size(*src, n) == 0) return cudaSuccess;
    unsigned long long *first = static_cast<unsigned long long *>(tmp);
    if ((e = cudaMemsetAsync(first, 0xff, sizeof *first, stream)) != cudaSuccess) return e;
    switch (elem_size(src->dtype)) {
    case 1: e = gather_typed<unsigned char>(K, wrap, *src, *idx, *out, first, stream); break;
    case 2: e = gather_typed<unsigned short>(K, wrap, *src, *idx, *out, first, stream); break;
    case 4: e = gather_typed<unsigned int>(K, wrap, *src, *idx, *out, first, stream); break;
    case 8: e = gather_typed<unsigned long long>(K, wrap, *src, *idx, *out, first, stream); break;
    default: return cudaErrorInvalidValue;
    }
    if (e != cudaSuccess) return e;
    file_bad<<<1, 1, 0, stream>>>(*src, *idx, n, K, wrap, first, fail);
    return cudaGetLastError();
}

NDP_API int ndp_scatter(int K, int64_t fn_flags, int mode, const nd_kernel_arg *idx, const nd_kernel_arg *vals,
                        const nd_kernel_arg *dst, ndp_fail *fail, void *tmp, size_t *tmp_bytes, cudaStream_t stream) {
    int n = dst->ndim - K, wrap = !(fn_flags & ND_INDEX_NO_WRAP);
    int64_t total = iter_size(*dst, n), lo, hi;
    reach(*dst, &lo, &hi);
    unsigned long long bad_key = (unsigned long long)(hi - lo) + 1;
    int bits = key_bits(bad_key);
    size_t pair = align_up(sizeof(int64_t) * (size_t)total), cub_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, (const unsigned long long *)nullptr,
                                                    (unsigned long long *)nullptr, (const int64_t *)nullptr,
                                                    (int64_t *)nullptr, total, 0, bits, stream);
    if (e != cudaSuccess) return e;
    size_t need = 256 + 4 * pair + cub_bytes;
    if (!tmp) {
        *tmp_bytes = need;
        return cudaSuccess;
    }
    if (total == 0) return cudaSuccess;
    if (*tmp_bytes < need) return cudaErrorInvalidValue;
    char *w = static_cast<char *>(tmp);
    unsigned long long *first = reinterpret_cast<unsigned long long *>(w);
    auto *keys_in = reinterpret_cast<unsigned long long *>(w + 256);
    auto *keys_out = reinterpret_cast<unsigned long long *>(w + 256 + pair);
    auto *pts_in = reinterpret_cast<int64_t *>(w + 256 + 2 * pair);
    auto *pts_out = reinterpret_cast<int64_t *>(w + 256 + 3 * pair);
    void *cub_tmp = w + 256 + 4 * pair;
    if ((e = cudaMemsetAsync(first, 0xff, sizeof *first, stream)) != cudaSuccess) return e;
    scatter_keys<<<blocks_for(total), 256, 0, stream>>>(*dst, *idx, n, K, wrap, total, lo, bad_key, keys_in, pts_in,
                                                         first);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    file_bad<<<1, 1, 0, stream>>>(*dst, *idx, n, K, wrap, first, fail);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    e = cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, keys_in, keys_out, pts_in, pts_out, total, 0, bits, stream);
    if (e != cudaSuccess) return e;
    return apply(dst->dtype, mode, *dst, *vals, n, total, lo, bad_key, keys_out, pts_out, first, stream);
}

NDP_API int ndp_select(const nd_kernel_arg *data, const nd_kernel_arg *mask, void *out, int64_t *count, void *tmp,
                       size_t *tmp_bytes, cudaStream_t stream) {
    int64_t n = mask->size;
    if (n == 0) {
        /* Sized (count NULL): no workspace, so tmp is NULL when it runs too. */
        if (!count) {
            *tmp_bytes = 0;
            return cudaSuccess;
        }
        return cudaMemsetAsync(count, 0, sizeof *count, stream);
    }
    if (!data) return select_with(thrust::counting_iterator<int64_t>(0), *mask, out, count, n, tmp, tmp_bytes, stream);
    switch (elem_size(data->dtype)) {
    case 1: return select_typed<unsigned char>(*data, *mask, out, count, n, tmp, tmp_bytes, stream);
    case 2: return select_typed<unsigned short>(*data, *mask, out, count, n, tmp, tmp_bytes, stream);
    case 4: return select_typed<unsigned int>(*data, *mask, out, count, n, tmp, tmp_bytes, stream);
    case 8: return select_typed<unsigned long long>(*data, *mask, out, count, n, tmp, tmp_bytes, stream);
    }
    return cudaErrorInvalidValue;
}
