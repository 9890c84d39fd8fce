// Inclusive scans over contiguous rows (prims.h): CUB's DeviceScan for one
// row, DeviceScan::InclusiveScanByKey with the row number as key for
// several. The NaN-skipping forms read through a transform that maps NaN
// to the operation's identity.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "prims.h"
#include "common/lib_calls.h"

namespace {

template <typename T> struct Identity {
    __host__ __device__ T operator()(T v) const { return v; }
};
template <typename T> struct NanTo {
    T fill;
    __host__ __device__ T operator()(T v) const { return v != v ? fill : v; }
};
struct Sum {
    template <typename T> __host__ __device__ T operator()(T a, T b) const { return a + b; }
};
struct Prod {
    template <typename T> __host__ __device__ T operator()(T a, T b) const { return a * b; }
};
struct RowOf {
    int64_t n;
    __host__ __device__ int64_t operator()(int64_t i) const { return i / n; }
};

template <typename T, typename Map, typename Op>
cudaError_t scan_rows(const T *in, T *out, int64_t rows, int64_t n, Map map, Op op, void *tmp, size_t *bytes,
                      cudaStream_t s) {
    auto it = thrust::make_transform_iterator(in, map);
    int64_t total = rows * n;
    if (rows <= 1) return cub::DeviceScan::InclusiveScan(tmp, *bytes, it, out, op, total, s);
    auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{n});
    return cub::DeviceScan::InclusiveScanByKey(tmp, *bytes, keys, it, out, op, total, cuda::std::equal_to<>(), s);
}

template <typename T>
cudaError_t scan_typed(int op, const void *in, void *out, int64_t rows, int64_t n, void *tmp, size_t *bytes,
                       cudaStream_t s) {
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    switch (op) {
    case ND_SCAN_SUM: return scan_rows(x, y, rows, n, Identity<T>{}, Sum{}, tmp, bytes, s);
    case ND_SCAN_PROD: return scan_rows(x, y, rows, n, Identity<T>{}, Prod{}, tmp, bytes, s);
    case ND_SCAN_NANSUM: return scan_rows(x, y, rows, n, NanTo<T>{T(0)}, Sum{}, tmp, bytes, s);
    case ND_SCAN_NANPROD: return scan_rows(x, y, rows, n, NanTo<T>{T(1)}, Prod{}, tmp, bytes, s);
    }
    return cudaErrorInvalidValue;
}

} // namespace

NDP_API int ndp_abi(void) { return NDP_ABI; }

NDP_API int ndp_scan(int dtype, int op, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream) {
    if (rows * n == 0) {
        *tmp_bytes = tmp ? *tmp_bytes : 0;
        return cudaSuccess;
    }
    switch (dtype) {
    case ND_FLOAT32: return scan_typed<float>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_FLOAT64: return scan_typed<double>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_INT64: return scan_typed<long long>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_UINT64: return scan_typed<unsigned long long>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    }
    return cudaErrorInvalidValue;
}
