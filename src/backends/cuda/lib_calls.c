/* nd's library routines (common/lib_calls.h) on the CUDA backend: one row
 * per routine with the workspace it needs and how it is enqueued. Most call
 * the CUB plugin (prims/prims.h); every launch goes on the step's stream,
 * so CUDA graph capture records it like nd's own kernels. */
#include <assert.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/lib_fft.h"
#include "backends/cuda/lib_linalg.h"
#include "backends/user_args.h"
#include "common/user_kernel.h"

/* One routine: its workspace for these arguments (data pointers NULL when
 * asked at prepare time) and its launch. Both return a cudaError_t. */
typedef struct {
    int uses_prims;
    int (*workspace)(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes);
    int (*run)(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s);
    /* Instead of run, for a routine that files a bad index in a fail
     * record (common/lib_calls.h's nd_lib_files_fails): the record. */
    int (*run_filing)(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, ndp_fail *fail,
                      cudaStream_t s);
} lib_impl;

/* ------------------------------------------------------------- cumulate */

/* The plugin scans contiguous rows: the last axis of stride 1 and the rows
 * packed one after another, in both views. */
static int rows_contiguous(const nd_kernel_arg *a) {
    if (a->size == 0) return 1; /* nothing to read or write */
    int64_t expect = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] != 1 && a->strides[d] != expect) return 0;
        expect *= a->shape[d];
    }
    return 1;
}

static int cumulate_geometry(const nd_kernel_arg *args, int64_t *rows, int64_t *n) {
    const nd_kernel_arg *in = &args[0];
    *n = in->ndim ? in->shape[in->ndim - 1] : 1;
    *rows = *n ? in->size / *n : 0;
    return rows_contiguous(&args[0]) && rows_contiguous(&args[1]) ? 0 : (int)cudaErrorNotSupported;
}

static int cumulate_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    int64_t rows, n;
    int e = cumulate_geometry(args, &rows, &n);
    if (e) return e;
    return nd_cuda_prims.p_ndp_scan(args[0].dtype, (int)u->lib_args.v[0].i, NULL, NULL, rows, n, NULL, bytes, 0);
}

static int cumulate_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    int64_t rows, n;
    int e = cumulate_geometry(args, &rows, &n);
    if (e) return e;
    return nd_cuda_prims.p_ndp_scan(args[0].dtype, (int)u->lib_args.v[0].i, args[0].data, args[1].data, rows, n, ws,
                                    &ws_bytes, s);
}

/* ------------------------------------------------------------- indexing */

static int gather_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    const nd_lib_args *a = &u->lib_args;
    return nd_cuda_prims.p_ndp_gather((int)a->v[0].i, a->v[1].i, &args[0], &args[1], &args[2], NULL, NULL, bytes, 0);
}

static int gather_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, ndp_fail *fail,
                      cudaStream_t s) {
    const nd_lib_args *a = &u->lib_args;
    return nd_cuda_prims.p_ndp_gather((int)a->v[0].i, a->v[1].i, &args[0], &args[1], &args[2], fail, ws, &ws_bytes,
                                      s);
}

static int scatter_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    const nd_lib_args *a = &u->lib_args;
    return nd_cuda_prims.p_ndp_scatter((int)a->v[0].i, a->v[1].i, (int)a->v[3].i, &args[0], &args[1], &args[2], NULL,
                                       NULL, bytes, 0);
}

static int scatter_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, ndp_fail *fail,
                       cudaStream_t s) {
    const nd_lib_args *a = &u->lib_args;
    return nd_cuda_prims.p_ndp_scatter((int)a->v[0].i, a->v[1].i, (int)a->v[3].i, &args[0], &args[1], &args[2], fail,
                                       ws, &ws_bytes, s);
}

/* SELECT: data, mask -> out, count; SELECT_INDEX: mask -> out, count. */
static int select_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    const nd_kernel_arg *data = u->lib == ND_LIB_SELECT ? &args[0] : NULL, *rest = data ? args + 1 : args;
    return nd_cuda_prims.p_ndp_select(data, &rest[0], NULL, NULL, NULL, bytes, 0);
}

static int select_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    const nd_kernel_arg *data = u->lib == ND_LIB_SELECT ? &args[0] : NULL, *rest = data ? args + 1 : args;
    return nd_cuda_prims.p_ndp_select(data, &rest[0], rest[1].data, rest[2].data, ws, &ws_bytes, s);
}


/* ------------------------------------------------- sorting and searching */

static int sort_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    int64_t rows, n;
    int e = cumulate_geometry(args, &rows, &n); /* contiguous rows, as the scans */
    if (e) return e;
    return nd_cuda_prims.p_ndp_sort(args[0].dtype, (int)u->lib_args.v[0].i, NULL, NULL, rows, n, NULL, bytes, 0);
}

static int sort_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    int64_t rows, n;
    int e = cumulate_geometry(args, &rows, &n); /* contiguous rows, as the scans */
    if (e) return e;
    return nd_cuda_prims.p_ndp_sort(args[0].dtype, (int)u->lib_args.v[0].i, args[0].data, args[1].data, rows, n, ws,
                                    &ws_bytes, s);
}

/* The per-element routines read strided views and need no workspace. */
static int take_rows_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    (void)u, (void)ws, (void)ws_bytes;
    return nd_cuda_prims.p_ndp_take_rows(&args[0], &args[1], &args[2], s);
}

static int searchsorted_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes,
                            cudaStream_t s) {
    (void)ws, (void)ws_bytes;
    return nd_cuda_prims.p_ndp_searchsorted(&args[0], &args[1], &args[2], (int)u->lib_args.v[0].i, s);
}

static int quantile_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    (void)ws, (void)ws_bytes;
    return nd_cuda_prims.p_ndp_quantile(&args[0], &args[1], &args[2], (int)u->lib_args.v[0].i, s);
}

/* ------------------------------------------------- histogram, bin_index */

/* The frontend packs every input and output (1-d, stride 1). */
static int histogram_call(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t *ws_bytes,
                          cudaStream_t s) {
    const nd_kernel_arg *x = &args[0], *e = &args[1], *w = &args[2];
    if (!rows_contiguous(x) || !rows_contiguous(e) || !rows_contiguous(w) || !rows_contiguous(&args[3]))
        return (int)cudaErrorNotSupported;
    return nd_cuda_prims.p_ndp_histogram((int)u->lib_args.v[0].i, x->dtype, x->data, x->size, e->data, e->size,
                                         (const double *)w->data, args[3].data, u->lib_args.v[1].i,
                                         u->lib_args.v[2].f, u->lib_args.v[3].f, ws, ws_bytes, s);
}

static int histogram_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    return histogram_call(u, args, NULL, bytes, 0);
}

static int histogram_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes,
                         cudaStream_t s) {
    return histogram_call(u, args, ws, &ws_bytes, s);
}

static int bin_index_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes,
                         cudaStream_t s) {
    (void)ws, (void)ws_bytes;
    if (!rows_contiguous(&args[0]) || !rows_contiguous(&args[1])) return (int)cudaErrorNotSupported;
    return nd_cuda_prims.p_ndp_bin_index((const double *)args[0].data, args[0].size, u->lib_args.v[0].i,
                                         u->lib_args.v[1].f, u->lib_args.v[2].f, u->lib_args.v[3].i,
                                         (int64_t *)args[1].data, s);
}

/* ------------------------------------------------------------ the table */

static const lib_impl impls[ND_LIB_COUNT] = {
    [ND_LIB_NONE] = {0, NULL, NULL},
    [ND_LIB_CUMULATE] = {1, cumulate_workspace, cumulate_run},
    /* indexing (prims/gather.cu) */
    [ND_LIB_GATHER] = {1, gather_workspace, NULL, gather_run},
    [ND_LIB_SCATTER] = {1, scatter_workspace, NULL, scatter_run},
    [ND_LIB_SELECT] = {1, select_workspace, select_run},
    [ND_LIB_SELECT_INDEX] = {1, select_workspace, select_run},
    /* sorting and searching */
    [ND_LIB_SORT] = {1, sort_workspace, sort_run},
    [ND_LIB_TAKE_ROWS] = {1, NULL, take_rows_run},
    [ND_LIB_SEARCHSORTED] = {1, NULL, searchsorted_run},
    [ND_LIB_QUANTILE] = {1, NULL, quantile_run},
    /* histograms */
    [ND_LIB_HISTOGRAM] = {1, histogram_workspace, histogram_run},
    [ND_LIB_BIN_INDEX] = {1, NULL, bin_index_run},
    /* dense linear algebra through cuSOLVER (lib_linalg.c) */
    [ND_LIB_LA_CHOLESKY] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_LU] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_SOLVE] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_QR] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_SVD] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_EIGH] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    [ND_LIB_LA_EIG] = {0, nd_cuda_la_workspace, nd_cuda_la_run},
    /* numpy.fft through cuFFT (lib_fft.c) */
    [ND_LIB_FFT] = {0, nd_cuda_fft_workspace, nd_cuda_fft_run},
};
static_assert(ND_LIB_COUNT == 20, "a new library routine needs its CUDA implementation in impls");

static nd_status lib_failed(const nd_user_desc *u, int e, const char *when) {
    if (e == ND_CUDA_LIB_ND_ERROR) return nd_last_status(); /* the routine said what */
    if (e == (int)cudaErrorNotSupported)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cuda: %s of these views is not implemented (an nd bug: the frontend "
                            "should have made them contiguous)", nd_lib_calls[u->lib].name);
    char what[160];
    snprintf(what, sizeof what, "%s %s", when, nd_lib_calls[u->lib].name);
    return nd_cuda_fail((cudaError_t)e, what);
}

nd_status nd_cuda_lib_prepare(nd_cuda *cu, const nd_user_desc *u, size_t *workspace_bytes) {
    (void)cu;
    *workspace_bytes = 0;
    const lib_impl *im = &impls[u->lib];
    if (!im->run && !im->run_filing) return nd_error_set(ND_ERR_UNSUPPORTED, "cuda: no implementation of %s", nd_lib_calls[u->lib].name);
    if (im->uses_prims) {
        nd_status s = nd_cuda_load_prims();
        if (s != ND_OK) return s;
    }
    if (!im->workspace) return ND_OK;
    nd_kernel_arg args[ND_USER_KERNEL_MAX_ARGS];
    void *none[ND_USER_KERNEL_MAX_ARGS] = {0};
    nd_user_args_bind(u, none, args);
    int e = im->workspace(u, args, workspace_bytes);
    return e ? lib_failed(u, e, "sizing the workspace of") : ND_OK;
}

static_assert(sizeof(ndp_fail) == sizeof(nd_ir_fail) && offsetof(ndp_fail, set) == offsetof(nd_ir_fail, set) &&
                  offsetof(ndp_fail, k) == offsetof(nd_ir_fail, axis) &&
                  offsetof(ndp_fail, index) == offsetof(nd_ir_fail, index),
              "the plugin's fail record is read as an nd_ir_fail (plan_fails)");

nd_status nd_cuda_issue_lib(nd_cuda *cu, const nd_user_desc *u, void *const *slots, void *workspace,
                            size_t workspace_bytes, void *fail, cudaStream_t stream) {
    if (impls[u->lib].run_filing && !fail)
        return nd_error_set(ND_ERR_STATE, "cuda: %s issued without a fail record (an nd bug)", nd_lib_calls[u->lib].name);
    nd_kernel_arg args[ND_USER_KERNEL_MAX_ARGS];
    nd_user_args_bind(u, slots, args);
    ND_NVTX_PUSH(nd_lib_calls[u->lib].name);
    int e = nd_cuda_small_solve_applies(u, args)
                ? nd_cuda_small_solve_run(cu, u, args, workspace, workspace_bytes, stream)
            : u->lib == ND_LIB_LA_CHOLESKY ? nd_cuda_la_cholesky_run(cu, u, args, workspace, workspace_bytes, stream)
            : impls[u->lib].run_filing ? impls[u->lib].run_filing(u, args, workspace, workspace_bytes, fail, stream)
                                       : impls[u->lib].run(u, args, workspace, workspace_bytes, stream);
    ND_NVTX_POP();
    return e ? lib_failed(u, e, "running") : ND_OK;
}

/* The step path's workspace is kept between steps rather than allocated
 * and freed around each: the routines that take this path (those that
 * read their status back: the linear algebra) run one at a time on
 * `stream`, so one buffer serves them in stream order. After an idle
 * moment the host's pool calls are slow: for Cholesky of 8192 float64 on
 * the H200 the allocation took 17-24 us and the free 14 us of a call whose
 * target is 5% over potrf's 7.3 ms (bench/results/2026-11-29-h200-session6.md). */
static nd_status step_workspace(nd_cuda *cu, size_t bytes, void **out, const char *what) {
    if (!cu->step_ws || cu->step_ws_bytes < bytes) {
        nd_cuda_release_step_workspace(cu);
        nd_status s = nd_cuda_device_alloc(cu, bytes, &cu->step_ws, what);
        if (s != ND_OK) return s;
        cu->step_ws_bytes = bytes;
    }
    *out = cu->step_ws;
    return ND_OK;
}

void nd_cuda_release_step_workspace(nd_cuda *cu) {
    if (cu->step_ws) nd_cuda_device_free(cu, cu->step_ws, cu->step_ws_bytes); /* after the routines that used it */
    cu->step_ws = NULL;
    cu->step_ws_bytes = 0;
}

nd_status nd_cuda_run_lib_step(nd_cuda *cu, const nd_user_desc *u, void *const *slots) {
    size_t bytes = 0;
    void *ws = NULL;
    nd_status s = nd_cuda_lib_prepare(cu, u, &bytes);
    /* A gather or scatter run on its own (a plan run step by step, for a
     * routine that reads back) files a bad index in the process's record
     * (mapped host memory) and is checked here, as the executor checks a
     * whole plan's records after it (common/lib_calls.h,
     * nd_lib_files_fails): the step fails with the CPU's message. */
    ndp_fail *host = NULL, *device = NULL;
    if (s == ND_OK && nd_lib_files_fails(u->lib)) {
        int e = nd_cuda_prims.p_ndp_bad_record(&host, &device);
        if (e) s = nd_cuda_fail((cudaError_t)e, "cudaHostAlloc (the bad-index record)");
    }
    /* Never a NULL workspace: to a primitive that means "size it". */
    if (s == ND_OK) s = step_workspace(cu, bytes ? bytes : 256, &ws, nd_lib_calls[u->lib].name);
    if (s == ND_OK) s = nd_cuda_issue_lib(cu, u, slots, ws, bytes, device, cu->stream);
    if (s == ND_OK && host) {
        cudaError_t e = cudaStreamSynchronize(cu->stream);
        if (e != cudaSuccess) return nd_cuda_fail(e, "cudaStreamSynchronize after a gather or scatter");
        volatile ndp_fail *b = host;
        if (b->set) {
            nd_ir_fail rec = {1, 0, b->k, 0, b->index};
            memset((void *)host, 0, sizeof *host);
            s = (nd_status)nd_lib_fail_error(u, &rec);
        }
    }
    return s;
}
