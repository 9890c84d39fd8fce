/* Fault injection, for tests: fail the N-th host allocation made by nd's
 * own code, the N-th backend memory allocation, the N-th kernel compile or
 * the N-th backend call, once or from N on, and count how many such points
 * a program passes (so a sweep can fail each in turn: tests/test_faults.c,
 * scripts/fault_sweep.sh). Off, a point costs one relaxed load and a branch
 * predicted not taken.
 *
 * Tests link the static library and call the hidden functions below; a
 * program can be swept from outside with ND_FAULT (read once by nd_init):
 *   ND_FAULT=count             count the points; nd_shutdown prints them
 *   ND_FAULT=host_alloc:N      fail the N-th host allocation (1-based)
 *   ND_FAULT=device_alloc:N+   fail every backend allocation from the N-th on
 *   ND_FAULT=compile:N, backend_call:N (same forms)
 * Counting starts at nd_init for ND_FAULT, at nd_fault_arm for tests.
 * ND_FAULT_TRACE=1 (read when armed) prints each failed point's call stack
 * to stderr: which allocation a sweep's wrong run lost. */
#ifndef ND_COMMON_FAULT_H
#define ND_COMMON_FAULT_H

#include <stdint.h>

#include "nd.h"

typedef enum {
    ND_FAULT_HOST_ALLOC,   /* nd_malloc/nd_calloc/nd_realloc/nd_strdup (common/alloc.h) */
    ND_FAULT_DEVICE_ALLOC, /* a backend's alloc: buffers, temporaries, pinned/device memory */
    ND_FAULT_COMPILE,      /* a kernel compile: the CPU JIT's C compiler, NVRTC */
    ND_FAULT_BACKEND_CALL, /* copy, run_kernel, run_matmul, run_plan, synchronize */
    ND_FAULT_NUM_KINDS
} nd_fault_kind;

/* Nonzero while counting or armed (read with a relaxed load). */
extern int nd_fault_active;

int nd_fault_hit_slow(nd_fault_kind kind);

/* 1 if this point must fail (and counts it while counting). */
static inline int nd_fault_hit(nd_fault_kind kind) {
    if (__builtin_expect(__atomic_load_n(&nd_fault_active, __ATOMIC_RELAXED) != 0, 0))
        return nd_fault_hit_slow(kind);
    return 0;
}

/* The error of an injected failed backend call: ND_ERR_BACKEND, "<backend>
 * backend: <call> failed (injected fault)". */
nd_status nd_fault_backend_error(const char *backend, const char *call);

/* Resets the counters and starts counting every kind. n >= 1: the n-th
 * point of `kind` from now fails (persistent: every one from the n-th on);
 * n == 0: count only. */
void nd_fault_arm(nd_fault_kind kind, int64_t n, int persistent);
/* Stops counting and failing; the counters keep their values. */
void nd_fault_disarm(void);
/* Points of `kind` passed since nd_fault_arm, and how many were failed. */
int64_t nd_fault_count(nd_fault_kind kind);
int64_t nd_fault_failed(void);
const char *nd_fault_kind_name(nd_fault_kind kind); /* "host_alloc", ... */

/* nd_init: ND_FAULT as above; ND_ERR_ARG for a malformed value. */
nd_status nd_fault_from_env(void);
/* nd_shutdown: with ND_FAULT set, prints the counts to stderr and disarms. */
void nd_fault_report_at_shutdown(void);

#endif
