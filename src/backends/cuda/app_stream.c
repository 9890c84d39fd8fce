/* The program's stream (nd_set_cuda_stream, nd_config.cuda_stream): nd's
 * work and the program's are ordered as if both ran on the program's
 * stream, with two events and no host wait.
 *
 * nd keeps its own stream (`stream`) rather than enqueueing on the
 * program's: plans are captured into CUDA graphs on it, its memory pool
 * orders allocations on it, its flushes are enqueued from the executor
 * thread while the program's thread enqueues its own kernels, and
 * nd_sync waits for it alone. So the two streams are joined instead:
 *
 *  - app -> nd: every entry point that enqueues on `stream` (copy, kernel,
 *    matmul, plan, device memory release) first records app_ready on the
 *    program's stream and makes `stream` wait for it (nd_cuda_app_join).
 *    It runs before a plan's capture or graph launch, never inside a
 *    capture, so graphs replay as before (a graph launched on `stream`
 *    follows the wait). A release joins too: the pool may hand the block
 *    to nd's next allocation while a program's kernel queued before the
 *    release still reads it.
 *  - nd -> app: app_stream_wait (nd_stream_sync_point) records nd_done on
 *    `stream` after everything enqueued so far and makes the program's
 *    stream wait for it.
 *
 * Each wait refers to an event recorded before it was enqueued, so the
 * waits cannot form a cycle (a deadlock) whatever the threads' timing.
 * Plans fork their auxiliary streams from `stream` after the join, so they
 * wait too. A join costs an event record and a stream wait (a few
 * microseconds of host time) per entry point while a stream is set, and
 * nothing otherwise. */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"

static nd_cuda *impl(nd_backend *be) { return (nd_cuda *)be->impl; }

/* The program's stream must not be capturing: recording app_ready there
 * would pull nd's stream into the program's graph. */
static nd_status not_capturing(cudaStream_t s) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(s, &cs);
    if (e != cudaSuccess) return nd_cuda_fail(e, "cudaStreamIsCapturing (the program's stream)");
    if (cs != cudaStreamCaptureStatusNone)
        return nd_error_set(ND_ERR_STATE, "cuda: the program's stream %p is capturing a CUDA graph: nd cannot order "
                            "its work after it (end the capture, or set another stream with nd_set_cuda_stream)",
                            (void *)s);
    return ND_OK;
}

nd_status nd_cuda_app_join(nd_cuda *cu) {
    if (!cu->app) return ND_OK;
    nd_status s = not_capturing(cu->app);
    if (s != ND_OK) return s;
    ND_CUDA_TRY(cudaEventRecord(cu->app_ready, cu->app), "cudaEventRecord on the program's stream");
    ND_CUDA_TRY(cudaStreamWaitEvent(cu->stream, cu->app_ready, 0), "cudaStreamWaitEvent (after the program's stream)");
    return ND_OK;
}

/* The program's stream waits for everything enqueued on `stream`. */
static nd_status app_wait_locked(nd_cuda *cu) {
    if (!cu->app) return ND_OK;
    nd_status s = not_capturing(cu->app); /* the wait would enter the program's graph */
    if (s != ND_OK) return s;
    ND_CUDA_TRY(cudaEventRecord(cu->nd_done, cu->stream), "cudaEventRecord (nd's work so far)");
    ND_CUDA_TRY(cudaStreamWaitEvent(cu->app, cu->nd_done, 0), "cudaStreamWaitEvent on the program's stream");
    return ND_OK;
}

static nd_status ensure_events(nd_cuda *cu) {
    if (!cu->app_ready)
        ND_CUDA_TRY(cudaEventCreateWithFlags(&cu->app_ready, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    if (!cu->nd_done)
        ND_CUDA_TRY(cudaEventCreateWithFlags(&cu->nd_done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return ND_OK;
}

/* Checks that nd can use `s`: recording app_ready on it fails for a stream
 * of another device or a destroyed one (as far as the driver can tell). */
static nd_status check_stream(nd_cuda *cu, cudaStream_t s) {
    if (s == cudaStreamPerThread)
        return nd_error_set(ND_ERR_ARG, "cudaStreamPerThread names another stream in each thread (nd enqueues "
                            "from its executor thread): pass the program's stream itself, or cudaStreamLegacy");
#if CUDART_VERSION >= 12080
    if (s != cudaStreamLegacy) {
        int dev = -1;
        cudaError_t e = cudaStreamGetDevice(s, &dev);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return nd_error_set(ND_ERR_ARG, "stream %p is not a stream nd can use: cudaStreamGetDevice failed: %s "
                                "(pass a live cudaStream_t of device %d)", (void *)s, cudaGetErrorString(e),
                                cu->device);
        }
        if (dev != cu->device)
            return nd_error_set(ND_ERR_ARG, "stream %p belongs to device %d, nd runs on device %d (create the "
                                "stream on device %d, or start nd there with ND_DEVICES=%d)",
                                (void *)s, dev, cu->device, cu->device, dev);
    }
#endif
    nd_status st = not_capturing(s);
    if (st != ND_OK) return st;
    cudaError_t e = cudaEventRecord(cu->app_ready, s);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return nd_error_set(ND_ERR_ARG, "stream %p is not a stream nd can use: cudaEventRecord failed: %s (pass a "
                            "live cudaStream_t of device %d)", (void *)s, cudaGetErrorString(e), cu->device);
    }
    return ND_OK;
}

static nd_status cu_set_app_stream(nd_backend *be, void *stream) {
    nd_cuda *cu = impl(be);
    cudaStream_t s = (cudaStream_t)stream;
    nd_cuda_lock(cu);
    nd_status st = s == cu->app ? ND_OK : ensure_events(cu);
    if (st == ND_OK && s && s != cu->app) st = check_stream(cu, s);
    /* The old stream's later work runs after nd's so far; nd's next work
     * after what the new one holds (app_ready was just recorded there). */
    if (st == ND_OK && s != cu->app) st = app_wait_locked(cu);
    if (st == ND_OK && s && s != cu->app) {
        cudaError_t e = cudaStreamWaitEvent(cu->stream, cu->app_ready, 0);
        if (e != cudaSuccess) st = nd_cuda_fail(e, "cudaStreamWaitEvent (after the program's stream)");
    }
    if (st == ND_OK) cu->app = s;
    nd_cuda_unlock(cu);
    return st;
}

static nd_status cu_app_stream_wait(nd_backend *be) {
    nd_cuda *cu = impl(be);
    nd_cuda_lock(cu);
    nd_status st = app_wait_locked(cu);
    nd_cuda_unlock(cu);
    return st;
}

/* A pool's figure (used or reserved bytes), 0 when it cannot be read. */
static uint64_t pool_bytes(cudaMemPool_t pool, enum cudaMemPoolAttr attr) {
    uint64_t v = 0;
    if (!pool || cudaMemPoolGetAttribute(pool, attr, &v) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return v;
}

/* Several logical devices: GPU `device` is used when one of them runs
 * there. Logical device 0's GPU counts what nd_cuda_device_alloc counted
 * (every GPU's allocations) less what the other GPUs' pools hand out. */
static void cu_device_usage(nd_backend *be, int device, int *logical, uint64_t *in_use, uint64_t *reserved) {
    nd_cuda *cu = impl(be);
    nd_cuda_lock(cu);
    *logical = 0;
    *in_use = *reserved = 0;
    for (int d = 0; d < cu->n_ldev; d++) *logical += cu->ldev[d].ordinal == device;
    if (*logical > 0) {
        cudaMemPool_t own = NULL; /* the pool of this GPU */
        uint64_t others = 0;
        for (int d = 0; d < cu->n_ldev; d++) {
            if (d > 0 && !cu->ldev[d].owns_pool) continue;
            if (cu->ldev[d].ordinal == device) own = cu->ldev[d].pool;
            else others += pool_bytes(cu->ldev[d].pool, cudaMemPoolAttrUsedMemCurrent);
        }
        if (device == cu->device) {
            *in_use = cu->in_use > others ? cu->in_use - others : 0;
            *reserved = own ? pool_bytes(own, cudaMemPoolAttrReservedMemCurrent) : *in_use;
        } else {
            *in_use = pool_bytes(own, cudaMemPoolAttrUsedMemCurrent);
            *reserved = pool_bytes(own, cudaMemPoolAttrReservedMemCurrent);
        }
    }
    nd_cuda_unlock(cu);
}

void nd_cuda_app_install(nd_backend *be) {
    be->set_app_stream = cu_set_app_stream;
    be->app_stream_wait = cu_app_stream_wait;
    be->device_usage = cu_device_usage;
}

/* At backend destruction, after `stream` was synchronised: the program's
 * stream is no longer nd's to touch. */
void nd_cuda_app_destroy(nd_cuda *cu) {
    if (cu->app_ready) cudaEventDestroy(cu->app_ready);
    if (cu->nd_done) cudaEventDestroy(cu->nd_done);
    cu->app_ready = cu->nd_done = NULL;
    cu->app = NULL;
}
