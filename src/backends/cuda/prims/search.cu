// Per-element routines over strided views (prims.h): a gather along the
// last axis (ndp_take_rows), a binary search in sorted keys
// (ndp_searchsorted) and NumPy's quantiles of sorted rows (ndp_quantile).
// Each computes what the CPU backend's cpu_search.c computes, operation for
// operation (products and sums rounded separately: no fused multiply-add),
// so both give the same bits.
#include "prims.h"
#include "common/lib_calls.h"
#include "common/sort_keys.h"

namespace {

unsigned blocks_for(int64_t total) {
    int64_t b = (total + 255) / 256;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b < 1 ? 1 : b);
}

__device__ int64_t last_len(const nd_kernel_arg &a) { return a.ndim ? a.shape[a.ndim - 1] : 1; }
__device__ int64_t last_stride(const nd_kernel_arg &a) { return a.ndim ? a.strides[a.ndim - 1] : 0; }

// Element offset of row r (flat over every axis but the last), as
// nd_cpu_row_offset.
__device__ int64_t row_offset(const nd_kernel_arg &a, int64_t r) {
    int64_t off = 0;
    for (int d = a.ndim - 2; d >= 0 && r > 0; d--) {
        off += (r % a.shape[d]) * a.strides[d];
        r /= a.shape[d];
    }
    return off;
}

template <typename U> __global__ void k_take(nd_kernel_arg x, nd_kernel_arg ix, nd_kernel_arg out) {
    int64_t n = last_len(x), m = last_len(out), total = out.size;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = t / m, i = t % m;
        int64_t k = ((const int64_t *)ix.data)[row_offset(ix, r) + i * last_stride(ix)];
        k = k < 0 ? 0 : k >= n ? n - 1 : k;
        ((U *)out.data)[row_offset(out, r) + i * last_stride(out)] =
            ((const U *)x.data)[row_offset(x, r) + k * last_stride(x)];
    }
}

template <typename U>
__global__ void k_search(nd_kernel_arg a, nd_kernel_arg v, nd_kernel_arg out, nd_sort_key_info f, int right) {
    int64_t n = a.shape[0], as = a.strides[0], m = last_len(v), total = v.size;
    const U *ad = (const U *)a.data;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = t / m, i = t % m;
        uint64_t kv = nd_sort_key_bits(((const U *)v.data)[row_offset(v, r) + i * last_stride(v)], f);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            uint64_t km = nd_sort_key_bits(ad[mid * as], f);
            if (right ? km <= kv : km < kv) lo = mid + 1;
            else hi = mid;
        }
        ((int64_t *)out.data)[row_offset(out, r) + i * last_stride(out)] = lo;
    }
}

__device__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }

template <typename T> __global__ void k_quantile(nd_kernel_arg x, nd_kernel_arg q, nd_kernel_arg out, int mode) {
    int64_t n = last_len(x), nq = last_len(out), total = out.size;
    int64_t xs = last_stride(x), qs = last_stride(q);
    int skip_nan = mode == ND_NANQUANTILE || mode == ND_NANMEDIAN;
    int median = mode == ND_MEDIAN || mode == ND_NANMEDIAN;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = t / nq, k = t % nq;
        const T *row = (const T *)x.data + row_offset(x, r);
        int64_t m = n;
        if (skip_nan) { // NaNs sort last: find the first by bisection
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (isnan(row[mid * xs])) hi = mid;
                else lo = mid + 1;
            }
            m = lo;
        }
        T v;
        if (m == 0 || isnan(row[(m - 1) * xs])) v = (T)NAN;
        else if (median)
            v = m % 2 ? row[(m / 2) * xs] : div_rn(add_rn(row[(m / 2 - 1) * xs], row[(m / 2) * xs]), (T)2);
        else {
            double vi = __dmul_rn((double)(m - 1), ((const double *)q.data)[k * qs]);
            double prev = floor(vi);
            int64_t lo = (int64_t)prev, hi = lo + 1;
            if (vi >= (double)(m - 1)) {
                lo = hi = m - 1;
                prev = -1;
            }
            double g = __dsub_rn(vi, prev);
            T a = row[lo * xs], b = row[hi * xs], diff = sub_rn(b, a);
            v = g >= 0.5 ? sub_rn(b, mul_rn(diff, (T)__dsub_rn(1.0, g))) : add_rn(a, mul_rn(diff, (T)g));
        }
        ((T *)out.data)[row_offset(out, r) + k * last_stride(out)] = v;
    }
}

} // namespace

NDP_API int ndp_take_rows(const nd_kernel_arg *x, const nd_kernel_arg *ix, const nd_kernel_arg *out,
                          cudaStream_t stream) {
    if (out->size == 0 || (x->ndim && x->shape[x->ndim - 1] == 0)) return cudaSuccess;
    unsigned g = blocks_for(out->size);
    switch (nd_sort_key_info_of(x->dtype).width) {
    case 1: k_take<uint8_t><<<g, 256, 0, stream>>>(*x, *ix, *out); break;
    case 2: k_take<uint16_t><<<g, 256, 0, stream>>>(*x, *ix, *out); break;
    case 4: k_take<uint32_t><<<g, 256, 0, stream>>>(*x, *ix, *out); break;
    case 8: k_take<unsigned long long><<<g, 256, 0, stream>>>(*x, *ix, *out); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

NDP_API int ndp_searchsorted(const nd_kernel_arg *a, const nd_kernel_arg *v, const nd_kernel_arg *out, int right,
                             cudaStream_t stream) {
    if (v->size == 0) return cudaSuccess;
    nd_sort_key_info f = nd_sort_key_info_of(a->dtype);
    unsigned g = blocks_for(v->size);
    switch (f.width) {
    case 1: k_search<uint8_t><<<g, 256, 0, stream>>>(*a, *v, *out, f, right); break;
    case 2: k_search<uint16_t><<<g, 256, 0, stream>>>(*a, *v, *out, f, right); break;
    case 4: k_search<uint32_t><<<g, 256, 0, stream>>>(*a, *v, *out, f, right); break;
    case 8: k_search<unsigned long long><<<g, 256, 0, stream>>>(*a, *v, *out, f, right); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

NDP_API int ndp_quantile(const nd_kernel_arg *x, const nd_kernel_arg *q, const nd_kernel_arg *out, int mode,
                         cudaStream_t stream) {
    if (out->size == 0) return cudaSuccess;
    unsigned g = blocks_for(out->size);
    if (x->dtype == ND_FLOAT32) k_quantile<float><<<g, 256, 0, stream>>>(*x, *q, *out, mode);
    else if (x->dtype == ND_FLOAT64) k_quantile<double><<<g, 256, 0, stream>>>(*x, *q, *out, mode);
    else return cudaErrorInvalidValue;
    return cudaGetLastError();
}
