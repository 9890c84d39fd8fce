/* nd's CUDA primitives: device-wide algorithms built on CUB (the toolkit's
 * CCCL) for the library routines of common/lib_calls.h. nvcc compiles them
 * at build time into libnd_cuda_prims.so, a plugin the CUDA backend opens
 * with dlopen (cuda_loader.c, nd_cuda_load_prims) like the CUDA libraries:
 * libnd itself is plain C and links no CUDA library, and a build without
 * nvcc still has the CUDA backend (its routines then fail with
 * ND_ERR_UNSUPPORTED naming the missing plugin).
 *
 * Every function returns a cudaError_t value (0: success) and enqueues its
 * work on `stream` without waiting (CUDA graph capture records it). Called
 * with tmp NULL it only stores in *tmp_bytes the device workspace it needs
 * for those arguments (data pointers may then be NULL); the backend gives
 * it that much from the plan's scratch, and a non-NULL tmp even when it
 * needs none. dtype is an nd_dtype value.
 *
 * Adding a primitive: its declaration and row here (ND_PRIMS_FNS), its
 * definition in a .cu file of this folder (listed in meson.build); bump
 * NDP_ABI when a signature changes, so an old plugin is refused. */
#ifndef ND_BACKENDS_CUDA_PRIMS_H
#define ND_BACKENDS_CUDA_PRIMS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "nd.h" /* nd_kernel_arg */
#include "common/scan_plan.h"

#define NDP_ABI 3

#ifdef __cplusplus
#define NDP_API extern "C" __attribute__((visibility("default")))
#else
#define NDP_API
/* Sorts `rows` contiguous rows of n elements each (sort.cu): mode
 * ND_SORT_VALUES writes the sorted values (dtype's own; float16 and
 * bfloat16 are not taken: sort them as float32), ND_SORT_INDICES the
 * stable sorting indices (int64), both in common/sort_keys.h's order. out
 * is contiguous and does not overlap in. */
NDP_API int ndp_sort(int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream);

/* search.cu, over strided views of the routines' rows (no workspace):
 * out[r, j] = x[r, clamp(ix[r, j])] along the last axis (ND_LIB_TAKE_ROWS);
 * the left (right = 0) or right insertion points of v in the sorted 1-d a
 * (ND_LIB_SEARCHSORTED); quantiles of sorted float32 / float64 rows
 * (ND_LIB_QUANTILE, mode an nd_lib_quantile_mode). */
NDP_API int ndp_take_rows(const nd_kernel_arg *x, const nd_kernel_arg *ix, const nd_kernel_arg *out,
                          cudaStream_t stream);
NDP_API int ndp_searchsorted(const nd_kernel_arg *a, const nd_kernel_arg *v, const nd_kernel_arg *out, int right,
                             cudaStream_t stream);
NDP_API int ndp_quantile(const nd_kernel_arg *x, const nd_kernel_arg *q, const nd_kernel_arg *out, int mode,
                         cudaStream_t stream);

#endif

#define ND_PRIMS_FNS(X) X(ndp_abi) X(ndp_scan) X(ndp_bad_record) X(ndp_gather) X(ndp_scatter) X(ndp_select) \
    X(ndp_sort) X(ndp_take_rows) X(ndp_searchsorted) X(ndp_quantile) \
    X(ndp_histogram) X(ndp_bin_index)

/* NDP_ABI of the plugin. */
NDP_API int ndp_abi(void);

/* Inclusive scans (common/lib_calls.h's nd_lib_scan_op) of `rows`
 * contiguous rows of n elements each, in -> out (both contiguous, of
 * dtype int64, uint64, float32 or float64; they may be the same). */
NDP_API int ndp_scan(int dtype, int op, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream);

/* The kernels behind ndp_scan and ndp_sort, named for bench/gpu_speed.cu,
 * which times them against each other and their floors (libnd calls only
 * ndp_scan and ndp_sort, so these are outside ND_PRIMS_FNS and NDP_ABI).
 * Scans: common/scan_plan.h's table ND_SCAN_VARIANTS (NDP_SCAN_*);
 * NDP_SCAN_DEFAULT is what ndp_scan runs (ND_SCAN_VARIANT's row if set,
 * else scan.cu's kDefaultScan); the windowed ones take one row (others run
 * NDP_SCAN_ONE_PASS). Sorts of
 * float values: NDP_SORT_DEFAULT is what ndp_sort runs (NDP_SORT_RAW:
 * CUB on the float keys as they are, then the NaN fixup);
 * NDP_SORT_BY_INDICES sorts the rows' argsort and gathers (ndp_sort's way
 * for short rows). */
enum { NDP_SORT_DEFAULT, NDP_SORT_RAW, NDP_SORT_BY_INDICES };
NDP_API int ndp_scan_variant(int variant, int dtype, int op, const void *in, void *out, int64_t rows, int64_t n,
                             void *tmp, size_t *tmp_bytes, cudaStream_t stream);
NDP_API int ndp_sort_variant(int variant, int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n,
                             void *tmp, size_t *tmp_bytes, cudaStream_t stream);

/* Indexing (gather.cu). Views are nd_kernel_args with device data, laid
 * out as common/lib_calls.h's ND_LIB_GATHER / ND_LIB_SCATTER say. An index
 * outside its axis is never used; the first (in C order) of a call is
 * filed in `fail`, a record in memory the device writes (the layout of
 * kernel_ir.h's nd_ir_fail: set, then k, the indexed axis, then the index
 * as given), unless that record is set already. A scatter that finds a bad
 * index writes nothing (NumPy raises before it writes). A plan keeps one
 * record per such step in device memory (plan_runner.c); a step run on its
 * own uses the process's record, mapped host memory (ndp_bad_record). */
typedef struct {
    int32_t set; /* 1: a bad index is filed */
    int32_t unused;
    int32_t k;   /* which of the K indexed axes */
    int32_t pad;
    int64_t index;
} ndp_fail;
NDP_API int ndp_bad_record(ndp_fail **host, ndp_fail **device);
/* out[p] = src[p, idx[p, 0..K)] (out contiguous). */
NDP_API int ndp_gather(int K, int64_t fn_flags, const nd_kernel_arg *src, const nd_kernel_arg *idx,
                       const nd_kernel_arg *out, ndp_fail *fail, void *tmp, size_t *tmp_bytes, cudaStream_t stream);
/* dst[p, idx[p, 0..K)] = (or +=, mode nd_lib_scatter_mode) vals[p], in
 * iteration order; nothing when an index is bad. */
NDP_API int ndp_scatter(int K, int64_t fn_flags, int mode, const nd_kernel_arg *idx, const nd_kernel_arg *vals,
                        const nd_kernel_arg *dst, ndp_fail *fail, void *tmp, size_t *tmp_bytes, cudaStream_t stream);
/* The elements of 1-d data (NULL: their positions, int64) where the 1-d
 * bool mask is set, in order, into contiguous out; their number into
 * *count (device memory). Sizing passes count NULL. */
NDP_API int ndp_select(const nd_kernel_arg *data, const nd_kernel_arg *mask, void *out, int64_t *count, void *tmp,
                       size_t *tmp_bytes, cudaStream_t stream);

/* Sorts `rows` contiguous rows of n elements each (sort.cu): mode
 * ND_SORT_VALUES writes the sorted values (dtype's own; float16 and
 * bfloat16 are not taken: sort them as float32), ND_SORT_INDICES the
 * stable sorting indices (int64), both in common/sort_keys.h's order. out
 * is contiguous and does not overlap in. */
NDP_API int ndp_sort(int dtype, int mode, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream);

/* search.cu, over strided views of the routines' rows (no workspace):
 * out[r, j] = x[r, clamp(ix[r, j])] along the last axis (ND_LIB_TAKE_ROWS);
 * the left (right = 0) or right insertion points of v in the sorted 1-d a
 * (ND_LIB_SEARCHSORTED); quantiles of sorted float32 / float64 rows
 * (ND_LIB_QUANTILE, mode an nd_lib_quantile_mode). */
NDP_API int ndp_take_rows(const nd_kernel_arg *x, const nd_kernel_arg *ix, const nd_kernel_arg *out,
                          cudaStream_t stream);
NDP_API int ndp_searchsorted(const nd_kernel_arg *a, const nd_kernel_arg *v, const nd_kernel_arg *out, int right,
                             cudaStream_t stream);
NDP_API int ndp_quantile(const nd_kernel_arg *x, const nd_kernel_arg *q, const nd_kernel_arg *out, int mode,
                         cudaStream_t stream);

/* ND_LIB_HISTOGRAM (common/hist_bins.h): flags is the mode plus
 * ND_HIST_WEIGHTED; x packed, of n int64 (index mode) or float32/float64
 * values (x_dtype); edges packed of n_edges values of x's dtype (edges
 * mode); weights packed float64 (weighted); out packed, `bins` uint64
 * counts or float64 sums. */
NDP_API int ndp_histogram(int flags, int x_dtype, const void *x, int64_t n, const void *edges, int64_t n_edges,
                          const double *weights, void *out, int64_t bins, double lo, double hi, void *tmp,
                          size_t *tmp_bytes, cudaStream_t stream);
/* ND_LIB_BIN_INDEX: out[i] = the uniform bin of x[i] (float64), or drop. */
NDP_API int ndp_bin_index(const double *x, int64_t n, int64_t bins, double lo, double hi, int64_t drop, int64_t *out,
                          cudaStream_t stream);

#endif
