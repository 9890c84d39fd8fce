/* ND_LIB_CUMULATE on the CPU: inclusive scans (sum, product and their NaN-
 * skipping forms) along the last axis of the input view into the output
 * view, both of one dtype (the frontend casts first, as NumPy's
 * accumulate computes in the result dtype). Rows are split over the pool;
 * each row is scanned in order, so the result is the same bits for any
 * thread count. */
#include <math.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"

typedef struct {
    const nd_kernel_arg *in, *out;
    int op;
} scan_job;

#define SCAN_ROWS(NAME, T, IS_FLOAT)                                                                       \
    static void NAME(void *varg, int64_t begin, int64_t end) {                                             \
        const scan_job *j = varg;                                                                          \
        const nd_kernel_arg *in = j->in, *out = j->out;                                                    \
        int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1;                                                \
        int64_t is = in->ndim ? in->strides[in->ndim - 1] : 0, os = out->ndim ? out->strides[out->ndim - 1] : 0; \
        for (int64_t r = begin; r < end; r++) {                                                            \
            const T *x = (const T *)in->data + nd_cpu_row_offset(in, r);                                   \
            T *y = (T *)out->data + nd_cpu_row_offset(out, r);                                             \
            int prod = j->op == ND_SCAN_PROD || j->op == ND_SCAN_NANPROD;                                  \
            int skip_nan = IS_FLOAT && (j->op == ND_SCAN_NANSUM || j->op == ND_SCAN_NANPROD);              \
            T acc = prod ? (T)1 : (T)0;                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                              \
                T v = x[i * is];                                                                           \
                if (skip_nan && v != v) v = prod ? (T)1 : (T)0;                                            \
                acc = prod ? (T)(acc * v) : (T)(acc + v);                                                  \
                y[i * os] = acc;                                                                           \
            }                                                                                              \
        }                                                                                                  \
    }

SCAN_ROWS(scan_f64, double, 1)
SCAN_ROWS(scan_f32, float, 1)
SCAN_ROWS(scan_i64, int64_t, 0)
SCAN_ROWS(scan_u64, uint64_t, 0)

nd_status nd_cpu_lib_cumulate(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    scan_job j = {in, out, (int)u->lib_args.v[0].i};
    void (*fn)(void *, int64_t, int64_t) = in->dtype == ND_FLOAT64   ? scan_f64
                                           : in->dtype == ND_FLOAT32 ? scan_f32
                                           : in->dtype == ND_INT64   ? scan_i64
                                           : in->dtype == ND_UINT64  ? scan_u64
                                                                     : NULL;
    if (!fn || out->dtype != in->dtype)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: cumulate of %s into %s", nd_dtype_name((nd_dtype)in->dtype),
                            nd_dtype_name((nd_dtype)out->dtype));
    int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1, rows = n ? in->size / n : 0;
    nd_cpu_parallel_for(st, rows, (1 << 16) / (n ? n : 1) + 1, fn, &j);
    return ND_OK;
}
