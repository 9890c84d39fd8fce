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
 * it that much from the plan's scratch. dtype is an nd_dtype value.
 *
 * Adding a primitive: its declaration and row here (ND_PRIMS_FNS), its
 * definition in a .cu file of this folder (listed in meson.build); bump
 * NDP_ABI when a signature changes, so an old plugin is refused. */
#ifndef ND_BACKENDS_CUDA_PRIMS_H
#define ND_BACKENDS_CUDA_PRIMS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#define NDP_ABI 2

#ifdef __cplusplus
#define NDP_API extern "C" __attribute__((visibility("default")))
#else
#define NDP_API
#endif

#define ND_PRIMS_FNS(X) X(ndp_abi) X(ndp_scan) X(ndp_histogram) X(ndp_bin_index)

/* NDP_ABI of the plugin. */
NDP_API int ndp_abi(void);

/* Inclusive scans (common/lib_calls.h's nd_lib_scan_op) of `rows`
 * contiguous rows of n elements each, in -> out (both contiguous, of
 * dtype int64, uint64, float32 or float64; they may be the same). */
NDP_API int ndp_scan(int dtype, int op, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream);

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
