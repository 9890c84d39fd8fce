/* Gather, scatter and mask selection on the CPU (common/lib_calls.h's
 * ND_LIB_GATHER, ND_LIB_SCATTER, ND_LIB_SELECT, ND_LIB_SELECT_INDEX).
 *
 * Gathers and the bounds check of a scatter run over the points of the
 * iteration space, split over the pool in contiguous ranges. An index
 * outside its axis stops the routine before anything is read through it;
 * the message names the first such index in iteration order, whatever the
 * thread count. A scatter then
 * applies its updates on one thread in iteration order, so the last write
 * wins and adds accumulate in order (NumPy's np.add.at) with the same bits
 * on every run. Mask selection counts each fixed-size chunk, then writes
 * each chunk at its prefix: the same result for any thread count. */
#include <stdatomic.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"

/* ------------------------------------------------------------ geometry */

/* The iteration space: n axes of shape S; `src` (gather) or `dst`
 * (scatter) has n + K axes, idx has n + 1. */
typedef struct {
    const nd_kernel_arg *idx, *ind; /* ind: the indexed array, n + K axes */
    const nd_kernel_arg *vals;      /* gather: the output; scatter: the values */
    int n, K, wrap;
    int64_t rows, len; /* rows of the last iteration axis, and its length */
    _Atomic int64_t first_bad;
} geom;

static void geom_init(geom *g, const nd_kernel_arg *idx, const nd_kernel_arg *ind, const nd_kernel_arg *vals,
                      const nd_user_desc *u) {
    g->idx = idx;
    g->ind = ind;
    g->vals = vals;
    g->K = (int)u->lib_args.v[0].i;
    g->n = ind->ndim - g->K;
    g->wrap = !(u->lib_args.v[1].i & ND_INDEX_NO_WRAP);
    g->len = g->n ? ind->shape[g->n - 1] : 1;
    int64_t total = 1;
    for (int d = 0; d < g->n; d++) total *= ind->shape[d];
    g->rows = g->len ? total / g->len : 0;
    atomic_init(&g->first_bad, INT64_MAX);
}

/* Offsets (in elements) of iteration row r's first point in a view whose
 * first n axes follow the iteration space. */
static int64_t row_base(const nd_kernel_arg *a, int n, const int64_t *shape, int64_t r) {
    int64_t off = 0;
    for (int d = n - 2; d >= 0 && r > 0; d--) {
        off += (r % shape[d]) * a->strides[d];
        r /= shape[d];
    }
    return off;
}

static int64_t last_stride(const nd_kernel_arg *a, int n) { return n ? a->strides[n - 1] : 0; }

/* The element offset into the indexed array of the indices at idx offset
 * io, in *off (negative where the indexed array's strides are); 0 when
 * every index is in its axis, else -1 - k for the first bad one. */
static inline int indexed_offset(const geom *g, int64_t io, int64_t base, int64_t *off) {
    const int64_t *ix = (const int64_t *)g->idx->data;
    int64_t ks = g->idx->strides[g->n];
    for (int k = 0; k < g->K; k++) {
        int64_t v = ix[io + k * ks], size = g->ind->shape[g->n + k];
        if (v < 0 && g->wrap) v += size;
        if (v < 0 || v >= size) return -1 - k;
        base += v * g->ind->strides[g->n + k];
    }
    *off = base;
    return 0;
}

static void note_bad(geom *g, int64_t point) {
    int64_t cur = atomic_load(&g->first_bad);
    while (point < cur && !atomic_compare_exchange_weak(&g->first_bad, &cur, point)) {
    }
}

/* The error of the first bad point (recomputed on this thread: the
 * message is the caller's thread's error). */
static nd_status report_bad(const geom *g, const nd_user_desc *u) {
    int64_t point = atomic_load(&g->first_bad), r = g->len ? point / g->len : 0, i = g->len ? point % g->len : 0;
    const int64_t *shape = g->ind->shape;
    int64_t io = row_base(g->idx, g->n, shape, r) + i * last_stride(g->idx, g->n);
    const int64_t *ix = (const int64_t *)g->idx->data;
    for (int k = 0; k < g->K; k++) {
        int64_t v = ix[io + k * g->idx->strides[g->n]], size = g->ind->shape[g->n + k];
        int64_t w = v < 0 && g->wrap ? v + size : v;
        if (w < 0 || w >= size)
            return (nd_status)nd_lib_index_error(u->lib_args.v[1].i, u->lib_args.v[2].i, k, v, size);
    }
    return nd_error_set(ND_ERR_STATE, "cpu backend: %s found a bad index that is not (an nd bug)",
                        nd_lib_index_fn_name((int)u->lib_args.v[1].i));
}

/* ---------------------------------------------------------------- gather */

/* Points [begin, end) of the iteration space, split at row ends; one index
 * array (K = 1) skips the loop over indexed axes. */
#define GATHER_POINTS(NAME, T)                                                                           \
    static void NAME(void *varg, int64_t begin, int64_t end) {                                          \
        geom *g = varg;                                                                                  \
        const int64_t *shape = g->ind->shape, *ix = (const int64_t *)g->idx->data;                       \
        int64_t is = last_stride(g->idx, g->n), ss = last_stride(g->ind, g->n);                          \
        int64_t size0 = g->ind->shape[g->n], st0 = g->ind->strides[g->n];                                \
        const T *src = (const T *)g->ind->data;                                                          \
        T *out = (T *)g->vals->data;                                                                     \
        for (int64_t p = begin; p < end;) {                                                              \
            int64_t r = p / g->len, i0 = p % g->len, i1 = g->len < i0 + (end - p) ? g->len : i0 + (end - p); \
            int64_t io = row_base(g->idx, g->n, shape, r) + i0 * is;                                     \
            int64_t so = row_base(g->ind, g->n, shape, r) + i0 * ss;                                     \
            T *o = out + r * g->len;                                                                     \
            if (g->K == 1) {                                                                             \
                for (int64_t i = i0; i < i1; i++, io += is, so += ss) {                                  \
                    int64_t v = ix[io];                                                                  \
                    if (v < 0 && g->wrap) v += size0;                                                    \
                    if ((uint64_t)v >= (uint64_t)size0) {                                                \
                        note_bad(g, r * g->len + i);                                                     \
                        return;                                                                          \
                    }                                                                                    \
                    o[i] = src[so + v * st0];                                                            \
                }                                                                                        \
            } else {                                                                                     \
                for (int64_t i = i0; i < i1; i++, io += is, so += ss) {                                  \
                    int64_t off = 0;                                                                     \
                    if (indexed_offset(g, io, so, &off) < 0) {                                           \
                        note_bad(g, r * g->len + i);                                                     \
                        return;                                                                          \
                    }                                                                                    \
                    o[i] = src[off];                                                                     \
                }                                                                                        \
            }                                                                                            \
            p += i1 - i0;                                                                                \
        }                                                                                                \
    }

GATHER_POINTS(gather_1, uint8_t)
GATHER_POINTS(gather_2, uint16_t)
GATHER_POINTS(gather_4, uint32_t)
GATHER_POINTS(gather_8, uint64_t)

static void (*by_size(int64_t item))(void *, int64_t, int64_t) {
    return item == 1 ? gather_1 : item == 2 ? gather_2 : item == 4 ? gather_4 : gather_8;
}

nd_status nd_cpu_lib_gather(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    geom g;
    geom_init(&g, &args[1], &args[0], &args[2], u);
    nd_cpu_parallel_for(st, g.rows * g.len, 1 << 14, by_size(nd_dtype_size((nd_dtype)args[0].dtype)), &g);
    return atomic_load(&g.first_bad) == INT64_MAX ? ND_OK : report_bad(&g, u);
}

/* --------------------------------------------------------------- scatter */

static void check_points(void *varg, int64_t begin, int64_t end) {
    geom *g = varg;
    const int64_t *shape = g->ind->shape;
    int64_t is = last_stride(g->idx, g->n);
    for (int64_t p = begin; p < end;) {
        int64_t r = p / g->len, i0 = p % g->len, i1 = g->len < i0 + (end - p) ? g->len : i0 + (end - p);
        int64_t io = row_base(g->idx, g->n, shape, r) + i0 * is;
        for (int64_t i = i0; i < i1; i++, io += is)
            if (indexed_offset(g, io, 0, &(int64_t){0}) < 0) {
                note_bad(g, r * g->len + i);
                return;
            }
        p += i1 - i0;
    }
}

/* dst[off] = or += vals[vo], typed. Signed integers add as unsigned (wrap
 * around like NumPy, no undefined overflow); bool adds as logical or. */
typedef void (*apply_fn)(char *dst, const char *val);
#define APPLY_SET(NAME, T)                                                                               \
    static void NAME(char *d, const char *v) { memcpy(d, v, sizeof(T)); }
#define APPLY_ADD(NAME, T, U)                                                                            \
    static void NAME(char *d, const char *v) {                                                           \
        T a, b;                                                                                          \
        memcpy(&a, d, sizeof a);                                                                         \
        memcpy(&b, v, sizeof b);                                                                         \
        a = (T)((U)a + (U)b);                                                                            \
        memcpy(d, &a, sizeof a);                                                                         \
    }
APPLY_SET(set_1, uint8_t)
APPLY_SET(set_2, uint16_t)
APPLY_SET(set_4, uint32_t)
APPLY_SET(set_8, uint64_t)
APPLY_ADD(add_i8, int8_t, uint8_t)
APPLY_ADD(add_i16, int16_t, uint16_t)
APPLY_ADD(add_i32, int32_t, uint32_t)
APPLY_ADD(add_i64, int64_t, uint64_t)
APPLY_ADD(add_u8, uint8_t, uint8_t)
APPLY_ADD(add_u16, uint16_t, uint16_t)
APPLY_ADD(add_u32, uint32_t, uint32_t)
APPLY_ADD(add_u64, uint64_t, uint64_t)
APPLY_ADD(add_f32, float, float)
APPLY_ADD(add_f64, double, double)
static void add_bool(char *d, const char *v) { *d = (char)(*d || *v); }
static void add_f16(char *d, const char *v) {
    uint16_t a, b;
    memcpy(&a, d, 2);
    memcpy(&b, v, 2);
    a = nd_float_to_half(nd_half_to_float(a) + nd_half_to_float(b));
    memcpy(d, &a, 2);
}
static void add_bf16(char *d, const char *v) {
    uint16_t a, b;
    memcpy(&a, d, 2);
    memcpy(&b, v, 2);
    a = nd_float_to_bf16(nd_bf16_to_float(a) + nd_bf16_to_float(b));
    memcpy(d, &a, 2);
}

static apply_fn apply_for(nd_dtype t, int add) {
    if (!add) {
        size_t item = nd_dtype_size(t);
        return item == 1 ? set_1 : item == 2 ? set_2 : item == 4 ? set_4 : set_8;
    }
    switch (t) {
    case ND_BOOL: return add_bool;
    case ND_INT8: return add_i8;
    case ND_INT16: return add_i16;
    case ND_INT32: return add_i32;
    case ND_INT64: return add_i64;
    case ND_UINT8: return add_u8;
    case ND_UINT16: return add_u16;
    case ND_UINT32: return add_u32;
    case ND_UINT64: return add_u64;
    case ND_FLOAT16: return add_f16;
    case ND_BFLOAT16: return add_bf16;
    case ND_FLOAT32: return add_f32;
    case ND_FLOAT64: return add_f64;
    default: return NULL;
    }
}

nd_status nd_cpu_lib_scatter(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *idx = &args[0], *vals = &args[1], *dst = &args[2];
    geom g;
    geom_init(&g, idx, dst, vals, u);
    nd_cpu_parallel_for(st, g.rows * g.len, 1 << 14, check_points, &g);
    if (atomic_load(&g.first_bad) != INT64_MAX) return report_bad(&g, u);
    apply_fn apply = apply_for((nd_dtype)dst->dtype, u->lib_args.v[3].i == ND_SCATTER_ADD);
    if (!apply) return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: scatter into %s", nd_dtype_name((nd_dtype)dst->dtype));
    int64_t item = (int64_t)nd_dtype_size((nd_dtype)dst->dtype);
    int64_t is = last_stride(idx, g.n), ds = last_stride(dst, g.n), vs = last_stride(vals, g.n);
    char *d = dst->data;
    const char *v = vals->data;
    for (int64_t r = 0; r < g.rows; r++) {
        int64_t io = row_base(idx, g.n, dst->shape, r), dof = row_base(dst, g.n, dst->shape, r),
                vo = row_base(vals, g.n, dst->shape, r);
        for (int64_t i = 0; i < g.len; i++, io += is, dof += ds, vo += vs) {
            int64_t off = 0;
            (void)indexed_offset(&g, io, dof, &off); /* checked above */
            apply(d + off * item, v + vo * item);
        }
    }
    return ND_OK;
}

/* ------------------------------------------------------------ selection */

enum { SELECT_CHUNK = 1 << 16 };

typedef struct {
    const nd_kernel_arg *data, *mask;
    void *out;
    int64_t n, *counts; /* per chunk; then each chunk's first output */
    int64_t item;
} select_job;

static void count_chunks(void *varg, int64_t begin, int64_t end) {
    select_job *j = varg;
    const uint8_t *m = j->mask->data;
    int64_t ms = j->mask->ndim ? j->mask->strides[0] : 0;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * SELECT_CHUNK, hi = lo + SELECT_CHUNK < j->n ? lo + SELECT_CHUNK : j->n, k = 0;
        for (int64_t i = lo; i < hi; i++) k += m[i * ms] != 0;
        j->counts[c] = k;
    }
}

#define SELECT_CHUNKS(NAME, T)                                                                           \
    static void NAME(void *varg, int64_t begin, int64_t end) {                                          \
        select_job *j = varg;                                                                            \
        const uint8_t *m = j->mask->data;                                                                \
        int64_t ms = j->mask->ndim ? j->mask->strides[0] : 0;                                            \
        T *out = j->out;                                                                                 \
        for (int64_t c = begin; c < end; c++) {                                                          \
            int64_t lo = c * SELECT_CHUNK, hi = lo + SELECT_CHUNK < j->n ? lo + SELECT_CHUNK : j->n;     \
            int64_t o = j->counts[c];                                                                    \
            if (!j->data) {                                                                              \
                for (int64_t i = lo; i < hi; i++)                                                        \
                    if (m[i * ms]) out[o++] = (T)i;                                                      \
                continue;                                                                                \
            }                                                                                            \
            const T *x = j->data->data;                                                                  \
            int64_t xs = j->data->ndim ? j->data->strides[0] : 0;                                        \
            for (int64_t i = lo; i < hi; i++)                                                            \
                if (m[i * ms]) out[o++] = x[i * xs];                                                     \
        }                                                                                                \
    }
SELECT_CHUNKS(select_1, uint8_t)
SELECT_CHUNKS(select_2, uint16_t)
SELECT_CHUNKS(select_4, uint32_t)
SELECT_CHUNKS(select_8, uint64_t)

static nd_status run_select(nd_cpu_state *st, const nd_kernel_arg *data, const nd_kernel_arg *mask,
                            const nd_kernel_arg *out, const nd_kernel_arg *count) {
    select_job j = {data, mask, out->data, mask->size, NULL, (int64_t)nd_dtype_size((nd_dtype)out->dtype)};
    int64_t chunks = (j.n + SELECT_CHUNK - 1) / SELECT_CHUNK;
    int64_t small[64];
    j.counts = chunks <= 64 ? small : nd_malloc(sizeof *j.counts * (size_t)chunks);
    if (!j.counts) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory selecting %lld elements", (long long)j.n);
    nd_cpu_parallel_for(st, chunks, 1, count_chunks, &j);
    int64_t total = 0;
    for (int64_t c = 0; c < chunks; c++) {
        int64_t k = j.counts[c];
        j.counts[c] = total;
        total += k;
    }
    nd_cpu_parallel_for(st, chunks, 1,
                        j.item == 1 ? select_1 : j.item == 2 ? select_2 : j.item == 4 ? select_4 : select_8, &j);
    *(int64_t *)count->data = total;
    if (j.counts != small) free(j.counts);
    return ND_OK;
}

nd_status nd_cpu_lib_select(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    (void)u;
    return run_select(st, &args[0], &args[1], &args[2], &args[3]);
}

nd_status nd_cpu_lib_select_index(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    (void)u;
    return run_select(st, NULL, &args[0], &args[1], &args[2]);
}
