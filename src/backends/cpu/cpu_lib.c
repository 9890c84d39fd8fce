/* nd's library routines (common/lib_calls.h) on the CPU backend: the table
 * of implementations and what they share (splitting work over the pool,
 * walking the rows of a view). */
#include <assert.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"

static const nd_cpu_lib_fn cpu_lib_fns[ND_LIB_COUNT] = {
    [ND_LIB_NONE] = NULL,
    [ND_LIB_CUMULATE] = nd_cpu_lib_cumulate,
    /* dense linear algebra (cpu_linalg.c) */
    [ND_LIB_LA_CHOLESKY] = nd_cpu_lib_la_cholesky,
    [ND_LIB_LA_LU] = nd_cpu_lib_la_lu,
    [ND_LIB_LA_SOLVE] = nd_cpu_lib_la_solve,
    [ND_LIB_LA_QR] = nd_cpu_lib_la_qr,
    [ND_LIB_LA_SVD] = nd_cpu_lib_la_svd,
    [ND_LIB_LA_EIGH] = nd_cpu_lib_la_eigh,
};
static_assert(ND_LIB_COUNT == 8, "a new library routine needs its CPU implementation in cpu_lib_fns");

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
} range_job;

static void run_range(void *varg, int worker) {
    const range_job *j = varg;
    int64_t begin = j->n * worker / j->parts, end = j->n * (worker + 1) / j->parts;
    if (begin < end) j->fn(j->arg, begin, end);
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
    range_job j = {fn, arg, n, (int)parts};
    nd_cpu_pool_run(st->pool, (int)parts, run_range, &j);
}

int64_t nd_cpu_row_offset(const nd_kernel_arg *a, int64_t r) {
    int64_t off = 0;
    for (int d = a->ndim - 2; d >= 0 && r > 0; d--) {
        off += (r % a->shape[d]) * a->strides[d];
        r /= a->shape[d];
    }
    return off;
}
