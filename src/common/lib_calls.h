/* nd's own library routines: operations that are not elementwise maps or
 * axis-removing reductions (scans, sorts, gathers and scatters, histograms,
 * ...). Each runs as one call step of a plan, recorded and scheduled like a
 * user kernel (include/nd/kernels.h) but implemented by nd on every
 * backend: the graph holds a call node whose callee is a routine of this
 * table instead of a user kernel, with up to ND_LIB_MAX_ARGS scalar
 * arguments (an axis, a mode, a bin count) that are part of the plan key.
 *
 * One row per routine: its enum name, its name in logs and profiles, its
 * input and output counts. Each backend keeps one implementation table
 * indexed by nd_lib_call with a static_assert on ND_LIB_COUNT beside it
 * (src/backends/cpu/cpu_lib.c, src/backends/cuda/lib_calls.c), so a row
 * without an implementation does not build. docs/internals.md, "Adding a
 * library routine", lists the places. */
#ifndef ND_COMMON_LIB_CALLS_H
#define ND_COMMON_LIB_CALLS_H

#include <stdint.h>

#include "common/dtype.h"

/* X(ENUM, "name", n_in, n_out) */
#define ND_LIB_CALLS(X)                                                                                   \
    X(CUMULATE, "cumulate", 1, 1) /* v[0].i = nd_lib_scan_op, along the last axis */                   \
    /* dense linear algebra (LAPACK / cuSOLVER), float32 and float64, over the matrices of the last  */ \
    /* two axes of packed inputs: common/lib_linalg.h has each one's layout and arguments; v[3].i is */ \
    /* the public function (nd_lib_la_fn) its error messages name                                    */ \
    X(LA_CHOLESKY, "cholesky", 1, 1)                                                                  \
    X(LA_LU, "lu", 1, 2)                                                                              \
    X(LA_SOLVE, "solve", 2, 1)                                                                        \
    X(LA_QR, "qr", 1, 2)   /* v[0].i = Q's columns */                                                  \
    X(LA_SVD, "svd", 1, 3) /* v[0].i = compute_uv, v[1].i = full_matrices */                           \
    X(LA_EIGH, "eigh", 1, 2) /* v[0].i = eigenvectors wanted */

typedef enum {
    ND_LIB_NONE, /* a user kernel, not a routine of this table */
#define ND_LIB_ENUM(e, name, n_in, n_out) ND_LIB_##e,
    ND_LIB_CALLS(ND_LIB_ENUM)
#undef ND_LIB_ENUM
    ND_LIB_COUNT
} nd_lib_call;

#define ND_LIB_MAX_ARGS 4

/* A routine's scalar arguments by position, each an integer (.i, .u) or a
 * float (.f) as the routine's row says. */
typedef struct {
    nd_scalar_bits v[ND_LIB_MAX_ARGS];
} nd_lib_args;

typedef struct {
    const char *name;
    int n_in, n_out;
} nd_lib_call_info;

extern const nd_lib_call_info nd_lib_calls[ND_LIB_COUNT];

/* The scans ND_LIB_CUMULATE computes (NumPy's cumsum, cumprod and their nan
 * versions, which treat NaN as 0 and 1). */
typedef enum { ND_SCAN_SUM, ND_SCAN_PROD, ND_SCAN_NANSUM, ND_SCAN_NANPROD } nd_lib_scan_op;

/* The dense linear algebra routines that can fail (ND_LIB_LA_* but LU):
 * they read the factorisation's status back to the host when they run (common/
 * lib_linalg.h says why), which a CUDA graph cannot capture. */
int nd_lib_reads_back(int lib);

#endif
