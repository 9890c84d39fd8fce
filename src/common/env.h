/* ND_* environment settings: one parser for the runtime's and the
 * backends' variables, so every one takes the same syntax and reports a bad
 * value the same way.
 *
 * The rule for every ND_* variable: unset or empty means the default; any
 * other value must be valid, or nd_init fails with ND_ERR_ARG naming the
 * variable, its value and the accepted values, whichever backend starts and
 * whatever nd_config overrides. No variable is silently ignored, and none
 * leaves an error behind after a successful nd_init. nd_env_check validates
 * the variables read outside resolve_config (by a backend, or after the
 * backend started), so a bad one fails nd_init before anything starts. */
#ifndef ND_COMMON_ENV_H
#define ND_COMMON_ENV_H

#include <stdint.h>

#include "common/scan_plan.h"

/* Reads integer variable `name` in lo..hi (with `suffixes`, a k/m/g suffix
 * multiplies by 2^10/2^20/2^30). Unset or empty: returns 0 with *set = 0.
 * Valid: *out, *set = 1, returns 0. Otherwise ND_ERR_ARG naming the
 * variable, its value and the range, and returns -1. */
int nd_env_int64(const char *name, int64_t lo, int64_t hi, int suffixes, int64_t *out, int *set);

/* Reads variable `name`, which must be one of the n strings in `choices`:
 * *index is its position. Unset or empty: returns 0 with *set = 0.
 * Otherwise ND_ERR_ARG naming the variable, its value and the choices, and
 * returns -1. */
int nd_env_choice(const char *name, const char *const *choices, int n, int *index, int *set);

/* Each variable's syntax, shared by its reader and nd_env_check:
 * nd_env_int64(ND_ENV_CHUNK_BYTES, &v, &set). */
#define ND_ENV_EXECUTOR_THREAD "ND_EXECUTOR_THREAD", 0, 1, 0
/* ND_LOCK_BIAS=0: the API lock is never biased to the first thread that
 * takes it (common/api_guard.h; read there with getenv, before nd_init may
 * have run: only "0" turns it off, and this entry makes nd_init refuse
 * anything but 0 or 1). */
#define ND_ENV_LOCK_BIAS "ND_LOCK_BIAS", 0, 1, 0
#define ND_ENV_CHUNK_BYTES "ND_CHUNK_BYTES", 1, (int64_t)1 << 40, 1
#define ND_ENV_SPLIT_MIN_BYTES "ND_SPLIT_MIN_BYTES", 0, (int64_t)1 << 50, 1
/* ND_EDGE_MIN_BYTES: a device kernel that reads ghost rows is split into
 * edge strips and interior when the interior moves at least this many
 * bytes (scheduler/partition_edges.c); default 4 x ND_SPLIT_MIN_BYTES. */
#define ND_ENV_EDGE_MIN_BYTES "ND_EDGE_MIN_BYTES", 0, (int64_t)1 << 50, 1
#define ND_ENV_CPU_JIT_MIN "ND_CPU_JIT_MIN", 0, INT64_MAX, 0
#define ND_ENV_PINNED_CACHE "ND_PINNED_CACHE", 0, INT64_MAX, 1
/* ND_CUDA_GENERIC=0: CUDA kernels keep literal extents (the code generator
 * reads it, backends/cuda/codegen.c, nd_cuda_shape_class). */
#define ND_ENV_CUDA_GENERIC "ND_CUDA_GENERIC", 0, 1, 0
/* ND_CUDA_PERSIST=0: full reductions of generated values keep the split
 * geometry of other row reductions instead of the device's grid
 * (backends/cuda/codegen.c, nd_cuda_kinfo.persist), to compare the two. */
#define ND_ENV_CUDA_PERSIST "ND_CUDA_PERSIST", 0, 1, 0
/* ND_CUDA_SHARE_STREAMS=1: logical devices on the first device's GPU
 * (ND_DEVICES=0,0) run on its streams instead of streams of their own
 * (backends/cuda/plan_runner.c), to compare the two. */
#define ND_ENV_CUDA_SHARE_STREAMS "ND_CUDA_SHARE_STREAMS", 0, 1, 0
/* ND_CUDA_CHOL_SIDE_ZEROS=1: Cholesky's zeros below the diagonal are written
 * on a low-priority stream beside potrf instead of by the pass before it
 * (src/backends/cuda/lib_cholesky.c). */
#define ND_ENV_CUDA_CHOL_SIDE_ZEROS "ND_CUDA_CHOL_SIDE_ZEROS", 0, 1, 0
/* ND_SCAN_VARIANT: a kernel name of common/scan_plan.h's ND_SCAN_VARIANTS
 * (the CUDA plugin reads it, backends/cuda/prims/scan.cu, default_scan). */
extern const char *const nd_env_scan_variants[NDP_SCAN_N_VARIANTS];
#define ND_ENV_SCAN_VARIANT "ND_SCAN_VARIANT", nd_env_scan_variants, NDP_SCAN_N_VARIANTS
/* ND_FUSED_GATHER=0: every gather runs the ND_LIB_GATHER routine, as before
 * gathers fused (frontend/gather.c), to compare the two. */
#define ND_ENV_FUSED_GATHER "ND_FUSED_GATHER", 0, 1, 0
/* ND_CHECK_PLANS=1: every plan the plan cache serves is compared with
 * one built afresh (scheduler/plan_check.h); a difference fails the flush. */
#define ND_ENV_CHECK_PLANS "ND_CHECK_PLANS", 0, 1, 0
/* ND_CHECK_SPMD=1: under mpirun the ranks compare each plan before running
 * it (scheduler/executor_ranks.h). */
#define ND_ENV_CHECK_SPMD "ND_CHECK_SPMD", 0, 1, 0
/* ND_RANK_STAGING=1: under mpirun, CPU ranks send through host buffers as
 * GPU ranks do (scheduler/executor_ranks.h), to test that path. */
#define ND_ENV_RANK_STAGING "ND_RANK_STAGING", 0, 1, 0
/* ND_RANK_LINK=1: under mpirun, CPU ranks carry their bytes over the CPU
 * backend's test link (backends/cpu/cpu_link.c), as GPU ranks over NCCL,
 * to test that path. */
#define ND_ENV_RANK_LINK "ND_RANK_LINK", 0, 1, 0
/* ND_RANK_COPY_ENGINES=0: under mpirun, GPU ranks of one machine send
 * and receive over NCCL's kernels, not on the copy engines through CUDA
 * IPC (backends/cuda/rank_copy.h), to compare the two. */
#define ND_ENV_RANK_COPY_ENGINES "ND_RANK_COPY_ENGINES", 0, 1, 0
/* ND_RANK_TRANSPORT: under mpirun, how GPU ranks carry bytes between
 * them: auto, nccl or staging (dist/rank_transport.h's order). */
extern const char *const nd_env_rank_transports[3];
#define ND_ENV_RANK_TRANSPORT "ND_RANK_TRANSPORT", nd_env_rank_transports, 3
/* ND_CPU_JIT: index 0 interprets, 1 compiles in the background, 2 first. */
extern const char *const nd_env_cpu_jit_modes[3];
#define ND_ENV_CPU_JIT "ND_CPU_JIT", nd_env_cpu_jit_modes, 3

/* Validates the variables above: 0, or -1 with the error set. */
int nd_env_check(void);

#endif
