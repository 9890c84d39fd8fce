/* The CUDA backend object: device selection, the stream-ordered memory pool,
 * copies, kernel launch and synchronisation. Everything the backend does is
 * ordered on one stream, so a plan's steps run in order without host waits;
 * synchronize() is the only place the host blocks. Kernels come from the
 * kernel cache (codegen + NVRTC); matmul lives in matmul.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cuda/cuda_internal.h"
#include "common/alloc.h"
#include "common/device_list.h"
#include "common/env.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/lib_calls.h"
#include "common/mem_count.h"

nd_status nd_cuda_fail(cudaError_t e, const char *what) {
    nd_status code = e == cudaErrorMemoryAllocation ? ND_ERR_OOM : ND_ERR_BACKEND;
    return nd_error_set(code, "cuda: %s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

static nd_cuda *impl(nd_backend *be) { return (nd_cuda *)be->impl; }

/* ------------------------------------------------------------------ memory */

nd_status nd_cuda_device_alloc(nd_cuda *cu, size_t bytes, void **out, const char *what) {
    return nd_cuda_device_alloc_on(cu, 0, bytes, out, what);
}

void nd_cuda_use_device(nd_cuda *cu, int ordinal) {
    if (cu->multi_gpu) cudaSetDevice(ordinal);
}

/* cudaMalloc (no pools) allocates on the current device. */
static cudaError_t malloc_on(nd_cuda *cu, int ldev, void **out, size_t bytes) {
    cudaMemPool_t pool = cu->ldev[ldev].pool;
    if (pool) return cudaMallocFromPoolAsync(out, bytes, pool, cu->stream);
    nd_cuda_use_device(cu, cu->ldev[ldev].ordinal);
    cudaError_t e = cudaMalloc(out, bytes);
    nd_cuda_use_device(cu, cu->device);
    return e;
}

/* Whether a request of `bytes` may fit logical device ldev's GPU: its free
 * memory plus what its pool holds unused. A stream-ordered pool asked for
 * more than that does not fail at once: the driver first maps every free
 * byte of the GPU into the pool, and with the release threshold at its
 * maximum those bytes stay reserved after the failure (on an H200, requests
 * of 140 to 256 GiB left 139.8 GiB in the pool and every other process on
 * the GPU out of memory; bench/results/2026-11-29-h200-session9.md). So
 * large requests that cannot fit are refused here, without the driver. */
#define ND_CUDA_CHECK_FIT_FROM ((size_t)256 << 20)
static int may_fit(nd_cuda *cu, int ldev, size_t bytes) {
    cudaMemPool_t pool = cu->ldev[ldev].pool;
    if (bytes < ND_CUDA_CHECK_FIT_FROM || !pool) return 1; /* cudaMalloc holds nothing when it fails */
    uint64_t reserved = 0, used = 0;
    cudaError_t e = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
    if (e == cudaSuccess) e = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 1; /* unknown: let the driver answer */
    }
    const size_t idle = reserved > used ? (size_t)(reserved - used) : 0;
    /* What the pool holds unused covers it (a loop freeing and making the
     * same large array): no need to ask the driver. cudaMemGetInfo took
     * 6.6 us on an H200's host, 65-89 us as the first call after the host
     * slept 200 ms (a benchmark's settle, a program between steps), where
     * the pool's two attributes take 0.2 us
     * (bench/results/2026-12-01-session23.md). The pool may still have to
     * map more when its free bytes are fragmented; then the driver
     * answers as for any request. */
    if (bytes <= idle) return 1;
    nd_cuda_use_device(cu, cu->ldev[ldev].ordinal); /* cudaMemGetInfo answers for the current device */
    size_t free_b = 0, total_b = 0;
    e = cudaMemGetInfo(&free_b, &total_b);
    nd_cuda_use_device(cu, cu->device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    return bytes <= free_b + idle;
}

static cudaError_t malloc_if_fits(nd_cuda *cu, int ldev, void **out, size_t bytes) {
    return may_fit(cu, ldev, bytes) ? malloc_on(cu, ldev, out, bytes) : cudaErrorMemoryAllocation;
}

nd_status nd_cuda_device_alloc_on(nd_cuda *cu, int ldev, size_t bytes, void **out, const char *what) {
    *out = NULL;
    if (bytes == 0) bytes = 1;
    if (nd_fault_hit(ND_FAULT_DEVICE_ALLOC))
        return nd_error_set(ND_ERR_OOM, "cuda: out of device memory allocating %zu bytes for %s (injected fault)",
                            bytes, what);
    if (cu->mem_limit > 0 && (int64_t)(cu->in_use + bytes) > cu->mem_limit && ldev == 0)
        nd_cuda_release_step_workspace(cu); /* kept, not needed: give it back first */
    if (cu->mem_limit > 0 && (int64_t)(cu->in_use + bytes) > cu->mem_limit)
        return nd_error_set(ND_ERR_OOM,
                            "cuda: allocating %zu bytes for %s would exceed device_memory_limit (%" PRId64
                            " bytes; %zu in use): raise ND_DEVICE_MEMORY_LIMIT or free arrays",
                            bytes, what, cu->mem_limit, cu->in_use);
    /* Every pool allocates in the order of `stream`, which every plan
     * forks from and joins back to (plan_runner.c), also for the pools of
     * other logical devices' GPUs. */
    cudaError_t e = malloc_if_fits(cu, ldev, out, bytes);
    if (e == cudaErrorMemoryAllocation) {
        /* Give cached pool memory back to the driver, then try once more. */
        (void)cudaGetLastError();
        if (ldev == 0) nd_cuda_release_step_workspace(cu);
        cudaStreamSynchronize(cu->stream);
        if (cu->ldev[ldev].pool) cudaMemPoolTrimTo(cu->ldev[ldev].pool, 0);
        e = malloc_if_fits(cu, ldev, out, bytes);
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        /* What a failed request mapped into the pool goes back too. */
        if (cu->ldev[ldev].pool) cudaMemPoolTrimTo(cu->ldev[ldev].pool, 0);
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        *out = NULL;
        if (e == cudaErrorMemoryAllocation)
            return nd_error_set(ND_ERR_OOM,
                                "cuda: out of device memory allocating %zu bytes for %s (%zu of %zu bytes free on "
                                "device %d after releasing cached memory; %zu held by nd)",
                                bytes, what, free_b, total_b, cu->ldev[ldev].ordinal, cu->in_use);
        return nd_cuda_fail(e, "cudaMallocFromPoolAsync");
    }
    cu->in_use += bytes;
    nd_mem_count_alloc(1, bytes);
    if (bytes >= ((size_t)256 << 20))
        nd_logf(3, "cuda: %zu bytes for %s (nd now holds %zu)", bytes, what, cu->in_use);
    return ND_OK;
}

void nd_cuda_device_free(nd_cuda *cu, void *p, size_t bytes) {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    cudaError_t e = cu->pool ? cudaFreeAsync(p, cu->stream) : cudaFree(p);
    if (e != cudaSuccess) nd_logf(1, "cuda: freeing device memory failed: %s", cudaGetErrorString(e));
    cu->in_use = cu->in_use >= bytes ? cu->in_use - bytes : 0;
    nd_mem_count_release(1, bytes);
}

/* ------------------------------------------------------ pinned host memory
 *
 * Host buffers from ND_CUDA_PIN_MIN on are pinned (cudaMallocHost) so copies
 * to and from them run asynchronously at full speed. Pinning is slow (the
 * driver faults in and locks every page: seconds for 16 GiB) and
 * cudaFreeHost synchronises the device, so, like CuPy's pinned memory pool,
 * released blocks are kept and handed back to a later host allocation that
 * fits: the suite's h2d_sum imports a new 16 GiB array before every run and
 * spent most of its 176 s pinning, filling and unpinning it, 11 times.
 *
 * A released block may still be read or written by copies already enqueued
 * on the stream. Its release records an event there instead of waiting;
 * reusing or freeing the block waits for that event, so a release that
 * keeps the block does not block the caller (evicting others may: freeing
 * pinned memory synchronises the device).
 *
 * The cache is bounded by ND_PINNED_CACHE bytes (default a quarter of
 * physical memory; 0 turns it off) and ND_CUDA_PINNED_MAX_CACHED blocks; past
 * either, the least recently released blocks are freed. Out of memory frees
 * every cached block and retries once. All of it runs under the backend lock
 * (the cu_alloc/cu_release entry points), like the rest of the backend.
 * Lookups are linear over the blocks made: each is at least 1 MiB, which
 * costs far more to fill than the scan. */

/* ND_PINNED_CACHE in bytes (k/m/g suffixes; 0: no cache). Unset: a
 * quarter of physical memory. */
static nd_status pinned_cache_bound(size_t *out) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    *out = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 4 : (size_t)1 << 30;
    int64_t v;
    int set;
    if (nd_env_int64(ND_ENV_PINNED_CACHE, &v, &set)) return ND_ERR_ARG;
    if (set) *out = (size_t)v;
    return ND_OK;
}

/* Waits until the copies enqueued before the block's release are done. */
static void pinned_wait(nd_cuda_pinned *b) {
    if (!b->pending) return;
    cudaError_t e = cudaEventSynchronize(b->done);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        nd_logf(1, "cuda: waiting for a released pinned block failed: %s", cudaGetErrorString(e));
    }
    b->pending = 0;
}

/* Frees block i (cached or in use) and forgets it. */
static void pinned_drop(nd_cuda *cu, uint32_t i) {
    nd_cuda_pinned *b = &cu->pinned[i];
    pinned_wait(b);
    if (b->released) {
        cu->pinned_cached -= b->bytes;
        cu->n_pinned_cached--;
    }
    cudaError_t e = cudaFreeHost(b->ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        nd_logf(1, "cuda: cudaFreeHost failed: %s", cudaGetErrorString(e));
    }
    if (b->done) cudaEventDestroy(b->done);
    cu->pinned[i] = cu->pinned[--cu->n_pinned];
}

/* Frees the least recently released cached blocks until at most `bytes`
 * and `blocks` remain cached. */
static void pinned_trim(nd_cuda *cu, size_t bytes, uint32_t blocks) {
    while (cu->n_pinned_cached > 0 && (cu->pinned_cached > bytes || cu->n_pinned_cached > blocks)) {
        uint32_t oldest = UINT32_MAX;
        for (uint32_t i = 0; i < cu->n_pinned; i++)
            if (cu->pinned[i].released &&
                (oldest == UINT32_MAX || cu->pinned[i].released < cu->pinned[oldest].released))
                oldest = i;
        if (oldest == UINT32_MAX) break;
        pinned_drop(cu, oldest);
    }
}

/* The smallest cached block that fits `bytes` without wasting more than a
 * quarter of it (a 16 GiB block is not spent on a 1 MiB request), now in
 * use; NULL when none fits. */
static void *pinned_take(nd_cuda *cu, size_t bytes) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < cu->n_pinned; i++) {
        const nd_cuda_pinned *b = &cu->pinned[i];
        if (b->released && b->bytes >= bytes && b->bytes - bytes <= bytes / 4 &&
            (best == UINT32_MAX || b->bytes < cu->pinned[best].bytes))
            best = i;
    }
    if (best == UINT32_MAX) return NULL;
    nd_cuda_pinned *b = &cu->pinned[best];
    pinned_wait(b);
    b->released = 0;
    cu->pinned_cached -= b->bytes;
    cu->n_pinned_cached--;
    return b->ptr;
}

static int64_t pinned_find(const nd_cuda *cu, const void *p) {
    for (uint32_t i = 0; i < cu->n_pinned; i++)
        if (cu->pinned[i].ptr == p) return i;
    return -1;
}

/* A cached block when one fits, else a new one (after emptying the cache
 * once if the driver refuses); cudaSuccess or the driver's error. */
static cudaError_t pinned_alloc(nd_cuda *cu, size_t bytes, void **out) {
    if ((*out = pinned_take(cu, bytes))) {
        cu->pinned_hits++;
        return cudaSuccess;
    }
    cu->pinned_misses++;
    cudaError_t e = cudaMallocHost(out, bytes);
    if (e != cudaSuccess && cu->n_pinned_cached > 0) {
        (void)cudaGetLastError();
        nd_logf(2, "cuda: cudaMallocHost of %zu bytes failed (%s); freeing %zu cached pinned bytes and retrying",
                bytes, cudaGetErrorString(e), cu->pinned_cached);
        pinned_trim(cu, 0, 0);
        e = cudaMallocHost(out, bytes);
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *out = NULL;
        return e;
    }
    /* Untracked when the list cannot grow: the release then finds it
     * pinned by its attributes and frees it. */
    if (nd_grow((void **)&cu->pinned, &cu->cap_pinned, cu->n_pinned + 1, sizeof *cu->pinned))
        cu->pinned[cu->n_pinned++] = (nd_cuda_pinned){.ptr = *out, .bytes = bytes};
    if (bytes >= ((size_t)256 << 20)) nd_logf(3, "cuda: pinned %zu new host bytes", bytes);
    return cudaSuccess;
}

/* Records on the stream what a reuse of b must wait for; 0 if that failed. */
static int pinned_mark(nd_cuda *cu, nd_cuda_pinned *b) {
    if (!b->done && cudaEventCreateWithFlags(&b->done, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        b->done = NULL;
        return 0;
    }
    if (cudaEventRecord(b->done, cu->stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    b->pending = 1;
    return 1;
}

/* Block i is released: cached, or freed when it exceeds the bound. */
static void pinned_release(nd_cuda *cu, uint32_t i) {
    nd_cuda_pinned *b = &cu->pinned[i];
    if (b->bytes > cu->pinned_cache_max) {
        /* Pending asynchronous copies may still read it. */
        cudaStreamSynchronize(cu->stream);
        pinned_drop(cu, i);
        return;
    }
    if (!pinned_mark(cu, b)) cudaStreamSynchronize(cu->stream);
    b->released = ++cu->pinned_tick;
    cu->pinned_cached += b->bytes;
    cu->n_pinned_cached++;
    pinned_trim(cu, cu->pinned_cache_max, ND_CUDA_PINNED_MAX_CACHED);
}

/* At shutdown: cached blocks are freed; blocks still in use belong to
 * handles that outlived the runtime and are left to the process's end, as
 * before the cache. */
static void pinned_destroy(nd_cuda *cu) {
    pinned_trim(cu, 0, 0);
    size_t held = 0;
    for (uint32_t i = 0; i < cu->n_pinned; i++) {
        held += cu->pinned[i].bytes;
        if (cu->pinned[i].done) cudaEventDestroy(cu->pinned[i].done);
    }
    if (cu->n_pinned) nd_logf(2, "cuda: %u pinned host blocks (%zu bytes) still in use at shutdown", cu->n_pinned, held);
    if (cu->pinned_hits + cu->pinned_misses)
        nd_logf(2, "cuda: pinned host allocations: %" PRIu64 " from the cache, %" PRIu64 " new", cu->pinned_hits,
                cu->pinned_misses);
    free(cu->pinned);
    cu->pinned = NULL;
    cu->n_pinned = cu->cap_pinned = cu->n_pinned_cached = 0;
}

/* Small host buffers (scalars, a loop's constants) come from malloc:
 * cudaMallocHost costs far more than their copy. So do large ones the
 * driver would not pin. */
static nd_status pageable_alloc(nd_cuda *cu, size_t bytes, void **out) {
    *out = nd_malloc(bytes ? bytes : 1);
    if (!*out && cu->n_pinned_cached > 0) {
        pinned_trim(cu, 0, 0); /* page-locked memory the host may need */
        *out = nd_malloc(bytes ? bytes : 1);
    }
    if (!*out) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory allocating %zu bytes", bytes);
    return ND_OK;
}

static nd_status host_alloc(nd_cuda *cu, size_t bytes, void **out) {
    if (bytes >= ND_CUDA_PIN_MIN) {
        cudaError_t e = pinned_alloc(cu, bytes, out);
        if (e == cudaSuccess) return ND_OK;
        nd_logf(1, "cuda: cudaMallocHost of %zu bytes failed (%s); using pageable memory", bytes,
                cudaGetErrorString(e));
    }
    return pageable_alloc(cu, bytes, out);
}

static nd_status cu_alloc_locked(nd_backend *be, int memory, size_t bytes, void **out) {
    nd_cuda *cu = impl(be);
    if (memory == 1) return nd_cuda_device_alloc(cu, bytes, out, "an array");
    /* Memory 1 + d: logical device d's pieces (backend.h, device_memories). */
    if (memory > 1 && memory <= cu->n_ldev)
        return nd_cuda_device_alloc_on(cu, memory - 1, bytes, out, "a piece of a split array");
    if (memory == ND_MEMORY_HOST) {
        nd_status s = host_alloc(cu, bytes, out);
        if (s == ND_OK) nd_mem_count_alloc(ND_MEMORY_HOST, bytes);
        return s;
    }
    *out = NULL;
    return nd_error_set(ND_ERR_ARG, "cuda: alloc: memory space %d is not host (0) or a device (1..%d)", memory,
                        cu->n_ldev);
}

static void cu_release_locked(nd_backend *be, int memory, void *ptr, size_t bytes) {
    nd_cuda *cu = impl(be);
    if (!ptr) return;
    if (memory >= 1 && memory <= cu->n_ldev) {
        nd_cuda_device_free(cu, ptr, bytes);
    } else if (memory == ND_MEMORY_HOST) {
        nd_mem_count_release(ND_MEMORY_HOST, bytes);
        int64_t i = pinned_find(cu, ptr);
        if (i >= 0) {
            pinned_release(cu, (uint32_t)i);
            return;
        }
        struct cudaPointerAttributes attr;
        if (cudaPointerGetAttributes(&attr, ptr) == cudaSuccess && attr.type == cudaMemoryTypeHost) {
            /* Pinned but untracked (the block list could not grow):
             * pending asynchronous copies may still read it. */
            cudaStreamSynchronize(cu->stream);
            cudaError_t e = cudaFreeHost(ptr);
            if (e != cudaSuccess) nd_logf(1, "cuda: cudaFreeHost failed: %s", cudaGetErrorString(e));
        } else {
            /* Pageable: copies from it were staged before cudaMemcpyAsync
             * returned, copies to it completed before it returned. */
            (void)cudaGetLastError();
            free(ptr);
        }
    }
}

nd_status nd_cuda_issue_copy(nd_cuda *cu, void *dst, int dst_memory, const void *src, int src_memory, size_t bytes,
                             cudaStream_t stream) {
    if (bytes == 0) return ND_OK;
    /* Several GPUs: the pieces of memories 2.. are device memory too, and
     * a copy between two GPUs' memory is found by its addresses (unified
     * addressing). */
    if (dst_memory > 1 && dst_memory <= cu->n_ldev) dst_memory = 1;
    if (src_memory > 1 && src_memory <= cu->n_ldev) src_memory = 1;
    if ((dst_memory != 0 && dst_memory != 1) || (src_memory != 0 && src_memory != 1))
        return nd_error_set(ND_ERR_ARG, "cuda: copy between memory spaces %d and %d: only 0 (host) and 1 (device)",
                            src_memory, dst_memory);
    enum cudaMemcpyKind kind = dst_memory ? (src_memory ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                          : (src_memory ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    ND_NVTX_PUSH(kind == cudaMemcpyHostToDevice ? "nd copy host->device"
                 : kind == cudaMemcpyDeviceToHost ? "nd copy device->host"
                                                  : "nd copy");
    if (kind == cudaMemcpyDeviceToDevice && cu->multi_gpu) kind = cudaMemcpyDefault;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
    ND_NVTX_POP();
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "cudaMemcpyAsync of %zu bytes (memory %d -> %d)", bytes, src_memory, dst_memory);
        return nd_cuda_fail(e, what);
    }
    return ND_OK;
}

static nd_status cu_copy_locked(nd_backend *be, void *dst, int dst_memory, const void *src, int src_memory, size_t bytes) {
    nd_cuda *cu = impl(be);
    return nd_cuda_issue_copy(cu, dst, dst_memory, src, src_memory, bytes, cu->stream);
}

/* ----------------------------------------------------------------- kernels */

/* Blocks of ND_CUDA_BLOCK threads for `work` items, at least 1, at most cap. */
static unsigned blocks_for(int64_t work, int64_t cap) {
    int64_t g = (work + ND_CUDA_BLOCK - 1) / ND_CUDA_BLOCK;
    if (g > cap) g = cap;
    return g < 1 ? 1u : (unsigned)g;
}

/* 32 blocks a multiprocessor, each striding over the space. */
static unsigned grid_for(const nd_cuda *cu, int64_t work) { return blocks_for(work, (int64_t)cu->sm_count * 32); }

/* One thread per work item, no grid-stride steps (beyond 2^31 - 1 blocks the
 * kernels' loops take the rest). For a streaming elementwise kernel this beat
 * the capped grid of grid_for on the H100: chain 2^27 float32 528.6 against
 * 567.4 us, Black-Scholes 2^26 445.8 against 471.3 us, at 0.99-1.00x the
 * copy floor (bench/elementwise_variants.cu): the blocks then walk memory
 * in order, where a grid stride keeps every resident block's next vector
 * 16 MiB further on. */
static unsigned grid_exact(int64_t work) { return blocks_for(work, 0x7fffffff); }

/* The vector variant needs every unit-stride pointer aligned to its width. */
static int vec_aligned(const nd_kernel *k, int vec, void *const *slots) {
    for (int j = 0; j < k->n_loads; j++) {
        const nd_ir_access *a = &k->loads[j];
        if (a->strides[0] != 1) continue;
        int es = nd_cuda_mem_size((nd_dtype)a->dtype); /* valid: checked by codegen */
        uintptr_t p = (uintptr_t)slots[a->slot] + (uintptr_t)(a->offset * es);
        if (p % (uintptr_t)(vec * es)) return 0;
    }
    for (int j = 0; j < k->n_stores; j++) {
        const nd_ir_access *a = &k->stores[j].at;
        int es = nd_cuda_mem_size((nd_dtype)a->dtype); /* valid: checked by codegen */
        uintptr_t p = (uintptr_t)slots[a->slot] + (uintptr_t)(a->offset * es);
        if (p % (uintptr_t)(vec * es)) return 0;
    }
    return 1;
}

/* On sm_90 and later every generated kernel is launched as a programmatic
 * dependent of the kernel before it on the stream: the device may start
 * launching it while that one's last blocks still run, and its blocks wait
 * at their first instruction (ndk_after_prior in the prelude) until that
 * kernel has finished and its writes are visible. In a CUDA Graph of 50
 * back-to-back 1000x1000 float64 stencil sweeps this took each from 5.39 to
 * 4.99 us, and an empty kernel from 0.92 to 0.64 us, on the H100
 * (bench/small_stencil_variants.cu). After a copy, a library call or an
 * event wait it is an ordinary launch. */
static nd_status launch(const nd_cuda *cu, cudaStream_t stream, cudaKernel_t kern, const char *name, unsigned grid,
                        uint64_t *words) {
    void *args[1] = {words};
    cudaLaunchAttribute pdl;
    memset(&pdl, 0, sizeof pdl);
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = (dim3){grid, 1, 1};
    cfg.blockDim = (dim3){ND_CUDA_BLOCK, 1, 1};
    cfg.stream = stream;
    cfg.attrs = &pdl;
    cfg.numAttrs = cu->arch >= 90 ? 1 : 0;
    ND_NVTX_PUSH(name);
    cudaError_t e = cudaLaunchKernelExC(&cfg, (const void *)kern, args);
    ND_NVTX_POP();
    if (e != cudaSuccess) {
        char what[160];
        snprintf(what, sizeof what, "launching kernel %s (%u blocks)", name, grid);
        return nd_cuda_fail(e, what);
    }
    return ND_OK;
}

size_t nd_cuda_kernel_scratch_bytes(const nd_cuda *cu, const nd_cuda_kentry *ke) {
    const nd_cuda_kinfo *info = &ke->info;
    if (info->persist) {
        unsigned g = nd_cuda_persist_grid(info, cu->sm_count);
        return g > 1 ? (size_t)g * ND_CUDA_ACC_BYTES : 0;
    }
    if (info->strategy == ND_CUDA_ELEMWISE || info->groups == 0 || info->splits <= 1) return 0;
    return (size_t)info->groups * ND_CUDA_ACC_BYTES;
}

nd_status nd_cuda_issue_kernel(nd_cuda *cu, const nd_cuda_kentry *ke, const nd_kernel *k, void *const *slots,
                               const nd_scalar_bits *params, cudaStream_t stream, void *partials, void *fail) {
    uint64_t words[ND_CUDA_MAX_WORDS];
    nd_cuda_kinfo own; /* a shape-generic kernel's geometry at k's extent */
    const nd_cuda_kinfo *info = nd_cuda_launch_info(&ke->info, k, &own, words);
    for (int i = 0; i < k->n_slots; i++) words[i] = (uint64_t)(uintptr_t)slots[i];
    for (int j = 0; j < k->n_params; j++) {
        if (k->param_dtypes[j] == ND_FLOAT32) {
            /* float32 parameters arrive as float bits: no per-element
             * double-to-float conversion in the kernel */
            float f = (float)params[j].f;
            uint32_t bits;
            memcpy(&bits, &f, sizeof bits);
            words[k->n_slots + j] = bits;
        } else {
            memcpy(&words[k->n_slots + j], &params[j], sizeof(uint64_t));
        }
    }

    nd_cuda_fill_round_keys(info, words);
    if (info->bad_word >= 0) {
        if (!fail) return nd_error_set(ND_ERR_STATE, "cuda: a kernel that gathers was issued without its fail record");
        words[info->bad_word] = (uint64_t)(uintptr_t)fail;
    }
    if (info->strategy == ND_CUDA_ELEMWISE) {
        if (info->n == 0) return ND_OK;
        if (ke->vec && nd_cuda_vec_fills(info->n, info->vec, cu->sm_count) && vec_aligned(k, info->vec, slots))
            return launch(cu, stream, ke->vec, info->name_vec, grid_exact(info->n / info->vec), words);
        /* The march and row-unrolled kernels were tuned with grid_for's grid. */
        int plain = info->march == 0 && info->unroll <= 1;
        return launch(cu, stream, ke->main, info->name, plain ? grid_exact(info->items) : grid_for(cu, info->items),
                      words);
    }

    if (info->groups == 0) return ND_OK;
    int pw = k->n_slots + k->n_params;
    words[pw] = (uint64_t)(uintptr_t)partials;
    if (info->persist) {
        /* the hand-written shape (codegen.c): SMs x ND_CUDA_PERSIST_BLOCKS
         * blocks striding over the points, their partials folded by one
         * block (none with a grid of one, which writes the output) */
        unsigned g = nd_cuda_persist_grid(info, cu->sm_count);
        words[info->splits_word] = g;
        nd_status s = launch(cu, stream, ke->main, info->name, g, words);
        if (!s && g > 1) s = launch(cu, stream, ke->pass2, info->name_pass2, 1, words);
        return s;
    }
    unsigned grid;
    if (info->strategy == ND_CUDA_REDUCE_ROWS) {
        /* One thread group per (output, split): the grid is fixed by the shape. */
        int64_t rpb = ND_CUDA_BLOCK / info->tpr, g = (info->groups + rpb - 1) / rpb;
        if (g > 0x7fffffff)
            return nd_error_set(ND_ERR_UNSUPPORTED, "cuda: reduction kernel %s needs %" PRId64 " blocks (too many)",
                                info->name, g);
        grid = (unsigned)g;
    } else {
        grid = grid_for(cu, info->items);
    }
    nd_status s = launch(cu, stream, ke->main, info->name, grid, words);
    if (!s && info->splits > 1) {
        unsigned g2 = info->pass2_tree ? (unsigned)(info->n_out < 65535 ? info->n_out : 65535)
                                       : grid_for(cu, info->n_out);
        s = launch(cu, stream, ke->pass2, info->name_pass2, g2, words);
    }
    return s;
}

/* After a kernel that gathers, run on its own (the executor's step by step
 * path): waits for it and moves its fail record (kernel_ir.h's nd_ir_fail,
 * in pinned host memory the device writes through unified addressing)
 * into the caller's, one past the slots; without one, a bad index is the
 * kernel's error, with the CPU's message. Plans keep their records in
 * device memory and read them once after the whole plan (plan_runner.c). */
static nd_status gather_check(nd_cuda *cu, const nd_kernel *k, void *const *slots) {
    cudaError_t e = cudaStreamSynchronize(cu->stream);
    if (e != cudaSuccess) return nd_cuda_fail(e, "cudaStreamSynchronize after a kernel that gathers");
    volatile nd_ir_fail *b = cu->gather_bad;
    if (!b->set) return ND_OK;
    nd_ir_fail f = {1, b->gather, b->axis, 0, b->index};
    b->set = 0;
    nd_ir_fail *rec = slots[k->n_slots];
    if (!rec) return (nd_status)nd_ir_fail_error(k, &f);
    if (!rec->set) *rec = f;
    return ND_OK;
}

/* One kernel outside a plan: its reduction scratch is allocated and freed
 * around it, in stream order. */
static nd_status cu_run_kernel_locked(nd_backend *be, const nd_kernel *k, void *const *slots, const nd_scalar_bits *params) {
    nd_cuda *cu = impl(be);
    const nd_cuda_kentry *ke;
    nd_status s = nd_cuda_kcache_get(cu->cache, k, &ke);
    if (s) return s;
    if (k->n_gathers && !cu->gather_bad) {
        cudaError_t e = cudaMallocHost(&cu->gather_bad, sizeof(nd_ir_fail));
        if (e != cudaSuccess) {
            cu->gather_bad = NULL;
            return nd_cuda_fail(e, "cudaMallocHost for the fail record of a gather");
        }
        memset(cu->gather_bad, 0, sizeof(nd_ir_fail));
    }
    size_t pbytes = nd_cuda_kernel_scratch_bytes(cu, ke);
    void *partials = NULL;
    if (pbytes) {
        s = nd_cuda_device_alloc(cu, pbytes, &partials, "reduction partials");
        if (s) return s;
    }
    s = nd_cuda_issue_kernel(cu, ke, k, slots, params, cu->stream, partials, cu->gather_bad);
    nd_cuda_device_free(cu, partials, pbytes);
    if (s == ND_OK && k->n_gathers) s = gather_check(cu, k, slots);
    return s;
}

/* ------------------------------------------------- locked entry points */

static void lock(nd_cuda *cu) {
    if (cu->lock_ok) pthread_mutex_lock(&cu->lock);
    /* The current device is per host thread: a worker thread of the
     * executor must not land on device 0 by default. */
    if (cu->device != 0 || cu->multi_gpu) cudaSetDevice(cu->device);
}
static void unlock(nd_cuda *cu) {
    if (cu->lock_ok) pthread_mutex_unlock(&cu->lock);
}
void nd_cuda_lock(nd_cuda *cu) { lock(cu); }
void nd_cuda_unlock(nd_cuda *cu) { unlock(cu); }

static nd_status cu_alloc(nd_backend *be, int memory, size_t bytes, void **out) {
    /* Device memory counts in nd_cuda_device_alloc, host memory here. */
    if (memory == ND_MEMORY_HOST && nd_fault_hit(ND_FAULT_DEVICE_ALLOC)) {
        *out = NULL;
        return nd_error_set(ND_ERR_OOM, "cuda: out of host memory allocating %zu bytes (injected fault)", bytes);
    }
    lock(impl(be));
    nd_status s = cu_alloc_locked(be, memory, bytes, out);
    unlock(impl(be));
    return s;
}
static void cu_release(nd_backend *be, int memory, void *ptr, size_t bytes) {
    lock(impl(be));
    /* After the program's kernels queued so far, which may still use it. */
    if (memory == 1 && ptr && impl(be)->app) {
        nd_error_saved saved; /* a release reports nothing to its caller */
        nd_error_save(&saved);
        if (nd_cuda_app_join(impl(be)) != ND_OK) nd_logf(1, "cuda: releasing device memory: %s", nd_last_error());
        nd_error_restore(&saved);
    }
    cu_release_locked(be, memory, ptr, bytes);
    unlock(impl(be));
}
/* nd_stats: the pool's memory that no allocation holds, and the cached
 * pinned blocks. */
static void cu_cached(nd_backend *be, nd_backend_cached *out) {
    nd_cuda *cu = impl(be);
    memset(out, 0, sizeof *out);
    lock(cu);
    if (cu->pool) {
        uint64_t reserved = 0, used = 0;
        if (cudaMemPoolGetAttribute(cu->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
            cudaMemPoolGetAttribute(cu->pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
            reserved > used)
            out->block_cache = out->per_memory[1] = (uint64_t)(reserved - used);
        (void)cudaGetLastError();
    }
    out->pinned_cache = out->per_memory[ND_MEMORY_HOST] = cu->pinned_cached;
    unlock(cu);
}

/* nd_trim: frees wait for the work enqueued before them, then the pool and
 * the pinned cache give everything unused back. */
static void cu_trim(nd_backend *be) {
    nd_cuda *cu = impl(be);
    lock(cu);
    nd_cuda_release_step_workspace(cu);
    cudaStreamSynchronize(cu->stream);
    if (cu->pool) cudaMemPoolTrimTo(cu->pool, 0);
    for (int d = 1; d < cu->n_ldev; d++)
        if (cu->ldev[d].owns_pool) cudaMemPoolTrimTo(cu->ldev[d].pool, 0);
    pinned_trim(cu, 0, 0);
    (void)cudaGetLastError();
    unlock(cu);
}

static nd_status cu_copy(nd_backend *be, void *dst, int dst_memory, const void *src, int src_memory, size_t bytes) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "copy");
    lock(impl(be));
    nd_status s = nd_cuda_app_join(impl(be));
    if (s == ND_OK) s = cu_copy_locked(be, dst, dst_memory, src, src_memory, bytes);
    unlock(impl(be));
    return s;
}
/* Under mpirun, the bytes a rank sends or has received, through a host
 * buffer (backend.h's stage). A rank's plan runs step by step, every step
 * on `stream` (executor.c; only run_plan forks other streams, and joins
 * them back to it), so one copy there, waited for, comes after the kernel
 * that wrote the bytes and before the kernel that reads them; the program's
 * stream is joined first, as for any copy. */
static nd_status cu_stage(nd_backend *be, void *host, void *mem, int memory, size_t bytes, int to_host) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "stage");
    nd_cuda *cu = impl(be);
    lock(cu);
    nd_status s = nd_cuda_app_join(cu);
    if (s == ND_OK)
        s = to_host ? nd_cuda_issue_copy(cu, host, ND_MEMORY_HOST, mem, memory, bytes, cu->stream)
                    : nd_cuda_issue_copy(cu, mem, memory, host, ND_MEMORY_HOST, bytes, cu->stream);
    if (s == ND_OK) {
        cudaError_t e = cudaStreamSynchronize(cu->stream);
        if (e != cudaSuccess) s = nd_cuda_fail(e, "cudaStreamSynchronize after staging bytes between MPI ranks");
    }
    unlock(cu);
    return s;
}
static nd_status cu_run_kernel(nd_backend *be, const nd_kernel *k, void *const *slots, const nd_scalar_bits *params) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "run_kernel");
    lock(impl(be));
    nd_status s = nd_cuda_app_join(impl(be));
    if (s == ND_OK) s = cu_run_kernel_locked(be, k, slots, params);
    unlock(impl(be));
    return s;
}
static nd_status cu_run_matmul(nd_backend *be, const nd_matmul_desc *mm, void *const *slots) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "run_matmul");
    lock(impl(be));
    nd_status s = nd_cuda_app_join(impl(be));
    if (s == ND_OK) s = nd_cuda_run_matmul(be, mm, slots, 0, impl(be)->stream);
    unlock(impl(be));
    return s;
}
static nd_status cu_run_user(nd_backend *be, const nd_user_desc *u, void *const *slots) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "run_user");
    nd_cuda *cu = impl(be);
    lock(cu);
    const void *fn = NULL;
    nd_status s = u->lib != ND_LIB_NONE ? nd_cuda_run_lib_step(cu, u, slots) /* lib_calls.c */
                                        : nd_cuda_user_resolve(cu, u->kernel, &fn);
    if (s == ND_OK && u->lib == ND_LIB_NONE) s = nd_cuda_issue_user(fn, u, slots, cu->stream);
    unlock(cu);
    return s;
}
static nd_status cu_run_plan(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "run_plan");
    lock(impl(be));
    nd_status s = nd_cuda_app_join(impl(be)); /* outside any capture */
    if (s == ND_OK) s = nd_cuda_run_plan_locked(be, plan, bound);
    unlock(impl(be));
    return s;
}
static nd_status cu_plan_fails(nd_backend *be, nd_plan *plan, nd_ir_fail *out) {
    lock(impl(be));
    nd_status s = nd_cuda_plan_fails_locked(be, plan, out);
    unlock(impl(be));
    return s;
}
static void cu_range_push(nd_backend *be, const char *name) {
    (void)be;
    ND_NVTX_PUSH(name);
}
static void cu_range_pop(nd_backend *be) {
    (void)be;
    ND_NVTX_POP();
}

static nd_status cu_prepare_ufunc(nd_backend *be, const char *fn, const nd_ufunc_loop *l) {
    return nd_cuda_check_ufunc(impl(be)->arch, fn, l);
}

static nd_status cu_synchronize(nd_backend *be) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cuda", "synchronize");
    nd_cuda *cu = impl(be);
    if (cu->device != 0 || cu->multi_gpu) cudaSetDevice(cu->device);
    /* Every plan's streams, on every logical device, join back to it. */
    cudaError_t e = cudaStreamSynchronize(cu->stream);
    if (e != cudaSuccess) return nd_cuda_fail(e, "cudaStreamSynchronize (a kernel, copy or matmul failed earlier)");
    return ND_OK;
}

/* ND_PROFILE's reference: the device-to-device copy bandwidth, (read +
 * write) bytes per second of a 256 MiB cudaMemcpyAsync, the median of five
 * (as bench/gpu_suite.c measures its floors); 0 if it cannot be measured. */
static double device_copy_bandwidth(nd_cuda *cu, char *how, size_t cap) {
    const size_t bytes = (size_t)256 << 20;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double bw = 0;
    float ms[5];
    int ok = cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess &&
             cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess &&
             cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, cu->stream) == cudaSuccess;
    for (int r = 0; r < 5 && ok; r++)
        ok = cudaEventRecord(e0, cu->stream) == cudaSuccess &&
             cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, cu->stream) == cudaSuccess &&
             cudaEventRecord(e1, cu->stream) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
             cudaEventElapsedTime(&ms[r], e0, e1) == cudaSuccess;
    if (ok) {
        for (int i = 1; i < 5; i++)
            for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
                float t = ms[j];
                ms[j] = ms[j - 1];
                ms[j - 1] = t;
            }
        bw = ms[2] > 0 ? 2.0 * (double)bytes / (ms[2] * 1e-3) : 0;
        snprintf(how, cap, "device-to-device cudaMemcpy of 256 MiB");
    }
    (void)cudaGetLastError();
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (a) cudaFree(a);
    if (b) cudaFree(b);
    return bw;
}

static void ldevs_destroy(nd_cuda *cu);

static void cu_destroy(nd_backend *be) {
    if (!be) return;
    nd_cuda *cu = impl(be);
    if (cu) {
        cudaSetDevice(cu->device);
        if (cu->stream) cudaStreamSynchronize(cu->stream);
#ifdef ND_CUDA_NCCL
        nd_cuda_link_destroy(be);
#endif
        nd_cuda_app_destroy(cu);
        nd_cuda_plan_states_release_all(cu);
        nd_cuda_release_step_workspace(cu);
        pinned_destroy(cu);
        if (cu->gather_bad) cudaFreeHost(cu->gather_bad);
        if (cu->profile) {
            char how[96] = "";
            double bw = device_copy_bandwidth(cu, how, sizeof how);
            nd_profile_set_copy_bandwidth(cu->profile, bw, how);
            nd_profile_print(cu->profile, stderr, "cuda");
            nd_profile_free(cu->profile);
        }
        if (cu->trace) {
            fprintf(cu->trace, "{}]}\n");
            fclose(cu->trace);
        }
        if (cu->trace_base) cudaEventDestroy(cu->trace_base);
        if (cu->blas) cublasDestroy(cu->blas);
        if (cu->blas_workspace) {
            cudaFree(cu->blas_workspace);
            nd_mem_count_release(1, ND_CUDA_BLAS_WORKSPACE);
        }
        nd_cuda_kcache_destroy(cu->cache);
        if (cu->pool) {
            cudaMemPoolTrimTo(cu->pool, 0);
            if (cu->in_use) nd_logf(1, "cuda: %zu device bytes still allocated at shutdown", cu->in_use);
            cudaMemPoolDestroy(cu->pool);
        }
        ldevs_destroy(cu);
        nd_cuda_chol_release(cu);
        if (cu->stream) cudaStreamDestroy(cu->stream);
        for (int i = 0; i < ND_PLAN_STREAMS; i++)
            if (cu->aux[i]) cudaStreamDestroy(cu->aux[i]);
        (void)cudaGetLastError();
        if (cu->lock_ok) pthread_mutex_destroy(&cu->lock);
        free(cu);
    }
    free(be);
}

/* ------------------------------------------------------------------ create */

/* ------------------------------------------------------- several devices
 *
 * ND_DEVICES lists GPU ordinals, one logical device per entry
 * (common/device_list.h). Logical device 0 is the backend's device: whole
 * arrays, library calls and everything outside a partitioned plan's
 * device kernels run there. The partition pass (scheduler/partition.c)
 * gives the others row blocks of split arrays: their pieces are allocated
 * in memory 1 + d (backend.h, device_memories) from the pool of their GPU,
 * their kernels run on their own streams (plan_runner.c), and copies
 * between GPUs are peer copies. Logical devices on one GPU ("0,0") share
 * its pool and context and differ only in their streams, so the path runs
 * on one card.
 *
 * A device kernel also reads arrays that stay whole (a broadcast row, a
 * small array) where they are, on logical device 0's GPU: every GPU of the
 * list must reach the others' memory. Peer access is enabled between each
 * pair (and the pools opened to each other); a GPU that cannot reach
 * device 0's memory is replaced by device 0's GPU (logged at ND_LOG=1), so
 * the result stays right. Copies between GPUs without peer access would go
 * through host memory (the driver stages them). Kernels are
 * loaded with cudaLibraryLoadData, which loads into every context, so the
 * kernel cache serves every GPU; the GPUs must share one architecture. */

/* The GPU of the program's stream, or -1 where the driver cannot tell
 * (check_stream in app_stream.c then says what is wrong with it). The
 * legacy stream is the current device's. */
static int stream_device(void *stream) {
    int dev = -1;
    cudaError_t e = cudaErrorNotSupported;
    if ((cudaStream_t)stream == cudaStreamLegacy) e = cudaGetDevice(&dev);
#if CUDART_VERSION >= 12080
    else if ((cudaStream_t)stream != cudaStreamPerThread) e = cudaStreamGetDevice((cudaStream_t)stream, &dev);
#endif
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return dev;
}

static nd_status parse_devices(const nd_backend_config *cfg, int count, nd_device_list *l) {
    const char *devices = cfg ? cfg->devices : NULL;
    if (!devices || !*devices) {
        /* The program's stream names the GPU it chose; else, under mpirun,
         * one rank per GPU by its place on the machine (backend.h's
         * local_rank): more ranks than GPUs share them. */
        int local_rank = cfg ? cfg->local_rank : 0;
        int from_stream = cfg && cfg->app_stream ? stream_device(cfg->app_stream) : -1;
        memset(l, 0, sizeof *l);
        l->n = 1;
        l->ordinals[0] = from_stream >= 0 && from_stream < count ? from_stream
                         : local_rank > 0                        ? local_rank % count
                                                                 : 0;
        if (from_stream >= 0) nd_logf(2, "cuda: nd runs on GPU %d, the program's stream's", from_stream);
        return ND_OK;
    }
    if (nd_device_list_parse(devices, l) || l->cpu)
        return nd_error_set(ND_ERR_ARG, "nd_init: ND_DEVICES='%s' is not a comma list of at most %d GPU ordinals",
                            devices, ND_DEVICE_LIST_MAX);
    for (int d = 0; d < l->n; d++)
        if (l->ordinals[d] >= count)
            return nd_error_set(ND_ERR_ARG, "nd_init: ND_DEVICES='%s': entry %d is GPU %d, but the GPU "
                                "ordinals are 0..%d", devices, d, l->ordinals[d], count - 1);
    return ND_OK;
}

static int arch_of(int ordinal) {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return major * 10 + minor;
}

/* Whether GPU a reaches GPU b's memory (kernels and copies), enabling it;
 * a == b always does. */
static int peer_reach(int a, int b) {
    if (a == b) return 1;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaSetDevice(a);
    cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) e = cudaSuccess;
    (void)cudaGetLastError();
    return e == cudaSuccess;
}

/* Opens pool (on some GPU) to kernels and copies running on GPU `from`. */
static void pool_open_to(cudaMemPool_t pool, int from) {
    if (!pool) return;
    struct cudaMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = from;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    if (cudaMemPoolSetAccess(pool, &desc, 1) != cudaSuccess) {
        (void)cudaGetLastError();
        nd_logf(1, "cuda: opening GPU memory to GPU %d failed; its kernels may fault on other GPUs' arrays", from);
    }
}

static nd_status new_pool(int ordinal, cudaMemPool_t *out) {
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ordinal;
    ND_CUDA_TRY(cudaMemPoolCreate(out, &props), "cudaMemPoolCreate");
    /* Keep freed memory cached in the pool: allocation in a loop then
     * costs nothing. Trimmed on out-of-memory. */
    uint64_t threshold = UINT64_MAX;
    ND_CUDA_TRY(cudaMemPoolSetAttribute(*out, cudaMemPoolAttrReleaseThreshold, &threshold),
                "cudaMemPoolSetAttribute(release threshold)");
    return ND_OK;
}

/* The logical devices after logical device 0 (set up by create): their
 * GPUs, pools and peer access. */
static nd_status ldevs_open(nd_cuda *cu, const nd_device_list *l) {
    cu->n_ldev = l->n;
    cu->ldev[0].ordinal = cu->device;
    cu->ldev[0].pool = cu->pool;
    for (int d = 1; d < l->n; d++) {
        int ord = l->ordinals[d];
        if (ord != cu->device && arch_of(ord) != cu->arch)
            return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: ND_DEVICES: GPU %d is sm_%d, GPU %d sm_%d: the GPUs "
                                "of one run must share an architecture (kernels are compiled once for all)",
                                ord, arch_of(ord), cu->device, cu->arch);
        if (ord != cu->device && !(peer_reach(ord, cu->device) && peer_reach(cu->device, ord))) {
            nd_logf(1, "cuda: GPU %d cannot reach GPU %d's memory (no peer access): logical device %d runs on GPU %d",
                    ord, cu->device, d, cu->device);
            ord = cu->device;
        }
        cu->ldev[d].ordinal = ord;
        if (ord != cu->device) cu->multi_gpu = 1;
    }
    /* Peer access between every other pair too (halo copies between
     * neighbours); a pair without it copies through host memory. */
    for (int a = 1; a < l->n; a++)
        for (int b = 1; b < a; b++) {
            int oa = cu->ldev[a].ordinal, ob = cu->ldev[b].ordinal;
            if (oa == ob || oa == cu->device || ob == cu->device) continue;
            int ok = peer_reach(oa, ob) && peer_reach(ob, oa);
            nd_logf(2, "cuda: GPUs %d and %d: %s", oa, ob,
                    ok ? "peer access" : "no peer access: copies between them go through host memory");
        }
    /* Pools: one per GPU, the first logical device on it makes it. */
    for (int d = 1; d < l->n && cu->pool; d++) {
        int ord = cu->ldev[d].ordinal;
        for (int e = 0; e < d && !cu->ldev[d].pool; e++)
            if (cu->ldev[e].ordinal == ord) cu->ldev[d].pool = cu->ldev[e].pool;
        if (cu->ldev[d].pool) continue;
        nd_status s = new_pool(ord, &cu->ldev[d].pool);
        if (s != ND_OK) return s;
        cu->ldev[d].owns_pool = 1;
    }
    /* Every pool open to every other GPU of the list (pool memory is not
     * covered by cudaDeviceEnablePeerAccess). */
    if (cu->multi_gpu)
        for (int d = 0; d < l->n; d++) {
            if (d > 0 && !cu->ldev[d].owns_pool) continue;
            for (int e = 0; e < l->n; e++)
                if (cu->ldev[e].ordinal != cu->ldev[d].ordinal) pool_open_to(cu->ldev[d].pool, cu->ldev[e].ordinal);
        }
    cudaSetDevice(cu->device);
    if (l->n > 1) {
        char line[256] = "";
        for (int d = 0; d < l->n; d++)
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d -> GPU %d", d ? ", " : "", d,
                     cu->ldev[d].ordinal);
        nd_logf(2, "cuda: %d logical devices (%s); %s", l->n, line,
                cu->multi_gpu ? "peer access between their GPUs; plans over them are captured as CUDA graphs unless the driver refuses (ND_LOG=2 then says so)"
                              : "one GPU: copies between them are device copies");
    }
    return ND_OK;
}

nd_status nd_cuda_ldev_stream(nd_cuda *cu, int ldev, int s, cudaStream_t *out) {
    if (ldev == 0) {
        if (s != 0 && !cu->aux[s])
            ND_CUDA_TRY(cudaStreamCreateWithFlags(&cu->aux[s], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        *out = s == 0 ? cu->stream : cu->aux[s];
        return ND_OK;
    }
    nd_cuda_ldev *L = &cu->ldev[ldev];
    if (!L->streams[s]) {
        nd_cuda_use_device(cu, L->ordinal);
        cudaError_t e = cudaStreamCreateWithFlags(&L->streams[s], cudaStreamNonBlocking);
        nd_cuda_use_device(cu, cu->device);
        if (e != cudaSuccess) return nd_cuda_fail(e, "cudaStreamCreateWithFlags (a logical device's stream)");
    }
    *out = L->streams[s];
    return ND_OK;
}

static void ldevs_destroy(nd_cuda *cu) {
    for (int d = 1; d < cu->n_ldev; d++) {
        nd_cuda_ldev *L = &cu->ldev[d];
        cudaSetDevice(L->ordinal);
        for (int s = 0; s < ND_PLAN_STREAMS; s++)
            if (L->streams[s]) {
                cudaStreamSynchronize(L->streams[s]);
                cudaStreamDestroy(L->streams[s]);
            }
        if (L->blas) cublasDestroy(L->blas);
        if (L->blas_workspace) {
            cudaFree(L->blas_workspace);
            nd_mem_count_release(1, ND_CUDA_BLAS_WORKSPACE);
        }
        if (L->owns_pool) {
            cudaMemPoolTrimTo(L->pool, 0);
            cudaMemPoolDestroy(L->pool);
        }
        memset(L, 0, sizeof *L);
    }
    cudaSetDevice(cu->device);
    (void)cudaGetLastError();
}

#define CREATE_TRY(call, what)                    \
    do {                                          \
        cudaError_t e_ = (call);                  \
        if (e_ != cudaSuccess) {                  \
            s = nd_cuda_fail(e_, what);           \
            goto fail;                            \
        }                                         \
    } while (0)

static nd_status device_count(int *count) {
    *count = 0;
    if (nd_cuda_load() != ND_OK) return ND_ERR_UNSUPPORTED;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess || *count == 0) {
        (void)cudaGetLastError();
        return nd_error_set(ND_ERR_UNSUPPORTED, "no CUDA device: %s",
                            e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
    }
    return ND_OK;
}

nd_status nd_cuda_backend_supports(const nd_backend_config *cfg) {
    (void)cfg;
    int count;
    return device_count(&count);
}

nd_status nd_cuda_backend_create(const nd_backend_config *cfg, nd_backend **out) {
    *out = NULL;
    int count = 0;
    if (device_count(&count) != ND_OK) return ND_ERR_UNSUPPORTED;
    nd_backend *be = nd_calloc(1, sizeof *be);
    nd_cuda *cu = nd_calloc(1, sizeof *cu);
    if (!be || !cu) {
        free(be);
        free(cu);
        return nd_error_set(ND_ERR_OOM, "nd_init: out of host memory creating the CUDA backend");
    }
    be->impl = cu;
    cu->lock_ok = pthread_mutex_init(&cu->lock, NULL) == 0;
    nd_device_list devs;
    nd_status s = parse_devices(cfg, count, &devs);
    if (s) goto fail;
    cu->device = devs.ordinals[0];
    cu->n_ldev = 1;
    CREATE_TRY(cudaSetDevice(cu->device), "cudaSetDevice");
    int major = 0, minor = 0, pools = 0;
    CREATE_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, cu->device), "cudaDeviceGetAttribute");
    CREATE_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, cu->device), "cudaDeviceGetAttribute");
    CREATE_TRY(cudaDeviceGetAttribute(&cu->sm_count, cudaDevAttrMultiProcessorCount, cu->device),
               "cudaDeviceGetAttribute");
    CREATE_TRY(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, cu->device), "cudaDeviceGetAttribute");
    cu->arch = major * 10 + minor;
    if (cu->sm_count < 1) cu->sm_count = 1;
    CREATE_TRY(cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if (pools) {
        s = new_pool(cu->device, &cu->pool);
        if (s) goto fail;
    } else {
        nd_logf(1, "cuda: device %d has no stream-ordered memory pools; using cudaMalloc", cu->device);
    }
    s = ldevs_open(cu, &devs);
    if (s) goto fail;
    {
        int64_t v = 0;
        int set = 0;
        if (nd_env_int64(ND_ENV_CUDA_SHARE_STREAMS, &v, &set)) {
            s = ND_ERR_ARG;
            goto fail;
        }
        cu->share_streams = set && v == 1;
        if (nd_env_int64(ND_ENV_CUDA_CHOL_SIDE_ZEROS, &v, &set)) {
            s = ND_ERR_ARG;
            goto fail;
        }
        cu->chol_side_zeros = set && v == 1;
    }
    cu->tf32 = cfg && cfg->matmul_tf32 > 0;
    cu->mem_limit = cfg ? cfg->device_memory_limit : 0;
    s = pinned_cache_bound(&cu->pinned_cache_max);
    if (s) goto fail;
    s = nd_cuda_kcache_create(cfg ? cfg->cache_dir : NULL, cu->arch, cu->sm_count, &cu->cache);
    if (s) goto fail;

    be->name = "cuda";
    be->kernel_gathers = 1;
    be->cholesky_transposed = 1; /* lib_cholesky.c says why */
    be->memory = 1;
    be->device_memories = cu->n_ldev > 1 ? cu->n_ldev : 0;
    be->alloc = cu_alloc;
    be->release = cu_release;
    be->copy = cu_copy;
    be->stage = cu_stage;
    be->run_kernel = cu_run_kernel;
    be->run_matmul = cu_run_matmul;
    be->run_user = cu_run_user;
    be->run_plan = cu_run_plan;
    be->plan_fails = cu_plan_fails;
    be->range_push = cu_range_push;
    be->range_pop = cu_range_pop;
    nd_cuda_app_install(be);
    cu->graphs = !cfg || cfg->cuda_graphs != 0;
    if (cfg && cfg->profile) {
        cu->profile = nd_profile_new();
        if (!cu->profile) {
            s = nd_error_set(ND_ERR_OOM, "nd_init: out of host memory for ND_PROFILE");
            goto fail;
        }
    }
    if (cfg && cfg->trace) {
        cu->trace = fopen(cfg->trace, "w");
        if (!cu->trace) {
            s = nd_error_set(ND_ERR_IO, "nd_init: cannot open ND_TRACE file '%s' for writing", cfg->trace);
            goto fail;
        }
        fprintf(cu->trace, "{\"traceEvents\":[\n");
        CREATE_TRY(cudaEventCreate(&cu->trace_base), "cudaEventCreate");
        CREATE_TRY(cudaEventRecord(cu->trace_base, cu->stream), "cudaEventRecord");
    }
    be->synchronize = cu_synchronize;
    be->prepare_ufunc = cu_prepare_ufunc;
    be->destroy = cu_destroy;
    be->cached = cu_cached;
    be->trim = cu_trim;
    char name[256] = "?";
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, cu->device) == cudaSuccess) {
        snprintf(name, sizeof name, "%s", prop.name);
        /* Under mpirun the ranks compare it: one GPU per rank lets NCCL
         * carry their bytes (never 0, which means no GPU). */
        uint64_t h = nd_hash_bytes(ND_HASH_SEED, prop.uuid.bytes, sizeof prop.uuid.bytes);
        be->gpu_identity = h ? h : 1;
    } else {
        be->gpu_identity = (uint64_t)cu->device + 1; /* the ordinal at least */
    }
#ifdef ND_CUDA_NCCL
    nd_cuda_link_install(be);
#endif
    nd_logf(2, "cuda backend on device %d (%s, sm_%d, %d SMs)%s", cu->device, name, cu->arch, cu->sm_count,
            cfg && cfg->local_rank > 0 && !(cfg->devices && *cfg->devices)
                ? " (picked by this MPI rank's local rank, modulo the GPUs visible)" : "");
    *out = be;
    return ND_OK;
fail:
    cu_destroy(be);
    return s;
}
