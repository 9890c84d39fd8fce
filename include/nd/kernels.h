/*
 * nd/kernels.h — User kernels: the program's own code as a step of nd's
 * lazy graph.
 * Part of nd.h: include <nd.h>, not this file. A CUDA translation unit of
 * the program (nvcc) may include it on its own for nd_kernel_arg.
 *
 * A user kernel is a function the program wrote (a C function for the CPU
 * backend; CUDA C source nd compiles with NVRTC, or a __global__ function
 * the program already has, for the CUDA backend) that nd runs over nd
 * arrays as one step of a flush, like CuPy's RawKernel but recorded lazily:
 * nd_user_kernel_call records it with its declared inputs and outputs and
 * returns at once; the scheduler orders it against every other step by what
 * it reads and writes (an earlier write of an input runs before it, a later
 * write of an input waits until it has read it, a later reader of an output
 * sees what it wrote), on the same streams and in the same CUDA graphs as
 * nd's own kernels, and never fuses anything into it or across it: its
 * inputs are in memory when it runs, and every output it writes is.
 */
#ifndef ND_KERNELS_H
#define ND_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One argument as the kernel sees it: the view of an nd array it reads or
 * writes. `data` points at the view's first element (shape all zeros: its
 * offset into the buffer, in bounds only if size > 0). Element (i0, .., ik)
 * is data + (i0*strides[0] + .. + ik*strides[k]) elements (strides in
 * elements, as nd_strides; 0 on a broadcast axis, negative for a reversed
 * view). Inputs are passed as they are, views included: a transposed,
 * sliced, broadcast or reversed input is not copied, so a kernel must use
 * the strides (or check them and fail). New outputs are row-major
 * contiguous. `dtype` is an nd_dtype value. The same layout on the host and
 * in CUDA kernels (nd puts this definition in front of CUDA source). */
typedef struct nd_kernel_arg {
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t size; /* number of elements: the product of shape */
    int64_t shape[8];
    int64_t strides[8];
} nd_kernel_arg;

/* A CPU implementation. Runs on one of nd's threads when its step comes up
 * (after what it depends on, before what depends on it); it must not call
 * nd. Returns 0 on success; any other value is a failure: the outputs of
 * this call (and whatever is computed from them) carry ND_ERR_BACKEND with
 * "user kernel '<name>' failed (its function returned <value>)", reported
 * by nd_sync and by reads of those arrays, and every other value of the
 * flush is computed as usual. */
typedef int (*nd_kernel_cpu_fn)(void *ctx, int n_in, const nd_kernel_arg *in, int n_out,
                                const nd_kernel_arg *out);

/* A CUDA launch configuration. */
typedef struct nd_kernel_launch {
    unsigned grid[3];    /* blocks per grid, x y z (0 counts as 1) */
    unsigned block[3];   /* threads per block, x y z (0 counts as 1) */
    size_t shared_bytes; /* dynamic shared memory per block */
} nd_kernel_launch;

/* Computes the launch from the arguments (their data pointers are device
 * pointers: read shapes, not data). Called when a plan is first run, and
 * again whenever it is captured into a CUDA graph, so it must depend only
 * on shapes, dtypes and strides. Returns 0, or nonzero to fail the step as
 * nd_kernel_cpu_fn does. */
typedef int (*nd_kernel_launch_fn)(void *ctx, int n_in, const nd_kernel_arg *in, int n_out,
                                   const nd_kernel_arg *out, nd_kernel_launch *launch);

typedef struct nd_user_kernel nd_user_kernel;

/* Declares a kernel that reads n_in arrays and writes n_out (n_in >= 0,
 * n_out >= 1, n_in + n_out <= 64). `name` (1-63 characters of [A-Za-z0-9_])
 * names it in errors, logs, profiles and the CUDA source. Give it an
 * implementation for each backend the program may run on, then call it.
 * Errors: ND_ERR_ARG (NULL or bad name, arity out of range); NULL result. */
ND_API nd_user_kernel *nd_user_kernel_new(const char *name, int n_in, int n_out);

/* The CPU backend's implementation: fn(ctx, ...) per call (ctx is the
 * program's, passed through; it must stay valid while calls are pending).
 * Replaces an earlier one. Errors: ND_ERR_ARG (NULL k or fn). */
ND_API nd_status nd_user_kernel_set_cpu(nd_user_kernel *k, nd_kernel_cpu_fn fn, void *ctx);

/* The CUDA backend's implementation from CUDA C++ source, compiled with
 * NVRTC for the device when the first plan using it runs (and cached like
 * nd's own kernels, in memory and in ND_CACHE_DIR). `entry` names an
 * `extern "C" __global__` function of the source taking one nd_kernel_arg
 * per input, then one per output, by value:
 *     extern "C" __global__ void scale(nd_kernel_arg x, nd_kernel_arg y)
 * nd_kernel_arg and the ND_<DTYPE> dtype numbers are defined for it.
 * The launch: `launch` (fixed), else `launch_fn(launch_ctx, ...)`, else
 * one thread per element of the first output in blocks of 256. The source
 * is copied. A compile error is reported when the plan runs: nd_sync
 * returns ND_ERR_COMPILE with the compiler's message (its line numbers are
 * the source's own), and the outputs carry it.
 * Errors: ND_ERR_ARG (NULL k, src or entry, both launch and launch_fn). */
ND_API nd_status nd_user_kernel_set_cuda_source(nd_user_kernel *k, const char *src, const char *entry,
                                                const nd_kernel_launch *launch, nd_kernel_launch_fn launch_fn,
                                                void *launch_ctx);

/* The CUDA backend's implementation from a kernel the program already has:
 * `func` is what cudaLaunchKernel takes (the address of a __global__
 * function compiled into the program by nvcc, or a cudaKernel_t from
 * cudaLibraryGetKernel), with the same parameters as for the source form.
 * Launch as nd_user_kernel_set_cuda_source. Replaces a source given before.
 * Errors: ND_ERR_ARG (NULL k or func, both launch and launch_fn). */
ND_API nd_status nd_user_kernel_set_cuda_function(nd_user_kernel *k, const void *func,
                                                  const nd_kernel_launch *launch, nd_kernel_launch_fn launch_fn,
                                                  void *launch_ctx);

/* Releases the program's reference. Calls already recorded keep the kernel
 * (and run) until their flush is done and its plan is dropped. NULL: no-op. */
ND_API void nd_user_kernel_free(nd_user_kernel *k);

/* One output of a call. `array` NULL: nd makes a new array of dtype, ndim
 * and shape (uninitialised until the kernel writes it: write every
 * element), returned in results[j]. `array` set: the kernel writes into it
 * in place, a new version of its buffer that every later op sees (it may
 * be a view, written through its strides; the kernel sees its current
 * contents, so it may also read them); results[j] is set to NULL. Its
 * dtype and shape must then equal the declared ones, unless ndim is -1
 * (take the array's). */
typedef struct nd_kernel_output {
    nd_array *array;
    nd_dtype dtype;
    int ndim;
    const int64_t *shape;
} nd_kernel_output;

/* Records one run of k over inputs[0..n_in) writing outputs[0..n_out);
 * new outputs are returned in results (which may be NULL only when every
 * output is in place). Lazy: nothing runs until a flush (nd_sync, a read,
 * ...), where the backend in use runs its implementation. Inputs are
 * passed with their own dtypes and views (no promotion, no broadcasting
 * between them); a weak scalar input is passed as a 0-d array of its
 * default dtype (float64, int64). An input may share memory with an
 * in-place output: the kernel then sees its own writes as it makes them.
 * Errors: ND_ERR_ARG (NULL k, inputs, outputs, results or shape; an input
 * or output array freed; n_in or n_out not what nd_user_kernel_new
 * declared; an in-place output that is read-only, a weak scalar, or shares
 * a buffer with another output), ND_ERR_SHAPE / ND_ERR_DTYPE (an in-place
 * output whose shape or dtype is not the declared one; a bad new shape or
 * dtype), ND_ERR_UNSUPPORTED (k has no implementation for the backend in
 * use: set it with nd_user_kernel_set_cpu or _set_cuda_*). On error nothing
 * is recorded and results[0..n_out) are NULL. */
ND_API nd_status nd_user_kernel_call(nd_user_kernel *k, int n_in, nd_array *const *inputs, int n_out,
                                     const nd_kernel_output *outputs, nd_array **results);

#ifdef __cplusplus
}
#endif

#endif
