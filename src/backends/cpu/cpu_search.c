/* ND_LIB_TAKE_ROWS, ND_LIB_SEARCHSORTED and ND_LIB_QUANTILE on the CPU:
 * per-element work (a gather, a binary search over sorted keys, an
 * interpolation in a sorted row) split over the pool by rows. Each output
 * element depends on its inputs alone, so the bits are the same for any
 * thread count. */
#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"
#include "common/sort_keys.h"

static int64_t last_len(const nd_kernel_arg *a) { return a->ndim ? a->shape[a->ndim - 1] : 1; }
static int64_t last_stride(const nd_kernel_arg *a) { return a->ndim ? a->strides[a->ndim - 1] : 0; }

/* -------------------------------------------------------------- take_rows */

typedef struct {
    const nd_kernel_arg *x, *ix, *out;
    size_t item;
} take_job;

static void take_rows(void *varg, int64_t begin, int64_t end) {
    const take_job *j = varg;
    int64_t n = last_len(j->x), m = last_len(j->out);
    int64_t xs = last_stride(j->x), is = last_stride(j->ix), os = last_stride(j->out);
    size_t w = j->item;
    for (int64_t r = begin; r < end; r++) {
        const char *x = (const char *)j->x->data + nd_cpu_row_offset(j->x, r) * (int64_t)w;
        const int64_t *ix = (const int64_t *)j->ix->data + nd_cpu_row_offset(j->ix, r);
        char *y = (char *)j->out->data + nd_cpu_row_offset(j->out, r) * (int64_t)w;
        for (int64_t i = 0; i < m; i++) {
            int64_t k = ix[i * is];
            k = k < 0 ? 0 : k >= n ? n - 1 : k; /* the frontend's indices are in range: never read outside */
            memcpy(y + i * os * (int64_t)w, x + k * xs * (int64_t)w, w);
        }
    }
}

nd_status nd_cpu_lib_take_rows(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    (void)u;
    take_job j = {&args[0], &args[1], &args[2], nd_dtype_size((nd_dtype)args[0].dtype)};
    int64_t m = last_len(j.out), rows = m ? j.out->size / m : 0;
    if (last_len(j.x) == 0) return ND_OK; /* the frontend never takes from an empty row */
    nd_cpu_parallel_for(st, rows, (1 << 14) / (m ? m : 1) + 1, take_rows, &j);
    return ND_OK;
}

/* ----------------------------------------------------------- searchsorted */

typedef struct {
    const nd_kernel_arg *a, *v, *out;
    nd_sort_key_info f;
    int right;
} search_job;

static void search_rows(void *varg, int64_t begin, int64_t end) {
    const search_job *j = varg;
    int64_t n = j->a->shape[0], as = j->a->strides[0], m = last_len(j->v);
    int64_t vs = last_stride(j->v), os = last_stride(j->out);
    int w = j->f.width;
    for (int64_t r = begin; r < end; r++) {
        const char *v = (const char *)j->v->data + nd_cpu_row_offset(j->v, r) * w;
        int64_t *y = (int64_t *)j->out->data + nd_cpu_row_offset(j->out, r);
        for (int64_t i = 0; i < m; i++) {
            uint64_t kv = nd_sort_key_bits(nd_sort_load_bits(v + i * vs * w, j->f), j->f);
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                uint64_t km = nd_sort_key_bits(nd_sort_load_bits((const char *)j->a->data + mid * as * w, j->f), j->f);
                if (j->right ? km <= kv : km < kv) lo = mid + 1;
                else hi = mid;
            }
            y[i * os] = lo;
        }
    }
}

nd_status nd_cpu_lib_searchsorted(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    search_job j = {&args[0], &args[1], &args[2], nd_sort_key_info_of(args[0].dtype), (int)u->lib_args.v[0].i};
    if (!j.f.width || j.a->ndim != 1 || args[1].dtype != args[0].dtype)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: searchsorted of %s in %d-d %s",
                            nd_dtype_name((nd_dtype)args[1].dtype), j.a->ndim, nd_dtype_name((nd_dtype)args[0].dtype));
    int64_t m = last_len(j.v), rows = m ? j.v->size / m : 0;
    nd_cpu_parallel_for(st, rows, (1 << 12) / (m ? m : 1) + 1, search_rows, &j);
    return ND_OK;
}

/* --------------------------------------------------------------- quantile */

typedef struct {
    const nd_kernel_arg *x, *q, *out;
    int mode;
} quantile_job;

/* NumPy's linear method (_lerp in numpy/lib/_function_base_impl.py): the
 * virtual index (m - 1) q, its floor clamped to the last element (where the
 * weight is then measured from index -1, as NumPy's negative index does),
 * and b - (b - a)(1 - t) for weights of 1/2 and more. The weight is a
 * float64 rounded to T as NumPy's Python-float weight is. */
#define QUANTILE_ROWS(NAME, T)                                                                                    \
    static void NAME(void *varg, int64_t begin, int64_t end) {                                                     \
        const quantile_job *j = varg;                                                                              \
        int64_t n = last_len(j->x), nq = last_len(j->out);                                                         \
        int64_t xs = last_stride(j->x), os = last_stride(j->out), qs = last_stride(j->q);                          \
        int skip_nan = j->mode == ND_NANQUANTILE || j->mode == ND_NANMEDIAN;                                       \
        int median = j->mode == ND_MEDIAN || j->mode == ND_NANMEDIAN;                                              \
        for (int64_t r = begin; r < end; r++) {                                                                    \
            const T *x = (const T *)j->x->data + nd_cpu_row_offset(j->x, r);                                       \
            T *y = (T *)j->out->data + nd_cpu_row_offset(j->out, r);                                               \
            int64_t m = n;                                                                                         \
            if (skip_nan)                                                                                          \
                while (m > 0 && isnan(x[(m - 1) * xs])) m--; /* NaNs sort last */                                  \
            int nan_row = m == 0 || isnan(x[(m - 1) * xs]);                                                        \
            for (int64_t k = 0; k < nq; k++) {                                                                     \
                T v;                                                                                               \
                if (nan_row) v = (T)NAN;                                                                           \
                else if (median) v = m % 2 ? x[(m / 2) * xs] : (T)((x[(m / 2 - 1) * xs] + x[(m / 2) * xs]) / (T)2); \
                else {                                                                                             \
                    double vi = (double)(m - 1) * ((const double *)j->q->data)[k * qs];                            \
                    double prev = floor(vi);                                                                       \
                    int64_t lo = (int64_t)prev, hi = lo + 1;                                                       \
                    if (vi >= (double)(m - 1)) {                                                                   \
                        lo = hi = m - 1;                                                                           \
                        prev = -1;                                                                                 \
                    }                                                                                              \
                    double g = vi - prev;                                                                          \
                    T a = x[lo * xs], b = x[hi * xs], diff = (T)(b - a);                                           \
                    v = g >= 0.5 ? (T)(b - diff * (T)(1.0 - g)) : (T)(a + diff * (T)g);                            \
                }                                                                                                  \
                y[k * os] = v;                                                                                     \
            }                                                                                                      \
        }                                                                                                          \
    }

QUANTILE_ROWS(quantile_f32, float)
QUANTILE_ROWS(quantile_f64, double)

nd_status nd_cpu_lib_quantile(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    quantile_job j = {&args[0], &args[1], &args[2], (int)u->lib_args.v[0].i};
    if ((j.x->dtype != ND_FLOAT32 && j.x->dtype != ND_FLOAT64) || j.out->dtype != j.x->dtype ||
        j.q->dtype != ND_FLOAT64 || j.x->ndim < 1)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: quantile of %s", nd_dtype_name((nd_dtype)j.x->dtype));
    int64_t nq = last_len(j.out), rows = nq ? j.out->size / nq : 0;
    nd_cpu_parallel_for(st, rows, (1 << 12) / (last_len(j.x) + 1) + 1,
                        j.x->dtype == ND_FLOAT32 ? quantile_f32 : quantile_f64, &j);
    return ND_OK;
}
