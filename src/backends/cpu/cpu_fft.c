/* ND_LIB_FFT on the CPU (common/lib_fft.h) with nd's own FFT
 * (fft_plan.h). The last axis goes from the input into the output line by
 * line; each further axis of a multi-axis call is then transformed in
 * place in the output, along its (strided) lines. The lines of a pass are
 * spread over the pool in ranges, each range with its own line buffer and
 * scratch; every line is transformed alone by the same plan, so the bits
 * do not depend on the thread count. */
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/fft_plan.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_fft.h"

/* Lines of at least this many elements, fewer than the workers, are split
 * over the pool one by one (split_lines) rather than one per worker. */
#define SPLIT_MIN ((int64_t)1 << 15)
#define COLS 8

typedef struct {
    const nd_kernel_arg *in, *out;
    int kind, sign, f64;
    int axis;       /* this pass's axis (of out; the first pass: the last axis of both) */
    int64_t n;      /* the transform's length */
    const nd_fft_plan *plan; /* the complex plan of n, or the real one (even n, R2C and C2R) */
    int oom;
} fft_job;

/* The element offset of line l of view a along axis ax: l counts the
 * positions of the other axes in row-major order. */
static int64_t line_offset(const nd_kernel_arg *a, int ax, int64_t l) {
    int64_t off = 0;
    for (int d = a->ndim - 1; d >= 0 && l > 0; d--) {
        if (d == ax) continue;
        off += (l % a->shape[d]) * a->strides[d];
        l /= a->shape[d];
    }
    return off;
}

#define FFT_LINES(SUF, T)                                                                                        \
    static void lines_##SUF(fft_job *j, int64_t begin, int64_t end, T *buf, T *scratch) {                       \
        const nd_kernel_arg *in = j->in, *out = j->out;                                                          \
        const int64_t n = j->n;                                                                                  \
        const int ax = j->axis;                                                                                  \
        const int first = ax == out->ndim - 1;                                                                   \
        const int64_t is = in->strides[in->ndim - 1], os = out->strides[ax];                                     \
        const int64_t m = in->shape[in->ndim - 1]; /* input elements along the last axis */                      \
        for (int64_t l = begin; l < end; l++) {                                                                  \
            T *y = (T *)out->data + 2 * line_offset(out, ax, l);                                                   \
            if (!first) {                                                                                        \
                /* A further axis, in place in the (complex) output: up to COLS lines at once that are         \
                 * neighbours along the last axis, so each of their rows is read and written in one run. */    \
                const int64_t last = out->shape[out->ndim - 1], ls = out->strides[out->ndim - 1];                \
                int64_t nc = end - l < COLS ? end - l : COLS;                                                    \
                if (nc > last - l % last) nc = last - l % last;                                                  \
                for (int64_t k = 0; k < n; k++)                                                                  \
                    for (int64_t c = 0; c < nc; c++) {                                                           \
                        buf[2 * (c * n + k)] = y[2 * (k * os + c * ls)];                                         \
                        buf[2 * (c * n + k) + 1] = y[2 * (k * os + c * ls) + 1];                                 \
                    }                                                                                            \
                for (int64_t c = 0; c < nc; c++) nd_fft_exec_##SUF(j->plan, buf + 2 * c * n, scratch, j->sign);  \
                for (int64_t k = 0; k < n; k++)                                                                  \
                    for (int64_t c = 0; c < nc; c++) {                                                           \
                        y[2 * (k * os + c * ls)] = buf[2 * (c * n + k)];                                         \
                        y[2 * (k * os + c * ls) + 1] = buf[2 * (c * n + k) + 1];                                 \
                    }                                                                                            \
                l += nc - 1;                                                                                     \
                continue;                                                                                        \
            }                                                                                                    \
            const int64_t ioff = line_offset(in, in->ndim - 1, l);                                               \
            switch (j->kind) {                                                                                   \
            case ND_LIB_FFT_C2C: {                                                                               \
                const T *x = (const T *)in->data + 2 * ioff;                                                     \
                for (int64_t k = 0; k < n; k++) buf[2 * k] = x[2 * k * is], buf[2 * k + 1] = x[2 * k * is + 1];  \
                nd_fft_exec_##SUF(j->plan, buf, scratch, j->sign);                                               \
                for (int64_t k = 0; k < n; k++) y[2 * k * os] = buf[2 * k], y[2 * k * os + 1] = buf[2 * k + 1];  \
                break;                                                                                           \
            }                                                                                                    \
            case ND_LIB_FFT_R2C: {                                                                               \
                const T *x = (const T *)in->data + ioff;                                                         \
                if (j->plan->real) { /* the half-length transform (fft_plan.h) */                                \
                    T *res = buf + n + 2;                                                                        \
                    for (int64_t k = 0; k < n; k++) buf[k] = x[k * is];                                          \
                    nd_fft_r2c_##SUF(j->plan, buf, res, scratch);                                                \
                    for (int64_t k = 0; k <= n / 2; k++) y[2 * k * os] = res[2 * k], y[2 * k * os + 1] = res[2 * k + 1]; \
                    break;                                                                                       \
                }                                                                                                \
                for (int64_t k = 0; k < n; k++) buf[2 * k] = x[k * is], buf[2 * k + 1] = 0;                      \
                nd_fft_exec_##SUF(j->plan, buf, scratch, -1);                                                    \
                for (int64_t k = 0; k <= n / 2; k++) y[2 * k * os] = buf[2 * k], y[2 * k * os + 1] = buf[2 * k + 1]; \
                break;                                                                                           \
            }                                                                                                    \
            case ND_LIB_FFT_C2R: {                                                                               \
                /* The Hermitian sequence the input is half of: element 0 and (even n) n / 2 real. */           \
                const T *x = (const T *)in->data + 2 * ioff;                                                     \
                T *r = (T *)out->data + line_offset(out, ax, l);                                                 \
                if (j->plan->real) {                                                                             \
                    T *half = buf + n + 2;                                                                       \
                    for (int64_t k = 0; k <= n / 2; k++) {                                                       \
                        half[2 * k] = k < m ? x[2 * k * is] : 0;                                                 \
                        half[2 * k + 1] = k < m ? x[2 * k * is + 1] : 0;                                         \
                    }                                                                                            \
                    nd_fft_c2r_##SUF(j->plan, half, buf, scratch);                                               \
                    for (int64_t k = 0; k < n; k++) r[k * os] = buf[k];                                          \
                    break;                                                                                       \
                }                                                                                                \
                for (int64_t k = 0; k <= n / 2; k++) {                                                           \
                    buf[2 * k] = k < m ? x[2 * k * is] : 0;                                                      \
                    buf[2 * k + 1] = k < m && k != 0 && 2 * k != n ? x[2 * k * is + 1] : 0;                      \
                }                                                                                                \
                for (int64_t k = n / 2 + 1; k < n; k++) buf[2 * k] = buf[2 * (n - k)], buf[2 * k + 1] = -buf[2 * (n - k) + 1]; \
                nd_fft_exec_##SUF(j->plan, buf, scratch, 1);                                                     \
                for (int64_t k = 0; k < n; k++) r[k * os] = buf[2 * k];                                          \
                break;                                                                                           \
            }                                                                                                    \
            }                                                                                                    \
        }                                                                                                        \
    }
FFT_LINES(f, float)
FFT_LINES(d, double)

static void run_range(void *varg, int64_t begin, int64_t end) {
    fft_job *j = varg;
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    /* the line (n + 2 complex: a real line and its half spectrum side by side; COLS lines for a further
     * axis), then the scratch */
    int64_t line = 2 * (j->axis == j->out->ndim - 1 ? j->n + 2 : COLS * j->n);
    int64_t elems = line + 2 * nd_fft_scratch_elems(j->plan);
    void *mem = nd_malloc((size_t)elems * es);
    if (!mem) {
        __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
        return;
    }
    if (j->f64) lines_d(j, begin, end, mem, (double *)mem + line);
    else lines_f(j, begin, end, mem, (float *)mem + line);
    free(mem);
}

/* A long complex line when there are fewer lines than workers: the split
 * plan's four steps (fft_plan.h) with the pool sharing each: the line
 * gathered into a (x[j1 n2 + j2]), the n2 columns of length n1 transformed
 * and twiddled into b[k1 n2 + j2], the n1 rows of b transformed and written
 * to X[k1 + n1 k2]. */
typedef struct {
    fft_job *j;
    const nd_fft_plan *sp;
    void *a, *b, *y; /* y: the output line */
    int oom;
} split_job;

#define FFT_SPLIT(SUF, T)                                                                                        \
    static void cols_##SUF(void *varg, int64_t begin, int64_t end) {                                             \
        split_job *s = varg;                                                                                     \
        const nd_fft_plan *p = s->sp;                                                                            \
        const int64_t n1 = p->n1, n2 = p->n / n1;                                                                \
        const int sign = s->j->sign;                                                                             \
        /* COLS adjacent columns at a time: each row of a and b is touched in runs of COLS elements */        \
        T *buf = nd_malloc((size_t)(2 * (nd_fft_scratch_elems(p) + (COLS - 1) * n1)) * sizeof(T));               \
        if (!buf) {                                                                                              \
            __atomic_store_n(&s->oom, 1, __ATOMIC_RELAXED);                                                      \
            return;                                                                                              \
        }                                                                                                        \
        T *scratch = buf + 2 * COLS * n1;                                                                        \
        const T *a = s->a, *tw = p->tw;                                                                          \
        T *b = s->b;                                                                                             \
        for (int64_t blk = begin; blk < end; blk++) {                                                            \
            int64_t c0 = blk * COLS, nc = n2 - c0 < COLS ? n2 - c0 : COLS;                                       \
            for (int64_t j1 = 0; j1 < n1; j1++)                                                                  \
                for (int64_t c = 0; c < nc; c++) {                                                               \
                    buf[2 * (c * n1 + j1)] = a[2 * (j1 * n2 + c0 + c)];                                          \
                    buf[2 * (c * n1 + j1) + 1] = a[2 * (j1 * n2 + c0 + c) + 1];                                  \
                }                                                                                                \
            for (int64_t c = 0; c < nc; c++) nd_fft_exec_##SUF(p->sub, buf + 2 * c * n1, scratch, sign);       \
            for (int64_t k1 = 0; k1 < n1; k1++)                                                                  \
                for (int64_t c = 0; c < nc; c++) {                                                               \
                    int64_t r = (c0 + c) * k1;                                                                   \
                    T wr = tw[2 * r], wi = sign < 0 ? tw[2 * r + 1] : -tw[2 * r + 1];                            \
                    T xr = buf[2 * (c * n1 + k1)], xi = buf[2 * (c * n1 + k1) + 1];                              \
                    b[2 * (k1 * n2 + c0 + c)] = xr * wr - xi * wi;                                               \
                    b[2 * (k1 * n2 + c0 + c) + 1] = xr * wi + xi * wr;                                           \
                }                                                                                                \
        }                                                                                                        \
        free(buf);                                                                                               \
    }                                                                                                            \
    static void rows_##SUF(void *varg, int64_t begin, int64_t end) {                                             \
        split_job *s = varg;                                                                                     \
        const nd_fft_plan *p = s->sp;                                                                            \
        const int64_t n1 = p->n1, n2 = p->n / n1, os = s->j->out->strides[s->j->out->ndim - 1];                  \
        T *scratch = nd_malloc((size_t)(2 * nd_fft_scratch_elems(p)) * sizeof(T));                               \
        if (!scratch) {                                                                                          \
            __atomic_store_n(&s->oom, 1, __ATOMIC_RELAXED);                                                      \
            return;                                                                                              \
        }                                                                                                        \
        T *b = s->b, *y = s->y;                                                                                  \
        for (int64_t k1 = begin; k1 < end; k1++) {                                                               \
            T *row = b + 2 * k1 * n2;                                                                            \
            nd_fft_exec_##SUF(p->sub2, row, scratch, s->j->sign);                                                \
            for (int64_t k2 = 0; k2 < n2; k2++)                                                                  \
                y[2 * (k1 + n1 * k2) * os] = row[2 * k2], y[2 * (k1 + n1 * k2) * os + 1] = row[2 * k2 + 1];      \
        }                                                                                                        \
        free(scratch);                                                                                           \
    }                                                                                                            \
    static void gather_##SUF(const nd_kernel_arg *in, int64_t l, int64_t n, T *a) {                              \
        const T *x = (const T *)in->data + 2 * line_offset(in, in->ndim - 1, l);                                 \
        const int64_t is = in->strides[in->ndim - 1];                                                            \
        for (int64_t k = 0; k < n; k++) a[2 * k] = x[2 * k * is], a[2 * k + 1] = x[2 * k * is + 1];              \
    }
FFT_SPLIT(f, float)
FFT_SPLIT(d, double)

static nd_status split_lines(nd_cpu_state *st, fft_job *j, const nd_fft_plan *sp, int64_t lines) {
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    split_job s = {j, sp, nd_malloc((size_t)(2 * j->n) * es), nd_malloc((size_t)(2 * j->n) * es), NULL, 0};
    int64_t n1 = sp->n1, n2 = j->n / n1;
    for (int64_t l = 0; l < lines && s.a && s.b && !s.oom; l++) {
        s.y = (char *)j->out->data + (size_t)(2 * line_offset(j->out, j->out->ndim - 1, l)) * es;
        if (j->f64) gather_d(j->in, l, j->n, s.a);
        else gather_f(j->in, l, j->n, s.a);
        nd_cpu_parallel_for(st, (n2 + COLS - 1) / COLS, 1, j->f64 ? cols_d : cols_f, &s);
        if (!s.oom) nd_cpu_parallel_for(st, n1, 8, j->f64 ? rows_d : rows_f, &s);
    }
    int oom = !s.a || !s.b || s.oom;
    free(s.a);
    free(s.b);
    return oom ? nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for an FFT of length %lld",
                              (long long)j->n)
               : ND_OK;
}

/* The split of n for split_lines: its largest divisor n1 <= sqrt(n), when
 * both parts are long enough to be worth a pass; 0 otherwise. */
static int64_t split_of(int64_t n) {
    int64_t n1 = 1;
    for (int64_t d = 2; d * d <= n; d++)
        if (n % d == 0) n1 = d;
    return n1 >= 16 ? n1 : 0;
}

static nd_fft_cache *cache_of(nd_cpu_state *st) { return st->fft_plans; }

nd_status nd_cpu_lib_fft(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    fft_job j = {in, out, (int)u->lib_args.v[ND_LIB_FFT_KIND].i, (int)u->lib_args.v[ND_LIB_FFT_SIGN].i, 0, 0, 0,
                 NULL, 0};
    int rank = (int)u->lib_args.v[ND_LIB_FFT_RANK].i;
    nd_dtype real = j.kind == ND_LIB_FFT_C2R ? (nd_dtype)out->dtype : (nd_dtype)in->dtype;
    if (real == ND_COMPLEX128 || real == ND_FLOAT64) j.f64 = 1;
    else if (real != ND_COMPLEX64 && real != ND_FLOAT32) goto unsupported;
    if (out->ndim < rank || rank < 1 || rank > ND_LIB_FFT_MAX_RANK || (j.kind == ND_LIB_FFT_C2R && rank != 1))
        goto unsupported;
    if (out->size == 0) return ND_OK;
    for (int p = 0; p < rank; p++) {
        j.axis = out->ndim - 1 - p;
        j.n = p == 0 && j.kind == ND_LIB_FFT_R2C ? in->shape[in->ndim - 1] : out->shape[j.axis];
        if (p > 0 && j.kind == ND_LIB_FFT_R2C) j.kind = ND_LIB_FFT_C2C; /* rfftn: the other axes forward */
        int half = j.kind != ND_LIB_FFT_C2C && j.n % 2 == 0;
        j.plan = half ? nd_fft_rplan_get(cache_of(st), j.n, j.f64) : nd_fft_plan_get(cache_of(st), j.n, j.f64);
        if (!j.plan) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for an FFT plan of length %lld",
                                         (long long)j.n);
        int64_t lines = out->size / out->shape[j.axis];
        int64_t n1 = p == 0 && j.kind == ND_LIB_FFT_C2C && j.n >= SPLIT_MIN && lines < nd_cpu_pool_size(st->pool)
                         ? split_of(j.n)
                         : 0;
        if (n1) { /* few long lines: the pool shares each */
            const nd_fft_plan *sp = nd_fft_split_plan_get(cache_of(st), j.n, n1, j.f64);
            nd_status s = sp ? split_lines(st, &j, sp, lines)
                             : nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for an FFT plan of length "
                                            "%lld", (long long)j.n);
            if (s != ND_OK) return s;
            continue;
        }
        int64_t grain = j.n >= (1 << 15) ? 1 : ((int64_t)1 << 15) / j.n;
        nd_cpu_parallel_for(st, lines, grain, run_range, &j);
        if (j.oom) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for the lines of an FFT of "
                                       "length %lld", (long long)j.n);
    }
    return ND_OK;
unsupported:
    return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: fft of %s into %s over %d axes (kind %d)",
                        nd_dtype_name((nd_dtype)in->dtype), nd_dtype_name((nd_dtype)out->dtype), rank, j.kind);
}
