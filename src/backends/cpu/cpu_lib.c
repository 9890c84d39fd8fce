/* nd's library routines (common/lib_calls.h) on the CPU backend: the table
 * of implementations and what they share (splitting work over the pool,
 * walking the rows of a view). */
#include <assert.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"

static const nd_cpu_lib_fn cpu_lib_fns[ND_LIB_COUNT] = {
    [ND_LIB_NONE] = NULL,
    [ND_LIB_CUMULATE] = nd_cpu_lib_cumulate,
    /* indexing (cpu_gather.c) */
    [ND_LIB_GATHER] = nd_cpu_lib_gather,
    [ND_LIB_SCATTER] = nd_cpu_lib_scatter,
    [ND_LIB_SELECT] = nd_cpu_lib_select,
    [ND_LIB_SELECT_INDEX] = nd_cpu_lib_select_index,
    /* sorting and searching */
    [ND_LIB_SORT] = nd_cpu_lib_sort,
    [ND_LIB_TAKE_ROWS] = nd_cpu_lib_take_rows,
    [ND_LIB_SEARCHSORTED] = nd_cpu_lib_searchsorted,
    [ND_LIB_QUANTILE] = nd_cpu_lib_quantile,
    /* histograms */
    [ND_LIB_HISTOGRAM] = nd_cpu_lib_histogram,
    [ND_LIB_BIN_INDEX] = nd_cpu_lib_bin_index,
    /* dense linear algebra (cpu_linalg.c) */
    [ND_LIB_LA_CHOLESKY] = nd_cpu_lib_la_cholesky,
    [ND_LIB_LA_LU] = nd_cpu_lib_la_lu,
    [ND_LIB_LA_SOLVE] = nd_cpu_lib_la_solve,
    [ND_LIB_LA_QR] = nd_cpu_lib_la_qr,
    [ND_LIB_LA_SVD] = nd_cpu_lib_la_svd,
    [ND_LIB_LA_EIGH] = nd_cpu_lib_la_eigh,
    [ND_LIB_LA_EIG] = nd_cpu_lib_la_eig,
    /* numpy.fft (cpu_fft.c) */
    [ND_LIB_FFT] = nd_cpu_lib_fft,
};
static_assert(ND_LIB_COUNT == 20, "a new library routine needs its CPU implementation in cpu_lib_fns");

nd_status nd_cpu_run_lib(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    nd_cpu_lib_fn fn = u->lib > ND_LIB_NONE && u->lib < ND_LIB_COUNT ? cpu_lib_fns[u->lib] : NULL;
    if (!fn) return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: no implementation of library routine %d", u->lib);
    return fn(st, u, args);
}

typedef struct {
    void (*fn)(void *arg, int64_t begin, int64_t end);
    void *arg;
    int64_t n;
    int parts;
    int next; /* the next part to claim (atomic): the pool runs fn on the
                 workers that get a core in time, not on a fixed set */
} range_job;

static void run_range(void *varg, int worker) {
    range_job *j = varg;
    (void)worker;
    for (int part; (part = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->parts;) {
        int64_t begin = j->n * part / j->parts, end = j->n * (part + 1) / j->parts;
        if (begin < end) j->fn(j->arg, begin, end);
    }
}

void nd_cpu_parallel_for(nd_cpu_state *st, int64_t n, int64_t grain, void (*fn)(void *arg, int64_t begin, int64_t end),
                         void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t parts = n / grain;
    int workers = nd_cpu_pool_size(st->pool);
    if (parts > workers) parts = workers;
    if (parts < 2) {
        fn(arg, 0, n);
        return;
    }
    range_job j = {fn, arg, n, (int)parts, 0};
    nd_cpu_pool_run(st->pool, (int)parts, run_range, &j);
}

typedef struct {
    void (*fn)(void *arg, int part);
    void *arg;
    int parts, next;
} parts_job;

static void run_parts(void *varg, int worker) {
    parts_job *j = varg;
    (void)worker;
    for (int part; (part = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->parts;) j->fn(j->arg, part);
}

void nd_cpu_run_parts(nd_cpu_state *st, int parts, void (*fn)(void *arg, int part), void *arg) {
    if (parts <= 0) return;
    if (parts == 1) {
        fn(arg, 0);
        return;
    }
    parts_job j = {fn, arg, parts, 0};
    nd_cpu_pool_run(st->pool, parts, run_parts, &j);
}

int64_t nd_cpu_row_offset(const nd_kernel_arg *a, int64_t r) {
    int64_t off = 0;
    for (int d = a->ndim - 2; d >= 0 && r > 0; d--) {
        off += (r % a->shape[d]) * a->strides[d];
        r /= a->shape[d];
    }
    return off;
}
