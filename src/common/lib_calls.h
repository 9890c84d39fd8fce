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
    X(CUMULATE, "cumulate", 1, 1) /* v[0].i = nd_lib_scan_op, along the last axis */                    \
    /* Indexing with integer arrays and masks (nd/indexing.h, common/lib_calls.h's nd_lib_index): */      \
    X(GATHER, "gather", 2, 1)   /* in: src (n + K axes), idx (n + 1 axes); out: n axes */                 \
    X(SCATTER, "scatter", 2, 1) /* in: idx (n + 1 axes), values (n axes); out in place: dst (n + K) */   \
    X(SELECT, "select", 2, 2)   /* in: data, mask (1-d); out: selected (1-d), count (0-d int64) */        \
    X(SELECT_INDEX, "select_index", 1, 2) /* in: mask (1-d); out: flat positions (int64), count */ \
    /* sorting and searching (common/sort_keys.h orders the values): */                                   \
    X(SORT, "sort", 1, 1)                 /* v[0].i = nd_lib_sort_mode, along the last axis */              \
    X(TAKE_ROWS, "take_rows", 2, 1)       /* out[r, j] = in0[r, in1[r, j]], int64 in1, last axis */         \
    X(SEARCHSORTED, "searchsorted", 2, 1) /* v[0].i = 1 for side right; in0 sorted 1-d, int64 out */        \
    X(QUANTILE, "quantile", 2, 1)         /* v[0].i = nd_lib_quantile_mode; in0 sorted rows, in1 q */ \
    /* histograms (statistics.h): bincount, histogram, histogram2d */                                      \
    X(HISTOGRAM, "histogram", 3, 1) /* common/hist_bins.h: v[0].i mode, v[1].i bins, v[2].f lo, v[3].f hi */ \
    X(BIN_INDEX, "bin_index", 1, 1) /* float64 -> int64 uniform bin: v[0].i bins, v[1].f lo, v[2].f hi,      \
                                       v[3].i the value of a dropped element */ \
    /* dense linear algebra (LAPACK / cuSOLVER), real and complex, over the matrices of the last  */ \
    /* two axes of packed inputs: common/lib_linalg.h has each one's layout and arguments; v[3].i is */ \
    /* the public function (nd_lib_la_fn) its error messages name                                    */ \
    X(LA_CHOLESKY, "cholesky", 1, 1)                                                                  \
    X(LA_LU, "lu", 1, 2)                                                                              \
    X(LA_SOLVE, "solve", 2, 1)                                                                        \
    X(LA_QR, "qr", 1, 2)   /* v[0].i = Q's columns */                                                  \
    X(LA_SVD, "svd", 1, 3) /* v[0].i = compute_uv, v[1].i = full_matrices */                           \
    X(LA_EIGH, "eigh", 1, 2) /* v[0].i = eigenvectors wanted */                                       \
    X(LA_EIG, "eig", 1, 2)   /* v[0].i = eigenvectors wanted */                                       \
    /* numpy.fft (common/lib_fft.h): v[0].i kind, v[1].i sign, v[2].i rank; complex operands */        \
    X(FFT, "fft", 1, 1)

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

/* Gather and scatter through index arrays (ND_LIB_GATHER, ND_LIB_SCATTER).
 * Both walk an iteration space of n axes (the output's for a gather, the
 * values' for a scatter). The indexed array is passed as a view of n + K
 * axes: its first n axes follow the iteration space (stride 0 along the
 * axes the index arrays contribute), its last K axes are the indexed axes.
 * idx has n + 1 axes, int64: element [p..., k] is the index into indexed
 * axis k at iteration point p (the K index arrays, broadcast). Negative
 * indices wrap once (unless ND_INDEX_NO_WRAP); one still outside the axis
 * is the step's failure, ND_ERR_INDEX, and no element is read or written
 * out of bounds.
 *   v[0].i  K (1..ND_MAX_DIMS)
 *   v[1].i  nd_lib_index_fn, or'ed with the ND_INDEX_* flags
 *   v[2].i  for the message: the indexed array's axis number of each of the
 *           K axes, 4 bits each (axis k in bits 4k..4k+3)
 *   v[3].i  SCATTER only: nd_lib_scatter_mode
 * A scatter applies its updates in the iteration order: the last of
 * several writes to one element wins, and adds accumulate in that order,
 * on every backend. */
typedef enum {
    ND_INDEX_FN_TAKE,
    ND_INDEX_FN_TAKE_ALONG_AXIS,
    ND_INDEX_FN_INDEX,
    ND_INDEX_FN_CHOOSE,
    ND_INDEX_FN_COMPRESS,
    ND_INDEX_FN_EXTRACT,
    ND_INDEX_FN_PUT,
    ND_INDEX_FN_PUT_ALONG_AXIS,
    ND_INDEX_FN_INDEX_ASSIGN,
    ND_INDEX_FN_ADD_AT,
    ND_INDEX_FN_MASK_SELECT,
    ND_INDEX_FN_ADD_AT_INDEX,
    ND_INDEX_FN_COUNT
} nd_lib_index_fn;
enum {
    ND_INDEX_FN_MASK = 0xff,
    ND_INDEX_NO_WRAP = 1 << 8 /* negative indices are out of range (choose) */
};
typedef enum { ND_SCATTER_ASSIGN, ND_SCATTER_ADD } nd_lib_scatter_mode;

/* The public name of an nd_lib_index_fn ("nd_take"). */
const char *nd_lib_index_fn_name(int fn);

/* The message of an index outside its axis, as NumPy's IndexError words it
 * ("nd_take: index 7 is out of bounds for axis 0 with size 5"), for a
 * gather's or scatter's v[1].i and v[2].i and indexed axis k. Returns the
 * status (ND_ERR_INDEX) after setting it as the thread's error. */
int nd_lib_index_error(int64_t fn_flags, int64_t axes, int k, int64_t index, int64_t size);

/* ND_LIB_SORT: the sorted values (the input's dtype, NaNs made the default
 * NaN) or the sorting indices (int64) of each row, stable, in the order of
 * common/sort_keys.h. */
typedef enum { ND_SORT_VALUES, ND_SORT_INDICES } nd_lib_sort_mode;

/* ND_LIB_QUANTILE over rows sorted by ND_LIB_SORT (float32 or float64; the
 * output has in0's dtype and shape with the last axis replaced by q's
 * length): NumPy's linear method, a NaN in a row giving NaN (QUANTILE),
 * NaNs left out (NANQUANTILE), or the mean of the two middle elements
 * (MEDIAN, NANMEDIAN; q is then ignored but has length 1). */
typedef enum { ND_QUANTILE, ND_NANQUANTILE, ND_MEDIAN, ND_NANMEDIAN } nd_lib_quantile_mode;

/* The routines whose failure the device finds, read back to the host
 * when they run so that the step fails (its outputs and what depends on
 * them, as on the CPU), which a CUDA graph cannot capture: the dense linear
 * algebra routines that can fail (ND_LIB_LA_* but LU: common/lib_linalg.h
 * says why). A plan holding one runs step by step (nd_stats.plans_read_back). */
int nd_lib_reads_back(int lib);

/* The routines that file a failure in their step's fail record instead
 * (backends/plan.h's nd_plan_fail_records, read once after a whole plan
 * by the executor, as kernels that gather do): the gather and scatter,
 * whose bounds check names the first index outside its axis. Their plans
 * run whole (CUDA: one graph); a bad index fails the step's outputs and
 * what is computed from them, and a scatter writes nothing then. */
int nd_lib_files_fails(int lib);

/* Whether a routine takes complex operands (the others are refused at
 * record time: they have no complex loops yet). */
int nd_lib_takes_complex(int lib);

#endif
