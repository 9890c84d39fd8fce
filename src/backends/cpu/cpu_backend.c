/* The CPU backend: host memory, memcpy, the kernel-IR interpreter and BLAS
 * matmul. Everything runs synchronously on the calling thread plus the
 * worker pool, so synchronize has nothing to wait for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "backends/cpu/cpu_jit.h"
#include "backends/cpu/fft_plan.h"
#include "common/error.h"
#include "common/user_kernel.h"
#include "backends/user_args.h"
#include "common/mem_count.h"

static nd_cpu_state *state(nd_backend *be) { return (nd_cpu_state *)be->impl; }

static nd_status cpu_alloc(nd_backend *be, int memory, size_t bytes, void **out) {
    *out = NULL;
    if (memory != ND_MEMORY_HOST)
        return nd_error_set(ND_ERR_ARG, "cpu backend: cannot allocate in memory %d (only host, 0)", memory);
    nd_status st = nd_cpu_host_alloc(state(be)->blocks, bytes, out);
    if (st == ND_OK) nd_mem_count_alloc(ND_MEMORY_HOST, bytes);
    return st;
}

/* ND_DEVICES=cpu:N: every logical device's pieces are host memory. */
static nd_status cpu_alloc_piece(nd_backend *be, int memory, int device, size_t bytes, void **out) {
    (void)device;
    return cpu_alloc(be, memory, bytes, out);
}

static void cpu_release(nd_backend *be, int memory, void *ptr, size_t bytes);
static void cpu_release_piece(nd_backend *be, int memory, int device, void *ptr, size_t bytes) {
    (void)device;
    cpu_release(be, memory, ptr, bytes);
}

static void cpu_release(nd_backend *be, int memory, void *ptr, size_t bytes) {
    (void)memory;
    if (!ptr) return;
    nd_mem_count_release(ND_MEMORY_HOST, bytes);
    nd_cpu_host_release(state(be)->blocks, ptr, bytes);
}

static void cpu_cached(nd_backend *be, nd_backend_cached *out) {
    memset(out, 0, sizeof *out);
    out->block_cache = out->per_memory[ND_MEMORY_HOST] = nd_cpu_block_cache_bytes(state(be)->blocks);
}

static void cpu_trim(nd_backend *be) { nd_cpu_block_cache_trim(state(be)->blocks); }

/* An OpenBLAS older than the CPU takes it for a pre-AVX2 one and runs SSE
 * kernels several times slower than NumPy's newer OpenBLAS: said once, at
 * the first matmul (a program that never multiplies matrices is not told). */
static void warn_slow_blas_kernels(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    static int warned;
    if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) return;
    const char *core = nd_cpu_blas_corename();
    if (!core) return; /* not OpenBLAS */
    static const char *const avx2_cores[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                             "SapphireRapids", "Excavator"};
    int known = 0;
    for (size_t i = 0; core && i < sizeof avx2_cores / sizeof *avx2_cores; i++)
        known |= strstr(core, avx2_cores[i]) != NULL;
    if (!known && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        nd_logf(1, "cpu backend: OpenBLAS uses its '%s' kernels on this AVX2 CPU (it does not "
                "know the model), so matmul runs several times slower than it could; set "
                "OPENBLAS_CORETYPE=SkylakeX (Intel with AVX-512), Zen (AMD) or Haswell before "
                "the program starts, or use a newer OpenBLAS", core ? core : "?");
#endif
}

static nd_status cpu_copy(nd_backend *be, void *dst, int dst_memory, const void *src, int src_memory,
                          size_t bytes) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "copy");
    (void)be;
    if (dst_memory != ND_MEMORY_HOST || src_memory != ND_MEMORY_HOST)
        return nd_error_set(ND_ERR_ARG, "cpu backend: copy between memories %d -> %d (only host, 0)",
                            src_memory, dst_memory);
    if (bytes && dst != src) memmove(dst, src, bytes);
    return ND_OK;
}

/* Host memory is what ranks send: staging is only a copy, made when
 * ND_RANK_STAGING=1 runs the GPU ranks' path on the CPU to test it. */
static nd_status cpu_stage(nd_backend *be, void *host, void *mem, int memory, size_t bytes, int to_host) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "stage");
    (void)be;
    if (memory != ND_MEMORY_HOST)
        return nd_error_set(ND_ERR_ARG, "cpu backend: staging memory %d (only host, 0)", memory);
    if (bytes && host != mem) memcpy(to_host ? host : mem, to_host ? mem : host, bytes);
    return ND_OK;
}

static nd_status cpu_run_kernel(nd_backend *be, const nd_kernel *k, void *const *slots,
                                const nd_scalar_bits *params) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "run_kernel");
    nd_cpu_state *st = state(be);
    uv_mutex_lock((uv_mutex_t *)st->lock);
    nd_status s = nd_cpu_run_kernel(st, k, slots, params);
    uv_mutex_unlock((uv_mutex_t *)st->lock);
    return s;
}

static nd_status cpu_run_matmul(nd_backend *be, const nd_matmul_desc *mm, void *const *slots) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "run_matmul");
    warn_slow_blas_kernels();
    return nd_cpu_run_matmul(state(be), mm, slots);
}

/* On the executor's thread, in plan order (run_plan is NULL): the
 * function sees every earlier step's writes and none of a later one's. */
static nd_status cpu_run_user(nd_backend *be, const nd_user_desc *u, void *const *slots) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "run_user");
    nd_kernel_arg args[ND_USER_KERNEL_MAX_ARGS];
    nd_user_args_bind(u, slots, args);
    if (u->lib == ND_LIB_NONE) return nd_user_kernel_run_cpu(u->kernel, args);
    /* nd's routines use the pool, like kernels: one at a time. */
    nd_cpu_state *st = state(be);
    uv_mutex_lock((uv_mutex_t *)st->lock);
    nd_status s = nd_cpu_run_lib(st, u, args);
    uv_mutex_unlock((uv_mutex_t *)st->lock);
    return s;
}

static nd_status cpu_synchronize(nd_backend *be) {
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) return nd_fault_backend_error("cpu", "synchronize");
    (void)be;
    return ND_OK;
}

static void cpu_destroy(nd_backend *be) {
    if (!be) return;
    nd_cpu_state *st = state(be);
    if (st) {
        nd_cpu_link_destroy(be);
        nd_cpu_jit_destroy(st->jit);
        nd_cpu_pool_destroy(st->pool);
        if (st->lock) {
            uv_mutex_destroy((uv_mutex_t *)st->lock);
            free(st->lock);
        }
        for (int i = 0; st->scratch && i < st->num_threads; i++) free(st->scratch[i]);
        free(st->scratch);
        free(st->scratch_bytes);
        nd_cpu_block_cache_free(st->blocks);
        nd_fft_cache_free(st->fft_plans);
        free(st);
    }
    free(be);
}

static int default_threads(void) {
    unsigned n = uv_available_parallelism();
    if (n < 1) n = 1;
    if (n > 256) n = 256;
    return (int)n;
}

nd_status nd_cpu_backend_create(const nd_backend_config *cfg, nd_backend **out) {
    *out = NULL;
    int nt = cfg && cfg->num_threads > 0 ? cfg->num_threads : default_threads();
    if (nt > 1024) nt = 1024;
    nd_backend *be = nd_calloc(1, sizeof *be);
    nd_cpu_state *st = nd_calloc(1, sizeof *st);
    if (!be || !st) {
        free(be);
        free(st);
        return nd_error_set(ND_ERR_OOM, "nd_init: out of memory creating the cpu backend");
    }
    be->impl = st;
    uv_mutex_t *mu = nd_malloc(sizeof *mu);
    if (!mu || uv_mutex_init(mu) != 0) {
        free(mu);
        cpu_destroy(be);
        return nd_error_set(ND_ERR_BACKEND, "nd_init: could not create the cpu backend lock");
    }
    st->lock = mu;
    nd_status s = nd_cpu_pool_create(nt, &st->pool);
    if (s != ND_OK) {
        cpu_destroy(be);
        return s;
    }
    st->num_threads = nd_cpu_pool_size(st->pool);
    nd_cpu_blas_threads_init(cfg && cfg->num_threads > 0, st->num_threads);
    st->scratch = nd_calloc((size_t)st->num_threads, sizeof *st->scratch);
    st->scratch_bytes = nd_calloc((size_t)st->num_threads, sizeof *st->scratch_bytes);
    st->blocks = nd_cpu_block_cache_new();
    st->fft_plans = nd_fft_cache_new();
    if (!st->scratch || !st->scratch_bytes || !st->blocks || !st->fft_plans) {
        cpu_destroy(be);
        return nd_error_set(ND_ERR_OOM, "nd_init: out of memory creating the cpu backend");
    }
    {
        const char *home = getenv("HOME");
        if (cfg && cfg->cache_dir && *cfg->cache_dir)
            snprintf(st->ufunc_dir, sizeof st->ufunc_dir, "%s/cpu", cfg->cache_dir);
        else
            snprintf(st->ufunc_dir, sizeof st->ufunc_dir, "%s/.cache/nd/cpu", home && *home ? home : ".");
    }
    if ((s = nd_cpu_jit_create(cfg ? cfg->cache_dir : NULL, &st->jit)) != ND_OK) {
        cpu_destroy(be);
        return s;
    }
    be->name = "cpu";
    be->kernel_gathers = 1;
    be->memory = ND_MEMORY_HOST;
    be->alloc = cpu_alloc;
    be->release = cpu_release;
    be->alloc_piece = cpu_alloc_piece;
    be->release_piece = cpu_release_piece;
    be->copy = cpu_copy;
    be->stage = cpu_stage;
    be->run_kernel = cpu_run_kernel;
    be->run_matmul = cpu_run_matmul;
    be->run_user = cpu_run_user;
    be->run_plan = NULL;
    be->plan_fails = NULL;
    be->synchronize = cpu_synchronize;
    be->prepare_ufunc = nd_cpu_prepare_ufunc;
    be->destroy = cpu_destroy;
    be->cached = cpu_cached;
    be->trim = cpu_trim;
    if (cfg && cfg->rank_test_wire) nd_cpu_link_install(be, cfg->rank_test_wire);
    *out = be;
    return ND_OK;
}
